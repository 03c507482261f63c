"""Strategy names: a few strategies, the presets built on them, and the one function that resolves a name.

A *strategy* is a policy class (or factory) with a description, the relevance model it uses as its
reward, and whether it reads ground truth (only oracles do). A *preset* is a named set of options of a
strategy (``han-sync`` is ``han`` with ``sync: true``), for the variants the papers name and the benchmark
suites compare. Any option can also be set directly (``-s options.han.sync=true``); a preset is
only a name for a documented combination.

Beyond registered names, ``module:attribute`` names a ``Policy`` subclass (or factory) in any importable
module, so a new strategy can live in a file of one's own: ``focuscrawl bench --strategy mine:MyPolicy``.

An installed package can name a strategy of its own with an entry point in the group ``focuscrawl.strategies``
(``NAME = "module:attribute"``), loaded only when a crawl asks for NAME: ``focuscrawl.gym``'s trained agent,
``gym-agent``, is one (pyproject.toml), since it sits above this layer and needs an optional extra. Such a name
is not among ``names()``: it may need options to build (a model's path), which the built-ins never do.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import inspect
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ConfigDict, PydanticSchemaGenerationError, TypeAdapter, ValidationError

from focuscrawl.policy import Policy

Judge = Callable[[str], bool]


@dataclass(frozen=True)
class StrategySpec:
    name: str
    description: str
    factory: Callable[..., Policy]
    reward_model: str = "tfidf"  # a name of focuscrawl.topic.models: the classifier whose output is the reward
    needs_ground_truth: bool = False  # built with the judge: an oracle, a reference point, never a crawler


@dataclass(frozen=True)
class Preset:
    name: str
    strategy: str
    description: str
    options: Mapping[str, Any] = field(default_factory=dict)
    reward_model: str | None = None  # None: the strategy's


@dataclass(frozen=True)
class Resolved:
    """A name resolved: the strategy, the preset's options (if any) and the reward model it uses."""

    name: str
    spec: StrategySpec
    options: Mapping[str, Any]
    reward_model: str

    def make(self, judge: Judge | None = None, **options: Any) -> Policy:
        """The policy, with the preset's options overridden by ``options``."""
        return self.build(judge, self.checked(**options))

    def checked(self, **options: Any) -> dict[str, Any]:
        """The preset's options overridden by ``options``, converted and checked (``checked_options``)."""
        return checked_options(self.name, self.spec.factory, {**self.options, **options})

    def build(self, judge: Judge | None, options: Mapping[str, Any]) -> Policy:
        """The policy from options ``checked`` already (a crawl that builds it again checks them once)."""
        if self.spec.needs_ground_truth and judge is None:
            raise ValueError(f"strategy {self.name!r} reads ground truth and only runs on a labelled web")
        try:
            return self.spec.factory(judge, **options) if self.spec.needs_ground_truth else self.spec.factory(**options)
        except TypeError as exc:  # a factory taking **options (g-oracle) passes on one its policy does not have
            raise ValueError(f"strategy {self.name!r}: {exc}") from None


def checked_options(name: str, factory: Callable[..., Policy], options: Mapping[str, Any]) -> dict[str, Any]:
    """``options`` converted to the types the factory's signature declares (by pydantic, as the settings are),
    so that an unknown option, a wrong type or a value out of its range is one clear error before any policy is
    built. An option without an annotation, or of a type pydantic cannot check, is passed as given."""
    parameters = inspect.signature(factory).parameters
    open_ended = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values())
    unknown = sorted(set(options) - set(parameters)) if not open_ended else []
    if unknown:
        known = [n for n, p in parameters.items() if p.kind is inspect.Parameter.KEYWORD_ONLY
                 or (p.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD and p.default is not inspect.Parameter.empty)]
        raise ValueError(f"strategy {name!r} has no option {', '.join(unknown)}; its options: {', '.join(known)}")
    try:
        hints = typing.get_type_hints(factory.__init__ if isinstance(factory, type) else factory, include_extras=True)
    except (NameError, TypeError):  # annotations that do not resolve: nothing to check against
        hints = {}
    checked = dict(options)
    for key, value in options.items():
        if key not in hints:
            continue
        try:
            adapter = TypeAdapter(hints[key], config=ConfigDict(arbitrary_types_allowed=True))
        except (PydanticSchemaGenerationError, TypeError):
            continue
        try:
            checked[key] = adapter.validate_python(value)
        except ValidationError as exc:
            raise ValueError(f"strategy {name!r} option {key}={value!r}: {exc.errors()[0]['msg']}") from None
    return checked


class UnknownStrategy(KeyError):
    def __str__(self) -> str:
        return str(self.args[0])


STRATEGIES: dict[str, StrategySpec] = {}
PRESETS: dict[str, Preset] = {}


def register(spec: StrategySpec) -> None:
    if spec.name in STRATEGIES or spec.name in PRESETS:
        raise ValueError(f"strategy name {spec.name!r} registered twice")
    STRATEGIES[spec.name] = spec


def register_preset(preset: Preset) -> None:
    if preset.name in STRATEGIES or preset.name in PRESETS:
        raise ValueError(f"strategy name {preset.name!r} registered twice")
    if preset.strategy not in STRATEGIES:
        raise ValueError(f"preset {preset.name!r} names unknown strategy {preset.strategy!r}")
    PRESETS[preset.name] = preset


def names() -> list[str]:
    """Every registered name: strategies, then presets."""
    return [*STRATEGIES, *PRESETS]


ENTRY_POINTS = "focuscrawl.strategies"  # installed packages' strategies, by name (the module's docstring)


def resolve(name: str) -> Resolved:
    """A strategy or preset name, ``module:attribute``, or a name an installed package gives; raises
    ``UnknownStrategy`` naming the known ones."""
    if name in STRATEGIES:
        spec = STRATEGIES[name]
        return Resolved(name, spec, {}, spec.reward_model)
    if name in PRESETS:
        preset = PRESETS[name]
        spec = STRATEGIES[preset.strategy]
        return Resolved(name, spec, dict(preset.options), preset.reward_model or spec.reward_model)
    if ":" in name:
        return _loaded(name, name)
    plugin = importlib.metadata.entry_points(group=ENTRY_POINTS, name=name)  # a scan of the installed packages
    if plugin:
        return _loaded(name, next(iter(plugin)).value)
    raise UnknownStrategy(f"unknown strategy {name!r}; known: {', '.join(names())} (or module:Class)")


def installed() -> dict[str, str]:
    """Strategy names installed packages give (entry points), each with its ``module:attribute``; none is loaded."""
    return {ep.name: ep.value for ep in importlib.metadata.entry_points(group=ENTRY_POINTS)}


def _loaded(name: str, target: str) -> Resolved:
    """Strategy ``name`` from the ``Policy`` subclass or factory at ``target``, ``module:attribute``."""
    module, _, attribute = target.partition(":")
    try:
        factory = getattr(importlib.import_module(module), attribute)
    except (ImportError, AttributeError) as exc:
        raise UnknownStrategy(f"cannot load strategy {name!r}: {exc}") from None
    spec = StrategySpec(name, getattr(factory, "__doc__", "") or "", factory,
                        reward_model=getattr(factory, "reward_model", "tfidf"))
    return Resolved(name, spec, {}, spec.reward_model)


def make_policy(name: str, judge: Judge | None = None, **options: Any) -> Policy:
    """Build a strategy or preset by name. Only strategies that read ground truth receive ``judge``."""
    return resolve(name).make(judge, **options)
