"""Thin pages: a fetched page much shorter than the topic's relevant pages is judged by its length too.

A classifier of page text scores a one-line page by the few words it has: a data browser's row page ("Snowy Owl,
Scientific classification, Kingdom: Animalia ... Science, Birds") carries the topic's densest words and scores as
high as an article (0.44-0.86 on the test bed, docs/testbed.md), although a user wants the article. So a page's
relevance is shrunk by its length below a floor, a share (``thin_page_ratio``) of the median length of the topic's
relevant example pages: ``relevance x min(1, words / floor)`` for a judge that decides at 0.5, and the same share
taken from the judge's own decision point for one that decides elsewhere (``ThinPages.shrink``: a calibrated judge
decides lower, and a plain share of its smaller numbers left the test bed's rows over the point:
docs/history/trials/thin-decision-point-rule.md). The floor comes from the user's examples, never from
labels: on a web of short relevant pages (package descriptions) it is low, on one of articles high. A topic without
example pages has no floor. Link contexts are not shrunk: they are short by nature.

A short page is thin only on a host whose fetched pages are mostly short (more than half of them under the floor,
once the host has ``min_host_pages``): a stub among a site's articles is judged as any page, a host of one-line rows
is not. (Length alone cost Wikispeedia's Geography of Asia .005 AUC/oracle, a significant loss, through its short
articles: docs/history/trials/thin-pages-rule.md.) The per-host counts are crawl state, checkpointed with the engine.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from focuscrawl.topic.text import words


class ThinPages:
    """The length floor under which a page's relevance shrinks (``factor``) on a host of short pages."""

    def __init__(self, floor_words: float, min_host_pages: int = 5):
        if floor_words <= 0:
            raise ValueError("a thin-page floor is a positive number of words")
        self.floor_words, self.min_host_pages = floor_words, min_host_pages
        self.host_pages: dict[str, list[int]] = {}  # host -> [fetched pages, of which under the floor]

    @classmethod
    def from_examples(cls, texts: Sequence[str], labels: Sequence[int], ratio: float) -> ThinPages | None:
        """The floor ``ratio`` x the median word count of the relevant examples; None without any, or ratio 0."""
        lengths = [len(words(text)) for text, label in zip(texts, labels) if label]
        if ratio <= 0 or not lengths:
            return None
        floor = ratio * float(np.median(lengths))
        return cls(floor) if floor >= 1 else None

    def is_short(self, text: str) -> bool:
        """The text has fewer words than the floor (whatever its host's pages are)."""
        return len(words(text)) < self.floor_words

    def shrink(self, relevance: float, text: str, host: str, threshold: float = 0.5, learn: bool = True) -> float:
        """A page's relevance shrunk by its ``factor``, measured from the judge's decision point ``threshold``: its
        log-odds moved so that the point sits at one half, multiplied there, moved back. A judge that decides at 0.5
        gets ``relevance x factor``; a calibrated one, which decides lower, shrinks a thin page as far past its point
        as that judge would, where a plain share of its smaller number would leave the page over the point."""
        factor = self.factor(text, host, learn)
        if factor >= 1.0 or relevance <= 0.0:
            return relevance
        if threshold == 0.5:
            return relevance * factor
        shift = _logit(threshold)
        centred = _sigmoid(_logit(relevance) - shift) * factor
        return _sigmoid(_logit(centred) + shift)

    def factor(self, text: str, host: str, learn: bool = True) -> float:
        """1 for a page at or above the floor or on a host of longer pages, else its share of the floor. ``learn``:
        the page counts in its host's record (a page only looked at, not fetched by the crawl, does not)."""
        share = len(words(text)) / self.floor_words
        counts = self.host_pages.setdefault(host, [0, 0])
        if learn:
            counts[0] += 1
            counts[1] += share < 1.0
        if share >= 1.0 or counts[0] < self.min_host_pages or 2 * counts[1] <= counts[0]:
            return 1.0
        return share


def _logit(p: float) -> float:
    p = min(max(p, 1e-12), 1.0 - 1e-12)
    return math.log(p / (1.0 - p))


def _sigmoid(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))
