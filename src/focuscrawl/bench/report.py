"""Human-readable outputs of a benchmark: the markdown table and the harvest plot."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np

COLUMNS = [
    ("strategy", "strategy", "{}"),
    ("auc_ratio_mean", "AUC/oracle", "{:.3f}"),
    ("oracle_ratio_mean", "pages/oracle", "{:.3f}"),
    ("harvest_rate_mean", "harvest rate", "{:.3f}"),
    ("harvest_rate_std", "± std", "{:.3f}"),
    ("relevant_pages_mean", "relevant pages", "{:.1f}"),
    ("relevant_domains_mean", "relevant domains", "{:.1f}"),
    ("domains_auc_ratio_mean", "domains AUC/oracle", "{:.3f}"),
    ("decision_ms_mean", "decision ms", "{:.3f}"),
    ("wall_s", "wall s", "{:.1f}"),
]


def cell(value: float | None, spec: str = "{:.3f}") -> str:
    """A figure for a table; "-" when a summary has none (one written before the figure was recorded, such as
    ``domains_auc_ratio_mean`` in older summaries) or it is NaN."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return spec.format(value)


def summary_markdown(summary: dict) -> str:
    head = (
        f"# {summary['web']} / {summary['topic']}\n\n"
        f"budget {summary['budget']}, {summary['runs']} runs, {summary['seeds_per_run']} seed(s) per run, "
        f"MAX per domain {summary['max_per_domain']}, {summary['relevant_total']} relevant pages in the web, "
        f"seed {summary['seed']}\n\n"
    )
    reach = summary.get("seed_reach")
    if reach:
        head += (f"seeds: each can reach at least {reach['threshold']:,} of the web's {reach['web_pages']:,} pages "
                 f"({reach['seed_pool']} of {reach['candidates']} candidate pages do); pages a crawl can reach from "
                 f"each run's seeds: {', '.join(f'{n:,}' for n in reach['runs'])}\n\n")
    lines = ["| " + " | ".join(title for _, title, _ in COLUMNS) + " |",
             "|" + "---|" * len(COLUMNS)]
    for row in summary["strategies"]:
        lines.append("| " + " | ".join(cell(row.get(key), fmt) for key, _, fmt in COLUMNS) + " |")
    return head + "\n".join(lines) + "\n" + _spent_markdown(summary["strategies"])


def _spent_markdown(rows: list[dict]) -> str:
    """On a messy web: the mean steps each strategy spent on each kind of injected URL, and their share."""
    kinds = sorted({kind for row in rows for kind in row.get("spent_mean", {})})
    if not kinds:
        return ""
    lines = ["", "Steps spent on a messy web's injected URLs (mean over runs):", "",
             "| strategy | share | " + " | ".join(kinds) + " |", "|" + "---|" * (len(kinds) + 2)]
    for row in rows:
        spent = row.get("spent_mean", {})
        lines.append(f"| {row['strategy']} | {row.get('injected_share_mean', 0.0):.3f} | "
                     + " | ".join(f"{spent.get(kind, 0.0):.1f}" for kind in kinds) + " |")
    return "\n".join(lines) + "\n"


def plot_harvest(results, strategies: list[str], path: Path, title: str = "") -> None:
    """Relevant pages vs pages fetched: mean curve and min-max band over runs, one colour per strategy."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=110)
    for name in strategies:
        curves = np.array([r.curve for r in results if r.strategy == name], dtype=float)
        if curves.size == 0:
            continue
        steps = np.arange(1, curves.shape[1] + 1)
        mean = curves.mean(axis=0)
        ax.plot(steps, mean, label=name, linestyle="--" if name == "oracle" else "-")
        ax.fill_between(steps, curves.min(axis=0), curves.max(axis=0), alpha=0.15)
    ax.set_xlabel("pages fetched")
    ax.set_ylabel("relevant pages (ground truth)")
    ax.set_title(title)
    ax.legend(loc="upper left", fontsize=8)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
