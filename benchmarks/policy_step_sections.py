"""Where does a TRES step spend its time? Section timers around the policy's own methods.

Grows a ``tres`` frontier on ``bench-policy``'s synthetic load to SIZE URLs, times STEPS plain steps (select +
observe, learning included), then wraps the main methods with timers and runs STEPS more steps, printing
milliseconds per step for each (nested sections overlap: ``observe`` contains ``train_step``, and so on).

    python -m benchmarks.policy_step_sections 1000000 1000 [--web webs/wikispeedia] [--reward-model tfidf]
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict
from pathlib import Path

from threadpoolctl import threadpool_limits

from focuscrawl.bench.policy_speed import PolicyRunner, SyntheticLoad, web_anchors
from focuscrawl.strategies import make_policy
from focuscrawl.strategies.tres import agent, ddqn, features, tree_frontier

SECTIONS = [
    (agent.TresPolicy, "select"), (agent.TresPolicy, "observe"), (agent.TresPolicy, "_insert"),
    (agent.TresPolicy, "_refresh_host"), (ddqn.DDQN, "train_step"), (ddqn.ReplayBuffer, "sample"),
    (ddqn.QNetwork, "loss_and_gradients"), (features.FeatureBuilder, "outlink_features"),
    (features.FeatureBuilder, "anchor_probabilities"), (features.KeywordMatcher, "__call__"),
    (tree_frontier.TreeFrontier, "add"), (tree_frontier.TreeFrontier, "add_experience"),
    (tree_frontier.TreeFrontier, "update_host"), (tree_frontier.TreeFrontier, "representatives"),
    (tree_frontier.TreeFrontier, "pop"),
]


def wrap(cls: type, name: str, totals: dict[str, float]) -> None:
    method = getattr(cls, name)

    def timed(*args, **kwargs):
        started = time.perf_counter()
        try:
            return method(*args, **kwargs)
        finally:
            totals[f"{cls.__name__}.{name}"] += time.perf_counter() - started

    setattr(cls, name, timed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("size", type=int, help="frontier size to grow to")
    parser.add_argument("steps", type=int, help="timed steps")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--reward-model", default="kwbilstm", help="as bench-policy's (tfidf: the policy alone)")
    parser.add_argument("--web", type=Path, help="as bench-policy's: anchors drawn from this offline web's links")
    args = parser.parse_args()

    anchors = web_anchors(args.web) if args.web else None
    load = SyntheticLoad(args.seed, hosts=max(100, args.size // 50), anchors=anchors)
    runner = PolicyRunner(make_policy("tres"), load, load.context(args.seed, args.reward_model))

    def run(count: int) -> float:
        pages = [load.page(20) for _ in range(count)]  # generated first: only the policy is timed
        started = time.perf_counter()
        for reward, links in pages:
            runner.step(reward, links)
        return time.perf_counter() - started

    with threadpool_limits(1):
        runner.grow(args.size, 100)
        plain = run(args.steps)
        print(f"frontier {runner.frontier:,}, {runner.policy.diagnostics()['leaves']} leaves: "
              f"{1000 * plain / args.steps:.3f} ms per plain step")
        totals: dict[str, float] = defaultdict(float)
        for cls, name in SECTIONS:
            wrap(cls, name, totals)
        run(args.steps)
    for name in sorted(totals, key=lambda k: -totals[k]):
        print(f"  {name:40s} {1000 * totals[name] / args.steps:7.3f} ms/step")


if __name__ == "__main__":
    main()
