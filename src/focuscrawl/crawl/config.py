"""``CrawlConfig``: every setting of a crawl, from defaults, a YAML file (``-c``) and ``-s key=value``.

Precedence: defaults < YAML file < command-line options < ``-s`` overrides. The effective config is
written into the run folder as ``config.yml``; a resumed crawl must agree with it on everything that
defines the crawl (``IDENTITY_FIELDS``), while budget, concurrency and display settings may change.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator

CONFIG_FILE = "config.yml"

# What makes two runs the same crawl: changing any of these on resume would make the replay diverge.
IDENTITY_FIELDS = ("seeds", "topic", "strategy", "strategy_options", "seed", "max_per_domain", "max_outlinks",
                   "reward_model")


class CrawlConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    seeds: list[str] = Field(default_factory=list, description="seed URLs (in addition to seeds_file)")
    seeds_file: Path | None = Field(None, description="file of seed URLs, one per line, # comments")
    topic: Path | None = Field(None, description="topic directory (see `focuscrawl topic init`)")
    out: Path | None = Field(None, description="run folder")
    strategy: str = "best-first"
    strategy_options: dict[str, Any] = Field(default_factory=dict)
    reward_model: str | None = Field(None, description="relevance model; default: the strategy's own")
    budget: int = Field(1000, gt=0, description="pages to fetch in total (across resumes)")
    seed: int = 0
    max_per_domain: str = "inf"
    max_outlinks: int = Field(1000, gt=0)
    concurrency: int = Field(8, gt=0, description="fetches in flight")
    warc: bool = False
    checkpoint_every: int = Field(500, ge=0, description="steps between engine checkpoints (0: replay only)")
    web: str | None = Field(None, description="crawl an offline web directory (or 'embedded') instead of HTTP")
    offline_latency_s: float = Field(0.0, ge=0, description="simulated fetch latency of the offline web")
    fetch: dict[str, Any] = Field(default_factory=dict, description="HTTP fetcher settings (FetchConfig fields)")
    hosts_map: Path | None = Field(None, description="JSON host -> ip:port of `focuscrawl web serve --map`: "
                                                     "crawl a loopback-served web over HTTP")
    progress: Literal["auto", "live", "log", "none"] = "auto"
    log_every_s: float = Field(5.0, gt=0)
    plot: bool = True

    @field_validator("max_per_domain", mode="before")
    @classmethod
    def _cap_to_str(cls, value: Any) -> str:
        return str(value)

    def all_seeds(self) -> list[str]:
        seeds = list(self.seeds)
        if self.seeds_file is not None:
            for line in Path(self.seeds_file).read_text().splitlines():
                line = line.split("#", 1)[0].strip()
                if line:
                    seeds.append(line)
        return seeds

    def identity(self) -> dict:
        """The fields a resume must keep, in a JSON-comparable form (seeds resolved from the file)."""
        data = self.model_dump(mode="json", include=set(IDENTITY_FIELDS))
        data["seeds"] = self.all_seeds()
        data["topic"] = str(Path(self.topic).resolve()) if self.topic else None
        return data

    def to_yaml(self) -> str:
        return yaml.safe_dump(self.model_dump(mode="json"), sort_keys=False)


def parse_override(item: str) -> tuple[list[str], Any]:
    """``a.b=value`` -> (["a", "b"], parsed value). Values are YAML: 5, 0.5, true, [a, b], {k: v}."""
    if "=" not in item:
        raise ValueError(f"override {item!r} is not key=value")
    key, raw = item.split("=", 1)
    path = [part.strip().replace("-", "_") for part in key.strip().split(".")]
    if not all(path):
        raise ValueError(f"override {item!r} has an empty key")
    try:
        value = yaml.safe_load(raw) if raw.strip() else ""
    except yaml.YAMLError:
        value = raw
    return path, value


def _set(data: dict, path: list[str], value: Any) -> None:
    for part in path[:-1]:
        node = data.get(part)
        if not isinstance(node, dict):
            node = data[part] = {}
        data = node
    data[path[-1]] = value


def load_config(
    file: str | Path | None = None,
    overrides: list[str] | tuple[str, ...] = (),
    *,
    base: CrawlConfig | None = None,
    **options: Any,
) -> CrawlConfig:
    """Merge ``base`` (e.g. a run folder's config), a YAML file, explicit options (None means "not given")
    and ``key=value`` overrides, in that order of precedence."""
    data: dict[str, Any] = base.model_dump() if base is not None else {}
    if file is not None:
        loaded = yaml.safe_load(Path(file).read_text()) or {}
        if not isinstance(loaded, dict):
            raise ValueError(f"{file}: a crawl config must be a YAML mapping")
        data.update(loaded)
    for key, value in options.items():
        if value is not None:
            data[key] = value
    for item in overrides:
        path, value = parse_override(item)
        _set(data, path, value)
    return CrawlConfig.model_validate(data)


def read_effective_config(run_dir: Path) -> CrawlConfig | None:
    path = Path(run_dir) / CONFIG_FILE
    if not path.exists():
        return None
    return CrawlConfig.model_validate(yaml.safe_load(path.read_text()) or {})


def write_effective_config(run_dir: Path, config: CrawlConfig) -> None:
    path = Path(run_dir) / CONFIG_FILE
    tmp = path.with_suffix(".yml.tmp")
    tmp.write_text(config.to_yaml())
    tmp.replace(path)
