"""What travels between a distributed crawl's processes: which shard owns a URL, links found for another shard,
and the stored messages a shard applies (and applies again when its store is replayed)."""

from __future__ import annotations

import json
import pickle
import zlib
from hashlib import blake2b

from focuscrawl.engine import CrawlEngine
from focuscrawl.policy import ShardAware
from focuscrawl.types import ForeignLinks, Link, Page
from focuscrawl.urls import registered_domain, site_of

# The id of a message of pooled parameters (the driver's); other messages are links (another shard's).
PARAMETERS_PREFIX = "avg:"


def shard_of(url: str, workers: int) -> int:
    """The shard owning ``url``: blake2b of its registered domain (the same in every process and every run), so
    that every host of a domain, and with it per-host and per-domain politeness and the per-host cap, stays in
    one shard."""
    digest = blake2b(registered_domain(site_of(url)).encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % workers


def encode_links(message: ForeignLinks) -> bytes:
    """Links found for another shard, with their parent page, as they travel and are stored (zlib JSON)."""
    page = message.page
    payload = {"parent": message.parent, "relevance": message.relevance, "reward": message.reward,
               "depth": message.depth, "links": message.links, "fetched": message.fetched,
               "page": {"url": page.url, "final_url": page.final_url, "status": page.status,
                        "content_type": page.content_type, "title": page.title, "text": page.text,
                        "outlinks": [(link.url, link.anchor) for link in page.outlinks]}}
    return zlib.compress(json.dumps(payload).encode("utf-8"), 3)


def apply_message(engine: CrawlEngine, message_id: str, blob: bytes) -> int:
    """A stored message, as when it arrived (and on replay): links to adopt, or combined parameters to load."""
    if message_id.startswith(PARAMETERS_PREFIX):
        policy = engine.policy
        if isinstance(policy, ShardAware):
            policy.load_parameters(pickle.loads(blob))
        return 0
    return engine.adopt(decode_links(blob))


def decode_links(blob: bytes) -> ForeignLinks:
    """``encode_links``'s message back."""
    payload = json.loads(zlib.decompress(blob))
    p = payload["page"]
    page = Page(url=p["url"], final_url=p["final_url"], status=p["status"], content_type=p["content_type"],
                title=p["title"], text=p["text"], outlinks=[Link(u, a) for u, a in p["outlinks"]])
    return ForeignLinks(payload["parent"], page, payload["relevance"], payload["reward"], payload["depth"],
                        [(u, a) for u, a in payload["links"]], payload.get("fetched", []))  # none in older stores
