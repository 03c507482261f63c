"""``focuscrawl bench --global``: one score per strategy over several webs (Gouriten et al. 2014, Sec. 7).

Per web (here: a (web, topic) pair, each its own crawl target), a strategy's score is its mean relevant
pages normalised by the oracle greedy's on the same seeds (the benchmark's ``oracle_ratio_mean``); the
global score is the geometric mean of those per-web scores, so that no single large web dominates. The
same is reported for the AUC ratio, which also rewards finding relevant pages early, and for the domains-AUC
ratio (relevant hosts against steps, over the oracle's).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from focuscrawl.bench.report import cell
from focuscrawl.bench.runner import check_seeds, run_benchmark
from focuscrawl.config import BenchConfig


@dataclass(frozen=True)
class Target:
    """One web of the global score: an offline web, the topic crawled on it, and its seeds per run."""

    web: str
    topic: str
    seeds_per_run: int = 1

    @property
    def slug(self) -> str:
        return re.sub(r"[^A-Za-z0-9_.-]+", "_", f"{Path(self.web).name}-{self.topic}")


def parse_targets(webs: str, topics: str, seeds_per_run: str) -> list[Target]:
    """Pair comma-separated webs, topics and seeds-per-run by position; a single value is broadcast."""
    lists = [[v.strip() for v in s.split(",") if v.strip()] for s in (webs, topics, seeds_per_run)]
    n = max(len(values) for values in lists)
    for values, what in zip(lists, ("--web", "--topic", "--seeds-per-run")):
        if len(values) not in (1, n):
            raise ValueError(f"{what} has {len(values)} values; give 1 or {n} (one per web of the global score)")
    web_list, topic_list, seed_list = ([v[0]] * n if len(v) == 1 else v for v in lists)
    try:
        seeds = [int(s) for s in seed_list]
    except ValueError:
        raise ValueError(f"--seeds-per-run must be integers, got {seeds_per_run!r}") from None
    return [Target(w, t, s) for w, t, s in zip(web_list, topic_list, seeds)]


def geometric_mean(values: Sequence[float]) -> float:
    if not values or any(v < 0 or math.isnan(v) for v in values):
        return math.nan
    if any(v == 0 for v in values):
        return 0.0
    return math.exp(sum(math.log(v) for v in values) / len(values))


def run_global(config: BenchConfig, targets: Sequence[Target],
               progress: Callable[[str], None] | None = None) -> dict:
    """Benchmark every target (each in its own sub-folder of ``config.out``) and combine them into global
    scores; every other setting is ``config``'s."""
    if len(targets) < 1:
        raise ValueError("--global needs at least one web")
    out = Path(config.out)
    configs = [config.model_copy(update={"web": target.web, "topic": target.topic,
                                         "seeds_per_run": target.seeds_per_run, "out": out / f"{i:02d}-{target.slug}"})
               for i, target in enumerate(targets)]
    for target_config in configs[1:]:  # a later web that cannot seed its runs stops the score before any crawl
        check_seeds(target_config)
    per_target = []
    for i, (target, target_config) in enumerate(zip(targets, configs)):
        if progress:
            progress(f"[{i + 1}/{len(targets)}] {target.web} / {target.topic} ({target.seeds_per_run} seed(s) per run)")
        per_target.append(run_benchmark(target_config, progress))
    result = combine(per_target, budget=config.budget, runs=config.runs, max_per_domain=config.max_per_domain,
                     seed=config.seed)
    (out / "global.json").write_text(json.dumps(result, indent=2) + "\n")
    (out / "global.md").write_text(global_markdown(result))
    return result


def combine(per_target: Sequence[dict], *, budget: int, runs: int, max_per_domain: str | int | None,
            seed: int) -> dict:
    """Global scores from per-web summaries (``summary.json`` contents), plus per-strategy means over webs
    of harvest rate, relevant domains and decision time, so one table answers "which crawler?"."""
    names = [row["strategy"] for row in per_target[0]["strategies"]]
    rows = []
    for name in names:
        mine = [_row(s, name) for s in per_target]
        pages = [r["oracle_ratio_mean"] for r in mine]
        aucs = [r["auc_ratio_mean"] for r in mine]
        # NaN (shown "-") when a web's summary predates the figure
        domains_aucs = [r.get("domains_auc_ratio_mean", math.nan) for r in mine]
        rows.append({"strategy": name, "global_score": geometric_mean(pages), "global_auc": geometric_mean(aucs),
                     "global_domains_auc": geometric_mean(domains_aucs),
                     "harvest_rate_mean": _mean([r["harvest_rate_mean"] for r in mine]),
                     "relevant_domains_mean": _mean([r["relevant_domains_mean"] for r in mine]),
                     "decision_ms_mean": _mean([r["decision_ms_mean"] for r in mine]),
                     "per_web_score": pages, "per_web_auc": aucs, "per_web_domains_auc": domains_aucs})
    return {
        "webs": [{"web": s["web"], "web_dir": s["web_dir"], "topic": s["topic"], "seeds_per_run": s["seeds_per_run"],
                  "relevant_total": s["relevant_total"]} for s in per_target],
        "budget": budget, "runs": runs, "max_per_domain": str(max_per_domain or "inf"), "seed": seed,
        "strategies": rows,
    }


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else math.nan


def _row(summary: dict, name: str) -> dict:
    return next(row for row in summary["strategies"] if row["strategy"] == name)


def global_markdown(result: dict) -> str:
    webs = [f"{w['web']}/{w['topic'].split('.')[-1]}" for w in result["webs"]]
    head = (f"# Global score over {len(webs)} webs\n\nbudget {result['budget']}, {result['runs']} runs, "
            f"MAX per domain {result['max_per_domain']}, seed {result['seed']}. Score = relevant pages / "
            "oracle's on the same seeds; global = geometric mean over webs (Gouriten et al. 2014), likewise for "
            "AUC/oracle and domains AUC/oracle (relevant hosts against steps); harvest "
            "rate, relevant domains and decision ms are means over webs.\n\n")
    lines = ["| strategy | global score | global AUC | global domains AUC | " + " | ".join(webs)
             + " | harvest rate | relevant domains | decision ms |",
             "|" + "---|" * (7 + len(webs))]
    for row in sorted(result["strategies"], key=lambda r: -sortable_score(r["global_score"])):
        cells = [f"{v:.3f}" for v in row["per_web_score"]]
        lines.append(f"| {row['strategy']} | {row['global_score']:.3f} | {row['global_auc']:.3f} | "
                     f"{cell(row.get('global_domains_auc'))} | "
                     + " | ".join(cells) + f" | {row['harvest_rate_mean']:.3f} | {row['relevant_domains_mean']:.1f} | "
                     f"{row['decision_ms_mean']:.3f} |")
    return head + "\n".join(lines) + "\n"


def sortable_score(value: float) -> float:
    return -1.0 if math.isnan(value) else value
