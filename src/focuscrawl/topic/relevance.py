"""Relevance classifiers: page text -> P(on topic). The agent's own judge, and so its reward."""

from __future__ import annotations

import hashlib
import itertools
import math
import re
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np
import scipy.sparse
from sklearn.base import clone
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression

from focuscrawl.topic.kernels import known_term_columns, log_tf, tfidf_logits
from focuscrawl.types import RelevanceModel, decision_point

_FITTED_VECTORIZERS: OrderedDict[tuple, tuple[TfidfVectorizer, scipy.sparse.csr_matrix]] = OrderedDict()
_FITTED_VECTORIZERS_KEPT = 4


def fit_vectorizer(vectorizer: TfidfVectorizer,
                   texts: Sequence[str]) -> tuple[TfidfVectorizer, scipy.sparse.csr_matrix]:
    """``vectorizer.fit_transform(texts)``, remembered for the last few (settings, texts) of the process.

    A benchmark trains TF-IDF models on the same example texts again and again (the oracle's reward, then
    TRES's anchor model once per run with that run's seed), and on full example pages the vocabulary count
    and sort take about 2 s, while the fitted vocabulary depends only on the settings and the texts. The
    returned vectorizer is a fitted copy, possibly shared between models: they only read it after fitting.
    """
    texts = list(texts)
    digest = hashlib.blake2b(digest_size=16)
    for text in texts:
        digest.update(text.encode("utf-8", "surrogatepass"))
        digest.update(b"\0")
    key = (repr(sorted(vectorizer.get_params().items())), len(texts), digest.hexdigest())
    if key in _FITTED_VECTORIZERS:
        _FITTED_VECTORIZERS.move_to_end(key)
    else:
        fitted = clone(vectorizer)  # never refit the caller's object: it may be a shared, cached one
        _FITTED_VECTORIZERS[key] = (fitted, fitted.fit_transform(texts))
        while len(_FITTED_VECTORIZERS) > _FITTED_VECTORIZERS_KEPT:
            _FITTED_VECTORIZERS.popitem(last=False)
    return _FITTED_VECTORIZERS[key]


class TfidfRelevanceModel:
    """TF-IDF over words and bigrams + logistic regression, the classic focused-crawler page classifier.

    Class weights are balanced because topic samples are usually small next to the negatives. The seed
    makes the (deterministic by default) solver's tie-breaking reproducible all the same.
    """

    def __init__(self, seed: int = 0, max_features: int = 50_000):
        self.vectorizer = TfidfVectorizer(
            lowercase=True, ngram_range=(1, 2), min_df=1, max_features=max_features, sublinear_tf=True,
            stop_words="english",
        )
        self.model = LogisticRegression(C=10.0, class_weight="balanced", max_iter=2000, random_state=seed)

    def fit(self, texts: Sequence[str], labels: Sequence[int]) -> TfidfRelevanceModel:
        self.vectorizer, features = fit_vectorizer(self.vectorizer, texts)
        self.model.fit(features, np.asarray(labels, dtype=int))
        self._prepare_fast_path()
        return self

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        if len(texts) == 0:
            return np.zeros(0)
        # The vocabulary columns of every text's known terms in the analyzer's order (terms outside the
        # vocabulary add nothing to the formula), concatenated, and the model's arithmetic for all of them in one
        # compiled pass (``kernels.tfidf_logits``): the same float64s as the formula text by text, at a fraction
        # of Python's cost per term.
        columns, starts = self._known_columns(texts)
        table = log_tf(int(np.diff(starts).max()))  # no term of a text is met more often than it has known terms
        logits = tfidf_logits(columns, starts, self._idf, self._coef, table, self._intercept)
        return np.fromiter(map(_sigmoid, logits.tolist()), dtype=float, count=len(texts))

    def predict_proba_sklearn(self, texts: Sequence[str]) -> np.ndarray:
        """The same probabilities through scikit-learn's sparse pipeline (the reference for the fast path)."""
        return self.model.predict_proba(self.vectorizer.transform(list(texts)))[:, 1]

    # A crawl scores one page or a page's anchors at a time. scikit-learn's transform + predict costs about
    # 40 us of validation and sparse-matrix set-up per text whatever its length, which dominated the agents'
    # decision time on anchors; the formula of ``kernels.tfidf_logits`` is the same model (sublinear tf x idf,
    # L2-normalised, dot the logistic weights), term by term with the vectorizer's own analyzer.
    def _prepare_fast_path(self) -> None:
        self._analyze = _fast_word_ngrams(self.vectorizer) or self.vectorizer.build_analyzer()
        self._columns = {term: int(j) for term, j in self.vectorizer.vocabulary_.items()}
        self._known_columns = WordPairTable.of(self.vectorizer, self._columns) or self._analyzed_columns
        self._idf = np.ascontiguousarray(self.vectorizer.idf_, dtype=np.float64)
        self._coef = np.ascontiguousarray(self.model.coef_[0], dtype=np.float64)
        self._intercept = float(self.model.intercept_[0])

    def _analyzed_columns(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """The vocabulary columns of each text's analyzer terms that are in the vocabulary, in its order, texts
        concatenated, and where each text's start (``starts[i]:starts[i + 1]``)."""
        known = [[j for j in map(self._columns.get, self._analyze(text)) if j is not None] for text in texts]
        starts = np.fromiter(itertools.accumulate(map(len, known), initial=0), np.int64, len(known) + 1)
        return np.fromiter(itertools.chain.from_iterable(known), np.int64, int(starts[-1])), starts

    def __getstate__(self) -> dict:
        # the fast-path tables are derived from the fitted model: rebuilt after loading, not stored
        return {k: v for k, v in self.__dict__.items() if k not in _FAST_PATH}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        if hasattr(self.model, "coef_"):
            self._prepare_fast_path()


_FAST_PATH = ("_analyze", "_columns", "_known_columns", "_idf", "_coef", "_intercept")


def _sigmoid(logit: float) -> float:
    """The logistic function by ``math.exp`` (numpy's exp may differ from it in the last bit), without overflow."""
    return 1.0 / (1.0 + math.exp(-logit)) if logit >= 0 else math.exp(logit) / (1.0 + math.exp(logit))


def _fast_word_ngrams(vectorizer: TfidfVectorizer):
    """scikit-learn's word analyzer (lowercase, token pattern, stop words, n-grams) without its per-call
    dispatch, for the default settings we use; None when the vectorizer is configured otherwise. The terms
    and their order are the same (unigrams, then bigrams, ...), which tests compare against scikit-learn."""
    v = vectorizer
    if (v.analyzer != "word" or v.preprocessor is not None or v.tokenizer is not None or v.strip_accents
            or not v.lowercase or v.input != "content"):
        return None
    find_tokens = re.compile(v.token_pattern).findall
    stop = frozenset(v.get_stop_words() or ())
    min_n, max_n = v.ngram_range

    def analyze(text: str) -> list[str]:
        tokens = [t for t in find_tokens(text.lower()) if t not in stop]
        terms = list(tokens) if min_n == 1 else []
        for n in range(max(min_n, 2), max_n + 1):
            if n == 2:  # the common case, without a slice and a join per pair
                terms.extend([a + " " + b for a, b in zip(tokens, tokens[1:])])
            else:
                terms.extend(" ".join(tokens[i:i + n]) for i in range(len(tokens) - n + 1))
        return terms

    return analyze


class WordPairTable:
    """``_analyzed_columns`` without making the terms, for scikit-learn's default word tokens, unigrams and bigrams.

    Each token is looked up once, as a word number (a word of the vocabulary's terms; stop words and other words
    apart), and one compiled pass over a batch's numbers (``kernels.known_term_columns``) gives each text's unigram
    columns, then its bigram columns: a pair of numbers is a bigram of the vocabulary if it is in a sorted table of
    them. A pair with a word outside the vocabulary's terms is no bigram of it, and its terms add nothing to the
    formula, so the columns are the same, in the same order (a test compares them). On a page of text, building
    every bigram's string and looking each up was most of the judge's time."""

    STOP, UNKNOWN = -2, -1

    def __init__(self, find_tokens, numbers: dict[str, int], unigram_columns: np.ndarray, pair_keys: np.ndarray,
                 pair_columns: np.ndarray):
        self.find_tokens, self.numbers = find_tokens, numbers
        self.unigram_columns, self.pair_keys, self.pair_columns = unigram_columns, pair_keys, pair_columns

    @classmethod
    def of(cls, vectorizer: TfidfVectorizer, columns: dict[str, int]) -> WordPairTable | None:
        """The table of a fitted vectorizer's vocabulary (``columns``: term -> column), or None for settings other
        than the default token pattern with unigrams, or unigrams and bigrams."""
        v = vectorizer
        if (_fast_word_ngrams(v) is None or v.token_pattern != TfidfVectorizer().token_pattern
                or v.ngram_range not in ((1, 1), (1, 2))):
            return None
        # Words numbered in the order the terms first name them; numpy builds the tables (this runs at every fit)
        split = [term.split(" ") for term in columns]  # default tokens never hold a space: one split a term
        numbers = {word: k for k, word in enumerate(dict.fromkeys(itertools.chain.from_iterable(split)))}
        term_columns = np.fromiter(columns.values(), np.int64, len(columns))
        lengths = np.fromiter(map(len, split), np.int64, len(split))
        word_numbers = np.fromiter(map(numbers.__getitem__, itertools.chain.from_iterable(split)), np.int64,
                                   int(lengths.sum()))
        first = np.cumsum(lengths) - lengths  # each term's first word in word_numbers
        unigram = lengths == 1
        unigram_columns = np.full(len(numbers), -1, np.int64)
        unigram_columns[word_numbers[first[unigram]]] = term_columns[unigram]
        pair = np.flatnonzero(lengths == 2)
        keys = word_numbers[first[pair]] * len(numbers) + word_numbers[first[pair] + 1]
        order = np.argsort(keys, kind="stable")
        keys, pair_columns = keys[order], term_columns[pair][order]
        for word in v.get_stop_words() or ():
            numbers[word] = cls.STOP  # a stop word is no term: removed before words are paired
        return cls(re.compile(v.token_pattern).findall, numbers, unigram_columns, keys, pair_columns)

    def __call__(self, texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        tokens = [self.find_tokens(text.lower()) for text in texts]
        starts = np.fromiter(itertools.accumulate(map(len, tokens), initial=0), np.int64, len(tokens) + 1)
        words = np.fromiter(map(self.numbers.get, itertools.chain.from_iterable(tokens),
                                itertools.repeat(self.UNKNOWN)), np.int64, int(starts[-1]))
        return known_term_columns(words, starts, self.unigram_columns, self.pair_keys, self.pair_columns)


class MemoizedRelevance:
    """Wraps a fitted model and remembers its answer per text.

    A benchmark fetches the same pages again and again across strategies and runs; the model is a pure
    function of the text, so caching changes no number and saves most of the scoring time.
    """

    def __init__(self, model: RelevanceModel, max_entries: int = 200_000):
        self.model = model
        self.max_entries = max_entries
        self._cache: dict[str, float] = {}

    @property
    def threshold(self) -> float:
        """The wrapped model's decision point: a memo must not move where the engine rewards."""
        return decision_point(self.model)

    def fit(self, texts: Sequence[str], labels: Sequence[int]) -> MemoizedRelevance:
        self.model.fit(texts, labels)
        self._cache.clear()
        return self

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self._cache]
        if missing:
            if len(self._cache) + len(missing) > self.max_entries:
                self._cache.clear()
            self._cache.update(zip(missing, map(float, self.model.predict_proba(missing))))
        return np.fromiter((self._cache[t] for t in texts), dtype=float, count=len(texts))
