"""The frontier code strategy families share: the ranking's argmax under lazy invalidation, a link's context."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from focuscrawl.strategies.frontier import graph as graph_module
from focuscrawl.strategies.frontier import ranking as ranking_module
from focuscrawl.strategies.frontier.graph import CrawlGraph
from focuscrawl.strategies.frontier.link_context import anchor_windows
from focuscrawl.strategies.frontier.ranking import KEEP_FRACTION, SAMPLE_STRIDE, Ranking, kth_smallest


def test_ranking_with_partial_heap_always_returns_the_argmax():
    graph = CrawlGraph()
    ids, _ = graph.intern([f"http://h/{i}" for i in range(200)], ["h"] * 200)
    values = np.random.default_rng(1).uniform(size=graph.capacity)
    ranking = Ranking(graph, lambda x: values[x], keep=8)
    ranking.rebuild()
    rng = np.random.default_rng(2)
    for step in range(150):
        if step % 7 == 0:  # scores of a few nodes change, as after a crawl
            changed = rng.choice(graph.frontier(), size=3, replace=False)
            values[changed] = rng.uniform(size=3)
            ranking.update(changed)
        best = ranking.best()
        frontier = graph.frontier()
        assert values[best] == values[frontier].max()
        graph.take(best)
    assert ranking.rebuilds > 1


def test_ranking_on_a_large_frontier_keeps_a_fraction_of_it_and_still_returns_the_argmax():
    graph = CrawlGraph()
    n = 60_000  # above KEEP_FRACTION * keep: the heap keeps 1% of the frontier, not 8 nodes
    graph.intern([f"http://h/{i}" for i in range(n)], ["h"] * n)
    values = np.random.default_rng(3).uniform(size=graph.capacity)
    ranking = Ranking(graph, lambda x: values[x], keep=8)
    ranking.rebuild()
    assert len(ranking.heap) == n // KEEP_FRACTION
    rng = np.random.default_rng(4)
    for step in range(300):
        if step % 5 == 0:
            changed = rng.choice(graph.frontier(), size=20, replace=False)
            values[changed] = rng.uniform(size=20)
            ranking.update(changed)
        best = ranking.best()
        assert values[best] == values[graph.frontier()].max()
        graph.take(best)
    assert ranking.rebuilds == 1, "300 selections do not exhaust a heap of 600"


def test_partial_heap_keeps_earliest_discovered_first_among_ties():
    graph = CrawlGraph()
    graph.intern([f"http://h/{i}" for i in range(100)], ["h"] * 100)
    values = np.zeros(graph.capacity)
    values[[40, 41]] = 2.0  # two clear winners, then 98 ties
    ranking = Ranking(graph, lambda x: values[x], keep=5)
    ranking.rebuild()
    order = []
    while (best := ranking.best()) is not None:
        order.append(best)
        graph.take(best)
    assert order == [40, 41] + [i for i in range(100) if i not in (40, 41)]


def test_anchor_windows_centre_successive_occurrences():
    text = "x" * 60 + "Owl" + "y" * 60 + "owl" + "z" * 60
    first, second, missing = anchor_windows(text, ["owl", "Owl", "hawk"], 20)
    assert first == "x" * 10 + "Owl" + "y" * 10 and second == "y" * 10 + "owl" + "z" * 10
    assert missing == "hawk"


def _brute_best(graph, values, ready, floor):
    """The argmax by (score, earliest id) of the eligible frontier nodes, else of all; None if the frontier is empty."""
    frontier = np.sort(graph.frontier())
    if len(frontier) == 0:
        return None
    eligible = [i for i in frontier.tolist() if ready(graph.host_names[graph.host[i]]) and values[i] >= floor]
    pool = np.array(eligible) if eligible else frontier
    top = values[pool].max()
    return int(pool[values[pool] == top].min())


@pytest.mark.parametrize("n,keep,floor", [(300, 8, -np.inf), (300, 8, 0.5),
                                          pytest.param(60_000, 8, 0.3, marks=pytest.mark.slow)])
def test_ranking_for_ready_hosts_returns_the_best_eligible_node_or_else_the_best_of_all(n, keep, floor):
    """A polite crawl asks for the best URL on a host it may fetch now (and scored ``floor`` or more); hosts move in
    and out of their delay, scores change, selections leave the frontier: the answer is always the brute-force
    one, ties to the earliest node, and a node whose host waits is taken once no eligible node is left."""
    graph = CrawlGraph()
    rng = np.random.default_rng(5)
    hosts = [f"h{k}" for k in rng.integers(0, 12, n)]
    graph.intern([f"http://{h}/{i}" for i, h in enumerate(hosts)], hosts)
    values = np.round(rng.uniform(size=graph.capacity), 2)  # rounded: ties
    ranking = Ranking(graph, lambda x: values[x], keep=keep)
    ranking.rebuild()
    resting: set[str] = set()
    steps = 400 if n < 1000 else 150
    for step in range(steps):
        if step % 7 == 0:
            changed = rng.choice(graph.frontier(), size=min(5, graph.n_front), replace=False)
            values[changed] = np.round(rng.uniform(size=len(changed)), 2)
            ranking.update(changed)
        if step % 3 == 0:  # some hosts enter their delay, others leave it
            resting = {f"h{k}" for k in rng.choice(12, size=int(rng.integers(0, 13)), replace=False)}
        if step % 50 == 49:
            ranking.rebuild()
        ready = (lambda host: host not in resting) if step % 10 else None  # one call in ten plain
        best = ranking.best(ready, floor) if ready else ranking.best()
        expected = _brute_best(graph, values, ready or (lambda host: True), floor if ready else -np.inf)
        assert best == expected, f"step {step}"
        if best is None:
            break
        graph.take(best)


def test_ranking_for_ready_hosts_digs_at_most_once_between_rebuilds_when_no_host_is_ready():
    """A crawl of one site: its host is never ready while a fetch is in flight. The ranking gives its best node and
    does not search the frontier again at every step."""
    graph = CrawlGraph()
    graph.intern([f"http://one/{i}" for i in range(5000)], ["one"] * 5000)
    values = np.random.default_rng(6).uniform(size=graph.capacity)
    ranking = Ranking(graph, lambda x: values[x], keep=8)
    ranking.rebuild()
    scored = 0

    def count(ids):
        nonlocal scored
        scored += len(ids)
        return values[ids]

    ranking.score = count
    for _ in range(100):
        best = ranking.best(lambda host: False, 0.0)
        assert values[best] == values[graph.frontier()].max()
        graph.take(best)
    assert scored <= 2 * 5000, "the frontier was searched again and again"


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), size=st.integers(1, 40_000), distinct=st.integers(1, 50_000),
       order=st.sampled_from(["random", "ascending", "descending"]), k_share=st.floats(0.0, 1.0))
def test_kth_smallest_is_a_whole_partitions_value(seed, size, distinct, order, k_share):
    # few distinct values (ties at the cut), sorted orders (a sample that misjudges the threshold), small and large k
    rng = np.random.default_rng(seed)
    values = np.round(rng.standard_normal(size) * distinct) / distinct
    if order != "random":
        values = np.sort(values)[::-1 if order == "descending" else 1].copy()
    k = 1 + int(k_share ** 6 * (size - 1))  # small k half the time: the sampled path
    assert kth_smallest(values, k) == np.partition(values, k - 1)[k - 1]


def test_kth_smallest_takes_the_sample_path_on_large_arrays():
    values = np.random.default_rng(0).standard_normal(SAMPLE_STRIDE * SAMPLE_STRIDE * 50)
    for k in (1, 7, 512, len(values) // 100):
        assert kth_smallest(values, k) == np.partition(values, k - 1)[k - 1]


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), nodes=st.integers(1, 60), links=st.integers(0, 80), parts=st.integers(1, 4))
def test_graph_kernels_do_what_numpy_did(seed, nodes, links, parts):
    # kids linked twice (numpy's fancy += adds the last link's row once), crawled kids left out, any states
    rng = np.random.default_rng(seed)
    state = rng.integers(0, 5, nodes).astype(np.int8)
    fl = rng.standard_normal((nodes, 4))
    kids = rng.integers(0, nodes, links)
    alpha, beta = rng.random(links), float(rng.random())
    expected = fl.copy()
    keep = state[kids] != graph_module.CRAWLED
    expected[kids[keep]] += np.column_stack([np.ones(keep.sum()), np.full(keep.sum(), beta), alpha[keep],
                                             beta * alpha[keep]])
    pieces = [rng.integers(0, nodes, rng.integers(0, 30)) for _ in range(parts)]
    unique = np.unique(np.concatenate(pieces))
    siblings, delta = kids.astype(np.int32), rng.standard_normal(3)  # children are kept as int32
    sl = rng.standard_normal((nodes, 3))
    open_siblings = siblings[(state[siblings] == graph_module.FRONTIER) | (state[siblings] == graph_module.TAKEN)]
    sl_open, sl_all = sl.copy(), sl.copy()
    sl_open[open_siblings] += delta
    sl_all[kids] += delta
    kernels = ("_first_level", "_frontier_sorted", "_add_to_open")
    for first_level, frontier_sorted, add_to_open in ([getattr(graph_module, k) for k in kernels],
                                                      [getattr(graph_module, k).py_func for k in kernels]):
        got = fl.copy()
        open_kids, open_alpha = first_level(got, state, kids, alpha, beta)
        assert np.array_equal(open_kids, kids[keep]) and np.array_equal(open_alpha, alpha[keep])
        assert np.array_equal(got, expected)  # bit for bit
        assert np.array_equal(frontier_sorted(np.sort(np.concatenate(pieces)), state),
                              unique[state[unique] == graph_module.FRONTIER])
        got_open, got_all = sl.copy(), sl.copy()
        assert np.array_equal(add_to_open(got_open, state, siblings, delta, True), open_siblings)
        assert np.array_equal(add_to_open(got_all, state, kids, delta, False), kids)
        assert np.array_equal(got_open, sl_open) and np.array_equal(got_all, sl_all)


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), size=st.integers(2, 300), distinct=st.integers(1, 20))
def test_the_best_key_above_a_cut_is_numpys(seed, size, distinct):
    # ties (few distinct values), infinities, any order of ids
    rng = np.random.default_rng(seed)
    neg = rng.integers(0, distinct, size).astype(np.float64)
    neg[rng.random(size) < 0.1] = np.inf
    ids = rng.permutation(10 * size)[:size]
    cut = float(np.sort(neg)[rng.integers(0, size - 1)])
    rest = np.flatnonzero(neg > cut)
    if not len(rest):
        return
    best = neg[rest].min()
    expected = (float(best), int(ids[rest[neg[rest] == best]].min()))
    for kernel in (ranking_module._smallest_key_above, ranking_module._smallest_key_above.py_func):
        value, i = kernel(neg, ids, cut)
        assert (float(value), int(i)) == expected
