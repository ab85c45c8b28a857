"""The registry of scenarios and their Gymnasium ids.

Id scheme: ``SREGym/<Family>-v0`` for a family's primary app (the first app it
was written for) and ``SREGym/<Family>-<Qualifier>-v0`` for the others, where
the qualifier is the app in CamelCase (``MissingEnvVar-SocialNetwork-v0``) or,
when one family's variants are different incidents rather than different
targets, the variant (``FeatureFlag-PaymentFailure-v0``). Everything a seed can
vary (which service, which value) stays inside one id.

Scenarios live in catalog modules (``envs/catalog_*.py``), each exporting a
``SCENARIOS`` mapping; :data:`sre_env.envs.index.CATALOGS` says which catalog holds
which name. Registration reads only that table: ``import sre_env`` registers every
id with the string entry point ``sre_env.env:SREEnv`` and the scenario name as a
fixed kwarg, and a catalog module is imported the first time one of its scenarios
is looked up (``gym.make``, :func:`scenario_class`). Registration is explicit and
idempotent, so ids never depend on import order. The scenarios' fault mechanisms
are collected here too (:func:`mechanisms`): the diagnosis grader's family
vocabulary, which loads every catalog.
"""

from __future__ import annotations

import difflib
import importlib
from types import MappingProxyType
from typing import TYPE_CHECKING, Mapping

import gymnasium as gym
from gymnasium.envs.registration import WrapperSpec

from sre_env.errors import UnknownEnvironmentError

from .index import CATALOGS

if TYPE_CHECKING:
    from sre_env.rewards.base import Mechanism

    from .base import Scenario, ScenarioInfo

__all__ = [
    "NAMES",
    "ENV_IDS",
    "LITE",
    "MAX_EPISODE_STEPS",
    "register_all",
    "scenario_class",
    "scenarios",
    "env_id",
    "resolve_id",
    "list_scenarios",
    "mechanisms",
]

#: the ``lite`` suite: about twenty ids that together cover every layer
LITE: frozenset[str] = frozenset(
    {
        # application
        "MissingEnvVar", "MongoAuthRevoked", "FeatureFlag-PaymentFailure", "CacheMemoryExhausted", "KafkaPoisonPill",
        # kubernetes
        "TargetPortMisconfig", "ReadinessProbeMisconfig", "TaintNoToleration", "AdmissionWebhookOutage", "PVAffinityViolation",
        # network
        "NetworkPolicyBlock", "ServiceDNSFailure", "KubeProxyBroken",
        # os
        "KubeletDown", "ConntrackExhaustion", "CfsThrottling",
        # hardware
        "DiskSector", "NicPacketCorruption", "MemoryEccErrors",
        # operator
        "OperatorMisoperation-InvalidToleration",
        # compound
        "RetryStorm", "Concurrent-DiskSectorAndMissingEnvVar",
    }
)

VERSION = 0
#: the default episode length (``SREEnv``'s ``max_steps``; ``gym.make``'s ``max_episode_steps`` sets it too)
MAX_EPISODE_STEPS = 50

#: scenario name -> the catalog module that registers it
_CATALOG_OF: dict[str, str] = {}
for _module, _names in CATALOGS:
    for _name in _names:
        if _name in _CATALOG_OF:
            raise ValueError(f"scenario {_name!r} is listed by two catalogs")
        _CATALOG_OF[_name] = _module

#: scenario names (the ids without prefix and version), in listing order
NAMES: tuple[str, ...] = tuple(_CATALOG_OF)
_LOADED: dict[str, type["Scenario"]] = {}
_MECHANISMS: Mapping[str, "Mechanism"] | None = None


def env_id(name: str) -> str:
    return f"SREGym/{name}-v{VERSION}"


ENV_IDS: tuple[str, ...] = tuple(env_id(n) for n in NAMES)


def _name_of(name_or_id: str) -> str:
    return name_or_id.removeprefix("SREGym/").rsplit("-v", 1)[0] if name_or_id.startswith("SREGym/") else name_or_id


def _load(name: str) -> type["Scenario"]:
    cls = _LOADED.get(name)
    if cls is None:
        module = importlib.import_module(f"{__package__}.{_CATALOG_OF[name]}")
        cls = module.SCENARIOS.get(name)
        if cls is None:
            raise ValueError(f"{module.__name__} does not register {name!r}, but sre_env.envs.index says it does")
        cls.suites = ("lite", "full") if name in LITE else ("full",)
        _LOADED[name] = cls
    return cls


def scenario_class(name: str) -> type["Scenario"]:
    """Look a scenario up by name or full id (importing its catalog), with a "did you mean" on typos."""
    key = _name_of(name)
    if key not in _CATALOG_OF:
        close = difflib.get_close_matches(key, NAMES, n=1)
        hint = f" Did you mean {env_id(close[0])!r}?" if close else ""
        raise UnknownEnvironmentError(f"No scenario named {name!r}.{hint} Known: {', '.join(ENV_IDS)}")
    return _load(key)


def scenarios() -> dict[str, type["Scenario"]]:
    """Every registered scenario class by name, in listing order (imports every catalog)."""
    return {name: _load(name) for name in NAMES}


def resolve_id(name: str) -> str:
    """The canonical id for an id or a bare scenario name; unknown ones raise with a "did you mean"."""
    if name in ENV_IDS:
        return name
    scenario_class(name)  # raises UnknownEnvironmentError with a suggestion
    canonical = env_id(_name_of(name))
    if name.startswith("SREGym/") and name != canonical:  # right family, wrong version
        raise UnknownEnvironmentError(f"No environment {name!r}. Did you mean {canonical!r}? Known: {', '.join(ENV_IDS)}")
    return canonical


def list_scenarios(suite: str | None = None, layer: str | None = None) -> list[tuple[str, "ScenarioInfo"]]:
    out = []
    for name, cls in scenarios().items():
        info = cls.info(name)
        if suite and suite not in info.suites:
            continue
        if layer and layer != info.layer:
            continue
        out.append((env_id(name), info))
    return out


def mechanisms() -> Mapping[str, "Mechanism"]:
    """Every registered family's fault mechanism (each scenario's ``mechanism``), by id, in catalog order.

    The diagnosis grader's vocabulary beside its shared terms: it reads them here, so it
    knows every family however the scenarios were imported.
    """
    global _MECHANISMS
    if _MECHANISMS is None:
        out: dict[str, Mechanism] = {}
        for name, cls in scenarios().items():
            mech = cls.mechanism
            if mech is not None and out.setdefault(mech.id, mech) != mech:
                raise ValueError(f"scenario {name!r} declares mechanism {mech.id!r} with a different vocabulary than an earlier scenario")
        _MECHANISMS = MappingProxyType(out)
    return _MECHANISMS


_EPISODE_LENGTH = WrapperSpec(name="EpisodeLength", entry_point="sre_env.env:EpisodeLength", kwargs={})


def register_all() -> None:
    """Register every id with Gymnasium; no scenario module is imported."""
    for name in NAMES:
        eid = env_id(name)
        if eid in gym.registry:
            continue
        gym.register(
            id=eid,
            entry_point="sre_env.env:SREEnv",
            kwargs={"scenario": name},
            # the env's own max_steps is the limit, graded when reached; EpisodeLength hands it
            # gym.make's max_episode_steps (a TimeLimit of Gymnasium's would truncate ungraded)
            max_episode_steps=None,
            additional_wrappers=(_EPISODE_LENGTH,),
            disable_env_checker=False,
        )
