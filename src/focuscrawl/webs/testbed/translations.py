"""Texts in other languages for the test bed: Debian's translated package descriptions.

Debian publishes its package descriptions translated by people (``main/i18n/Translation-de``, ``-fr``,
``-es``, ...), listed with their SHA256 in the suite's ``Release``, beside the index the Debian web is built
from (``focuscrawl.webs.debian``). A third of the applications' content pages are made from them, so that the
test bed has pages in several languages, and their relevance is honest ground truth: a package is of a topic
when its debtags ``field::*`` facets or the Debian Blends' task lists (curated by people) say so, exactly as on
the Debian web (``debian.package_labels``, labels ``topic.biology``, ``debtags.field.biology``, ...).

- On a bed over the Debian web the topic is one of those labels; a package whose project is a page of the web
  is linked from that page (its description in another language, as projects link their translations).
- On any other web the bed's topic is mapped to the Debian topic that names the same field
  (``DEBIAN_TOPIC``: Wikispeedia's ``subject.Science.Biology`` is ``topic.biology``: descriptions of biology
  software, which a reader asking for biology counts as biology); a topic with no such field has no relevant
  text in another language, and the manifest says so.

Only translations of a package's current English description are used (their ``Description-md5`` is the
package's). The download is cached: Release, Packages, Translation-en (``debian.download_index``) and the
languages' ``Translation-LL.bz2``, each checked against the Release's SHA256; nothing is fetched again while
the cached files match.
"""

from __future__ import annotations

import bz2
import hashlib
import os
import random
from collections.abc import Callable
from pathlib import Path

from focuscrawl.webs.debian import (
    DEFAULT_SUITE,
    MIRROR,
    _get,
    download_index,
    load_packages,
    long_description,
    package_labels,
    project_url,
    read_release,
    release_hashes,
    stanzas,
)
from focuscrawl.webs.store import label_matches
from focuscrawl.webs.testbed.sources import Source

LANGUAGES = ("de", "fr", "es")
# The bed's topic on a web that is not Debian's -> the Debian topic of the same field (the longest prefix wins).
DEBIAN_TOPIC = {
    "subject.Science.Biology": "topic.biology", "subject.Science.Chemistry": "topic.chemistry",
    "subject.Science.Physics": "topic.physics", "subject.Science.Physics.Space_Astronomy": "topic.astronomy",
    "subject.Science.Health_and_medicine": "topic.medicine", "subject.Mathematics": "topic.mathematics",
    "subject.Geography": "topic.geography",
}
MIN_PARAGRAPH = 40  # characters: shorter lines of a description are lists' items, not text


def default_index_dir(suite: str = DEFAULT_SUITE) -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "focuscrawl" / "debian" / suite


def translation_path(index_dir: Path, language: str) -> Path:
    return Path(index_dir) / f"Translation-{language}.bz2"


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def ensure_translations(index_dir: Path, languages: tuple[str, ...], *, suite: str = DEFAULT_SUITE,
                        timeout: float = 60.0, get: Callable[[str, float], bytes] = _get,
                        log: Callable[[str], None] = print) -> Path:
    """``index_dir`` holding Debian's index and the ``languages``' translations, each matching the Release's
    SHA256: downloaded from deb.debian.org what is missing or stale (module docstring)."""
    index_dir = Path(index_dir)
    have_index = all((index_dir / name).is_file() for name in ("Release", "Packages.xz", "Translation-en.xz"))
    for attempt in range(2):
        if not have_index:
            log(f"downloading Debian's {suite} index into {index_dir} ...")
            download_index(suite, index_dir, timeout=timeout, get=get)
        hashes = release_hashes(read_release(index_dir))
        stale = [language for language in languages if not translation_path(index_dir, language).is_file()
                 or _sha256(translation_path(index_dir, language)) != hashes.get(_relative(language))]
        try:
            for language in stale:
                _download_translation(index_dir, suite, language, hashes, timeout, get, log)
            return index_dir
        except _MirrorMovedOn:
            if attempt:
                raise ValueError(f"{MIRROR}/{suite}: the translations do not match the Release even after "
                                 "fetching it again") from None
            have_index = False  # the mirror published a new Release since the cached one: fetch it all again
    return index_dir


class _MirrorMovedOn(Exception):
    pass


def _relative(language: str) -> str:
    return f"main/i18n/Translation-{language}.bz2"


def _download_translation(index_dir: Path, suite: str, language: str, hashes: dict[str, str], timeout: float,
                          get: Callable[[str, float], bytes], log: Callable[[str], None]) -> None:
    relative = _relative(language)
    if relative not in hashes:
        raise ValueError(f"{MIRROR}/{suite}/Release lists no {relative} (is {language!r} a language Debian "
                         "translates descriptions into?)")
    log(f"downloading {MIRROR}/{suite}/{relative} ...")
    data = get(f"{MIRROR}/{suite}/{relative}", timeout)
    if hashlib.sha256(data).hexdigest() != hashes[relative]:
        raise _MirrorMovedOn(relative)
    path = translation_path(index_dir, language)
    path.with_suffix(".part").write_bytes(data)
    path.with_suffix(".part").replace(path)


def read_translations(path: Path, language: str) -> dict[tuple[str, str], str]:
    """(package, Description-md5) -> the translated description (short line, then the long one)."""
    try:
        text = bz2.decompress(path.read_bytes()).decode("utf-8", errors="replace")
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: not a readable .bz2 file ({exc})") from exc
    field = f"Description-{language}"
    return {(record["Package"], record["Description-md5"]): record[field] for record in stanzas(text)
            if field in record and "Package" in record and "Description-md5" in record}


class ForeignPool:
    """Debian packages' translated descriptions, per language, split into those of the bed's topic and the
    others; drawn from like ``SourcePool`` (``draw``), the languages taking turns."""

    def __init__(self, index_dir: Path, languages: tuple[str, ...], topic: str, web_pages: set[str]):
        packages, _descriptions, _files = load_packages(Path(index_dir))
        labels = package_labels(packages)
        self.debian_topic = topic if topic.startswith("topic.") else next(
            (DEBIAN_TOPIC[key] for key in sorted(DEBIAN_TOPIC, key=len, reverse=True)
             if label_matches([topic], key)), None)
        self.languages = tuple(languages)
        self.topic: dict[str, list[Source]] = {}
        self.other: dict[str, list[Source]] = {}
        for language in self.languages:
            sources = []
            for (name, md5), text in sorted(read_translations(translation_path(index_dir, language), language).items()):
                package = packages.get(name)
                if package is None or package.md5 != md5:
                    continue  # a translation of a description the package no longer has
                source = self._source(package, text, labels.get(name, set()), language, web_pages)
                if source is not None:
                    sources.append(source)
            self.topic[language] = [source for source in sources if source.relevant]
            self.other[language] = [source for source in sources if not source.relevant]

    def _source(self, package, text: str, labels: set[str], language: str, web_pages: set[str]) -> Source | None:
        short = text.split("\n", 1)[0].strip()
        paragraphs = tuple(p for p in long_description(text) if len(p) > MIN_PARAGRAPH)
        if not short or not paragraphs:
            return None
        page = project_url(package.homepage) if package.homepage else None
        url = page if page in web_pages else f"debian:{package.name}"
        relevant = self.debian_topic is not None and label_matches(labels, self.debian_topic)
        # The label the applications file it under (a component, category, facet): the Debian topic it is of.
        topics = sorted(label for label in labels if label.startswith("topic."))
        label = ("Debian." + topics[0].split(".", 1)[1].capitalize()) if topics else "Debian.Software"
        return Source(url, f"{package.name}: {short[:1].upper()}{short[1:]}", paragraphs, (label,), relevant,
                      language)

    def sizes(self) -> dict[str, dict[str, int]]:
        return {language: {"topic": len(self.topic[language]), "other": len(self.other[language])}
                for language in self.languages}

    def draw(self, rng: random.Random, count: int, topic_share: float) -> list[Source]:
        """Up to ``count`` distinct texts, the languages in turn, ``topic_share`` of each language's of the
        topic (as far as it has them)."""
        drawn = []
        for index, language in enumerate(self.languages):
            want = count // len(self.languages) + (index < count % len(self.languages))
            want_topic = min(len(self.topic[language]), round(want * topic_share))
            want_other = min(len(self.other[language]), want - want_topic)
            drawn += rng.sample(self.topic[language], want_topic) + rng.sample(self.other[language], want_other)
        rng.shuffle(drawn)
        return drawn
