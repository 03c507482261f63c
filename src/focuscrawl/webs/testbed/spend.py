"""What a crawl of a test bed spent, and on what: requests per application and URL kind, relevant pages."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from focuscrawl.webs.testbed.build import RELEVANT_FILE
from focuscrawl.webs.testbed.labels import KIND_GROUPS, UrlLabeller

WEB = "web"  # the offline web's own pages: their application and kind


@dataclass
class Spend:
    """One crawl's requests by (application, kind), and the relevant pages it fetched (each counted once)."""

    requests: int = 0
    by_kind: Counter = field(default_factory=Counter)
    by_app: Counter = field(default_factory=Counter)
    relevant: int = 0
    relevant_in_apps: int = 0

    def share(self, counter: Counter) -> dict[str, float]:
        return {key: count / self.requests for key, count in counter.most_common()} if self.requests else {}

    def as_dict(self) -> dict:
        return {"requests": self.requests, "relevant": self.relevant, "relevant_in_apps": self.relevant_in_apps,
                "by_kind": dict(self.by_kind), "by_app": dict(self.by_app)}


def group_shares(by_kind: Mapping[str, int], requests: int) -> dict[str, float]:
    """Share of ``requests`` on each group of kinds (``labels.KIND_GROUPS``: content, generated, site); the rest,
    the web's own pages, is ``1 -`` their sum."""
    return {group: sum(by_kind.get(kind, 0) for kind in kinds) / requests if requests else 0.0
            for group, kinds in KIND_GROUPS.items()}


def relevant_urls(testbed_dir: str | Path, web_relevant: Iterable[str]) -> frozenset[str]:
    """The test bed's ground truth: the web's relevant pages and the applications' pages of the topic."""
    apps = (Path(testbed_dir) / RELEVANT_FILE).read_text().split()
    return frozenset(web_relevant) | frozenset(apps)


def spend_of(fetched: Iterable[tuple[str, str | None]], labeller: UrlLabeller, relevant: frozenset[str]) -> Spend:
    """``fetched``: (URL requested, final URL or None) of each request, in any order."""
    spend, found = Spend(), set()
    for url, final in fetched:
        spend.requests += 1
        app = labeller.app(url) or WEB
        spend.by_app[app] += 1
        spend.by_kind[labeller.kind(url) or WEB] += 1
        hit = url if url in relevant else final if final in relevant else None
        if hit is not None and hit not in found:
            found.add(hit)
            spend.relevant += 1
            spend.relevant_in_apps += labeller.app(hit) is not None
    return spend


def spend_of_run(run_dir: str | Path, labeller: UrlLabeller, relevant: frozenset[str]) -> Spend:
    """The spend of a ``focuscrawl crawl`` run folder, from its ``pages.jsonl``."""
    rows = (json.loads(line) for line in (Path(run_dir) / "pages.jsonl").read_text().splitlines() if line.strip())
    return spend_of(((row["url"], row.get("final_url")) for row in rows), labeller, relevant)
