"""Where a run folder keeps its crawl-state stores: ``state.sqlite`` at its top for a single-process crawl, one in
each ``shards/K/`` for a distributed one (``focuscrawl.crawl.run_folder`` lists every file of both kinds)."""

from __future__ import annotations

from pathlib import Path

from focuscrawl.storage.state import STATE_FILE

SHARDS_DIR = "shards"
DISTRIBUTED_FILE = "distributed.json"  # a distributed crawl's N


def is_distributed(run: Path) -> bool:
    """Whether ``run`` is (or was begun as) a distributed crawl's folder."""
    return (run / SHARDS_DIR).is_dir() or (run / DISTRIBUTED_FILE).exists()


def run_stores(run: Path) -> list[tuple[int | None, Path]]:
    """(shard, folder) of each store the run holds, in shard order; shard None for a single-process crawl's own
    folder. Empty when ``run`` holds no crawl."""
    run = Path(run)
    if not is_distributed(run):
        return [(None, run)] if (run / STATE_FILE).is_file() else []
    shards = (run / SHARDS_DIR).glob("*") if (run / SHARDS_DIR).is_dir() else ()
    return sorted((int(p.name), p) for p in shards if p.name.isdigit() and (p / STATE_FILE).is_file())
