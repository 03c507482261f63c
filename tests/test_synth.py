from __future__ import annotations

import hashlib
import sqlite3
import time
from collections import Counter, defaultdict

import pytest

from focuscrawl.urls import normalize_url, site_of
from focuscrawl.webs.store import WEB_FILE, OfflineWeb
from focuscrawl.webs.synth import synthesize

PAGES = 2000


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    out = tmp_path_factory.mktemp("synth") / "web"
    started = time.perf_counter()
    synthesize(out, PAGES, seed=7)
    seconds = time.perf_counter() - started
    web = OfflineWeb(out)
    yield out, web, seconds
    web.close()


@pytest.fixture(scope="module")
def graph(built):
    """(url -> (host, status, labels), [(src_url, dst_url)]) read straight from the file."""
    out, _, _ = built
    db = sqlite3.connect(out / WEB_FILE)
    pages = {url: (host, status, labels) for url, host, status, labels in db.execute(
        "SELECT url, host, status, labels FROM pages")}
    links = db.execute(
        "SELECT s.url, d.url FROM links l JOIN pages s ON s.id = l.src JOIN pages d ON d.id = l.dst").fetchall()
    db.close()
    return pages, links


def test_builds_fast_with_meta(built):
    _, web, seconds = built
    assert seconds < 10  # typically well under a second; generous for loaded CI machines
    assert web.name == f"synth-{PAGES}"
    assert web.meta["builder"] == "synth"
    assert web.meta["topic_defaults"] == {}
    assert "never" in web.meta["purpose"] and "quality" in web.meta["purpose"]
    assert web.meta["params"]["pages"] == PAGES and web.meta["params"]["seed"] == 7


def test_shape(built):
    _, web, _ = built
    stats = web.stats()
    assert stats["pages"] == PAGES
    assert stats["hosts"] >= 30
    assert set(stats["labels"]) == {f"synth.topic{k}" for k in range(10)}
    assert stats["dead_links"] > 0 and stats["dead_urls"] > 0
    assert 6 < stats["links"] / PAGES < 10


def test_same_seed_same_file(built, tmp_path):
    out, web, _ = built
    synthesize(tmp_path / "again", PAGES, seed=7)
    again = OfflineWeb(tmp_path / "again")
    first, second = web.stats(), again.stats()
    assert first == second
    for record in list(web.records())[::97]:
        assert web.fetch(record.url) == again.fetch(record.url)
    digest = [hashlib.sha256((d / WEB_FILE).read_bytes()).hexdigest() for d in (out, tmp_path / "again")]
    assert digest[0] == digest[1]
    synthesize(tmp_path / "other", PAGES, seed=8)
    other = OfflineWeb(tmp_path / "other")
    assert other.stats()["links"] != first["links"]


def test_urls_are_normalised_and_pages_read(built, graph):
    _, web, _ = built
    pages, _ = graph
    for url in list(pages)[::37]:
        assert normalize_url(url) == url
        assert pages[url][0] == site_of(url)
    page = next(web.fetch(url) for url, (_, status, _) in pages.items() if status == 200 and url.endswith("/"))
    assert 20 <= len(page.text.split()) <= 60 and page.title and page.outlinks
    assert all(link.anchor for link in page.outlinks)


def test_link_locality(graph):
    pages, links = graph
    same, total = Counter(), Counter()
    for src, dst in links:
        src_labels = pages[src][2]
        if not src_labels.startswith("synth.topic"):
            continue
        total[src_labels] += 1
        same[src_labels] += pages[dst][2] == src_labels
    for topic, count in total.items():
        assert same[topic] / count > 0.5, topic


def test_dead_links_404(built, graph):
    _, web, _ = built
    pages, links = graph
    dead = [dst for _, dst in links if pages[dst][1] == 404]
    assert len(dead) > PAGES * 0.01
    assert web.fetch(dead[0]).status == 404


def test_hubs(graph):
    pages, links = graph
    hosts_reached = defaultdict(set)
    for src, dst in links:
        hosts_reached[src].add(pages[dst][0])
    assert max(len(h) for h in hosts_reached.values()) >= 10


def test_spider_trap(built, graph):
    _, web, _ = built
    pages, links = graph
    trap = web.meta["structure"]["trap_host"]
    trap_pages = [url for url, (host, status, _) in pages.items() if host == trap and status == 200]
    assert len(trap_pages) == web.meta["params"]["trap_pages"] >= 10
    assert all(pages[url][2] == "" for url in trap_pages)  # no topic is relevant in the trap
    assert any(pages[src][0] != trap and pages[dst][0] == trap for src, dst in links)
    # Following "Next day" always gives a new URL on the same host, until the generated chain ends.
    url, seen = sorted(trap_pages)[0], set()
    for _ in range(len(trap_pages) + 1):
        page = web.fetch(url)
        if page.status != 200:
            break
        seen.add(url)
        url = next(link.url for link in page.outlinks if link.anchor == "Next day")
        assert site_of(url) == trap and url not in seen
    assert len(seen) == len(trap_pages)


def test_tunnels(built, graph):
    _, web, _ = built
    pages, links = graph
    inbound = defaultdict(list)  # host -> sources on other hosts
    for src, dst in links:
        if pages[src][0] != pages[dst][0]:
            inbound[pages[dst][0]].append(src)
    front_label = {host: labels for url, (host, _, labels) in pages.items() if url == f"https://{host}/"}
    # Island hosts: every link from outside comes from one page of another topic (the tunnel's end).
    islands = [host for host, sources in inbound.items()
               if host in front_label and len(set(sources)) == 1 and pages[sources[0]][2] != front_label[host]]
    assert len(islands) >= web.meta["structure"]["island_hosts"] > 0
    # ...and a chain of 2-4 pages of other topics leads there from a page of the island's topic.
    parents = defaultdict(set)
    for src, dst in links:
        parents[dst].add(src)
    for host in islands:
        topic, frontier, found = front_label[host], {f"https://{host}/"}, False
        for _ in range(5):
            frontier = {p for url in frontier for p in parents[url] if pages[p][0] != host}
            if any(pages[p][2] == topic for p in frontier):
                found = True
                break
            frontier = {p for p in frontier if pages[p][2] != topic}
        assert found, host


def test_small_and_invalid(tmp_path):
    synthesize(tmp_path / "tiny", 100, topics=3)
    assert OfflineWeb(tmp_path / "tiny").stats()["pages"] == 100
    with pytest.raises(ValueError):
        synthesize(tmp_path / "bad", 1000, hosts=5, topics=10)
    with pytest.raises(FileExistsError):
        synthesize(tmp_path / "tiny", 100, topics=3)
    synthesize(tmp_path / "tiny", 100, topics=3, overwrite=True)


def test_without_trap_or_islands(tmp_path):
    synthesize(tmp_path / "plain", 300, topics=2, trap_pages=0, island_fraction=0.0, hub_fraction=0.0)
    web = OfflineWeb(tmp_path / "plain")
    assert web.stats()["pages"] == 300
    assert web.meta["structure"]["island_hosts"] == 0
    assert web.meta["structure"]["trap_host"] is None
    synthesize(tmp_path / "one", 200, topics=1)  # no other topic: no tunnels possible, must not hang
    assert OfflineWeb(tmp_path / "one").stats()["labels"] == {"synth.topic0": 200 - 10}
