from __future__ import annotations

import numpy as np
import pytest
from conftest import tiny_crawl

from focuscrawl.engine import DomainCap
from focuscrawl.engine.defences.pipeline import PROBE


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
    # 25 pages + 10 dead links, then nothing left (and the soft-404 probes the engine sends of its own: the tiny
    # web's pages are rotations of one sentence, near-copies at different URLs, as a host's not-found pages are)
    assert len([e for e in events if e.verdict != PROBE]) == 10 + 10 + 10 + 5


def test_oracle_looks_ahead_where_the_greedy_oracle_wanders(tiny_web):
    """Relevant pages sit in two clusters, the second behind ten irrelevant train pages: once the first is
    exhausted the greedy oracle fetches irrelevant URLs in discovery order (dead links included), the
    oracle walks the shortest path to the second cluster, so it bounds every strategy."""
    found = {}
    for name in ("oracle", "greedy-oracle", "bfs", "best-first", "random"):
        _, events = _crawl(tiny_web, name, budget=35)
        found[name] = np.cumsum([bool(e.relevant) for e in events])
    total = found["oracle"][-1]
    assert found["oracle"][19] == total, "every scored relevant page within 20 steps"
    assert found["greedy-oracle"][19] < total
    for name, curve in found.items():
        assert (found["oracle"] >= curve).all(), name


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


def test_a_redirect_counts_once_against_the_per_domain_cap(tmp_path):
    from focuscrawl.bench.protocol import GroundTruth
    from focuscrawl.builder import build_crawl
    from focuscrawl.config import RunSettings
    from focuscrawl.types import TopicInputs
    from focuscrawl.webs.store import OfflineWeb, WebWriter

    with WebWriter(tmp_path / "w", {"name": "redirects"}) as w:
        w.add_page("http://a.test/", text="hub", labels=["x"])
        for i in range(6):  # every link redirects to its page on the same host (http -> /index, say)
            w.add_link("http://a.test/", f"http://a.test/r{i}", f"link {i}")
            w.add_page(f"http://a.test/r{i}", status=301, location=f"http://a.test/p{i}")
            w.add_page(f"http://a.test/p{i}", text=f"page {i}", labels=["x"])
    web = OfflineWeb(tmp_path / "w")
    topic = TopicInputs("x", ["page"], ["page one", "hub"], [1, 0])
    events = []
    crawl = build_crawl(RunSettings(budget=20, max_per_domain="4"), "bfs", topic, ["http://a.test/"],
                        judge=GroundTruth("x", frozenset()), sinks=[events.append])
    crawl.engine.run(web)
    assert [e.url for e in events] == ["http://a.test/"] + [f"http://a.test/r{i}" for i in range(3)]
    assert crawl.engine.fetches_per_host["a.test"] == 4


def test_each_steps_decision_time_is_its_own_with_fetches_in_flight(tiny_web, monkeypatch):
    """Three selections in flight, recorded in reverse: each step's decision_ms is the select that chose it
    plus the observe of its page (a fake clock the policy advances: select of the k-th URL takes k units)."""
    import focuscrawl.engine.engine as engine_module

    clock = {"now": 0.0}
    monkeypatch.setattr(engine_module.time, "perf_counter", lambda: clock["now"])
    crawl, events, web = tiny_crawl(tiny_web, "bfs", budget=6)
    engine, policy = crawl.engine, crawl.policy
    select, observe = policy.select, policy.observe
    cost = {}

    def slow_select():
        selection = select()
        if selection is not None:
            cost[selection.url] = len(cost) + 1.0
            clock["now"] += cost[selection.url]
        return selection

    def slow_observe(observation):
        clock["now"] += 0.5
        return observe(observation)

    policy.select, policy.observe = slow_select, slow_observe
    seed = engine.next_selection().url
    engine.record(seed, web.fetch(seed))
    batch = [engine.next_selection().url for _ in range(3)]
    for url in reversed(batch):
        engine.record(url, web.fetch(url))
    assert [e.url for e in events] == [seed] + batch[::-1]
    assert [e.decision_ms for e in events] == [(cost[url] + 0.5) * 1000.0 for url in [seed] + batch[::-1]]


def test_the_engine_rewards_at_the_judges_own_decision_point(tiny_web):
    """A judge that names its ``threshold`` (a calibrated one decides below 0.5) is rewarded there, not at 0.5,
    through the benchmark's per-text memo too: the memo must not move where the engine rewards."""
    from focuscrawl.topic.relevance import MemoizedRelevance
    from focuscrawl.types import decision_point

    crawl, events, web = tiny_crawl(tiny_web, "bfs", budget=30)
    judge = crawl.engine.classifier
    judge.threshold = 0.03  # the tiny web's off-topic pages score 0.038, its birds 0.962
    crawl.engine.classifier = MemoizedRelevance(judge)
    assert decision_point(crawl.engine.classifier) == 0.03 and decision_point(object()) == 0.5
    crawl.engine.run(web)
    scored = [e for e in events if e.relevance > 0]
    assert any(0.03 <= e.relevance < 0.5 for e in scored), "the tiny web must have pages between the two points"
    assert all(e.reward == float(e.relevance >= 0.03) for e in scored)
