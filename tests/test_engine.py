from __future__ import annotations

import pytest
from conftest import tiny_crawl

from focuscrawl.engine import DomainCap


def _crawl(web_dir, strategy, budget=30, cap="inf"):
    crawl, events, web = tiny_crawl(web_dir, strategy, budget, max_per_domain=cap)
    crawl.engine.run(web)
    return crawl.engine, events


@pytest.mark.parametrize("strategy", ["random", "bfs", "oracle", "best-first"])
def test_closure_budget_and_events(tiny_web, strategy):
    engine, events = _crawl(tiny_web, strategy, budget=30)
    urls = [e.url for e in events]
    assert len(urls) == len(set(urls)) == 30, "never fetch a URL twice, spend the whole budget"
    assert [e.step for e in events] == list(range(30))
    assert all(e.decision_ms >= 0 and e.frontier_size >= 0 for e in events)
    assert sum(e.relevant for e in events) == engine.stats.relevant
    # Dead links answer 404 and still cost a step.
    assert any(e.status == 404 for e in events) or strategy == "oracle"


def test_exhausted_frontier_stops_early(tiny_web):
    _, events = _crawl(tiny_web, "bfs", budget=1000)
    assert len(events) == 10 + 10 + 10 + 5  # 25 pages + 10 dead links, then nothing left


def test_oracle_takes_relevant_first(tiny_web):
    _, events = _crawl(tiny_web, "oracle", budget=10)
    assert all(e.relevant for e in events)


def test_per_domain_cap(tiny_web):
    engine, events = _crawl(tiny_web, "bfs", budget=1000, cap=3)
    per_host = {}
    for e in events:
        per_host[e.host] = per_host.get(e.host, 0) + 1
    assert max(per_host.values()) <= 3
    assert engine.frontier_size == 0


def test_adaptive_cap_schedule():
    cap = DomainCap.parse("5-2")
    assert [cap.limit(t, 100) for t in (0, 24, 25, 50, 75, 99)] == [5, 5, 4, 3, 2, 2]
    assert str(DomainCap.parse("inf")) == "inf" and DomainCap.parse(10).limit(7, 8) == 10
    with pytest.raises(ValueError):
        DomainCap.parse("2-5")
    with pytest.raises(ValueError):
        DomainCap.parse("lots")


def test_frontier_size_matches_discovered_minus_fetched(tiny_web):
    engine, events = _crawl(tiny_web, "random", budget=12)
    pending = set(engine.parent) - engine.fetched
    assert events[-1].frontier_size == len(pending)


def test_same_seed_same_crawl(tiny_web):
    a = [e.url for e in _crawl(tiny_web, "random", budget=20)[1]]
    b = [e.url for e in _crawl(tiny_web, "random", budget=20)[1]]
    assert a == b
