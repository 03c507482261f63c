"""Do two trees decide alike at scale? A hash of every selection (URL and score) on ``bench-policy``'s load.

``benchmarks.crawl_hashes`` compares crawls of a few hundred pages, whose frontiers stay small; a change to what a
policy does only on large frontiers (re-ranks in blocks, a heap that keeps 1% of the frontier) is compared here:
the policy grows a frontier of SIZE URLs through its own select/observe loop, then takes STEPS more steps, and the
hash covers every selection of both phases. Run it on each tree:

    PYTHONPATH=TREE/src python -m benchmarks.selection_hash 400000 3000 [--strategy adaptive]
"""

from __future__ import annotations

import argparse
import hashlib


def main() -> None:
    from focuscrawl.bench.policy_speed import PolicyRunner, SyntheticLoad
    from focuscrawl.strategies import make_policy, resolve

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("size", type=int, help="frontier size to grow to")
    parser.add_argument("steps", type=int, help="steps after the growth")
    parser.add_argument("--strategy", default="adaptive")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    load = SyntheticLoad(args.seed, hosts=max(100, args.size // 50))
    policy = make_policy(args.strategy)
    runner = PolicyRunner(policy, load, load.context(args.seed, resolve(args.strategy).reward_model))
    digest = hashlib.sha256()
    select = policy.select

    def hashed_select():
        selection = select()
        if selection is not None:
            digest.update(f"{selection.url} {selection.score!r}\n".encode())
        return selection

    policy.select = hashed_select
    runner.grow(args.size, 100)
    for _ in range(args.steps):
        if not runner.step(*load.page(20)):
            break
    print(f"{args.strategy}: {runner.step_count} selections, frontier {runner.frontier:,}, "
          f"hash {digest.hexdigest()[:16]}")


if __name__ == "__main__":
    main()
