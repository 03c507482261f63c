"""adaptive: its learners are the textbook ones, its evidence is what the docstring says, it explains itself."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import crawl_tiny

from focuscrawl.engine.defences.pipeline import PROBE
from focuscrawl.policy import CrawlContext
from focuscrawl.strategies import make_policy
from focuscrawl.strategies.adaptive import (
    EVIDENCE,
    LOCAL_VALUES,
    OWN,
    PATH_VALUES,
    PATH_ZERO,
    SCORES,
    OnlineLeastSquares,
    OnlineLogistic,
    encode_own,
    hashed_words,
    reasons,
)
from focuscrawl.types import Link, Observation, Outlink, Page, TopicInputs


def test_online_least_squares_is_the_ridge_solution_around_its_prior():
    rng = np.random.default_rng(0)
    X, prior = rng.normal(size=(40, 4)), np.array([0.5, 0.0, -0.2, 0.1])
    y = X @ np.array([1.0, -1.0, 0.5, 0.0]) + 0.1 * rng.normal(size=40)
    model = OnlineLeastSquares(prior, strength=3.0)
    for x, target in zip(X, y):
        model.learn(x, target)
    # argmin |y - Xw|^2 + 3 |w - prior|^2
    expected = np.linalg.solve(X.T @ X + 3.0 * np.eye(4), X.T @ y + 3.0 * prior)
    assert model.w == pytest.approx(expected, abs=1e-8)
    # with forgetting, old samples weigh less: the fit follows a change of regime
    drifting = OnlineLeastSquares(np.zeros(1), strength=1.0, forget=0.9)
    for target in [0.0] * 50 + [1.0] * 30:
        drifting.learn(np.ones(1), target)
    assert drifting.w[0] > 0.95


def test_online_logistic_learns_which_words_lead_to_relevant_pages():
    model = OnlineLogistic()
    good, bad = hashed_words("http://a.test/birds/owl", "owl"), hashed_words("http://a.test/trains/x", "engine")
    assert hashed_words("http://a.test/birds/owl", "owl").tolist() == good.tolist(), "deterministic hashing"
    for _ in range(30):
        model.learn(good, 1.0)
        model.learn(bad, 0.0)
    assert model.predict(good) > 0.9 > 0.1 > model.predict(bad)


class Quarter:
    """A classifier that says 0.25 to everything."""

    def fit(self, texts, labels):
        return self

    def predict_proba(self, texts):
        return np.full(len(texts), 0.25)


def _observe(policy, selection, relevance, links, text=""):
    page = Page(selection.url, selection.url, 200, "text/html", "", text, [Link(u, a) for u, a in links])
    policy.observe(Observation(0, selection, page, relevance, float(relevance >= 0.5),
                               [Outlink(u, a, "h.test", True) for u, a in links]))


def test_evidence_of_a_url_follows_its_parents():
    topic = TopicInputs("birds", ["bird"], ["bird nest", "train station"], [1, 0])
    policy = make_policy("adaptive", explore=0.0, window=0)
    policy.reset(CrawlContext(topic=topic, classifier=Quarter(), seeds=["http://h.test/s"], budget=10, seed=0))
    seed = policy.select()
    assert seed.url == "http://h.test/s" and seed.reason.startswith("a seed, predicted relevance")
    _observe(policy, seed, 0.9, [("http://h.test/a", "bird"), ("http://h.test/b", "train")])
    a = policy.graph.ids["http://h.test/a"]
    evidence = dict(zip(EVIDENCE, policy.evidence.rows(np.array([a]))[0]))
    assert evidence["parent"] == pytest.approx(0.9) and evidence["anchor"] == pytest.approx(0.25)
    assert evidence["path"] == 1.0, "a link from a relevant page"
    assert evidence["fl-deg"] == pytest.approx(np.log1p(1.0)) and evidence["fl-n"] == pytest.approx(np.log1p(0.9))
    # a second, irrelevant parent: the best parent stays, the sums grow, the path halves below it
    chosen = policy.select()
    other = "http://h.test/a" if chosen.url == "http://h.test/b" else "http://h.test/b"
    _observe(policy, chosen, 0.1, [(other, "bird again"), ("http://h.test/c", "x")])
    i, c = policy.graph.ids[other], policy.graph.ids["http://h.test/c"]
    rows = dict(zip(EVIDENCE, policy.evidence.rows(np.array([i]))[0])), dict(zip(EVIDENCE, policy.evidence.rows(
        np.array([c]))[0]))
    assert rows[0]["parent"] == pytest.approx(0.9) and rows[0]["fl-deg"] == pytest.approx(np.log1p(2.0))
    assert rows[1]["path"] == pytest.approx(0.5) and rows[1]["parent"] == pytest.approx(0.1)
    assert set(OWN) < set(EVIDENCE) and len(policy.model.w) == len(EVIDENCE) + 1


def test_it_learns_from_every_page_and_says_why(tiny_web):
    policy, events = crawl_tiny(tiny_web, "adaptive", budget=30)
    assert policy.model.w.tolist() != policy.prior.tolist(), "the weights moved with what the crawl found"
    observed = [e for e in events if e.verdict != PROBE]  # a soft-404 probe is the engine's fetch, not the policy's
    assert policy.link_model.trained == len(observed)
    reasons = [e.reason for e in observed]
    assert all(r.startswith(("predicted relevance", "exploring, by one kind of evidence alone: ", "a seed")) for r in
               reasons)
    assert any(e.score is not None for e in events)
    assert set(policy.diagnostics()) == {f"w_{name}" for name in [*EVIDENCE, "bias"]}


def test_bad_options_fail_early():
    with pytest.raises(ValueError, match="unknown evidence"):
        make_policy("adaptive", prior={"magic": 1.0})


def _explore_on(frontier_size: int, sample: int, monkeypatch) -> tuple[list[str], list[float], object]:
    """An adaptive policy that always explores a frontier of random evidence: the URLs it picks, and how far
    each is below the frontier's best by the evidence its reason says it followed."""
    from focuscrawl.strategies.adaptive import policy as adaptive_policy

    monkeypatch.setattr(adaptive_policy, "EXPLORE_SAMPLE", sample)
    topic = TopicInputs("birds", ["bird"], ["bird nest", "train station"], [1, 0])
    policy = make_policy("adaptive", explore=1.0, window=0)
    policy.reset(CrawlContext(topic=topic, classifier=Quarter(), seeds=["http://h.test/s"], budget=10, seed=0))
    _observe(policy, policy.select(), 0.5, [(f"http://h.test/{k}", "x") for k in range(frontier_size)])
    rng = np.random.default_rng(7)
    frontier = policy.graph.frontier()
    policy.evidence.own_scores[frontier] = rng.uniform(size=(frontier_size, len(SCORES)))
    policy.evidence.own_path[frontier] = rng.integers(0, PATH_ZERO + 1, size=frontier_size)
    policy.evidence.own_local[frontier] = rng.integers(0, 3, size=frontier_size)
    policy.graph.fl[frontier] = rng.uniform(size=(frontier_size, 4))  # the graph's evidence is log(1 + these)
    policy.graph.fl[frontier, 0] = rng.integers(1, 50, size=frontier_size)  # a count of crawled parents
    policy.graph.sl[frontier] = rng.uniform(size=(frontier_size, 3))
    urls, gaps = [], []
    for _ in range(5):
        frontier = policy.graph.frontier().copy()
        best = [float(policy.evidence.column(frontier, k).max()) for k in range(len(EVIDENCE))]
        chosen = policy.select()
        i, x = policy.graph.ids[chosen.url], chosen.memo  # memo: the evidence at selection time
        followed = [k for k in range(len(EVIDENCE)) if chosen.reason
                    == f"exploring, by one kind of evidence alone: {reasons.describe(policy.evidence, k, i, x[k])}"]
        assert len(followed) == 1, chosen.reason
        urls.append(chosen.url)
        gaps.append(best[followed[0]] - x[followed[0]])  # how far below the frontier's best by that evidence
    return urls, gaps, policy


def test_exploring_a_large_frontier_reads_a_sample_of_it_deterministically(monkeypatch):
    # frontier within the sample size: exploring picks the best URL of the whole frontier by one evidence
    urls, gaps, _ = _explore_on(50, 1000, monkeypatch)
    assert max(abs(g) for g in gaps) == 0 and len(set(urls)) == 5
    # frontier above it: the best of a uniform sample, the same sample for the same seed
    first = _explore_on(400, 40, monkeypatch)
    again = _explore_on(400, 40, monkeypatch)
    assert first[0] == again[0] and len(set(first[0])) == 5
    assert min(first[1]) >= 0 and max(first[1]) > 0, "a sample's best, not always the frontier's"
    unexplored = set(first[2].graph.urls[i] for i in first[2].graph.frontier())
    assert not unexplored & set(first[0]), "each explored URL left the frontier"


def test_local_evidence_groups_hosts_by_registered_domain():
    topic = TopicInputs("birds", ["bird"], ["bird nest", "train station"], [1, 0])
    policy = make_policy("adaptive", explore=0.0, window=0)
    policy.reset(CrawlContext(topic=topic, classifier=Quarter(), seeds=["http://cs.ox.ac.uk/s"], budget=10, seed=0))
    seed = policy.select()
    links = [("http://cs.ox.ac.uk/a", "cs.ox.ac.uk"), ("http://maths.ox.ac.uk/b", "maths.ox.ac.uk"),
             ("http://cam.ac.uk/c", "cam.ac.uk")]
    page = Page(seed.url, seed.url, 200, "text/html", "", "", [Link(u, "x") for u, _ in links])
    policy.observe(Observation(0, seed, page, 0.5, 0.0, [Outlink(u, "x", host, True) for u, host in links]))
    local = [policy.evidence.own_rows([policy.graph.ids[u]])[0, OWN.index("local")] for u, _ in links]
    assert local == [1.0, 0.5, 0.0], "ox.ac.uk is one organisation; ac.uk is a public suffix, not a domain"
    seed_host = policy.graph.host[policy.graph.ids[seed.url]]
    # a host the graph has not numbered (a link's host other than the one its URL was first seen with): by name
    hosts = ["cs.ox.ac.uk", "www.ox.ac.uk", "maths.ox.ac.uk", "cam.ac.uk"]
    assert policy.hosts.local_halves(seed_host, hosts).tolist() == [2, 1, 1, 0]


def test_rare_evidence_is_one_minus_the_hosts_share_of_the_fetches():
    topic = TopicInputs("birds", ["bird"], ["bird nest", "train station"], [1, 0])
    policy = make_policy("adaptive", explore=0.0, window=0)
    policy.reset(CrawlContext(topic=topic, classifier=Quarter(), seeds=["http://a.test/s"], budget=10, seed=0))
    seed = policy.select()
    links = [("http://a.test/1", "bird"), ("http://a.test/2", "bird"), ("http://b.test/3", "x")]
    page = Page(seed.url, seed.url, 200, "text/html", "", "", [Link(u, a) for u, a in links])
    policy.observe(Observation(0, seed, page, 0.9, 1.0, [Outlink(u, a, u.split("/")[2], True) for u, a in links]))
    second = policy.select()
    _observe(policy, second, 0.1, [])
    assert second.url.startswith("http://a.test/"), "the model trusts nothing yet: the earliest discovered URL"
    rare = {u: dict(zip(EVIDENCE, policy.evidence.rows(np.array([policy.graph.ids[u]]))[0]))["rare"]
            for u in ("http://a.test/1", "http://a.test/2", "http://b.test/3")}
    assert rare["http://b.test/3"] == 1.0, "a host the crawl has not fetched from"
    left = "http://a.test/2" if second.url == "http://a.test/1" else "http://a.test/1"
    assert rare[left] == 0.0, "both fetches so far were a.test's"


def test_own_evidence_is_stored_compactly_and_decodes_to_the_same_floats():
    # path: every power of 1/2 a crawl can reach by halving 1.0, down to 0.0; local: 0, 0.5, 1
    halved = [1.0]
    while halved[-1] > 0:
        halved.append(0.5 * halved[-1])
    rows = [(0.3, 0.1, 0.7, 0.5, path, [0.0, 0.5, 1.0][k % 3]) for k, path in enumerate(halved)]
    scores, halvings, halves = encode_own(rows)
    assert halvings.dtype == np.int16 and halves.dtype == np.int8 and len(halved) == PATH_ZERO + 1
    decoded = np.column_stack([scores, PATH_VALUES[halvings], LOCAL_VALUES[halves]])
    assert decoded.tobytes() == np.array(rows).tobytes(), "bit for bit the floats that went in"
    for bad in ((0.3, 0.1, 0.7, 0.5, 0.75, 0.0), (0.3, 0.1, 0.7, 0.5, 1.0, 0.25), (0.3, 0.1, 0.7, 0.5, 2.0, 0.0)):
        with pytest.raises(ValueError, match="power of 1/2"):
            encode_own([bad])


def test_evidence_gathered_in_blocks_and_per_host_is_the_same_as_row_by_row(monkeypatch):
    from focuscrawl.strategies.adaptive import evidence

    topic = TopicInputs("birds", ["bird"], ["bird nest", "train station"], [1, 0])
    policy = make_policy("adaptive", explore=0.0, window=0)
    policy.reset(CrawlContext(topic=topic, classifier=Quarter(), seeds=["http://h0.test/s"], budget=10, seed=0))
    for step in range(3):
        _observe(policy, policy.select(), 0.25 * step, [(f"http://h{k % 4}.test/{step}/{k}", "bird" * (k % 2))
                                                         for k in range(40)])
    frontier = policy.graph.frontier().copy()
    assert len(frontier) > len(policy.hosts.names), "more URLs than hosts: the per-host path"
    whole = policy.evidence.rows(frontier)
    monkeypatch.setattr(evidence, "EVIDENCE_BLOCK", 3)
    assert policy.evidence.rows(frontier).tobytes() == whole.tobytes()
    one_by_one = np.concatenate([policy.evidence.rows(frontier[k:k + 1]) for k in range(len(frontier))])
    assert one_by_one.tobytes() == whole.tobytes(), "each row as when it is predicted alone"


def test_a_host_that_took_a_share_of_the_crawl_without_paying_back_is_left_for_others():
    topic = TopicInputs("birds", ["bird"], ["bird nest", "train station"], [1, 0])
    policy = make_policy("adaptive", explore=0.0, window=0, leave_share=0.1)
    policy.reset(CrawlContext(topic=topic, classifier=Quarter(), seeds=["http://big.test/s"], budget=100, seed=0))
    seed = policy.select()
    links = [("http://big.test/1", "bird"), ("http://big.test/2", "bird"), ("http://small.test/3", "x"),
             ("http://other.test/4", "x")]
    page = Page(seed.url, seed.url, 200, "text/html", "", "", [Link(u, a) for u, a in links])
    policy.observe(Observation(0, seed, page, 0.1, 0.0, [Outlink(u, a, u.split("/")[2], True) for u, a in links]))
    big, small, other = (policy.hosts.number(h) for h in ("big.test", "small.test", "other.test"))
    policy._rerank()
    assert policy.graph.urls[policy.ranking.best(None, 1.0)].startswith("http://big.test/"), "earliest first"
    for _ in range(40):  # 40 more of big.test's pages (41 with the seed), none relevant; 10 elsewhere, 5 relevant
        policy.hosts.count(big, False, True)
    for relevant in [True, False] * 5:
        policy.hosts.count(other, relevant, True)
    policy._rerank()
    assert policy.hosts.left(0.1)[big] and not policy.hosts.left(0.1)[small]
    assert not policy.graph.urls[policy.ranking.best(None, 1.0)].startswith("http://big.test/")
    taken = [policy.select() for _ in range(2)]  # the other sites' two URLs, then the left site's, and why
    assert not any(s.url.startswith("http://big.test/") for s in taken)
    last = policy.select()
    assert last.url.startswith("http://big.test/") and last.reason.startswith("its site left for others (0 of 41")
    assert -1 < last.score < 2, "the score is the prediction without the ranking's penalty"
    for _ in range(400):  # the others' pages stop paying back too: big.test is no worse than the rest
        policy.hosts.count(other, False, True)
    policy._rerank()
    assert not policy.hosts.left(0.1)[big]
    alone = make_policy("adaptive", explore=0.0, window=0, leave_share=0.1)
    alone.reset(CrawlContext(topic=topic, classifier=Quarter(), seeds=["http://big.test/s"], budget=100, seed=0))
    for _ in range(40):
        alone.hosts.count(alone.hosts.number("big.test"), False, True)
    assert not alone.hosts.left(0.1).any(), "a host alone in the crawl is never left"
