from __future__ import annotations

import numpy as np
import pytest
from conftest import crawl_tiny

from focuscrawl.engine.defences.pipeline import PROBE
from focuscrawl.policy import CrawlContext
from focuscrawl.strategies.han import DISTANCE_CAP, FeatureLayout, HanPolicy, change_bucket, sarsa_update, tiles
from focuscrawl.topic.similarity import TopicSimilarity
from focuscrawl.types import Observation, Outlink, Page

HAN = ["han-sync", "han-async", "han-moderated"]




def test_two_tilings_of_5_and_6_buckets():
    values = np.array([[0.0, 0.05, 0.1, 0.19, 0.2, 0.35, 0.5, 0.95, 1.0, 1.7]])
    coded = tiles(values).reshape(-1, 2)
    assert coded[:, 0].tolist() == [0, 0, 0, 0, 1, 1, 2, 4, 4, 4]  # [0, .2) [.2, .4) ... width 0.2
    assert coded[:, 1].tolist() == [0, 0, 1, 1, 1, 2, 3, 5, 5, 5]  # [0, .1) [.1, .3) ... [.9, 1]
    # Together the two tilings tell 10 intervals apart, the paper's "(10)^3" state-space factor.
    grid = tiles(np.linspace(0, 0.999, 1000)[:, None])
    assert len({tuple(row) for row in grid}) == 10


def test_relevance_change_buckets():
    assert [change_bucket(c) for c in (0.0, 0.1, -0.1, 0.2, 0.3, 0.31, -0.2, -0.3, -0.31, 0.9)] == [
        0, 0, 0, 1, 1, 2, 3, 3, 4, 2]
    assert change_bucket(0.15, delta1=0.2, delta2=0.5) == 0


def test_feature_layout_matches_paper_dimensions():
    layout = FeatureLayout(n_categories=2)
    state = layout.state(0.55, 3, np.array([0.0, 1.0]), 0.25, 0.0, 42)
    actions = layout.actions(np.array([0.1, 0.9]), np.array([[0.0, 0.3], [1.0, 1.0]]), np.array([0.5, 0.5]),
                             np.array([0.0, 0.7]))
    assert state.shape == (8 + 2 * 2,) and actions.shape == (2, 6 + 2 * 2)
    both = np.concatenate([state, actions[0]])
    assert len(set(both.tolist())) == len(both), "each active index belongs to one bucket of one feature"
    assert both.max() < layout.dim == (48 + 11 * 2) + (33 + 11 * 2)
    # Distance is capped at 9: 42 and 9 land on the same (last) bucket of the distance block.
    assert layout.state(0.55, 3, np.zeros(2), 0.25, 0.0, DISTANCE_CAP)[-1] == state[-1]


def test_sarsa_update_by_hand():
    w = np.zeros(6)
    w[[1, 3]] = [2.0, 1.0]  # q(s, a) = 3
    x = np.array([1, 3])
    delta = sarsa_update(w, x, reward=-1.0, q_next=5.0, alpha=0.1, gamma=0.9, moderated=False)
    assert delta == pytest.approx(-1 + 0.9 * 5 - 3)  # 0.5
    assert w[[1, 3]].tolist() == pytest.approx([2.05, 1.05]) and w[[0, 2, 4, 5]].sum() == 0

    w = np.zeros(6)
    w[[1, 3]] = [2.0, 1.0]
    sarsa_update(w, x, reward=30.0, q_next=None, alpha=0.1, gamma=0.9, moderated=False)  # relevant: terminal
    assert w[[1, 3]].tolist() == pytest.approx([2.0 + 2.7, 1.0 + 2.7])


def test_moderated_update_is_equation_4():
    w = np.zeros(6)
    w[[1, 3]] = [2.0, 1.0]
    sarsa_update(w, np.array([1, 3]), reward=-1.0, q_next=5.0, alpha=0.1, gamma=0.9, moderated=True)
    # Eq. 4: target r + γ(q' - δ) = -1 + 0.9 (5 - 0.5) = 3.05, so each active weight moves 0.1 * 0.05.
    assert w[[1, 3]].tolist() == pytest.approx([2.005, 1.005])
    # ... which is the original update with the step size scaled by (1 - γ), as the paper notes.
    rng = np.random.default_rng(0)
    for _ in range(5):
        start, x = rng.normal(size=20), rng.choice(20, size=6, replace=False)
        reward, q_next = rng.normal() * 10, rng.normal() * 10
        moderated, original = start.copy(), start.copy()
        sarsa_update(moderated, x, reward, q_next, alpha=0.01, gamma=0.9, moderated=True)
        sarsa_update(original, x, reward, q_next, alpha=0.01 * (1 - 0.9), gamma=0.9, moderated=False)
        assert np.allclose(moderated, original)


def _policy(**options) -> HanPolicy:
    from focuscrawl.types import TopicInputs

    topic = TopicInputs("birds", ["bird", "nest"], ["bird feather wing nest", "train railway station"], [1, 0])
    policy = HanPolicy(**options)
    policy.reset(CrawlContext(topic=topic, classifier=None, seeds=["http://a.test/seed"], budget=10, seed=3))
    return policy


def _observe(policy, selection, text, relevance, links):
    url = selection.url
    page = Page(url, url, 200, title="", text=text)
    outlinks = [Outlink(u, anchor, "a.test", new) for u, anchor, new in links]
    policy.observe(Observation(0, selection, page, relevance, float(relevance >= 0.5), outlinks))


def test_links_keep_all_parents_and_move_to_the_latest_state():
    policy = _policy(related_keywords=[["bird"], ["railway"]])
    assert policy.layout.n_categories == 2
    seed = policy.select()
    assert seed.url == "http://a.test/seed"
    _observe(policy, seed, "bird feather nest", 0.9, [("http://a.test/x", "wing", True),
                                                                       ("http://a.test/y", "", True)])
    x = policy.links["http://a.test/x"]
    assert (x.parents, x.relevant_parents, x.min_distance, x.anchors) == (1, 1, 0, ["wing"])
    first_slot = policy.slot_of["http://a.test/x"]
    chosen = policy.select()
    assert chosen.url in ("http://a.test/x", "http://a.test/y")
    other = "http://a.test/y" if chosen.url == "http://a.test/x" else "http://a.test/x"
    _observe(policy, chosen, "train railway station", 0.1, [(other, "railway", False)])
    info = policy.links[other]
    assert info.parents == 2 and info.relevant_parents == 1
    # The off-topic parent lowers the mean of all parents, not the mean of relevant parents.
    assert info.relevance_sum / info.parents < info.relevant_relevance_sum / info.relevant_parents
    assert info.min_distance == 0  # still one link away from the relevant seed
    # The rediscovered link now sits in a pair whose state is the page that just rediscovered it.
    slot = policy.slot_of[other]
    assert slot != first_slot or other == "http://a.test/y"
    n_state = 8 + 2 * 2
    assert not np.array_equal(policy.codes[slot][:n_state], policy.codes[first_slot][:n_state])


def test_sync_rescores_whole_frontier_async_only_touched_pairs(tiny_web):
    policy, _ = crawl_tiny(tiny_web, "han-async", budget=6)
    n = len(policy.members)
    alive = np.array(policy.alive)
    before = policy.q[:n].copy()
    policy.w += 1.0  # as if a weight update happened
    policy.select()
    untouched = [s for s in alive if policy.count[s] > 0]
    assert len(untouched) and np.allclose(policy.q[untouched], before[untouched]), "async keeps old values"

    policy, _ = crawl_tiny(tiny_web, "han-sync", budget=6)
    policy.w += 1.0
    policy.select()
    alive = np.array(policy.alive)
    assert np.allclose(policy.q[alive], policy.w[policy.codes[alive]].sum(axis=1)), "sync re-scores everything"


def test_learns_from_agent_reward_only(tiny_web):
    policy, events = crawl_tiny(tiny_web, "han-async", budget=30)
    # every fetch of the policy's but the seed's updates the weights (soft-404 probes are the engine's)
    assert policy.updates == len([e for e in events if e.verdict != PROBE]) - 1
    assert np.abs(policy.w).sum() > 0


@pytest.mark.parametrize("strategy", HAN)
def test_crawls_tiny_web_without_refetching_and_deterministically(tiny_web, strategy):
    _, events = crawl_tiny(tiny_web, strategy, budget=30)
    urls = [e.url for e in events]
    assert len(urls) == len(set(urls)) == 30
    assert urls == [e.url for e in crawl_tiny(tiny_web, strategy, budget=30)[1]]
    # the bird cluster is reachable and rewarded (8 scored pages; the others are held-out examples)
    assert sum(e.relevant for e in events) >= 5


def test_topic_similarity_ranks_on_topic_text_first():
    sim = TopicSimilarity(["bird feather wing nest egg", "train railway station engine"], [1, 0], ["bird"],
                          [["railway"]])
    pages = sim.pages(["birds nest in spring", "railway station timetable", "nothing here at all"])
    assert pages[0, 0] > pages[1, 0] and pages[2, 0] == 0.0
    assert pages[1, 1] > pages[0, 1]
    links = sim.links(["http://x.test/birds", "http://x.test/trains"])
    assert links[0, 0] == pytest.approx(1.0) and links[1, 0] == 0.0
