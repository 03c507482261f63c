"""TRES keyword expansion (journal Algorithm 1 and equation 2) and keyword matching.

Given the topic's initial keywords KS and its example texts, every word w of the *relevant* example texts
(the papers' D_tr^(C), section 3.4) is a candidate. Its semantic score is the mean cosine similarity to
the initial keywords, CS(w) = 1/N_K sum_k cos(w, k), and w joins the discovered set K' when CS(w) >= b,
with b the mean pairwise cosine similarity of the initial keywords (equation 2). The expanded set is
K = KS u K'. It is selective by design: a new keyword must be closer to KS, on average, than the initial
keywords are to each other.

Choices the papers leave open (documented here, overridable by arguments):

- Word vectors: the static MiniLM vectors of ``focuscrawl.topic.embeddings`` instead of Wikipedia
  word2vec. A multi-word keyword ("health and medicine") is the mean of its non-stopword words' vectors.
- Equation 2 needs N_K >= 2. With a single initial keyword (WebKB "course", Wikispeedia's "food and
  agriculture") we use ``single_keyword_threshold`` (0.5): in this vector space cosine 0.5 separates a
  word's close relatives (food and agriculture: agricultural 0.88, crops 0.81 ... grocery 0.51) from
  loose associations. A single ambiguous word stays a weak topic description: the static vector of
  "course" is that of "of course", so WebKB's "course" expands to certainly, sure, ... (a limit of
  the word vectors and of one-word topics, not of the algorithm).
- Candidates are content words (no stopwords, >= 3 letters) that have a vector of their own in the
  vocabulary: a word known only through its sub-word pieces (a name, a typo) has a vector too unreliable
  to be scored. ``min_count`` (default 1, as the papers) can require repeated occurrences.
- Keywords are matched on ``focuscrawl.topic.text.words`` (lower-cased letter runs), phrases as
  consecutive words, so the same matcher serves page texts, anchor texts and URLs.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from focuscrawl.topic.embeddings import WordVectors, load_word_vectors
from focuscrawl.topic.text import STOPWORDS, words
from focuscrawl.types import TopicInputs

SINGLE_KEYWORD_THRESHOLD = 0.5


def normalize_keyword(keyword: str) -> str:
    return " ".join(words(keyword))


@dataclass
class KeywordSet:
    """KS (``initial``), K' (``discovered``, best first) and K (``all``), plus matching helpers."""

    initial: list[str]
    discovered: list[str]
    threshold: float = float("nan")
    scores: dict[str, float] = field(default_factory=dict)

    @property
    def all(self) -> list[str]:
        return self.initial + [k for k in self.discovered if k not in self.initial]

    @property
    def keyphrases(self) -> list[str]:
        """The multi-word keywords (the arXiv paper's "keyphrase set")."""
        return [k for k in self.all if " " in k]

    @cached_property
    def _words(self) -> frozenset[str]:
        return frozenset(k for k in self.all if " " not in k)

    @cached_property
    def _phrases_by_first_word(self) -> dict[str, list[tuple[str, ...]]]:
        index: dict[str, list[tuple[str, ...]]] = {}
        for keyphrase in self.keyphrases:
            phrase = tuple(keyphrase.split())
            index.setdefault(phrase[0], []).append(phrase)
        return index

    def match_tokens(self, tokens: Sequence[str]) -> tuple[int, int]:
        """(single-word keyword occurrences, keyphrase occurrences) in a token list, in one pass."""
        singles, phrases = self._words, self._phrases_by_first_word
        n_words = n_phrases = 0
        for i, token in enumerate(tokens):
            if token in singles:
                n_words += 1
            for phrase in phrases.get(token, ()):
                if tuple(tokens[i:i + len(phrase)]) == phrase:
                    n_phrases += 1
        return n_words, n_phrases

    def count_tokens(self, tokens: Sequence[str]) -> int:
        """Keyword occurrences in a token list: single-word keywords plus keyphrase occurrences."""
        return sum(self.match_tokens(tokens))

    def count(self, text: str) -> int:
        """Keyword occurrences in a text, an anchor text or a URL."""
        return self.count_tokens(words(text))

    def to_dict(self) -> dict:
        return {"initial": self.initial, "discovered": self.discovered, "threshold": self.threshold,
                "scores": self.scores}

    @classmethod
    def from_dict(cls, data: dict) -> KeywordSet:
        return cls(list(data["initial"]), list(data["discovered"]), float(data["threshold"]),
                   dict(data.get("scores", {})))


def _unit(matrix: np.ndarray) -> np.ndarray:
    return matrix / (np.linalg.norm(matrix, axis=-1, keepdims=True) + 1e-12)


def expansion_threshold(keyword_vectors: np.ndarray,
                        single_keyword_threshold: float = SINGLE_KEYWORD_THRESHOLD) -> float:
    """Equation 2: the mean cosine similarity over ordered pairs of distinct initial keywords."""
    n = len(keyword_vectors)
    if n < 2:
        return single_keyword_threshold
    unit = _unit(keyword_vectors)
    sims = unit @ unit.T
    return float((sims.sum() - np.trace(sims)) / (n * (n - 1)))


def expand_keywords(
    inputs: TopicInputs,
    vectors: WordVectors | None = None,
    *,
    threshold: float | None = None,
    single_keyword_threshold: float = SINGLE_KEYWORD_THRESHOLD,
    min_count: int = 1,
    min_length: int = 3,
) -> KeywordSet:
    """Algorithm 1: expand ``inputs.keywords`` with words of the relevant example texts. Deterministic.

    ``threshold`` overrides equation 2's b. Discovered keywords are sorted by score, best first.
    """
    vectors = vectors if vectors is not None else load_word_vectors()
    initial: list[str] = []
    for keyword in inputs.keywords:
        norm = normalize_keyword(keyword)
        if norm and norm not in initial:
            initial.append(norm)
    known = [(k, v) for k in initial if (v := vectors.vector(k)) is not None]
    if not known:
        return KeywordSet(initial, [], float("nan"), {})
    ks_unit = _unit(np.stack([v for _, v in known]).astype(np.float32))
    b = threshold if threshold is not None else expansion_threshold(ks_unit, single_keyword_threshold)

    counts: Counter[str] = Counter()
    for text, label in zip(inputs.example_texts, inputs.example_labels, strict=True):
        if label == 1:
            counts.update(words(text))
    initial_words = {w for k in initial for w in k.split()} | set(initial)
    candidates = sorted(
        w for w, c in counts.items()
        if c >= min_count and len(w) >= min_length and w not in STOPWORDS and w not in initial_words and w in vectors
    )
    if not candidates:
        return KeywordSet(initial, [], b, {})
    scores = (_unit(vectors.vectors(candidates)) @ ks_unit.T).mean(axis=1)  # CS(w) for every candidate
    chosen = [(float(s), w) for w, s in zip(candidates, scores, strict=True) if s >= b]
    chosen.sort(key=lambda sw: (-sw[0], sw[1]))
    return KeywordSet(initial, [w for _, w in chosen], b, {w: round(s, 4) for s, w in chosen})


def keyword_table(keywords: KeywordSet, texts: Iterable[str], labels: Iterable[int]) -> dict:
    """Table 2's figures: mean count of discovered keywords in relevant (C) and irrelevant (C') texts.

    Also reported for the whole expanded set K, since K is what the crawler's features use.
    """
    discovered = KeywordSet([], keywords.discovered)
    sums = {1: [0, 0, 0], 0: [0, 0, 0]}  # label -> [texts, K' count, K count]
    for text, label in zip(texts, labels, strict=True):
        tokens = words(text)
        row = sums[1 if label else 0]
        row[0] += 1
        row[1] += discovered.count_tokens(tokens)
        row[2] += keywords.count_tokens(tokens)

    def mean(label: int, col: int) -> float:
        return sums[label][col] / sums[label][0] if sums[label][0] else 0.0

    return {
        "mean_discovered_relevant": mean(1, 1), "mean_discovered_irrelevant": mean(0, 1),
        "mean_all_relevant": mean(1, 2), "mean_all_irrelevant": mean(0, 2),
        "initial": len(keywords.initial), "discovered": len(keywords.discovered), "threshold": keywords.threshold,
        "relevant_texts": sums[1][0], "irrelevant_texts": sums[0][0],
    }
