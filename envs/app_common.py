"""Shared pieces of the application-configuration scenarios on hotel-reservation.

The scenarios differ in their cause; how a broken service shows up (crash
loop, refused database sessions, 5xx) and what "fixed" means for a Deployment
are the same, so the checks live here once.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sre_env.rewards.base import Check

from sre_env.sim.apps.base import AppSpec

if TYPE_CHECKING:
    from sre_env.sim.backend import SimBackend

__all__ = ["COLLECTION", "DB_CLIENTS", "DB_NAME", "callers_of", "live_pods", "pods_serving"]

#: hotel-reservation services whose MongoDB runs with --auth, and what they read per request
DB_CLIENTS = ("rate", "profile", "reservation")
DB_NAME = {"rate": "rate-db", "profile": "profile-db", "reservation": "reservation-db"}
COLLECTION = {"rate": "inventory", "profile": "hotels", "reservation": "reservation"}


def live_pods(backend: "SimBackend", namespace: str, service: str) -> list[dict[str, Any]]:
    return [p for p in backend.api.list("Pod", namespace, f"io.kompose.service={service}") if not p["metadata"].get("deletionTimestamp")]


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


def callers_of(app: AppSpec, service: str) -> list[str]:
    return sorted(c.name for c in app.components if any(d.service == service for d in c.dependencies))
