"""Helpers shared by the network scenarios: where components run, who calls whom, route checks."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sre_env.apps.base import AppSpec
from sre_env.rewards.base import Check

if TYPE_CHECKING:
    from sre_env.backend import Backend
    from sre_env.sim.model import ModelBackend

__all__ = ["callers_of", "request_path_callees", "component_nodes", "caller_routes_check", "dep_address"]

Obj = dict[str, Any]


def request_path_callees(app: AppSpec) -> list[tuple[str, str]]:
    """(caller, callee) edges some request type uses, in a stable order."""
    seen: dict[tuple[str, str], None] = {}
    for rt in app.requests:
        for call in rt.calls:
            seen.setdefault((call.caller, call.callee), None)
    return list(seen)


def callers_of(app: AppSpec, callee: str) -> list[str]:
    return sorted({caller for caller, c in request_path_callees(app) if c == callee})


def component_nodes(backend: "Backend", namespace: str, label_key: str = "io.kompose.service") -> dict[str, list[str]]:
    """component -> nodes its live pods run on."""
    out: dict[str, list[str]] = {}
    for pod in backend.api.list("Pod", namespace):
        if pod["metadata"].get("deletionTimestamp"):
            continue
        name = (pod["metadata"].get("labels") or {}).get(label_key)
        node = pod["spec"].get("nodeName")
        if name and node:
            out.setdefault(name, []).append(node)
    return {k: sorted(v) for k, v in out.items()}


def dep_address(app: AppSpec, caller: str, callee: str) -> tuple[str, int]:
    comp = app.component(caller)
    dep = next((d for d in comp.dependencies if d.service == callee), None)
    if dep is not None:
        return f"{dep.service}:{dep.port}", dep.port
    target = app.component(callee)
    port = target.service_ports[0][1]
    return f"{callee}:{port}", port


def caller_routes_check(backend: "ModelBackend", app: AppSpec, callee: str, callers: list[str], name: str = "callers_reach_service") -> Check:
    """Every live pod of each caller reaches ``callee`` the way the caller dials it."""
    model = backend.model
    bad = []
    checked = 0
    for pod in backend.api.list("Pod", app.namespace):
        comp = (pod["metadata"].get("labels") or {}).get(app.label_key)
        if comp not in callers or pod["metadata"].get("deletionTimestamp") or model.runtime(pod["metadata"]["uid"]) is None:
            continue
        addr, port = dep_address(app, comp, callee)
        route = model.route(app.namespace, addr, port, client=pod["metadata"]["uid"])
        checked += 1
        if route.ok < 0.999:
            bad.append(f"{pod['metadata']['name']} -> {addr}: {route.error}")
    if not checked:
        return Check(name, False, f"no running pod of {', '.join(callers)} to check {callee} from")
    return Check(name, not bad, "; ".join(bad[:3]) if bad else f"{', '.join(callers)} reach {callee}")
