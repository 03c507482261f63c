"""The judges' batched answers (``topic.kernels``, compiled and as Python) equal their per-text definitions, to
the last bit: a crawl's decisions read them, and must not change.

The definitions are the code the batches replaced, kept here: ``TfidfRelevanceModel``'s formula text by text
(sublinear tf x idf, L2-normalised, dot the logistic weights, in Python floats) and ``WordVectors.embed``'s mean
and norm of a text's token vectors by numpy, text by text.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from focuscrawl.topic import embeddings, kernels
from focuscrawl.topic.embeddings import load_word_vectors

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
        monkeypatch.setattr(embeddings, "mean_token_vectors", kernels.mean_token_vectors.py_func)
    return request.param == "python"


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
