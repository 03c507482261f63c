"""Judges of users' own (``--judge module:callable``) for tests/test_judges.py: a tiny scikit-learn pipeline, a rule
of pages, a factory of the topic, and judges that are wrong in each way a user's can be."""

from __future__ import annotations

from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline

# A few texts, as a user trains a model: birds on topic (1), trains off it (0).
TEXTS = ["the bird built a nest of feather and twig", "a songbird egg in the nest", "wing and beak of the bird",
         "the train left the railway station", "a locomotive pulled the freight carriage", "the engine on the track"]
LABELS = [1, 1, 1, 0, 0, 0]


def tiny_model():
    """A fitted TF-IDF + logistic regression pipeline of raw texts (deterministic: lbfgs, no randomness)."""
    return make_pipeline(TfidfVectorizer(), LogisticRegression(C=10.0)).fit(TEXTS, LABELS)


model = tiny_model()  # module:callable naming an object with predict_proba

BIRD_WORDS = frozenset("bird feather wing nest egg beak flight migration songbird plumage".split())


def bird_share(page) -> float:
    """A rule of the user's own on the whole page: the share of its words that are bird words, doubled, at most 1."""
    words = f"{page.title} {page.text}".lower().split()
    return min(1.0, 2.0 * sum(w in BIRD_WORDS for w in words) / max(1, len(words)))


class Scorer:
    """An object with ``score(page)``: judges whole pages only."""

    def score(self, page) -> float:
        return bird_share(page)


scorer = Scorer()


def make_judge(topic):
    """A factory: called once with the crawl's topic; the model is trained on its own texts plus the topic's words."""
    texts = TEXTS + [" ".join(topic.keywords)]
    return make_pipeline(TfidfVectorizer(), LogisticRegression(C=10.0)).fit(texts, LABELS + [1])


# -- wrong judges --------------------------------------------------------------------------------------------------
not_a_judge = 42


def too_sure(page) -> float:
    return 1.5


class Chatty:
    def predict_proba(self, texts):
        return [[0.1, 0.2, 0.7] for _ in texts]  # three columns: not a probability of a page being on topic


chatty = Chatty()


def broken(page) -> float:
    raise RuntimeError("the user's judge has a bug")


def two_arguments(page, extra) -> float:
    return 0.5


class Strict(Scorer):
    """A page judge that decides at 0.9 of its own scale: the crawl rewards what it calls on topic, no more."""

    threshold = 0.9


strict = Strict()


class NoScale(Scorer):
    threshold = 1.5  # not a probability: refused when the judge is loaded


no_scale = NoScale()
