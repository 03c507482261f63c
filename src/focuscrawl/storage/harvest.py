"""harvest.csv: the crawl's harvest time series, like ACHE's harvestinfo, plus the final harvest plot.

Relevance here is the agent's own classifier (reward 1 when P(on topic) reaches its decision point, 0.5 unless it
names another: ``types.decision_point``): a live crawl of the real web has no ground truth. The file is cheap to
derive, so resume simply rewrites it from the store.
"""

from __future__ import annotations

import csv
from pathlib import Path

from focuscrawl.storage.state import StateStore

HARVEST_FILE = "harvest.csv"
COLUMNS = ["step", "time_s", "fetched", "relevant", "harvest_rate", "relevant_domains", "frontier_size"]


class HarvestWriter:
    """Appends one row per step; ``rewrite`` regenerates the whole file from the store."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.relevant = 0
        self.domains: set[str] = set()
        self.started_at: float | None = None
        self._fh = None

    def rewrite(self, store: StateStore) -> None:
        tmp = self.path.with_suffix(".csv.tmp")
        self.relevant, self.domains, self.started_at = 0, set(), None
        with open(tmp, "w", newline="") as fh:
            writer = csv.writer(fh)
            writer.writerow(COLUMNS)
            for step, fetched_at, reward, host, frontier in store.harvest_series():
                writer.writerow(self._row(step, fetched_at, reward, host, frontier))
        tmp.replace(self.path)  # atomic: a kill leaves the old file or the new one, never half of one
        self._fh = open(self.path, "a", newline="")
        self._csv = csv.writer(self._fh)

    def _row(self, step: int, fetched_at: float, reward: float, host: str, frontier: int) -> list:
        if self.started_at is None:
            self.started_at = fetched_at
        if reward > 0:
            self.relevant += 1
            self.domains.add(host)
        fetched = step + 1
        return [step, f"{fetched_at - self.started_at:.3f}", fetched, self.relevant,
                f"{self.relevant / fetched:.4f}", len(self.domains), frontier]

    def append(self, step: int, fetched_at: float, reward: float, host: str, frontier: int) -> None:
        assert self._fh is not None, "call rewrite() first"
        self._csv.writerow(self._row(step, fetched_at, reward, host, frontier))
        self._fh.flush()

    def close(self) -> None:
        if self._fh is not None and not self._fh.closed:
            self._fh.close()


def plot_harvest_csv(csv_path: Path, png_path: Path, title: str = "") -> None:
    """Relevant pages (agent's classifier) and harvest rate against pages fetched."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    with open(csv_path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    fetched = [int(r["fetched"]) for r in rows]
    relevant = [int(r["relevant"]) for r in rows]
    rate = [float(r["harvest_rate"]) for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=110)
    ax.plot(fetched, relevant, label="relevant pages")
    ax.set_xlabel("pages fetched")
    ax.set_ylabel("relevant pages (agent's classifier)")
    ax2 = ax.twinx()
    ax2.plot(fetched, rate, color="tab:orange", alpha=0.6, label="harvest rate")
    ax2.set_ylabel("harvest rate")
    ax2.set_ylim(0, 1.05)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    fig.legend(loc="upper left", fontsize=8)
    fig.tight_layout()
    fig.savefig(png_path)
    plt.close(fig)
