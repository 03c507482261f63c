"""TRES's Double-DQN update on its own, and whether compiled code would make its target faster.

Fills a replay like a crawl's (20,000 transitions, 21 candidate rows each) and times, in a loop with
nothing else running between calls, a whole update (``DDQN.train_step``) and its biggest part, the
Double-DQN target (``DDQN.targets``: the online network over every candidate row of the 64 sampled
transitions, about 1,300 rows of 8 features, an argmax per transition, the target network at the argmax
rows, as batched NumPy matrix products). With numba installed it also times a numba kernel that loops over
rows (the natural compiled version) and checks that it gives the same targets. numba is not a dependency
of focuscrawl: install it for this experiment only.

    python -m benchmarks.ddqn_update
    pip install numba==0.68.1 && python -m benchmarks.ddqn_update
"""

from __future__ import annotations

import time

import numpy as np
from threadpoolctl import threadpool_limits

from focuscrawl.strategies.tres.ddqn import DDQN, LEAK, DDQNConfig

try:
    from numba import njit
except ImportError:  # the NumPy timings still run
    njit = None


def _jit(function):
    return njit(cache=False)(function) if njit is not None else function


@_jit
def _q(x, w1, b1, w2, b2, w3, b3, h1, h2):
    for j in range(w1.shape[1]):
        h1[j] = b1[j]
    for k in range(w1.shape[0]):
        for j in range(w1.shape[1]):
            h1[j] += x[k] * w1[k, j]
    for j in range(w1.shape[1]):
        if h1[j] < 0:
            h1[j] *= LEAK
    for j in range(w2.shape[1]):
        h2[j] = b2[j]
    for k in range(w2.shape[0]):
        for j in range(w2.shape[1]):
            h2[j] += h1[k] * w2[k, j]
    out = b3[0]
    for j in range(w2.shape[1]):
        out += (h2[j] if h2[j] > 0 else LEAK * h2[j]) * w3[j, 0]
    return out


@_jit
def _targets(index, r, next_rows, next_count, gamma, online, target):
    ow1, ob1, ow2, ob2, ow3, ob3 = online
    tw1, tb1, tw2, tb2, tw3, tb3 = target
    h1, h2 = np.empty(ow1.shape[1], np.float32), np.empty(ow2.shape[1], np.float32)
    y = np.empty(index.shape[0], np.float32)
    for i in range(index.shape[0]):
        t = index[i]
        y[i] = r[t]
        best, best_q = -1, -np.inf
        for j in range(next_count[t]):
            q = _q(next_rows[t, j], ow1, ob1, ow2, ob2, ow3, ob3, h1, h2)
            if q > best_q:
                best, best_q = j, q
        if best >= 0:
            y[i] += gamma * _q(next_rows[t, best], tw1, tb1, tw2, tb2, tw3, tb3, h1, h2)
    return y


def main(repeats: int = 3000) -> None:
    threadpool_limits(1)
    rng = np.random.default_rng(0)
    agent = DDQN(8, DDQNConfig(), seed=0)
    for _ in range(agent.config.replay_size):
        agent.replay.add(rng.random(8, dtype=np.float32), float(rng.random() < 0.3),
                         rng.random((21, 8), dtype=np.float32))
    agent.target.flat[:] = rng.normal(0, 0.3, agent.target.flat.size)
    batch = agent.replay.sample(agent.rng, agent.config.batch_size)
    replay = agent.replay
    args = (batch.index, replay.r, replay.next_rows, replay.next_count, np.float32(agent.config.gamma),
            tuple(agent.online.params), tuple(agent.target.params))
    contenders = [("DDQN.train_step", agent.train_step), ("DDQN.targets (NumPy)", lambda: agent.targets(batch))]
    if njit is not None:
        np.testing.assert_allclose(_targets(*args), agent.targets(batch), rtol=1e-5, atol=1e-6)  # compiles too
        contenders.append(("targets, numba row loop", lambda: _targets(*args)))
    print(f"batches of {agent.config.batch_size} transitions; the timed targets' batch has "
          f"{int(batch.counts.sum())} candidate rows")
    for name, run in contenders:
        started = time.perf_counter()
        for _ in range(repeats):
            run()
        print(f"{name:24s} {1e6 * (time.perf_counter() - started) / repeats:7.1f} us per call")
    if njit is None:
        print("numba not installed: no compiled comparison")


if __name__ == "__main__":
    main()
