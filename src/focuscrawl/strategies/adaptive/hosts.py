"""What ``adaptive`` knows of each host: its fetch counts, its registered domain, and the evidence drawn from them.

Hosts are numbered by the crawled graph (``CrawlGraph.host_ids``); these tables are indexed by that number and
grow with it. Three pieces of evidence are read from a URL's host when it is predicted, not stored per URL
(``HOST``): ``site``, ``known`` and ``rare``. ``local`` (stored per URL) compares a link's host and registered
domain with its page's.
"""

from __future__ import annotations

import numpy as np

from focuscrawl.strategies.frontier.graph import CrawlGraph
from focuscrawl.urls import registered_domain

HOST = ("site", "known", "rare")
LEFT_MIN_PAGES = 30  # pages a host must have taken before it can be left (``Hosts.left``)


class Hosts:
    """Per host: pages fetched, relevant, served successfully; and the crawl's totals."""

    def __init__(self, graph: CrawlGraph, site_prior: float):
        self.graph = graph
        self.site_prior = site_prior  # pseudo-fetches at the crawl's mean that ``site`` starts from
        self.fetched = np.zeros(64)
        self.relevant = np.zeros(64)
        self.ok = np.zeros(64)
        # Each host's registered domain as a number, looked up once per host (``domain``): per link, the domain's
        # own cache (65,536 hosts) misses most of the time on a frontier of 10M URLs over 200,000 hosts.
        self.domain_of = np.full(64, -1, np.int32)  # -1: not looked up yet
        self.domain_ids: dict[str, int] = {}
        self.fetched_total = self.relevant_total = 0
        self.others_fetched = 0  # pages other shards of a distributed crawl had fetched at the last pooling

    @property
    def names(self) -> list[str]:
        return self.graph.host_names

    def number(self, host: str) -> int:
        """The graph's number for ``host`` (a host of a URL it knows), the tables grown to hold it."""
        hid = self.graph.host_ids[host]
        if hid >= len(self.fetched):
            grow = max(len(self.fetched), hid + 1 - len(self.fetched))
            self.fetched, self.relevant, self.ok = (
                np.concatenate([a, np.zeros(grow)]) for a in (self.fetched, self.relevant, self.ok))
            self.domain_of = np.concatenate([self.domain_of, np.full(grow, -1, np.int32)])
        return hid

    def count(self, hid: int, relevant: bool, ok: bool) -> None:
        """A page of host ``hid`` was fetched."""
        self.fetched[hid] += 1
        self.relevant[hid] += relevant
        self.ok[hid] += ok
        self.fetched_total += 1
        self.relevant_total += int(relevant)

    def domain(self, hid: int) -> int:
        """The number of host ``hid``'s registered domain: hosts of one organisation share it."""
        if hid >= len(self.domain_of):
            self.number(self.names[hid])
        domain = int(self.domain_of[hid])
        if domain < 0:
            domain = self.domain_of[hid] = self.domain_ids.setdefault(registered_domain(self.names[hid]),
                                                                      len(self.domain_ids))
        return domain

    def local_halves(self, hid: int, hosts: list[str]) -> np.ndarray:
        """``local`` of links to ``hosts`` from a page on host ``hid``, in halves: 2 within its host, 1 within its
        registered domain, else 0."""
        number, domain = self.graph.host_ids.get, self.domain
        page_domain = domain(hid)
        halves = []
        for host in hosts:
            h = number(host)
            if h is None:  # not the host its URL was first seen with, so no number: compare the names
                halves.append(int(registered_domain(host) == registered_domain(self.names[hid])))
            else:
                halves.append(2 if h == hid else 1 if domain(h) == page_domain else 0)
        return np.array(halves, dtype=np.int8)

    def evidence(self, hosts: np.ndarray, out: np.ndarray) -> None:
        """The HOST columns of each host into ``out`` (one row per host, in HOST order). ``site``: how often its
        pages were relevant, shrunk towards the crawl's mean by ``site_prior`` pseudo-fetches (an unseen host
        gets the mean). ``known``: whether one was fetched successfully. ``rare``: 1 - its share of the crawl's
        fetches (1 for a host not fetched yet; on a one-host web 0 once a page is fetched: it says nothing
        there); a shard owns its hosts, so their counts are the crawl's, and the share is of the whole crawl's
        fetches (``others_fetched``, from the last pooling)."""
        self._rows(self.fetched[hosts], self.relevant[hosts], self.ok[hosts], out)

    def left(self, share: float) -> np.ndarray:
        """Per host number: whether the host has taken at least ``share`` of the fetches and ``LEFT_MIN_PAGES``,
        and the share of its pages judged relevant is under half the other hosts' (a host alone is never left)."""
        known = len(self.names)
        fetched, relevant = self.fetched[:known], self.relevant[:known]
        others_fetched = self.fetched_total - fetched
        others_rate = (self.relevant_total - relevant) / np.maximum(others_fetched, 1)
        large = (fetched >= LEFT_MIN_PAGES) & (fetched >= share * self.fetched_total) & (others_fetched > 0)
        return large & (relevant < 0.5 * others_rate * fetched)

    def terms(self) -> tuple[float, float, float]:
        """The constants of ``evidence``'s formulas, as its numpy operations use them: ``site``'s pseudo-relevant
        pages (``site_prior`` x the crawl's mean) and pseudo-fetches, and the fetches ``rare`` divides by (an int
        that numpy converts to float64 exactly). ``kernels.fill_rows`` computes the same per URL."""
        mean = (self.relevant_total + 1.0) / (self.fetched_total + 2.0)
        return self.site_prior * mean, self.site_prior, float(max(self.fetched_total + self.others_fetched, 1))

    def _rows(self, fetched: np.ndarray, relevant: np.ndarray, ok: np.ndarray, out: np.ndarray) -> None:
        prior_relevant, site_prior, fetches = self.terms()
        out[:, 0] = (relevant + prior_relevant) / (fetched + site_prior)
        out[:, 1] = ok > 0
        out[:, 2] = 1.0 - fetched / fetches
