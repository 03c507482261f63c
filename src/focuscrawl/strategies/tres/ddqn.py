"""Double DQN for TRES (journal 2.4.2): online and target MLPs, experience replay, the double-Q target.

For a replayed transition (x(s_t, a_t), r_{t+1}, A~_{t+1}) the target is::

    y_t = r_{t+1} + gamma * Q_target( argmax_{a' in A~_{t+1}} Q_online(a') )

A~_{t+1} is the paper's approximation of the next state's action set: the outlinks of the page fetched at
t+1 plus the action Tree-Frontier returned at t+1 (the agent appends the latter when it selects). Each
transition stores those candidate feature rows, capped at ``max_next`` rows by a seeded uniform subsample
so that the replay's memory stays bounded on pages with thousands of links. An empty A~ (a dead end and an
exhausted frontier) gives y = r.

The networks are standard two-hidden-layer MLPs (the authors' code: 30 and 15 units, leaky ReLU); the loss is
the squared TD error of the paper with gradient-norm clipping at 1 (the authors clip too). They are NumPy with
a hand-written backward pass (see ``QNetwork``): the inputs have 6-8 features, so a forward pass over a few
thousand leaf representatives, or a training step on 64 transitions, is a couple of small matrix products.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class DDQNConfig:
    lr: float = 1e-3
    gamma: float = 0.3          # the paper argues for a myopic agent (2.7.3: "for example 0.3")
    batch_size: int = 64
    target_sync: int = 100      # steps between copies of the online weights into the target network
    replay_size: int = 20_000
    train_every: int = 1        # one gradient step every k crawl steps
    hidden1: int = 30
    hidden2: int = 15
    max_next: int = 64          # candidate rows kept per transition for the target's argmax


LEAK = 0.1  # leaky ReLU slope


def views_of(flat: np.ndarray, shapes: list[tuple[int, ...]]) -> list[np.ndarray]:
    """Consecutive views of ``flat`` with the given shapes (they share its memory)."""
    views, start = [], 0
    for shape in shapes:
        size = int(np.prod(shape))
        views.append(flat[start:start + size].reshape(shape))
        start += size
    return views


class QNetwork:
    """x -> Linear -> LeakyReLU -> Linear -> LeakyReLU -> Linear -> Q, with its own backward pass.

    Written in NumPy rather than torch: with 8 inputs and 30 + 15 hidden units, torch's per-operator
    dispatch and autograd bookkeeping cost ten times the arithmetic, and the policy's decision time is the
    point of TRES. Weights are initialised as torch's ``nn.Linear`` does (uniform in +-1/sqrt(fan_in)).
    """

    def __init__(self, n_features: int, hidden1: int, hidden2: int, rng: np.random.Generator):
        initial: list[np.ndarray] = []
        for fan_in, fan_out in ((n_features, hidden1), (hidden1, hidden2), (hidden2, 1)):
            bound = 1.0 / np.sqrt(fan_in)
            initial.append(rng.uniform(-bound, bound, (fan_in, fan_out)).astype(np.float32))
            initial.append(rng.uniform(-bound, bound, fan_out).astype(np.float32))
        # All weights live in one flat array and ``params`` are views into it: the optimiser and the target
        # copy then cost one NumPy call each instead of one per layer (a quarter of a training step was
        # per-array call overhead on these tiny layers).
        self.flat = np.concatenate([p.ravel() for p in initial])
        self.params = views_of(self.flat, [p.shape for p in initial])

    # Pickle (a checkpoint) copies each array on its own, so ``params`` would come back as copies that no longer
    # share ``flat``'s memory: the optimiser would train ``flat`` while ``forward`` read the checkpoint's frozen
    # weights, and a crawl resumed from a checkpoint would stop learning. Only ``flat`` is stored; the views
    # are made again from the stored shapes.
    def __getstate__(self) -> dict:
        return {"flat": self.flat, "shapes": [p.shape for p in self.params]}

    def __setstate__(self, state: dict) -> None:
        self.flat = state["flat"]
        self.params = views_of(self.flat, state["shapes"])

    def forward(self, x: np.ndarray) -> np.ndarray:
        w1, b1, w2, b2, w3, b3 = self.params
        h = x @ w1
        h += b1
        np.maximum(h, LEAK * h, out=h)  # leaky ReLU (0 < LEAK < 1), without a mask array
        h2 = h @ w2
        h2 += b2
        np.maximum(h2, LEAK * h2, out=h2)
        return (h2 @ w3 + b3)[:, 0]

    def loss_and_gradients(self, x: np.ndarray, y: np.ndarray) -> tuple[float, list[np.ndarray]]:
        """Mean squared error against ``y`` and its gradient with respect to every parameter."""
        w1, b1, w2, b2, w3, b3 = self.params
        z1 = x @ w1 + b1
        a1 = np.where(z1 > 0, z1, LEAK * z1)
        z2 = a1 @ w2 + b2
        a2 = np.where(z2 > 0, z2, LEAK * z2)
        error = (a2 @ w3 + b3)[:, 0] - y
        d_out = (2.0 / len(y)) * error[:, None]
        d_z2 = (d_out @ w3.T) * np.where(z2 > 0, 1.0, LEAK)
        d_z1 = (d_z2 @ w2.T) * np.where(z1 > 0, 1.0, LEAK)
        grads = [x.T @ d_z1, d_z1.sum(0), a1.T @ d_z2, d_z2.sum(0), a2.T @ d_out, d_out.sum(0)]
        return float(np.mean(error ** 2)), [g.astype(np.float32) for g in grads]

    def copy_from(self, other: QNetwork) -> None:
        self.flat[...] = other.flat


class Adam:
    """Adam (Kingma & Ba), in place on a list of arrays."""

    def __init__(self, params: list[np.ndarray], lr: float, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8):
        self.lr, (self.beta1, self.beta2), self.eps = lr, betas, eps
        self.m = [np.zeros_like(p) for p in params]
        self.v = [np.zeros_like(p) for p in params]
        self.t = 0

    def step(self, params: list[np.ndarray], grads: list[np.ndarray]) -> None:
        self.t += 1
        correction1 = 1 - self.beta1 ** self.t
        correction2 = 1 - self.beta2 ** self.t
        for p, g, m, v in zip(params, grads, self.m, self.v):
            m *= self.beta1
            m += (1 - self.beta1) * g
            v *= self.beta2
            v += (1 - self.beta2) * g * g
            p -= (self.lr / correction1) * m / (np.sqrt(v / correction2) + self.eps)


def clip_by_global_norm(grads: list[np.ndarray], max_norm: float) -> list[np.ndarray]:
    norm = float(np.sqrt(sum(float(np.sum(g * g)) for g in grads)))
    if norm <= max_norm:
        return grads
    scale = max_norm / (norm + 1e-6)
    return [g * scale for g in grads]


def online_argmax(q_online_next: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Row i of ``q_online_next`` (batch x width) holds ``counts[i]`` real candidates, then padding: the
    position of each row's first maximum among its real candidates (0 for an empty row)."""
    width = q_online_next.shape[1]
    masked = np.where(np.arange(width) < counts[:, None], q_online_next, -np.inf)
    return masked.argmax(axis=1)


def double_q_targets(rewards: np.ndarray, q_online_next: np.ndarray, q_target_next: np.ndarray,
                     counts: np.ndarray, gamma: float) -> np.ndarray:
    """y_i = r_i + gamma * q_target[i, argmax over the first counts[i] of q_online[i]]; counts[i] = 0 gives r_i.

    The argmax is the online network's, the value the target network's: that decoupling is what makes it
    *double* Q-learning. Ties go to the first candidate. (``DDQN.targets`` computes the same y, evaluating
    the target network only at the argmax rows.)
    """
    y = rewards.astype(np.float64).copy()
    best = online_argmax(q_online_next, counts)
    nonempty = np.flatnonzero(counts > 0)
    y[nonempty] += gamma * q_target_next[nonempty, best[nonempty]]
    return y


@dataclass
class ReplayBatch:
    index: np.ndarray       # ring positions of the transitions
    x: np.ndarray           # (batch, features): x(s_t, a_t)
    r: np.ndarray           # (batch,): r_{t+1}
    next_rows: np.ndarray   # (sum of counts, features): every transition's real candidate rows, in batch order
    counts: np.ndarray      # (batch,): candidate rows per transition (0 for an empty A~)


class ReplayBuffer:
    """A ring buffer of (x, r, next-candidate rows); one more next row may be appended to a transition.

    Next rows live in one (capacity, width, features) array with a count per transition: sampling a batch is
    then one gather of the real rows instead of concatenating 64 small arrays (that was a quarter of a
    training step). The array is allocated zeroed, so the OS commits its pages only as the ring fills.
    """

    def __init__(self, capacity: int, n_features: int, width: int):
        self.capacity, self.width = capacity, width
        self.x = np.zeros((capacity, n_features), dtype=np.float32)
        self.r = np.zeros(capacity, dtype=np.float32)
        self.next_rows = np.zeros((capacity, width, n_features), dtype=np.float32)
        self.next_count = np.zeros(capacity, dtype=np.int64)
        self.size = 0
        self.head = 0

    def __len__(self) -> int:
        return self.size

    def add(self, x: np.ndarray, reward: float, next_rows: np.ndarray | None = None) -> int:
        i = self.head
        n = 0 if next_rows is None else len(next_rows)
        if n > self.width:
            raise ValueError(f"{n} next rows for a replay of width {self.width}")
        self.x[i] = x
        self.r[i] = reward
        if n:
            self.next_rows[i, :n] = next_rows
        self.next_count[i] = n
        self.head = (self.head + 1) % self.capacity
        self.size = min(self.size + 1, self.capacity)
        return i

    def append_next(self, i: int, row: np.ndarray) -> None:
        n = int(self.next_count[i])
        if n < self.width:  # a transition gets one appended action per step; never more than one spare slot
            self.next_rows[i, n] = row
            self.next_count[i] = n + 1

    def sample(self, rng: np.random.Generator, batch: int) -> ReplayBatch:
        """A uniform batch; its next rows are gathered real rows only, transition after transition."""
        idx = rng.integers(self.size, size=batch)
        counts = self.next_count[idx]
        # Positions of the real rows in the flattened ring: gathering only those reads ~1/3 of the bytes a
        # padded (batch, width, features) copy would, and at 20,000 x 65 x 8 floats the ring is far out of cache.
        first = np.cumsum(counts) - counts  # where each transition's rows start in the gathered block
        flat = np.repeat(idx * self.width - first, counts) + np.arange(int(counts.sum()))
        rows = self.next_rows.reshape(-1, self.next_rows.shape[2])[flat]
        return ReplayBatch(idx, self.x[idx], self.r[idx], rows, counts)


class DDQN:
    """Online + target Q-networks and their training loop. ``q`` is the batched scorer the policy uses."""

    def __init__(self, n_features: int, config: DDQNConfig, seed: int):
        self.config = config
        self.online = QNetwork(n_features, config.hidden1, config.hidden2, np.random.default_rng([seed, 5]))
        self.target = QNetwork(n_features, config.hidden1, config.hidden2, np.random.default_rng([seed, 5]))
        self.target.copy_from(self.online)
        self.optimizer = Adam([self.online.flat], lr=config.lr)
        self.replay = ReplayBuffer(config.replay_size, n_features, config.max_next + 1)
        self.rng = np.random.default_rng([seed, 7])
        self.steps = 0
        self.updates = 0
        self.last_loss = float("nan")

    def q(self, X: np.ndarray) -> np.ndarray:
        return self.online.forward(np.asarray(X, dtype=np.float32))

    def cap_next(self, rows: np.ndarray) -> np.ndarray:
        if len(rows) <= self.config.max_next:
            return rows
        keep = np.sort(self.rng.choice(len(rows), self.config.max_next, replace=False))
        return rows[keep]

    def step(self) -> None:
        """Called once per crawl step: one gradient step every ``train_every``, target sync on schedule."""
        self.steps += 1
        if self.steps % self.config.train_every == 0 and len(self.replay) >= min(self.config.batch_size, 8):
            self.train_step()
        if self.steps % self.config.target_sync == 0:
            self.target.copy_from(self.online)

    def train_step(self) -> float:
        batch = self.replay.sample(self.rng, self.config.batch_size)
        loss, grads = self.online.loss_and_gradients(batch.x, self.targets(batch))
        # the authors clip gradients too; the squared TD error of the paper is the loss
        grads = clip_by_global_norm(grads, 1.0)
        self.optimizer.step([self.online.flat], [np.concatenate([g.ravel() for g in grads])])
        self.updates += 1
        self.last_loss = loss
        return loss

    def targets(self, batch: ReplayBatch) -> np.ndarray:
        """The double-Q targets y of ``double_q_targets``, with the target network evaluated only at the online
        argmax rows and the online network over all real candidate rows in one forward pass."""
        y = batch.r.astype(np.float32)
        nonempty = np.flatnonzero(batch.counts > 0)
        if nonempty.size:
            valid = np.arange(self.replay.width) < batch.counts[:, None]
            q_online = np.zeros(valid.shape, dtype=np.float32)
            q_online[valid] = self.online.forward(batch.next_rows)
            best = online_argmax(q_online, batch.counts)[nonempty]
            y[nonempty] += self.config.gamma * self.target.forward(self.replay.next_rows[batch.index[nonempty], best])
        return y


def epsilon_at(step: int, explore_steps: int, eps_start: float, eps_end: float, decay_steps: int) -> float:
    """The exploration schedule: fully random (Tree-Random) for the first ``explore_steps`` steps, while the
    replay fills (the authors' REPLAY_START_SIZE), then epsilon-greedy with epsilon decaying linearly from
    ``eps_start`` to ``eps_end`` over ``decay_steps`` steps."""
    if step < explore_steps:
        return 1.0
    if decay_steps <= 0:
        return eps_end
    fraction = min(1.0, (step - explore_steps) / decay_steps)
    return eps_start + (eps_end - eps_start) * fraction
