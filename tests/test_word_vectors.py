"""The static word vectors' own split of plain ASCII text gives the tokenizer's ids, so sentence embeddings are
the same numbers whichever way a text is split."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from focuscrawl.topic.embeddings import load_word_vectors


@pytest.fixture(scope="module")
def vectors():
    return load_word_vectors()


def tokenizer_ids(vectors, text: str) -> list[int]:
    return vectors.tokenizer.encode(text, add_special_tokens=False).ids


ASCII = st.text(alphabet=st.characters(min_codepoint=0, max_codepoint=127), max_size=300)
ANY = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=120)


@settings(max_examples=300, deadline=None)
@given(text=st.one_of(ASCII, ANY))
@example(text="Photosynthesis, (C6H12O6) e-mail: a_b@c.org; x\x01y\tz\r\n!?")
@example(text="naïve café Straße 東京 — ½")
@example(text="")
def test_own_split_gives_the_tokenizers_ids(vectors, text):
    assert vectors.token_ids(text) == tokenizer_ids(vectors, text)


def test_a_long_text_is_truncated_as_the_tokenizer_truncates(vectors):
    text = " ".join(f"word{k} unbelievablyx, ;" for k in range(400))
    assert len(vectors.token_ids(text)) == len(tokenizer_ids(vectors, text)) == 512
    assert vectors.token_ids(text) == tokenizer_ids(vectors, text)


def test_embeddings_are_the_mean_of_the_tokenizers_token_vectors(vectors):
    texts = ["Birds build nests and lay eggs.", "naïve café", "", "?!", "x" * 150]
    expected = np.zeros((len(texts), vectors.dim), dtype=np.float32)
    for i, text in enumerate(texts):
        ids = [k for k in tokenizer_ids(vectors, text) if k != vectors.tokenizer.token_to_id("[UNK]")]
        if ids:
            mean = vectors.matrix[ids].mean(axis=0)
            expected[i] = mean / float(np.linalg.norm(mean))
    assert np.array_equal(vectors.embed(texts), expected)
