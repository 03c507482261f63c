"""The context of a link: the text around its anchor on the page that holds it.

Gouriten et al. score an edge by its "100-character window around a hyperlink" (Sec. 2.3); ``adaptive``
reads the same window as its ``anchor`` evidence. Pages here carry text and (url, anchor) links separately,
so the anchor is found in the text: the k-th link with a given anchor is matched to the k-th occurrence; an
anchor that does not occur in the text is its own window.
"""

from __future__ import annotations

from collections.abc import Sequence


def anchor_windows(text: str, anchors: Sequence[str], width: int) -> list[str]:
    """The ``width``-character context of each anchor in ``text``; the anchors themselves when ``width`` is 0."""
    if width <= 0 or not text:
        return list(anchors)
    lower = text.lower()
    half = width // 2
    next_from: dict[str, int] = {}
    out = []
    for anchor in anchors:
        key = anchor.strip().lower()
        at = lower.find(key, next_from.get(key, 0)) if key else -1
        if at < 0:
            out.append(anchor)
            continue
        next_from[key] = at + 1
        out.append(text[max(0, at - half): at + len(key) + half])
    return out
