"""Bad input, generated: every mistake ends with one clear line and a non-zero exit, never a traceback.

Hypothesis feeds the command line and the config loader a few hundred broken inputs: mistyped and missing
options, wrong types, unknown settings, malformed YAML and binary config files, damaged run-folder files.
The commands are pointed at a topic or web that does not exist, so that an input that happens to be valid
stops at that (also a clean line) instead of starting a crawl.
"""

from __future__ import annotations

import inspect
import string

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from focuscrawl.cli.main import main
from focuscrawl.strategies.registry import STRATEGIES, make_policy

KEYS = ["budget", "seed", "max_per_domain", "max_outlinks", "reward_model", "options", "strategy", "concurrency",
        "warc", "checkpoint_every", "fetch", "progress", "log_every_s", "seeds", "runs", "topic", "web",
        "keyword_only", "nonsense", "options.tres.gamma", "options.adaptive.explore", "options.bfs.depth",
        "fetch.min_delay", "fetch.user_agent", "max-per-domain", ".", "a..b"]
VALUES = st.one_of(st.integers(-5, 10**6).map(str), st.sampled_from(["-1", "0", "inf", "5-2", "2-5", "x", "true",
                                                                      "[1, 2]", "{a: b}", "{", "'", "null", "1e9",
                                                                      "nan", ""]),
                   st.text(string.printable, max_size=12))
OVERRIDES = st.lists(st.builds(lambda k, v: f"{k}={v}", st.sampled_from(KEYS), VALUES) | st.text(max_size=10),
                     max_size=3)
TOKENS = st.sampled_from(["--budget", "--runs", "--strategy", "--seed", "--max-per-domain", "--concurrency", "--warc",
                          "--seeds", "--topic", "-o", "--out", "-c", "--web", "--set", "-s", "--nope", "x", "-1",
                          "0", "bfs", "adaptive", "nonsense", "--suite", "--half", "--jobs", "--keywords",
                          "--positive", "--description"])


def _one_clean_line(capsys, code: int) -> str:
    """Asserts that the command failed with one ``error:`` line; returns what it wrote to stderr."""
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    assert code != 0
    # "\n" only: a terminal breaks lines there, while splitlines() also splits on characters such as \x1e
    # that a mistyped value may carry into the message
    lines = [line for line in err.strip().split("\n") if line.strip()]
    assert lines and lines[-1].startswith("error:"), err
    assert len(lines) <= 2, err  # the line itself (rich may wrap one long line in two)
    return err


@pytest.mark.slow
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(overrides=OVERRIDES, extra=st.lists(TOKENS, max_size=4))
@example(overrides=["0\x1e0="], extra=[])  # a record separator in the echoed value is not a line break
def test_crawl_command_line_mistakes(tmp_path, capsys, overrides, extra):
    args = ["crawl", "-o", str(tmp_path / "run"), "--topic", str(tmp_path / "no-topic")]
    for item in overrides:
        args += ["-s", item]
    code = main(args + extra)
    _one_clean_line(capsys, code)


@pytest.mark.slow
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(overrides=OVERRIDES, extra=st.lists(TOKENS, max_size=4))
def test_bench_command_line_mistakes(tmp_path, capsys, overrides, extra):
    args = ["bench", "--web", str(tmp_path / "no-web"), "--out", str(tmp_path / "out")]
    for item in overrides:
        args += ["-s", item]
    code = main(args + extra)
    _one_clean_line(capsys, code)


@pytest.mark.slow
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(content=st.one_of(st.text(max_size=200), st.binary(max_size=200).map(lambda b: b.decode("latin-1")),
                         st.dictionaries(st.sampled_from(KEYS), VALUES, max_size=4).map(
                             lambda d: "\n".join(f"{k}: {v}" for k, v in d.items()))))
def test_config_files_and_damaged_run_folders(tmp_path, capsys, content):
    config = tmp_path / "c.yml"
    config.write_text(content, encoding="utf-8", errors="surrogateescape")
    code = main(["crawl", "-o", str(tmp_path / "run"), "--topic", str(tmp_path / "no-topic"), "-c", str(config)])
    _one_clean_line(capsys, code)
    run = tmp_path / "damaged"
    run.mkdir(exist_ok=True)
    (run / "config.yml").write_text(content, encoding="utf-8", errors="surrogateescape")
    (run / "state.sqlite").write_text(content or "x", encoding="utf-8", errors="surrogateescape")
    code = main(["crawl", "-o", str(run), "--topic", str(tmp_path / "no-topic")])
    _one_clean_line(capsys, code)


@pytest.mark.parametrize("args", [
    ["web", "serve", "embedded", "--port", "99999"],
    ["web", "info", "/"],
    ["topic", "init", "/proc/no/such/dir", "--keywords", "birds"],
    ["topic", "init", "x"],
    ["crawl", "-o", "/dev/null/run", "--topic", "/"],
    ["bench", "--suite", "no-such-suite"],
    ["bench-policy", "--frontier-sizes", "ten"],
])
def test_named_mistakes(capsys, args):
    _one_clean_line(capsys, main(args))


def test_a_missing_file_is_named_whole(tmp_path, capsys):
    # A missing config or seeds file names the path as given, with no quote left over from the exception's repr.
    missing = tmp_path / "no-such.yml"
    for args in (["crawl", "-o", str(tmp_path / "run"), "-c", str(missing)],
                 ["topic", "init", str(tmp_path / "t"), "--keywords", "birds", "--seeds", str(missing)]):
        code = main(args)
        err = capsys.readouterr().err
        assert code == 2 and " ".join(err.split()) == f"error: No such file or directory: {missing}", err


OPTION_VALUES = st.one_of(st.integers(-3, 3), st.floats(), st.text(max_size=5), st.none(), st.booleans(),
                          st.lists(st.integers(-1, 2), max_size=2), st.dictionaries(st.text(max_size=3), st.integers()))


@settings(max_examples=300, deadline=None)
@given(data=st.data())
def test_any_value_of_any_strategy_option_builds_the_policy_or_says_why(data):
    # What `-s options.NAME.KEY=VALUE` can hand a strategy: the policy is built, or a ValueError says which option
    # and why (the CLI's one line); never a TypeError or a numpy error from inside the constructor.
    name = data.draw(st.sampled_from(sorted(STRATEGIES)))
    parameters = [p for p in inspect.signature(STRATEGIES[name].factory).parameters if p != "judge"]
    key = data.draw(st.sampled_from(parameters + ["nonsense"]))
    value = data.draw(OPTION_VALUES)
    judge = (lambda url: False) if STRATEGIES[name].needs_ground_truth else None
    try:
        make_policy(name, judge, **{key: value})
    except ValueError as exc:
        assert str(exc)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.sampled_from(["topic.yml", "keywords.txt", "seeds.txt"]),
       content=st.one_of(st.binary(max_size=60), st.text(max_size=60).map(str.encode),
                         st.sampled_from([b"a: [", b"- 1\n- 2\n", b"description: [1, 2]", b"\xff\xfe"])))
@example(name="topic.yml", content=b"a: [")
@example(name="keywords.txt", content=b"\xff\xfe")
def test_damaged_topic_directories(tmp_path, capsys, name, content):
    # a topic directory edited by hand: its files are read before anything else, and a broken one names itself
    topic = tmp_path / "topic"
    topic.mkdir(exist_ok=True)
    (topic / "keywords.txt").write_text("birds\n")
    (topic / "seeds.txt").write_text("http://127.0.0.1:9/\n")
    (topic / name).write_bytes(content)
    code = main(["crawl", "-o", str(tmp_path / "run"), "--topic", str(topic), "--web", str(tmp_path / "no-web")])
    _one_clean_line(capsys, code)


@pytest.mark.parametrize("mistake, expected", [
    (["--web", "{tmp}/no-web"], "no-web is not an offline web"),
    (["--hosts-map", "{tmp}/hosts.json"], "hosts.json is not a hosts map"),
    (["--strategy", "gouriten", "-s", "options.gouriten.estimator=nonsense"], "unknown estimator 'nonsense'"),
    (["--strategy", "oracle"], "reads ground truth"),
    (["-s", "options.no-such-strategy.x=1"], "unknown strategy 'no-such-strategy'"),
    (["--seeds", "{tmp}/empty.txt", "--strategy", "bfs"], "no seeds"),
    (["--web", "embedded", "--seeds-from-sitemap", "http://a.test/"], "reads sitemaps over HTTP"),
    (["--seeds-from-sitemap", "http://a.test/", "--workers", "2"], "is read by a crawl in one process"),
    (["--seeds-from-sitemap", "ftp://a.test/"], "ftp://a.test/: not an http(s) URL"),
    (["-s", "fetch.sitemap_max_urls=0"], "setting fetch.sitemap_max_urls: Input should be greater than or equal"),
])
def test_a_crawl_checks_its_inputs_before_it_writes_or_trains_anything(tmp_path, capsys, mistake, expected):
    # A topic from a few words: training its model builds word vectors on a fresh machine, minutes before a
    # crawl would reach the web. Every mistake is found first, and the run folder is never made.
    topic = tmp_path / "topic"
    topic.mkdir()
    (topic / "keywords.txt").write_text("birds\n")
    (tmp_path / "hosts.json").write_text("[1, 2]")
    (tmp_path / "empty.txt").write_text("# no seeds\n")
    if "--seeds" not in mistake:
        (topic / "seeds.txt").write_text("http://127.0.0.1:9/\n")
    code = main(["crawl", "-o", str(tmp_path / "run"), "--topic", str(topic),
                 *[arg.format(tmp=tmp_path) for arg in mistake]])
    assert expected in " ".join(_one_clean_line(capsys, code).split())
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("mistake, expected", [
    (["-s", "fetch.min_delay=abc"], "setting fetch.min_delay: Input should be a valid number"),
    (["-s", "fetch.max_concurrency=x"], "setting fetch.max_concurrency: Input should be a valid integer"),
    (["-s", "fetch.min_delay=-1"], "setting fetch.min_delay: Input should be greater than or equal to 0"),
    (["-s", "fetch.no_such_knob=1"], "setting fetch.no_such_knob: unknown setting"),
    (["-s", "fetch=5"], "setting fetch: Input should be a valid dictionary"),
    (["--politeness", "site"], "setting fetch.politeness: Input should be 'host', 'domain' or 'ip'"),
    (["-c", "{tmp}/fetch.yml"], "setting fetch.max_concurrency: Input should be a valid integer"),
])
def test_a_fetch_setting_of_the_wrong_type_or_name_is_refused_when_the_config_loads(tmp_path, capsys, mistake,
                                                                                    expected):
    # The HTTP fetcher's settings are typed like every other: one line naming the setting, before the run folder
    # is made, also for a crawl that would never build the fetcher (an offline web)
    (tmp_path / "fetch.yml").write_text('fetch:\n  max_concurrency: "x"\n')
    code = main(["crawl", "-o", str(tmp_path / "run"), "--topic", str(tmp_path), "--web", "embedded",
                 *[arg.format(tmp=tmp_path) for arg in mistake]])
    assert expected in " ".join(_one_clean_line(capsys, code).split())
    assert not (tmp_path / "run").exists()
