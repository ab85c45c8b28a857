"""Shared pieces of the scheduling/resource scenarios: targets, checks, command builders."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from sre_env.rewards.base import Check
from sre_env.sim.apps.base import AppSpec

if TYPE_CHECKING:
    from sre_env.sim.backend import SimBackend

__all__ = ["STATELESS", "and_list", "callers_of", "common_wrong_fixes", "find", "gone", "json_patch_cmd", "label_of", "pods_running_check"]

#: Go services on a request path (``user`` serves 0.5 % of requests: too little to notice)
STATELESS = ("frontend", "search", "geo", "rate", "profile", "recommendation", "reservation")


def find(backend: "SimBackend", kind: str, name: str, namespace: str | None = None) -> dict[str, Any] | None:
    """The object, or None when the agent deleted it (a check must fail, not raise)."""
    return next((o for o in backend.api.list(kind, namespace) if o["metadata"]["name"] == name), None)


def gone(kind: str, name: str) -> Check:
    return Check(f"{kind.lower()}_exists", False, f"{kind.lower()}/{name} was deleted")


def label_of(app: AppSpec, name: str) -> str:
    """``-l`` selector for a component's pods (``io.kompose.service=geo``, ``service=text-service``)."""
    return f"{app.label_key}={name}"


def callers_of(app: AppSpec, service: str) -> list[str]:
    return sorted(c.name for c in app.components if any(d.service == service for d in c.dependencies))


def and_list(names: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1] if names else "its callers"


def json_patch_cmd(kind: str, name: str, namespace: str, ops: list[dict[str, Any]]) -> str:
    return f"kubectl patch {kind} {name} -n {namespace} --type=json -p '{json.dumps(ops, separators=(',', ':'))}'"


def pods_running_check(backend: "SimBackend", app: AppSpec, component: str, name: str = "pods_running") -> Check:
    """Every pod of ``component`` is bound, running and ready (the live system, not the spec)."""
    pods = [p for p in backend.api.list("Pod", app.namespace, label_of(app, component)) if not p["metadata"].get("deletionTimestamp")]
    if not pods:
        return Check(name, False, f"no pod of {component} exists")
    bad = []
    for p in pods:
        conds = {c["type"]: c for c in p.get("status", {}).get("conditions") or ()}
        if not p["spec"].get("nodeName"):
            bad.append(f"{p['metadata']['name']} unscheduled")
        elif conds.get("Ready", {}).get("status") != "True":
            bad.append(f"{p['metadata']['name']} not ready")
    return Check(name, not bad, "; ".join(bad) if bad else f"every {component} pod is scheduled and ready")


def common_wrong_fixes(app: AppSpec, deployment: str) -> dict[str, list[str]]:
    """Blind restarts and removing the failing component: never a repair for these faults."""
    namespace = app.namespace
    return {
        "rollout_restart": [f"kubectl rollout restart deployment/{deployment} -n {namespace}"],
        "delete_pods": [f"kubectl delete pod -n {namespace} -l {label_of(app, deployment)}"],
        "scale_to_zero": [f"kubectl scale deployment/{deployment} -n {namespace} --replicas=0"],
    }
