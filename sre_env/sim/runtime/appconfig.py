"""Addresses a process reads from its JSON config file at start (DeathStarBench's ``service-config.json``).

The C++ social-network services read ``config/service-config.json`` once, when
they start: ``config["home-timeline-redis"]["addr"]`` and ``["port"]`` for each
peer. The file is a ConfigMap key mounted with ``subPath``, so an edit to the
ConfigMap reaches a process only through a new container. A file that is
missing, not JSON, or lacks the peer's entry leaves the compiled-in default.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sre_env.sim.network.routing import resolve_route
from sre_env.sim.runtime.mounts import mounted_file

if TYPE_CHECKING:
    from sre_env.apps.base import Component, Dependency
    from sre_env.sim.kernel.world import World

Obj = dict[str, Any]

__all__ = ["configured_address", "start_dependency_error"]


@dataclass
class _LoadedConfigs:
    """What each process read from its config file when it started (it does not re-read it)."""

    #: (pod uid, container, start time) -> the parsed file
    by_start: dict[tuple[str, str, float], dict[str, Any]] = field(default_factory=dict)


def _load(world: World, pod: dict[str, Any], comp: Component, started_at: float | None) -> dict[str, Any]:
    cache = world.slot(_LoadedConfigs).by_start
    key = (pod["metadata"]["uid"], comp.container, started_at)
    if started_at is not None and key in cache:
        return cache[key]
    spec = next((c for c in pod["spec"].get("containers") or () if c["name"] == comp.container), None)
    text = mounted_file(world, pod, spec, comp.address_file) if spec is not None else None
    try:
        cfg = json.loads(text) if text else {}
    except ValueError:
        cfg = {}
    cfg = cfg if isinstance(cfg, dict) else {}
    if started_at is not None:
        cache[key] = cfg
    return cfg


def configured_address(world: World, pod: dict[str, Any], comp: Component, dep: Dependency, *, starting: bool = False) -> str | None:
    """``addr:port`` the process in ``pod`` dials for ``dep`` (None: not configured by file).

    ``starting``: read the file as it is now (the process is starting); otherwise
    as the running container read it when it started.
    """
    if not dep.config_key or not comp.address_file:
        return None
    started_at = None
    if not starting:
        rt = world.runtimes.get(pod["metadata"]["uid"])
        ctr = rt.containers.get(comp.container) if rt else None
        started_at = ctr.started_at if ctr is not None else None
    entry = _load(world, pod, comp, started_at).get(dep.config_key)
    if not isinstance(entry, dict) or "addr" not in entry or "port" not in entry:
        return None
    return f"{entry['addr']}:{entry['port']}"


def start_dependency_error(world: World, pod: Obj, comp: Component, env: dict[str, str]) -> tuple[str, str] | None:
    """The first dependency a process dials at start-up and cannot reach (DB, consul), if any."""
    for dep in comp.dependencies:
        if dep.protocol not in ("mongodb", "consul") or not dep.critical:
            continue
        addr = env.get(dep.address_env, "") if dep.address_env else ""
        if not addr and dep.config_key:
            addr = configured_address(world, pod, comp, dep, starting=True) or ""
        route = resolve_route(world, pod["metadata"]["namespace"], addr or f"{dep.service}:{dep.port}", dep.port, client=pod["metadata"]["uid"])
        if route.ok <= 0.0:
            return route.target, route.error or "connection refused"
    return None
