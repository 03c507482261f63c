"""TRES: the double-Q target, the state features, and every variant crawling the tiny web."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import tiny_crawl

from focuscrawl.bench.protocol import load_topic
from focuscrawl.engine.defences.pipeline import PROBE
from focuscrawl.policy import CrawlContext
from focuscrawl.strategies import make_policy
from focuscrawl.strategies.tres.ddqn import DDQN, DDQNConfig, double_q_targets, epsilon_at
from focuscrawl.strategies.tres.features import FeatureBuilder, KeywordMatcher, MeanRelevance
from focuscrawl.topic.relevance import TfidfRelevanceModel
from focuscrawl.types import TopicInputs
from focuscrawl.webs.store import OfflineWeb

VARIANTS = ["tres", "tree-random", "tres-async", "tres-sync", "tres-nh", "tres-svm"]


def test_double_q_target_uses_online_argmax_and_target_value():
    rewards = np.array([1.0, 0.0, 1.0])
    # transition 0: two candidates; online prefers the 2nd, target values it 0.2 (its max is the 1st, 0.9)
    # transition 1: no candidate (dead end): y = r
    # transition 2: three candidates, online ties on the 1st and 3rd: the first wins
    q_online = np.array([[0.1, 0.5, 0.0], [9.0, 9.0, 9.0], [0.7, 0.3, 0.7]])  # padding may hold anything
    q_target = np.array([[0.9, 0.2, 0.0], [5.0, 5.0, 5.0], [0.4, 0.8, 0.6]])
    counts = np.array([2, 0, 3])
    y = double_q_targets(rewards, q_online, q_target, counts, gamma=0.5)
    assert y.tolist() == pytest.approx([1.0 + 0.5 * 0.2, 0.0, 1.0 + 0.5 * 0.4])
    # padding never wins the argmax, even when it holds the largest value
    y = double_q_targets(rewards, np.array([[0.1, 0.2, 7.0]] * 3), q_target, np.array([2, 2, 2]), gamma=1.0)
    assert y.tolist() == pytest.approx([1.0 + 0.2, 0.0 + 5.0, 1.0 + 0.8])


def test_training_targets_are_the_double_q_targets_of_the_sampled_transitions():
    agent = DDQN(3, DDQNConfig(gamma=0.7, batch_size=16, max_next=4), seed=0)
    rng = np.random.default_rng(1)
    for i in range(40):  # 0 to 4 next rows, and one appended action on some: widths 0..5
        rows = rng.normal(size=(i % 5, 3)).astype(np.float32)
        j = agent.replay.add(rng.normal(size=3).astype(np.float32), float(i % 2), rows)
        if i % 3 == 0:
            agent.replay.append_next(j, rng.normal(size=3).astype(np.float32))
    agent.target.flat[:] = rng.normal(size=agent.target.flat.size)  # the two networks must differ
    batch = agent.replay.sample(agent.rng, 16)
    assert len(batch.next_rows) == batch.counts.sum() and batch.counts.min() == 0 and batch.counts.max() == 5
    padded = agent.replay.next_rows[batch.index]  # (batch, width, features), padding included
    q_online = agent.online.forward(padded.reshape(-1, 3)).reshape(16, -1)
    q_target = agent.target.forward(padded.reshape(-1, 3)).reshape(16, -1)
    expected = double_q_targets(batch.r, q_online, q_target, batch.counts, gamma=0.7)
    assert agent.targets(batch) == pytest.approx(expected, rel=1e-5, abs=1e-6)


def test_q_network_gradients_match_finite_differences():
    from focuscrawl.strategies.tres.ddqn import QNetwork

    rng = np.random.default_rng(0)
    net = QNetwork(4, 6, 5, rng)
    net.params = [p.astype(np.float64) for p in net.params]
    x, y = rng.normal(size=(9, 4)), rng.normal(size=9)
    _, grads = net.loss_and_gradients(x, y)
    for p, g in zip(net.params, grads):
        flat = p.reshape(-1)
        for i in range(0, flat.size, 3):
            keep = flat[i]
            flat[i] = keep + 1e-6
            up = np.mean((net.forward(x) - y) ** 2)
            flat[i] = keep - 1e-6
            down = np.mean((net.forward(x) - y) ** 2)
            flat[i] = keep
            assert g.reshape(-1)[i] == pytest.approx((up - down) / 2e-6, rel=1e-3, abs=1e-4)


def test_ddqn_learns_the_reward_of_a_feature():
    agent = DDQN(2, DDQNConfig(gamma=0.0, batch_size=32, lr=1e-2), seed=0)
    for i in range(200):
        x = np.array([i % 2, 0.5], dtype=np.float32)
        agent.replay.add(x, float(i % 2))
    for _ in range(300):
        agent.train_step()
    q = agent.q(np.array([[0, 0.5], [1, 0.5]], dtype=np.float32))
    assert q[1] - q[0] > 0.8


def test_epsilon_schedule():
    assert epsilon_at(0, 10, 0.2, 0.0, 100) == 1.0
    assert epsilon_at(10, 10, 0.2, 0.0, 100) == pytest.approx(0.2)
    assert epsilon_at(60, 10, 0.2, 0.0, 100) == pytest.approx(0.1)
    assert epsilon_at(500, 10, 0.2, 0.0, 100) == 0.0


def test_state_features_follow_the_paper_example():
    class Half:
        def predict_proba(self, texts):
            return np.full(len(texts), 0.3)

    topic = TopicInputs("sports", ["football", "world cup"], ["a", "b"], [1, 0])
    features = FeatureBuilder(CrawlContext(topic=topic, classifier=Half(), seeds=[], budget=1))
    # Figure 1: seed (relevant) -> A (relevant) -> C (irrelevant); the candidate D is an outlink of C.
    seed = features.add_page(-1, 1.0)
    a = features.add_page(seed, 1.0)
    c = features.add_page(a, 0.0)
    for host, reward in (("en.wikipedia.org", 1), ("en.wikipedia.org", 1), ("en.wikipedia.org", 1),
                         ("en.wikipedia.org", 0)):
        features.add_host_fetch(host, reward)
    x = features.outlink_features(c, ["https://en.wikipedia.org/wiki/Tennis", "http://new.test/World_Cup"],
                                  ["tennis", ""], ["en.wikipedia.org", "new.test"])
    assert x[0].tolist() == pytest.approx([0.0, 0.5, 0.6, 0.0, 0.0, 0.3, 0.7, 1.0])
    assert x[1, 3] == 1.0 and x[1, 4] == 0.0 and x[1, 6:].tolist() == [0.0, 0.5]
    # the parent_feature option: the parent's classifier probability replaces its binary reward, and only
    # that feature (the path statistics still count the page as irrelevant)
    d = features.add_page(c, 0.0, parent_value=0.42)
    state = features.state_features(d)
    assert state[0] == pytest.approx(0.42) and state.tolist()[1:] == features.state_features(
        features.add_page(c, 0.0)).tolist()[1:]
    with pytest.raises(ValueError, match="parent_feature"):
        make_policy("tres", parent_feature="maybe")


def test_keyword_matching_on_word_boundaries():
    match = KeywordMatcher(["bird", "food and agriculture"])
    assert match(["/wiki/Bird_migration", "birdie", "Food_and_Agriculture", "food agriculture"]).tolist() == [
        1.0, 0.0, 1.0, 0.0]
    # a batch is scanned in one pass: a newline inside a link's text must not shift the answers
    assert match(["nothing\nhere", "", "a\nbird", "food and\nagriculture", "Bird.", "no"]).tolist() == [
        0.0, 0.0, 1.0, 1.0, 1.0, 0.0]
    assert match([]).tolist() == []


def _crawl(web_dir, strategy, budget=25, seed=1, cap="inf", **options):
    crawl, events, web = tiny_crawl(web_dir, strategy, budget, seed, max_per_domain=cap, explore_steps=3,
                                    batch_size=8, **options)
    crawl.engine.run(web)
    return crawl.policy, events


@pytest.mark.parametrize("strategy", VARIANTS)
def test_variant_crawls_without_refetching_and_is_deterministic(tiny_web, strategy):
    policy, events = _crawl(tiny_web, strategy)
    urls = [e.url for e in events]
    assert len(urls) == len(set(urls)) == 25, "never fetch a URL twice, spend the whole budget"
    assert sum(bool(e.relevant) for e in events) > 0
    _, again = _crawl(tiny_web, strategy)
    assert [e.url for e in again] == urls, "same seed, same crawl"
    if strategy != "tres-sync" and strategy != "tres-async":
        policy.frontier.check()


def test_host_cap_empties_the_hosts_frontier(tiny_web):
    policy, events = _crawl(tiny_web, "tres", budget=40, cap=3)
    per_host = {}
    for e in events:
        per_host[e.host] = per_host.get(e.host, 0) + 1
    assert max(per_host.values()) <= 3
    assert len(policy.frontier) == 0
    policy.frontier.check()


def test_tres_exhausts_the_tiny_web(tiny_web):
    _, events = _crawl(tiny_web, "tres", budget=1000)
    # 25 pages + 10 dead links, each fetched once (and the engine's soft-404 probes)
    assert len([e for e in events if e.verdict != PROBE]) == 35


def test_anchor_model_is_trained_on_the_topic_examples_not_taken_from_the_reward(tiny_web):
    from focuscrawl.topic.svm import SvmRelevanceModel

    policy, events = _crawl(tiny_web, "tres", anchor_model="svm")
    anchor = policy.features.classifiers[0]
    assert isinstance(anchor, SvmRelevanceModel), "the anchor feature uses its own model"
    topic = load_topic(OfflineWeb(tiny_web), "topic.birds").inputs
    reference = SvmRelevanceModel(seed=1).fit(topic.example_texts, topic.example_labels)
    texts = ["birds and their nests", "stock market prices"]
    assert anchor.predict_proba(texts).tolist() == pytest.approx(reference.predict_proba(texts).tolist())
    _, again = _crawl(tiny_web, "tres", anchor_model="svm")
    assert [e.url for e in again] == [e.url for e in events], "same seed, same crawl"
    reward_policy, _ = _crawl(tiny_web, "tres", anchor_model="reward")
    assert isinstance(reward_policy.features.classifiers[0], TfidfRelevanceModel), "'reward' keeps the paper's choice"
    default_policy, _ = _crawl(tiny_web, "tres")
    mean = default_policy.features.classifiers[0]
    assert isinstance(mean, MeanRelevance), "default: reward and TF-IDF averaged"
    assert [type(m) for m in mean.models] == [TfidfRelevanceModel, TfidfRelevanceModel]
    texts = ["birds and their nests", "stock market prices"]
    parts = [m.predict_proba(texts) for m in mean.models]
    assert mean.predict_proba(texts).tolist() == pytest.approx(((parts[0] + parts[1]) / 2).tolist())
    with pytest.raises(ValueError, match="anchor_model must be"):
        make_policy("tres", anchor_model="nonsense")


def test_target_network_is_a_copy_not_an_alias():
    agent = DDQN(3, DDQNConfig(batch_size=4), seed=0)
    for i in range(8):
        agent.replay.add(np.array([i % 2, 0.0, 1.0], dtype=np.float32), float(i % 2))
    before = agent.target.flat.copy()
    agent.train_step()
    assert not np.array_equal(agent.online.flat, before), "a training step moves the online weights"
    assert np.array_equal(agent.target.flat, before), "and not the target's"
    agent.target.copy_from(agent.online)
    assert np.array_equal(agent.target.flat, agent.online.flat)
    assert all(np.shares_memory(p, agent.target.flat) for p in agent.target.params), "params stay views"


def test_a_checkpointed_agent_learns_on_as_the_live_one():
    """A checkpoint is a pickle: the restored networks' weights must still be views of what the optimiser
    trains, or a resumed crawl scores with frozen weights (found as a distributed shard whose resume from a
    checkpoint diverged from its log)."""
    import pickle

    agent = DDQN(3, DDQNConfig(batch_size=4, target_sync=3), seed=0)
    for i in range(16):
        agent.replay.add(np.array([i % 2, i % 3, 1.0], dtype=np.float32), float(i % 2))
    for _ in range(5):
        agent.step()
    restored = pickle.loads(pickle.dumps(agent))
    assert all(np.shares_memory(p, restored.online.flat) for p in restored.online.params)
    x = np.array([[0, 0, 1], [1, 2, 1]], dtype=np.float32)
    for _ in range(7):
        agent.step()
        restored.step()
        assert np.array_equal(agent.q(x), restored.q(x))
    assert np.array_equal(agent.target.flat, restored.target.flat)


def test_comma_gives_each_anchor_model_its_own_column(tiny_web):
    policy, events = _crawl(tiny_web, "tres", anchor_model="reward,tfidf")
    features = policy.features
    assert features.n_features == 9 and features.anchor_columns == slice(5, 7) and features.hub_columns == slice(7, 9)
    x = features.outlink_features(-1, ["http://birds.test/b9"], ["birds nest"], ["birds.test"])
    assert x.shape == (1, 9)
    expected = [float(m.predict_proba(["birds nest"])[0]) for m in features.classifiers]
    assert x[0, 5:7].tolist() == pytest.approx(expected, abs=1e-6)
    assert x[0, 7:].tolist() == list(features.hub_values("birds.test"))
    assert len(events) == 25
    policy.frontier.check()
