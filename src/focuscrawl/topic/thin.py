"""Thin pages: a fetched page much shorter than the topic's relevant pages is judged by its length too.

A classifier of page text scores a one-line page by the few words it has: a data browser's row page ("Snowy Owl,
Scientific classification, Kingdom: Animalia ... Science, Birds") carries the topic's densest words and scores as
high as an article (0.44-0.86 on the test bed, docs/testbed.md), although a user wants the article. So a page's
relevance is shrunk by its length below a floor, a share (``thin_page_ratio``) of the median length of the topic's
relevant example pages: ``relevance x min(1, words / floor)``. The floor comes from the user's examples, never from
labels: on a web of short relevant pages (package descriptions) it is low, on one of articles high. A topic without
example pages has no floor. Link contexts are not shrunk: they are short by nature.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from focuscrawl.topic.text import words


class ThinPages:
    """The length floor under which a page's relevance shrinks (``factor``)."""

    def __init__(self, floor_words: float):
        if floor_words <= 0:
            raise ValueError("a thin-page floor is a positive number of words")
        self.floor_words = floor_words

    @classmethod
    def from_examples(cls, texts: Sequence[str], labels: Sequence[int], ratio: float) -> ThinPages | None:
        """The floor ``ratio`` x the median word count of the relevant examples; None without any, or ratio 0."""
        lengths = [len(words(text)) for text, label in zip(texts, labels) if label]
        if ratio <= 0 or not lengths:
            return None
        floor = ratio * float(np.median(lengths))
        return cls(floor) if floor >= 1 else None

    def factor(self, text: str) -> float:
        """1 for a page at or above the floor, else its share of the floor."""
        return min(1.0, len(words(text)) / self.floor_words)
