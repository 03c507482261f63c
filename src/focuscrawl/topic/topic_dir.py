"""Topic directories: how a user describes a topic to ``focuscrawl crawl``.

Layout (plain files, so that a topic can be written by hand, versioned and reviewed)::

    TOPIC/
      topic.yml        name (optional; defaults to the directory name), description (optional sentence)
      keywords.txt     one keyword or phrase per line, # comments
      positive/*.txt   example texts of on-topic pages, one page per file   } both, or neither: a topic from
      negative/*.txt   example texts of off-topic pages                     } its words (see topic.zeroshot)
      seeds.txt        optional seed URLs, one per line
      example_urls.txt optional URLs of on-topic pages the user knows: crawled first, as seeds

``init_from_words`` writes one from keywords and a description, the way most users start;
``init_from_html`` from folders of saved HTML pages, as ACHE's ``buildModel`` takes positive and negative
folders; ``focuscrawl.bench.protocol.init_from_web`` from a labelled offline web, so that a crawl of a
served offline web uses exactly the inputs the benchmark would.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import yaml

from focuscrawl.html import parse_html
from focuscrawl.types import TopicInputs
from focuscrawl.user_files import read_lines, read_yaml_mapping

HTML_SUFFIXES = {".html", ".htm", ".xhtml", ".shtml", ""}
TEXT_SUFFIXES = {".txt", ".text"}


def _lines(path: Path) -> list[str]:
    return read_lines(path) if path.exists() else []


def _example_files(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if p.is_file() and not p.name.startswith("."))


def load_topic_dir(directory: str | Path) -> TopicInputs:
    """Read a topic directory into the agent's inputs (sorted file order, so loading is deterministic)."""
    directory = Path(directory)
    if not directory.is_dir():
        raise FileNotFoundError(f"topic directory {directory} not found")
    meta_path = directory / "topic.yml"
    meta = read_yaml_mapping(meta_path, "topic.yml is a YAML mapping (description: ..., name: ...)") \
        if meta_path.exists() else {}
    texts, labels = [], []
    for sub, label in (("positive", 1), ("negative", 0)):
        for path in _example_files(directory / sub):
            text = path.read_text(encoding="utf-8", errors="replace")
            if path.suffix.lower() not in TEXT_SUFFIXES and "<" in text:
                text = _html_text(text, path)
            if text.strip():
                texts.append(text)
                labels.append(label)
    keywords = _lines(directory / "keywords.txt")
    description = str(meta.get("description") or "").strip()
    if labels and (1 not in labels or 0 not in labels):
        missing = "negative/" if 1 in labels else "positive/"
        raise ValueError(f"topic {directory} has example texts of one kind only: add some to {missing}, or remove "
                         "them all to start from the topic's words")
    if not labels and not (keywords or description):
        raise ValueError(f"topic {directory} needs keywords (keywords.txt), a description (topic.yml) or example "
                         "pages (positive/ and negative/)")
    seeds = _lines(directory / "seeds.txt")
    seeds += [url for url in _lines(directory / "example_urls.txt") if url not in seeds]
    return TopicInputs(
        name=str(meta.get("name") or directory.name),
        keywords=keywords,
        example_texts=texts,
        example_labels=labels,
        seeds=seeds,
        description=description,
    )


def write_topic_dir(directory: str | Path, topic: TopicInputs, *, overwrite: bool = False) -> Path:
    directory = Path(directory)
    if directory.exists() and any(directory.iterdir()):
        if not overwrite:
            raise FileExistsError(f"{directory} is not empty; pass --overwrite to replace it")
        for sub in ("positive", "negative"):
            for path in _example_files(directory / sub):
                path.unlink()
    (directory / "positive").mkdir(parents=True, exist_ok=True)
    (directory / "negative").mkdir(parents=True, exist_ok=True)
    meta = {"name": topic.name, **({"description": topic.description} if topic.description else {})}
    (directory / "topic.yml").write_text(yaml.safe_dump(meta, sort_keys=False))
    (directory / "keywords.txt").write_text("".join(f"{k}\n" for k in topic.keywords))
    counters = {1: 0, 0: 0}
    for text, label in zip(topic.example_texts, topic.example_labels):
        sub = "positive" if label else "negative"
        (directory / sub / f"{counters[label]:05d}.txt").write_text(text, encoding="utf-8")
        counters[label] += 1
    if topic.seeds:
        (directory / "seeds.txt").write_text("".join(f"{s}\n" for s in topic.seeds))
    return directory


def _html_text(html: str, path: Path) -> str:
    # main text, as the crawler reads fetched pages by default: the classifier learns from what it will see
    title, text, _ = parse_html(html, f"http://local.invalid/{path.name}", main_text=True)
    return f"{title}\n{text}" if title else text


def _read_examples(folder: Path) -> list[str]:
    texts = []
    for path in _example_files(folder):
        raw = path.read_text(encoding="utf-8", errors="replace")
        text = raw if path.suffix.lower() in TEXT_SUFFIXES else _html_text(raw, path)
        if text.strip():
            texts.append(text)
    return texts


def init_from_html(
    directory: str | Path,
    positive: str | Path,
    negative: str | Path,
    *,
    name: str | None = None,
    keywords: Iterable[str] = (),
    seeds: Iterable[str] = (),
    overwrite: bool = False,
) -> TopicInputs:
    """A topic from folders of saved pages (HTML or text), like ACHE's ``buildModel``."""
    pos, neg = _read_examples(Path(positive)), _read_examples(Path(negative))
    if not pos or not neg:
        raise ValueError("need at least one positive and one negative example page with text")
    topic = TopicInputs(name=name or Path(directory).name, keywords=list(keywords),
                        example_texts=pos + neg, example_labels=[1] * len(pos) + [0] * len(neg), seeds=list(seeds))
    write_topic_dir(directory, topic, overwrite=overwrite)
    return topic


def init_from_words(
    directory: str | Path,
    *,
    keywords: Iterable[str] = (),
    description: str = "",
    example_urls: Iterable[str] = (),
    seeds: Iterable[str] = (),
    name: str | None = None,
    overwrite: bool = False,
) -> TopicInputs:
    """A topic from a few words (no example pages): relevance starts zero-shot from them (topic.zeroshot)."""
    keywords = [k.strip() for k in keywords if k.strip()]
    if not keywords and not description.strip():
        raise ValueError("a topic from words needs --keywords or --description")
    topic = TopicInputs(name=name or Path(directory).name, keywords=keywords, example_texts=[], example_labels=[],
                        seeds=list(seeds), description=description.strip())
    write_topic_dir(directory, topic, overwrite=overwrite)
    urls = [u.strip() for u in example_urls if u.strip()]
    if urls:
        (Path(directory) / "example_urls.txt").write_text("".join(f"{u}\n" for u in urls))
    return load_topic_dir(directory)
