"""The registry of scenarios and their Gymnasium ids.

Id scheme: ``SREGym/<Family>-v0`` for a family's primary app (the first app it
was written for) and ``SREGym/<Family>-<Qualifier>-v0`` for the others, where
the qualifier is the app in CamelCase (``MissingEnvVar-SocialNetwork-v0``) or,
when one family's variants are different incidents rather than different
targets, the variant (``FeatureFlag-PaymentFailure-v0``). Everything a seed can
vary (which service, which value) stays inside one id.

Scenarios live in catalog modules (``envs/catalog_*.py``), each exporting a
``SCENARIOS`` mapping; this module merges them in a fixed order. Registration
is explicit and idempotent: ``import sre_env`` calls ``register_all()`` once,
so ids never depend on import order. The scenarios' fault mechanisms are
collected here too (:func:`mechanisms`): the diagnosis grader's family vocabulary.
"""

from __future__ import annotations

import difflib
import importlib
from types import MappingProxyType
from typing import Mapping

import gymnasium as gym

from sre_env.errors import UnknownEnvironmentError
from sre_env.rewards.base import Mechanism

from .base import Scenario, ScenarioInfo

__all__ = ["SCENARIOS", "ENV_IDS", "LITE", "register_all", "scenario_class", "env_id", "resolve_id", "list_scenarios", "mechanisms"]

#: catalog modules, in listing order
_CATALOGS = (
    "catalog_core",
    "catalog_application",
    "catalog_social",
    "catalog_astronomy",
    "catalog_scheduling",
    "catalog_pods",
    "catalog_control_plane",
    "catalog_network",
    "catalog_node",
    "catalog_os",
    "catalog_operator",
    "catalog_compound",
)

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


def _collect() -> dict[str, type[Scenario]]:
    merged: dict[str, type[Scenario]] = {}
    for module in _CATALOGS:
        for name, cls in importlib.import_module(f"{__package__}.{module}").SCENARIOS.items():
            if name in merged:
                raise ValueError(f"scenario {name!r} is registered by two catalogs")
            cls.suites = ("lite", "full") if name in LITE else ("full",)
            merged[name] = cls
    return merged


def _mechanism_vocabulary(scenarios: Mapping[str, type[Scenario]]) -> Mapping[str, Mechanism]:
    """The mechanisms the scenarios declare, by id, in catalog order; one vocabulary per id."""
    out: dict[str, Mechanism] = {}
    for name, cls in scenarios.items():
        mech = cls.mechanism
        if mech is not None and out.setdefault(mech.id, mech) != mech:
            raise ValueError(f"scenario {name!r} declares mechanism {mech.id!r} with a different vocabulary than an earlier scenario")
    return MappingProxyType(out)


#: scenario name (the id without prefix and version) -> class
SCENARIOS: dict[str, type[Scenario]] = _collect()
_MECHANISMS = _mechanism_vocabulary(SCENARIOS)
VERSION = 0
MAX_EPISODE_STEPS = 50


def env_id(name: str) -> str:
    return f"SREGym/{name}-v{VERSION}"


ENV_IDS: tuple[str, ...] = tuple(env_id(n) for n in SCENARIOS)


def scenario_class(name: str) -> type[Scenario]:
    """Look a scenario up by name or full id, with a "did you mean" on typos."""
    key = name.removeprefix("SREGym/").rsplit("-v", 1)[0] if name.startswith("SREGym/") else name
    cls = SCENARIOS.get(key)
    if cls is None:
        close = difflib.get_close_matches(key, list(SCENARIOS), n=1)
        hint = f" Did you mean {env_id(close[0])!r}?" if close else ""
        raise UnknownEnvironmentError(f"No scenario named {name!r}.{hint} Known: {', '.join(ENV_IDS)}")
    return cls


def resolve_id(name: str) -> str:
    """The canonical id for an id or a bare scenario name; unknown ones raise with a "did you mean"."""
    if name in ENV_IDS:
        return name
    cls = scenario_class(name)  # raises UnknownEnvironmentError with a suggestion
    canonical = env_id(next(n for n, c in SCENARIOS.items() if c is cls))
    if name.startswith("SREGym/") and name != canonical:  # right family, wrong version
        raise UnknownEnvironmentError(f"No environment {name!r}. Did you mean {canonical!r}? Known: {', '.join(ENV_IDS)}")
    return canonical


def list_scenarios(suite: str | None = None, layer: str | None = None) -> list[tuple[str, ScenarioInfo]]:
    out = []
    for name, cls in SCENARIOS.items():
        info = cls.info(name)
        if suite and suite not in info.suites:
            continue
        if layer and layer != info.layer:
            continue
        out.append((env_id(name), info))
    return out


def mechanisms() -> Mapping[str, Mechanism]:
    """Every registered family's fault mechanism (each scenario's ``mechanism``), by id, in catalog order.

    The diagnosis grader's vocabulary beside its shared terms: it reads them here, so it
    knows every family however the scenarios were imported.
    """
    return _MECHANISMS


def register_all() -> None:
    for name in SCENARIOS:
        eid = env_id(name)
        if eid in gym.registry:
            continue
        gym.register(
            id=eid,
            entry_point="sre_env.env:SREEnv",
            kwargs={"scenario": name},
            max_episode_steps=MAX_EPISODE_STEPS,
            disable_env_checker=False,
        )
