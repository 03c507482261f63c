"""Text into words: the one home of the project's tokenisers and of a URL read as text.

Two notions of a word, because two kinds of model read text:

- ``words``: lower-cased runs of letters (any script). What word vectors have entries for, so keyword
  expansion and the (Kw)BiLSTM classifiers read these; digits carry no meaning for them.
- ``terms``: lower-cased ASCII letter-or-digit runs of two or more characters. What lexical models count
  (tf-idf similarity, hashed link features, keyword tf-idf scores): there digits do carry meaning
  (course numbers, years) and single characters are noise.

Splitting on anything else also splits URLs (``/wiki/Plant_biology`` -> wiki, plant, biology), so the same
functions serve page texts, anchor texts and URLs; ``url_text`` is the URL without its scheme, which would
otherwise be a word of every link. ``phrase_text`` is the form phrase matching scans.
"""

from __future__ import annotations

import re

from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

STOPWORDS = frozenset(ENGLISH_STOP_WORDS)
_LETTERS = re.compile(r"[^\W\d_]+")
_TERM = re.compile(r"[a-z0-9]{2,}")
_NOT_ALNUM = re.compile(r"[^a-z0-9]+")


def words(text: str) -> list[str]:
    """Lower-cased runs of letters."""
    return _LETTERS.findall(text.lower())


def terms(text: str) -> list[str]:
    """Lower-cased ASCII letter-or-digit runs of two or more characters, in order, repeats kept."""
    return _TERM.findall(text.lower())


def url_text(url: str) -> str:
    """A URL without its scheme: what a URL says as text."""
    return url.split("://", 1)[-1]


def phrase_text(text: str) -> str:
    """Lower-cased, every run of characters other than ASCII letters and digits one space, padded with a space
    at both ends, so that ``" bird migration "`` in it finds the phrase on word boundaries."""
    return " " + _NOT_ALNUM.sub(" ", text.lower()).strip() + " "
