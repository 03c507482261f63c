"""The context of a link: the text around its anchor on the page that holds it.

Gouriten et al. score an edge by its "100-character window around a hyperlink" (Sec. 2.3); ``adaptive``
reads the same window as its ``anchor`` evidence. Pages here carry text and (url, anchor) links separately,
so the anchor is found in the text: the k-th link with a given anchor is matched to the k-th occurrence; an
anchor that does not occur in the text is its own window.
"""

from __future__ import annotations

from collections.abc import Sequence


def anchor_windows(text: str, anchors: Sequence[str], width: int, wanted: Sequence[int] | None = None) -> list[str]:
    """The ``width``-character context of each anchor in ``text``; the anchors themselves when ``width`` is 0.
    With ``wanted`` (indices into ``anchors``), the contexts of those anchors only, in that order: the text is
    searched only for their anchors, as far as their occurrences go (a policy that reads only its new links'
    contexts saves most of the searching, which is most of the cost on long pages)."""
    picked = range(len(anchors)) if wanted is None else wanted
    if width <= 0 or not text:
        return [anchors[k] for k in picked]
    lower = text.lower()
    half = width // 2
    keys = [anchor.strip().lower() for anchor in anchors]
    namesakes: dict[str, int] = {}
    ordinal = []  # how many anchors before each one have its key: it takes that occurrence
    for key in keys[:max(picked, default=-1) + 1]:
        ordinal.append(namesakes.get(key, 0))
        namesakes[key] = ordinal[-1] + 1
    found: dict[str, list[int]] = {}  # each key's occurrences so far, successively; -1 once there are no more
    out = []
    for k in picked:
        key, nth = keys[k], ordinal[k]
        at = -1
        if key:
            places = found.setdefault(key, [])
            while len(places) <= nth and (not places or places[-1] >= 0):
                places.append(lower.find(key, places[-1] + 1 if places else 0))
            at = places[nth] if nth < len(places) else -1
        out.append(anchors[k] if at < 0 else text[max(0, at - half): at + len(key) + half])
    return out
