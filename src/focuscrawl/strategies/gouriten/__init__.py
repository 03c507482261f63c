"""Gouriten, Maniu & Senellart (2014), "Scalable, Generic, and Adaptive Systems for Focused Crawling".

The paper models a crawl as the exploration of a graph with edge scores alpha and node scores beta
(Sec. 2.1), runs a generic loop (Algorithm 1, Sec. 4) whose parts are a frontier estimator
(scoreFrontier), a batch size (getBatchSize) and a node picker (getNextNodes: greedy or altered greedy,
Sec. 6), and compares estimators (Sec. 7). Modules, read in this order:

- ``scoring``: alpha and beta (classifier probability by default, or keyword tf-idf);
- ``graph``: the crawled graph G' with incrementally maintained first/second-level neighbourhood sums;
- ``estimators``: bfs, opic, nr, fl_*, sl_*, lr_fl, lr_sl (and the oracle of Sec. 6);
- ``bandits``: mab_eps, mab_eps-first, mab_var over the first-level estimators;
- ``ranking``: the lazily invalidated heap that finds the top frontier node without a frontier pass;
- ``policy``: Algorithm 1 as a focuscrawl ``Policy``.

Registered strategies (all greedy, b = 1, classifier scores, unless the name says otherwise):

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
``g-oracle``,          The oracle estimator (true relevance of frontier nodes) with batches and altered
``g-oracle-b{2,8,32,128}``, ``g-oracle-ag-...``  greedy: Sec. 6's experiments exactly as the paper runs
                       them. They read ground truth (``needs_ground_truth``) and are reference points,
                       not crawlers. ``g-oracle`` crawls as the ``oracle`` baseline does.
=====================  ==========================================================================

Every knob is also a strategy option (see ``GouritenPolicy``), for ``make_policy(name, **options)``.

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

from functools import partial

from focuscrawl.strategies import StrategySpec, register
from focuscrawl.strategies.gouriten.policy import GouritenPolicy


def _spec(name: str, description: str, **options) -> None:
    register(StrategySpec(name, f"Gouriten et al. 2014: {description}", partial(GouritenPolicy, **options)))


_spec("g-bfs", "bfs estimator 1/(depth+1), greedy", estimator="g-bfs")
_spec("opic", "OPIC with alpha-weighted cash (Estimator 3)", estimator="opic")
_spec("nr", "Navigational Rank, corrected directions, periodic bounded re-solve (Estimator 2)", estimator="nr")
for _name, _what in (("fl-deg", "number of crawled parents"), ("fl-n", "sum of parents' beta"),
                     ("fl-e", "sum of in-edges' alpha"), ("fl-ne", "sum of parents' beta x alpha"),
                     ("sl-n", "second level: sum of beta"), ("sl-e", "second level: sum of alpha"),
                     ("sl-ne", "second level: sum of beta x alpha")):
    _spec(_name, f"{_what}, log-smoothed (Estimator 4)", estimator=_name)
_spec("lr-fl", "incremental least squares on the fl features (Estimator 5)", estimator="lr-fl")
_spec("lr-sl", "incremental least squares on the fl and sl features (Estimator 5)", estimator="lr-sl")
_spec("mab-eps", "epsilon-greedy bandit over fl estimators and lr-fl, eps 0.1 (Estimator 6)", estimator="mab-eps")
_spec("mab-eps-first", "epsilon-first bandit, eps 0.1 (Estimator 7)", estimator="mab-eps-first")
_spec("mab-var", "epsilon-first with variable reset, eps 0.2, h(p)=200(p+1) (Estimator 8)", estimator="mab-var")
for _b in (2, 10, 100):
    _spec(f"fl-ne-b{_b}", f"fl-ne, frontier re-estimated every {_b} fetches", estimator="fl-ne", batch=_b)
for _q, _z in ((0.8, 0.6), (0.4, 0.2)):
    _spec(f"fl-ne-ag-q{_q}-z{_z}", f"fl-ne with altered greedy q={_q} zeta={_z}", estimator="fl-ne", q=_q, zeta=_z)
for _name in ("opic", "fl-n", "fl-e", "fl-ne", "lr-fl", "mab-var"):
    _spec(f"{_name}-kw", f"{_name} with keyword tf-idf alpha and beta (the paper's own scores, Sec. 2.3)",
          estimator=_name, scores="tfidf")


def _oracle(name: str, description: str, **options) -> None:
    def factory(judge, **more):
        return GouritenPolicy(**{"estimator": "g-oracle", **options, **more}, judge=judge)

    register(StrategySpec(name, f"Gouriten et al. 2014, Sec. 6 (ground truth): {description}", factory,
                          needs_ground_truth=True))


_oracle("g-oracle", "oracle estimator, greedy, b=1")
for _b in (2, 8, 32, 128):
    _oracle(f"g-oracle-b{_b}", f"oracle estimator, batch {_b}", batch=_b)
for _q, _z in ((0.8, 0.6), (0.4, 0.2)):
    _oracle(f"g-oracle-ag-q{_q}-z{_z}", f"oracle estimator, altered greedy q={_q} zeta={_z}", q=_q, zeta=_z)

__all__ = ["GouritenPolicy"]
