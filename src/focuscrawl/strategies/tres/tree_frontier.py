"""Tree-Frontier (journal 2.6, Algorithms 2 and 3): the frontier as an online binary regression tree.

Leaves hold two kinds of samples (state-action vectors x): *experience* samples, whose reward is known
(the URLs fetched so far, plus the seeds with reward 1), and *frontier* samples (the URLs still to fetch).
Only experience samples decide splits; frontier samples follow the same rules.

Growth (Algorithm 3, line 4). A new experience sample is routed to its leaf P and a split is tried in P
only. Candidate splits are (feature f, threshold c) with ``x[f] < c`` going left; the chosen one maximises
the weighted variance reduction of the rewards (equation 4)::

    VR(P, f, c) = V(P) - |L|/|P| V(L) - |R|/|P| V(R)

where V is the (population, 1/n) variance of the experience rewards of a node, so that VR >= 0 and VR = 0
exactly when the split tells nothing about the reward. No split is made unless VR > ``min_gain``; the
leaf must hold at least ``min_samples_split`` experience samples, each child ``min_samples_leaf``, and the
depth stays <= ``max_depth``: the authors' code uses 5 samples in the parent, no per-child minimum (1) and
depth 18, our defaults (until 0.1 we required 5 per child, which we had wrongly attributed to them). The
search sorts the leaf's n experience samples once per feature and scans prefix sums of r and r^2, so a split
attempt costs O(F n log n) with n the experience samples *of that leaf* (small: at most the number of
fetched pages), never a rescan of the frontier. Thresholds are midpoints between consecutive distinct
values. When a leaf splits, its frontier samples are partitioned with one vectorised comparison.

Storage. Frontier samples live in one growable feature matrix, addressed by a sample id (rows are recycled
through a free list, so memory follows the frontier size, not the number of URLs ever discovered). Each leaf
owns a block of one shared id pool, ``pool[start : start + size]`` with spare capacity that doubles when full
(the old block becomes garbage, reclaimed by an occasional compaction); ``leaf_of[id]`` and ``pos_of[id]``
locate a sample in its leaf, so removal is an O(1) swap-remove, and uniform sampling from a leaf is one
random index. Blocks rather than a list per leaf because Algorithm 2 draws from *every* leaf at every step:
with blocks that is three numpy gathers, with lists a Python-level pass over thousands of leaves that
dominated a decision at a million URLs. ``url -> id`` and
``host -> ids`` indexes make removing a fetched URL O(1) and removing a capped host O(its samples).

Features that change over time (the web-domain features of a host) are handled by ``update_host``: the new
values are written into the host's rows and those samples are re-routed from the root in one vectorised pass;
the ones whose leaf changed are swap-removed from the old leaf and appended to the new one. A sample is
therefore always in the leaf its *current* features route to, and experience samples (whose features are
the ones the agent actually acted on) are never rewritten.

Sampling (Algorithm 2): ``representatives`` returns one uniformly drawn frontier sample per non-empty leaf;
the agent scores them all in one batched network call. ``random_sample`` is Tree-Random's choice: a uniformly
random non-empty leaf, then a uniformly random sample in it. ``max_depth=0`` gives a single leaf, which the
synchronous (whole-frontier) variant uses as a plain indexed frontier.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# Up to this many rows are routed one by one in Python rather than level by level in numpy.
SMALL_BATCH = 64
# Slots a leaf's block starts with.
MIN_BLOCK = 8

class TreeFrontier:
    def __init__(self, n_features: int, rng: np.random.Generator, *, max_depth: int = 18,
                 min_samples_split: int = 5, min_samples_leaf: int = 1, min_gain: float = 0.0,
                 capacity: int = 1024):
        self.n_features = n_features
        self.rng = rng
        self.max_depth = max_depth
        self.min_samples_split = max(2, min_samples_split)
        self.min_samples_leaf = max(1, min_samples_leaf)
        self.min_gain = min_gain
        # Nodes: Python lists are the truth (single-sample routing walks them); numpy copies are rebuilt
        # lazily after a split for batch routing.
        self.node_feature: list[int] = [-1]
        self.node_threshold: list[float] = [0.0]
        self.node_left: list[int] = [-1]
        self.node_right: list[int] = [-1]
        self.node_depth: list[int] = [0]
        self._node_arrays: tuple[np.ndarray, ...] | None = None
        # The leaves, in creation order (= ascending node id), with their experience sample indexes.
        self.leaf_experience: dict[int, list[int]] = {0: []}
        self._leaf_ids: np.ndarray | None = None
        # Frontier sample ids per leaf: blocks of one pool, described per node id.
        self.pool = np.zeros(capacity, dtype=np.int64)
        self.pool_end = 0
        self.pool_garbage = 0
        self.leaf_start = np.zeros(64, dtype=np.int64)
        self.leaf_size = np.zeros(64, dtype=np.int64)
        self.leaf_cap = np.zeros(64, dtype=np.int64)
        self.leaf_start[0] = self._allocate(MIN_BLOCK)
        self.leaf_cap[0] = MIN_BLOCK
        # Frontier sample store.
        self.X = np.zeros((capacity, n_features), dtype=np.float32)
        self.leaf_of = np.full(capacity, -1, dtype=np.int32)
        self.pos_of = np.zeros(capacity, dtype=np.int64)
        self.payload = np.zeros(capacity, dtype=np.int32)  # the agent's own per-sample integer (parent page)
        self.host_of = np.zeros(capacity, dtype=np.int32)
        self.url_of: list[str | None] = [None] * capacity
        self.free: list[int] = list(range(capacity - 1, -1, -1))
        self.id_of_url: dict[str, int] = {}
        self.host_index: dict[str, int] = {}
        self.host_samples: list[set[int]] = []
        # Experience store.
        self.EX = np.zeros((256, n_features), dtype=np.float32)
        self.ER = np.zeros(256, dtype=np.float64)
        self.n_experience = 0
        self.splits = 0

    # -- sizes ----------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.id_of_url)

    def __contains__(self, url: str) -> bool:
        return url in self.id_of_url

    @property
    def n_leaves(self) -> int:
        return len(self.leaf_experience)

    def leaves(self) -> np.ndarray:
        """Node ids of the leaves, ascending (which is creation order)."""
        if self._leaf_ids is None:
            self._leaf_ids = np.fromiter(self.leaf_experience, dtype=np.int64, count=len(self.leaf_experience))
            self._leaf_ids.sort()
        return self._leaf_ids

    def members(self, leaf: int) -> np.ndarray:
        """The frontier sample ids of a leaf, in their in-leaf order (a copy)."""
        start = int(self.leaf_start[leaf])
        return self.pool[start:start + int(self.leaf_size[leaf])].copy()

    # -- the id pool ----------------------------------------------------------------------------
    def _allocate(self, cap: int) -> int:
        """Start of a fresh block of ``cap`` slots at the end of the pool (compacting or growing it first)."""
        if self.pool_end + cap > len(self.pool):
            if self.pool_garbage * 2 >= len(self.pool):
                self._compact()
            size = len(self.pool)
            while self.pool_end + cap > size:
                size *= 2
            if size > len(self.pool):
                self.pool = np.concatenate([self.pool, np.zeros(size - len(self.pool), dtype=np.int64)])
        start = self.pool_end
        self.pool_end += cap
        return start

    def _compact(self) -> None:
        """Copy the live blocks to a fresh pool, in leaf order, dropping garbage (amortised O(1) per slot)."""
        pool = np.zeros(len(self.pool), dtype=np.int64)
        offset = 0
        for leaf in self.leaves().tolist():
            start, size, cap = int(self.leaf_start[leaf]), int(self.leaf_size[leaf]), int(self.leaf_cap[leaf])
            pool[offset:offset + size] = self.pool[start:start + size]
            self.leaf_start[leaf] = offset
            offset += cap
        self.pool, self.pool_end, self.pool_garbage = pool, offset, 0

    def _append(self, leaf: int, i: int) -> None:
        size = int(self.leaf_size[leaf])
        if size == self.leaf_cap[leaf]:
            self._place(leaf, self.members(leaf), max(MIN_BLOCK, 2 * size))
        self.pool[self.leaf_start[leaf] + size] = i
        self.pos_of[i] = size
        self.leaf_size[leaf] = size + 1

    def _release(self, leaf: int) -> None:
        """Turn a leaf's block into garbage (its ids must have been copied out first)."""
        self.pool_garbage += int(self.leaf_cap[leaf])
        self.leaf_size[leaf] = self.leaf_cap[leaf] = 0

    def _place(self, leaf: int, ids: np.ndarray, cap: int) -> None:
        """Give a leaf a new block of ``cap`` slots holding ``ids``; its old block becomes garbage."""
        self._release(leaf)  # first, so that a compaction inside _allocate drops the old block
        start = self._allocate(cap)
        self.pool[start:start + len(ids)] = ids
        self.leaf_start[leaf], self.leaf_size[leaf], self.leaf_cap[leaf] = start, len(ids), cap

    # -- routing --------------------------------------------------------------------------------
    def route_one(self, x: np.ndarray) -> int:
        feature, threshold, left, right = self.node_feature, self.node_threshold, self.node_left, self.node_right
        node = 0
        while feature[node] >= 0:
            node = left[node] if x[feature[node]] < threshold[node] else right[node]
        return node

    def route(self, X: np.ndarray) -> np.ndarray:
        """Leaf of every row of X, descending all rows level by level (depth <= max_depth numpy passes)."""
        if len(X) <= SMALL_BATCH:
            # A page's outlinks: a plain descent per row costs less than ~20 numpy passes. Thresholds are
            # float32 values and so are the rows, so comparing them as Python floats decides the same.
            feature, threshold, left, right = self.node_feature, self.node_threshold, self.node_left, self.node_right
            leaves = []
            for x in X.tolist():
                node = 0
                while feature[node] >= 0:
                    node = left[node] if x[feature[node]] < threshold[node] else right[node]
                leaves.append(node)
            return np.array(leaves, dtype=np.int64)
        if self._node_arrays is None:
            self._node_arrays = (np.asarray(self.node_feature, dtype=np.int64),
                                 np.asarray(self.node_threshold, dtype=np.float32),
                                 np.asarray(self.node_left, dtype=np.int64),
                                 np.asarray(self.node_right, dtype=np.int64))
        feature, threshold, left, right = self._node_arrays
        node = np.zeros(len(X), dtype=np.int64)
        active = np.arange(len(X))
        while active.size:
            f = feature[node[active]]
            inner = f >= 0
            active, f = active[inner], f[inner]
            if not active.size:
                break
            here = node[active]
            go_left = X[active, f] < threshold[here]
            node[active] = np.where(go_left, left[here], right[here])
        return node

    # -- frontier samples -----------------------------------------------------------------------
    def _grow(self) -> None:
        old = len(self.leaf_of)
        new = old * 2
        self.X = np.concatenate([self.X, np.zeros((old, self.n_features), dtype=np.float32)])
        self.leaf_of = np.concatenate([self.leaf_of, np.full(old, -1, dtype=np.int32)])
        self.pos_of = np.concatenate([self.pos_of, np.zeros(old, dtype=np.int64)])
        self.payload = np.concatenate([self.payload, np.zeros(old, dtype=np.int32)])
        self.host_of = np.concatenate([self.host_of, np.zeros(old, dtype=np.int32)])
        self.url_of.extend([None] * old)
        self.free.extend(range(new - 1, old - 1, -1))

    def _host_id(self, host: str) -> int:
        hid = self.host_index.get(host)
        if hid is None:
            hid = self.host_index[host] = len(self.host_samples)
            self.host_samples.append(set())
        return hid

    def add(self, urls: Sequence[str], X: np.ndarray, hosts: Sequence[str], payload: Sequence[int]) -> None:
        """Insert new frontier samples (URLs not already in the frontier), routing them all at once."""
        n = len(urls)
        if n == 0:
            return
        while len(self.free) < n:
            self._grow()
        taken = self.free[-n:]
        del self.free[-n:]
        id_list = taken[::-1]  # the order the free list would pop them in
        ids = np.array(id_list, dtype=np.int64)
        self.X[ids] = X
        self.payload[ids] = payload
        leaves = self.route(X)
        self.leaf_of[ids] = leaves
        # Append per leaf, not per sample: a page's outlinks share their state features and land in a few
        # leaves. Within a leaf the order is the arrival order, as with one append at a time.
        for leaf in dict.fromkeys(leaves.tolist()):
            members = ids[leaves == leaf]
            size, cap = int(self.leaf_size[leaf]), int(self.leaf_cap[leaf])
            need = size + len(members)
            if need > cap:
                while cap < need:
                    cap = max(MIN_BLOCK, 2 * cap)
                self._place(leaf, self.members(leaf), cap)
            start = int(self.leaf_start[leaf])
            self.pool[start + size:start + need] = members
            self.pos_of[members] = np.arange(size, need)
            self.leaf_size[leaf] = need
        host_ids = []
        for i, url, host in zip(id_list, urls, hosts):
            self.url_of[i] = url
            self.id_of_url[url] = i
            hid = self._host_id(host)
            host_ids.append(hid)
            self.host_samples[hid].add(i)
        self.host_of[ids] = host_ids

    def _detach(self, i: int) -> None:
        """Swap-remove sample i from its leaf's block (O(1))."""
        leaf = int(self.leaf_of[i])
        start, last_position = int(self.leaf_start[leaf]), int(self.leaf_size[leaf]) - 1
        last = int(self.pool[start + last_position])
        if last != i:
            position = int(self.pos_of[i])
            self.pool[start + position] = last
            self.pos_of[last] = position
        self.leaf_size[leaf] = last_position

    def _remove_id(self, i: int) -> None:
        self._detach(i)
        self.leaf_of[i] = -1
        del self.id_of_url[self.url_of[i]]
        self.url_of[i] = None
        self.host_samples[int(self.host_of[i])].discard(i)
        self.free.append(i)

    def remove(self, url: str) -> bool:
        i = self.id_of_url.get(url)
        if i is None:
            return False
        self._remove_id(i)
        return True

    def remove_host(self, host: str) -> int:
        hid = self.host_index.get(host)
        if hid is None:
            return 0
        # sorted: a set's order depends on its history, and a set restored from a checkpoint has another one
        ids = sorted(self.host_samples[hid])
        for i in ids:
            self._remove_id(i)
        return len(ids)

    def pop(self, i: int) -> tuple[str, np.ndarray, int]:
        """Remove sample i and return its URL, feature vector (a copy) and payload."""
        url, x, payload = self.url_of[i], self.X[i].copy(), int(self.payload[i])
        self._remove_id(i)
        return url, x, payload

    def get(self, url: str) -> int | None:
        return self.id_of_url.get(url)

    def update_host(self, host: str, columns: slice, values: Sequence[float]) -> int:
        """Rewrite time-dependent features of all of a host's frontier samples and re-route them.

        Returns how many samples moved to another leaf.
        """
        hid = self.host_index.get(host)
        if hid is None or not self.host_samples[hid]:
            return 0
        ids = np.fromiter(self.host_samples[hid], dtype=np.int64, count=len(self.host_samples[hid]))
        ids.sort()  # set order depends on hashing history; sorting keeps runs reproducible
        self.X[ids, columns] = values
        new_leaves = self.route(self.X[ids])
        moved = ids[new_leaves != self.leaf_of[ids]]
        for i, leaf in zip(moved.tolist(), new_leaves[new_leaves != self.leaf_of[ids]].tolist()):
            self._detach(i)
            self._append(leaf, i)
            self.leaf_of[i] = leaf
        return len(moved)

    # -- experience samples and splits ----------------------------------------------------------
    def add_experience(self, x: np.ndarray, reward: float) -> bool:
        """Algorithm 3 lines 3-4: store (x, r) in its leaf, then try to split that leaf. True if it split."""
        if self.n_experience == len(self.ER):
            self.EX = np.concatenate([self.EX, np.zeros_like(self.EX)])
            self.ER = np.concatenate([self.ER, np.zeros_like(self.ER)])
        e = self.n_experience
        self.EX[e] = x
        self.ER[e] = reward
        self.n_experience += 1
        leaf = self.route_one(self.EX[e])
        self.leaf_experience[leaf].append(e)
        return self.try_split(leaf)

    def best_split(self, leaf: int) -> tuple[float, int, float]:
        """(VR, feature, threshold) of the best admissible split of a leaf; VR = 0.0 and feature -1 if none."""
        experience = self.leaf_experience[leaf]
        n, m = len(experience), self.min_samples_leaf
        if n < max(self.min_samples_split, 2 * m) or self.node_depth[leaf] >= self.max_depth:
            return 0.0, -1, 0.0
        X = self.EX[experience]
        r = self.ER[experience]
        order = np.argsort(X, axis=0, kind="stable")
        xs = np.take_along_axis(X, order, axis=0)
        rs = r[order]
        s1 = np.cumsum(rs, axis=0)[:-1]           # left sums for left sizes 1..n-1
        s2 = np.cumsum(rs * rs, axis=0)[:-1]
        k = np.arange(1, n, dtype=np.float64)[:, None]
        total1, total2 = r.sum(), (r * r).sum()
        sse_left = s2 - s1 * s1 / k               # n_L * V(L)
        sse_right = (total2 - s2) - (total1 - s1) ** 2 / (n - k)
        parent_var = total2 / n - (total1 / n) ** 2
        gain = parent_var - (sse_left + sse_right) / n
        valid = (xs[:-1] < xs[1:]) & (k >= m) & (n - k >= m)
        gain = np.where(valid, gain, -np.inf)
        flat = int(np.argmax(gain))
        row, feature = divmod(flat, gain.shape[1])
        best = float(gain[row, feature])
        if not np.isfinite(best):
            return 0.0, -1, 0.0
        threshold = float((np.float64(xs[row, feature]) + np.float64(xs[row + 1, feature])) / 2.0)
        # float32 storage: make sure the midpoint still separates the two values after rounding
        if not (np.float32(xs[row, feature]) < np.float32(threshold) <= np.float32(xs[row + 1, feature])):
            threshold = float(xs[row + 1, feature])
        return best, feature, threshold

    def try_split(self, leaf: int) -> bool:
        gain, feature, threshold = self.best_split(leaf)
        if feature < 0 or gain <= self.min_gain:
            return False
        self.split(leaf, feature, threshold)
        return True

    def split(self, leaf: int, feature: int, threshold: float) -> tuple[int, int]:
        """Turn a leaf into an inner node ``x[feature] < threshold``; partition both kinds of samples."""
        left, right = len(self.node_feature), len(self.node_feature) + 1
        depth = self.node_depth[leaf] + 1
        for _ in range(2):
            self.node_feature.append(-1)
            self.node_threshold.append(0.0)
            self.node_left.append(-1)
            self.node_right.append(-1)
            self.node_depth.append(depth)
        self.node_feature[leaf] = feature
        self.node_threshold[leaf] = float(np.float32(threshold))
        self.node_left[leaf], self.node_right[leaf] = left, right
        self._node_arrays = None
        if right >= len(self.leaf_start):
            grow = len(self.leaf_start)
            self.leaf_start, self.leaf_size, self.leaf_cap = (np.concatenate([a, np.zeros(grow, dtype=np.int64)])
                                                              for a in (self.leaf_start, self.leaf_size, self.leaf_cap))
        experience = np.asarray(self.leaf_experience.pop(leaf), dtype=np.int64)
        goes_left = self.EX[experience, feature] < np.float32(threshold)
        self.leaf_experience[left] = experience[goes_left].tolist()
        self.leaf_experience[right] = experience[~goes_left].tolist()
        ids = self.members(leaf)
        self._release(leaf)
        self._leaf_ids = None
        goes_left = self.X[ids, feature] < np.float32(threshold)
        for child, members in ((left, ids[goes_left]), (right, ids[~goes_left])):
            self.leaf_of[members] = child
            self.pos_of[members] = np.arange(len(members))
            self._place(child, members, max(MIN_BLOCK, 2 * len(members)))
        self.splits += 1
        return left, right

    # -- sampling (Algorithm 2) -----------------------------------------------------------------
    def representatives(self) -> np.ndarray:
        """One uniformly drawn frontier sample id per non-empty leaf (leaf order is creation order)."""
        leaves = self.leaves()
        sizes = self.leaf_size[leaves]
        nonempty = sizes > 0
        if not nonempty.all():
            leaves, sizes = leaves[nonempty], sizes[nonempty]
        if not leaves.size:
            return np.zeros(0, dtype=np.int64)
        picks = (self.rng.random(len(leaves)) * sizes).astype(np.int64)  # floor(u * size)
        return self.pool[self.leaf_start[leaves] + picks]

    def random_sample(self) -> int | None:
        """Tree-Random: a uniformly random non-empty leaf, then a uniformly random sample in it."""
        leaves = self.leaves()
        leaves = leaves[self.leaf_size[leaves] > 0]
        if not leaves.size:
            return None
        leaf = int(leaves[int(self.rng.integers(len(leaves)))])
        return int(self.pool[self.leaf_start[leaf] + int(self.rng.integers(int(self.leaf_size[leaf])))])

    def all_samples(self) -> np.ndarray:
        """Every frontier sample id (the synchronous method scores them all)."""
        return np.concatenate([self.members(leaf) for leaf in self.leaves().tolist()])

    def check(self) -> None:
        """Consistency of every index (for tests): leaf lists, positions, url and host maps agree."""
        seen = 0
        assert 0 <= self.pool_garbage <= self.pool_end <= len(self.pool)
        blocks = sorted((int(self.leaf_start[leaf]), int(self.leaf_cap[leaf])) for leaf in self.leaves().tolist())
        assert all(s1 + c1 <= s2 for (s1, c1), (s2, _) in zip(blocks, blocks[1:])), "overlapping leaf blocks"
        for leaf in self.leaves().tolist():
            assert self.node_feature[leaf] < 0, "samples stored in an inner node"
            assert self.leaf_size[leaf] <= self.leaf_cap[leaf]
            for position, i in enumerate(self.members(leaf).tolist()):
                assert self.leaf_of[i] == leaf and self.pos_of[i] == position
                assert self.id_of_url[self.url_of[i]] == i
                assert self.route_one(self.X[i]) == leaf, "sample not in the leaf its features route to"
                seen += 1
        assert seen == len(self.id_of_url) == sum(len(s) for s in self.host_samples)
        assert sum(len(e) for e in self.leaf_experience.values()) == self.n_experience
