"""The one settings system: ``CrawlConfig`` (``focuscrawl crawl``) and ``BenchConfig`` (``focuscrawl bench``).

Both share ``RunSettings``, what one crawl of one strategy needs besides its topic and seeds, and are
filled the same way (``load_config``): defaults < a YAML file (``-c``) < command-line options <
``-s KEY=VALUE`` overrides. Dotted keys reach into mappings and values are YAML, so both commands take the
same keys::

    -s budget=5000 -s max_per_domain=5-2 -s options.tres.gamma=0 -s options.best-first.retrain_every=50

``options`` maps a strategy (or preset) name to its hyper-parameters; options of a strategy also apply to
its presets (``options.tres`` reaches ``tres-sync``), a preset's own entry wins. Unknown keys and wrong
types are refused with the key's name.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar, Literal, TypeVar

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializationInfo,
    ValidationError,
    field_serializer,
    field_validator,
    model_validator,
)

from focuscrawl.engine.defences import DEFAULT_ORDER, DefenceSettings
from focuscrawl.engine.scope import Scope
from focuscrawl.http.settings import FetchConfig
from focuscrawl.topic.judges import is_judge_spec, judge_identity
from focuscrawl.user_files import read_lines, read_yaml_mapping

CONFIG_FILE = "config.yml"
# The benchmark protocol's example pages per topic (focuscrawl.bench.protocol says why these numbers).
EXAMPLES_RELEVANT = 20
EXAMPLES_IRRELEVANT = 80
# Its seeds: each must reach min(budget, this share of the web's pages) (focuscrawl.bench.protocol says why).
SEED_REACH_SHARE = 0.1


class ScopeConfig(BaseModel):
    """What a crawl may fetch (``focuscrawl.engine.scope``); out-of-scope links never enter the frontier."""

    model_config = ConfigDict(extra="forbid")

    allowed_domains: list[str] = Field(default_factory=list, description="only these registered domains or "
                                       "hosts, and hosts under them (empty: any)")
    denied_domains: list[str] = Field(default_factory=list, description="never these domains or hosts")
    include: list[str] = Field(default_factory=list, description="URL regular expressions; if any, a URL must "
                                                                  "match one")
    exclude: list[str] = Field(default_factory=list, description="URL regular expressions a URL must not match")
    max_depth: int | None = Field(None, ge=0, description="links from the seeds, at most (seeds: 0)")
    content_types: list[str] | None = Field(None, description="accepted media types (by URL extension before, "
                                            "and Content-Type after the fetch); default: any")

    @field_validator("allowed_domains", "denied_domains", "include", "exclude", "content_types", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @model_validator(mode="after")
    def _valid_rules(self) -> ScopeConfig:
        self.rules()  # a pattern that does not compile or a malformed domain is refused when the config loads
        return self

    def rules(self) -> Scope:
        return Scope.build(**self.model_dump())

    def is_default(self) -> bool:
        return self == ScopeConfig()


class RunSettings(BaseModel):
    """What one crawl needs besides its topic and seeds: budget, randomness, caps, strategy options."""

    model_config = ConfigDict(extra="forbid")

    budget: int = Field(1000, gt=0, description="pages to fetch (per crawl; for a real crawl, across resumes)")
    seed: int = Field(0, description="seed of every random choice")
    max_per_domain: str = Field("inf", description="per-host cap MAX: inf, N, or adaptive A-B (e.g. 5-2)")
    max_outlinks: int = Field(1000, gt=0, description="outlinks of a page handed to the policy, at most")
    reward_model: str | None = Field(None, description="relevance model (focuscrawl.topic.models); "
                                                       "default: the strategy's own")
    judge: str | None = Field(None, description="your own relevance judge, in place of the topic's classifier: "
                              "module:callable (an object with predict_proba(texts) or score(page), a function of "
                              "the page, or a factory taking the topic) or a model file (.joblib, .pkl: a fitted "
                              "scikit-learn pipeline of raw texts; a pickle runs code, so it must be trusted); "
                              "docs/crawl.md, 'Your own judge'")
    page_encoder: bool = Field(False, description="topics from keywords: judge each fetched page by the MiniLM "
                               "sentence transformer too, not only the static word vectors (about 45 ms a page; "
                               "the neural extra)")
    thin_page_ratio: float = Field(0.125, ge=0, le=1, description="a fetched page shorter than this share of the "
                                   "median relevant example page is thin: its relevance shrinks by its length over "
                                   "that floor (focuscrawl.topic.thin); 0 turns it off")
    options: dict[str, dict[str, Any]] = Field(default_factory=dict,
                                               description="strategy or preset name -> its hyper-parameters")
    scope: ScopeConfig = Field(default_factory=ScopeConfig, description="domains, URL patterns, depth and "
                               "content types a crawl may fetch")
    defences: DefenceSettings = Field(default_factory=DefenceSettings, description="the engine's defences against "
                                      "the messy web (focuscrawl.engine.defences; docs/crawl.md, 'Messy web'): "
                                      "url_hygiene, canonical, near_duplicates, host_health, soft_404, traps, each "
                                      "with enabled and its thresholds; enabled=false turns them all off")

    @field_validator("max_per_domain", mode="before")
    @classmethod
    def _cap_to_str(cls, value: Any) -> str:
        return str(value)

    @field_validator("judge")
    @classmethod
    def _judge_spec(cls, value: str | None) -> str | None:
        if value is not None and not is_judge_spec(value):
            raise ValueError(f"{value!r} is neither module:callable nor a model file (.joblib, .pkl)")
        return value

    @model_validator(mode="after")
    def _one_judge(self) -> RunSettings:
        if self.reward_model is not None and is_judge_spec(self.reward_model):
            raise ValueError(f"reward_model names the built-in models; give a judge of your own as judge="
                             f"{self.reward_model}")
        if self.judge is not None and self.reward_model is not None:
            raise ValueError("judge and reward_model both say who judges pages: give one")
        return self


class CrawlConfig(RunSettings):
    """Every setting of ``focuscrawl crawl``; the effective one is kept in the run folder as ``config.yml``."""

    seeds: list[str] = Field(default_factory=list, description="seed URLs (in addition to seeds_file)")
    seeds_file: Path | None = Field(None, description="file of seed URLs, one per line, # comments")
    seeds_from_sitemap: list[str] = Field(default_factory=list, description="seeds read from these sitemaps, "
                                          "sitemap indexes or sites (their robots.txt's Sitemap: lines, else "
                                          "/sitemap.xml), over HTTP when the crawl starts (focuscrawl.http.sitemaps)")
    topic: Path | None = Field(None, description="topic directory (see `focuscrawl topic init`)")
    out: Path | None = Field(None, description="run folder")
    strategy: str = Field("adaptive", description="strategy or preset (focuscrawl strategies)")
    concurrency: int = Field(8, gt=0, description="fetches in flight")
    warc: bool = False
    checkpoint_every: int = Field(500, ge=0, description="steps between engine checkpoints (0: replay only)")
    web: str | None = Field(None, description="crawl an offline web directory (or 'embedded') instead of HTTP")
    offline_latency_s: float = Field(0.0, ge=0, description="simulated fetch latency of the offline web")
    fetch: FetchConfig = Field(default_factory=FetchConfig, description="HTTP fetcher settings "
                               "(focuscrawl.http.settings.FetchConfig: min_delay, user_agent, politeness, ...)")
    hosts_map: Path | None = Field(None, description="JSON host -> ip:port of `focuscrawl web serve --map`: "
                                                     "crawl a loopback-served web over HTTP")
    workers: int | None = Field(None, gt=0, description="distributed crawl: shards (Ray actors), each owning a "
                                                        "partition of the hosts; None: one process")
    ray_address: str | None = Field(None, description="distributed crawl: join this Ray cluster (ray start "
                                                      "--head) instead of starting a local runtime")
    lease_pages: int = Field(16, gt=0, description="distributed crawl: pages of the budget a shard leases at a time")
    average_every: int | None = Field(None, ge=0, description="distributed crawl: combine the strategy's learned "
                                      "parameters across shards every N pages (adaptive pools what the shards "
                                      "learned, tres averages its network; 0: never; None: the strategy's own "
                                      "choice, Policy.combine_every: adaptive 100, the others never)")
    # 0.9 chosen on the suite's WebKB tuning rows (course, student) at N=4 (benchmarks/distributed_quality.py)
    lease_priority: float = Field(0.9, ge=0, le=1, description="distributed crawl: a shard leases pages only "
                                  "while its outlook (its policy's recent scores, else its pages' relevance) is "
                                  "in the top (1 - this) of the range from the worst to the best asking shard's "
                                  "(0: every shard alike)")
    progress: Literal["auto", "live", "log", "none"] = "auto"
    log_every_s: float = Field(5.0, gt=0)
    plot: bool = True

    @field_serializer("fetch")
    def _fetch_as_given(self, fetch: FetchConfig, info: SerializationInfo) -> dict[str, Any]:
        # Only the settings given, as config.yml always kept them: the defaults stay the fetcher's (a newer
        # version's user agent), and what was not given make_fetcher may fill in (a loopback web's, the scope's).
        return fetch.model_dump(mode=info.mode, exclude_unset=True)

    @field_validator("seeds_from_sitemap", mode="before")
    @classmethod
    def _comma_list(cls, value: Any) -> Any:
        items = [value] if isinstance(value, str) else value
        if isinstance(items, list | tuple):
            return [part.strip() for item in items for part in str(item).split(",") if part.strip()]
        return value

    @model_validator(mode="after")
    def _sitemaps_over_http(self) -> CrawlConfig:
        if self.seeds_from_sitemap and self.web:
            raise ValueError("--seeds-from-sitemap reads sitemaps over HTTP, which an offline web (--web) has none "
                             "of: give its seeds with --seeds")
        if self.seeds_from_sitemap and (self.workers is not None or self.ray_address):
            raise ValueError("--seeds-from-sitemap is read by a crawl in one process: for a distributed one, give "
                             "the URLs as --seeds (focuscrawl.http.sitemaps.sitemap_urls lists them)")
        return self

    @model_validator(mode="after")
    def _render_over_http(self) -> CrawlConfig:
        if self.web and self.fetch.render != "never":
            raise ValueError("fetch.render runs pages' scripts, which only a crawl over HTTP meets: an offline web "
                             "(--web) serves none; serve it (focuscrawl web serve --map) and crawl with --hosts-map")
        return self

    # What makes two runs the same crawl: changing any of these on resume would make the replay diverge.
    IDENTITY_FIELDS: ClassVar[tuple[str, ...]] = ("seeds", "seeds_from_sitemap", "topic", "strategy", "options",
                                                  "seed", "max_per_domain", "max_outlinks", "reward_model", "judge",
                                                  "scope", "defences")

    def all_seeds(self) -> list[str]:
        seeds = list(self.seeds)
        if self.seeds_file is not None:
            seeds.extend(read_lines(self.seeds_file))
        return seeds

    def identity(self) -> dict:
        """The fields a resume must keep, in a JSON-comparable form (seeds resolved from the file)."""
        data = self.model_dump(mode="json", include=set(self.IDENTITY_FIELDS))
        data["seeds"] = self.all_seeds()
        data["topic"] = str(Path(self.topic).resolve()) if self.topic else None
        if self.judge is None:
            del data["judge"]  # as run folders made before judges existed recorded it: they resume
        else:
            data["judge"] = judge_identity(self.judge)  # a model file retrained in place is another judge
        if not self.seeds_from_sitemap:
            del data["seeds_from_sitemap"]  # as run folders made before sitemaps recorded it: they resume
        if self.scope.is_default():
            del data["scope"]  # as run folders made before scopes existed recorded it: they resume
        if not self.defences.enabled:
            del data["defences"]  # as run folders made before the defences recorded it (read_effective_config)
        elif self.defences.order == DEFAULT_ORDER:
            del data["defences"]["order"]  # as run folders made before the order was a setting recorded it
        return data

    def to_yaml(self) -> str:
        return yaml.safe_dump(self.model_dump(mode="json"), sort_keys=False)


class BenchConfig(RunSettings):
    """Every setting of ``focuscrawl bench``: strategies x runs on one topic of one labelled offline web."""

    web: str = Field("embedded", description="offline web directory, or 'embedded'")
    topic: str = Field("subject.Science.Biology", description="label of the topic on that web")
    strategies: list[str] = Field(default_factory=lambda: ["random", "bfs", "best-first"],
                                  description="strategies and presets (the oracle always runs too)")
    runs: int = Field(5, gt=0, description="crawls per strategy; run i uses seeds chosen by i")
    seeds_per_run: int = Field(1, gt=0, description="relevant seed pages per run")
    examples_irrelevant: int = Field(EXAMPLES_IRRELEVANT, gt=0,
                                     description="irrelevant example texts the classifiers train on")
    seed_reach_share: float = Field(SEED_REACH_SHARE, gt=0, le=1,
                                    description="a seed must be able to reach the budget's worth of pages, or "
                                                "this share of the web's pages if fewer")
    keyword_only: bool = Field(False, description="topics from their keywords alone, as most users start: no "
                                                 "example texts reach the agent (the same pages stay held out)")
    out: Path = Field(Path("bench-results"), description="output folder")

    @field_validator("strategies", mode="before")
    @classmethod
    def _split(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [s.strip() for s in value.split(",") if s.strip()]
        return value

    def run_settings(self, run: int) -> RunSettings:
        """The settings of run ``run``: its crawl seed is derived from the benchmark's seed and the run."""
        return RunSettings.model_validate({**self.model_dump(include=set(RunSettings.model_fields)),
                                           "seed": self.seed * 1000 + run})


def describe_validation_error(exc: ValidationError) -> str:
    """A config's validation errors in one line: ``setting budget: Input should be greater than 0; ...``."""
    parts = []
    for error in exc.errors():
        key = ".".join(str(part) for part in error["loc"]) or "(config)"
        message = "unknown setting" if error["type"] == "extra_forbidden" else error["msg"]
        parts.append(f"setting {key}: {message}")
    return "; ".join(parts)


def strategy_options(settings: RunSettings, name: str, strategy: str) -> dict[str, Any]:
    """The options for ``name`` (a strategy or a preset of ``strategy``): the strategy's, then the preset's."""
    options = dict(settings.options.get(strategy, {}))
    if name != strategy:
        options.update(settings.options.get(name, {}))
    return options


def parse_override(item: str) -> tuple[list[str], Any]:
    """``a.b=value`` -> (["a", "b"], parsed value). Values are YAML: 5, 0.5, true, [a, b], {k: v}.

    Dashes in the first key become underscores (``max-per-domain``); deeper keys are kept as written,
    since they may be strategy names (``options.best-first.retrain_every``).
    """
    if "=" not in item:
        raise ValueError(f"setting {item!r} is not KEY=VALUE")
    key, raw = item.split("=", 1)
    path = [part.strip() for part in key.strip().split(".")]
    if not all(path):
        raise ValueError(f"setting {item!r} has an empty key")
    path[0] = path[0].replace("-", "_")
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


Config = TypeVar("Config", bound=RunSettings)


def load_config(
    model: type[Config],
    file: str | Path | None = None,
    overrides: Sequence[str] = (),
    *,
    base: Config | None = None,
    **options: Any,
) -> Config:
    """Merge ``base`` (e.g. a run folder's config), a YAML file, explicit options (None means "not given")
    and ``KEY=VALUE`` overrides, in that order of precedence, into a ``model``."""
    data: dict[str, Any] = base.model_dump() if base is not None else {}
    if file is not None:
        data.update(read_yaml_mapping(file, "a config file must be a YAML mapping"))
    for key, value in options.items():
        if isinstance(value, dict):  # a section given in part (e.g. scope flags): merged into what is there
            value = {k: v for k, v in value.items() if v is not None}
            if value:
                data[key] = {**(data.get(key) or {}), **value}
        elif value is not None:
            data[key] = value
    for item in overrides:
        path, value = parse_override(item)
        _set(data, path, value)
    return model.model_validate(data)


def read_effective_config(run_dir: Path) -> CrawlConfig | None:
    path = Path(run_dir) / CONFIG_FILE
    if not path.exists():
        return None
    try:
        data = read_yaml_mapping(path, "a YAML mapping of settings")
        # a folder crawled before the engine had defences: it crawled without them, and resumes so
        data.setdefault("defences", DefenceSettings.off().model_dump())
        return CrawlConfig.model_validate(data)
    except ValueError as exc:
        raise ValueError(f"{path} is damaged ({str(exc).splitlines()[0]}); fix or delete it: the crawl's "
                         "settings are also recorded in state.sqlite, and the command line can give them again")


def write_effective_config(run_dir: Path, config: CrawlConfig) -> None:
    path = Path(run_dir) / CONFIG_FILE
    tmp = path.with_suffix(".yml.tmp")
    tmp.write_text(config.to_yaml())
    tmp.replace(path)
