"""Build offline webs from Wikispeedia (the 2007 Wikipedia for Schools selection, as published by SNAP).

The source keeps plain text only, so pages are stored as text plus links (``html`` NULL) and rendered by
``render_html`` when served. URLs follow the real Wikipedia for Schools site (``/wp/<letter>/<name>.htm``)
so that URL-based features see something realistic.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

from focuscrawl.urls import normalize_url
from focuscrawl.webs.store import WebWriter, label_matches

BASE_URL = "https://schools-wikipedia.org/wp"
HEADER_PREFIX = "2007 Schools Wikipedia Selection"
CITATION = (
    "Robert West and Jure Leskovec: Human Wayfinding in Information Networks, WWW 2012; "
    "Robert West, Joelle Pineau and Doina Precup: Wikispeedia: An Online Game for Inferring Semantic "
    "Distances between Concepts, IJCAI 2009"
)
SOURCE = (
    "Wikispeedia (SNAP, https://snap.stanford.edu/data/wikispeedia.html): 2007 Wikipedia for Schools "
    "selection, plain texts, article links and subject categories. Text: GNU Free Documentation License."
)
EMBEDDED_TOPICS = ("subject.Science.Biology", "subject.Everyday_life.Food_and_agriculture")
# Biology is drawn from animals so that the two topics stay distinguishable; food plants, which carry
# both labels, arrive with the food group and make the overlap a crawler must cope with.
EMBEDDED_GROUPS = (
    (("subject.Science.Biology.Birds", "subject.Science.Biology.Mammals"), 110),
    (("subject.Everyday_life.Food_and_agriculture",), 100),
)


@dataclass
class Wikispeedia:
    """The source tables, keyed by the URL-encoded article name as the TSV files spell it."""

    root: Path
    articles: list[str]
    categories: dict[str, list[str]]
    links: dict[str, list[str]]


def _find_root(src: Path) -> Path:
    # Accept the folder holding the TSV files or any parent that wraps it (e.g. an extracted archive).
    src = Path(src)
    for candidate in (src, src / "wikispeedia", src / "wikispeedia_paths-and-graph"):
        if (candidate / "articles.tsv").is_file():
            return candidate
    raise FileNotFoundError(f"{src}: no articles.tsv found (expected the Wikispeedia folder)")


def _rows(path: Path) -> list[list[str]]:
    with path.open(encoding="utf-8") as handle:
        return [line.rstrip("\n").split("\t") for line in handle if line.strip() and not line.startswith("#")]


def load(src: Path) -> Wikispeedia:
    root = _find_root(src)
    articles = [row[0] for row in _rows(root / "articles.tsv")]
    categories: dict[str, list[str]] = {}
    for row in _rows(root / "categories.tsv"):
        categories.setdefault(row[0], []).append(row[1])
    links: dict[str, list[str]] = {}
    for row in _rows(root / "links.tsv"):
        links.setdefault(row[0], []).append(row[1])
    return Wikispeedia(root, articles, categories, links)


def article_url(name: str) -> str:
    """URL of an article given its URL-encoded name as in articles.tsv."""
    first = unquote(name)[:1].lower()
    folder = first if "a" <= first <= "z" else "other"
    url = normalize_url(f"{BASE_URL}/{folder}/{name}.htm")
    if url is None:  # cannot happen for SNAP's names; guard against a changed source
        raise ValueError(f"article name {name!r} gives no usable URL")
    return url


def anchor_for(name: str) -> str:
    """Default anchor text: the decoded article name, underscores as spaces."""
    return " ".join(unquote(name).replace("_", " ").split())


def parse_article(raw: str) -> tuple[str, str]:
    """Split a plaintext article into (title, text), dropping the lines that would leak the label.

    The "Related subjects" header names the article's categories, so it must never reach a crawler.
    Wrapped lines are joined so that each paragraph is one line and paragraphs are separated by a blank line.
    """
    lines = raw.splitlines()
    i = 0
    if lines and lines[0].strip() == "#copyright":
        i = 1
    while i < len(lines) and not lines[i].strip():
        i += 1
    title = lines[i].strip() if i < len(lines) else ""
    i += 1
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i < len(lines) and lines[i].strip().startswith(HEADER_PREFIX):
        while i < len(lines) and lines[i].strip():  # the header wraps until the next blank line
            i += 1
    paragraphs: list[str] = []
    current: list[str] = []
    for line in lines[i:]:
        stripped = line.strip()
        if stripped:
            current.append(stripped)
        elif current:
            paragraphs.append(" ".join(current))
            current = []
    if current:
        paragraphs.append(" ".join(current))
    return title, "\n\n".join(paragraphs)


def read_article(data: Wikispeedia, name: str) -> tuple[str, str]:
    path = data.root / "plaintext_articles" / f"{name}.txt"
    if not path.is_file():
        return anchor_for(name), ""
    return parse_article(path.read_text(encoding="utf-8"))


def _anchors(text: str, targets: list[str], titles: dict[str, str]) -> list[tuple[str, str]]:
    """(target, anchor) in page order.

    The anchor is the decoded name unless only the target's displayed title occurs in the text (about
    1% of names are mangled file names, e.g. "AC_DC" for "AC/DC"). links.tsv lists targets
    alphabetically; we order them by first mention of the anchor, unmentioned ones last, so that "ord"
    means page order as the format promises.
    """
    lowered = text.lower()
    ranked = []
    for index, target in enumerate(targets):
        anchor = anchor_for(target)
        pos = lowered.find(anchor.lower())
        title = titles.get(target, "")
        if pos < 0 and title and title != anchor and (title_pos := lowered.find(title.lower())) >= 0:
            anchor, pos = title, title_pos
        ranked.append((pos if pos >= 0 else len(lowered) + index, target, anchor))
    return [(target, anchor) for _, target, anchor in sorted(ranked)]


def _write(data: Wikispeedia, names: list[str], out: Path, meta: dict, overwrite: bool) -> Path:
    # Read everything first: anchors need the targets' titles (the full set is ~100 MB of text).
    pages = {name: read_article(data, name) for name in names}
    titles = {name: title for name, (title, _) in pages.items()}
    with WebWriter(out, meta, overwrite=overwrite) as writer:
        for name in names:
            title, text = pages[name]
            url = article_url(name)
            if not writer.add_page(url, title=title, text=text, labels=data.categories.get(name, ())):
                raise ValueError(f"two articles map to {url}")
            targets = [t for t in data.links.get(name, []) if t in pages]
            for target, anchor in _anchors(text, targets, titles):
                writer.add_link(url, article_url(target), anchor)
    return out


def _meta(name: str, builder: str) -> dict:
    return {"name": name, "builder": builder, "source": SOURCE, "citation": CITATION, "license": "GNU FDL"}


def build_wikispeedia(src: Path, out: Path, overwrite: bool = False) -> Path:
    """Convert the full Wikispeedia set (about 4,600 articles, 120k links) into an offline web at ``out``."""
    data = load(src)
    meta = _meta("wikispeedia", "focuscrawl.webs.wikispeedia.build_wikispeedia")
    return _write(data, data.articles, out, meta, overwrite)


def select_embedded(
    data: Wikispeedia,
    groups: tuple[tuple[tuple[str, ...], int], ...] = EMBEDDED_GROUPS,
    neighbours: int = 140,
    neighbour_max_bytes: int = 45_000,
    topics: tuple[str, ...] = EMBEDDED_TOPICS,
) -> list[str]:
    """Choose a small, well-connected, deterministic slice around ``topics``.

    Each group contributes its best-connected pages (links to other pages of the group); irrelevant
    pages are the articles matching no topic with most links to and from the chosen ones, so that a
    crawler meets plausible distractors. Those are mostly countries and continents, three times longer
    than the topic pages, so the longest are skipped to keep the shipped file small. Ties break on the
    name: no randomness, no file-order effects.
    """
    known = set(data.articles)
    undirected: dict[str, set[str]] = {name: set() for name in data.articles}
    for src, targets in data.links.items():
        for dst in targets:
            if src in known and dst in known:
                undirected[src].add(dst)
                undirected[dst].add(src)
    sizes = {}
    for name in data.articles:
        path = data.root / "plaintext_articles" / f"{name}.txt"
        if path.is_file():
            sizes[name] = path.stat().st_size

    def matches(name: str, prefixes: tuple[str, ...]) -> bool:
        return any(label_matches(data.categories.get(name, []), p) for p in prefixes)

    chosen: set[str] = set()
    for prefixes, count in groups:
        members = {n for n in sizes if matches(n, prefixes)}
        ranked = sorted(members - chosen, key=lambda n: (-len(undirected[n] & members), n))
        chosen.update(ranked[:count])
    relevant = set(chosen)
    candidates = [n for n, size in sizes.items() if n not in chosen and size <= neighbour_max_bytes]
    candidates = [n for n in candidates if not matches(n, topics)]
    ranked = sorted(candidates, key=lambda n: (-len(undirected[n] & relevant), n))
    chosen.update(ranked[:neighbours])
    # A page whose links all leave the selection would be a trap; give it its best-connected target.
    for _ in range(5):
        stuck = sorted(n for n in chosen if not any(t in chosen for t in data.links.get(n, [])))
        extra = set()
        for name in stuck:
            targets = [t for t in data.links.get(name, []) if t in sizes]
            if targets:
                extra.add(min(targets, key=lambda t: (-len(undirected[t] & chosen), t)))
        if not extra:
            break
        chosen |= extra
    return sorted(chosen)


def build_embedded(src: Path, out: Path, overwrite: bool = False) -> Path:
    """Build the small demo web shipped inside the package (a few hundred pages, two topics)."""
    data = load(src)
    names = select_embedded(data)
    meta = _meta("wikispeedia-demo", "focuscrawl.webs.wikispeedia.build_embedded")
    meta["topics"] = list(EMBEDDED_TOPICS)
    return _write(data, names, out, meta, overwrite)
