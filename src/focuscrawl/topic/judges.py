"""A user's own relevance judge (``--judge``), in place of the topic's classifier.

A judge is named by a spec, resolved once before a crawl starts:

- ``module:attribute`` (dotted attributes allowed; the module imported from the Python path, else from the current
  directory), naming
  - an object with ``predict_proba(texts)``: P(on topic) per text, 1-D or scikit-learn's 2-column shape (then the
    second column, P(label 1) for labels 0/1). It judges pages (on their title and text) *and* link contexts;
  - an object with ``score(page)`` (one argument: the fetched ``focuscrawl.types.Page``) returning a number in
    [0, 1], or a plain function of the page: it judges pages only; link contexts keep the topic's own classifier
    (TF-IDF on the topic's examples, the keyword model for a topic from keywords alone);
  - a factory: a class, or a function with a parameter named ``topic``, called once with the crawl's
    ``TopicInputs`` (a class without such a parameter with no argument), which returns one of the above.
- ``path/to/model.joblib`` (or ``.pkl``): a fitted scikit-learn pipeline taking raw texts (``predict_proba``).
  Loading a pickle runs code: a model file is trusted code, as a module is.

fastText models (``.bin``, ``.ftz``) go through a module: the ``fasttext`` package has no wheel on PyPI for this
Python (docs/crawl.md, "Your own judge", has the adapter).

Every answer is checked: a number outside [0, 1] (or NaN), a wrong shape or an exception in the user's code stops
the crawl with a ``JudgeError`` naming the judge and the page. A judge must be deterministic: a resumed crawl
replays its log through it.
"""

from __future__ import annotations

import hashlib
import importlib
import inspect
import math
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from focuscrawl.types import Page, RelevanceModel, TopicInputs, decision_point

MODEL_SUFFIXES = (".joblib", ".pkl", ".pickle")
FASTTEXT_SUFFIXES = (".bin", ".ftz")
HOW_TO = "docs/crawl.md, 'Your own judge'"


class JudgeError(ValueError):
    """A judge that cannot be resolved, or that answered what a probability cannot be; one line."""


def is_judge_spec(name: str) -> bool:
    """Whether ``name`` names a user's judge (a module attribute or a model file) rather than a built-in model."""
    return ":" in name or Path(name).suffix.lower() in MODEL_SUFFIXES + FASTTEXT_SUFFIXES


def judge_identity(spec: str) -> str:
    """What makes two crawls' judges the same, for a resume to check: a model file's name and content digest (the
    same file retrained is another judge), a module's spec as written."""
    if ":" in spec:
        return spec
    digest = hashlib.sha256()
    with open(spec, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return f"{Path(spec).name} sha256:{digest.hexdigest()}"


def load_judge(spec: str, topic: TopicInputs, link_model: Callable[[], RelevanceModel]) -> RelevanceModel:
    """The judge ``spec`` names, for ``topic``, checked. ``link_model`` builds the topic's own classifier, which a
    judge of pages alone (``score(page)``) leaves to score link contexts."""
    target = _load_model_file(spec) if ":" not in spec else _import_attribute(spec)
    if isinstance(target, type) or _is_factory(target):
        target = _call_factory(spec, target, topic)
    if callable(getattr(target, "predict_proba", None)):
        judge: RelevanceModel = TextJudge(spec, target)
        judge.predict_proba([_probe_text(topic)])  # a model that cannot read a text says so before the crawl
        return judge
    score = getattr(target, "score", None)
    if callable(score) or callable(target):
        score = score if callable(score) else target
        if not _takes_one_argument(score):
            raise JudgeError(f"judge {spec}: its score must take one argument, the page ({_signature(score)}); "
                             "a scikit-learn model needs predict_proba")
        return PageJudge(spec, score, link_model())
    raise JudgeError(f"judge {spec}: an object of type {type(target).__name__} is not a judge: a judge has "
                     f"predict_proba(texts) or score(page), or is a function of a page ({HOW_TO})")


class TextJudge:
    """A user's model of texts: judges pages on their title and text, and link contexts, as the topic's would."""

    def __init__(self, spec: str, model: Any):
        self.spec, self.model = spec, model
        self.threshold = _threshold(spec, model)

    def fit(self, texts: Sequence[str], labels: Sequence[int]) -> TextJudge:
        return self  # fitted already: a judge is the user's, not trained on the topic's examples

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        return self._probabilities(texts, "a text")

    def judge_page(self, page: Page) -> float:
        """The engine's relevance of ``page`` (same text as any model's: title, newline, text)."""
        return float(self._probabilities([f"{page.title}\n{page.text}"], page.url)[0])

    def _probabilities(self, texts: Sequence[str], about: str) -> np.ndarray:
        if len(texts) == 0:
            return np.zeros(0)
        try:
            answer = np.asarray(self.model.predict_proba(list(texts)), dtype=float)
        except Exception as exc:  # noqa: BLE001 - the user's code: one line naming it, not a traceback
            raise JudgeError(f"judge {self.spec} failed on {about}: {_one_line(exc)}") from None
        if answer.ndim == 2 and answer.shape[1] in (1, 2):
            answer = answer[:, -1]  # scikit-learn's (n, 2): P(label 1)
        if answer.shape != (len(texts),):
            raise JudgeError(f"judge {self.spec}: predict_proba of {len(texts)} texts gave shape {answer.shape}; "
                             "it must give one probability per text (or scikit-learn's 2 columns)")
        bad = ~((answer >= 0.0) & (answer <= 1.0))  # NaN too
        if bad.any():
            raise JudgeError(_out_of_range(self.spec, answer[bad][0], about))
        return answer


class PageJudge:
    """A user's ``score(page)``: judges fetched pages; link contexts go to the topic's own classifier."""

    def __init__(self, spec: str, score: Callable[[Page], float], link_model: RelevanceModel):
        self.spec, self.score, self.link_model = spec, score, link_model
        self.threshold = _threshold(spec, getattr(score, "__self__", score))  # a bound score: its object's

    def fit(self, texts: Sequence[str], labels: Sequence[int]) -> PageJudge:
        return self

    def predict_proba(self, texts: Sequence[str]) -> np.ndarray:
        return self.link_model.predict_proba(texts)  # link contexts: a page judge reads whole pages only

    def judge_page(self, page: Page) -> float:
        try:
            value = float(self.score(page))
        except Exception as exc:  # noqa: BLE001 - the user's code: one line naming it, not a traceback
            raise JudgeError(f"judge {self.spec} failed on {page.url}: {_one_line(exc)}") from None
        if not 0.0 <= value <= 1.0:
            raise JudgeError(_out_of_range(self.spec, value, page.url))
        return value


def _threshold(spec: str, judge: Any) -> float:
    """Where a user's judge calls a page on topic: its ``threshold`` attribute, if it names one, else 0.5 (the
    engine rewards pages at it: ``types.decision_point``)."""
    try:
        value = decision_point(judge)
    except (TypeError, ValueError):
        value = math.nan
    if not 0.0 < value <= 1.0:  # NaN too
        raise JudgeError(f"judge {spec}: its threshold {getattr(judge, 'threshold', None)!r} is not a probability "
                         "in (0, 1]")
    return value


def _load_model_file(spec: str) -> Any:
    path = Path(spec)
    if path.suffix.lower() in FASTTEXT_SUFFIXES:
        raise JudgeError(f"judge {spec}: a fastText model is judged through a module of a few lines (the fasttext "
                         f"package has no wheel for this Python): see {HOW_TO}")
    if not path.is_file():
        raise JudgeError(f"judge {spec}: no such model file")
    import joblib  # reads joblib's files and plain pickles alike

    try:
        return joblib.load(path)
    except Exception as exc:  # noqa: BLE001 - a damaged file, or one pickled with a library not installed here
        raise JudgeError(f"judge {spec}: the model file cannot be loaded: {_one_line(exc)}") from None


def _import_attribute(spec: str) -> Any:
    module_name, _, attribute = spec.partition(":")
    if not module_name or not attribute:
        raise JudgeError(f"judge {spec}: give module:callable (e.g. myjudge:score) or a model file (.joblib)")
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.append(os.getcwd())  # after the installed packages: a file here never shadows one of them
    try:
        target: Any = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and module_name.startswith(exc.name):
            raise JudgeError(f"judge {spec}: no module named {module_name!r} on the Python path or in the current "
                             "directory") from None
        raise JudgeError(f"judge {spec}: importing {module_name} failed: {_one_line(exc)}") from None
    except Exception as exc:  # noqa: BLE001 - the module's own code failed (or a SyntaxError)
        raise JudgeError(f"judge {spec}: importing {module_name} failed: {_one_line(exc)}") from None
    for name in attribute.split("."):
        if not hasattr(target, name):
            raise JudgeError(f"judge {spec}: {module_name} has no attribute {attribute!r}")
        target = getattr(target, name)
    return target


def _is_factory(target: Any) -> bool:
    return inspect.isfunction(target) and "topic" in inspect.signature(target).parameters


def _call_factory(spec: str, factory: Any, topic: TopicInputs) -> Any:
    try:
        takes_topic = "topic" in inspect.signature(factory).parameters
        return factory(topic=topic) if takes_topic else factory()
    except Exception as exc:  # noqa: BLE001 - the user's code: one line naming it, not a traceback
        raise JudgeError(f"judge {spec}: making the judge failed: {_one_line(exc)}") from None


def _takes_one_argument(function: Callable) -> bool:
    try:
        inspect.signature(function).bind(None)
    except TypeError:
        return False
    except ValueError:  # a builtin without a signature: let it try
        return True
    return True


def _signature(function: Callable) -> str:
    try:
        return f"it takes {inspect.signature(function)}"
    except (TypeError, ValueError):
        return "its signature is unknown"


def _probe_text(topic: TopicInputs) -> str:
    return " ".join([topic.name, *topic.keywords, topic.description]).strip() or "probe"


def _out_of_range(spec: str, value: float, about: str) -> str:
    shown = "NaN" if math.isnan(value) else f"{value:g}"
    return f"judge {spec} gave {shown} for {about}: a judge's answer must be a probability in [0, 1]"


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0]}" if text else type(exc).__name__
