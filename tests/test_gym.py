"""focuscrawl.gym: the Gymnasium environment passes Gymnasium's own checker, its observations carry no label, the
same seed gives the same episode, bad settings are one line, and the gym-agent strategy runs a trained model in
``focuscrawl bench`` (a DQN trained for a few dozen steps: the wiring, not the agent's quality)."""

from __future__ import annotations

import json
import random
import warnings

import numpy as np
import pytest

gymnasium = pytest.importorskip("gymnasium")
pytest.importorskip("stable_baselines3")

from gymnasium.utils.env_checker import check_env  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

import focuscrawl.gym  # noqa: E402, F401
from focuscrawl.bench.protocol import GroundTruth, TopicError  # noqa: E402
from focuscrawl.builder import build_crawl  # noqa: E402
from focuscrawl.cli.main import app  # noqa: E402
from focuscrawl.config import RunSettings  # noqa: E402
from focuscrawl.gym import CrawlEnv  # noqa: E402
from focuscrawl.gym.choice import FEATURES  # noqa: E402

TOPIC = "subject.Science.Biology"  # on the embedded web


@pytest.fixture(scope="module")
def env():
    """The environment most tests share (each builds the topic's classifier, a second or so)."""
    env = make()
    yield env
    env.close()


def make(**settings):
    return gymnasium.make("focuscrawl/Crawl-v0", **{"web": "embedded", "topic": TOPIC, "budget": 40, **settings})


def episode(env, seed: int, actions_seed: int = 0):
    """One episode with actions drawn from a generator of its own: (observations, rewards, infos)."""
    rng = np.random.default_rng(actions_seed)
    obs, info = env.reset(seed=seed)
    observations, rewards, infos = [obs], [], [info]
    done = False
    while not done:
        obs, reward, terminated, truncated, info = env.step(int(rng.integers(env.action_space.n)))
        observations.append(obs)
        rewards.append(reward)
        infos.append(info)
        done = terminated or truncated
    return observations, rewards, infos


def test_check_env_passes_without_a_warning(env):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        check_env(env.unwrapped)


def test_spaces_and_an_episode_to_the_budget(env):
    assert env.observation_space.shape == (8, len(FEATURES)) and env.action_space.n == 8
    observations, rewards, infos = episode(env, seed=1)
    assert len(rewards) == 40 and infos[-1]["steps"] == 40  # truncated at the budget: one page per step here
    assert all(env.observation_space.contains(obs) for obs in observations)
    assert all(r in (0.0, 1.0) for r in rewards) and sum(rewards) > 0
    assert infos[0]["seeds"] and infos[-1]["url"]


def test_same_seed_same_episode_and_another_seed_another(env):
    first = episode(env, seed=7)
    episode(env, seed=8, actions_seed=1)  # nothing of an episode stays for the next
    again = episode(env, seed=7)
    assert all(np.array_equal(a, b) for a, b in zip(first[0], again[0]))
    assert first[1] == again[1] and first[2] == again[2]
    assert episode(env, seed=8)[2][0]["run"] != first[2][0]["run"]


def test_observations_carry_no_label(env):
    """The same episode with the topic's labels dealt out again: the same observations, other rewards."""
    topic = env.unwrapped.topic
    truth = topic.truth
    before = episode(env, seed=2)
    urls = sorted(truth.web.labels())
    topic.truth = GroundTruth(truth.topic, frozenset(random.Random(3).sample(urls, len(truth.relevant))), truth.web)
    try:
        after = episode(env, seed=2)
    finally:
        topic.truth = truth
    assert all(np.array_equal(x, y) for x, y in zip(before[0], after[0]))
    assert [i["url"] for i in before[2]] == [i["url"] for i in after[2]]
    assert before[1] != after[1]


def test_the_classifier_as_reward():
    env = make(reward="classifier", budget=20)
    _, rewards, _ = episode(env, seed=1)
    assert all(0.0 <= r <= 1.0 for r in rewards) and any(0.0 < r < 1.0 for r in rewards)
    env.close()


def test_a_run_of_bench_and_an_action_past_the_candidates(env):
    _, info = env.reset(options={"run": 0})
    seeds = env.unwrapped.topic.seeds_for_run(0, 1)
    assert info["seeds"] == seeds
    assert info["candidates"] == 1  # one seed: one candidate; any action fetches it
    _, _, _, _, info = env.step(7)
    assert info["url"] == seeds[0]
    with pytest.raises(ValueError, match="unknown reset option"):
        env.reset(options={"runs": 1})


@pytest.mark.parametrize("settings, message", [
    ({"candidates": 0}, "setting candidates"),
    ({"reward": "clicks"}, "setting reward"),
    ({"budgets": 5}, "setting budgets: unknown setting"),
    ({"topic": "subject.Nothing"}, "no page of"),
    ({"render_mode": "human"}, "renders nothing"),
])
def test_bad_settings_are_one_line(settings, message):
    with pytest.raises((ValueError, TopicError)) as error:
        CrawlEnv(**{"web": "embedded", "topic": TOPIC, **settings})
    assert message in str(error.value) and "\n" not in str(error.value)


@pytest.fixture(scope="module")
def trained(env, tmp_path_factory):
    """A DQN trained for 64 steps on the embedded web, saved."""
    from stable_baselines3 import DQN

    model = DQN("MlpPolicy", env, learning_starts=16, buffer_size=256, batch_size=8, train_freq=4,
                policy_kwargs={"net_arch": [16]}, seed=0, device="cpu")
    model.learn(total_timesteps=64)
    path = tmp_path_factory.mktemp("agent") / "dqn.zip"
    model.save(path)
    return path


@pytest.mark.slow
def test_the_trained_agent_in_a_tiny_bench(trained, tmp_path):
    result = CliRunner().invoke(app, ["bench", "--web", "embedded", "--topic",
                                      "subject.Everyday_life.Food_and_agriculture",
                                      "--budget", "40", "--runs", "2", "--strategy", "gym-agent,adaptive",
                                      "-s", f"options.gym-agent.model={trained}", "--out", str(tmp_path), "--quiet"])
    assert result.exit_code == 0, result.output
    rows = {row["strategy"]: row for row in json.loads((tmp_path / "summary.json").read_text())["strategies"]}
    assert rows["gym-agent"]["runs"] == 2 and rows["gym-agent"]["steps_mean"] == 40
    assert 0 < rows["gym-agent"]["auc_ratio_mean"] <= 1.0


@pytest.mark.slow
def test_the_trained_agent_resumes_from_a_checkpoint(env, trained):
    topic = env.unwrapped.topic
    settings = RunSettings(budget=30, options={"gym-agent": {"model": str(trained)}})
    seeds = topic.seeds_for_run(0, 1)

    def crawl():
        return build_crawl(settings, "gym-agent", topic.inputs, seeds, classifiers=env.unwrapped.classifiers)

    def step(crawl):
        selection = crawl.engine.next_selection()
        return None if selection is None else crawl.engine.record(selection.url, env.unwrapped.web.fetch(selection.url))

    whole, half = crawl(), crawl()
    urls = [event.url for event in iter(lambda: step(whole), None)]
    for _ in range(15):
        step(half)
    resumed = crawl()
    resumed.engine.restore(half.engine.snapshot())
    assert [event.url for event in iter(lambda: step(resumed), None)] == urls[15:]


@pytest.mark.slow
def test_gym_agent_errors_are_one_line(tmp_path, trained):
    runner = CliRunner()
    base = ["bench", "--web", "embedded", "--topic", TOPIC, "--budget", "20", "--runs", "1", "--out",
            str(tmp_path / "out"), "--strategy", "gym-agent"]
    not_a_model = tmp_path / "notes.zip"
    not_a_model.write_text("hello")
    for options, message in [([], "needs a trained model"),
                             (["-s", f"options.gym-agent.model={tmp_path / 'none.zip'}"], "no model at"),
                             (["-s", f"options.gym-agent.model={not_a_model}"], "is not a Stable-Baselines3 DQN"),
                             (["-s", f"options.gym-agent.model={trained}", "-s", "options.gym-agent.algorithm=PPO"],
                              "is not a Stable-Baselines3 PPO"),
                             (["-s", f"options.gym-agent.model={trained}", "-s", "options.gym-agent.algorithm=Nope"],
                              "not a Stable-Baselines3 algorithm")]:
        result = runner.invoke(app, base + options)
        assert result.exit_code == 2, result.output
        assert message in result.output and len(result.output.strip().splitlines()) == 1, result.output


def test_strategies_lists_the_installed_gym_agent():
    result = CliRunner().invoke(app, ["strategies"])
    assert result.exit_code == 0, result.output
    assert "gym-agent" in result.output and "focuscrawl.gym.agent:TrainedAgent" in result.output
