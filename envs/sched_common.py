"""Shared pieces of the scheduling/resource scenarios: targets, checks, command builders."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Mapping

from sre_env.apps.base import AppSpec
from sre_env.rewards.base import Check

from .app_common import callers_of
from .base import RootCause
from .service_fault import ServiceFault

if TYPE_CHECKING:
    from sre_env.backend import Backend

__all__ = ["SOCIAL_SERVICES", "SOCIAL_STORES", "STATELESS", "UnreachableService", "and_list", "callers_of", "gone", "json_patch_cmd", "label_of", "pods_running_check"]

#: Go services on a request path (``user`` serves 0.5 % of requests: too little to notice)
STATELESS = ("frontend", "search", "geo", "rate", "profile", "recommendation", "reservation")

#: social-network services on a request path of the wrk2 mix (media-frontend and jaeger are not)
SOCIAL_SERVICES = (
    "nginx-thrift",
    "compose-post-service",
    "home-timeline-service",
    "user-timeline-service",
    "post-storage-service",
    "social-graph-service",
    "text-service",
    "user-service",
    "url-shorten-service",
    "user-mention-service",
    "unique-id-service",
    "media-service",
)
#: social-network stores on a request path
SOCIAL_STORES = ("home-timeline-redis", "post-storage-mongodb")


def gone(kind: str, name: str) -> Check:
    return Check(f"{kind.lower()}_exists", False, f"{kind.lower()}/{name} was deleted")


def label_of(app: AppSpec, name: str) -> str:
    """``-l`` selector for a component's pods (``io.kompose.service=geo``, ``service=text-service``)."""
    return f"{app.label_key}={name}"


def and_list(names: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1] if names else "its callers"


def json_patch_cmd(kind: str, name: str, namespace: str, ops: list[dict[str, Any]]) -> str:
    return f"kubectl patch {kind} {name} -n {namespace} --type=json -p '{json.dumps(ops, separators=(',', ':'))}'"


def pods_running_check(backend: "Backend", app: AppSpec, component: str, name: str = "pods_running") -> Check:
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


class UnreachableService(ServiceFault):
    """A fault that takes ``variant["service"]`` away from its callers: no pod runs, or nothing routes to one.

    The ground truth lists the service and its callers, and says who cannot reach
    it; engineers start from the service's pods and the events on them.
    """

    def callers(self) -> list[str]:
        return callers_of(self.app, self.variant["service"])

    def unreachable_cause(self, mechanism: str, summary: str, details: Mapping[str, Any], *, kind: str = "deployment") -> RootCause:
        """``summary`` (which says who cannot reach the service), what users lose; the service and its callers affected."""
        return self.service_cause(mechanism, summary, details, affected=self.with_callers(self.callers(), kind), kind=kind)

    def inspect_pods(self) -> list[str]:
        """Where an engineer starts: the service's pods, and the events that say why they do not run."""
        ns, selector = self.namespace, label_of(self.app, self.variant["service"])
        return [f"kubectl get pods -n {ns} -l {selector}", f"kubectl describe pod -n {ns} -l {selector}"]
