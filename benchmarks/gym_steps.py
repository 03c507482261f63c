"""Steps per second of ``focuscrawl/Crawl-v0``, beside the same crawls run by the engine alone.

    nice -n 10 python -m benchmarks.gym_steps webs/wikispeedia --topic subject.Science.Physics --episodes 5

Each of ``--episodes`` episodes crawls from bench's run i's seeds (``reset(options={"run": i})``) to the budget
with actions drawn by a seeded generator; a step is timed from the call to ``env.step`` to its return (fetch,
engine, adaptive's learning, the next offer), resets apart. Then ``adaptive`` with exploration off (what always
taking the first candidate nearly is) crawls the same seeds through ``CrawlEngine.run``, with no environment:
the difference is what the environment's offer costs a step. The topic's classifier is trained before timing;
each of the two keeps its own memo of page scores (``Classifiers(memoize=True)``, as the environment and bench
do), so neither scores a page the other did for it.
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("web")
    parser.add_argument("--topic", default="subject.Science.Physics")
    parser.add_argument("--budget", type=int, default=1000)
    parser.add_argument("--candidates", type=int, default=8)
    parser.add_argument("--episodes", type=int, default=5)
    args = parser.parse_args()

    import gymnasium

    import focuscrawl.gym  # noqa: F401
    from focuscrawl.builder import Classifiers, build_crawl
    from focuscrawl.config import RunSettings

    env = gymnasium.make("focuscrawl/Crawl-v0", web=args.web, topic=args.topic, budget=args.budget,
                         candidates=args.candidates)
    inner = env.unwrapped
    env.reset(options={"run": 0})  # trains the classifier, outside the timing
    rng = np.random.default_rng(0)
    steps, step_s, reset_s = 0, 0.0, 0.0
    for run in range(args.episodes):
        started = time.perf_counter()
        env.reset(options={"run": run})
        reset_s += time.perf_counter() - started
        done = False
        while not done:
            action = int(rng.integers(args.candidates))
            started = time.perf_counter()
            _, _, terminated, truncated, _ = env.step(action)
            step_s += time.perf_counter() - started
            steps += 1
            done = terminated or truncated
    print(f"environment: {steps} steps in {step_s:.2f}s: {steps / step_s:,.0f} steps/s "
          f"({1000 * step_s / steps:.2f} ms a step; resets {1000 * reset_s / args.episodes:.0f} ms each)")

    reward_model = "tfidf"
    classifiers = Classifiers(inner.topic.inputs, trained={reward_model: inner.classifiers.get(reward_model)},
                              memoize=True)
    pages, run_s = 0, 0.0
    for run in range(args.episodes):
        settings = RunSettings(budget=args.budget, seed=run, reward_model=reward_model,
                               options={"adaptive": {"explore": 0.0}})
        crawl = build_crawl(settings, "adaptive", inner.topic.inputs, inner.topic.seeds_for_run(run, 1),
                            classifiers=classifiers, judge=inner.topic.truth.credit_once())
        started = time.perf_counter()
        pages += crawl.engine.run(inner.web).steps
        run_s += time.perf_counter() - started
    print(f"engine alone (adaptive, explore 0): {pages} pages in {run_s:.2f}s: {pages / run_s:,.0f} pages/s "
          f"({1000 * run_s / pages:.2f} ms a page)")
    env.close()


if __name__ == "__main__":
    main()
