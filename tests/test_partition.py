"""The engine's partition hooks for distributed crawls, without Ray: a stable host hash, foreign links kept out of
the frontier and handed over with their parent, adopted links reaching every strategy's frontier."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import tiny_crawl

from focuscrawl.crawl.distributed import apply_message, decode_links, encode_links, shard_of
from focuscrawl.policy import ShardAware
from focuscrawl.strategies.registry import STRATEGIES
from focuscrawl.types import ForeignLinks


def test_shard_of_is_a_stable_hash_of_the_host():
    # fixed values: a Python hash() would change between processes, blake2b does not
    assert [shard_of(f"http://h{i}.test/x", 3) for i in range(8)] == [2, 1, 0, 1, 1, 0, 0, 2]
    assert shard_of("http://www.h0.test/a", 3) == shard_of("http://h0.test/b", 3)  # one site, one shard


def test_links_to_other_shards_wait_in_outgoing_with_their_parent(tiny_web):
    crawl, events, web = tiny_crawl(tiny_web, "bfs", budget=5)
    engine = crawl.engine
    engine.owns = lambda url: "trains.test" not in url
    engine.run(web)
    sent = engine.take_outgoing()
    assert sent and all(url.startswith("http://trains.test/") for m in sent for url, _ in m.links)
    assert not any("trains.test" in e.url for e in events)  # never in this shard's frontier
    first = sent[0]
    assert first.parent == "http://birds.test/b0" and first.page.title == "b0" and first.depth == 0
    assert first.reward == 1.0 and first.page.html is None
    assert engine.take_outgoing() == []
    assert decode_links(encode_links(first)) == first


@pytest.mark.parametrize("strategy", sorted(STRATEGIES))
def test_every_strategy_fetches_links_another_shard_found(tiny_web, strategy):
    crawl, events, web = tiny_crawl(tiny_web, strategy, budget=60)
    parent = web.fetch("http://trains.test/t3")
    adopted = crawl.engine.adopt(ForeignLinks("http://trains.test/t3", parent, 0.9, 1.0, 4,
                                              [("http://nowhere.test/nest", "bird nest")]))
    assert adopted == 1
    assert crawl.engine.depth["http://nowhere.test/nest"] == 5
    crawl.engine.run(web)
    assert "http://nowhere.test/nest" in {e.url for e in events}


def test_adaptive_pools_what_shards_learned_as_one_learner_would(tiny_web):
    """Shards' least-squares samples add up in the information form: with no forgetting, the pooled model is
    the one a single learner of both shards' samples has; a second round adds only what is new."""
    import pickle

    from focuscrawl.strategies.adaptive import AdaptivePolicy

    crawls = [tiny_crawl(tiny_web, "adaptive", budget=budget, forget=1.0)[0] for budget in (10, 30)]
    for crawl in crawls:
        crawl.engine.run(tiny_crawl(tiny_web, "adaptive")[2])
    a, b = (crawl.policy for crawl in crawls)
    prior = np.eye(len(a.prior)) * a.prior_strength
    (info_a, moment_a), (info_b, moment_b) = a.model.statistics(), b.model.statistics()
    assert a.model.samples and b.model.samples
    pooled = AdaptivePolicy.combine_parameters([(10, a.parameters()), (30, b.parameters())])
    assert np.allclose(pooled["information"], info_a + info_b - prior)
    assert np.allclose(pooled["moment"], moment_a + moment_b - prior @ a.prior)
    learned = a.link_model.w + b.link_model.w
    assert int(pooled["fetched"][0]) == a.hosts.fetched_total + b.hosts.fetched_total
    for crawl in crawls:
        apply_message(crawl.engine, "avg:1", pickle.dumps(pooled))
    assert np.allclose(a.link_model.w, learned) and np.array_equal(a.link_model.w, b.link_model.w)
    assert (a.hosts.others_fetched, b.hosts.others_fetched) == (b.hosts.fetched_total, a.hosts.fetched_total), \
        "rare: a host's share is of the whole crawl's fetches"
    assert np.allclose(a.model.w, b.model.w) and np.allclose(a.model.w, np.linalg.solve(
        info_a + info_b - prior, moment_a + moment_b - prior @ a.prior))
    again = AdaptivePolicy.combine_parameters([(10, a.parameters()), (30, b.parameters())])
    assert np.allclose(again["information"], pooled["information"]), "nothing new learned: nothing added"
    assert len(again["link_index"]) == 0, "nothing new learned: no link weight sent"


def _dense_pooling(policies: list, reference: dict) -> dict:
    """The pooling as it was when the whole link model travelled (main before issue 34): each shard's whole
    weight change added to the whole reference."""
    changes = [p.link_model.w - reference["link_w"] for p in policies]
    return {"link_w": reference["link_w"] + sum(changes),
            "link_bias": reference["link_bias"] + sum(np.array([p.link_model.bias]) - reference["link_bias"]
                                                      for p in policies)}


def test_adaptive_sends_only_the_link_weights_it_changed_and_pools_as_the_whole_vectors_did(tiny_web):
    """Sparse pooling (the weights a shard changed since the last round, and back the weights some shard changed)
    leaves every shard with the link model the dense pooling gave, bit for bit, over two rounds, including what
    a shard learned between reporting and loading (overwritten, as the whole vector overwrote it), while the
    messages hold a small part of the 2^18 weights."""
    import pickle

    from focuscrawl.strategies.adaptive import AdaptivePolicy

    crawls = [tiny_crawl(tiny_web, "adaptive", budget=budget)[0] for budget in (12, 25, 18)]
    policies = [crawl.policy for crawl in crawls]
    web = tiny_crawl(tiny_web, "adaptive")[2]
    for round_ in (1, 2):
        for crawl in crawls:
            crawl.engine.budget += 6 * round_  # each learns more since the last round
            crawl.engine.run(web)
        reference = policies[0]._reference()
        dense = _dense_pooling(policies, reference)
        shared = [(10, p.parameters()) for p in policies]
        size = len(policies[0].link_model.w)
        assert all(0 < len(params["link_index"]) < size // 10 for _, params in shared)
        pooled = AdaptivePolicy.combine_parameters(shared)
        assert int(pooled["round"][0]) == round_
        assert pickle.dumps(pooled).__len__() < size * 8 // 10  # a tenth of one whole vector
        # the first shard learns a few pages more between reporting and loading
        crawls[0].engine.budget += 3
        crawls[0].engine.run(web)
        for crawl in crawls:
            apply_message(crawl.engine, f"avg:{round_}", pickle.dumps(pooled))
        for policy in policies:
            assert np.array_equal(policy.link_model.w, dense["link_w"])
            assert policy.link_model.bias == dense["link_bias"][0]
            assert np.array_equal(policy._pooled["link_w"], dense["link_w"])


def test_a_shard_that_missed_a_round_catches_up_with_the_rounds_the_driver_resends(tiny_web):
    """A shard that died while round 1 was loaded reports the older reference in round 2; the driver sends it
    rounds 1 and 2 in order (``rounds_after``), after which its model is the other shards'."""
    import pickle

    from focuscrawl.crawl.distributed.crawler import rounds_after
    from focuscrawl.strategies.adaptive import AdaptivePolicy

    crawls = [tiny_crawl(tiny_web, "adaptive", budget=budget)[0] for budget in (10, 20, 15)]
    web = tiny_crawl(tiny_web, "adaptive")[2]
    kept: list[tuple[str, bytes]] = []
    last = {0: None, 1: None, 2: None}
    for round_ in (1, 2):
        for crawl in crawls:
            crawl.engine.budget += 5
            crawl.engine.run(web)
        if round_ == 1:  # a weight only shard 0 changed, in round 1 only (the tiny web's few words all recur)
            untouched = np.flatnonzero(np.all([crawl.policy.link_model.w == 0 for crawl in crawls], axis=0))
            crawls[0].policy.link_model.w[untouched[-1]] = 0.5
        pooled = AdaptivePolicy.combine_parameters([(10, crawl.policy.parameters()) for crawl in crawls])
        kept.append((f"avg:{round_}", pickle.dumps(pooled)))
        for k, crawl in enumerate(crawls):
            if round_ == 1 and k == 2:
                continue  # shard 2 misses round 1
            for message_id, blob in rounds_after(kept, last[k]):
                apply_message(crawl.engine, message_id, blob)
                last[k] = message_id
    a, b, c = (crawl.policy for crawl in crawls)
    assert int(c._pooled["round"][0]) == 2
    assert np.array_equal(c.link_model.w, a.link_model.w) and np.array_equal(b.link_model.w, a.link_model.w)
    assert c.link_model.w[untouched[-1]] == 0.5
    assert np.allclose(c.model.w, a.model.w)
    assert rounds_after(kept, None) == kept and rounds_after(kept, "avg:2") == []


def test_tres_shares_its_online_q_network_and_loads_an_average(tiny_web):
    import pickle

    crawls = [tiny_crawl(tiny_web, "tres", budget=budget, explore_steps=3, batch_size=8)[0] for budget in (10, 20)]
    for crawl in crawls:
        crawl.engine.run(tiny_crawl(tiny_web, "tres")[2])
    shared = [(crawl.engine.stats.steps, crawl.policy.parameters()) for crawl in crawls]
    assert not np.array_equal(shared[0][1]["online"], shared[1][1]["online"])  # each learned on its own pages
    average = ShardAware.combine_parameters(shared)
    expected = (10 * shared[0][1]["online"].astype(np.float64) + 20 * shared[1][1]["online"]) / 30
    apply_message(crawls[0].engine, "avg:1", pickle.dumps(average))
    policy = crawls[0].policy
    assert np.allclose(policy.parameters()["online"], expected, atol=1e-6)
    x = policy.frontier.X[:1] if len(policy.frontier) else np.zeros((1, policy.features.n_features), np.float32)
    assert np.isfinite(policy.ddqn.q(x)).all()  # the layers are views of the loaded vector
    random_leaves = tiny_crawl(tiny_web, "tree-random", budget=5)[0]
    assert random_leaves.policy.parameters() is None  # a selector that learns nothing shares nothing


def test_repair_keeps_a_shards_adopted_messages(tiny_web, tmp_path):
    import sqlite3

    from focuscrawl.storage import StateStore
    from focuscrawl.storage.repair import repair_run_folder

    crawl, events, web = tiny_crawl(tiny_web, "bfs", budget=1)
    parent = web.fetch("http://trains.test/t3")
    store = StateStore(tmp_path / "state.sqlite")
    store.initialise(identity={"shard": 0})
    for i in range(3):
        message = ForeignLinks("http://trains.test/t3", parent, 0.9, 1.0, 0, [(f"http://nowhere.test/{i}", "x")])
        assert store.commit_adopt(f"1:{i}:0", encode_links(message))
        store.log_select(f"http://h.test/{i}")  # committed with the next message; no step: all after the cut
    assert not store.commit_adopt("1:0:0", b"again")  # a re-sent message is recognised
    store.db.execute("INSERT INTO outbox VALUES ('0:0:1', 1, x'00')")
    store.db.execute("DELETE FROM inbox WHERE id = '1:1:0'")  # as if that row were unreadable
    store.close()
    repair_run_folder(tmp_path)
    db = sqlite3.connect(tmp_path / "state.sqlite")
    # no step survived, so no select either; the adopted messages do (their senders forgot them), but the one
    # whose row was lost
    assert db.execute("SELECT kind, url FROM ops").fetchall() == [("A", "1:0:0"), ("A", "1:2:0")]
    assert db.execute("SELECT id FROM inbox").fetchall() == [("1:0:0",), ("1:2:0",)]
    assert db.execute("SELECT id, dest FROM outbox").fetchall() == [("0:0:1", 1)]


def test_the_coordinator_never_grants_beyond_the_budget_and_shares_it_until_every_shard_has_asked():
    from focuscrawl.crawl.distributed import Coordinator

    coordinator = Coordinator(100, {0: 0, 1: 0}, workers=2)
    assert coordinator.lease(0, 0, 16) == 16
    assert coordinator.lease(0, 16, 40) == 34  # its half of the budget while shard 1 has not asked yet
    assert coordinator.lease(0, 50, 16) == 0
    assert coordinator.lease(1, 0, 60) == 50
    assert coordinator.lease(0, 40, 16) == 10  # shard 0 gave 10 back; now first come, first served
    assert coordinator.claimed() == 100 and coordinator.lease(1, 50, 1) == 0


def test_a_resumed_coordinator_reserves_for_shards_whose_predecessors_may_still_commit(monkeypatch):
    """A killed driver's shards can commit the pages they held leased after the new driver counted their
    stores; until a shard reports its own count, the coordinator assumes it holds a lease more."""
    from focuscrawl.crawl.distributed import Coordinator, coordinator

    clock = [0.0]
    monkeypatch.setattr(coordinator.time, "monotonic", lambda: clock[0])
    coordinator = Coordinator(80, {0: 20, 1: 20}, workers=2, reserve=24)
    clock[0] = Coordinator.STARTUP_S + 1  # a slow start: the start-up share no longer applies
    first = coordinator.lease(0, 20, 100)
    assert first == 80 - 20 - 20 - 24
    second = coordinator.lease(1, 27, 100)  # shard 1's predecessor committed 7 pages after the count
    assert 20 + first + 27 + second <= 80
    assert Coordinator(80, {0: 0, 1: 0}, workers=2, reserve=24).reserve == 0, "a fresh crawl has no predecessors"


def test_with_priority_the_budget_goes_to_shards_finding_relevant_pages(monkeypatch):
    from focuscrawl.crawl.distributed import Coordinator, coordinator

    clock = [0.0]
    monkeypatch.setattr(coordinator.time, "monotonic", lambda: clock[0])
    coordinator = Coordinator(1000, {0: 0, 1: 0}, workers=2, priority=0.5)
    assert coordinator.lease(0, 0, 16, outlook=None) == 16  # shards without an outlook yet are always served
    assert coordinator.lease(1, 0, 16, outlook=None) == 16
    assert coordinator.lease(0, 16, 16, outlook=0.8) == 16
    assert coordinator.lease(1, 16, 16, outlook=0.3) == 0, "in the lower half of the range of asking outlooks"
    assert coordinator.lease(0, 32, 16, outlook=0.8) == 16
    assert coordinator.denied == 1
    clock[0] = 5.0  # shard 0 stopped asking: shard 1 no longer competes with it
    assert coordinator.lease(1, 16, 16, outlook=0.3) == 16
    assert coordinator.lease(0, 48, 16, outlook=0.9) == 16 and coordinator.lease(1, 32, 16, outlook=0.3) == 0
    assert coordinator.lease(0, 40, 0, outlook=0.9) == 0  # shard 0 gives 8 back: its frontier is spent
    assert coordinator.lease(1, 32, 16, outlook=0.3) == 16, "a shard giving back stops competing at once"
    # outlooks are scores of no fixed sign or scale: the best asking shard is always served
    negative = Coordinator(1000, {0: 0, 1: 0}, workers=2, priority=0.9)
    assert negative.lease(0, 0, 16, outlook=-0.02) == 16 and negative.lease(1, 0, 16, outlook=-0.03) == 0
    assert negative.lease(0, 16, 16, outlook=-0.025) == 16 and negative.lease(1, 0, 16, outlook=-0.0249) == 16
    # without priority, outlooks are ignored
    plain = Coordinator(1000, {0: 0, 1: 0}, workers=2)
    assert plain.lease(0, 0, 16, outlook=1.0) == 16 and plain.lease(1, 0, 16, outlook=0.0) == 16


def test_a_shards_outlook_is_its_policys_recent_scores_else_its_pages_relevance():
    from focuscrawl.crawl.distributed import Outlook

    mean = Outlook(pages=4)
    assert mean.mean is None
    for value in [1.0, 0.0, 0.5, 0.5]:
        mean.add(value)
    assert mean.mean == 0.5  # the plain mean of the first four
    for _ in range(20):
        mean.add(0.0)
    assert mean.mean < 0.01, "older values fade"


def test_a_redirect_into_another_shards_hosts_is_not_fetched_again_there(tmp_path):
    """a.test's shard fetches a.test/r, which redirects to b.test/p; b.test's shard, which also gets a link to
    b.test/p, must count it as fetched instead of fetching it a second time."""
    from focuscrawl.bench.protocol import GroundTruth
    from focuscrawl.builder import build_crawl
    from focuscrawl.config import RunSettings
    from focuscrawl.types import TopicInputs
    from focuscrawl.webs.store import OfflineWeb, WebWriter

    with WebWriter(tmp_path / "w", {"name": "redirects"}) as w:
        w.add_page("http://a.test/", text="hub", labels=["x"])
        w.add_link("http://a.test/", "http://a.test/r", "moved")
        w.add_link("http://a.test/", "http://b.test/p", "the page")
        w.add_page("http://a.test/r", status=301, location="http://b.test/p")
        w.add_page("http://b.test/p", text="the page", labels=["x"])
        w.add_link("http://b.test/p", "http://b.test/q", "next")
        w.add_page("http://b.test/q", text="next page", labels=["x"])
    web = OfflineWeb(tmp_path / "w")
    topic = TopicInputs("x", ["page"], ["page one", "hub"], [1, 0])

    def shard(host, seeds):
        events = []
        crawl = build_crawl(RunSettings(budget=10), "bfs", topic, seeds, judge=GroundTruth("x", frozenset()),
                            sinks=[events.append], owns=lambda url: f"//{host}/" in url)
        return crawl.engine, events

    a, a_events = shard("a.test", ["http://a.test/"])
    a.run(web)
    assert [e.url for e in a_events] == ["http://a.test/", "http://a.test/r"]
    sent = [decode_links(encode_links(m)) for m in a.take_outgoing()]  # as they travel
    # the hub's link to b.test/p; then the redirect: its target, fetched, and the target page's own links
    assert [(m.links, m.fetched) for m in sent] == [([("http://b.test/p", "the page")], []),
                                                    ([("http://b.test/q", "next")], ["http://b.test/p"])]
    b, b_events = shard("b.test", ["http://a.test/"])  # a seed it does not own: it starts with nothing
    for message in sent:
        b.adopt(message)
    b.run(web)
    assert [e.url for e in b_events] == ["http://b.test/q"]  # b.test/p is in its closure, fetched by a.test's
    assert "http://b.test/p" in b.fetched and b.fetches_per_host["b.test"] == 1
