"""The crawled graph G' of Gouriten et al. (Sec. 4): crawled nodes, their known out-edges, the frontier.

Nodes are URLs given dense integer ids on first sight, so that every per-node quantity (state, beta,
neighbourhood features, depth) is a numpy array indexed by id and estimators can score any set of nodes
in one vectorised expression. Arrays grow by doubling; estimators that keep their own per-node arrays
register them with ``track`` so that they grow together.

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

from collections.abc import Iterable

import numpy as np

from focuscrawl.types import Link
from focuscrawl.urls import normalize_url

UNSEEN, FRONTIER, TAKEN, CRAWLED, DROPPED = 0, 1, 2, 3, 4  # TAKEN: selected, not yet observed
FAR = np.iinfo(np.int32).max
FEATURES = ("fl-deg", "fl-n", "fl-e", "fl-ne", "sl-n", "sl-e", "sl-ne")  # the columns of ``features``, Sec. 7.2's names


class CrawlGraph:
    def __init__(self, *, second_level: bool = False, edges: bool = False, capacity: int = 1024):
        # ``edges``: remember parents/children lists and the edge list (sl_ features and nr need them).
        self.second_level = second_level
        self.edges = edges or second_level
        self.capacity = capacity
        self.ids: dict[str, int] = {}
        self.urls: list[str] = []
        self._tracked: list[tuple[object, str, float]] = []
        self.state = np.zeros(capacity, np.int8)
        self.beta = np.zeros(capacity)
        self.depth = np.full(capacity, FAR, np.int64)
        self.fl = np.zeros((capacity, 4))
        self.sl = np.zeros((capacity, 3))
        self.features = np.zeros((capacity, 7))  # log(1 + [fl, sl]): what estimators read (Sec. 7.2)
        self.child_sums = np.zeros((capacity, 3))  # S(u) for crawled u
        self.indegree = np.zeros(capacity)  # known in-edges (from crawled nodes), crawled targets included
        self.outdegree = np.zeros(capacity)  # known out-edges of crawled nodes to tracked nodes
        self._front = np.zeros(capacity, np.int64)  # frontier ids, swap-remove for O(1) removal/sampling
        self._pos = np.full(capacity, -1, np.int64)
        self.n_front = 0
        self.parents: list[list[int]] = []
        self.parent_alpha: list[list[float]] = []
        self.children: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._edge_src: list[np.ndarray] = []
        self._edge_dst: list[np.ndarray] = []
        self.by_host: dict[str, list[int]] = {}

    # -- ids and growth ------------------------------------------------------------------------
    def track(self, owner: object, attribute: str, fill: float = 0.0) -> None:
        """Grow ``owner.attribute`` (a per-node numpy array) with the graph; allocate it now."""
        setattr(owner, attribute, np.full(self.capacity, fill))
        self._tracked.append((owner, attribute, fill))

    def _grow(self, needed: int) -> None:
        new = self.capacity
        while new < needed:
            new *= 2

        def grown(array: np.ndarray, fill) -> np.ndarray:
            out = np.full((new,) + array.shape[1:], fill, dtype=array.dtype)
            out[: self.capacity] = array
            return out

        for name, fill in (("state", UNSEEN), ("beta", 0.0), ("depth", FAR), ("fl", 0.0), ("sl", 0.0),
                           ("features", 0.0),
                           ("child_sums", 0.0), ("indegree", 0.0), ("outdegree", 0.0), ("_front", 0),
                           ("_pos", -1)):
            setattr(self, name, grown(getattr(self, name), fill))
        for owner, attribute, fill in self._tracked:
            setattr(owner, attribute, grown(getattr(owner, attribute), fill))
        self.capacity = new

    def intern(self, urls: Iterable[str], hosts: Iterable[str]) -> tuple[np.ndarray, np.ndarray]:
        """Ids of ``urls`` (created as FRONTIER when unseen) and the mask of those that were new."""
        ids, new = [], []
        for url, host in zip(urls, hosts):
            i = self.ids.get(url)
            if i is None:
                i = len(self.urls)
                self.ids[url] = i
                self.urls.append(url)
                if i >= self.capacity:
                    self._grow(i + 1)
                if self.edges:
                    self.parents.append([])
                    self.parent_alpha.append([])
                self._enter_frontier(i)
                self.by_host.setdefault(host, []).append(i)
                new.append(True)
            else:
                new.append(False)
            ids.append(i)
        return np.asarray(ids, np.int64), np.asarray(new, bool)

    # -- the frontier --------------------------------------------------------------------------
    def _enter_frontier(self, i: int) -> None:
        self.state[i] = FRONTIER
        self._pos[i] = self.n_front
        self._front[self.n_front] = i
        self.n_front += 1

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
        w = self.ids[url]
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
        for i in self.by_host.pop(host, ()):
            if self.state[i] == FRONTIER:
                self._leave_frontier(i, DROPPED)

    # -- crawling a node -----------------------------------------------------------------------
    def crawl(self, w: int, beta_w: float, kids: np.ndarray, alpha: np.ndarray,
              crawled_kids: np.ndarray, crawled_alpha: np.ndarray) -> np.ndarray:
        """Record the fetch of ``w``: its score and out-edges to uncrawled ``kids`` (alpha per edge) and to
        already ``crawled_kids``. Returns the frontier ids whose features changed."""
        self._leave_frontier(w, CRAWLED)
        self.beta[w] = beta_w
        if self.depth[w] == FAR:
            self.depth[w] = 0
        open_kids = kids[self.state[kids] != CRAWLED]
        alpha = alpha[self.state[kids] != CRAWLED]
        # First level: w is a new parent of each of its uncrawled children.
        self.fl[open_kids] += np.column_stack([np.ones(len(open_kids)), np.full(len(open_kids), beta_w),
                                               alpha, beta_w * alpha])
        self.depth[open_kids] = np.minimum(self.depth[open_kids], self.depth[w] + 1)
        changed = [open_kids]
        if self.edges:
            self.indegree[open_kids] += 1
            self.indegree[crawled_kids] += 1
            self.outdegree[w] = len(open_kids) + len(crawled_kids)
            for v, a in zip(open_kids.tolist(), alpha.tolist()):
                self.parents[v].append(w)
                self.parent_alpha[v].append(a)
            all_kids = np.concatenate([open_kids, crawled_kids])
            self.children[w] = (all_kids, np.concatenate([alpha, crawled_alpha]))
            self._edge_src.append(np.full(len(all_kids), w, np.int64))
            self._edge_dst.append(all_kids)
        if self.second_level:
            changed.extend(self._second_level(w, beta_w, open_kids, crawled_kids, crawled_alpha))
        out = np.unique(np.concatenate(changed)) if len(changed) > 1 else changed[0]
        # Smooth once per change rather than once per read: a full re-rank then only gathers rows.
        self.features[out, :4] = np.log1p(self.fl[out])
        if self.second_level:
            self.features[out, 4:] = np.log1p(self.sl[out])
        return out[self.state[out] == FRONTIER]

    def _second_level(self, w: int, beta_w: float, open_kids: np.ndarray, crawled_kids: np.ndarray,
                      crawled_alpha: np.ndarray) -> list[np.ndarray]:
        # w's own crawled children make S(w), which every uncrawled child of w now inherits.
        b = self.beta[crawled_kids]
        self.child_sums[w] = (b.sum(), crawled_alpha.sum(), (b * crawled_alpha).sum())
        self.sl[open_kids] += self.child_sums[w]
        changed = []
        # w is now a crawled child of each of its parents u: S(u) grows, and so does sl of u's other kids.
        for u, a in zip(self.parents[w], self.parent_alpha[w]):
            delta = np.array([beta_w, a, beta_w * a])
            self.child_sums[u] += delta
            siblings = self.children[u][0]
            siblings = siblings[(self.state[siblings] == FRONTIER) | (self.state[siblings] == TAKEN)]
            self.sl[siblings] += delta
            changed.append(siblings)
        return changed

    def describe(self, i: int, column: int) -> str:
        """Column ``column`` of ``features`` for node ``i`` in words: the running sum it smooths (beta is the
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
        """All known edges (src crawled) as two id arrays."""
        if len(self._edge_src) > 1:  # compact the per-step chunks once in a while
            self._edge_src = [np.concatenate(self._edge_src)]
            self._edge_dst = [np.concatenate(self._edge_dst)]
        if not self._edge_src:
            return np.zeros(0, np.int64), np.zeros(0, np.int64)
        return self._edge_src[0], self._edge_dst[0]
