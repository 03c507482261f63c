"""Link farms: hosts whose pages show several signs of spam at once, page after page.

A link farm's pages are made to look relevant: their text and anchors are the topic's words, page after page, each
page new to a near-duplicate test and rated relevant by any classifier of the topic. Ntoulas et al. (WWW 2006,
"Detecting spam web pages through content analysis") found no single measure that separates spam from written text,
but several that together do. A page is read here for four, none a word list of any language (``spam_signs``):
*long words* (few words of three letters or fewer, or a long average word: function words are every alphabetic
language's shortest, Zipf's law of abbreviation, and stuffed keywords lack them), *repetition* (a few words of 4+
letters make up much of the text: what makes spam compressible), *anchor text* (its links' anchors outnumber its
words) and a *stuffed title* (one word said three times). A page is spam when it shows ``min_signs`` of them: one
sign is no verdict (a feature list has long words, a link list anchors, a package's title repeats its name). On the
clean webs' English pages no host reaches the farm share (``python -m benchmarks.defences_on_clean``); the messy
web's farm pages are spam 84-95% of the time; tests/spam_pages.py holds hand-written pages of both kinds, in three
languages, each of which gets its label.

One spam page decides nothing either. A *host* is a farm when at least ``min_pages`` of its pages with ``min_words``
words have been read and at least ``farm_share`` of them are spam; it is then closed as a failing host is ("link
farm"). With 20 and 0.65 a host needs at least 13 spam pages: over every page of the clean webs the most any host has
is 0 on Wikispeedia, 8 (of 603) on WebKB and 95 (of 3,584, 2.7%) on Debian's metacpan.org, far under the share.

Farms come in alliances: their pages link to each other to lend each other rank (Gyöngyi and Garcia-Molina, "Link
spam alliances", VLDB 2005; Wu and Davison, "Identifying link farm spam pages", WWW 2005, grow a known farm's set
along its links). So once a host is closed as a farm, the hosts its spam pages linked to are *suspects*: one of
them is closed on the same share of spam pages after only ``suspect_min_pages`` judged pages. Only a farm closed
in the crawl makes a suspect, so on a web where no host is ever closed (the clean webs) nothing changes.

Pages in scripts written without spaces between words (Chinese, Japanese, Thai) are never judged: a run of their
letters is a phrase, not a word.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from focuscrawl.engine.defences.pipeline import LINK_FARM, Crawl, Defence, Fetch
from focuscrawl.topic.text import words
from focuscrawl.urls import site_of

# Scripts written without spaces between words: Thai and Lao, and from CJK radicals on (kana, hangul, han).
_UNSPACED = re.compile(r"[\u0e00-\u0eff\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff]")
# The signs of spam a page is read for (``spam_signs``); a page is spam when it shows ``min_signs`` of them.
SIGNS = ("long words", "repetition", "anchor text", "stuffed title")


class LinkFarmSettings(BaseModel):
    """A host whose pages show several signs of spam at once, page after page, is closed ("link farm")."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = True
    max_short_share: Annotated[float, Field(ge=0, le=1)] = Field(
        0.15, description="sign 'long words': under this share of a page's words have three letters or fewer, ...")
    min_mean_length: Annotated[float, Field(ge=0)] = Field(
        6.5, description="... or its words have this many letters on average")
    min_top_share: Annotated[float, Field(ge=0, le=1)] = Field(
        0.5, description="sign 'repetition': the page's 3 most frequent words of 4+ letters are this share of them")
    min_anchor_ratio: Annotated[float, Field(ge=0)] = Field(
        0.75, description="sign 'anchor text': the page's links' anchors have this many words per word of its text")
    min_title_repeats: Annotated[int, Field(ge=2)] = Field(
        3, description="sign 'stuffed title': one word of the title is in it this many times")
    min_signs: Annotated[int, Field(ge=1, le=len(SIGNS))] = Field(
        2, description="signs a page must show at once to count as spam")
    min_words: Annotated[int, Field(ge=1)] = Field(30, description="words a page needs to be judged at all")
    min_pages: Annotated[int, Field(ge=1)] = Field(20, description="judged pages of a host before it can be closed")
    farm_share: Annotated[float, Field(ge=0, le=1)] = Field(
        0.65, description="share of a host's judged pages that must be spam to close it")
    suspect_min_pages: Annotated[int, Field(ge=1)] = Field(
        5, description="judged pages before a host that a closed farm's spam pages link to can be closed")


_CLEAR_PAGES = 100  # judged pages of a host before it can be cleared
_READ = 2000  # characters of a page read (about 300 words): a stuffed page is stuffed from its start
_TOP_WORDS = 3  # the page's most frequent words the 'repetition' sign counts
_LONG = 4  # letters of the words the 'repetition' sign counts: the shorter ones are every language's function words


def page_words(text: str, min_words: int) -> list[str] | None:
    """The letter-only words of ``text``'s first ``_READ`` characters; None when it cannot be judged (too few
    words, or a script without spaces: a run of its letters is a phrase, not a word)."""
    text = text[:_READ]
    if _UNSPACED.search(text):
        return None
    tokens = words(text)
    return tokens if len(tokens) >= min_words else None


def short_word_share(text: str, min_words: int) -> float | None:
    """The share of the letter-only words with three letters or fewer in ``text``'s first ``_READ`` characters; None
    when it cannot be judged (too few words, or a script without spaces)."""
    tokens = page_words(text, min_words)
    return None if tokens is None else sum(len(token) <= 3 for token in tokens) / len(tokens)


def spam_signs(settings: LinkFarmSettings, text: str, title: str = "", anchors: Iterable[str] = ()) -> set[str] | None:
    """The signs of spam a page shows (a subset of ``SIGNS``), from its main text, title and links' anchors; None
    when its text cannot be judged. Each sign is one measure of Ntoulas et al. (2006), none a word list."""
    tokens = page_words(text, settings.min_words)
    if tokens is None:
        return None
    signs = set()
    short = sum(len(token) <= 3 for token in tokens)
    if (short < settings.max_short_share * len(tokens)
            or sum(map(len, tokens)) >= settings.min_mean_length * len(tokens)):
        signs.add("long words")
    long_words = Counter(token for token in tokens if len(token) >= _LONG)
    top = sum(n for _, n in long_words.most_common(_TOP_WORDS))
    if long_words and top >= settings.min_top_share * sum(long_words.values()):
        signs.add("repetition")
    if sum(len(words(anchor)) for anchor in anchors) >= settings.min_anchor_ratio * len(tokens):
        signs.add("anchor text")
    title_words = Counter(words(title))
    if title_words and title_words.most_common(1)[0][1] >= settings.min_title_repeats:
        signs.add("stuffed title")
    return signs


class LinkFarms(Defence):
    """Per host, the pages judged and those stuffed, and the hosts its stuffed pages link to; the hosts closed as
    farms and the suspects (hosts a closed farm links to)."""

    name = "link_farms"

    def __init__(self, settings: LinkFarmSettings):
        self.settings = settings
        self.judged: Counter[str] = Counter()
        self.stuffed: Counter[str] = Counter()  # judged pages showing ``min_signs`` signs of spam
        self.linked: dict[str, set[str]] = {}  # host -> hosts its spam pages link to (until it is closed)
        self.suspects: set[str] = set()
        self.closed: set[str] = set()
        self.cleared: set[str] = set()  # hosts read enough to be sure they are written text: no longer read

    def record(self, host: str, text: str, links: Iterable[str] = (), title: str = "",
               anchors: Iterable[str] = ()) -> list[str]:
        """Read a fetched page's main text, title and links' anchors (``links``: its links' URLs, whose hosts are
        read only when the page is spam); returns the hosts it closes: its own, and suspects it makes that have
        already shown enough spam pages."""
        if host in self.closed or host in self.cleared:
            return []
        signs = spam_signs(self.settings, text, title, anchors)
        if signs is None:
            return []
        self.judged[host] += 1
        if len(signs) >= self.settings.min_signs:
            self.stuffed[host] += 1
            self.linked.setdefault(host, set()).update(site_of(url) for url in links)
        if not self._is_farm(host):
            # Reading costs a tenth of a millisecond a page. A host of 100 judged pages under half the farm share
            # would need about as many stuffed pages in a row to become a farm: it is read no more.
            judged = self.judged[host]
            if judged >= _CLEAR_PAGES and self.stuffed[host] < 0.5 * self.settings.farm_share * judged:
                self.cleared.add(host)
            return []
        closed = [host]
        self.closed.add(host)
        suspects = self.linked.pop(host, set()) - self.closed
        self.suspects |= suspects
        for suspect in sorted(suspects):
            if self._is_farm(suspect):
                self.closed.add(suspect)
                self.linked.pop(suspect, None)
                closed.append(suspect)
        return closed

    def refuse(self, url: str, host: str, crawl: Crawl) -> str:
        return LINK_FARM if host in self.closed else ""

    def review(self, fetch: Fetch, crawl: Crawl) -> None:
        """A page with no verdict yet is read; the farms it closes are closed as failing hosts are."""
        if fetch.own or not fetch.page.ok or fetch.verdict:
            return
        page = fetch.page
        farms = self.record(fetch.host, page.text, (url for url, _ in fetch.links), page.title,
                            (link.anchor for link in page.outlinks))
        for farm in farms:
            fetch.skipped.extend(crawl.close_host(farm, LINK_FARM))
        if fetch.host in farms:
            fetch.reject(LINK_FARM)

    def _is_farm(self, host: str) -> bool:
        min_pages = self.settings.suspect_min_pages if host in self.suspects else self.settings.min_pages
        judged = self.judged[host]
        return judged >= min_pages and self.stuffed[host] >= self.settings.farm_share * judged
