"""Every defence the offline benchmark credits works the same over HTTP: a messy web (``focuscrawl web mess`` on
test_mess's small web) crawled with one defence on, offline and served on loopback by the same driver, gives the
same steps, verdicts and skipped URLs, and the defence acts in both (``focuscrawl.engine.defences``).

The web's failing host fails more of its URLs than by default, so that it fails 6 times in a row under bfs;
it has no timeout or slow host (they test the fetcher's clock, not a defence). Served, a 503 is one answer with no
wait after it, as offline (the fetcher's politeness towards a host that throttles is tested in test_http_fetcher).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import crawl_records
from test_mess import SMALL, build_web

from focuscrawl.engine.defences import DEFAULT_ORDER, HOST_FAILING, LINK_FARM, PROBE, SOFT_404, TRAP_PATTERN
from focuscrawl.engine.defences.pipeline import LISTING
from focuscrawl.urls import strip_tracking_and_session
from focuscrawl.webs.mess import make_profile, mess_web
from focuscrawl.webs.store import OfflineWeb

pytestmark = pytest.mark.slow  # two crawls of 200-300 pages a defence

SEEDS = ["https://wiki.test/wp/Article_0.htm", "http://www.uni.test/dept/p2.html"]
MESS = {**SMALL, "failing.timeout_hosts": 0, "failing.slow_hosts": 0, "failing.error_share": 0.8}
# what each defence needs besides itself: URL aliases learn from the copies the near-duplicate defence finds
NEEDS = {"url_aliases": ("near_duplicates",)}


def only(name: str) -> dict:
    """Defence settings with ``name`` (and what it needs) on, every other built-in defence off. The host breaker
    keeps the offline clock over HTTP too (``clock: steps``): its seconds are the crawl's steps in both crawls."""
    settings = {other: {"enabled": other == name or other in NEEDS.get(name, ())} for other in DEFAULT_ORDER}
    settings["host_health"]["clock"] = "steps"
    return settings


@pytest.fixture(scope="module")
def messy(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("served-mess")
    mess_web(build_web(root / "clean"), root / "messy", make_profile("default", MESS), seed=3)
    return root / "messy"


def _steps(records: list[dict]) -> list[tuple]:
    """What a crawl did, step by step: the URL fetched, the verdict and the URLs kept out (a redirect loop ends
    where the fetcher gives up, which is not where the offline web stops it: its status and final URL differ)."""
    return [(r["url"], r["verdict"], [tuple(s) for s in r["skipped"]]) for r in records]


def _reasons(records: list[dict]) -> list[str]:
    """Every verdict and every reason a URL was kept out."""
    return [r["verdict"] for r in records if r["verdict"]] + [why for r in records for _, why in r["skipped"]]


def _acted(name: str, records: list[dict], web: OfflineWeb) -> bool:
    """Whether the defence ``name`` left its mark on the crawl."""
    reasons = _reasons(records)
    copies = [(r["url"], r["verdict"].removeprefix("duplicate of ")) for r in records  # not a redirect's (engine's)
              if r["verdict"].startswith("duplicate of ") and r["final_url"] == r["url"]]
    if name == "url_hygiene":  # no tracking or session URL is fetched (the test shows the web links to some)
        return all(strip_tracking_and_session(r["url"]) == r["url"] for r in records)
    if name == "canonical":  # copies, each of a page it names as its canonical or that names it
        return bool(copies) and all(web.fetch(a).canonical == b or web.fetch(b).canonical == a for a, b in copies)
    if name == "near_duplicates":
        return bool(copies)
    if name == "url_aliases":  # URLs kept out as copies of known ones, by a URL rule, before any fetch
        return any(why.startswith("duplicate of ") for r in records for _, why in r["skipped"])
    wanted = {"host_health": [HOST_FAILING], "link_farms": [LINK_FARM], "traps": [TRAP_PATTERN],
              "listings": [LISTING], "soft_404": [SOFT_404, PROBE]}[name]
    return all(kind in reasons for kind in wanted)


# thin rows: the generator makes no page as short as a data browser's row, against the birds topic's examples; the
# same offline and served crawl of such a browser is tests/test_thin_rows.py's
@pytest.mark.parametrize("name", [name for name in DEFAULT_ORDER if name != "thin_rows"])
def test_a_defence_acts_the_same_offline_and_over_http(messy, tmp_path, name):
    offline = crawl_records(messy, tmp_path / "offline", served=False, seeds=SEEDS, budget=300, defences=only(name))
    served = crawl_records(messy, tmp_path / "http", served=True, seeds=SEEDS, budget=300, defences=only(name))
    assert _steps(served) == _steps(offline)
    web = OfflineWeb(messy)
    try:
        assert _acted(name, served, web), f"{name} left no mark on the served crawl"
    finally:
        web.close()
    if name == "url_hygiene":  # without it, the same served crawl fetches tracking and session URLs
        unclean = crawl_records(messy, tmp_path / "none", served=True, seeds=SEEDS, budget=300, defences=only(""))
        assert any(strip_tracking_and_session(r["url"]) != r["url"] for r in unclean)
