"""Shared pieces of the application-configuration scenarios on hotel-reservation.

The scenarios differ in their cause; how a broken service shows up (crash
loop, refused database sessions, 5xx) and what "fixed" means for a Deployment
are the same, so the checks live here once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sre_env.rewards.base import Check
from sre_env.apps.base import AppSpec
from sre_env.sim.network.routing import resolve_route

from .pods_common import live_pods
from sre_env.sim.runtime.podenv import pod_env

if TYPE_CHECKING:
    from sre_env.sim.backend import SimBackend

__all__ = ["COLLECTION", "DB_CLIENTS", "DB_NAME", "address_check", "callers_fail", "callers_of", "live_pods", "misrouted_pods", "pods_serving"]

#: hotel-reservation services whose MongoDB runs with --auth, and what they read per request
DB_CLIENTS = ("rate", "profile", "reservation")
DB_NAME = {"rate": "rate-db", "profile": "profile-db", "reservation": "reservation-db"}
COLLECTION = {"rate": "inventory", "profile": "hotels", "reservation": "reservation"}


def pods_serving(backend: "SimBackend", namespace: str, service: str, name: str = "serving") -> Check:
    """Every pod of ``service`` runs a process that serves (no crash loop, no waiting container)."""
    world = backend.world
    pods = live_pods(backend, namespace, service)
    if not pods:
        return Check(name, False, f"no pod of {service} exists")
    bad = []
    now = world.clock.now
    for pod in pods:
        rt = world.runtimes.get(pod["metadata"]["uid"])
        if rt is None or not all(c.serving(now) for c in rt.containers.values()):
            bad.append(pod["metadata"]["name"])
    return Check(name, not bad, f"not serving: {', '.join(bad)}" if bad else f"every {service} pod serves")


def misrouted_pods(
    backend: "SimBackend", app: AppSpec, selector: str, container: str, var: str, dependency: str, port: int, *, exact_port: bool = True, unset: str | None = ""
) -> tuple[int, list[str]]:
    """The live pods ``selector`` picks, and ``<pod>: VAR='value'`` for each whose ``var`` does not reach ``dependency``.

    Reads the environment the running processes got, resolved the way they dial
    it; with ``exact_port`` the route must also end on ``port``. ``unset`` is the
    value reported for a pod without the variable.
    """
    world = backend.world
    pods = [p for p in backend.api.list("Pod", app.namespace, selector) if not p["metadata"].get("deletionTimestamp")]
    bad = []
    for pod in pods:
        value = pod_env(world, pod["metadata"]["uid"], container).get(var, unset)
        route = resolve_route(world, app.namespace, value, port) if value else None
        if route is None or route.ok <= 0 or route.target.split(":")[0].split(".")[0] != dependency or (exact_port and not route.target.endswith(f":{port}")):
            bad.append(f"{pod['metadata']['name']}: {var}={value!r}")
    return len(pods), bad


def address_check(backend: "SimBackend", app: AppSpec, selector: str, service: str, container: str, var: str, dependency: str, port: int) -> Check:
    """``address_correct``: every running pod of ``service`` (``selector``) dials ``dependency:port`` through ``var``."""
    n, bad = misrouted_pods(backend, app, selector, container, var, dependency, port)
    detail = "; ".join(bad) if bad else (f"every {service} pod dials {dependency}:{port}" if n else f"no pod of {service}")
    return Check("address_correct", bool(n) and not bad, detail)


def callers_fail(callers: "tuple[str, ...] | list[str]") -> str:
    """``a fails on it.`` / ``a, b fail on it.``: what a broken dependency does to its callers, for ground truths."""
    return f"{', '.join(callers)} {'fails' if len(callers) == 1 else 'fail'} on it."


def callers_of(app: AppSpec, service: str) -> list[str]:
    """The components that depend on ``service`` (its clients in the app's manifest), sorted."""
    return sorted(c.name for c in app.components if any(d.service == service for d in c.dependencies))
