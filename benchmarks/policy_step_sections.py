"""Where does a TRES (or ``adaptive``) step spend its time? Section timers around the policy's own methods.

Grows a ``tres`` frontier on ``bench-policy``'s synthetic load to SIZE URLs, times STEPS plain steps (select +
observe, learning included), then wraps the main methods with timers and runs STEPS more steps, printing
milliseconds per step for each, wall clock and process CPU time (nested sections overlap: ``observe`` contains
``train_step``, and so on). CPU time is the figure to read on a shared machine, where wall clock also counts
waiting for a core.

    python -m benchmarks.policy_step_sections 1000000 1000 [--web webs/wikispeedia] [--reward-model tfidf]
    python -m benchmarks.policy_step_sections 1000000 1000 --strategy adaptive --reward-model tfidf
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from pathlib import Path

from threadpoolctl import threadpool_limits

from focuscrawl.bench.policy_speed import PolicyRunner, SyntheticLoad, web_anchors
from focuscrawl.strategies import adaptive, make_policy
from focuscrawl.strategies.adaptive import evidence, models, reasons
from focuscrawl.strategies.adaptive import policy as adaptive_policy
from focuscrawl.strategies.frontier import graph, ranking
from focuscrawl.strategies.tres import agent, ddqn, features, tree_frontier
from focuscrawl.topic import relevance, similarity

try:
    from focuscrawl.strategies.adaptive.linkwords import PageLinks
except ImportError:  # a revision before one pass per page (run against it with PYTHONPATH)
    PageLinks = None

SECTIONS = {
    "tres": [
        (agent.TresPolicy, "select"), (agent.TresPolicy, "observe"), (agent.TresPolicy, "_insert"),
        (agent.TresPolicy, "_refresh_host"), (ddqn.DDQN, "train_step"), (ddqn.ReplayBuffer, "sample"),
        (ddqn.QNetwork, "loss_and_gradients"), (features.FeatureBuilder, "outlink_features"),
        (features.FeatureBuilder, "anchor_probabilities"), (features.KeywordMatcher, "__call__"),
        (tree_frontier.TreeFrontier, "add"), (tree_frontier.TreeFrontier, "add_experience"),
        (tree_frontier.TreeFrontier, "update_host"), (tree_frontier.TreeFrontier, "representatives"),
        (tree_frontier.TreeFrontier, "pop"),
    ],
    # select (with the re-rank and the reason), observe (the per-page bookkeeping of the graph, the ranking and
    # the evidence rows; the new links' evidence: context relevance, topic words, hashed words, link model; since
    # one pass per page, PageLinks.__init__ holds the tokenising and the compiled pass, and hashed_words_many and
    # TopicSimilarity.links are no longer called by adaptive)
    "adaptive": [
        (adaptive.AdaptivePolicy, "select"), (adaptive.AdaptivePolicy, "_rerank"),
        (evidence.Evidence, "rescore_links"), (ranking.Ranking, "rebuild"), (evidence.Evidence, "rows"),
        (reasons, "explain"), (adaptive.AdaptivePolicy, "_take"),
        (evidence.Evidence, "column"), (ranking.Ranking, "best"), (adaptive.AdaptivePolicy, "observe"),
        (graph.CrawlGraph, "intern"), (graph.CrawlGraph, "crawled_targets"), (graph.CrawlGraph, "crawl"),
        (ranking.Ranking, "update"), (evidence.Evidence, "add"),
        (adaptive.AdaptivePolicy, "_context_relevance"), (relevance.TfidfRelevanceModel, "predict_proba"),
        (similarity.TopicSimilarity, "links"), (adaptive_policy, "hashed_words_many"),
        (adaptive_policy, "hashed_words"), (PageLinks, "__init__"), (PageLinks, "similarity"),
        (models.OnlineLogistic, "predict_many"), (models.OnlineLogistic, "predict"),
        (models.OnlineLogistic, "learn"), (models.OnlineLeastSquares, "learn"),
    ],
}


def wrap(owner: object, name: str, totals: dict[str, list[float]]) -> None:
    """Time calls of ``owner.name`` (a class's method or a module's function) into ``totals``: [wall, CPU]."""
    method = getattr(owner, name)
    label = f"{getattr(owner, '__name__', '?').rsplit('.', 1)[-1]}.{name}"

    def timed(*args, **kwargs):
        started, cpu_started = time.perf_counter(), time.process_time()
        try:
            return method(*args, **kwargs)
        finally:
            total = totals[label]
            total[0] += time.perf_counter() - started
            total[1] += time.process_time() - cpu_started

    setattr(owner, name, timed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("size", type=int, help="frontier size to grow to")
    parser.add_argument("steps", type=int, help="timed steps")
    parser.add_argument("--strategy", choices=sorted(SECTIONS), default="tres")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--reward-model", default="kwbilstm", help="as bench-policy's (tfidf: the policy alone)")
    parser.add_argument("--web", type=Path, help="as bench-policy's: anchors drawn from this offline web's links")
    args = parser.parse_args()

    anchors = web_anchors(args.web) if args.web else None
    load = SyntheticLoad(args.seed, hosts=max(100, args.size // 50), anchors=anchors)
    runner = PolicyRunner(make_policy(args.strategy), load, load.context(args.seed, args.reward_model))

    def run(count: int) -> tuple[float, float]:
        pages = [load.page(20) for _ in range(count)]  # generated first: only the policy is timed
        started, cpu_started = time.perf_counter(), time.process_time()
        for reward, links in pages:
            runner.step(reward, links)
        return time.perf_counter() - started, time.process_time() - cpu_started

    with threadpool_limits(1):
        runner.grow(args.size, 100)
        wall, cpu = run(args.steps)
        leaves = runner.policy.diagnostics().get("leaves")
        print(f"frontier {runner.frontier:,}{f', {leaves} leaves' if leaves is not None else ''}: "
              f"{1000 * wall / args.steps:.3f} ms ({1000 * cpu / args.steps:.3f} ms CPU) per plain step")
        totals: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0])
        for owner, name in SECTIONS[args.strategy]:
            if owner is not None and hasattr(owner, name):  # an older revision may lack some (run with PYTHONPATH)
                wrap(owner, name, totals)
        run(args.steps)
    print(f"  {'section':40s} {'ms/step':>8} {'CPU ms':>8}")
    for name in sorted(totals, key=lambda k: -totals[k][1]):
        print(f"  {name:40s} {1000 * totals[name][0] / args.steps:8.3f} {1000 * totals[name][1] / args.steps:8.3f}")


if __name__ == "__main__":
    main()
