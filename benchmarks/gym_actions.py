"""Which candidates a trained agent takes in ``focuscrawl/Crawl-v0``, and what it finds against the first candidate.

    nice -n 10 python -m benchmarks.gym_actions webs/wikispeedia runs/gym/dqn-physics.zip \\
        --topics subject.Religion,subject.Citizenship,subject.Business_Studies --runs 5

For each topic, bench's runs 0 to ``--runs`` - 1 (``reset(options={"run": i})``: bench's seeds and crawl seed),
crawled twice to the budget: by the model's deterministic choice, as ``gym-agent`` makes it, and by always the
first candidate (adaptive's best by its model, with no exploration). Prints the share of steps at each
candidate's rank, and each crawl's mean return (relevant pages by the labels) and AUC (those pages summed over
the steps, bench's AUC before its division by the oracle's).
"""

from __future__ import annotations

import argparse
from collections import Counter

import numpy as np


def crawl(env, run: int, choose) -> tuple[float, float, Counter]:
    """(return, AUC, actions taken) of run ``run`` with ``choose(observation) -> action``."""
    obs, _ = env.reset(options={"run": run})
    total, auc, actions, done = 0.0, 0.0, Counter(), False
    while not done:
        action = choose(obs)
        actions[action] += 1
        obs, reward, terminated, truncated, _ = env.step(action)
        total += reward
        auc += total
        done = terminated or truncated
    return total, auc, actions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("web")
    parser.add_argument("model")
    parser.add_argument("--topics", default="subject.Religion")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--budget", type=int, default=1000)
    args = parser.parse_args()

    import gymnasium

    import focuscrawl.gym  # noqa: F401
    from focuscrawl.gym.agent import load_agent

    agent = load_agent(args.model)
    k = int(agent.action_space.n)
    for topic in args.topics.split(","):
        env = gymnasium.make("focuscrawl/Crawl-v0", web=args.web, topic=topic, budget=args.budget, candidates=k)
        mine = [crawl(env, run, lambda obs: int(agent.predict(obs, deterministic=True)[0])) for run in range(args.runs)]
        first = [crawl(env, run, lambda obs: 0) for run in range(args.runs)]
        taken = sum((actions for _, _, actions in mine), Counter())
        steps = sum(taken.values())
        shares = " ".join(f"{rank + 1}:{taken[rank] / steps:.1%}" for rank in range(k))
        print(f"{topic}: candidates taken {shares}")
        print(f"  agent: return {np.mean([m[0] for m in mine]):.1f}, AUC {np.mean([m[1] for m in mine]):.0f}; "
              f"first candidate: return {np.mean([f[0] for f in first]):.1f}, AUC {np.mean([f[1] for f in first]):.0f}")
        env.close()


if __name__ == "__main__":
    main()
