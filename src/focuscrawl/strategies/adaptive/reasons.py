"""The words of each ``adaptive`` selection's reason, from what the selection holds already: the URL's evidence
row, the graph's sums behind it, its host's counts. docs/interfaces.md, "Reasons", names the evidence behind
each phrase."""

from __future__ import annotations

import math

import numpy as np

from focuscrawl.strategies.adaptive.evidence import EVIDENCE, GRAPH, Evidence


def explain(evidence: Evidence, weights: np.ndarray, i: int, score: float, x: np.ndarray | None = None) -> str:
    """URL ``i``'s prediction and the (at most two) pieces of evidence that raised it most under the model's
    ``weights`` (bias last), in words: "predicted relevance 0.82: linked from 3 crawled pages of relevance
    2.71 in all; its site's pages so far: 5 of 8 relevant". ``x``: its evidence row, if read already."""
    if is_seed(evidence, i):
        return f"a seed, predicted relevance {score:.2f}"
    if x is None:
        x = evidence.rows(np.array([i]))[0]
    contributions = weights[:-1] * x
    top = [k for k in np.argsort(-contributions, kind="stable")[:2] if contributions[k] > 0]
    return f"predicted relevance {score:.2f}" + (": " if top else "") + "; ".join(
        describe(evidence, k, i, x[k]) for k in top)


def exploring(evidence: Evidence, column: int, i: int, value: float) -> str:
    """An exploring step's reason: the evidence it followed to URL ``i``, worth ``value`` there."""
    if is_seed(evidence, i):
        return "exploring: a seed"
    return f"exploring, by one kind of evidence alone: {describe(evidence, column, i, value)}"


def is_seed(evidence: Evidence, i: int) -> bool:
    """No crawled page links to URL ``i``: a seed, whose evidence is made up (SEED_EVIDENCE), not worth quoting."""
    return evidence.graph.fl[i, 0] == 0


def describe(evidence: Evidence, column: int, i: int, value: float) -> str:
    """Evidence ``column`` of URL ``i``, worth ``value``, in words with the numbers a user can check."""
    if column < len(GRAPH):
        return evidence.graph.describe(i, column)
    name = EVIDENCE[column]
    if name == "parent":
        return f"linked from a page of relevance {value:.2f}"
    if name == "anchor":
        return f"the text around a link to it matches the topic ({value:.2f})"
    if name == "words":
        return f"its URL and anchor words match the topic ({value:.2f})"
    if name == "links":
        return f"links like it led to relevant pages ({value:.2f})"
    if name == "path":
        if value >= 1.0:
            return "one link from a relevant page"
        if value <= 0.0:  # halved past the smallest float
            return "far below any relevant page"
        return f"{round(-math.log2(value)) + 1} links below a relevant page"
    if name == "local":
        return ("on the same site as a page linking to it" if value >= 1.0 else
                "in the same domain as a page linking to it" if value > 0 else
                "on another site than the pages linking to it")
    return _describe_host(evidence, name, i, value)


def _describe_host(evidence: Evidence, name: str, i: int, value: float) -> str:
    hosts = evidence.hosts
    host = int(evidence.graph.host[i])
    fetched = int(hosts.fetched[host])
    if name == "site":
        return (f"its site's pages so far: {int(hosts.relevant[host])} of {fetched} relevant" if fetched else
                f"a site not fetched yet, rated at the crawl's share of relevant pages ({value:.2f})")
    if name == "known":
        return "its site has served pages to the crawl" if value > 0 else "a site that has served no page yet"
    return (f"its site has had {1.0 - value:.0%} of the crawl's pages" if fetched else
            "a site with none of the crawl's pages yet")
