"""The registry of scenarios and their Gymnasium ids (``SREGym/<Family>-v<N>``).

Registration is explicit and idempotent: ``import sre_env`` calls
``register_all()`` once, so ids never depend on import order.
"""

from __future__ import annotations

import difflib

import gymnasium as gym

from sre_env.errors import UnknownEnvironmentError

from .base import Scenario, ScenarioInfo
from .disk_sector import DiskSector
from .missing_env_var import MissingEnvVar
from .target_port import TargetPortMisconfig

__all__ = ["SCENARIOS", "ENV_IDS", "register_all", "scenario_class", "env_id", "list_scenarios"]

#: scenario name (the id without prefix and version) -> class
SCENARIOS: dict[str, type[Scenario]] = {
    "DiskSector": DiskSector,
    "MissingEnvVar": MissingEnvVar,
    "TargetPortMisconfig": TargetPortMisconfig,
}
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
