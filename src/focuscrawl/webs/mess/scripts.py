"""Links that exist only in JavaScript: moved out of a page's HTML links into a script that adds them."""

from __future__ import annotations

from focuscrawl.webs.mess.state import MessState


def move_to_scripts(state: MessState) -> None:
    """Move a share of the final links of a share of pages into ``moved`` (written as ``script_links``)."""
    options = state.profile.script
    for url, original in state.originals.items():
        if state.unit("script", "page", url) >= options.page_share:
            continue
        kept, kept_stored = [], []
        draw = state.draws("script", url, len(original.final))
        for order, (stored, link) in enumerate(zip(original.final_stored, original.final)):
            if draw[order] < options.link_share:
                original.moved.append(link)
                original.moved_stored.append(stored)
                original.targets[stored] = None
            else:
                kept.append(link)
                kept_stored.append(stored)
        original.final, original.final_stored = kept, kept_stored
        state.moved_links += len(original.moved)
