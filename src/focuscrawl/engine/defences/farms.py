"""Link farms: hosts whose pages are strings of stuffed keywords, not written text.

A link farm's pages are made to look relevant: their text and anchors are the topic's words, page after page, each
page new to a near-duplicate test and rated relevant by any classifier of the topic. What they lack is the grammar
of written text. Ntoulas et al. (WWW 2006, "Detecting spam web pages through content analysis") found that the
share of a page's words that are a language's most common words (articles, prepositions, pronouns: its function
words) separates keyword-stuffed pages from the rest. A fixed list of function words is one language's; their
length is every alphabetic language's (Zipf's law of abbreviation: the most frequent words are the shortest), so a
page here is *stuffed* when under ``max_short_share`` of its letter-only words have three letters or fewer (the
clean webs' English pages: median 37% on Wikispeedia, 35% on WebKB; the messy web's farm pages: 5% and 7%; for other
alphabetic languages the rule rests on that law, not on a measurement here).

One page decides nothing: a list of names, a table of course numbers or a program listing reads the same (on the
clean WebKB, 68 of the 5,267 pages with 30 words or more; on Wikispeedia 3 of 4,470 lists). A *host* is a farm when at
least ``min_pages`` of its pages with ``min_words`` words have been read and at least ``farm_share`` of them are
stuffed; it is then closed as a failing host is ("link farm"). With 20 and 0.65 a host needs at least 13 stuffed
pages: on the two clean webs no host has more than 12 (Cornell's department, of 603), so no crawl of them, in any
order, closes a host (``python -m benchmarks.defences_on_clean``); the messy webs' farms are stuffed 84-92% of the
time over all their pages (0.8 left no margin: one farm full of abbreviations went uncaught for 231 pages), so a
farm is closed after about 20 of its pages.

Farms come in alliances: their pages link to each other to lend each other rank (Gyöngyi and Garcia-Molina, "Link
spam alliances", VLDB 2005; Wu and Davison, "Identifying link farm spam pages", WWW 2005, grow a known farm's set
along its links). So once a host is closed as a farm, the hosts its stuffed pages linked to are *suspects*: one of
them is closed on the same share of stuffed pages after only ``suspect_min_pages`` judged pages. Only a farm closed
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


class LinkFarmSettings(BaseModel):
    """A host whose pages read as stuffed keywords, not text, is closed ("link farm")."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    enabled: bool = True
    max_short_share: Annotated[float, Field(ge=0, le=1)] = Field(
        0.15, description="a page is stuffed when under this share of its words have three letters or fewer")
    min_words: Annotated[int, Field(ge=1)] = Field(30, description="words a page needs to be judged at all")
    min_pages: Annotated[int, Field(ge=1)] = Field(20, description="judged pages of a host before it can be closed")
    farm_share: Annotated[float, Field(ge=0, le=1)] = Field(
        0.65, description="share of a host's judged pages that must be stuffed to close it")
    suspect_min_pages: Annotated[int, Field(ge=1)] = Field(
        5, description="judged pages before a host that a closed farm's stuffed pages link to can be closed")


_CLEAR_PAGES = 100  # judged pages of a host before it can be cleared
_READ = 2000  # characters of a page read (about 300 words): a stuffed page is stuffed from its start


def short_word_share(text: str, min_words: int) -> float | None:
    """The share of the letter-only words with three letters or fewer in ``text``'s first ``_READ`` characters; None
    when it cannot be judged (too few words, or a script without spaces)."""
    text = text[:_READ]
    if _UNSPACED.search(text):
        return None
    tokens = words(text)
    if len(tokens) < min_words:
        return None
    return sum(len(token) <= 3 for token in tokens) / len(tokens)


class LinkFarms(Defence):
    """Per host, the pages judged and those stuffed, and the hosts its stuffed pages link to; the hosts closed as
    farms and the suspects (hosts a closed farm links to)."""

    name = "link_farms"

    def __init__(self, settings: LinkFarmSettings):
        self.settings = settings
        self.judged: Counter[str] = Counter()
        self.stuffed: Counter[str] = Counter()
        self.linked: dict[str, set[str]] = {}  # host -> hosts its stuffed pages link to (until it is closed)
        self.suspects: set[str] = set()
        self.closed: set[str] = set()
        self.cleared: set[str] = set()  # hosts read enough to be sure they are written text: no longer read

    def record(self, host: str, text: str, links: Iterable[str] = ()) -> list[str]:
        """Read a fetched page's main text (``links``: its links' URLs, whose hosts are read only when the page is
        stuffed); returns the hosts it closes: its own, and suspects it makes that have already shown enough
        stuffed pages."""
        if host in self.closed or host in self.cleared:
            return []
        share = short_word_share(text, self.settings.min_words)
        if share is None:
            return []
        self.judged[host] += 1
        if share < self.settings.max_short_share:
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
        farms = self.record(fetch.host, fetch.page.text, (url for url, _ in fetch.links))  # read if stuffed
        for farm in farms:
            fetch.skipped.extend(crawl.close_host(farm, LINK_FARM))
        if fetch.host in farms:
            fetch.reject(LINK_FARM)

    def _is_farm(self, host: str) -> bool:
        min_pages = self.settings.suspect_min_pages if host in self.suspects else self.settings.min_pages
        judged = self.judged[host]
        return judged >= min_pages and self.stuffed[host] >= self.settings.farm_share * judged
