"""``adaptive``'s defaults, one change at a time: strategies to run on the dev suite's tuning half beside it.

Each name below is ``adaptive`` with one option changed from its default (docs/benchmark.md, "How defaults
are chosen"); bench takes them as ``module:attribute`` strategies, so run it from the repository root with
the root on ``PYTHONPATH`` (the ``focuscrawl`` command does not put the current folder on the path):

    PYTHONPATH=. .venv/bin/focuscrawl bench --suite dev --webs webs --half tuning --strategy adaptive,\
benchmarks.adaptive_grid:best_first_prior,benchmarks.adaptive_grid:no_forgetting,\
benchmarks.adaptive_grid:no_exploration,benchmarks.adaptive_grid:more_exploration,\
benchmarks.adaptive_grid:no_link_context,benchmarks.adaptive_grid:wide_link_context --out runs/grid

The defaults: no prior (strength 0.01), forget 0.995, explore 0.1, window 100 characters. The variants of two
options measured and removed (``learned_exploration``, ``graph_submodel``, ``graph_submodel_no_exploration``,
``family_submodels``) are in docs/history/trials/adaptive-rejected-options.md.
"""

from __future__ import annotations

from focuscrawl.strategies.adaptive import AdaptivePolicy


def best_first_prior() -> AdaptivePolicy:
    """Trust the parent's relevance from the start, as best-first does, with a prior worth 10 samples."""
    return AdaptivePolicy(prior={"parent": 1.0}, prior_strength=10.0)


def no_forgetting() -> AdaptivePolicy:
    """Every sample counts alike (forget 1.0)."""
    return AdaptivePolicy(forget=1.0)


def no_exploration() -> AdaptivePolicy:
    """Always the model's best URL (explore 0)."""
    return AdaptivePolicy(explore=0.0)


def more_exploration() -> AdaptivePolicy:
    """One selection in four follows a single piece of evidence (explore 0.25)."""
    return AdaptivePolicy(explore=0.25)


def no_link_context() -> AdaptivePolicy:
    """Link context is the anchor text alone (window 0)."""
    return AdaptivePolicy(window=0)


def wide_link_context() -> AdaptivePolicy:
    """300 characters of page text around a link (window 300)."""
    return AdaptivePolicy(window=300)


def bootstrapped_half() -> AdaptivePolicy:
    """The model's target is a page's relevance plus half the best prediction among the links it opens (gamma
    0.5): evidence of pages that lead to relevant ones (a department's home page, an index) earns credit, as
    Han et al.'s SARSA value and TRES's Q-values give it."""
    return AdaptivePolicy(gamma=0.5)


def bootstrapped_strong() -> AdaptivePolicy:
    """bootstrapped_half with gamma 0.8."""
    return AdaptivePolicy(gamma=0.8)
