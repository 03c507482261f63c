"""A Gymnasium environment of focused crawling, and the strategy that runs an agent trained in it.

Importing ``focuscrawl.gym`` registers ``focuscrawl/Crawl-v0`` (``focuscrawl.gym.env``) with Gymnasium::

    import gymnasium
    import focuscrawl.gym  # noqa: F401

    env = gymnasium.make("focuscrawl/Crawl-v0", web="webs/wikispeedia", topic="subject.Science.Physics")

(``gymnasium.make("focuscrawl.gym:focuscrawl/Crawl-v0", ...)`` imports it too). ``focuscrawl.gym.agent`` is the
``gym-agent`` strategy, which loads a Stable-Baselines3 model trained there. Both need the ``gym`` extra. The
package sits above ``bench`` (it builds its topics as bench does); nothing below imports it, and the registry
finds ``gym-agent`` through the package's entry point (docs/interfaces.md, "A Gymnasium environment").
"""

from __future__ import annotations

from focuscrawl.extras import require

gymnasium = require("gymnasium", "gym", "focuscrawl.gym (the Gymnasium environment)")

from focuscrawl.gym.env import ENV_ID, CrawlEnv, CrawlEnvConfig  # noqa: E402

if ENV_ID not in gymnasium.registry:
    gymnasium.register(ENV_ID, entry_point="focuscrawl.gym.env:CrawlEnv")

__all__ = ["ENV_ID", "CrawlEnv", "CrawlEnvConfig"]
