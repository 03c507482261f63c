"""A synthetic web generator, for scale tests and unit tests only.

Nothing measured on a synthetic web says anything about how well a crawler does on the real web: the
topics are bags of made-up words and the link structure is a handful of probabilities. It exists to
exercise the engine at 1,000,000 pages and to give tests a web with every hazard a crawler meets
(many hosts, hubs, tunnels, dead links, a spider trap) whose shape is known.

Structure (``pages`` 2xx pages in all):
- hosts (``site123.word.test``; the reserved ``.test`` TLD so that nothing ever resolves), each with a
  topic; host sizes are log-normal. Each page has one label ``synth.topicK``: its host's topic, except
  an ``off_topic`` fraction of pages with a random topic.
- links: mostly to the same host or to pages of the same topic anywhere, some to random pages, a few
  to URLs that do not exist (404). Anchors are the target's title or part of it.
- hubs: a ``hub_fraction`` of pages linking to many hosts of their topic.
- tunnels: an ``island_fraction`` of hosts receive no link from outside except through one chain of
  2-4 pages of other topics that starts at a page of the island's topic.
- a spider trap: a calendar host whose pages link to the next day, month and year, ever on; a finite
  chain (its last links are dead ends), linked from a few ordinary pages. Its pages carry no label.

Everything is drawn from one ``numpy`` Generator seeded by ``seed``: same arguments, same file.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from focuscrawl.webs.store import WebWriter

GENERATOR_VERSION = 1  # bump when a change alters the output for a given seed
PURPOSE = "synthetic web for scale and unit tests only; never use it for quality claims"

WORDS_PER_TOPIC = 150
TEXT_WORDS = (20, 60)
TOPIC_WORD_SHARE = 0.35  # the rest is common words plus a little vocabulary of other topics
NOISE_WORD_SHARE = 0.05
LINK_SAME_HOST, LINK_SAME_TOPIC = 0.45, 0.35  # remainder after dead links: random page anywhere
HUB_DEGREE = (40, 120)
TRAP_LINK_RATE = 0.002
CHUNK = 50_000  # pages per text-generation batch: bounds memory at any size

COMMON_WORDS = (
    "the of and to in is that for it as with was on be by at this from or an are not have which one all "
    "about more can new time also will other after first most some these many when there would only its "
    "like over such year years two people may into each used well made back part before between where "
    "through three during work later under world often known both found while high long number same "
    "group end place called against along since around general small large home page information "
    "report review guide notes today local early open free read see list best week state place"
).split()
SITE_PREFIXES = ("news", "blog", "wiki", "forum", "lab", "club", "info", "journal", "portal", "press",
                 "daily", "open", "my", "the", "web")
SECTIONS = ("articles", "pages", "posts", "docs", "news", "wiki", "notes", "guide")
GENERIC_ANCHORS = ("home", "more", "read more", "next", "click here", "link", "details")
_ONSETS = ("b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "tr", "kl", "st", "gr")
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ou")
_CODAS = ("", "", "", "n", "r", "s", "l", "x")


def _vocabulary(rng: np.random.Generator, topics: int) -> list[list[str]]:
    """Made-up words, disjoint between topics, so that topic membership is learnable from text alone."""
    need = topics * WORDS_PER_TOPIC
    taken = set(COMMON_WORDS)
    words: list[str] = []
    while len(words) < need:
        batch = 2 * (need - len(words)) + 64
        syllables = rng.integers(2, 4, size=batch)
        o = rng.integers(len(_ONSETS), size=(batch, 3))
        v = rng.integers(len(_VOWELS), size=(batch, 3))
        c = rng.integers(len(_CODAS), size=batch)
        for i in range(batch):
            word = "".join(_ONSETS[o[i, j]] + _VOWELS[v[i, j]] for j in range(syllables[i])) + _CODAS[c[i]]
            if word not in taken:
                taken.add(word)
                words.append(word)
                if len(words) == need:
                    break
    return [words[k * WORDS_PER_TOPIC:(k + 1) * WORDS_PER_TOPIC] for k in range(topics)]


def _zipf_cdf(n: int, exponent: float = 1.0) -> np.ndarray:
    weights = 1.0 / np.arange(1, n + 1) ** exponent
    return np.cumsum(weights) / weights.sum()


def _draw(rng: np.random.Generator, cdf: np.ndarray, size: int) -> np.ndarray:
    return np.minimum(np.searchsorted(cdf, rng.random(size)), len(cdf) - 1)


def _texts(rng, topic: np.ndarray, vocab: np.ndarray, topics: int) -> list[str]:
    """Short texts for pages of the given topics: topic words, common words and a little noise."""
    n_common = len(COMMON_WORDS)
    counts = rng.integers(TEXT_WORDS[0], TEXT_WORDS[1] + 1, size=len(topic))
    total = int(counts.sum())
    word_topic = np.repeat(topic, counts)
    kind = rng.random(total)
    noise_topic = rng.integers(topics, size=total)
    topic_rank = _draw(rng, _zipf_cdf(WORDS_PER_TOPIC), total)
    common_rank = _draw(rng, _zipf_cdf(n_common, 0.8), total)
    ids = np.where(
        kind < TOPIC_WORD_SHARE,
        n_common + word_topic * WORDS_PER_TOPIC + topic_rank,
        np.where(kind < TOPIC_WORD_SHARE + NOISE_WORD_SHARE,
                 n_common + noise_topic * WORDS_PER_TOPIC + topic_rank, common_rank),
    )
    words = vocab[ids].tolist()
    ends = np.cumsum(counts).tolist()
    out, start = [], 0
    for end in ends:
        sentence = " ".join(words[start:end])
        out.append(sentence[0].upper() + sentence[1:] + ".")
        start = end
    return out


def _titles(rng, topic: np.ndarray, vocab_cap: np.ndarray) -> tuple[list[str], list[str]]:
    """Titles of 2-3 words, mostly from the topic, and the short (first two words) anchor of each."""
    n = len(topic)
    n_common = len(COMMON_WORDS)
    ranks = rng.integers(WORDS_PER_TOPIC // 2, size=(n, 3))
    common = rng.integers(n_common, size=(n, 3))
    use_topic = rng.random((n, 3)) < 0.75
    use_topic[:, 0] = True  # a title always names its subject
    ids = np.where(use_topic, n_common + topic[:, None] * WORDS_PER_TOPIC + ranks, common)
    three = (rng.random(n) < 0.5).tolist()
    w0, w1, w2 = (vocab_cap[ids[:, j]].tolist() for j in range(3))
    short = [a + " " + b for a, b in zip(w0, w1)]
    full = [s + " " + c if t else s for s, c, t in zip(short, w2, three)]
    return full, short


def synthesize(
    out: Path,
    pages: int,
    *,
    seed: int = 0,
    hosts: int | None = None,
    topics: int = 10,
    out_degree: float = 8.0,
    overwrite: bool = False,
    hub_fraction: float = 0.005,
    island_fraction: float = 0.1,
    dead_link_rate: float = 0.02,
    off_topic: float = 0.1,
    trap_pages: int | None = None,
) -> Path:
    """Write a synthetic offline web of ``pages`` 2xx pages to ``out`` and return ``out``.

    For scale and unit tests only, never for quality claims (see the module docstring for the
    structure). ``hosts`` defaults to about one per 50 pages, ``trap_pages`` to pages/50 capped at 4,000.

    Every step draws from the one generator in turn: their order is part of the output.
    """
    trap_n, n, n_hosts = _sizes(pages, topics, hosts, trap_pages)
    rng = np.random.default_rng(seed)
    vocab_words = _vocabulary(rng, topics)
    flat = COMMON_WORDS + [w for words in vocab_words for w in words]
    vocab = np.array(flat, dtype=object)
    vocab_cap = np.array([w.capitalize() for w in flat], dtype=object)
    layout = _lay_out(rng, n, n_hosts, topics, vocab_words, off_topic, island_fraction)
    src, dst, dead_urls = _ordinary_links(rng, layout, pages, out_degree, dead_link_rate)
    n_dead = len(dead_urls)
    hub, hub_src, hub_dst = _hub_links(rng, layout, hub_fraction)
    tunnel_src, tunnel_dst = _tunnel_links(rng, layout)
    trap = _Trap(f"events{n_hosts}.calendar.test", dt.date(2026, 1, 1), trap_n)
    entry_src, entry_dst = _trap_entries(rng, layout, trap)
    all_src, all_dst = _merge_links(rng, pages + n_dead, [(src, dst), (hub_src, hub_dst),
                                                           (np.array(tunnel_src, dtype=np.int64),
                                                            np.array(tunnel_dst, dtype=np.int64)),
                                                           (entry_src, entry_dst)])
    urls, titles, shorts = _names(rng, layout, vocab_cap, trap, dead_urls)
    style = rng.random(len(all_dst))
    generic = rng.integers(len(GENERIC_ANCHORS), size=len(all_dst))

    params = {"pages": pages, "seed": seed, "hosts": n_hosts, "topics": topics, "out_degree": out_degree,
              "hub_fraction": hub_fraction, "island_fraction": island_fraction,
              "dead_link_rate": dead_link_rate, "off_topic": off_topic, "trap_pages": trap_n,
              "generator_version": GENERATOR_VERSION}
    meta = {"name": f"synth-{pages}", "builder": "synth", "source": "focuscrawl.webs.synth: " + PURPOSE,
            "purpose": PURPOSE, "params": params, "topic_defaults": {},
            "structure": {"trap_host": trap.host if trap_n else None, "island_hosts": int(layout.island.sum()),
                          "hubs": int(len(hub)), "tunnels": int(layout.island.sum()), "removed_urls": n_dead}}
    with WebWriter(out, meta, overwrite=overwrite) as writer:
        _write_pages(writer, rng, layout, urls, titles, vocab, topics)
        _write_trap(writer, rng, trap.urls, trap.titles, vocab, trap.day0)
        _write_links(writer, all_src, all_dst, style, generic, urls, titles, shorts)
    return Path(out)


def _sizes(pages: int, topics: int, hosts: int | None, trap_pages: int | None) -> tuple[int, int, int]:
    """Trap pages, ordinary pages and hosts, checked."""
    if topics < 1 or pages < 1 or (trap_pages is not None and trap_pages < 0):
        raise ValueError("pages and topics must be positive, trap_pages not negative")
    trap_n = min(4000, max(10, pages // 50)) if trap_pages is None else trap_pages
    n = pages - trap_n  # ordinary pages
    n_hosts = max(topics, round(n / 50)) if hosts is None else hosts
    if n_hosts < topics or n < n_hosts:
        raise ValueError(f"need topics <= hosts <= pages - trap_pages, got {topics}, {n_hosts}, {n}")
    return trap_n, n, n_hosts


@dataclass
class _Layout:
    """The ordinary pages (ids 0..n-1) on their hosts, with their topics, and the islands' hosts."""

    topics: int
    host_topic: np.ndarray
    sizes: np.ndarray  # pages per host
    host_start: np.ndarray  # a host's first page id (its front page)
    host_names: list[str]
    page_host: np.ndarray
    local: np.ndarray  # a page's number on its host (0: the front page)
    page_topic: np.ndarray
    island: np.ndarray  # per host: reachable only through a tunnel
    eligible: np.ndarray = field(init=False)  # pages other hosts may link to
    by_topic: np.ndarray = field(init=False)  # the eligible pages, by topic
    topic_count: np.ndarray = field(init=False)
    topic_off: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        self.eligible = np.flatnonzero(~self.island[self.page_host])
        self.by_topic = self.eligible[np.argsort(self.page_topic[self.eligible], kind="stable")]
        self.topic_count = np.bincount(self.page_topic[self.eligible], minlength=self.topics)
        self.topic_off = np.concatenate(([0], np.cumsum(self.topic_count)[:-1]))

    @property
    def n(self) -> int:
        return len(self.page_host)

    def pick_topic(self, rng: np.random.Generator, t: np.ndarray) -> np.ndarray:
        """An eligible page of each topic in ``t``."""
        return self.by_topic[self.topic_off[t] + (rng.random(len(t)) * self.topic_count[t]).astype(np.int64)]


def _lay_out(rng: np.random.Generator, n: int, n_hosts: int, topics: int, vocab_words: list[list[str]],
             off_topic: float, island_fraction: float) -> _Layout:
    # Hosts: a topic each (every topic gets hosts), log-normal sizes of at least one page.
    host_topic = rng.permutation(np.arange(n_hosts) % topics)
    weights = rng.lognormal(0.0, 1.0, n_hosts)
    sizes = 1 + rng.multinomial(n - n_hosts, weights / weights.sum())
    host_start = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    prefix = rng.integers(len(SITE_PREFIXES), size=n_hosts)
    host_word = host_topic * WORDS_PER_TOPIC + rng.integers(WORDS_PER_TOPIC, size=n_hosts)
    all_topic_words = [w for words in vocab_words for w in words]
    host_names = [f"{SITE_PREFIXES[p]}{h}.{all_topic_words[w]}.test"
                  for h, (p, w) in enumerate(zip(prefix.tolist(), host_word.tolist()))]

    page_host = np.repeat(np.arange(n_hosts), sizes)
    local = np.arange(n) - host_start[page_host]
    page_topic = host_topic[page_host].copy()
    stray = (rng.random(n) < off_topic) & (local > 0)  # a site's front page is always on its topic
    page_topic[stray] = rng.integers(topics, size=int(stray.sum()))

    # Islands: hosts only reachable through a tunnel. Every topic keeps at least one host outside.
    # A fixed count rather than a coin per host, so that small test webs have islands too.
    island = np.zeros(n_hosts, dtype=bool)
    if topics > 1:  # a tunnel needs pages of another topic
        island[rng.choice(n_hosts, size=round(island_fraction * n_hosts), replace=False)] = True
    for k in range(topics):
        of_topic = np.flatnonzero(host_topic == k)
        if island[of_topic].all():
            island[of_topic[0]] = False
    return _Layout(topics, host_topic, sizes, host_start, host_names, page_host, local, page_topic, island)


def _ordinary_links(rng: np.random.Generator, layout: _Layout, pages: int, out_degree: float,
                    dead_link_rate: float) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Each page's links: to its host, to its topic, anywhere, or dead (ids from ``pages`` on, one per dead
    URL, returned in that order)."""
    n, page_host, sizes, host_start = layout.n, layout.page_host, layout.sizes, layout.host_start
    src = np.repeat(np.arange(n), rng.poisson(out_degree, n))
    u = rng.random(len(src))
    dst = np.empty(len(src), dtype=np.int64)
    dead = u < dead_link_rate
    same_host = ~dead & (u < dead_link_rate + LINK_SAME_HOST)
    same_topic = ~dead & ~same_host & (u < dead_link_rate + LINK_SAME_HOST + LINK_SAME_TOPIC)
    anywhere = ~(dead | same_host | same_topic)
    h = page_host[src[same_host]]
    dst[same_host] = host_start[h] + (rng.random(len(h)) * sizes[h]).astype(np.int64)
    dst[same_topic] = layout.pick_topic(rng, layout.page_topic[src[same_topic]])
    dst[anywhere] = layout.eligible[rng.integers(len(layout.eligible), size=int(anywhere.sum()))]
    n_dead = int(dead.sum())
    dst[dead] = pages + np.arange(n_dead)  # ids past the last page: URLs that are never written
    # A dead URL looks like its host's pages (numbers past the last one), so only fetching tells.
    dead_host = page_host[src[dead]]
    dead_num = sizes[dead_host] + rng.integers(100_000, size=n_dead)
    dead_sec = rng.integers(len(SECTIONS), size=n_dead)
    dead_urls = [f"https://{layout.host_names[hh]}/{SECTIONS[c]}/{k}.html"
                 for hh, k, c in zip(dead_host.tolist(), dead_num.tolist(), dead_sec.tolist())]
    return src, dst, dead_urls


def _hub_links(rng: np.random.Generator, layout: _Layout,
               hub_fraction: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The hubs, and their many links, each to the front page of another host of the hub's topic."""
    hub = layout.eligible[rng.random(len(layout.eligible)) < hub_fraction]
    hub_src = np.repeat(hub, rng.integers(HUB_DEGREE[0], HUB_DEGREE[1] + 1, size=len(hub)))
    hub_dst = layout.pick_topic(rng, layout.page_topic[hub_src])
    hub_dst = layout.host_start[layout.page_host[hub_dst]]  # to the front page of that host
    return hub, hub_src, hub_dst


def _tunnel_links(rng: np.random.Generator, layout: _Layout) -> tuple[list[int], list[int]]:
    """Tunnels: topic-k page -> 2-4 pages of other topics -> island front page."""
    tunnel_src, tunnel_dst = [], []
    for isl in np.flatnonzero(layout.island).tolist():
        k = int(layout.host_topic[isl])
        chain = [int(layout.pick_topic(rng, np.array([k]))[0])]
        for _ in range(int(rng.integers(2, 5))):
            while True:
                p = int(layout.eligible[rng.integers(len(layout.eligible))])
                if layout.page_topic[p] != k:
                    break
            chain.append(p)
        chain.append(int(layout.host_start[isl]))
        tunnel_src += chain[:-1]
        tunnel_dst += chain[1:]
    return tunnel_src, tunnel_dst


@dataclass
class _Trap:
    """The spider trap: a calendar whose every page links to yet more days (ids after the ordinary pages)."""

    host: str
    day0: dt.date
    pages: int

    @property
    def urls(self) -> list[str]:
        days = (self.day0 + dt.timedelta(i) for i in range(self.pages))
        return [f"https://{self.host}/calendar/{d:%Y/%m/%d}" for d in days]

    @property
    def titles(self) -> list[str]:
        return [f"Events calendar {url[-10:].replace('/', '-')}" for url in self.urls]


def _trap_entries(rng: np.random.Generator, layout: _Layout, trap: _Trap) -> tuple[np.ndarray, np.ndarray]:
    """The few ordinary pages that link into the trap, and where they land."""
    n_entries = max(1, int(rng.binomial(len(layout.eligible), TRAP_LINK_RATE))) if trap.pages else 0
    entry_src = rng.choice(layout.eligible, size=n_entries, replace=False)
    entry_dst = layout.n + rng.integers(max(trap.pages, 1), size=n_entries)
    return entry_src, entry_dst


def _merge_links(rng: np.random.Generator, ids: int,
                 parts: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """Every link (ids below ``ids``), self-links and repeats dropped, each page's links in a random order."""
    all_src = np.concatenate([src for src, _ in parts])
    all_dst = np.concatenate([dst for _, dst in parts])
    keep = all_src != all_dst
    all_src, all_dst = all_src[keep], all_dst[keep]
    _, first = np.unique(all_src * ids + all_dst, return_index=True)
    all_src, all_dst = all_src[first], all_dst[first]
    order = np.lexsort((rng.random(len(all_src)), all_src))
    return all_src[order], all_dst[order]


def _names(rng: np.random.Generator, layout: _Layout, vocab_cap: np.ndarray, trap: _Trap,
           dead_urls: list[str]) -> tuple[list[str], list[str], list[str]]:
    """URLs, titles and short titles by id: ordinary pages, then the trap's, then dead URLs (titled as a
    random page's link is, so that a link there looks like any other and leads nowhere)."""
    n, n_dead = layout.n, len(dead_urls)
    titles, shorts = _titles(rng, layout.page_topic, vocab_cap)
    section = rng.integers(len(SECTIONS), size=n)
    names = layout.host_names
    urls = [f"https://{names[hh]}/" if j == 0 else f"https://{names[hh]}/{SECTIONS[s]}/{j}.html"
            for hh, j, s in zip(layout.page_host.tolist(), layout.local.tolist(), section.tolist())]
    urls += trap.urls + dead_urls
    titles += trap.titles + [""] * n_dead
    shorts += ["Events calendar"] * trap.pages + [""] * n_dead
    dead_anchor = rng.integers(n, size=n_dead)
    first_dead = n + trap.pages
    for i, a in zip(range(first_dead, first_dead + n_dead), dead_anchor.tolist()):
        titles[i] = shorts[i] = shorts[a]
    return urls, titles, shorts


def _write_pages(writer: WebWriter, rng: np.random.Generator, layout: _Layout, urls: list[str],
                 titles: list[str], vocab: np.ndarray, topics: int) -> None:
    """The ordinary pages, their texts made a chunk at a time."""
    label_of = [(f"synth.topic{k}",) for k in range(topics)]
    topic_list = layout.page_topic.tolist()
    n = layout.n
    for start in range(0, n, CHUNK):
        stop = min(n, start + CHUNK)
        texts = _texts(rng, layout.page_topic[start:stop], vocab, topics)
        for i, text in zip(range(start, stop), texts):
            writer.add_page(urls[i], content_type="text/html", title=titles[i], text=text,
                            labels=label_of[topic_list[i]])


def _write_links(writer: WebWriter, all_src: np.ndarray, all_dst: np.ndarray, style: np.ndarray,
                 generic: np.ndarray, urls: list[str], titles: list[str], shorts: list[str]) -> None:
    add_link = writer.add_link
    # In slices: eight million-element Python lists at once would double the peak memory.
    for a in range(0, len(all_src), 1_000_000):
        b = a + 1_000_000
        for s, d, st, g in zip(all_src[a:b].tolist(), all_dst[a:b].tolist(), style[a:b].tolist(),
                               generic[a:b].tolist()):
            # Mostly the target's full title, often its first words, sometimes "read more".
            anchor = titles[d] if st < 0.6 else shorts[d] if st < 0.92 else GENERIC_ANCHORS[g]
            add_link(urls[s], urls[d], anchor)


def _write_trap(writer: WebWriter, rng, trap_urls: list[str], titles: list[str], vocab, day0: dt.date) -> None:
    if not trap_urls:
        return
    host = trap_urls[0].split("/")[2]
    n_common = len(COMMON_WORDS)
    for i, (url, title) in enumerate(zip(trap_urls, titles)):
        day = day0 + dt.timedelta(i)
        filler = " ".join(vocab[rng.integers(n_common, size=int(rng.integers(10, 25)))].tolist())
        writer.add_page(url, content_type="text/html", title=title,
                        text=f"Events on {day:%A %d %B %Y}. No events scheduled. {filler}.")
        # Each page offers days that never run out; past the generated chain they are dead ends.
        for label, target in (("Next day", day + dt.timedelta(1)), ("Previous day", day - dt.timedelta(1)),
                              ("Next month", _add_months(day, 1)), ("Next year", _add_months(day, 12))):
            writer.add_link(url, f"https://{host}/calendar/{target:%Y/%m/%d}", label)


def _add_months(day: dt.date, months: int) -> dt.date:
    month = day.month - 1 + months
    year, month = day.year + month // 12, month % 12 + 1
    return day.replace(year=year, month=month, day=min(day.day, 28))
