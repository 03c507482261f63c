"""The frontier code strategy families share: the ranking's argmax under lazy invalidation, a link's context."""

from __future__ import annotations

import numpy as np

from focuscrawl.strategies.frontier.graph import CrawlGraph
from focuscrawl.strategies.frontier.link_context import anchor_windows
from focuscrawl.strategies.frontier.ranking import KEEP_FRACTION, Ranking


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
