"""Reading the files a user writes by hand: seed lists, keyword lists, configs, suites, a topic's topic.yml.

One reader per kind, one kind of error: a file that is not UTF-8, not YAML or not a mapping is a ``ValueError``
whose message names the file and says what is wrong in one line (the CLI prints it as its error line). A
missing or unreadable file is the ``OSError`` ``open`` raises.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml


def read_text(path: str | Path) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise ValueError(f"{path} is not UTF-8 text") from None


def read_lines(path: str | Path) -> list[str]:
    """A list file (seeds, keywords): one entry a line, ``#`` starts a comment, blank lines skipped."""
    lines = (line.split("#", 1)[0].strip() for line in read_text(path).splitlines())
    return [line for line in lines if line]


def read_yaml_mapping(path: str | Path, holds: str) -> dict[str, Any]:
    """The mapping in ``path`` ({} for an empty file). ``holds`` says what it should hold, for the error when it
    holds something else ("a config file must be a YAML mapping")."""
    try:
        data = yaml.safe_load(read_text(path))
    except yaml.YAMLError as exc:
        raise ValueError(f"{path} is not valid YAML: {str(exc).splitlines()[0]}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: {holds}")
    return data
