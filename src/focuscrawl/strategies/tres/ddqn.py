"""Double DQN for TRES (journal 2.4.2): online and target MLPs, experience replay, the double-Q target.

For a replayed transition (x(s_t, a_t), r_{t+1}, A~_{t+1}) the target is::

    y_t = r_{t+1} + gamma * Q_target( argmax_{a' in A~_{t+1}} Q_online(a') )

A~_{t+1} is the paper's approximation of the next state's action set: the outlinks of the page fetched at
t+1 plus the action Tree-Frontier returned at t+1 (the agent appends the latter when it selects). Each
transition stores those candidate feature rows, capped at ``max_next`` rows by a seeded uniform subsample
so that the replay's memory stays bounded on pages with thousands of links. An empty A~ (a dead end and an
exhausted frontier) gives y = r.

The networks are standard two-hidden-layer MLPs (the authors' code: 30 and 15 units, leaky ReLU); the loss is
the squared TD error of the paper with gradient-norm clipping at 1 (the authors clip too). Everything runs on
the CPU: the inputs have 6-8 features, so a forward pass over a few thousand leaf representatives is a
couple of small matrix products.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
from torch import nn


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


class QNetwork(nn.Module):
    def __init__(self, n_features: int, hidden1: int, hidden2: int):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(n_features, hidden1), nn.LeakyReLU(0.1),
            nn.Linear(hidden1, hidden2), nn.LeakyReLU(0.1),
            nn.Linear(hidden2, 1),
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x).squeeze(-1)


class Adam:
    """Adam (Kingma & Ba) in a few tensor ops. torch.optim would do, but its first use imports torch._dynamo,
    several seconds that would land in the first crawl's decision time."""

    def __init__(self, params, lr: float, betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8):
        self.params = [p for p in params if p.requires_grad]
        self.lr, (self.beta1, self.beta2), self.eps = lr, betas, eps
        self.m = [torch.zeros_like(p) for p in self.params]
        self.v = [torch.zeros_like(p) for p in self.params]
        self.t = 0

    def zero_grad(self) -> None:
        for p in self.params:
            p.grad = None

    @torch.no_grad()
    def step(self) -> None:
        self.t += 1
        correction1 = 1 - self.beta1 ** self.t
        correction2 = 1 - self.beta2 ** self.t
        for p, m, v in zip(self.params, self.m, self.v):
            if p.grad is None:
                continue
            m.mul_(self.beta1).add_(p.grad, alpha=1 - self.beta1)
            v.mul_(self.beta2).addcmul_(p.grad, p.grad, value=1 - self.beta2)
            denominator = (v / correction2).sqrt_().add_(self.eps)
            p.addcdiv_(m, denominator, value=-self.lr / correction1)


def segment_argmax(values: np.ndarray, offsets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For segments values[offsets[i]:offsets[i+1]]: the non-empty segments and the position of each one's
    first maximum (vectorised with reduceat: no Python loop over the batch)."""
    sizes = np.diff(offsets)
    nonempty = np.flatnonzero(sizes > 0)
    if nonempty.size == 0:
        return nonempty, nonempty
    starts = offsets[:-1][nonempty]
    seg_max = np.maximum.reduceat(values, starts)
    segment = np.repeat(np.arange(len(nonempty)), sizes[nonempty])
    positions = np.where(values == seg_max[segment], np.arange(len(values)), len(values))
    return nonempty, np.minimum.reduceat(positions, starts)


def double_q_targets(rewards: np.ndarray, q_online_next: np.ndarray, q_target_next: np.ndarray,
                     offsets: np.ndarray, gamma: float) -> np.ndarray:
    """y_i = r_i + gamma * q_target[argmax over segment i of q_online]; segment i is offsets[i]:offsets[i+1].

    The argmax is the online network's, the value the target network's: that decoupling is what makes it
    *double* Q-learning. Ties go to the first candidate. Empty segments give y_i = r_i.
    """
    y = rewards.astype(np.float64).copy()
    nonempty, first = segment_argmax(q_online_next, offsets)
    y[nonempty] += gamma * q_target_next[first]
    return y


class ReplayBuffer:
    """A ring buffer of (x, r, next-candidate rows); next rows may be appended to the newest transition."""

    def __init__(self, capacity: int, n_features: int):
        self.capacity = capacity
        self.x = np.zeros((capacity, n_features), dtype=np.float32)
        self.r = np.zeros(capacity, dtype=np.float32)
        self.next: list[np.ndarray | None] = [None] * capacity
        self.size = 0
        self.head = 0
        self.empty = np.zeros((0, n_features), dtype=np.float32)

    def __len__(self) -> int:
        return self.size

    def add(self, x: np.ndarray, reward: float, next_rows: np.ndarray | None = None) -> int:
        i = self.head
        self.x[i] = x
        self.r[i] = reward
        self.next[i] = self.empty if next_rows is None else next_rows
        self.head = (self.head + 1) % self.capacity
        self.size = min(self.size + 1, self.capacity)
        return i

    def append_next(self, i: int, row: np.ndarray) -> None:
        rows = self.next[i]
        self.next[i] = row[None, :] if rows is None or len(rows) == 0 else np.vstack([rows, row[None, :]])

    def sample(self, rng: np.random.Generator, batch: int):
        idx = rng.integers(self.size, size=batch)
        nexts = [self.next[i] for i in idx]
        offsets = np.zeros(batch + 1, dtype=np.int64)
        np.cumsum([len(n) for n in nexts], out=offsets[1:])
        stacked = np.concatenate(nexts) if offsets[-1] else self.empty
        return self.x[idx], self.r[idx], stacked, offsets


class DDQN:
    """Online + target Q-networks and their training loop. ``q`` is the batched scorer the policy uses."""

    def __init__(self, n_features: int, config: DDQNConfig, seed: int):
        torch.manual_seed(seed)
        self.config = config
        self.online = QNetwork(n_features, config.hidden1, config.hidden2)
        self.target = QNetwork(n_features, config.hidden1, config.hidden2)
        self.target.load_state_dict(self.online.state_dict())
        self.target.eval()
        self.optimizer = Adam(self.online.parameters(), lr=config.lr)
        self.replay = ReplayBuffer(config.replay_size, n_features)
        self.rng = np.random.default_rng([seed, 7])
        self.steps = 0
        self.updates = 0
        self.last_loss = float("nan")

    def q(self, X: np.ndarray) -> np.ndarray:
        with torch.inference_mode():
            return self.online(torch.from_numpy(np.ascontiguousarray(X, dtype=np.float32))).numpy()

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
            self.target.load_state_dict(self.online.state_dict())

    def train_step(self) -> float:
        x, r, next_rows, offsets = self.replay.sample(self.rng, self.config.batch_size)
        y = r.astype(np.float64)
        with torch.inference_mode():
            q_online_next = self.online(torch.from_numpy(next_rows)).numpy()
            nonempty, first = segment_argmax(q_online_next, offsets)
            # the target network is evaluated only at the online argmax rows (same y as double_q_targets)
            if nonempty.size:
                y[nonempty] += self.config.gamma * self.target(torch.from_numpy(next_rows[first])).numpy()
        prediction = self.online(torch.from_numpy(x))
        loss = nn.functional.mse_loss(prediction, torch.from_numpy(y.astype(np.float32)))
        self.optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(self.online.parameters(), 1.0)
        self.optimizer.step()
        self.updates += 1
        self.last_loss = float(loss.detach())
        return self.last_loss


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
