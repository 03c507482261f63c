"""Relevance from a few words: zero-shot similarity to the topic, refined by the crawl's own confident pages.

Most users describe a topic with a few keywords or a sentence ("regional rail timetables in Europe"), not
with folders of labelled pages. ``KeywordRelevance`` starts from what that says and learns the rest from
the crawl:

1. **Zero-shot similarity.** The description and keywords, and each page (its first 2,000 characters), are
   embedded with sentence embeddings of the packaged all-MiniLM-L6-v2 distilled to static vectors
   (``focuscrawl.topic.embeddings``, model2vec's encoding): z = cosine(page, topic). Measured on the dev
   suite's Wikispeedia topics with their keywords only, these rank relevant pages above the others about as
   well as the full MiniLM transformer does on most topics, at a small fraction of the cost, and they need no
   torch to run (benchmarks/zero_shot.py measures both). Neither works on WebKB's page types.
   With a ``page_encoder`` (``RunSettings.page_encoder``), a fetched page's similarity is the mean of that
   and the MiniLM transformer's cosine: the two fail on different topics (People, Geography of Asia), and
   their mean ranks better than either on most. Link contexts (about 20 a page, each a few words) keep the
   static similarity alone: the transformer is too dear for them and adds little on a few words.
2. **Calibration.** Similarities are not probabilities, and their scale differs from topic to topic
   (relevant pages sit around 0.3 on most Wikispeedia topics; on WebKB's ``course`` irrelevant pages do).
   So the probability is the posterior of a two-component Gaussian mixture over the similarities of the
   pages fetched so far, refitted by EM every ``refit_every`` pages: one component for relevant pages, one
   for the rest. Until ``min_pages`` pages are seen (and whenever the fit collapses) a prior mixture
   stands in: relevant pages at ``prior_relevant`` similarity, others at ``prior_other``. The posterior is
   held monotone in the similarity (``_posterior``): a less similar text is never more likely relevant.
3. **Self-training.** Pages whose zero-shot posterior is confident (``>= confident`` or ``<= 1 -
   confident``) become training examples of a TF-IDF + logistic regression model, the example-based
   classifier a user with labelled pages would have; it is retrained every ``retrain_every`` new examples
   once both classes have ``min_examples`` (then whenever the examples grew by 20%), and the probability
   becomes the mean of the zero-shot posterior and its prediction, weighted ``n / (n + 100)`` towards the
   learned model (n examples), never more than ``max_weight``.
   **Drift** is prevented by construction: examples are labelled by the zero-shot posterior only, never by
   the blend or the learned model, so the model cannot feed on its own mistakes, and the zero-shot part
   keeps at least ``1 - max_weight`` of every answer.

The model learns online (``learn_one``): the engine hands it every page it scores, in crawl order, so a
crawl's model is a deterministic function of its pages, and a resumed crawl rebuilds it by replay or from a
checkpoint (``learns_online``: the engine checkpoints it with the crawl instead of by reference).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from focuscrawl.topic.embeddings import SentenceEncoder, WordVectors, load_sentence_encoder, load_word_vectors
from focuscrawl.topic.relevance import TfidfRelevanceModel
from focuscrawl.types import TopicInputs

PAGE_CHARS = 2000


def topic_query(topic: TopicInputs) -> str:
    """What the topic says in words: its description, then its keywords."""
    parts = [topic.description.strip().rstrip("."), ", ".join(k.strip() for k in topic.keywords if k.strip())]
    return ". ".join(p for p in parts if p)


class KeywordRelevance:
    """Zero-shot similarity to the topic's words, calibrated by a two-component mixture, refined by
    self-training on the crawl's confident pages (see the module docstring)."""

    learns_online = True

    def __init__(self, query: str, *, vectors: WordVectors | None = None, page_encoder: SentenceEncoder | None = None,
                 seed: int = 0, prior_relevant: float = 0.3,
                 prior_other: float = 0.05, prior_spread: float = 0.08, min_pages: int = 30, refit_every: int = 10,
                 confident: float = 0.9, min_examples: int = 10, retrain_every: int = 25,
                 max_weight: float = 0.5):
        if not query.strip():
            raise ValueError("a topic from a few words needs keywords or a description")
        self.vectors = vectors if vectors is not None else load_word_vectors()
        self.query = self.vectors.embed([query])[0]
        if not self.query.any():
            raise ValueError(f"none of the topic's words is known to the word vectors: {query!r}")
        self.page_encoder = page_encoder
        self.encodes_pages = page_encoder is not None
        self.query_sentence = page_encoder.embed([query])[0] if page_encoder is not None else None
        self._last_page: tuple[str, np.floating] | None = None  # predict_page's text and similarity, for learn_one
        self.seed = seed
        self.prior = (prior_relevant, prior_other, prior_spread)
        self.min_pages, self.refit_every, self.confident = min_pages, refit_every, confident
        self.min_examples, self.retrain_every, self.max_weight = min_examples, retrain_every, max_weight
        self.similarities: list[float] = []
        self.mixture = self._prior_mixture()
        self.examples: list[tuple[str, int]] = []
        self.trained_on = 0
        self.learned: TfidfRelevanceModel | None = None

    def __getstate__(self) -> dict:
        # the word vectors and the encoder are the process's shared, loaded ones (7 and 90 MB): not copied
        # into checkpoints or copies
        state = {k: v for k, v in self.__dict__.items() if k not in ("vectors", "page_encoder")}
        state["_last_page"] = None
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.vectors = load_word_vectors()
        self.page_encoder = load_sentence_encoder() if self.encodes_pages else None

    # -- the RelevanceModel protocol -----------------------------------------------------------------
    def fit(self, texts: Sequence[str], labels: Sequence[int]) -> KeywordRelevance:
        """Labelled pages a user has after all (a few example URLs, say): trusted examples from the start."""
        self.examples.extend((t, int(y)) for t, y in zip(texts, labels))
        self._retrain()
        return self

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        if len(texts) == 0:
            return np.zeros(0)
        return self._with_learned(self._posterior(self.similarity(texts)), texts)

    def predict_page(self, text: str) -> float:
        """P(relevant) of a fetched page: as ``predict_proba``, with the page encoder's similarity if any."""
        return float(self._with_learned(self._posterior(np.array([self.page_similarity(text)])), [text])[0])

    def learn_one(self, text: str) -> None:
        """A page the crawl fetched and scored: its similarity joins the mixture, and a confident page
        becomes a training example."""
        z = float(self.page_similarity(text))
        self.similarities.append(z)
        n = len(self.similarities)
        if n >= self.min_pages and n % self.refit_every == 0:
            self.mixture = self._fit_mixture(np.array(self.similarities))
        posterior = float(self._posterior(np.array([z]))[0])
        if posterior >= self.confident:
            self.examples.append((text, 1))
        elif posterior <= 1.0 - self.confident:
            self.examples.append((text, 0))
        # retrained after every retrain_every new examples at first, then every 20% more: a few dozen fits a crawl
        if len(self.examples) >= max(self.trained_on + self.retrain_every, 1.2 * self.trained_on):
            self._retrain()

    # -- parts ---------------------------------------------------------------------------------------------
    def similarity(self, texts: Sequence[str]) -> np.ndarray:
        return self.vectors.embed(list(texts), PAGE_CHARS) @ self.query

    def page_similarity(self, text: str) -> np.floating:
        """A fetched page's similarity to the topic: the static one, or its mean with the transformer's."""
        if self._last_page is not None and self._last_page[0] is text:  # predict_page, then learn_one: one encoding
            return self._last_page[1]
        z = self.similarity([text])[0]
        if self.page_encoder is not None:
            z = (z + self.page_encoder.embed([text], PAGE_CHARS)[0] @ self.query_sentence) / 2
        self._last_page = (text, z)
        return z

    def _with_learned(self, zero_shot: np.ndarray, texts: Sequence[str]) -> np.ndarray:
        if self.learned is None:
            return zero_shot
        weight = min(self.max_weight, self.trained_on / (self.trained_on + 100.0))
        return (1.0 - weight) * zero_shot + weight * self.learned.predict_proba(list(texts))

    def _prior_mixture(self) -> tuple[float, float, float, float, float]:
        relevant, other, spread = self.prior
        return 0.5, relevant, spread, other, spread  # (weight of relevant, mean, sd, mean, sd)

    def _fit_mixture(self, z: np.ndarray) -> tuple[float, float, float, float, float]:
        """EM for two 1-d Gaussians, started from the prior; the prior again if the fit collapses."""
        w, m1, s1, m0, s0 = self._prior_mixture()
        for _ in range(50):
            r = self._responsibility(z, (w, m1, s1, m0, s0))
            n1 = float(r.sum())
            n0 = len(z) - n1
            if n1 < 2 or n0 < 2:
                return self._prior_mixture()
            w = n1 / len(z)
            m1, m0 = float(r @ z / n1), float((1 - r) @ z / n0)
            s1 = max(0.02, math.sqrt(float(r @ (z - m1) ** 2 / n1)))
            s0 = max(0.02, math.sqrt(float((1 - r) @ (z - m0) ** 2 / n0)))
        if m1 <= m0:  # the "relevant" component must be the more similar one
            return self._prior_mixture()
        return w, m1, s1, m0, s0

    @staticmethod
    def _responsibility(z: np.ndarray, mixture: tuple[float, float, float, float, float]) -> np.ndarray:
        w, m1, s1, m0, s0 = mixture
        log1 = math.log(max(w, 1e-9)) - math.log(s1) - 0.5 * ((z - m1) / s1) ** 2
        log0 = math.log(max(1 - w, 1e-9)) - math.log(s0) - 0.5 * ((z - m0) / s0) ** 2
        return 1.0 / (1.0 + np.exp(np.clip(log0 - log1, -50, 50)))

    def _posterior(self, z: np.ndarray) -> np.ndarray:
        """P(relevant | similarity z), made monotone in z: with unequal spreads the mixture's log-odds are
        a parabola, and past its vertex the posterior turns back (the relevant component is the wider one on
        15 of the 16 dev-suite topics, so the web's least similar pages came out likely relevant: .99 on
        Citizenship).
        Past the vertex the posterior is held at its value there; EM keeps the true responsibilities."""
        z = np.asarray(z, dtype=float)
        _, m1, s1, m0, s0 = self.mixture
        curvature = 1.0 / s0**2 - 1.0 / s1**2  # twice the log-odds' second derivative
        if curvature != 0.0:
            vertex = (m0 / s0**2 - m1 / s1**2) / curvature
            z = np.maximum(z, vertex) if curvature > 0 else np.minimum(z, vertex)
        return self._responsibility(z, self.mixture)

    def _retrain(self) -> None:
        labels = [y for _, y in self.examples]
        if min(labels.count(0), labels.count(1)) < self.min_examples:
            return
        self.learned = TfidfRelevanceModel(seed=self.seed).fit([t[:PAGE_CHARS] for t, _ in self.examples], labels)
        self.trained_on = len(self.examples)


def keyword_model(topic: TopicInputs, seed: int, page_encoder: bool = False) -> KeywordRelevance:
    """The ``keywords`` relevance model: from the topic's words, and its example texts if it has any."""
    model = KeywordRelevance(topic_query(topic), seed=seed,
                             page_encoder=load_sentence_encoder() if page_encoder else None)
    if topic.example_texts:
        model.fit(topic.example_texts, topic.example_labels)
    return model
