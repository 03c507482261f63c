from __future__ import annotations

import numpy as np
import pytest
from conftest import crawl_tiny

from focuscrawl.engine.defences.pipeline import PROBE
from focuscrawl.strategies.kaleel import EpsilonSchedule, UrlBayes, hybrid_reward, sarsa_update, url_reward

KALEEL = ["pr-greedy", "pr-decay", "url-greedy", "url-decay", "hybrid-decay", "hybrid-reward-decay"]




def test_fixed_and_linear_epsilon():
    fixed = EpsilonSchedule("fixed", budget=10)
    for _ in range(20):
        fixed.after_fetch(30.0)
    assert fixed.value == 0.1
    linear = EpsilonSchedule("linear", budget=10)
    values = [linear.value]
    for _ in range(12):
        linear.after_fetch(-1.0)
        values.append(linear.value)
    assert values[:11] == pytest.approx([0.9 - 0.08 * k for k in range(11)])  # 0.9 -> 0.1 over the budget
    assert values[11:] == pytest.approx([0.1, 0.1])


def test_reward_based_epsilon_waits_for_reward():
    schedule = EpsilonSchedule("reward", budget=100, target_harvest=0.5)
    for _ in range(50):
        schedule.after_fetch(-1.0)  # nothing found: keep exploring
    assert schedule.value == 0.9
    schedule.after_fetch(30.0)  # a full reward counts 1 / target_harvest linear steps
    assert schedule.value == pytest.approx(0.9 - 2 * 0.008)
    schedule.after_fetch(20.0)
    assert schedule.value == pytest.approx(0.9 - 2 * 0.008 - (20 / 30) / 0.5 * 0.008)
    for _ in range(1000):
        schedule.after_fetch(30.0)
    assert schedule.value == pytest.approx(0.1)


def test_bayes_url_relevance_by_hand():
    model = UrlBayes()
    model.add("http://a.org/bird", True)
    model.add("http://a.org/train", False)
    # words: {org, bird} vs {org, train}; V = 3; P(R) = P(not R) = (1 + 1) / (2 + 2)
    # P(U|R) = 2/5 * 2/5, P(U|not R) = 2/5 * 1/5  ->  P(R|U) = 0.16 / (0.16 + 0.08) = 2/3
    assert model.prob("http://a.org/bird") == pytest.approx(2 / 3)
    assert model.prob("http://a.org/train") == pytest.approx(1 / 3)
    assert model.prob("http://a.org/") == pytest.approx(0.5)
    for i in range(5):
        model.add(f"http://birds.org/songbird-{i}", True)
    assert model.prob("http://birds.org/new") > 0.5 > model.prob("http://rail.org/train")


def test_hybrid_reward_algorithm_2():
    assert hybrid_reward(True, 0.5) == 30 and hybrid_reward(True, 0.49) == 25
    assert hybrid_reward(False, 0.8) == 20 and hybrid_reward(False, 0.2) == -1
    assert url_reward(False, 0.5) == 30 and url_reward(True, 0.1) == -1


def test_sarsa_update_by_hand():
    start = np.array([1.0, 2.0, 0.0])
    x = np.array([0.5, 0.5, 1.0])  # q(s, a) = 1.5
    w = start.copy()
    delta = sarsa_update(w, x, reward=-1.0, q_next=2.0, alpha=0.1, gamma=0.9, moderated=False)
    assert delta == pytest.approx(-0.7)
    assert w == pytest.approx(start + 0.1 * -0.7 * x)
    w = start.copy()
    sarsa_update(w, x, reward=-1.0, q_next=2.0, alpha=0.1, gamma=0.9, moderated=True)
    assert w == pytest.approx(start + 0.1 * (-1 + 0.9 * (2.0 + 0.7) - 1.5) * x)  # line 51
    w = start.copy()
    sarsa_update(w, x, reward=30.0, q_next=None, alpha=0.1, gamma=0.9)  # relevant page: line 46
    assert w == pytest.approx(start + 0.1 * 28.5 * x)


def test_url_model_learns_only_from_seeds_and_own_classifier(tiny_web):
    policy, events = crawl_tiny(tiny_web, "hybrid-decay", budget=25)
    events = [e for e in events if e.verdict != PROBE]  # the policy's steps, not the engine's soft-404 probes
    judged_relevant = sum(e.reward > 0 for e in events[1:])  # events[0] is the seed
    assert policy.urls.docs == [len(events) - 1 - judged_relevant, 1 + judged_relevant]


def test_decay_reaches_minimum_at_budget(tiny_web):
    # the schedule spans the budget: with no soft-404 probe taking a step the policy never sees, it ends at its floor
    policy, events = crawl_tiny(tiny_web, "pr-decay", budget=30, defences={"soft_404": {"enabled": False}})
    assert len(events) == 30 and policy.epsilon.value == pytest.approx(0.1)
    policy, _ = crawl_tiny(tiny_web, "pr-greedy", budget=30)
    assert policy.epsilon.value == 0.1


@pytest.mark.parametrize("strategy", KALEEL)
def test_crawls_tiny_web_without_refetching_and_deterministically(tiny_web, strategy):
    policy, events = crawl_tiny(tiny_web, strategy, budget=30)
    urls = [e.url for e in events]
    assert len(urls) == len(set(urls)) == 30
    assert urls == [e.url for e in crawl_tiny(tiny_web, strategy, budget=30)[1]]
    assert np.abs(policy.w).sum() > 0
