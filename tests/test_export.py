"""focuscrawl export: a real crawl's run folder (over loopback HTTP, with its WARC) as Parquet, JSON Lines and
Markdown files; every row traced back to its page in the run folder; a distributed run folder; one error line for
a folder that is not a run and for bad settings."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
import yaml
from conftest import BIRD_WORDS, OTHER_WORDS, ThreadServedWeb, _text, write_birds_topic

from focuscrawl.cli.main import main
from focuscrawl.crawl import Crawler
from focuscrawl.storage.export import COLUMNS, Corpus, ExportFormat, export_corpus
from focuscrawl.webs.store import WebWriter

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")
pytest.importorskip("trafilatura")
pytest.importorskip("py3langid")

BIRDS = [f"http://birds.test/b{i}" for i in range(6)]
TRAINS = [f"http://trains.test/t{i}" for i in range(4)]
COPY = "http://birds.test/copy"  # b0's article again: a near-duplicate
GERMAN = "http://vogel.test/amsel"
GERMAN_TEXT = ("Die Amsel baut ihr Nest im Frühling in dichten Hecken und Sträuchern. Das Weibchen legt vier bis fünf "
               "Eier, die es ungefähr zwei Wochen lang bebrütet. Nach dem Schlüpfen füttern beide Eltern die Jungvögel "
               "mit Würmern und Insekten, bis sie das Nest verlassen. Im Herbst ziehen viele Vögel in den Süden, "
               "während die Amsel oft den ganzen Winter über bei uns bleibt.")


def _article(title: str, heading: str, text: str, items: list[str], links: list[str]) -> str:
    """A page with a menu, a footer and an article of a heading, paragraphs and a list."""
    menu = "".join(f'<li><a href="{url}">{url.rsplit("/", 1)[-1]}</a></li>' for url in links)
    bullets = "".join(f"<li>{item}</li>" for item in items)
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{title}</title></head><body>"
            f"<nav><ul>{menu}</ul></nav><main><article><h1>{heading}</h1><p>{text}</p>"
            f"<h2>What to look for</h2><ul>{bullets}</ul></article></main>"
            f"<footer>Copyright the site, all rights reserved</footer></body></html>")


def _web(directory: Path) -> Path:
    """Birds pages (one copied at another URL, one linking a German page and a dead link) and train pages."""
    with WebWriter(directory, {"name": "export"}) as w:
        def add(url: str, title: str, text: str, items: list[str], links: list[str], heading: str = "") -> None:
            w.add_page(url, title=title, text=text, labels=["topic.birds" if "train" not in url else "topic.other"],
                       html=_article(title, heading or title, text, items, links))

        for i, url in enumerate(BIRDS):
            # each page its own sentence, so that only the copy is a near-duplicate
            text = f"{_text(BIRD_WORDS, i)}. " + " ".join(f"bird {i} watched at {k}" for k in range(12))
            links = [BIRDS[(i + 1) % len(BIRDS)], TRAINS[i % len(TRAINS)]]
            links += {0: [COPY], 1: [GERMAN], 2: ["http://birds.test/missing"]}.get(i, [])
            add(url, f"Bird page {i}", text, [f"feathers of songbird {i}", f"eggs in nest {i}"], links,
                heading=f"Nesting birds {i}")
            if i == 0:
                add(COPY, f"Bird page {i}", text, [f"feathers of songbird {i}", f"eggs in nest {i}"], links,
                    heading=f"Nesting birds {i}")
        for i, url in enumerate(TRAINS):
            text = f"{_text(OTHER_WORDS, i)}. " + " ".join(f"train {i} leaves at {k}" for k in range(12))
            add(url, f"Train page {i}", text, ["timetables", "platforms"], [TRAINS[(i + 1) % len(TRAINS)]])
        add(GERMAN, "Die Amsel", GERMAN_TEXT, ["Nest", "Eier"], [BIRDS[0]])
    return directory


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("export")
    web = _web(root / "web")
    write_birds_topic(root / "topic", [BIRDS[0]])
    server = ThreadServedWeb(web, root / "hosts.json", base_ip="127.0.10.1")
    yield root, server
    server.close()


def _settings(root: Path, server: ThreadServedWeb, **extra) -> dict:
    return {"topic": root / "topic", "hosts_map": server.map_file, "progress": "none", "plot": False,
            "strategy": "bfs", "budget": 40, "concurrency": 2, "fetch": {"min_delay": 0}, **extra}


@pytest.fixture(scope="module")
def run(site) -> Path:
    """A finished crawl of the whole site over loopback HTTP, with its WARC."""
    root, server = site
    Crawler(**_settings(root, server, out=root / "run", warc=True)).crawl()
    return root / "run"


def _pages(run: Path) -> list[dict]:
    return [json.loads(line) for line in (run / "pages.jsonl").read_text().splitlines()]


def _expected(pages: list[dict], min_relevance: float) -> list[dict]:
    """The pages an export must hold, read from pages.jsonl alone: fetched (2xx) with text, at the threshold."""
    return [p for p in pages if 200 <= p["status"] < 300 and (p["text"] or p["title"])
            and p["verdict"] != "soft-404 probe" and p["relevance"] >= min_relevance]


def _files(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def _read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_the_crawl_fetched_what_the_export_tests_need(run):
    pages = {p["url"]: p for p in _pages(run)}
    assert set(BIRDS + TRAINS + [COPY, GERMAN]) <= set(pages)
    assert pages["http://birds.test/missing"]["status"] == 404
    assert pages[COPY]["verdict"] == f"duplicate of {BIRDS[0]}"


def test_parquet_loads_in_pyarrow_and_pandas_with_every_column(run, tmp_path):
    pd = pytest.importorskip("pandas")
    report = export_corpus(run, tmp_path / "corpus.parquet")
    table = pq.read_table(tmp_path / "corpus.parquet")
    assert tuple(table.column_names) == COLUMNS
    assert table.schema.field("fetched_at").type == pa.timestamp("ms", tz="UTC")
    assert table.schema.field("relevance").type == pa.float64()
    expected = _expected(_pages(run), 0.0)
    assert table.num_rows == report.rows == report.pages == len(expected)
    frame = pd.read_parquet(tmp_path / "corpus.parquet")
    assert list(frame.columns) == list(COLUMNS) and len(frame) == len(expected)
    assert set(frame["url"]) == {p["url"] for p in expected}
    assert frame["shard"].isna().all()  # a single-process run
    first = frame[frame["url"] == BIRDS[0]].iloc[0]
    assert first["fetched_at"].year >= 2024 and first["title"] == "Bird page 0"


def test_parquet_loads_in_duckdb_when_installed(run, tmp_path):
    duckdb = pytest.importorskip("duckdb")
    export_corpus(run, tmp_path / "corpus.parquet")
    db = duckdb.connect()
    count, urls = db.execute(f"SELECT count(*), count(DISTINCT url) FROM '{tmp_path / 'corpus.parquet'}'").fetchone()
    db.close()
    assert count == urls == len(_expected(_pages(run), 0.0))


def test_parquet_loads_in_hugging_face_datasets_when_installed(run, tmp_path, monkeypatch):
    datasets = pytest.importorskip("datasets")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "cache"))
    export_corpus(run, tmp_path / "corpus.parquet")
    corpus = datasets.load_dataset("parquet", data_files=str(tmp_path / "corpus.parquet"), split="train",
                                   cache_dir=str(tmp_path / "cache"))
    assert corpus.column_names == list(COLUMNS) and len(corpus) == len(_expected(_pages(run), 0.0))


def test_every_row_traces_back_to_its_page_and_min_relevance_filters(run, tmp_path):
    before = _files(run)
    pages = _pages(run)
    by_step = {p["step"]: p for p in pages}
    counts = {}
    for threshold in (0.0, 0.5, 1.0):
        report = export_corpus(run, tmp_path / f"{threshold}.jsonl", "jsonl", min_relevance=threshold)
        rows = _read_jsonl(tmp_path / f"{threshold}.jsonl")
        for row in rows:
            page = by_step[row["step"]]  # its record in the run folder, by step
            assert (row["url"], row["final_url"], row["title"], row["reason"]) == \
                (page["url"], page["final_url"], page["title"], page["reason"])
            assert row["relevance"] == pytest.approx(page["relevance"], abs=1e-6) and row["relevance"] >= threshold
            assert row["fetched_at"].startswith("20") and row["fetched_at"].endswith("+00:00")
        assert sorted(r["step"] for r in rows) == [p["step"] for p in _expected(pages, threshold)]
        assert report.rows == len(rows) and report.pages == len(_expected(pages, 0.0))
        counts[threshold] = len(rows)
    assert counts[0.0] > counts[0.5] > 0  # the trains (and the copy, relevance 0) are filtered out
    assert _files(run) == before  # the export only reads the run folder


def test_markdown_is_the_pages_html_from_the_warc_and_the_stored_text_without_one(run, tmp_path):
    report = export_corpus(run, tmp_path / "warc.jsonl", "jsonl")
    rows = {r["url"]: r for r in _read_jsonl(tmp_path / "warc.jsonl")}
    assert report.warc and report.from_html == report.rows
    markdown = rows[BIRDS[3]]["markdown"]
    assert "# Nesting birds 3" in markdown and "## What to look for" in markdown
    assert "- feathers of songbird 3" in markdown and "bird 3 watched at 11" in markdown
    assert "Copyright" not in markdown and "b4" not in markdown  # no footer, no menu

    plain = tmp_path / "no-warc"
    shutil.copytree(run, plain)
    (plain / "crawl.warc.gz").unlink()
    report = export_corpus(plain, tmp_path / "plain.jsonl", "jsonl")
    assert not report.warc and report.from_html == 0 and "no WARC" in str(report)
    markdown = {r["url"]: r for r in _read_jsonl(tmp_path / "plain.jsonl")}[BIRDS[3]]["markdown"]
    assert "#" not in markdown and "bird 3 watched at 11" in markdown  # the stored main text, no markup left


def test_near_duplicates_share_a_cluster_and_languages_are_detected(run):
    rows = {row.url: row for row in Corpus(run).rows()}
    assert rows[COPY].cluster == BIRDS[0] and rows[BIRDS[0]].cluster == BIRDS[0]
    assert {rows[url].cluster for url in BIRDS + TRAINS + [GERMAN]} == set(BIRDS + TRAINS + [GERMAN])
    assert rows[GERMAN].language == "de" and rows[BIRDS[1]].language == "en"


def test_markdown_format_writes_a_file_a_page_with_its_columns_as_front_matter(run, tmp_path):
    out = tmp_path / "md"
    report = export_corpus(run, out, ExportFormat.MARKDOWN, min_relevance=0.5)
    files = sorted(out.iterdir())
    assert len(files) == report.rows > 0
    by_step = {p["step"]: p for p in _pages(run)}
    for path in files:
        _, front, body = path.read_text().split("---\n", 2)
        meta = yaml.safe_load(front)
        assert list(meta) == [c for c in COLUMNS if c != "markdown"]
        assert path.name == f"{meta['step']:07d}.md" and by_step[meta["step"]]["url"] == meta["url"]
        assert meta["relevance"] >= 0.5 and body.strip()
    # a second export replaces the first; a folder holding anything else is refused
    export_corpus(run, out, "markdown", min_relevance=1.0)
    assert len(list(out.iterdir())) == len(_expected(_pages(run), 1.0))
    (out / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="not an earlier Markdown export"):
        export_corpus(run, out, "markdown")
    assert (out / "notes.txt").read_text() == "mine"


def _one_error_line(capsys, code: int) -> str:
    out, err = capsys.readouterr()
    assert code != 0 and "Traceback" not in out + err
    lines = [line for line in err.strip().split("\n") if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error:"), err
    return lines[0]


def test_the_command_exports_and_says_what_it_wrote(run, tmp_path, capsys):
    code = main(["export", str(run), "--format", "jsonl", "-o", str(tmp_path / "c.jsonl"), "--min-relevance", "0.5"])
    _, err = capsys.readouterr()
    assert code == 0 and "Markdown from the WARC's HTML" in err
    assert len(_read_jsonl(tmp_path / "c.jsonl")) == len(_expected(_pages(run), 0.5))


@pytest.mark.parametrize("args, says", [
    (["export", "{tmp}"], "is not a run folder"),
    (["export", "{tmp}/nowhere"], "does not exist"),
    (["export", "{run}", "--format", "csv"], "--format"),
    (["export", "{run}", "--min-relevance", "1.5"], "between 0 and 1"),
    (["export", "{run}", "--min-relevance", "high"], "--min-relevance"),
    (["export", "{run}", "-o", "{tmp}"], "is a folder"),
])
def test_a_folder_that_is_not_a_run_or_a_bad_setting_is_one_error_line(run, tmp_path, capsys, args, says):
    code = main([a.format(tmp=tmp_path, run=run) for a in args])
    assert says in _one_error_line(capsys, code)


@pytest.mark.slow
def test_a_distributed_run_folder_exports_every_shards_pages(site, tmp_path):
    pytest.importorskip("ray")
    from focuscrawl.crawl.distributed import DistributedCrawler

    root, server = site
    out = root / "distributed"
    DistributedCrawler(**_settings(root, server, out=out, workers=2, warc=True)).crawl()
    pages = _pages(out)  # the merged pages.jsonl: shard and shard_step name each page's record
    by_record = {(p["shard"], p["shard_step"]): p for p in pages}
    report = export_corpus(out, tmp_path / "corpus.parquet")
    rows = pq.read_table(tmp_path / "corpus.parquet").to_pylist()
    assert len(rows) == report.rows == len(_expected(pages, 0.0)) and report.from_html == report.rows
    assert {row["shard"] for row in rows} == {0, 1}
    for row in rows:
        assert by_record[(row["shard"], row["step"])]["url"] == row["url"]
    assert [row["fetched_at"] for row in rows] == sorted(row["fetched_at"] for row in rows)  # in fetch order
    copy = next(row for row in rows if row["url"] == COPY)
    assert copy["cluster"] == BIRDS[0]
