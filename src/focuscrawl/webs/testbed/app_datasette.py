"""Datasette 0.65 in the test bed: one large table, a row per page of the offline web (its title, first
sentence and labels' parts as facet columns), browsed with facets, filters, sorting and next-page links, and
a page of its own for every row: the data browser's thin row pages."""

from __future__ import annotations

import json
import random
import sqlite3
from pathlib import Path

from focuscrawl.webs.testbed.sources import Source

DATABASE = "testbed"
TABLE = "pages"
ARGV = ["{bin}/datasette", "serve", "{dir}/testbed.db", "-h", "{ip}", "-p", "{port}", "--metadata",
        "{dir}/metadata.json", "--setting", "num_sql_threads", "2"]
FRONT = f"/{DATABASE}/{TABLE}"
FACETS = ["area", "subject", "year", "length"]


def build(app_dir: Path, rows: list[Source], rng: random.Random) -> list[tuple[Source, str]]:
    """Write the database and its metadata: no content page (a row page is a line, not a page of text)."""
    app_dir.mkdir(parents=True, exist_ok=True)
    db = sqlite3.connect(app_dir / "testbed.db")
    db.execute(f"CREATE TABLE {TABLE} (id INTEGER PRIMARY KEY, title TEXT, first_sentence TEXT, area TEXT, "
               "subject TEXT, year INTEGER, length TEXT, paragraphs INTEGER)")
    db.executemany(f"INSERT INTO {TABLE} VALUES (?, ?, ?, ?, ?, ?, ?, ?)", [
        (number, source.title, source.first_sentence, source.area, source.subject, rng.randint(1990, 2024),
         length_bucket(source), len(source.paragraphs)) for number, source in enumerate(rows, 1)])
    db.commit()
    db.close()
    metadata = {"title": "Test bed data", "databases": {DATABASE: {"tables": {TABLE: {
        "title": "Pages", "facets": FACETS, "label_column": "title", "sort": "title"}}}}}
    (app_dir / "metadata.json").write_text(json.dumps(metadata, indent=1))
    return []


def length_bucket(source: Source) -> str:
    words = sum(len(paragraph.split()) for paragraph in source.paragraphs)
    return "short" if words < 500 else "medium" if words < 2000 else "long"
