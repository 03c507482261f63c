"""The crawled graph G' of Gouriten et al. (Sec. 4): crawled nodes, their known out-edges, the frontier.

Nodes are URLs given dense integer ids on first sight, so that every per-node quantity (state, neighbourhood
sums, depth) is a numpy array indexed by id and estimators can score any set of nodes in one vectorised
expression. Arrays grow by doubling; estimators that keep their own per-node arrays register them with
``track`` so that they grow together. Only what is read for every frontier node is a row per node; what only
crawled nodes have (beta, S(u), children) is kept for them alone, and URL strings spill to disk
(``CrawlGraph``'s docstring has the bytes).

The first-level features of a frontier node v (Sec. 7.2, Estimator 4) are kept as running sums over its
parents P(v), updated only when a new parent of v is crawled, so a step costs O(outdegree):

    fl[v] = (|P(v)|, sum beta(u), sum alpha(u,v), sum beta(u) alpha(u,v))      for u in P(v)

The second-level features need, for each crawled u, S(u) = sums over u's *crawled* children w of
(beta(w), alpha(u,w), beta(w) alpha(u,w)); then sl[v] = sum of S(u) over u in P(v). Crawling w changes
S(u) for every parent u of w, hence sl of all of u's uncrawled children: O(indegree x outdegree) per
step, which is why the paper finds sl_ estimators costly (Table 5). They are only maintained when an
estimator asks for them.

``describe`` says one of these features of a node in words, with the sums a user can check against the
pages linking to it: what a selection's reason quotes (docs/interfaces.md, "Reasons").
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence

import numpy as np

from focuscrawl.compiled import compiled
from focuscrawl.strategies.frontier.spill import SPILL_AFTER, ParentColumn, UrlColumn
from focuscrawl.types import Link
from focuscrawl.urls import normalize_url

UNSEEN, FRONTIER, TAKEN, CRAWLED, DROPPED = 0, 1, 2, 3, 4  # TAKEN: selected, not yet observed
FAR = np.iinfo(np.int32).max
# the columns of ``features_of``, Sec. 7.2's names
FEATURES = ("fl-deg", "fl-n", "fl-e", "fl-ne", "sl-n", "sl-e", "sl-ne")


def fingerprint(url: str) -> int:
    """A URL's 64-bit fingerprint (BLAKE2b, so the same in every process), as a signed non-zero int64."""
    value = int.from_bytes(hashlib.blake2b(url.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little",
                           signed=True)
    return value or 1  # 0 marks an empty slot


class UrlIndex:
    """URL -> id by 64-bit fingerprint, in an open-addressing table of two numpy arrays (about 20 bytes a URL,
    against some 100 for a dict of strings). Two URLs share a fingerprint with probability about n^2 / 2^65: one
    in 370,000 for a crawl that meets 10 million URLs. The URL met second would then be taken for the first."""

    def __init__(self, slots: int = 1 << 11):
        self.keys = np.zeros(slots, np.int64)
        self.values = np.zeros(slots, np.int32)
        self.count = 0

    def __len__(self) -> int:
        return self.count

    def __getitem__(self, url: str) -> int:
        i = self.get(url)
        if i is None:
            raise KeyError(url)
        return i

    def __iter__(self):
        raise TypeError("a UrlIndex holds fingerprints, not URLs: iterate the graph's urls instead")

    def __contains__(self, url: str) -> bool:
        return self.get(url) is not None

    def _slot(self, fp: int) -> int:
        """The slot holding fingerprint ``fp``, or the empty slot where it would go (linear probing)."""
        keys, mask = self.keys, len(self.keys) - 1
        slot = fp & mask
        while True:
            key = keys.item(slot)
            if key == fp or key == 0:
                return slot
            slot = (slot + 1) & mask

    def get(self, url: str, default: int | None = None) -> int | None:
        fp = fingerprint(url)
        slot = self._slot(fp)
        return self.values.item(slot) if self.keys.item(slot) == fp else default

    def setdefault_many(self, urls: Sequence[str], first: int) -> tuple[np.ndarray, np.ndarray]:
        """The id of each of ``urls``, URL after URL: the id recorded for a URL in the index, else the next new
        id from ``first`` (recorded). Their ids and the mask of the new ones. As a URL-by-URL loop would: the
        table doubles whenever the next URL could take it past 70% full, so it holds the same keys in the same
        slots (``_setdefault_many`` is that loop, compiled, stopping where the table must double)."""
        fingerprints = np.fromiter(map(fingerprint, urls), np.int64, len(urls))
        ids, new = np.empty(len(urls), np.int64), np.zeros(len(urls), bool)
        done, following = 0, first
        while True:
            done, self.count, following = _setdefault_many(self.keys, self.values, fingerprints, ids, new, done,
                                                            self.count, following)
            if done == len(urls):
                return ids, new
            self._rehash(2 * len(self.keys))

    def _place(self, keys: np.ndarray, values: np.ndarray) -> None:
        # Linear probing for a batch: each key takes its slot if free; those that lost it (to an older key or to a
        # key of this batch) try the next slot.
        table, mask = self.keys, len(self.keys) - 1
        slots = keys & mask
        pending = np.arange(len(keys))
        while len(pending):
            s = slots[pending]
            free = table[s] == 0
            candidates, cs = pending[free], s[free]
            cs, first = np.unique(cs, return_index=True)
            won = candidates[first]
            table[cs] = keys[won]
            self.values[cs] = values[won]
            placed = np.zeros(len(keys), bool)
            placed[won] = True
            pending = pending[~placed[pending]]
            slots[pending] = (slots[pending] + 1) & mask

    def _rehash(self, slots: int) -> None:
        used = np.flatnonzero(self.keys)
        keys, values = self.keys[used], self.values[used]
        self.keys = np.zeros(slots, np.int64)
        self.values = np.zeros(slots, np.int32)
        self._place(keys, values)


@compiled
def _setdefault_many(keys, values, fingerprints, ids, new, start, count, following):
    """``UrlIndex.setdefault_many``'s loop from URL ``start``: linear probing in ``keys`` for each fingerprint;
    a known one's id from ``values``, else the id ``following`` (then the next), recorded in the first empty slot.
    Stops before a URL that could take the table past 70% full. Where it stopped, the count, the next new id."""
    mask = len(keys) - 1
    for k in range(start, len(fingerprints)):
        if 10 * (count + 1) > 7 * len(keys):
            return k, count, following
        fp = fingerprints[k]
        slot = fp & mask
        while keys[slot] != fp and keys[slot] != 0:
            slot = (slot + 1) & mask
        if keys[slot] == fp:
            ids[k] = values[slot]
        else:
            keys[slot], values[slot] = fp, following
            ids[k], new[k] = following, True
            following += 1
            count += 1
    return len(fingerprints), count, following


@compiled
def _first_level(fl, state, kids, alpha, beta):
    """``crawl``'s first level, as numpy did it: the kids not crawled and their alpha, and ``fl[open_kids] +=
    (1, beta, alpha, beta * alpha)``, each row's sums from the rows before the page (a kid linked twice gets its
    last link's row once: numpy's gather, add and scatter of a fancy-indexed ``+=``). Some ten numpy calls a page
    before, whose cost per call was most of the work on a page's few dozen links."""
    keep = np.empty(len(kids), np.bool_)
    count = 0
    for k in range(len(kids)):
        keep[k] = state[kids[k]] != CRAWLED
        count += keep[k]
    open_kids = np.empty(count, kids.dtype)
    open_alpha = np.empty(count, np.float64)
    rows = np.empty((count, 4), np.float64)
    j = 0
    for k in range(len(kids)):
        if keep[k]:
            v, a = kids[k], alpha[k]
            open_kids[j], open_alpha[j] = v, a
            rows[j, 0] = fl[v, 0] + 1.0
            rows[j, 1] = fl[v, 1] + beta
            rows[j, 2] = fl[v, 2] + a
            rows[j, 3] = fl[v, 3] + beta * a
            j += 1
    for j in range(count):
        for c in range(4):
            fl[open_kids[j], c] = rows[j, c]
    return open_kids, open_alpha


@compiled
def _add_to_open(sums, state, ids, delta, open_only):
    """``sums[ids] += delta`` for the ``ids`` in the frontier or taken (all of them unless ``open_only``), as
    numpy's fancy-indexed ``+=`` did it (an id given twice gets ``delta`` once); those ids, in order."""
    count = 0
    keep = np.empty(len(ids), np.bool_)
    for k in range(len(ids)):
        keep[k] = not open_only or state[ids[k]] == FRONTIER or state[ids[k]] == TAKEN
        count += keep[k]
    out = np.empty(count, ids.dtype)
    rows = np.empty((count, sums.shape[1]), sums.dtype)
    j = 0
    for k in range(len(ids)):
        if keep[k]:
            out[j] = ids[k]
            for c in range(sums.shape[1]):
                rows[j, c] = sums[ids[k], c] + delta[c]
            j += 1
    for j in range(count):
        for c in range(sums.shape[1]):
            sums[out[j], c] = rows[j, c]
    return out


@compiled
def _frontier_sorted(ordered, state):
    """``np.unique`` of sorted ``ordered``, the FRONTIER ones: each once. (The sort stays numpy's: numba's would
    add a second and a half of compiling to a first run.)"""
    out = np.empty(len(ordered), ordered.dtype)
    n = 0
    for k in range(len(ordered)):
        v = ordered[k]
        if (k == 0 or v != ordered[k - 1]) and state[v] == FRONTIER:
            out[n] = v
            n += 1
    return out[:n]


class CrawlGraph:
    """Per node: state, the first- and second-level sums (float64: exact running sums), host, frontier position,
    the head of its parent list and (``depth``) its depth: 73 to 77 bytes; the id index about 20 more. Per crawled
    node: beta, S(u) and its children (4 bytes a child). A node's parent edges and its URL string stay in RAM only
    until ``spill_after`` newer ones have come (``spill.ParentColumn``, ``spill.UrlColumn``). ``features_of`` smooths
    the sums when they are read, which the same ``log1p`` over the same values makes the same numbers as smoothing
    them when they change. Arrays are allocated zeroed (pages not yet written take no memory) and grow by
    doubling; rows a tracked array fills with something else than 0 are filled as their ids are made."""

    def __init__(self, *, second_level: bool = False, edges: bool = False, depth: bool = True,
                 capacity: int = 1024, spill_after: int = SPILL_AFTER):
        # ``edges``: the degrees and the edge list too (nr needs them); parents and children are kept for either.
        # ``depth``: each node's link distance from the seeds (bfs needs it).
        self.second_level = second_level
        self.edges = edges or second_level
        self.degrees = edges
        self.keeps_depth = depth
        self.capacity = capacity
        self.ids = UrlIndex()
        self.urls = UrlColumn(spill_after)
        self._tracked: list[tuple[object, str, float]] = []
        self.host_ids: dict[str, int] = {}
        self.host_names: list[str] = []
        self.beta: dict[int, float] = {}  # each crawled node's score
        for name, dtype, columns in self._rows():
            setattr(self, name, np.zeros((capacity, columns) if columns else capacity, dtype))
        self.n_front = 0
        self.parents = ParentColumn(spill_after)
        self.child_sums: dict[int, np.ndarray] = {}  # S(u), for crawled u
        self.children: dict[int, np.ndarray] = {}  # each crawled node's known out-edges' targets
        self._edge_src: list[np.ndarray] = []
        self._edge_dst: list[np.ndarray] = []

    def _rows(self) -> list[tuple[str, type, int]]:
        """The graph's own per-node arrays: name, dtype, columns (0: one)."""
        rows = [("state", np.int8, 0), ("fl", np.float64, 4), ("sl", np.float64, 3), ("host", np.int32, 0),
                ("_front", np.int32, 0), ("_pos", np.int32, 0)]
        if self.keeps_depth:
            rows.append(("depth", np.int32, 0))
        if self.edges:
            rows.append(("_parent_head", np.int32, 0))
        if self.degrees:
            # known in-edges (from crawled nodes), crawled targets included; out-edges of crawled nodes
            rows += [("indegree", np.float64, 0), ("outdegree", np.float64, 0)]
        return rows

    # -- ids and growth ------------------------------------------------------------------------
    def track(self, owner: object, attribute: str, fill: float = 0.0, *, columns: int = 0,
              dtype: type = np.float64) -> None:
        """Grow ``owner.attribute`` (a per-node numpy array, ``columns`` wide if not 0) with the graph; allocate
        it now. Rows of ids not made yet are 0; each new id's row is set to ``fill``."""
        setattr(owner, attribute, np.zeros((self.capacity, columns) if columns else self.capacity, dtype))
        self._tracked.append((owner, attribute, fill))

    def _grow(self, needed: int) -> None:
        new = self.capacity
        while new < needed:
            new *= 2

        def grown(array: np.ndarray) -> np.ndarray:
            out = np.zeros((new,) + array.shape[1:], dtype=array.dtype)
            out[: self.capacity] = array
            return out

        for name, _, _ in self._rows():
            setattr(self, name, grown(getattr(self, name)))
        for owner, attribute, _ in self._tracked:
            setattr(owner, attribute, grown(getattr(owner, attribute)))
        self.capacity = new

    def intern(self, urls: Sequence[str], hosts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Ids of ``urls`` (created as FRONTIER when unseen, in order) and the mask of those that were new."""
        column, host_ids = self.urls, self.host_ids
        ids, new = self.ids.setdefault_many(urls, len(column))
        made = np.flatnonzero(new)
        if len(made):
            made_ids = ids[made]
            if made_ids[-1] >= self.capacity:
                self._grow(int(made_ids[-1]) + 1)
            hids = []
            for k in made.tolist():
                column.append(urls[k])
                hid = host_ids.get(hosts[k])
                if hid is None:
                    hid = host_ids[hosts[k]] = len(host_ids)
                    self.host_names.append(hosts[k])
                hids.append(hid)
            self.host[made_ids] = hids
            self._enter_frontier_many(made_ids)
            if self.keeps_depth:
                self.depth[made_ids] = FAR
            for owner, attribute, fill in self._tracked:
                if fill != 0:
                    getattr(owner, attribute)[made_ids] = fill
            column.spill_if_due()
        return ids, new

    # -- the frontier --------------------------------------------------------------------------
    def _enter_frontier_many(self, ids: np.ndarray) -> None:
        """New ids join the frontier at its end, in order."""
        self.state[ids] = FRONTIER
        self._pos[ids] = np.arange(self.n_front, self.n_front + len(ids))
        self._front[self.n_front:self.n_front + len(ids)] = ids
        self.n_front += len(ids)

    def _leave_frontier(self, i: int, state: int) -> None:
        if self.state[i] == FRONTIER:
            p, last = self._pos[i], self._front[self.n_front - 1]
            self._front[p], self._pos[last] = last, p
            self._pos[i] = -1
            self.n_front -= 1
        self.state[i] = state

    def frontier(self) -> np.ndarray:
        return self._front[: self.n_front]

    def take(self, i: int) -> None:
        """The policy chose ``i``: it leaves the frontier (every ranking drops it lazily)."""
        self._leave_frontier(i, TAKEN)

    def crawled_targets(self, url: str, outlinks: Iterable[Link], kids: np.ndarray) -> tuple[np.ndarray, list[str]]:
        """The ids and anchors of ``url``'s outlinks to pages crawled already, other than ``kids`` (the links the
        engine handed over, which leave out crawled pages): the second-level sums need them too."""
        known = set(kids.tolist())
        ids, anchors = [], []
        w = self.ids.get(url)
        for link in outlinks:
            # Offline webs store normalised URLs: try the raw URL first, normalise only on a miss.
            i = self.ids.get(link.url)
            if i is None:
                normal = normalize_url(link.url)
                i = self.ids.get(normal) if normal else None
            if i is None or i == w or i in known or self.state[i] != CRAWLED:
                continue
            known.add(i)
            ids.append(i)
            anchors.append(link.anchor)
        return np.asarray(ids, np.int64), anchors

    def drop_host(self, host: str) -> None:
        """Every frontier URL of ``host`` leaves the frontier, in the order the URLs were first seen. A scan of the
        frontier (rather than a list of ids per host, about 36 bytes a URL): hosts are capped rarely."""
        hid = self.host_ids.get(host)
        if hid is None:
            return
        front = self.frontier()
        for i in np.sort(front[self.host[front] == hid]).tolist():
            self._leave_frontier(i, DROPPED)

    # -- crawling a node -----------------------------------------------------------------------
    def crawl(self, w: int, beta_w: float, kids: np.ndarray, alpha: np.ndarray,
              crawled_kids: np.ndarray, crawled_alpha: np.ndarray) -> np.ndarray:
        """Record the fetch of ``w``: its score and out-edges to uncrawled ``kids`` (alpha per edge) and to
        already ``crawled_kids``. Returns the frontier ids whose features changed."""
        self._leave_frontier(w, CRAWLED)
        self.beta[w] = beta_w
        # First level: w is a new parent of each of its uncrawled children.
        open_kids, alpha = _first_level(self.fl, self.state, kids, np.asarray(alpha, np.float64), float(beta_w))
        if self.keeps_depth:
            if self.depth[w] == FAR:
                self.depth[w] = 0
            self.depth[open_kids] = np.minimum(self.depth[open_kids], self.depth[w] + 1)
        changed = [open_kids]
        if self.edges:
            self.parents.add(self._parent_head, w, open_kids.tolist(), alpha)
            self.parents.spill_if_due()
            all_kids = np.concatenate([open_kids, crawled_kids])
            self.children[w] = all_kids.astype(np.int32)
            if self.degrees:
                self.indegree[open_kids] += 1
                self.indegree[crawled_kids] += 1
                self.outdegree[w] = len(open_kids) + len(crawled_kids)
                self._edge_src.append(np.full(len(all_kids), w, np.int64))
                self._edge_dst.append(all_kids)
        if self.second_level:
            changed.extend(self._second_level(w, beta_w, open_kids, crawled_kids, crawled_alpha))
        return self.frontier_among(changed)

    def frontier_among(self, parts: list[np.ndarray]) -> np.ndarray:
        """The FRONTIER ids of ``parts``: sorted and each once if there are several parts, else in the one
        part's order."""
        if len(parts) > 1:
            return _frontier_sorted(np.sort(np.concatenate(parts)), self.state)
        return parts[0][self.state[parts[0]] == FRONTIER]

    def betas(self, ids: np.ndarray) -> np.ndarray:
        """beta of each of ``ids``, 0 for a node not crawled."""
        beta = self.beta
        if len(ids) <= len(beta):
            return np.array([beta.get(i, 0.0) for i in ids.tolist()], dtype=np.float64)
        dense = np.zeros(self.capacity)  # many ids (nr's whole graph): through a dense copy
        dense[np.fromiter(beta.keys(), np.int64, len(beta))] = np.fromiter(beta.values(), np.float64, len(beta))
        return dense[ids]

    def parents_of(self, v: int) -> tuple[list[int], list[float]]:
        """The crawled parents of ``v`` and alpha of each edge, in the order they were crawled (``edges`` only)."""
        return self.parents.of(self._parent_head, v)

    def _second_level(self, w: int, beta_w: float, open_kids: np.ndarray, crawled_kids: np.ndarray,
                      crawled_alpha: np.ndarray) -> list[np.ndarray]:
        # w's own crawled children make S(w), which every uncrawled child of w now inherits.
        b = self.betas(crawled_kids)
        self.child_sums[w] = np.array([b.sum(), crawled_alpha.sum(), (b * crawled_alpha).sum()])
        _add_to_open(self.sl, self.state, open_kids, self.child_sums[w], False)
        changed = []
        # w is now a crawled child of each of its parents u: S(u) grows, and so does sl of u's other kids.
        for u, a in zip(*self.parents_of(w)):
            delta = np.array([beta_w, a, beta_w * a])
            self.child_sums[u] += delta
            changed.append(_add_to_open(self.sl, self.state, self.children[u], delta, True))
        return changed

    def features_of(self, ids: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """log(1 + [fl, sl]) of each node of ``ids``, in FEATURES order: what estimators read (Sec. 7.2). Into
        ``out`` (a len(ids) x 7 array, or view) if given."""
        if out is None:
            out = np.empty((len(ids), len(FEATURES)))
        # log1p in place on each gathered block: one temporary a block, not two (most of a re-rank's time)
        for sums, columns in ((self.fl, slice(0, 4)), (self.sl, slice(4, 7))):
            block = np.take(sums, ids, axis=0, mode="clip")
            out[:, columns] = np.log1p(block, out=block)
        return out

    def feature(self, ids: np.ndarray, column: int) -> np.ndarray:
        """Column ``column`` of ``features_of`` alone."""
        sums = self.fl if column < 4 else self.sl
        return np.log1p(sums[ids, column % 4 if column < 4 else column - 4])

    def describe(self, i: int, column: int) -> str:
        """Column ``column`` of ``features_of`` for node ``i`` in words: the running sum it smooths (beta is the
        pages' relevance, alpha how well the text around a link matches the topic), not its logarithm."""
        parents = int(self.fl[i, 0])
        if parents == 0:  # only seeds enter the frontier without a crawled parent
            return "a seed"
        pages = f"{parents} crawled page{'s' if parents > 1 else ''}"
        first, second = self.fl[i], self.sl[i]
        return (f"linked from {pages}",
                f"linked from {pages} of relevance {first[1]:.2f} in all",
                f"the text around its links on {pages} matches the topic ({first[2]:.2f} in all)",
                f"relevant pages link to it with on-topic text ({first[3]:.2f} over {pages})",
                f"the pages linking to it link to crawled pages of relevance {second[0]:.2f} in all",
                f"the pages linking to it link to crawled pages with on-topic text ({second[1]:.2f} in all)",
                f"the pages linking to it link to relevant crawled pages with on-topic text ({second[2]:.2f} in all)",
                )[column]

    def edge_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """All known edges (src crawled) as two id arrays (``edges`` only)."""
        if len(self._edge_src) > 1:  # compact the per-step chunks once in a while
            self._edge_src = [np.concatenate(self._edge_src)]
            self._edge_dst = [np.concatenate(self._edge_dst)]
        if not self._edge_src:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        return self._edge_src[0], self._edge_dst[0]
