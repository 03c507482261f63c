"""A focused crawl's state in Scrapy's ``JOBDIR`` (``focuscrawl.state``): the engine (``CrawlEngine.snapshot``) and
the spider's requests the scheduler holds, written at a stop and read by the same spider to resume (the module
docstring of ``focuscrawl.scrapy``)."""

from __future__ import annotations

import logging
import pickle
from pathlib import Path

from scrapy import Request
from scrapy.utils.request import request_from_dict

from focuscrawl.engine.checkpoint import FORMAT as CHECKPOINT_FORMAT

logger = logging.getLogger("focuscrawl.scrapy")

STATE_FILE = "focuscrawl.state"
# This file's layout, and the format of the engine checkpoint inside it: a JOBDIR has no log to replay, so a
# checkpoint of another format is refused as another version's JOBDIR.
STATE_VERSION = (2, CHECKPOINT_FORMAT)


def write_state(path: Path, spider, engine: dict, identity: dict, requests: dict[str, Request],
                in_flight: dict[str, Request | None]) -> None:
    """Write the engine's state (``reader.Recorder.finish``'s: seeds, context budget, relevant pages, snapshot), the
    requests held for its frontier and those of its selections in flight (None: a probe)."""
    unserialisable = 0

    def saved(request: Request | None) -> dict | None:
        nonlocal unserialisable
        if request is None:
            return None
        try:
            return request.to_dict(spider=spider)
        except ValueError:  # a callback that is not a method of the spider
            unserialisable += 1
            return None

    state = {"version": STATE_VERSION, "identity": identity, "seeds": engine["seeds"],
             "context_budget": engine["context_budget"], "relevant": engine["relevant"], "snapshot": engine["snapshot"],
             "requests": {url: saved(request) for url, request in requests.items()},
             "in_flight": {url: saved(request) for url, request in in_flight.items()}}
    tmp = path.with_suffix(".tmp")
    tmp.write_bytes(pickle.dumps(state, protocol=pickle.HIGHEST_PROTOCOL))
    tmp.replace(path)
    if unserialisable:
        logger.warning("focuscrawl: %d requests could not be kept in JOBDIR (their callbacks are not methods of "
                       "the spider); a resumed crawl sends their URLs to the spider's parse", unserialisable)


def read_state(path: Path, identity: dict) -> dict:
    """The state ``write_state`` wrote, for a crawl of this identity; ValueError (one line) otherwise."""
    try:
        state = pickle.loads(path.read_bytes())
    except Exception as exc:  # noqa: BLE001 - a damaged file is a user's problem to decide on, in one line
        raise ValueError(f"{path} cannot be read ({type(exc).__name__}); delete it to start the crawl again") from None
    if state.get("version") != STATE_VERSION:
        raise ValueError(f"{path} was written by another version of focuscrawl.scrapy; use a new JOBDIR")
    if state["identity"] != identity:
        changed = [key for key in identity if state["identity"].get(key) != identity[key]]
        raise ValueError(f"JOBDIR holds a focused crawl with another {' and '.join(changed)}; resume it as it was, "
                         "or use a new JOBDIR")
    return state


def read_requests(saved: dict[str, dict | None], spider) -> dict[str, Request | None]:
    return {url: None if data is None else request_from_dict(data, spider=spider) for url, data in saved.items()}
