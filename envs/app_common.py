"""Shared pieces of the application-configuration scenarios on hotel-reservation.

The scenarios differ in their cause; how a broken service shows up (crash
loop, refused database sessions, 5xx) and what "fixed" means for a Deployment
are the same, so the checks live here once.
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

from sre_env.apps.base import AppSpec
from sre_env.errors import ApiError
from sre_env.rewards.base import Check

from .pods_common import live_pods

if TYPE_CHECKING:
    from sre_env.backend import Backend, ClusterAPI
    from sre_env.sim.model import ModelBackend

__all__ = ["COLLECTION", "DB_CLIENTS", "DB_NAME", "address_check", "api_pod_env", "callers_fail", "callers_of", "find", "live_pods", "misrouted_pods", "pods_serving"]

#: hotel-reservation services whose MongoDB runs with --auth, and what they read per request
DB_CLIENTS = ("rate", "profile", "reservation")
DB_NAME = {"rate": "rate-db", "profile": "profile-db", "reservation": "reservation-db"}
COLLECTION = {"rate": "inventory", "profile": "hotels", "reservation": "reservation"}


def find(backend: "Backend", kind: str, name: str, namespace: str | None = None) -> dict[str, Any] | None:
    """The object, or None when it does not exist (the agent deleted it: a check must fail, not raise)."""
    try:
        return backend.api.get(kind, name, namespace)
    except ApiError as exc:
        if exc.code == 404:
            return None
        raise


def pods_serving(backend: "ModelBackend", namespace: str, service: str, name: str = "serving") -> Check:
    """Every pod of ``service`` runs a process that serves (no crash loop, no waiting container)."""
    pods = live_pods(backend, namespace, service)
    if not pods:
        return Check(name, False, f"no pod of {service} exists")
    bad = []
    now = backend.now
    for pod in pods:
        rt = backend.model.runtime(pod["metadata"]["uid"])
        if rt is None or not all(c.serving(now) for c in rt.containers.values()):
            bad.append(pod["metadata"]["name"])
    return Check(name, not bad, f"not serving: {', '.join(bad)}" if bad else f"every {service} pod serves")


def misrouted_pods(
    backend: "ModelBackend", app: AppSpec, selector: str, container: str, var: str, dependency: str, port: int, *, exact_port: bool = True, unset: str | None = ""
) -> tuple[int, list[str]]:
    """The live pods ``selector`` picks, and ``<pod>: VAR='value'`` for each whose ``var`` does not reach ``dependency``.

    Reads the environment the running processes got, resolved the way they dial
    it; with ``exact_port`` the route must also end on ``port``. ``unset`` is the
    value reported for a pod without the variable.
    """
    model = backend.model
    pods = [p for p in backend.api.list("Pod", app.namespace, selector) if not p["metadata"].get("deletionTimestamp")]
    bad = []
    for pod in pods:
        value = model.pod_env(pod["metadata"]["uid"], container).get(var, unset)
        route = model.route(app.namespace, value, port) if value else None
        if route is None or route.ok <= 0 or route.target.split(":")[0].split(".")[0] != dependency or (exact_port and not route.target.endswith(f":{port}")):
            bad.append(f"{pod['metadata']['name']}: {var}={value!r}")
    return len(pods), bad


def api_pod_env(api: "ClusterAPI", pod: dict[str, Any], container: str) -> dict[str, str]:
    """The environment a container was started with, as the API describes it (env, envFrom, key refs).

    What a live cluster shows of a process's environment; on the simulator
    :meth:`sre_env.sim.model.SimModel.pod_env` gives the process's own copy.
    """
    ns = pod["metadata"]["namespace"]
    spec = next((c for c in pod["spec"].get("containers") or () if c["name"] == container), None)
    if spec is None:
        return {}

    def source(kind: str, name: str) -> dict[str, str]:
        try:
            obj = api.get(kind, name, ns)
        except ApiError:
            return {}
        if kind == "Secret":
            return {k: base64.b64decode(v).decode("utf-8", "replace") for k, v in (obj.get("data") or {}).items()}
        return dict(obj.get("data") or {})

    env: dict[str, str] = {}
    for ref in spec.get("envFrom") or ():
        prefix = ref.get("prefix") or ""
        if ref.get("configMapRef"):
            env.update({prefix + k: v for k, v in source("ConfigMap", ref["configMapRef"]["name"]).items()})
        if ref.get("secretRef"):
            env.update({prefix + k: v for k, v in source("Secret", ref["secretRef"]["name"]).items()})
    for item in spec.get("env") or ():
        if "value" in item:
            env[item["name"]] = str(item["value"])
            continue
        vf = item.get("valueFrom") or {}
        for kind, key in (("ConfigMap", "configMapKeyRef"), ("Secret", "secretKeyRef")):
            ref = vf.get(key)
            if ref:
                value = source(kind, ref["name"]).get(ref["key"])
                if value is not None:
                    env[item["name"]] = value
    return env


def address_check(backend: "ModelBackend", app: AppSpec, selector: str, service: str, container: str, var: str, dependency: str, port: int) -> Check:
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
