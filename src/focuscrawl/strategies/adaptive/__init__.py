"""``adaptive``: a crawler that learns, on the web it is crawling, which evidence to trust.

Every frontier URL carries the evidence that some strategy of the literature relies on alone:

    fl-deg, fl-n,    its crawled parents: how many, the sum of their relevance, of their links' context
    fl-e, fl-ne      relevance, and of the two multiplied; each log-smoothed (Gouriten et al.'s first
                     level, which their lr-fl and bandits use)
    sl-n, sl-e,      the same sums over its parents' crawled children: are its parents hubs of relevant
    sl-ne            pages? (Gouriten et al.'s second level, lr-sl)
    parent           the best relevance among its parents (best-first, ACHE)
    anchor           the best relevance of the context of a link to it (TRES's anchor feature)
    words            tf-idf similarity of its URL words and first anchor to the topic (Han et al.)
    links            an online logistic model of URL and anchor words, trained on the crawl's own pages
                     (ACHE's link classifier)
    path             1 for a link from a relevant page, halved by each irrelevant page since (TRES, Han)
    local            1 for a link within its parent's host, 0.5 within its parent's registered domain, else 0
    site             how often pages of its host were relevant so far (TRES's domain features)
    known            whether a page of its host was fetched successfully (TRES's "known domain")
    rare             1 minus the share of the crawl's fetches its host has taken so far: a pull, if the crawl
                     learns to trust it, towards hosts it has spent little on, so that a crawl does not stay on
                     one large host of moderately relevant pages while other hosts hold relevant ones

A site that has taken a tenth of the crawl (``leave_share``) and 30 pages or more, and whose pages the agent judged
relevant at under half the rate of the other sites' pages, is *left*: its URLs are ranked below every other
site's until its share falls under a tenth again. ``rare`` asks the model to learn that; this does not, because on
a web where the judge scores a large site's pages just under its threshold the model can keep trusting the site's
other evidence (TRES's second objective: relevant sites early). A site alone in the crawl is never left.

Which of them predicts relevance differs from web to web, and no single strategy wins everywhere. So the
policy fits, online, a linear model of the fetched pages' relevance (the agent's classifier's probability) on
all of it: recursive least squares with a weak ridge prior (``prior`` names evidence to trust from the start;
by default none) whose older samples count a little less (``forget``), and fetches the frontier URL with the
highest prediction. With probability ``explore`` it follows one piece of evidence alone (the best URL by it),
so that the model also learns what the evidence it does not trust yet would have found.

Each selection says why: its predicted relevance as ``score``, and as ``reason`` the two pieces of evidence
that contributed most, in words with the numbers behind them ("predicted relevance 0.82: linked from 3
crawled pages of relevance 2.71 in all; its site's pages so far: 5 of 8 relevant"), or for an exploring step
the evidence it followed ("exploring, by one kind of evidence alone: links like it led to relevant pages
(0.91)").

Costs. The crawled graph and its neighbourhood sums are Gouriten et al.'s (``frontier.graph``, shared with
``gouriten``), maintained incrementally; the other evidence is computed once per link, for all of a page's new
links at once (one classifier call; one tokenisation of each link, from which one compiled pass gives both its
topic-similarity terms and its hashed words, ``linkwords``; one sum of their link-model weights per page; each the
same numbers as link by link), and updated for the frontier URLs a page links to again. The ranking is
``frontier.ranking``'s lazily invalidated heap over predictions, updated for the
URLs whose evidence changed; the whole frontier is re-predicted (new weights, new link model, new site records)
every ``rerank_every`` selections, and more rarely on large frontiers, one numpy pass each. An exploring step
reads one evidence column of the frontier, or of a uniform sample of it on large frontiers. On small frontiers
none of this spacing or sampling applies.

Memory. Each URL's evidence stays in RAM, in rows of numbers (the graph's, OWN's, the ranking's prediction),
OWN's path and local stored as small integers, losslessly (``encode_own``); its string, hashed words and parent
edges, written once and read when it is selected, fetched or the link model re-scores the frontier, move to
disk past ``spill_after`` URLs (``frontier.spill``), exactly, so that the threshold changes the process's size
and never the crawl.

The package, in reading order:

    policy     AdaptivePolicy: reset, select (predict, explore, explain), observe (learn, add links' evidence)
    evidence   where each piece of evidence lives (GRAPH, OWN, HOST), OWN's packed rows, gathering a matrix
    hosts      per-host fetch counts and registered domains: the HOST evidence and ``local``
    models     the evidence model (recursive least squares) and the link model (logistic, hashed words)
    linkwords  a page's new links tokenised once: their hashed words and topic similarity
    kernels    the compiled loops (numba) of linkwords and of the re-rank's link-model sums
    reasons    the words of each selection's reason (docs/interfaces.md, "Reasons")
    pooling    learning across the shards of a distributed crawl
"""

from __future__ import annotations

from focuscrawl.strategies.adaptive.evidence import (
    EVIDENCE,
    GRAPH,
    LOCAL_VALUES,
    OWN,
    PATH_VALUES,
    PATH_ZERO,
    SCORES,
    encode_own,
)
from focuscrawl.strategies.adaptive.models import (
    OnlineLeastSquares,
    OnlineLogistic,
    hashed_words,
    hashed_words_many,
)
from focuscrawl.strategies.adaptive.policy import AdaptivePolicy
from focuscrawl.strategies.registry import StrategySpec, register

__all__ = ["EVIDENCE", "GRAPH", "LOCAL_VALUES", "OWN", "PATH_VALUES", "PATH_ZERO", "SCORES", "AdaptivePolicy",
           "OnlineLeastSquares", "OnlineLogistic", "encode_own", "hashed_words", "hashed_words_many"]

# Its judge: TF-IDF and a sentence-vector judge stacked on the examples (topic.vector_judge), which knows a page in
# other words than the examples' (adopted by docs/history/trials/judge-vectors-stacked-rule.md).
register(StrategySpec("adaptive", "learns online which evidence to trust (Gouriten's neighbourhood sums, parent and "
                                  "anchor relevance, Han's topic words, a link model, path, site): the default",
                      AdaptivePolicy, reward_model="tfidf+vectors-stacked"))
