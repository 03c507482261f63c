"""The link-farm rule on a hand-written labelled set (tests/spam_pages.py): farm pages as the messy-web generator
writes them, keyword-stuffed sentences and SEO prose are spam; a product catalogue, a package's feature list,
encyclopaedia articles and German and French prose are not. No one sign decides, on a page or a host."""

from __future__ import annotations

import pytest
from spam_pages import PAGES

from focuscrawl.engine.defences.farms import SIGNS, LinkFarms, LinkFarmSettings, spam_signs

SETTINGS = LinkFarmSettings()


def signs_of(page) -> set[str] | None:
    return spam_signs(SETTINGS, page.text, page.title, page.anchors)


@pytest.mark.parametrize("page", [p for p in PAGES if signs_of(p) is not None], ids=lambda p: p.name)
def test_each_labelled_page_gets_its_verdict(page):
    signs = signs_of(page)
    assert (len(signs) >= SETTINGS.min_signs) == (page.label == "farm"), signs


def test_the_labelled_set_covers_every_kind_and_every_sign():
    judged = [p for p in PAGES if signs_of(p) is not None]
    assert {p.label for p in judged} == {"farm", "text"} and len(judged) >= 15
    assert set().union(*(signs_of(p) for p in judged)) == set(SIGNS)


def test_the_old_one_feature_verdicts_are_mended():
    """The catalogue and the feature list have few short words (the old rule's one feature): still text. The
    keyword-stuffed and SEO pages have many: still spam."""
    by_name = {p.name: signs_of(p) for p in PAGES}
    assert "long words" in by_name["package feature list"] | by_name["generator farm 0"]
    for name in ("keyword-stuffed sentences", "SEO prose plumber", "SEO prose weight loss"):
        assert "long words" not in by_name[name] and len(by_name[name]) >= SETTINGS.min_signs


@pytest.mark.parametrize("label", ["farm", "text"])
def test_a_host_of_each_kind_gets_its_verdict(label):
    """A host serving the labelled pages of one kind, round after round: a farm host is closed after
    ``min_pages`` judged pages; a host of written pages never is."""
    farms = LinkFarms(SETTINGS)
    pages = [p for p in PAGES if p.label == label and signs_of(p) is not None]
    closed = []
    for i in range(3 * SETTINGS.min_pages):
        page = pages[i % len(pages)]
        closed += farms.record("host.test", page.text, (), page.title, page.anchors)
    assert closed == (["host.test"] if label == "farm" else [])
    if label == "farm":
        assert farms.judged["host.test"] == SETTINGS.min_pages


def test_one_sign_alone_closes_no_host():
    """Every page of the host shows one sign (here: anchors outnumber the words of a link-list page); no verdict."""
    farms = LinkFarms(SETTINGS)
    text = " ".join(f"the item number {k} of a long list in which each line is a link" for k in range(4))
    anchors = [f"link to item {k}" for k in range(40)]
    assert spam_signs(SETTINGS, text, "A list", anchors) == {"anchor text"}
    for _ in range(3 * SETTINGS.min_pages):
        assert farms.record("list.test", text, (), "A list", anchors) == []
