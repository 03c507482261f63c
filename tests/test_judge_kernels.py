"""The judges' batched answers (``topic.kernels``, compiled and as Python) equal their per-text definitions, to
the last bit: a crawl's decisions read them, and must not change.

The definitions are the code the batches replaced, kept here: ``TfidfRelevanceModel``'s formula text by text
(sublinear tf x idf, L2-normalised, dot the logistic weights, in Python floats) and ``WordVectors.embed``'s mean
and norm of a text's token vectors by numpy, text by text.
"""

from __future__ import annotations

import math
from collections import Counter
from itertools import repeat

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from focuscrawl.topic import embeddings, kernels, relevance
from focuscrawl.topic.embeddings import load_word_vectors
from focuscrawl.topic.relevance import TfidfRelevanceModel

EXAMPLES = ["Birds build nests, lay eggs and migrate; a bird has feathers, wings and a beak. Bird bird nests.",
            "The songbird sang at dawn; its plumage and flight feathers help the bird fly to the nest.",
            "Eagles and owls are birds of prey that hunt small animals from the air, owls at night.",
            "The railway timetable lists trains from the central station every hour, trains and buses.",
            "Interest rates and the stock market moved after the central bank's decision on rates.",
            "Compile the kernel module with make and load it with modprobe as root; the kernel panics."]
LABELS = [1, 1, 1, 0, 0, 0]
WORDS = ["bird", "birds", "Owl", "nests", "the", "and", "feathers", "railway", "trains", "kernel", "rates",
         "migrate", "é", "naïve", "x", "42", "owls", "eggs", "central", "station", "e-mail", "C6H12O6", "東京"]
text = (st.lists(st.sampled_from(WORDS) | st.text(max_size=8), max_size=40).map(" ".join)
        | st.text(max_size=200))


@pytest.fixture(scope="module")
def tfidf() -> TfidfRelevanceModel:
    return TfidfRelevanceModel(seed=0).fit(EXAMPLES, LABELS)


def probability_text_by_text(model: TfidfRelevanceModel, text: str) -> float:
    """The TF-IDF judge's probability of one text as it was computed before batches (the definition)."""
    vocabulary, idf, coef = model.vectorizer.vocabulary_, model.vectorizer.idf_, model.model.coef_[0]
    weights = {term: (float(idf[j]), float(coef[j])) for term, j in vocabulary.items()}
    terms = model._analyze(text)
    counted = Counter(terms).items() if len(set(terms)) < len(terms) else zip(terms, repeat(1))
    norm_sq = dot = 0.0
    for term, count in counted:
        known = weights.get(term)
        if known is None:
            continue
        term_idf, term_coef = known
        weight = (1.0 + math.log(count)) * term_idf if count > 1 else term_idf
        norm_sq += weight * weight
        dot += weight * term_coef
    logit = float(model.model.intercept_[0]) + (dot / math.sqrt(norm_sq) if norm_sq > 0 else 0.0)
    return 1.0 / (1.0 + math.exp(-logit)) if logit >= 0 else math.exp(logit) / (1.0 + math.exp(logit))


def embed_text_by_text(vectors, texts: list[str], max_chars: int = 2000) -> np.ndarray:
    """``WordVectors.embed`` as it was computed before batches (the definition): numpy, text by text."""
    out = np.zeros((len(texts), vectors.dim), dtype=np.float32)
    rows = len(vectors.matrix)
    for i, one in enumerate(texts):
        ids = [k for k in vectors.token_ids(one[:max_chars]) if k != vectors._unk and k < rows]
        if ids:
            vector = np.add.reduce(vectors.matrix[ids], axis=0)
            np.true_divide(vector, np.intp(len(ids)), out=vector, casting="unsafe")
            norm = float(np.sqrt(vector.dot(vector)))
            out[i] = vector / norm if norm > 0 else vector
    return out


def same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


@pytest.fixture(params=["compiled", "python"])
def as_python(request, monkeypatch) -> bool:
    """Each test twice: with the compiled loops, and with the same loops run as Python (a machine without numba)."""
    if request.param == "python":
        monkeypatch.setattr(relevance, "tfidf_logits", kernels.tfidf_logits.py_func)
        monkeypatch.setattr(embeddings, "mean_token_vectors", kernels.mean_token_vectors.py_func)
        monkeypatch.setattr(relevance, "known_term_columns", kernels.known_term_columns.py_func)
    return request.param == "python"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(text, min_size=1, max_size=12))
@example(texts=["", "bird bird bird nests nests", "the and", "railway " * 300, EXAMPLES[0], "xyz"])
def test_a_batch_of_tfidf_probabilities_is_each_texts_own(tfidf, as_python, texts):
    expected = np.array([probability_text_by_text(tfidf, t) for t in texts])
    assert same_bits(tfidf.predict_proba(texts), expected)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(text, min_size=1, max_size=8))
@example(texts=["bird nests the bird nests " * 3 + EXAMPLES[1], "", "the and of", "bird", EXAMPLES[3]])
def test_known_columns_are_the_analyzers_terms_in_the_vocabulary(tfidf, as_python, texts):
    # the word-pair table against the terms the analyzer builds (``_analyzed_columns``): the same columns, in order
    assert isinstance(tfidf._known_columns, relevance.WordPairTable)  # the table is in use for these settings
    columns, starts = tfidf._known_columns(texts)
    expected_columns, expected_starts = tfidf._analyzed_columns(texts)
    assert columns.tolist() == expected_columns.tolist() and starts.tolist() == expected_starts.tolist()


def test_tfidf_answers_on_long_pages_and_after_a_pickle(tfidf, as_python):
    import pickle

    pages = [" ".join(EXAMPLES * k) for k in (1, 7, 40)] + ["bird " * 5000]  # counts past any table so far
    expected = np.array([probability_text_by_text(tfidf, t) for t in pages])
    assert same_bits(tfidf.predict_proba(pages), expected)
    assert same_bits(pickle.loads(pickle.dumps(tfidf)).predict_proba(pages), expected)


def test_log_tf_is_math_log():
    table = kernels.log_tf(3000)
    assert len(table) > 3000 and table[0] == 0.0
    assert all(table[c] == 1.0 + math.log(c) for c in range(1, 3001))


@pytest.fixture(scope="module")
def vectors():
    return load_word_vectors()


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(text, max_size=12))
@example(texts=["Birds build nests and lay eggs.", "naïve café", "", "?!", "x" * 150, "[UNK] 東京 ½", "a " * 900])
def test_a_batch_of_embeddings_is_each_texts_own(vectors, as_python, texts):
    assert same_bits(vectors.embed(texts), embed_text_by_text(vectors, texts))
    assert same_bits(vectors.embed(texts, 40), embed_text_by_text(vectors, texts, 40))


def test_embeddings_of_many_texts_of_every_length(vectors):
    rng = np.random.default_rng(7)
    vocabulary = vectors.vocabulary
    texts = [" ".join(rng.choice(vocabulary, size=int(rng.integers(0, 120)))) for _ in range(400)]
    assert same_bits(vectors.embed(texts), embed_text_by_text(vectors, texts))
