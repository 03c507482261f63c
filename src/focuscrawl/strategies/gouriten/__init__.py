"""Gouriten, Maniu & Senellart (2014), "Scalable, Generic, and Adaptive Systems for Focused Crawling".

The paper models a crawl as the exploration of a graph with edge scores alpha and node scores beta
(Sec. 2.1), runs a generic loop (Algorithm 1, Sec. 4) whose parts are a frontier estimator
(scoreFrontier), a batch size (getBatchSize) and a node picker (getNextNodes: greedy or altered greedy,
Sec. 6), and compares estimators (Sec. 7). Modules, read in this order:

- ``scoring``: alpha and beta (classifier probability by default, or keyword tf-idf);
- ``focuscrawl.strategies.frontier.graph`` (shared with ``adaptive``): the crawled graph G' with
  incrementally maintained first/second-level neighbourhood sums;
- ``estimators``: bfs, opic, nr, fl_*, sl_*, lr_fl, lr_sl (and the oracle of Sec. 6);
- ``bandits``: mab_eps, mab_eps-first, mab_var over the first-level estimators;
- ``focuscrawl.strategies.frontier.ranking`` (shared): the lazily invalidated heap that finds the top
  frontier node without a frontier pass;
- ``policy``: Algorithm 1 as a focuscrawl ``Policy``.

Registered as the strategy ``gouriten`` (options below; default estimator ``fl-ne``) and these presets
(all greedy, b = 1, classifier scores, unless the name says otherwise):

=====================  ==========================================================================
``g-bfs``              Estimator 1, 1/(l(v)+1). Named g-bfs so as not to clash with the FIFO ``bfs``
                       baseline; ties go to the earliest discovered node, so it crawls as BFS does
                       except that a rediscovery through a shorter path moves a node up.
``opic``               Estimator 3, OPIC with the paper's alpha-weighted cash split.
``nr``                 Estimator 2, Navigational Rank with the corrected directions; global re-solve
                       every 10 estimations (<= 30 warm-started Jacobi sweeps), local update between.
``fl-deg`` ... ``sl-ne``  Estimator 4 (log-smoothed, Sec. 7.2).
``lr-fl``, ``lr-sl``   Estimator 5, recursive least squares on the fl (and sl) features.
``mab-eps``            Estimator 6, eps = 0.1 (exploration probability, see ``bandits``).
``mab-eps-first``      Estimator 7, eps = 0.1 of the budget.
``mab-var``            Estimator 8, the paper's mab_var-0.2-200: eps = 0.2, h(p) = 200 (p + 1).
``fl-ne-b{2,10,100}``  fl-ne re-estimated every b fetches (Sec. 6.2, Table 2).
``fl-ne-ag-q{q}-z{z}`` fl-ne with altered greedy (Sec. 6.1, Strategy 2): q = 0.8, zeta = 0.6 (mild)
                       and q = 0.4, zeta = 0.2 (risky). q is the probability of the *greedy* choice, as
                       in the paper (q = 1 is greedy), so "q = 0.1" would mean 90% random picks.
``<name>-kw``          opic, fl-n, fl-e, fl-ne, lr-fl and mab-var with the paper's keyword tf-idf
                       scores instead of the classifier (query: the topic's keywords).
``g-oracle``,          The strategy ``g-oracle``: the oracle estimator (true relevance of frontier nodes),
``g-oracle-b{2,8,32,128}``, ``g-oracle-ag-...``  and its presets with batches and altered greedy: Sec.
                       6's experiments exactly as the paper runs them. They read ground truth
                       (``needs_ground_truth``) and are reference points, not crawlers. ``g-oracle``
                       crawls as the ``greedy-oracle`` baseline does.
=====================  ==========================================================================

Every knob is a strategy option (see ``GouritenPolicy``), settable on any preset too.

Choices where the paper is silent or ambiguous (each also stated where it is implemented):

- beta in classifier mode is the engine's relevance (classifier on title + text); alpha is the same
  classifier on a 100-character window centred on the anchor's occurrence in the page text.
- The crawled graph only knows edges from crawled pages. Edges to pages on capped hosts are ignored;
  edges to crawled pages (not in ``Observation.links``) are read from the page when an estimator needs
  them (sl_*, lr-sl, nr).
- Scores of frontier nodes are compared exactly; ties go to the earliest discovered node.
- Batches (Sec. 6.2): at each estimation the top b nodes are taken; if the frontier held fewer than b,
  the rest of the batch picks uniformly random frontier nodes, as the paper's batch experiments do.
  Incremental estimators keep updating between estimations, but the batch in hand is not revised.
- lr: ridge 1e-2 prior for RLS; seeds (no parents) are training points with zero features; until the
  first crawl the regression scores every node 0 (crawl order = discovery order). The frontier is
  re-ranked with new weights at every estimation while the frontier is under 5k nodes, and every
  ceil(frontier / 5k) estimations above (bounded cost on a 100k frontier).
- Bandit reward is beta of the crawled node (the classifier probability, not the 0/1 engine reward).
- The paper drops sl_* from its final comparison as too slow; we keep them, maintained incrementally.
"""

from __future__ import annotations

from focuscrawl.strategies.gouriten.policy import GouritenPolicy
from focuscrawl.strategies.registry import (
    Preset,
    StrategySpec,
    register,
    register_preset,
)

register(StrategySpec("gouriten", "Gouriten et al. 2014: a frontier estimator (or a bandit over several) and a "
                                  "node picker (greedy, altered greedy, batches)", GouritenPolicy))


def _oracle(judge, **options) -> GouritenPolicy:
    return GouritenPolicy(**{"estimator": "g-oracle", **options}, judge=judge)


register(StrategySpec("g-oracle", "Gouriten et al. 2014, Sec. 6 (ground truth): the oracle estimator", _oracle,
                      needs_ground_truth=True))

# name, strategy, description, options: one row per variant the paper names (the papers suite runs them all)
_PRESETS = [
    ("g-bfs", "gouriten", "bfs estimator 1/(depth+1), greedy", {"estimator": "g-bfs"}),
    ("opic", "gouriten", "OPIC with alpha-weighted cash (Estimator 3)", {"estimator": "opic"}),
    ("nr", "gouriten", "Navigational Rank, corrected directions, periodic bounded re-solve (Estimator 2)",
     {"estimator": "nr"}),
    ("fl-deg", "gouriten", "number of crawled parents, log-smoothed (Estimator 4)", {"estimator": "fl-deg"}),
    ("fl-n", "gouriten", "sum of parents' beta, log-smoothed (Estimator 4)", {"estimator": "fl-n"}),
    ("fl-e", "gouriten", "sum of in-edges' alpha, log-smoothed (Estimator 4)", {"estimator": "fl-e"}),
    ("fl-ne", "gouriten", "sum of parents' beta x alpha, log-smoothed (Estimator 4)", {"estimator": "fl-ne"}),
    ("sl-n", "gouriten", "second level: sum of beta, log-smoothed (Estimator 4)", {"estimator": "sl-n"}),
    ("sl-e", "gouriten", "second level: sum of alpha, log-smoothed (Estimator 4)", {"estimator": "sl-e"}),
    ("sl-ne", "gouriten", "second level: sum of beta x alpha, log-smoothed (Estimator 4)", {"estimator": "sl-ne"}),
    ("lr-fl", "gouriten", "incremental least squares on the fl features (Estimator 5)", {"estimator": "lr-fl"}),
    ("lr-sl", "gouriten", "incremental least squares on the fl and sl features (Estimator 5)",
     {"estimator": "lr-sl"}),
    ("mab-eps", "gouriten", "epsilon-greedy bandit over fl estimators and lr-fl, eps 0.1 (Estimator 6)",
     {"estimator": "mab-eps"}),
    ("mab-eps-first", "gouriten", "epsilon-first bandit, eps 0.1 (Estimator 7)", {"estimator": "mab-eps-first"}),
    ("mab-var", "gouriten", "epsilon-first with variable reset, eps 0.2, h(p)=200(p+1) (Estimator 8)",
     {"estimator": "mab-var"}),
    ("fl-ne-b2", "gouriten", "fl-ne, frontier re-estimated every 2 fetches", {"estimator": "fl-ne", "batch": 2}),
    ("fl-ne-b10", "gouriten", "fl-ne, frontier re-estimated every 10 fetches", {"estimator": "fl-ne", "batch": 10}),
    ("fl-ne-b100", "gouriten", "fl-ne, frontier re-estimated every 100 fetches",
     {"estimator": "fl-ne", "batch": 100}),
    ("fl-ne-ag-q0.8-z0.6", "gouriten", "fl-ne with altered greedy q=0.8 zeta=0.6 (mild)",
     {"estimator": "fl-ne", "q": 0.8, "zeta": 0.6}),
    ("fl-ne-ag-q0.4-z0.2", "gouriten", "fl-ne with altered greedy q=0.4 zeta=0.2 (risky)",
     {"estimator": "fl-ne", "q": 0.4, "zeta": 0.2}),
    ("opic-kw", "gouriten", "opic with keyword tf-idf alpha and beta (Sec. 2.3)",
     {"estimator": "opic", "scores": "tfidf"}),
    ("fl-n-kw", "gouriten", "fl-n with keyword tf-idf alpha and beta (Sec. 2.3)",
     {"estimator": "fl-n", "scores": "tfidf"}),
    ("fl-e-kw", "gouriten", "fl-e with keyword tf-idf alpha and beta (Sec. 2.3)",
     {"estimator": "fl-e", "scores": "tfidf"}),
    ("fl-ne-kw", "gouriten", "fl-ne with keyword tf-idf alpha and beta (Sec. 2.3)",
     {"estimator": "fl-ne", "scores": "tfidf"}),
    ("lr-fl-kw", "gouriten", "lr-fl with keyword tf-idf alpha and beta (Sec. 2.3)",
     {"estimator": "lr-fl", "scores": "tfidf"}),
    ("mab-var-kw", "gouriten", "mab-var with keyword tf-idf alpha and beta (Sec. 2.3)",
     {"estimator": "mab-var", "scores": "tfidf"}),
    ("g-oracle-b2", "g-oracle", "oracle estimator, batch 2", {"batch": 2}),
    ("g-oracle-b8", "g-oracle", "oracle estimator, batch 8", {"batch": 8}),
    ("g-oracle-b32", "g-oracle", "oracle estimator, batch 32", {"batch": 32}),
    ("g-oracle-b128", "g-oracle", "oracle estimator, batch 128", {"batch": 128}),
    ("g-oracle-ag-q0.8-z0.6", "g-oracle", "oracle estimator, altered greedy q=0.8 zeta=0.6", {"q": 0.8, "zeta": 0.6}),
    ("g-oracle-ag-q0.4-z0.2", "g-oracle", "oracle estimator, altered greedy q=0.4 zeta=0.2", {"q": 0.4, "zeta": 0.2}),
]
for _name, _strategy, _description, _options in _PRESETS:
    register_preset(Preset(_name, _strategy, f"Gouriten et al. 2014: {_description}", _options))

__all__ = ["GouritenPolicy"]
