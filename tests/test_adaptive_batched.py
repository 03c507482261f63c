"""adaptive's per-page (batched) evidence equals its per-link definition, to the last bit: a crawl must not change.

``hashed_words``, ``OnlineLogistic.predict`` and ``TopicSimilarity._cosine`` over ``term_counts`` are the
definitions; ``hashed_words_many``, ``predict_many`` and ``TopicSimilarity.links`` compute the same for all of a
page's new links at once; ``linkwords.PageLinks`` computes the words of both models from one tokenisation.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from focuscrawl.policy import CrawlContext
from focuscrawl.strategies import make_policy
from focuscrawl.strategies.adaptive import (
    EVIDENCE,
    OWN,
    PATH_ZERO,
    OnlineLogistic,
    hashed_words,
    hashed_words_many,
    kernels,
    linkwords,
    models,
)
from focuscrawl.strategies.adaptive import evidence as evidence_module
from focuscrawl.strategies.adaptive.linkwords import Lexicon, PageLinks
from focuscrawl.strategies.frontier.link_context import anchor_windows
from focuscrawl.topic import similarity
from focuscrawl.topic.relevance import TfidfRelevanceModel
from focuscrawl.topic.similarity import TopicSimilarity, term_counts
from focuscrawl.topic.text import url_text
from focuscrawl.types import Link, Observation, Outlink, Page, TopicInputs
from focuscrawl.urls import registered_domain

WORDS = ["bird", "birds", "Owl", "OWLS", "nest", "nests", "the", "and", "species", "studies", "bus", "glass",
         "x", "42", "cs101", "index.html", "~jane", "é", "flies", "migration", "über", "a_b", "is"]
word = st.sampled_from(WORDS) | st.text(st.sampled_from("aZ9 ~./?_-éİß\u212a"), max_size=6)
phrase = st.lists(word, max_size=6).map(" ".join)
segment = st.sampled_from(["", "a", "Birds", "~jane", "x.HTML", "p7", "index.php", "b.c.d", "q?x=1", "%20", "é"])
url = st.builds(lambda scheme, host, parts, tail: f"{scheme}{host}/{'/'.join(parts)}{tail}",
                st.sampled_from(["http://", "https://", ""]), st.sampled_from(["h1.example", "a.b.test", "x"]),
                st.lists(segment, max_size=9), st.sampled_from(["", "/", "?q=1", "/~x", ".htm"]))

EXAMPLES = ["birds nest in the trees and owls hunt at night", "the bird species of the island migrate",
            "train station timetable and bus routes", "stock market prices fell today", "owl nests birds",
            "glass studies of buses"]
SIMILARITY = TopicSimilarity(EXAMPLES, [1, 1, 0, 0, 1, 0], ["bird", "owl migration"], [["train", "bus"], ["owl"]])


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(url, phrase), max_size=12))
def test_hashed_words_many_are_each_links_hashed_words(links):
    words, lengths = hashed_words_many([u for u, _ in links], [a for _, a in links])
    assert words.dtype == np.int32 and len(lengths) == len(links) and int(lengths.sum()) == len(words)
    parts = np.split(words, np.cumsum(lengths)[:-1]) if links else []
    assert [p.tolist() for p in parts] == [hashed_words(u, a).tolist() for u, a in links]


def test_hashed_words_many_stay_the_same_when_their_caches_are_emptied(monkeypatch):
    links = [(f"http://h{k % 7}.example/p{k}/x.html", f"bird {k} nest") for k in range(200)]
    expected = [hashed_words(u, a).tolist() for u, a in links]
    monkeypatch.setattr(models, "WORD_CACHE_SIZE", 5)  # full after five words: emptied again and again
    for name, empty in [("_URL_WORD_HASHES", models._WordHashes("u ")), ("_ANCHOR_WORD_HASHES",
                        models._WordHashes("a ")), ("_SHAPE_HASHES", {})]:
        monkeypatch.setattr(models, name, empty)
    words, lengths = hashed_words_many([u for u, _ in links], [a for _, a in links])
    assert [p.tolist() for p in np.split(words, np.cumsum(lengths)[:-1])] == expected
    assert len(models._URL_WORD_HASHES) <= 5 and len(models._SHAPE_HASHES) <= 5


_WEIGHTS = np.random.default_rng(0)
# weights of very different magnitudes: any change in the order of the additions would show in the rounding
_WEIGHTS = _WEIGHTS.normal(size=1 << models.HASH_BITS) * 10.0 ** _WEIGHTS.integers(-6, 3, size=1 << models.HASH_BITS)


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(0, 300), max_size=30), st.integers(0, 2**32 - 1), st.floats(-5, 5))
def test_predict_many_is_predict_of_each(lengths, seed, bias):
    rng = np.random.default_rng(seed)
    model = OnlineLogistic()
    model.w, model.bias = _WEIGHTS, bias
    features = rng.integers(0, len(model.w), size=sum(lengths)).astype(np.int32)
    parts = np.split(features, np.cumsum(lengths)[:-1]) if lengths else []
    assert model.predict_many(features, np.array(lengths)) == [model.predict(p) for p in parts]
    lengths = np.array(lengths, dtype=np.int64)  # the kernel's Python, which runs where numba is missing
    assert np.array_equal(kernels.hashed_sums.py_func(model.w, features, lengths),
                          kernels.hashed_sums(model.w, features, lengths), equal_nan=True)  # NaN: over 128


@settings(max_examples=100, deadline=None)
@given(st.lists(phrase | st.builds(lambda u, a: f"{url_text(u)} {a}", url, phrase), max_size=20))
def test_link_similarity_is_the_tf_idf_cosine_of_term_counts(texts):
    reference = SIMILARITY._cosine([term_counts(t) for t in texts], unknown_in_norm=False)
    assert SIMILARITY._link_cosine(texts).tolist() == reference.tolist()


def test_link_similarity_of_long_and_repetitive_texts_and_with_emptied_caches(monkeypatch):
    texts = ["birds " * 700 + "owl", "owl " * 3 + "nest nests nest bird", "", "the and is", "bus " * 2000]
    reference = SIMILARITY._cosine([term_counts(t) for t in texts], unknown_in_norm=False)
    assert SIMILARITY._link_cosine(texts).tolist() == reference.tolist()
    monkeypatch.setattr(similarity, "WORD_CACHE_SIZE", 2)
    monkeypatch.setattr(similarity, "_FOLD_CACHE", {})
    fresh = TopicSimilarity(EXAMPLES, [1, 1, 0, 0, 1, 0], ["bird", "owl migration"])
    assert fresh.links(texts)[:, 0].tolist() == SIMILARITY.links(texts)[:, 0].tolist()
    assert len(fresh._link_terms) <= 2 and len(similarity._FOLD_CACHE) <= 2


def _policy(classifier, window: int = 100):
    topic = TopicInputs("birds", ["bird", "owl"], EXAMPLES, [1, 1, 0, 0, 1, 0])
    policy = make_policy("adaptive", explore=0.0, window=window)
    policy.reset(CrawlContext(topic=topic, classifier=classifier, seeds=["http://h1.example/s"], budget=100, seed=0))
    return policy


def _page(policy, selection, relevance, links, text):
    outlinks = [Outlink(u, a, u.split("/")[2], True) for u, a in links]
    page = Page(selection.url, selection.url, 200, "text/html", "", text, [Link(u, a) for u, a in links])
    policy.observe(Observation(0, selection, page, relevance, float(relevance >= 0.5), outlinks))


@pytest.mark.parametrize("window", [100, 0])
def test_a_pages_new_links_get_the_evidence_each_would_get_alone(window):
    """Each new URL's OWN row as the per-link code made it: the classifier on its context, the topic words of its
    URL and anchor, the link model on its hashed words, the page's relevance, path and locality."""
    classifier = TfidfRelevanceModel().fit(EXAMPLES, [1, 1, 0, 0, 1, 0])
    policy = _policy(classifier, window)
    rng = np.random.default_rng(3)
    hosts = ["h1.example", "w.h1.example", "h2.test"]
    for step in range(25):
        selection = policy.select()
        links = [(f"http://{hosts[int(rng.integers(3))]}/p{int(rng.integers(400))}/n{step}",
                  " ".join(rng.choice(WORDS, size=int(rng.integers(0, 4))))) for _ in range(int(rng.integers(0, 12)))]
        text = " ".join(a + " " + " ".join(rng.choice(WORDS, size=5)) for _, a in links)
        relevance = float(rng.uniform())
        page_host = selection.url.split("/")[2]
        w = policy.graph.ids[selection.url]
        path = 1.0 if relevance >= 0.5 else 0.5 * float(policy.evidence.own_rows([w])[0, OWN.index("path")])
        before = set(policy.graph.urls)  # the index holds fingerprints; the URLs are the column
        model = OnlineLogistic()
        learned = policy.link_model
        model.w, model.bias, model.trained = learned.w.copy(), learned.bias, learned.trained
        model.learn(policy.evidence.words.get(w).copy(), float(relevance >= 0.5))  # what observe learns first
        _page(policy, selection, relevance, links, text)
        contexts = anchor_windows(text, [a for _, a in links], window)
        seen = set()
        for k, (u, a) in enumerate(links):
            if u in before or u in seen:
                continue
            seen.add(u)
            host = u.split("/")[2]
            same_domain = registered_domain(host) == registered_domain(page_host)
            local = 1.0 if host == page_host else 0.5 if same_domain else 0.0
            expected = [relevance, float(classifier.predict_proba([contexts[k]])[0]),
                        float(policy.similarity.links([f"{url_text(u)} {a}"])[0, 0]),
                        model.predict(hashed_words(u, a)) if model.trained else 0.5, path, local]
            assert policy.evidence.own_rows([policy.graph.ids[u]])[0].tolist() == expected


def test_a_known_url_linked_again_keeps_the_best_of_its_evidence():
    class Fixed:
        def predict_proba(self, texts):
            return np.array([0.8 if "bird" in t else 0.2 for t in texts])

    policy = _policy(Fixed(), window=0)
    seed = policy.select()
    _page(policy, seed, 0.3, [("http://h1.example/a", "bird"), ("http://h2.test/b", "x")], "")
    a, b = policy.graph.ids["http://h1.example/a"], policy.graph.ids["http://h2.test/b"]
    before = policy.evidence.own_rows([a, b])
    chosen = policy.select()
    other = b if policy.graph.urls[a] == chosen.url else a
    # the other URL, linked twice from a more relevant page on its own host
    _page(policy, chosen, 0.9, [(policy.graph.urls[other], "y"), (policy.graph.urls[other], "z")], "")
    row, old = policy.evidence.own_rows([other])[0], before[0 if other == a else 1]
    assert row[OWN.index("parent")] == 0.9 and row[OWN.index("path")] == 1.0
    assert row[OWN.index("anchor")] == old[OWN.index("anchor")], "a known URL keeps the context of its first link"
    assert row[OWN.index("local")] == max(old[OWN.index("local")],
                                          1.0 if chosen.url.split("/")[2] == policy.graph.urls[other].split("/")[2]
                                          else 0.0)


def _anchor_windows_link_by_link(text: str, anchors: list[str], width: int) -> list[str]:
    """anchor_windows as it was first written, anchor after anchor: the definition the faster one must match."""
    if width <= 0 or not text:
        return list(anchors)
    lower, half, next_from, out = text.lower(), width // 2, {}, []
    for anchor in anchors:
        key = anchor.strip().lower()
        at = lower.find(key, next_from.get(key, 0)) if key else -1
        if at < 0:
            out.append(anchor)
            continue
        next_from[key] = at + 1
        out.append(text[max(0, at - half): at + len(key) + half])
    return out


anchor_word = st.sampled_from(["owl", "Owl", "OWL ", " owl", "aa", "a", "", " ", "owl nest", "hawk", "é"])


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(st.lists(anchor_word | st.text(max_size=6), max_size=15), st.lists(anchor_word | st.text(max_size=4),
       max_size=40).map(" ".join), st.integers(0, 30), st.data())
def test_anchor_windows_of_some_anchors_are_theirs_among_all(anchors, text, width, data):
    everything = anchor_windows(text, anchors, width)
    assert everything == _anchor_windows_link_by_link(text, anchors, width)
    wanted = data.draw(st.lists(st.integers(0, max(len(anchors) - 1, 0)), unique=True, max_size=len(anchors)))
    assert anchor_windows(text, anchors, width, sorted(wanted)) == [everything[k] for k in sorted(wanted)]
    assert anchor_windows(text, anchors, width, wanted) == [everything[k] for k in wanted], "in the order asked"


def test_the_link_word_cache_is_not_checkpointed_and_checkpoints_without_it_load():
    import pickle

    texts = ["owl nest", "birds of the island", "http x.test/owls"]
    SIMILARITY.links(texts)
    state = pickle.dumps(SIMILARITY)
    assert b"_link_terms" not in state
    older = TopicSimilarity.__new__(TopicSimilarity)
    older.__dict__.update({k: v for k, v in SIMILARITY.__dict__.items() if k != "_link_terms"})  # an older checkpoint
    for loaded in (pickle.loads(state), pickle.loads(pickle.dumps(older))):
        assert loaded.links(texts).tolist() == SIMILARITY.links(texts).tolist()


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(url, phrase | st.lists(word, max_size=20).map(" ".join)), min_size=1, max_size=15))
def test_one_pass_over_a_pages_links_gives_each_models_own_numbers(links):
    """PageLinks (one tokenisation of each link) gives the very ints and float64s of hashed_words_many and
    TopicSimilarity.links, which tokenise each link themselves."""
    urls, anchors = [u for u, _ in links], [a for _, a in links]
    page = PageLinks(Lexicon(SIMILARITY), urls, anchors)
    words, lengths = page.hashed_words()
    expected_words, expected_lengths = hashed_words_many(urls, anchors)
    assert words.dtype == np.int32 and words.tolist() == expected_words.tolist()
    assert lengths.tolist() == expected_lengths.tolist()
    expected = SIMILARITY.links([f"{url_text(u)} {a}" for u, a in links])[:, 0]
    assert page.similarity().view(np.int64).tolist() == expected.view(np.int64).tolist()


def test_one_pass_numbers_survive_a_full_lexicon_long_texts_and_a_checkpoint(monkeypatch):
    import pickle

    links = [(f"http://h{k % 7}.example/p{k}/bird-{k % 3}.html", f"owl {k} nest nests " * (1 + k % 4))
             for k in range(60)] + [("http://x.test/" + "owl/" * 800, "birds " * 300)]  # over MAX_CHARS
    urls, anchors = [u for u, _ in links], [a for _, a in links]
    expected = SIMILARITY.links([f"{url_text(u)} {a}" for u, a in links])[:, 0]
    expected_words = hashed_words_many(urls, anchors)[0].tolist()
    monkeypatch.setattr(linkwords, "WORD_CACHE_SIZE", 40)  # emptied before most pages
    lexicon = Lexicon(SIMILARITY)
    for start in range(0, len(links), 7):
        page = PageLinks(lexicon, urls[start:start + 7], anchors[start:start + 7])
        assert page.similarity().tolist() == expected[start:start + 7].tolist()
        assert len(lexicon) <= 40 or start == 56  # the last page alone holds more words than that
    restored = pickle.loads(pickle.dumps(lexicon))
    assert len(restored) == 0 and restored.similarity.vocab == SIMILARITY.vocab  # a cache: not checkpointed
    assert PageLinks(restored, urls, anchors).hashed_words()[0].tolist() == expected_words



@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(0, 60), max_size=40), st.integers(0, 2**32 - 1), st.integers(0, 5))
def test_compiled_word_sums_are_bincounts_sums(lengths, seed, first):
    """The re-rank's per-URL sums of link weights (kernels.word_sums, compiled and as Python) are np.bincount's,
    bit for bit."""
    rng = np.random.default_rng(seed)
    words = rng.integers(0, len(_WEIGHTS), size=sum(lengths)).astype(np.int32)
    owners = np.repeat(np.arange(len(lengths)), lengths)
    expected = np.bincount(owners, weights=_WEIGHTS[words], minlength=len(lengths))
    for word_sums in (kernels.word_sums, kernels.word_sums.py_func):
        out = np.full(first + len(lengths), 7.0)
        word_sums(first, np.array(lengths, dtype=np.int64), words, _WEIGHTS, out)
        assert out[first:].view(np.int64).tolist() == expected.view(np.int64).tolist()


def test_one_pass_without_the_compiler_gives_the_same_numbers(monkeypatch):
    """Where numba is missing the kernels run as plain Python: the same numbers."""
    links = [(f"https://h{k % 5}.example/~u/p{k}/{'owl' if k % 2 else 'bus'}.html?x", f"owl nest nests {k} owl")
             for k in range(30)]
    urls, anchors = [u for u, _ in links], [a for _, a in links]
    compiled = PageLinks(Lexicon(SIMILARITY), urls, anchors)
    monkeypatch.setattr(linkwords, "link_features", kernels.link_features.py_func)
    plain = PageLinks(Lexicon(SIMILARITY), urls, anchors)
    assert plain.hashed_words()[0].tolist() == compiled.hashed_words()[0].tolist() == \
        hashed_words_many(urls, anchors)[0].tolist()
    assert plain.similarity().tolist() == compiled.similarity().tolist()


class _Half:
    def predict_proba(self, texts):
        return np.full(len(texts), 0.5)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.integers(1, 300), st.sampled_from([np.int32, np.int64]), st.booleans())
def test_evidence_rows_are_numpys_gathers_and_log1p(seed, count, dtype, blocks):
    """``Evidence.rows`` (compiled loops around numpy's log1p) against its definition in numpy: the graph's
    ``features_of``, OWN's ``own_rows`` and the hosts' ``evidence``, bit for bit, on sums of every magnitude and
    any host counts."""
    topic = TopicInputs("birds", ["bird"], ["bird nest", "train station"], [1, 0])
    policy = make_policy("adaptive", explore=0.0, window=0)
    policy.reset(CrawlContext(topic=topic, classifier=_Half(), seeds=["http://h0.test/s"], budget=10, seed=0))
    for step in range(2):
        selection = policy.select()
        links = [Outlink(f"http://h{k % 5}.test/{step}/{k}", "bird", f"h{k % 5}.test", True) for k in range(30)]
        page = Page(selection.url, selection.url, 200)
        policy.observe(Observation(step, selection, page, 0.5, 0.5, links))
    rng = np.random.default_rng(seed)
    graph, evidence = policy.graph, policy.evidence
    known = len(graph.urls)
    magnitude = 10.0 ** rng.integers(-300, 300, size=(known, 7))
    sums = rng.random((known, 7)) * magnitude * rng.choice([0.0, 1.0], size=(known, 7), p=[0.2, 0.8])
    graph.fl[:known], graph.sl[:known] = sums[:, :4], sums[:, 4:]
    evidence.own_scores[:known] = rng.random((known, 4))
    evidence.own_path[:known] = rng.integers(0, PATH_ZERO + 1, known)
    evidence.own_local[:known] = rng.integers(0, 3, known)
    hosts = evidence.hosts
    hosts.fetched[:] = rng.integers(0, 1000, len(hosts.fetched))
    hosts.relevant[:] = np.minimum(hosts.fetched, rng.integers(0, 1000, len(hosts.fetched)))
    hosts.ok[:] = np.minimum(hosts.fetched, rng.integers(0, 3, len(hosts.fetched)))
    hosts.fetched_total, hosts.relevant_total = int(hosts.fetched.sum()), int(hosts.relevant.sum())
    hosts.others_fetched = int(rng.integers(0, 10**6))
    ids = rng.integers(0, known, count).astype(dtype)
    expected = np.empty((count, len(EVIDENCE)))
    expected[:, :7] = graph.features_of(ids)
    expected[:, 7:13] = evidence.own_rows(ids)
    evidence.hosts.evidence(graph.host[ids], expected[:, 13:])
    if blocks:
        evidence_module.EVIDENCE_BLOCK, block = 7, evidence_module.EVIDENCE_BLOCK
    try:
        assert evidence.rows(ids).tobytes() == expected.tobytes()
    finally:
        if blocks:
            evidence_module.EVIDENCE_BLOCK = block
