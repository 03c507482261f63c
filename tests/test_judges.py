"""A user's own relevance judge (``--judge``, ``focuscrawl.topic.judges``): a tiny scikit-learn model trained here and
saved, and judges in tests/judge_modules.py, crawl a web served on loopback over HTTP; the stored relevance is the
model's own prediction on each page, everywhere (pages.jsonl, the export's --min-relevance, the reward); a resume
keeps the judge and refuses another; every bad judge is one error line and exit 2."""

from __future__ import annotations

import json
import re
from pathlib import Path

import joblib
import judge_modules
import numpy as np
import pytest
from conftest import ThreadServedWeb, build_tiny_web, write_birds_topic

from focuscrawl.builder import Classifiers, build_crawl
from focuscrawl.cli.main import main
from focuscrawl.config import RunSettings
from focuscrawl.crawl import Crawler
from focuscrawl.topic.judges import JudgeError, PageJudge, TextJudge
from focuscrawl.topic.models import train_relevance_model
from focuscrawl.topic.topic_dir import load_topic_dir
from focuscrawl.types import Page
from focuscrawl.webs.store import OfflineWeb

SEED = "http://birds.test/b0"
DOCS = Path(__file__).resolve().parents[1] / "docs" / "crawl.md"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The tiny web (birds, trains, a tunnel to far birds) served on loopback, its topic and a saved model."""
    root = tmp_path_factory.mktemp("judges")
    web = build_tiny_web(root / "web")
    write_birds_topic(root / "topic", [SEED])
    joblib.dump(judge_modules.tiny_model(), root / "model.joblib")
    server = ThreadServedWeb(web, root / "hosts.json", base_ip="127.0.45.1")
    yield root, server
    server.close()


def _crawl(root: Path, server: ThreadServedWeb, out: Path, judge: str | None, *extra: str, budget: int = 25) -> int:
    args = ["crawl", "--topic", str(root / "topic"), "--hosts-map", str(server.map_file), "-o", str(out),
            "--budget", str(budget), "--strategy", "best-first", "--progress", "none", "-s", "fetch.min_delay=0",
            "-s", "plot=false", *extra]
    return main(args + (["--judge", judge] if judge else []))


def _pages(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "pages.jsonl").read_text().splitlines()]


def _judged(pages: list[dict]) -> list[dict]:
    """The pages a judge was asked about: fetched, with text (a failed page's relevance is 0, judge or none)."""
    return [p for p in pages if 200 <= p["status"] < 300 and (p["title"] or p["text"])]


def _model_says(pages: list[dict]) -> np.ndarray:
    """The saved model's own probabilities on the pages, as its user would compute them (floats)."""
    return judge_modules.tiny_model().predict_proba([f"{p['title']}\n{p['text']}" for p in pages])[:, 1]


@pytest.mark.parametrize("judge", ["FILE", "judge_modules:model", "python"])
def test_the_stored_relevance_is_the_models_own_prediction_over_http(site, tmp_path, judge):
    root, server = site
    run = tmp_path / "run"
    if judge == "python":  # the Python API takes the same setting
        Crawler(topic=root / "topic", hosts_map=server.map_file, out=run, budget=25, strategy="best-first",
                progress="none", plot=False, fetch={"min_delay": 0}, judge=str(root / "model.joblib")).crawl()
    else:
        assert _crawl(root, server, run, str(root / "model.joblib") if judge == "FILE" else judge) == 0
    pages = _pages(run)
    judged = _judged(pages)
    assert len(pages) == 25 and len(judged) >= 15
    assert any(p["url"].startswith("http://trains.test/") for p in judged)  # both kinds of page were judged
    assert [p["relevance"] for p in judged] == [round(x, 6) for x in _model_says(judged)]  # as pages.jsonl rounds
    assert all(p["reward"] == float(p["relevance"] >= 0.5) for p in judged)  # the reward the policy learns from
    assert all(p["relevance"] == 0.0 for p in pages if p not in judged)
    assert not (run / "model.pkl").exists()  # the user's model stays theirs: never copied into the run folder


def _doc_block(first_line: str) -> str:
    """The Python block of docs/crawl.md's "Your own judge" that starts with ``first_line``: the docs run as written."""
    blocks = re.findall(r"```python\n(.*?)```", DOCS.read_text(), re.S)
    return next(block for block in blocks if block.startswith(first_line))


def _examples(root: Path, label: int) -> list[str]:
    """The topic's example texts of one label: pages a user labelled, to train a model of their own on."""
    topic = load_topic_dir(root / "topic")
    return [t for t, y in zip(topic.example_texts, topic.example_labels) if y == label]


def test_the_documented_example_trains_a_model_crawls_with_it_and_exports(site, tmp_path, monkeypatch):
    pytest.importorskip("trafilatura")
    pytest.importorskip("py3langid")
    root, server = site
    for label, texts in (("on", _examples(root, 1)), ("off", _examples(root, 0))):
        (tmp_path / "labelled" / label).mkdir(parents=True)
        for i, text in enumerate(texts):
            (tmp_path / "labelled" / label / f"{i}.txt").write_text(text)
    monkeypatch.chdir(tmp_path)
    exec(compile(_doc_block("# train_judge.py"), "train_judge.py", "exec"), {})  # noqa: S102 - our own docs
    run = tmp_path / "runs" / "birds"
    assert _crawl(root, server, run, "birds.joblib") == 0
    assert main(["export", str(run), "--format", "jsonl", "--min-relevance", "0.8"]) == 0
    exported = sorted(json.loads(line)["url"] for line in (run / "corpus.jsonl").read_text().splitlines())
    judged = _judged(_pages(run))
    probabilities = joblib.load("birds.joblib").predict_proba([f"{p['title']}\n{p['text']}" for p in judged])[:, 1]
    assert [p["relevance"] for p in judged] == [round(x, 6) for x in probabilities]
    assert exported == sorted(p["url"] for p, x in zip(judged, probabilities) if x >= 0.8)
    assert 0 < len(exported) < len(judged)


def test_the_documented_fasttext_adapter_judges_with_the_model(site, tiny_web, tmp_path, monkeypatch):
    fasttext = pytest.importorskip("fasttext")  # no wheel of the fasttext package: any build of its bindings
    root, _ = site
    monkeypatch.chdir(tmp_path)  # the adapter is imported from the current directory and loads birds.bin there
    lines = [f"__label__{'on' if y else 'off'} {t}" for y in (1, 0) for t in _examples(root, y)]
    Path("train.txt").write_text("\n".join(lines * 10) + "\n")
    model = fasttext.train_supervised("train.txt", epoch=25, lr=0.5, thread=1, seed=0, verbose=0)
    model.save_model("birds.bin")
    Path("ftjudge.py").write_text(_doc_block("# ftjudge.py"))
    assert main(["crawl", "--topic", str(root / "topic"), "--web", str(tiny_web), "-o", "run", "--budget", "15",
                 "--progress", "none", "--judge", "ftjudge:judge"]) == 0
    judged = _judged(_pages(tmp_path / "run"))

    def on_topic(page: dict) -> float:
        labels, probs = model.predict(f"{page['title']} {page['text']}".replace("\n", " "), k=-1)
        return min(1.0, float(dict(zip(labels, probs))["__label__on"]))

    assert [p["relevance"] for p in judged] == [round(on_topic(p), 6) for p in judged]
    assert any(p["relevance"] > 0.5 for p in judged) and any(p["relevance"] < 0.5 for p in judged)


def test_a_page_judge_scores_pages_and_leaves_link_contexts_to_the_topics_classifier(site, tmp_path):
    root, server = site
    run = tmp_path / "run"
    assert _crawl(root, server, run, "judge_modules:scorer") == 0
    judged = _judged(_pages(run))
    expected = [judge_modules.bird_share(Page(p["url"], p["final_url"], p["status"], title=p["title"], text=p["text"]))
                for p in judged]
    assert [p["relevance"] for p in judged] == [round(x, 6) for x in expected] and max(expected) > min(expected)
    # best-first's reasons quote the judge's verdict on the best page linking to the URL when it was chosen: one of
    # the fetched pages that link to it (in the crawl's order, not always the page recorded as its parent)
    pages = {p["url"]: p for p in _pages(run)}
    web = OfflineWeb(root / "web")
    linking: dict[str, set[float]] = {}
    for url, page in pages.items():
        if 200 <= page["status"] < 300:
            for link in web.fetch(url).outlinks:
                linking.setdefault(link.url, set()).add(round(page["relevance"], 2))
    web.close()
    quoted = [(p, re.fullmatch(r"linked from a page of relevance ([\d.]+)", p["reason"])) for p in pages.values()]
    assert sum(1 for _, m in quoted if m) >= 10
    assert all(float(m[1]) in linking.get(p["url"], set()) for p, m in quoted if m)
    topic = load_topic_dir(root / "topic")
    judge = train_relevance_model("judge_modules:scorer", topic)
    assert isinstance(judge, PageJudge)
    anchors = ["bird nest", "railway station", "far birds"]
    topics_own = train_relevance_model("tfidf", topic)
    np.testing.assert_allclose(judge.predict_proba(anchors), topics_own.predict_proba(anchors))


def test_a_text_judge_also_scores_the_policys_link_contexts(site):
    root, _ = site
    topic = load_topic_dir(root / "topic")
    settings = RunSettings(budget=5, judge="judge_modules:model")
    crawl = build_crawl(settings, "adaptive", topic, [SEED], classifiers=Classifiers(topic, memoize=True))
    assert isinstance(crawl.context.classifier, TextJudge) and crawl.engine.classifier is crawl.context.classifier
    anchors = ["bird nest", "railway station"]
    np.testing.assert_allclose(crawl.context.classifier.predict_proba(anchors),
                               judge_modules.model.predict_proba(anchors)[:, 1])
    assert crawl.reward_model == "judge_modules:model"


def test_a_factory_is_called_with_the_topic(site):
    root, _ = site
    topic = load_topic_dir(root / "topic")
    judge = train_relevance_model("judge_modules:make_judge", topic)
    expected = judge_modules.make_judge(topic).predict_proba(["bird"])[:, 1]
    np.testing.assert_allclose(judge.predict_proba(["bird"]), expected)


def test_a_resume_keeps_the_judge_and_refuses_another(site, tmp_path, capsys):
    root, server = site
    run = tmp_path / "run"
    model = tmp_path / "model.joblib"
    joblib.dump(judge_modules.tiny_model(), model)
    assert _crawl(root, server, run, str(model), budget=10) == 0
    assert "judge: " in (run / "config.yml").read_text()
    assert "changed: judge" in _one_error_line(capsys, _crawl(root, server, run, "judge_modules:scorer", budget=20))
    assert _crawl(root, server, run, None, budget=20) == 0  # without --judge: the recorded one
    judged = _judged(_pages(run))
    assert len(_pages(run)) == 20
    assert [p["relevance"] for p in judged] == [round(x, 6) for x in _model_says(judged)]  # as pages.jsonl rounds
    joblib.dump(judge_modules.make_judge(load_topic_dir(root / "topic")), model)  # retrained in place
    assert "changed: judge" in _one_error_line(capsys, _crawl(root, server, run, str(model), budget=30))


def test_the_benchmark_runs_strategies_with_the_users_judge(tiny_web, tmp_path):
    out = tmp_path / "bench"
    assert main(["bench", "--web", str(tiny_web), "--topic", "topic.birds", "--strategy", "bfs,best-first",
                 "--runs", "1", "--budget", "15", "--judge", "judge_modules:scorer", "--out", str(out),
                 "--quiet"]) == 0
    assert json.loads((out / "summary.json").read_text())["judge"] == "judge_modules:scorer"
    # what a benchmark's crawl scores pages with: the judge (not memoized: it reads the whole page)
    web = OfflineWeb(tiny_web)
    from focuscrawl.bench.protocol import load_topic

    topic = load_topic(web, "topic.birds")
    events = []
    crawl = build_crawl(RunSettings(budget=15, judge="judge_modules:scorer"), "best-first", topic.inputs, [SEED],
                        classifiers=Classifiers(topic.inputs, memoize=True), judge=topic.truth, sinks=[events.append])
    crawl.engine.run(web)
    fetched = [e for e in events if e.status == 200]
    expected = [judge_modules.bird_share(web.fetch(e.url)) for e in fetched]
    web.close()
    assert [e.relevance for e in fetched] == expected and len(set(expected)) > 1


def _one_error_line(capsys, code: int) -> str:
    _, err = capsys.readouterr()
    lines = [line for line in err.strip().split("\n") if line.strip()]
    assert code == 2 and len(lines) == 1 and lines[0].startswith("error:") and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize("judge, says", [
    ("nomodule_here:judge", "no module named 'nomodule_here'"),
    ("judge_modules:nothing", "has no attribute 'nothing'"),
    ("judge_modules:not_a_judge", "is not a judge"),
    ("judge_modules:chatty", "gave shape (1, 3)"),
    ("judge_modules:two_arguments", "must take one argument, the page"),
    ("{tmp}/missing.joblib", "no such model file"),
    ("{tmp}/garbage.joblib", "cannot be loaded"),
    ("{tmp}/model.bin", "fastText model is judged through a module"),
    ("plain", "neither module:callable nor a model file"),
    ("judge_modules:too_sure", "gave 1.5 for http://birds.test/b0: a judge's answer must be a probability in [0, 1]"),
    ("judge_modules:broken", "failed on http://birds.test/b0: RuntimeError: the user's judge has a bug"),
    ("judge_modules:no_scale", "its threshold 1.5 is not a probability in (0, 1]"),
])
def test_a_bad_judge_is_one_error_line(site, tiny_web, tmp_path, capsys, judge, says):
    root, _ = site
    (tmp_path / "garbage.joblib").write_bytes(b"not a pickle")
    (tmp_path / "model.bin").write_bytes(b"\0")
    code = main(["crawl", "--topic", str(root / "topic"), "--web", str(tiny_web), "-o", str(tmp_path / "run"),
                 "--budget", "5", "--progress", "none", "--judge", judge.format(tmp=tmp_path)])
    assert says in _one_error_line(capsys, code)
    if "http://" not in says:  # refused before the crawl: nothing left behind
        assert not (tmp_path / "run").exists()


def test_a_judge_and_a_reward_model_together_are_refused(site, tiny_web, tmp_path, capsys):
    root, _ = site
    code = main(["crawl", "--topic", str(root / "topic"), "--web", str(tiny_web), "-o", str(tmp_path / "run"),
                 "--judge", "judge_modules:model", "-s", "reward_model=svm"])
    assert "give one" in _one_error_line(capsys, code)
    code = main(["bench", "--web", str(tiny_web), "--topic", "topic.birds", "--judge", "judge_modules:nothing",
                 "--out", str(tmp_path / "b"), "--quiet", "--runs", "1", "--budget", "5"])
    assert "has no attribute 'nothing'" in _one_error_line(capsys, code)


def test_a_judges_answers_are_checked():
    judge = TextJudge("x:y", type("M", (), {"predict_proba": lambda self, texts: [float("nan")] * len(texts)})())
    with pytest.raises(JudgeError, match="gave NaN for a text"):
        judge.predict_proba(["a"])
    one_column = TextJudge("x:y", type("M", (), {"predict_proba": lambda self, texts: [[0.25]] * len(texts)})())
    assert one_column.predict_proba(["a", "b"]).tolist() == [0.25, 0.25] and one_column.predict_proba([]).size == 0


def test_a_judge_that_names_its_threshold_is_rewarded_there(site):
    """A user's judge may decide elsewhere than at 0.5 (``threshold``): the engine rewards its pages at that point,
    and a judge that names none decides at 0.5."""
    root, _ = site
    topic = load_topic_dir(root / "topic")
    assert train_relevance_model("judge_modules:strict", topic).threshold == 0.9
    assert train_relevance_model("judge_modules:scorer", topic).threshold == 0.5
    assert train_relevance_model("judge_modules:model", topic).threshold == 0.5
    crawl = build_crawl(RunSettings(budget=5, judge="judge_modules:strict"), "bfs", topic, [SEED],
                        classifiers=Classifiers(topic, memoize=True))
    assert crawl.engine.rewards(0.9) and not crawl.engine.rewards(0.89)
