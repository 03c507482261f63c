"""``focuscrawl/Crawl-v0``: a focused crawl of a labelled offline web as a Gymnasium environment.

One episode is one crawl of the topic, built as ``focuscrawl bench`` builds each of its crawls (the topic's
example pages and classifier, seeds drawn from its seed pool, the engine with its closure, caps, budget and
defences). Each step offers the ``candidates`` frontier URLs ``adaptive``'s model rates highest, with
adaptive's evidence (``focuscrawl.gym.choice``); the action picks one; the engine fetches it, and the reward
is the fetched page's relevance:

- ``reward="labels"`` (the default): 1 for a page of the topic by the web's labels, counted once per page
  (``GroundTruth.credit_once``, as the benchmark scores crawls), else 0. The labels reach the agent through
  the reward and nowhere else: the benchmark's own exception for scoring, and its oracles'.
- ``reward="classifier"``: the agent's own classifier's probability for the page, what every policy is given
  (``Observation.relevance``), with no label involved.

The episode is truncated when the budget is spent and terminated when the crawl has nothing left to fetch.
A step fetches one page of the agent's choosing, and also any page the engine fetches for itself first (a
soft-404 probe, a selection parked while its host backed off): its reward is theirs too.

Randomness: the configuration's ``seed`` draws the topic's example pages (hence the classifier), as bench's
does; ``reset(seed=...)`` draws each episode's run, which sets its seed pages (``BenchTopic.seeds_for_run``) and
its crawl's seed (``seed * 1000 + run``, as bench's run ``run``). ``reset(options={"run": i})`` crawls from
bench's run ``i`` exactly.
"""

from __future__ import annotations

from typing import Any, Literal

import gymnasium
import numpy as np
from gymnasium import spaces
from pydantic import Field, ValidationError

from focuscrawl.bench.protocol import load_topic
from focuscrawl.builder import Classifiers, build_crawl
from focuscrawl.config import EXAMPLES_IRRELEVANT, SEED_REACH_SHARE, RunSettings, describe_validation_error
from focuscrawl.gym.choice import HIGH, LOW, EnvChoice
from focuscrawl.types import StepEvent
from focuscrawl.webs import resolve_web_dir
from focuscrawl.webs.store import OfflineWeb

ENV_ID = "focuscrawl/Crawl-v0"
CHOICE = "focuscrawl.gym.choice:EnvChoice"  # the policy every episode's crawl is built with
RUNS = 2**31  # an episode's run is drawn among these


class CrawlEnvConfig(RunSettings):
    """The environment's settings: a crawl's (``RunSettings``: budget, seed, max_per_domain, defences, ...) and
    the benchmark topic's, as ``focuscrawl bench`` takes them."""

    web: str = Field("embedded", description="offline web directory, or 'embedded'")
    topic: str = Field("subject.Science.Biology", description="label of the topic on that web")
    candidates: int = Field(8, ge=1, description="frontier URLs offered at each step (the actions)")
    reward: Literal["labels", "classifier"] = Field("labels", description="labels: 1 for a page of the topic by "
                                                    "the web's labels; classifier: the agent's classifier's "
                                                    "probability for the page")
    seeds_per_run: int = Field(1, gt=0, description="relevant seed pages per episode")
    seed_reach_share: float = Field(SEED_REACH_SHARE, gt=0, le=1, description="as bench's")
    examples_irrelevant: int = Field(EXAMPLES_IRRELEVANT, gt=0, description="as bench's")


class CrawlEnv(gymnasium.Env):
    """A crawl of ``topic`` on the offline web ``web`` (settings: ``CrawlEnvConfig``'s fields as keywords)."""

    metadata = {"render_modes": []}

    def __init__(self, render_mode: str | None = None, **settings: Any):
        if render_mode is not None:
            raise ValueError(f"focuscrawl/Crawl-v0 renders nothing (render_mode={render_mode!r}); omit it")
        try:
            config = CrawlEnvConfig.model_validate(settings)
        except ValidationError as exc:
            raise ValueError(describe_validation_error(exc)) from None
        self.config = config
        self.web = OfflineWeb(resolve_web_dir(config.web))
        try:
            self.topic = load_topic(self.web, config.topic, seed=config.seed, budget=config.budget,
                                    reach_share=config.seed_reach_share,
                                    examples_irrelevant=config.examples_irrelevant)
            self.topic.seeds_for_run(0, config.seeds_per_run)  # a topic that cannot seed a crawl fails here
        except Exception:
            self.web.close()
            raise
        self.settings = RunSettings.model_validate({**config.model_dump(include=set(RunSettings.model_fields)),
                                                    "options": {CHOICE: {"candidates": config.candidates}}})
        self.classifiers = Classifiers(self.topic.inputs, config.seed, memoize=True,
                                       page_encoder=config.page_encoder)
        k = config.candidates
        self.observation_space = spaces.Box(np.tile(LOW, (k, 1)), np.tile(HIGH, (k, 1)), dtype=np.float32)
        self.action_space = spaces.Discrete(k)
        self.crawl, self.run = None, 0

    @property
    def policy(self) -> EnvChoice:
        assert self.crawl is not None, "reset() first"
        return self.crawl.policy

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        options = dict(options or {})
        run = options.pop("run", None)
        if options:
            raise ValueError(f"unknown reset option {', '.join(map(str, options))}; known: run")
        run = int(self.np_random.integers(RUNS)) if run is None else int(run)
        seeds = self.topic.seeds_for_run(run, self.config.seeds_per_run)
        settings = self.settings.model_copy(update={"seed": self.config.seed * 1000 + run})
        self.crawl = build_crawl(settings, CHOICE, self.topic.inputs, seeds, classifiers=self.classifiers,
                                 judge=self.topic.truth.credit_once())
        self.run = run
        return self.policy.offer(), self._info("", seeds=list(self.crawl.context.seeds))

    def step(self, action):
        policy, engine = self.policy, self.crawl.engine
        policy.pending = int(action)
        reward, url, ended = 0.0, "", False
        while True:
            selection = engine.next_selection()
            if selection is None:
                ended = True
                break
            event = engine.record(selection.url, self.web.fetch(selection.url))
            reward += self._reward(event)
            if policy.pending is None:  # the agent's choice, or what stood in for it, was fetched
                url = event.url
                break
        truncated = engine.done
        return policy.offer(), reward, ended and not truncated, truncated, self._info(url)

    def _reward(self, event: StepEvent) -> float:
        return float(bool(event.relevant)) if self.config.reward == "labels" else float(event.relevance)

    def _info(self, url: str, **more: Any) -> dict[str, Any]:
        """What the crawl did, for logs: nothing of the labels."""
        engine = self.crawl.engine
        return {"run": self.run, "url": url, "steps": engine.stats.steps, "frontier": engine.frontier_size,
                "candidates": int(self.action_masks().sum()), **more}

    def action_masks(self) -> np.ndarray:
        """Which actions name a candidate (the rest stand for the best one), for algorithms that mask actions."""
        return self.policy.rows[:, -1] > 0

    def close(self) -> None:
        self.web.close()
