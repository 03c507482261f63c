"""Train Stable-Baselines3's DQN in ``focuscrawl/Crawl-v0`` on one topic and save it for ``gym-agent``.

    nice -n 10 python -m benchmarks.gym_dqn webs/wikispeedia --topic subject.Science.Physics \\
        --timesteps 50000 --out runs/gym/dqn-physics.zip
    focuscrawl bench --web webs/wikispeedia --topic subject.Religion --strategy gym-agent,adaptive,best-first \\
        -s options.gym-agent.model=runs/gym/dqn-physics.zip --out runs/gym/religion

A stock DQN (``MlpPolicy``, Stable-Baselines3's defaults) but for three settings a short run needs: the target
network is updated every 1,000 steps (the default, 10,000, would update it a handful of times), exploration
decays over the first 20% of the steps, and the replay buffer holds 100,000 steps. Episodes are crawls of the
topic (budget 1,000 unless told) from seeds drawn by the environment's seeded generator (``--seed``), none of
them a benchmark run's in particular. Every ``--report`` episodes it prints the mean of their returns (relevant
pages found, by the labels) and of their AUC (the relevant pages found so far, summed over the steps: what bench's
AUC counts, which rewards finding them early), each beside what always taking the first candidate (adaptive's
best) got on the same episodes' seeds, and saves the model at the end. Torch runs on one thread: the machine's
other core is the environment's.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np


def first_candidate(env, run: int) -> tuple[float, float]:
    """(return, AUC) of an episode from run ``run``'s seeds when the agent always takes adaptive's best URL."""
    env.reset(options={"run": run})
    total, auc, done = 0.0, 0.0, False
    while not done:
        _, reward, terminated, truncated, _ = env.step(0)
        total += reward
        auc += total
        done = terminated or truncated
    return total, auc


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("web", help="a labelled offline web directory, or 'embedded'")
    parser.add_argument("--topic", default="subject.Science.Physics")
    parser.add_argument("--budget", type=int, default=1000)
    parser.add_argument("--candidates", type=int, default=8)
    parser.add_argument("--timesteps", type=int, default=50_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--report", type=int, default=5, help="episodes per progress line")
    parser.add_argument("--out", required=True, help="where to save the model (.zip)")
    args = parser.parse_args()

    from focuscrawl.bench.protocol import TopicError
    from focuscrawl.extras import MissingExtra, require
    from focuscrawl.webs.store import WebFormatError

    try:
        require("stable_baselines3", "gym", "benchmarks.gym_dqn")
        import gymnasium
        import torch
        from stable_baselines3 import DQN
        from stable_baselines3.common.callbacks import BaseCallback

        import focuscrawl.gym  # noqa: F401  (registers the environment)

        env = gymnasium.make("focuscrawl/Crawl-v0", web=args.web, topic=args.topic, budget=args.budget,
                             candidates=args.candidates, seed=args.seed)
        baseline = gymnasium.make("focuscrawl/Crawl-v0", web=args.web, topic=args.topic, budget=args.budget,
                                  candidates=args.candidates, seed=args.seed)
    except (MissingExtra, TopicError, WebFormatError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    torch.set_num_threads(1)

    class Progress(BaseCallback):
        """Every ``--report`` episodes: their mean return and AUC, and the first candidate's on the same seeds."""

        def __init__(self):
            super().__init__()
            self.episodes: list[tuple[float, float]] = []  # (return, AUC) of each episode
            self.runs: list[int] = []  # each episode's run: its seeds, for the first candidate's figures
            self.found = self.auc = 0.0
            self.started = time.perf_counter()

        def _on_step(self) -> bool:
            self.found += float(self.locals["rewards"][0])
            self.auc += self.found
            if self.locals["dones"][0]:
                self.episodes.append((self.found, self.auc))
                self.runs.append(int(self.locals["infos"][0]["run"]))
                self.found = self.auc = 0.0
                if len(self.episodes) % args.report == 0:
                    agent = np.mean(self.episodes[-args.report:], axis=0)
                    first = np.mean([first_candidate(baseline, run) for run in self.runs[-args.report:]], axis=0)
                    print(f"{self.num_timesteps:>7} steps {len(self.episodes):>4} episodes: "
                          f"mean return {agent[0]:6.1f}, AUC {agent[1]:8.0f} (first candidate on the same seeds: "
                          f"{first[0]:6.1f}, {first[1]:8.0f}), {time.perf_counter() - self.started:5.0f}s", flush=True)
            return True

    progress = Progress()
    model = DQN("MlpPolicy", env, buffer_size=100_000, target_update_interval=1000, exploration_fraction=0.2,
                seed=args.seed, device="cpu", verbose=0)
    model.learn(total_timesteps=args.timesteps, callback=progress)
    model.save(args.out)
    print(f"saved {args.out}: {args.timesteps} steps, {len(progress.episodes)} episodes, "
          f"{time.perf_counter() - progress.started:.0f}s")
    env.close()
    baseline.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
