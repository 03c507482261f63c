"""What a corpus export costs: seconds per 10,000 pages and the size of what it writes against pages.jsonl.

    python -m benchmarks.export_speed runs/wikispeedia-physics

Each format is exported from the run folder (every page, ``min_relevance`` 0) into a temporary folder: Parquet,
JSON Lines and Markdown files with the Markdown of the WARC's HTML, and Parquet once more from a view of the run
folder without its WARC (the Markdown of the stored main text; the view links every other file). Wall-clock and
CPU seconds (``process_time``: what other processes on the machine do not inflate) are per 10,000 pages exported;
the size is the file's (the folder's files' for Markdown) over pages.jsonl's. What a process pays once (importing
trafilatura, loading py3langid's model) is printed apart, before the clock starts. Then the round trip: how many
rows of the first Parquet file are their record in pages.jsonl (by step, or shard and shard_step: the same URL and
relevance).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import pyarrow.parquet as pq

from focuscrawl.storage import PAGES_FILE, WARC_FILE
from focuscrawl.storage.export import ExportFormat, export_corpus


def size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.iterdir()) if path.is_dir() else path.stat().st_size


def without_warc(run: Path, into: Path) -> Path:
    """A view of ``run`` without its WARCs (a distributed run's shards' too): links to every other file."""
    into.mkdir()
    for item in run.iterdir():
        if item.is_dir():
            without_warc(item, into / item.name)
        elif item.name != WARC_FILE:
            (into / item.name).symlink_to(item.resolve())
    return into


def traced(parquet: Path, run: Path) -> tuple[int, int]:
    """(rows of the export, those whose URL and relevance are their record's in the run's pages.jsonl)."""
    records = {}
    with open(run / PAGES_FILE, encoding="utf-8") as fh:
        for line in fh:
            page = json.loads(line)
            records[(page.get("shard"), page.get("shard_step", page["step"]))] = (page["url"], page["relevance"])
    rows = pq.read_table(parquet, columns=["url", "relevance", "shard", "step"]).to_pylist()
    same = sum(1 for row in rows if (record := records.get((row["shard"], row["step"]))) is not None
               and record[0] == row["url"] and abs(record[1] - row["relevance"]) < 1e-6)
    return len(rows), same


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    args = parser.parse_args()
    started = time.perf_counter()
    # imported here, so that what a process pays once is timed apart from the exports
    import py3langid
    import trafilatura

    trafilatura.extract("<html><body><p>a page</p></body></html>", output_format="markdown")
    py3langid.classify("a page")
    print(f"once a process: {time.perf_counter() - started:.1f} s to load trafilatura and py3langid's model")
    pages_size = (args.run / PAGES_FILE).stat().st_size
    print(f"{args.run}: pages.jsonl {pages_size / 1e6:.1f} MB\n")
    print("| format | Markdown from | pages exported | wall s per 10,000 pages | CPU s per 10,000 pages | MB | "
          "size / pages.jsonl |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        cases = [(fmt, args.run, "WARC's HTML") for fmt in ExportFormat]
        cases.append((ExportFormat.PARQUET, without_warc(args.run, Path(tmp) / "no-warc"), "stored text"))
        for i, (fmt, run, source) in enumerate(cases):
            out = Path(tmp) / f"{i}-{fmt.value}"
            wall, cpu = time.perf_counter(), time.process_time()
            report = export_corpus(run, out, fmt)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            per = 10_000 / report.rows
            written = size(out)
            print(f"| {fmt.value} | {source} | {report.rows:,} | {wall * per:.0f} | {cpu * per:.0f} | "
                  f"{written / 1e6:.1f} | {written / pages_size:.2f} |")
        rows, same = traced(Path(tmp) / "0-parquet", args.run)
        print(f"\nround trip: {same:,} of {rows:,} rows are their record in pages.jsonl")


if __name__ == "__main__":
    main()
