"""The frontier's URL index and ``CrawlGraph.intern`` take a page's URLs in one compiled pass
(``UrlIndex.setdefault_many``): the same ids, the same table (keys in the same slots, doubled at the same URL)
and the same graph rows as the URL-by-URL code they replace, kept here as the definition."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from focuscrawl.strategies.frontier import graph as graph_module
from focuscrawl.strategies.frontier.graph import FRONTIER, CrawlGraph, UrlIndex, fingerprint


class UrlByUrl(UrlIndex):
    """The index as it was: one URL at a time."""

    def setdefault(self, url: str, i: int) -> int:
        if 10 * (self.count + 1) > 7 * len(self.keys):
            self._rehash(2 * len(self.keys))
        fp = fingerprint(url)
        slot = self._slot(fp)
        if self.keys.item(slot) == fp:
            return self.values.item(slot)
        self.keys[slot] = fp
        self.values[slot] = i
        self.count += 1
        return i


def intern_url_by_url(graph: CrawlGraph, urls: list[str], hosts: list[str]) -> tuple[np.ndarray, np.ndarray]:
    """``CrawlGraph.intern`` as it was (its index a ``UrlByUrl``)."""
    ids, new, made = [], [], []
    index, column = graph.ids, graph.urls
    for url, host in zip(urls, hosts):
        i = index.setdefault(url, len(column))
        if i == len(column):
            column.append(url)
            if i >= graph.capacity:
                graph._grow(i + 1)
            graph.state[i] = FRONTIER
            graph._pos[i] = graph.n_front
            graph._front[graph.n_front] = i
            graph.n_front += 1
            hid = graph.host_ids.get(host)
            if hid is None:
                hid = graph.host_ids[host] = len(graph.host_ids)
                graph.host_names.append(host)
            graph.host[i] = hid
            made.append(i)
            new.append(True)
        else:
            new.append(False)
        ids.append(i)
    if made:
        made_ids = np.asarray(made, np.int64)
        if graph.keeps_depth:
            graph.depth[made_ids] = graph_module.FAR
        for owner, attribute, fill in graph._tracked:
            if fill != 0:
                getattr(owner, attribute)[made_ids] = fill
        column.spill_if_due()
    return np.asarray(ids, np.int64), np.asarray(new, bool)


class Owner:
    """Something that tracks a per-node array, filled for new ids."""


url = st.builds(lambda host, page: f"http://h{host}.test/p{page}", st.integers(0, 9), st.integers(0, 300))
pages = st.lists(st.lists(url, max_size=60), max_size=30)


@pytest.fixture(params=["compiled", "python"])
def as_python(request, monkeypatch) -> bool:
    """Each test twice: with the compiled loop, and with the same loop run as Python (a machine without numba)."""
    if request.param == "python":
        monkeypatch.setattr(graph_module, "_setdefault_many", graph_module._setdefault_many.py_func)
    return request.param == "python"


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pages=pages)
def test_intern_gives_the_ids_table_and_rows_of_url_by_url(as_python, pages):
    batched, reference = CrawlGraph(capacity=4, spill_after=50), CrawlGraph(capacity=4, spill_after=50)
    batched.ids, reference.ids = UrlIndex(slots=8), UrlByUrl(slots=8)  # small: the tables double as URLs come
    owners = Owner(), Owner()
    for graph, owner in zip((batched, reference), owners):
        graph.track(owner, "prior", 0.5)
    for urls in pages:
        hosts = [u.split("/")[2] for u in urls]
        ids, new = batched.intern(urls, hosts)
        expected_ids, expected_new = intern_url_by_url(reference, urls, hosts)
        assert ids.tolist() == expected_ids.tolist() and new.tolist() == expected_new.tolist()
    assert np.array_equal(batched.ids.keys, reference.ids.keys)
    assert np.array_equal(batched.ids.values, reference.ids.values) and len(batched.ids) == len(reference.ids)
    for name, _, _ in batched._rows():
        assert np.array_equal(getattr(batched, name), getattr(reference, name)), name
    assert batched.n_front == reference.n_front and batched.host_names == reference.host_names
    assert np.array_equal(owners[0].prior, owners[1].prior)
    assert list(batched.urls) == list(reference.urls)
