"""benchmarks.defences_halves (issue 44, item 1): the parts that need no served application: which test bed kinds
count as generated variants and thin rows, the halves of both beds, the report's arithmetic and targets, and bad
input as one line."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from focuscrawl.bench.suite import HALVES, find_suite, load_suite
from focuscrawl.webs.testbed.labels import GENERATED_KINDS, KIND_GROUPS, KINDS, SITE_KINDS
from focuscrawl.webs.testbed.spend import group_shares

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # the benchmarks package lives beside src/, not in it
    sys.path.insert(0, str(ROOT))

from benchmarks import defences_halves as halves  # noqa: E402


def test_every_kind_is_in_exactly_one_group():
    groups = list(KIND_GROUPS.values())
    assert set().union(*groups) == set(KINDS)
    assert sum(len(group) for group in groups) == len(KINDS)
    assert {"row", "query", "calendar", "translation", "diff", "export"} <= GENERATED_KINDS
    assert "listing" in SITE_KINDS and "content" in KIND_GROUPS["content"]


def test_group_shares_count_each_request_once_and_leave_the_web_out():
    shares = group_shares({"content": 5, "row": 2, "query": 1, "listing": 1, "web": 1}, 10)
    assert shares == pytest.approx({"content": 0.5, "generated": 0.3, "site": 0.1})
    assert group_shares({}, 0) == {"content": 0.0, "generated": 0.0, "site": 0.0}


def test_the_halves_of_both_beds():
    assert set(halves.HALF_RUNS) == set(HALVES)
    assert halves.bed_run_of("tuning") == 0 and halves.bed_run_of("held-out") == 1
    with pytest.raises(halves.HalvesError, match="not a half"):
        halves.bed_run_of("both")
    suite = load_suite(find_suite("dev"))
    for half in HALVES:
        rows = halves.half_rows(half, halves.MESSY_ROWS)
        expected = [row.slug for row in suite.rows if row.half == half and row.web in ("wikispeedia", "webkb")]
        assert rows == expected and rows
    assert not set(halves.half_rows("tuning", ".")) & set(halves.half_rows("held-out", "."))


def bed_run(strategy: str, relevant: int, by_kind: dict[str, int]) -> dict:
    requests = sum(by_kind.values())
    return {"strategy": strategy, "relevant": relevant, "requests": requests, "by_kind": by_kind,
            "groups": group_shares(by_kind, requests)}


def test_bed_summary_and_its_targets():
    runs = [bed_run("a", 100, {"content": 80, "row": 4, "listing": 6, "web": 10}),
            bed_run("a", 90, {"content": 70, "row": 3, "query": 3, "listing": 4, "web": 20}),
            bed_run("a", 80, {"content": 90, "row": 1, "web": 9})]
    summary = halves.bed_summary(runs)["a"]
    assert summary["median"] == 90 and summary["worst"] == 80 and summary["steady"] == pytest.approx(80 / 90)
    assert summary["generated"] == pytest.approx([0.04, 0.06, 0.01]) and summary["max_generated"] == 0.06
    assert summary["not_content"] == pytest.approx([0.10, 0.10, 0.01])  # the old "every kind but content"
    verdicts = halves.targets(summary, None)
    assert [met for _, _, met in verdicts] == [False, False]  # 6% > 5% in one run; 80 / 90 < 0.9
    steady = halves.bed_summary(runs[:2])["a"]
    assert [met for _, _, met in halves.targets(steady, None)] == [False, True]


def write_suite(folder: Path, rows: dict[str, tuple[str, str, list[float], list[dict]]]) -> None:
    """A suite folder as `focuscrawl bench --suite` writes it: row -> (half, web_dir, AUC/oracle per run, runs)."""
    entries = []
    for name, (half, web_dir, aucs, runs) in rows.items():
        entries.append({"label": name, "half": half, "folder": f"rows/{name}"})
        (folder / "rows" / name).mkdir(parents=True)
        summary = {"web_dir": web_dir, "strategies": [{"strategy": "adaptive", "auc_ratio_mean": sum(aucs) / len(aucs),
                                                       "auc_ratios": aucs, "relevant_pages_mean": 1.0}]}
        (folder / "rows" / name / "summary.json").write_text(json.dumps(summary))
        (folder / "rows" / name / "runs.jsonl").write_text(
            "".join(json.dumps({"strategy": "adaptive", "run": i, **run}) + "\n" for i, run in enumerate(runs)))
    (folder / "suite.json").write_text(json.dumps({"rows": entries}))


def test_messy_half_arithmetic_and_targets(tmp_path):
    clean, messy = tmp_path / "clean", tmp_path / "messy"
    write_suite(clean, {"r1": ("tuning", "webs/w", [0.8, 0.6, 0.7], []), "r2": ("tuning", "webs/w", [0.5, 0.5], []),
                        "r3": ("held-out", "webs/w", [0.9], [])})
    write_suite(messy, {
        "r1": ("tuning", "webs/w-mess-default", [0.76, 0.57],  # paired with the clean folder's first two runs
               [{"steps": 100, "spent": {"calendar": 3, "dead-link": 5}}, {"steps": 100, "spent": {"farm": 4}}]),
        "r2": ("tuning", "webs/w-mess-default", [0.45, 0.5], [{"steps": 50, "spent": {"facet": 5}}]),
        "r3": ("held-out", "webs/w-mess-default", [0.9], [{"steps": 10, "spent": {}}])})
    assert halves.messy_rows_of_half(messy, "tuning") == ["r1", "r2"]
    summary = halves.messy_summary(clean, messy, ["r1", "r2", "r9"], "adaptive")
    by_row = {row["row"]: row for row in summary["rows"]}
    assert by_row["r1"]["ratio"] == pytest.approx(0.95) and by_row["r2"]["ratio"] == pytest.approx(0.95)
    assert by_row["r1"]["live_shares"] == pytest.approx([0.03, 0.04]) and by_row["r1"]["shares"] == [0.08, 0.04]
    assert summary["missing"] == ["r9"] and summary["max_live_share"] == pytest.approx(0.10)
    verdicts = halves.targets(None, summary)
    assert [met for _, _, met in verdicts] == [False, True]  # r2's run spent 10%; median ratio .95 holds
    with pytest.raises(halves.HalvesError, match="not a messy web"):
        halves.messy_rows_of_half(clean, "tuning")
    with pytest.raises(halves.HalvesError, match="no row of the held-out half"):
        write_suite(tmp_path / "only", {"r1": ("tuning", "webs/w-mess-default", [0.5], [])})
        halves.messy_rows_of_half(tmp_path / "only", "held-out")


@pytest.mark.parametrize("args, says", [
    ([], "--half is required"),
    (["--half", "both", "--bed", "x", "--clean", "x"], "is not a half"),
    (["--half", "tuning", "--bed", "{tmp}/none", "--clean", "x"], "is not a test bed"),
    (["--half", "tuning", "--bed", "{tmp}", "--clean", "x", "--repeats", "many"], "invalid int value"),
])
def test_bad_input_is_one_line_and_a_non_zero_exit(tmp_path, capsys, args, says):
    (tmp_path / "manifest.json").write_text("{}")
    with pytest.raises(SystemExit) as exited:
        halves.main([arg.format(tmp=tmp_path) for arg in args])
    captured = capsys.readouterr()
    assert exited.value.code == 2 and captured.out == ""
    assert len(captured.err.strip().splitlines()) == 1 and says in captured.err
