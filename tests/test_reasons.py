"""Every strategy says in words why it chose each page (``Selection.reason``, shown by pages.jsonl and the
dashboard): never a paper's code for it (sl-n, lr-sl, mab, Q, ...), and the numbers it quotes are the crawl's."""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import crawl_tiny, tiny_crawl

from focuscrawl.engine.defences.pipeline import PROBE
from focuscrawl.strategies import names
from focuscrawl.strategies.adaptive import EVIDENCE, reasons
from focuscrawl.strategies.gouriten.estimators import ESTIMATORS
from focuscrawl.strategies.gouriten.policy import BANDITS

# The names the papers and the code give to what chose a page, which a user cannot read.
CODES = sorted({*ESTIMATORS, *BANDITS, *(name for name in EVIDENCE if "-" in name), "mab", "lr", "fl", "sl"})
JARGON = ("SARSA", "epsilon", "bandit", "arm", "estimator", "leaf", "representatives", "greedy", "DDQN",
          "Tree-Frontier", "state, action", "alpha", "beta")
PAPER_CODE = re.compile("|".join([*(rf"(?<![\w-]){re.escape(code)}(?![\w-])" for code in CODES),
                                  *(rf"(?i:\b{re.escape(word)}\b)" for word in JARGON), r"\bQ\b"]))


def paper_codes(reason: str) -> list[str]:
    return PAPER_CODE.findall(reason)


def test_the_check_finds_the_codes_reasons_used_to_show():
    for old in ("predicted 0.04: sl-n 3.64, fl-n 1.49", "exploring: best by fl-ne alone (0.20)", "bandit arm lr-fl",
                "greedy: best Q of 190 leaf representatives; leaf 17 of 190", "estimator opic",
                "exploring: a random (state, action) pair", "exploring (epsilon 0.10)"):
        assert paper_codes(old), old
    assert not paper_codes("linked from 3 crawled pages of relevance 2.71 in all; on-topic text, a seed")


@pytest.mark.parametrize("name", names())
def test_every_reason_is_words(tiny_web, name):
    _, events = crawl_tiny(tiny_web, name, budget=40)
    assert events
    for event in events:
        assert event.reason.strip(), f"{name}: step {event.step} has no reason"
        assert not paper_codes(event.reason), f"{name}: {event.reason!r}"


def test_adaptive_says_each_kind_of_evidence_in_its_own_words(tiny_web):
    policy, events = crawl_tiny(tiny_web, "adaptive", budget=25)
    i = next(int(i) for i in policy.graph.frontier() if not reasons.is_seed(policy.evidence, int(i)))
    x = policy.evidence.rows(np.array([i]))[0]
    phrases = [reasons.describe(policy.evidence, k, i, float(x[k])) for k in range(len(EVIDENCE))]
    assert len(set(phrases)) == len(EVIDENCE), "one phrase per kind of evidence"
    assert not [p for p in phrases if paper_codes(p)]
    _, exploring = crawl_tiny(tiny_web, "adaptive", budget=25, explore=1.0)
    assert all(e.reason.startswith("exploring") and not paper_codes(e.reason) for e in exploring
               if e.verdict != PROBE)  # a soft-404 probe's reason is the engine's


def _parents_before(web, events) -> list[dict[str, list[float]]]:
    """For each step, the relevance of every page fetched before it, by the URLs those pages link to."""
    linked: dict[str, list[float]] = {}
    before = []
    for event in events:
        before.append({url: list(values) for url, values in linked.items()})
        for link in web.fetch(event.url).outlinks:
            linked.setdefault(link.url, []).append(event.relevance)
    return before


@pytest.mark.parametrize("name, pattern, check", [
    # fl-deg: how many crawled pages link to it
    ("fl-deg", r"^linked from (\d+) crawled pages?$", lambda parents, n: len(parents) == int(n)),
    # fl-n: how many, and their relevance summed
    ("fl-n", r"^linked from (\d+) crawled pages? of relevance ([\d.]+) in all$",
     lambda parents, n, total: len(parents) == int(n) and abs(sum(parents) - float(total)) <= 0.005),
    # best-first: the best page linking to it (before its link model exists)
    ("best-first", r"^linked from a page of relevance ([\d.]+)$",
     lambda parents, best: abs(max(parents) - float(best)) <= 0.005),
])
def test_the_numbers_in_a_reason_are_the_crawls_own(tiny_web, name, pattern, check):
    crawl, events, web = tiny_crawl(tiny_web, name, budget=40)
    crawl.engine.run(web)
    checked = 0
    for event, parents in zip(events, _parents_before(web, events)):
        match = re.match(pattern, event.reason)
        if match:
            assert check(parents.get(event.url, []), *match.groups()), (event.url, event.reason)
            checked += 1
    assert checked >= 10, f"{checked} reasons of {name} quote the numbers checked"
