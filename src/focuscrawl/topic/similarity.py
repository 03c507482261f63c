"""Cosine similarity of tf-idf vectors against a topic: the text relevance Han et al. and Kaleel & Sheen use.

Both papers score a page (or a link's URL and anchor text) by the cosine between its tf-idf vector and a
"word vector of the target topic". Neither says which corpus the idf comes from nor what the topic vector
holds, so we choose, for every strategy that uses this module:

- vocabulary and idf come from the topic's example texts (``TopicInputs.example_texts``, both classes): the
  only corpus a user hands the crawler. Smoothed idf ``ln((1 + N) / (1 + df)) + 1`` as scikit-learn; a word
  never seen in the examples gets the largest idf and still counts in a page's norm (a page full of unknown
  words is not on topic), but not in a link text's norm (URL words such as ``htm`` or a host name would
  otherwise drown the two or three words an anchor has);
- term frequency is sublinear (``1 + ln tf``); texts are cut to their first ``MAX_CHARS`` characters, which
  bounds the per-page cost (Wikispeedia articles run to 30k characters) and, measured on the Wikispeedia
  topics, separates relevant pages better than whole articles do (a page's lead states its subject);
- the *topic* vector is the sum of two unit vectors: the centroid of the on-topic example texts and the
  topic's keywords. The centroid carries the topic's vocabulary, the keywords the words the user typed;
- a *category* vector (Han et al.'s related categories) is the tf-idf vector of that category's keywords;
- tokens are ``focuscrawl.topic.text.terms`` (lower-case alphanumeric runs of two or more characters),
  English stop words removed, with a light plural folding (``birds`` -> ``bird``) so that keywords match
  running text;
- scale: raw cosines against a many-word centroid are small (on-topic pages around 0.15), which would put
  nearly every value in the first bucket of Han et al.'s discretisation. Each column is therefore divided by
  a reference and clipped to [0, 1]: for pages, the 90th percentile the on-topic example texts reach; for
  link texts, the cosine of the column's own keywords (a link whose text is a topic keyword scores 1).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import numpy as np

from focuscrawl.topic.text import STOPWORDS, terms

MAX_CHARS = 3000
# Word caches are bounded (emptied when full): URLs bring words that never recur (page numbers, ids), and a
# crawl of millions of URLs would otherwise keep every one of them. 65,536 words of a cache take about 10 MB;
# the words that do recur (hosts, path words, anchor vocabulary) come back after each emptying.
WORD_CACHE_SIZE = 1 << 16
_FOLD_CACHE: dict[str, str | None] = {}


def _fold(word: str) -> str | None:
    """Stop word -> None, else light plural folding; cached because the same words recur on every page."""
    if word in _FOLD_CACHE:
        return _FOLD_CACHE[word]
    if len(_FOLD_CACHE) >= WORD_CACHE_SIZE:
        _FOLD_CACHE.clear()
    folded: str | None = word
    if word in STOPWORDS:
        folded = None
    elif len(word) > 4 and word.endswith("ies"):
        folded = word[:-3] + "y"
    elif len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        folded = word[:-1]
    _FOLD_CACHE[word] = folded
    return folded


def term_counts(text: str) -> Counter[str]:
    """Normalised term counts of a text or a URL (the first ``MAX_CHARS`` characters)."""
    raw = Counter(terms(text[:MAX_CHARS]))  # counting raw tokens first runs in C
    counts: Counter[str] = Counter()
    for word, count in raw.items():
        folded = _fold(word)
        if folded is not None:
            counts[folded] += count
    return counts


class TopicSimilarity:
    """Scaled tf-idf cosine of texts against the topic (column 0) and each category (columns 1..C)."""

    def __init__(self, example_texts: Sequence[str], example_labels: Sequence[int], keywords: Sequence[str],
                 categories: Sequence[Sequence[str]] = ()):
        docs = [term_counts(text) for text in example_texts]
        df: Counter[str] = Counter()
        for doc in docs:
            df.update(doc.keys())
        phrases = list(keywords) + [k for cat in categories for k in cat]
        self.vocab: dict[str, int] = {}
        self._link_terms: dict[str, tuple[int, float] | None] = {}  # links(): a raw word's column and idf
        for term in list(df) + [t for phrase in phrases for t in term_counts(phrase)]:
            self.vocab.setdefault(term, len(self.vocab))
        n = len(docs)
        self.idf = np.array([math.log((1 + n) / (1 + df.get(t, 0))) + 1.0 for t in self.vocab])
        self.idf_unknown = math.log(1 + n) + 1.0
        self.n_categories = len(categories)

        centroid = np.zeros(len(self.vocab))
        for doc, label in zip(docs, example_labels):
            if label == 1:
                centroid += self._dense(doc)
        topic = _unit(_unit(centroid) + self._dense(term_counts(" ".join(keywords))))
        columns = [topic] + [self._dense(term_counts(" ".join(cat))) for cat in categories]
        self.matrix = np.stack(columns, axis=1)  # (vocabulary, 1 + categories), unit columns
        self.page_scale = np.ones(self.matrix.shape[1])
        self.link_scale = np.ones(self.matrix.shape[1])

        raw = self._cosine(docs, unknown_in_norm=True)
        positives = raw[np.asarray(example_labels) == 1]
        for j in range(self.matrix.shape[1]):
            reference = float(np.percentile(positives[:, j], 90)) if len(positives) else 0.0
            if reference <= 0:
                reference = float(raw[:, j].max()) if len(raw) else 0.0
            self.page_scale[j] = reference if reference > 0 else 1.0
        keyword_scores = self._cosine([term_counts(k) for k in keywords], unknown_in_norm=False)[:, 0]
        if len(keyword_scores) and keyword_scores.max() > 0:
            self.link_scale[0] = float(keyword_scores.max())

    def __getstate__(self) -> dict:
        # the word cache is derived from the vocabulary: not stored in checkpoints, refilled as links come
        return {k: v for k, v in self.__dict__.items() if k != "_link_terms"}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._link_terms = {}

    def _dense(self, counts: Counter[str]) -> np.ndarray:
        """Unit tf-idf vector of a document's in-vocabulary terms (used to build topic vectors)."""
        vector = np.zeros(len(self.vocab))
        for term, count in counts.items():
            index = self.vocab.get(term)
            if index is not None:
                vector[index] = (1.0 + math.log(count)) * self.idf[index]
        return _unit(vector)

    def _cosine(self, docs: Sequence[Counter[str]], unknown_in_norm: bool) -> np.ndarray:
        ids: list[int] = []
        vals: list[float] = []
        lengths = np.zeros(len(docs), dtype=np.int64)
        norms = np.zeros(len(docs))
        for i, doc in enumerate(docs):
            squared = 0.0
            before = len(ids)
            for term, count in doc.items():
                tf = 1.0 + math.log(count)
                index = self.vocab.get(term)
                if index is None:
                    if unknown_in_norm:
                        squared += (tf * self.idf_unknown) ** 2
                    continue
                weight = tf * self.idf[index]
                squared += weight * weight
                ids.append(index)
                vals.append(weight)
            lengths[i] = len(ids) - before
            norms[i] = math.sqrt(squared)
        return self._scores(ids, vals, lengths, norms)

    def _scores(self, ids: list[int], vals: list[float], lengths: np.ndarray, norms: np.ndarray) -> np.ndarray:
        """Cosines of documents given as their in-vocabulary (column, tf-idf weight) pairs, document after
        document (``lengths`` pairs each), and their tf-idf norms."""
        scores = np.zeros((len(lengths), self.matrix.shape[1]))
        if len(ids):
            # Sparse x dense without scipy's per-call overhead: gather the topic rows, sum per document.
            weighted = self.matrix[np.asarray(ids)] * np.asarray(vals)[:, None]
            starts = np.concatenate([[0], np.cumsum(lengths)[:-1]])
            filled = lengths > 0
            scores[filled] = np.add.reduceat(weighted, starts[filled], axis=0)
        return scores / np.maximum(norms, 1e-12)[:, None]

    def pages(self, texts: Sequence[str]) -> np.ndarray:
        """Relevance of page texts: array (len(texts), 1 + categories) in [0, 1]."""
        raw = self._cosine([term_counts(t) for t in texts], unknown_in_norm=True)
        return np.clip(raw / self.page_scale, 0.0, 1.0)

    def links(self, texts: Sequence[str]) -> np.ndarray:
        """Relevance of short link texts (URL words, anchor): array (len(texts), 1 + categories) in [0, 1]."""
        return np.clip(self._link_cosine(texts) / self.link_scale, 0.0, 1.0)

    def _link_cosine(self, texts: Sequence[str]) -> np.ndarray:
        """``_cosine([term_counts(t) for t in texts], unknown_in_norm=False)``, the same numbers at a fraction
        of the cost: a crawl scores a page's every new link, a few words each. Words outside the vocabulary
        count for nothing here, so each raw word maps straight to its folded term's (column, idf), cached; the
        columns are counted in the order term_counts meets their terms, so the sums add up in the same order.
        A term seen once weighs its idf: (1 + ln 1) * idf is idf exactly."""
        entries = self._link_terms
        ids: list[int] = []
        vals: list[float] = []
        lengths = np.zeros(len(texts), dtype=np.int64)
        norms = np.zeros(len(texts))
        for i, text in enumerate(texts):
            counts: dict[tuple[int, float], int] = {}
            for word in terms(text[:MAX_CHARS]):
                entry = entries.get(word, _UNSEEN)
                if entry is _UNSEEN:
                    entry = self._link_term(word)
                if entry is not None:
                    counts[entry] = counts.get(entry, 0) + 1
            squared = 0.0
            for (index, idf), count in counts.items():
                weight = idf if count == 1 else (1.0 + math.log(count)) * idf
                squared += weight * weight
                ids.append(index)
                vals.append(weight)
            lengths[i] = len(counts)
            norms[i] = math.sqrt(squared)
        return self._scores(ids, vals, lengths, norms)

    def link_scores(self, ids: np.ndarray, vals: np.ndarray, lengths: np.ndarray, norms: np.ndarray) -> np.ndarray:
        """``links`` of texts given as their terms' (column, tf-idf weight) pairs, text after text (``lengths``
        pairs each), and their norms, as ``_link_cosine`` computes them (for a caller that tokenised the texts
        itself: ``strategies.adaptive.linkwords``)."""
        return np.clip(self._scores(ids, vals, lengths, norms) / self.link_scale, 0.0, 1.0)

    def link_term(self, word: str) -> tuple[int, float] | None:
        """The column and idf of a raw word's folded term, None for a stop word or a term outside the vocabulary."""
        folded = _fold(word)
        index = self.vocab.get(folded) if folded is not None else None
        return None if index is None else (index, float(self.idf[index]))

    def _link_term(self, word: str) -> tuple[int, float] | None:
        """``link_term``, remembered."""
        if len(self._link_terms) >= WORD_CACHE_SIZE:
            self._link_terms.clear()
        entry = self._link_terms[word] = self.link_term(word)
        return entry


_UNSEEN = object()  # a cache's "not looked up yet", where None is an answer


def _unit(vector: np.ndarray) -> np.ndarray:
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else vector
