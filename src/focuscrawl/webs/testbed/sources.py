"""The texts a test bed's applications are filled with: pages of an offline web, of the topic and of others."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from focuscrawl.webs.store import OfflineWeb, label_matches, split_labels


@dataclass(frozen=True, slots=True)
class Source:
    """One text an application item is made from (a page of the offline web, or a Debian package's translated
    description: ``translations``); ``relevant``: of the test bed's topic; ``language``: ISO 639-1."""

    url: str
    title: str
    paragraphs: tuple[str, ...]
    labels: tuple[str, ...]
    relevant: bool
    language: str = "en"

    @property
    def subject(self) -> str:
        """The most specific label's last part (``subject.Science.Biology.Birds`` -> ``Birds``)."""
        return self.labels[0].rsplit(".", 1)[-1] if self.labels else "General"

    @property
    def area(self) -> str:
        """The label's first part under its scheme (``subject.Science.Biology.Birds`` -> ``Science``)."""
        if not self.labels:
            return "General"
        parts = self.labels[0].split(".")
        return parts[1] if len(parts) > 1 else parts[0]

    @property
    def first_sentence(self) -> str:
        text = " ".join(self.paragraphs)
        match = re.match(r"(.{20,300}?[.!?])\s", text + " ")
        return match.group(1) if match else text[:300]


class SourcePool:
    """The labelled 2xx pages of a web with text, split into the topic's and the others', drawn from at random."""

    def __init__(self, web: OfflineWeb, topic: str):
        self.web = web
        labelled = web.labels()
        self.topic_urls = sorted(url for url, labels in labelled.items() if label_matches(labels, topic))
        self.other_urls = sorted(url for url, labels in labelled.items() if not label_matches(labels, topic))
        if not self.topic_urls:
            raise ValueError(f"no page of {web.name} is labelled {topic}")
        self._labels = labelled
        self._topic = topic

    def draw(self, rng: random.Random, count: int, topic_share: float) -> list[Source]:
        """Up to ``count`` distinct sources, ``topic_share`` of them of the topic (as far as the web has them)."""
        want_topic = min(len(self.topic_urls), round(count * topic_share))
        want_other = min(len(self.other_urls), count - want_topic)
        urls = rng.sample(self.topic_urls, want_topic) + rng.sample(self.other_urls, want_other)
        rng.shuffle(urls)
        return [source for source in map(self.source, urls) if source is not None]

    def draw_any(self, rng: random.Random, count: int) -> list[Source]:
        """Up to ``count`` distinct sources of any topic, as the web has them."""
        urls = rng.sample(self.topic_urls + self.other_urls, min(count, len(self.topic_urls) + len(self.other_urls)))
        return [source for source in map(self.source, urls) if source is not None]

    def source(self, url: str) -> Source | None:
        page = self.web.fetch(url)
        paragraphs = tuple(line.strip() for line in page.text.splitlines() if len(line.strip()) > 40)
        if not page.ok or not paragraphs:
            return None
        labels = tuple(sorted(split_labels(self._labels.get(url, "")), key=lambda label: -label.count(".")))
        return Source(url, page.title or url.rsplit("/", 1)[-1], paragraphs, labels,
                      label_matches(self._labels.get(url, ""), self._topic))
