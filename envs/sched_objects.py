"""Service and replica-count incidents: WrongServiceSelector, MissingService, ScalePodZero.

All three leave every remaining pod healthy: ``get pods`` shows nothing
crash-looping, and the failure is in how traffic finds pods (a selector that
matches nothing or the wrong pods, a Service that is gone) or in there being no
pods at all. Restarting pods changes nothing; the repair is the object.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import yaml

from sre_env.apps.base import AppSpec
from sre_env.apps.hotel_reservation import HOTEL_RESERVATION
from sre_env.errors import ApiError
from sre_env.faults.scheduling import (
    DeleteService,
    ScaleDeployment,
    ServiceSelector,
    manifest_of,
)
from sre_env.rewards.base import AllowedChange, Check, Mechanism
from sre_env.sim.model import ModelBackend

from .app_common import find
from .base import RootCause
from .sched_common import STATELESS, UnreachableService, gone, json_patch_cmd
from .sched_common import and_list as _and

if TYPE_CHECKING:
    from sre_env.backend import Backend

__all__ = ["MissingService", "ScalePodZero", "WrongServiceSelector"]

_DB_ON_PATH = ("mongodb-profile", "mongodb-rate", "mongodb-reservation")


def _route_check(backend: "Backend", app: AppSpec, service: str, port: int, name: str) -> Check:
    """``service:port`` reaches the component's listening pods: on the simulator, where its connections
    really end up; over the API, the Service exists with that port and its ready endpoints are the
    component's own pods on the port it listens on."""
    if not isinstance(backend, ModelBackend):
        return _endpoints_check(backend, app, service, port, name)
    route = backend.model.route(app.namespace, f"{service}:{port}")
    ok = route.ok >= 0.999 and all(uid for uid, _ in route.servers)
    return Check(name, ok, f"{service}:{port} reaches a listening pod in {route.ok:.0%} of connections" + (f" ({route.error})" if route.error else ""))


def _endpoints_check(backend: "Backend", app: AppSpec, service: str, port: int, name: str) -> Check:
    api = backend.api
    ns = app.namespace
    comp = app.component(service)
    try:
        svc = api.get("Service", service, ns)
    except ApiError:
        return Check(name, False, f"service/{service} does not exist")
    if not any(int(p.get("port", 0)) == port for p in svc["spec"].get("ports") or ()):
        return Check(name, False, f"service/{service} has no port {port}")
    try:
        ep = api.get("Endpoints", service, ns)
    except ApiError:
        ep = {}
    label = app.label_key
    good, bad = 0, []
    for sub in ep.get("subsets") or ():
        ports = sorted({int(p.get("port", 0)) for p in sub.get("ports") or ()})
        for addr in sub.get("addresses") or ():
            ref = addr.get("targetRef") or {}
            try:
                pod = api.get("Pod", ref["name"], ns) if ref.get("kind") == "Pod" else None
            except ApiError:
                pod = None
            owner = ((pod or {}).get("metadata", {}).get("labels") or {}).get(label)
            if owner == service and comp.listen_port in ports:
                good += 1
            else:
                bad.append(f"{ref.get('name', addr.get('ip'))} ({label}={owner}, port(s) {ports})")
    if not good and not bad:
        return Check(name, False, f"{service}:{port} has no ready endpoints")
    detail = f"{service}:{port} -> " + ("; ".join(bad) if bad else f"{good} ready {service} pod(s) on port {comp.listen_port}")
    return Check(name, good > 0 and not bad, detail)


class WrongServiceSelector(UnreachableService):
    family = "WrongServiceSelector"
    #: the repair puts the Service's selector back as it was
    repaired_kind = None
    app = HOTEL_RESERVATION
    #: services whose selector may be broken (on a request path)
    targets: ClassVar[tuple[str, ...]] = STATELESS
    layer = "kubernetes"
    difficulty = "medium"
    summary = "Part of hotel-reservation fails although every pod is running."
    description = (
        "Since an infrastructure change this morning, one feature of the hotel-reservation site fails for "
        "everyone while every pod reports Running and Ready and nothing restarts. The application teams "
        "have not deployed today."
    )
    mechanism = Mechanism(
        "service_selector_wrong",
        "kubernetes",
        "a Service's selector matches no pods or the wrong pods",
        (
            r"\b(?:wrong|incorrect|bad|mismatched|misconfigured|broken|stale|typo(?:ed)? ?(?:in the )?) (?:label |service |pod )?selectors?\b",
            r"\bselectors?\b[^.;\n]{0,60}?\b(?:mismatch\w*|wrong|incorrect|misconfigured|typo|does(?:n't| not) match|matches (?:no|nothing|the wrong)|selects? (?:no|the wrong))\b",
            r"\blabel (?:selector )?mismatch\b",
            r"\bselects? (?:no|the wrong|another (?:service'?s?|component'?s?)) pods?\b",
            r"\bmatch(?:es)? no pods?\b",
        ),
        detail_keys=("selector", "expected_selector"),
        compatible=("selector_mismatch",),
    )

    def draw_variant(self, backend: "Backend", rng: np.random.Generator) -> dict[str, Any]:
        service = str(rng.choice(self.targets))
        comp = self.app.component(service)
        # another service's pods are a visible mistake only if they listen elsewhere
        others = [s for s in self.targets if s != service and self.app.component(s).listen_port != comp.listen_port]
        mode = str(rng.choice(("none", "other"))) if others else "none"
        if mode == "none":
            wrong = str(rng.choice((f"{service}-v2", f"{service}-canary", f"{service}-svc")))
        else:
            wrong = str(rng.choice(others))
        return {"service": service, "port": comp.service_ports[0][1], "wrong": wrong, "mode": mode}

    def inject(self, backend: "Backend") -> None:
        v = self.variant
        key = self.app.label_key
        ServiceSelector(self.namespace, v["service"], ((key, v["wrong"]),), ((key, v["service"]),)).inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        key = self.app.label_key
        what = "matches no pods at all" if v["mode"] == "none" else f"selects the {v['wrong']} pods, which do not listen on port {v['port']}"
        return self.service_cause(
            "wrong service selector",
            f"service/{v['service']} has a broken selector: {key}={v['wrong']} instead of {key}={v['service']}; "
            f"it {what}. The {v['service']} pods themselves are healthy; {_and(self.callers())} cannot reach {v['service']}. ",
            {"selector": f"{key}={v['wrong']}", "expected_selector": f"{key}={v['service']}", "wrong_label": v["wrong"]},
            kind="service",
            # the pods it selects by mistake receive traffic they cannot serve
            affected=self.with_callers(self.callers(), "service") + ((f"deployment/{v['wrong']}",) if v["mode"] == "other" else ()),
        )

    def reference_solution(self) -> list[str]:
        v = self.variant
        ns = self.namespace
        return [
            f"kubectl get endpoints {v['service']} -n {ns}",
            f"kubectl get svc {v['service']} -n {ns} -o wide",
            f"kubectl get pods -n {ns} --show-labels",
            json_patch_cmd("service", v["service"], ns, [{"op": "replace", "path": "/spec/selector", "value": {self.app.label_key: v["service"]}}]),
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        ns = self.namespace
        return self.service_wrong_fixes(delete_service=[f"kubectl delete service {v['service']} -n {ns}"])

    def non_durable_fixes(self) -> dict[str, list[str]]:
        """Relabelling the running pods to match the bad selector serves until they are replaced."""
        v = self.variant
        if v["mode"] != "none":
            return {}
        key = self.app.label_key
        return {"relabel_pods": [f"kubectl label pods -n {self.namespace} -l {key}={v['service']} {key}={v['wrong']} --overwrite"]}

    def cause_checks(self, backend: "Backend") -> list[Check]:
        v = self.variant
        return [_route_check(backend, self.app, v["service"], v["port"], "service_selects_its_pods")]


class MissingService(UnreachableService):
    family = "MissingService"
    app = HOTEL_RESERVATION
    targets: ClassVar[tuple[str, ...]] = STATELESS + _DB_ON_PATH
    layer = "kubernetes"
    difficulty = "easy"
    summary = "Part of hotel-reservation fails right after a cluster clean-up."
    description = (
        "After an automated clean-up job ran against the cluster, one feature of the hotel-reservation "
        "site fails for every user. All pods are Running and Ready, and nothing was deployed."
    )
    mechanism = Mechanism(
        "service_deleted",
        "kubernetes",
        "a Service was deleted",
        (
            r"\b(?:service|svc)\b[^.;\n]{0,50}?\b(?:was |is |has been |got )?(?:deleted|removed|missing|gone|does(?:n't| not) exist|not found|absent)\b",
            r"\b(?:deleted|removed|missing|absent|no) (?:the |a |its )?(?:kubernetes )?(?:service|svc)(?: object)?\b",
            r"\bno such host\b|\bnxdomain\b",
            r"\b(?:service|svc)/[\w-]+ (?:not found|is gone)\b",
        ),
        detail_keys=("service", "port"),
    )

    def draw_variant(self, backend: "Backend", rng: np.random.Generator) -> dict[str, Any]:
        service = str(rng.choice(self.targets))
        svc = backend.api.get("Service", service, self.namespace)
        return {"service": service, "port": int(svc["spec"]["ports"][0]["port"]), "manifest": yaml.safe_dump(manifest_of(svc), sort_keys=True)}

    def inject(self, backend: "Backend") -> None:
        v = self.variant
        DeleteService(self.namespace, v["service"], yaml.safe_load(v["manifest"])).inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        return self.unreachable_cause(
            "service deleted",
            f"A clean-up job deleted the Kubernetes Service that fronts the {v['service']} pods (service/{v['service']}, port {v['port']}); "
            f"the pods are healthy but the name {v['service']} no longer resolves, so {_and(self.callers()) if self.callers() else 'clients'} cannot reach it. ",
            {"service": v["service"], "port": v["port"]},
            kind="service",
        )

    def reference_solution(self) -> list[str]:
        v = self.variant
        ns = self.namespace
        return [
            f"kubectl get svc -n {ns}",
            f"kubectl get endpoints -n {ns}",
            f"kubectl apply -n {ns} -f - <<'EOF'\n{v['manifest']}EOF",
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        ns = self.namespace
        callers = self.callers()
        fixes = self.blind_fixes(v["service"])
        if callers:
            fixes["restart_callers"] = [f"kubectl rollout restart deployment/{c} -n {ns}" for c in callers]
        wrong = yaml.safe_load(v["manifest"])
        wrong["spec"]["ports"][0]["targetPort"] = int(v["port"]) + 1
        fixes["recreate_wrong_port"] = [f"kubectl apply -n {ns} -f - <<'EOF'\n{yaml.safe_dump(wrong, sort_keys=True)}EOF"]
        return fixes

    def cause_checks(self, backend: "Backend") -> list[Check]:
        v = self.variant
        return [_route_check(backend, self.app, v["service"], v["port"], "service_exists_and_routes")]

    def allowed_changes(self) -> list[AllowedChange]:
        # a recreated Service is a new object with a new cluster IP
        return [AllowedChange("Service", self.namespace, self.variant["service"], "created")]


class ScalePodZero(UnreachableService):
    family = "ScalePodZero"
    #: the repair scales the Deployment back to its baseline
    repaired_kind = None
    app = HOTEL_RESERVATION
    targets: ClassVar[tuple[str, ...]] = STATELESS + _DB_ON_PATH
    layer = "kubernetes"
    difficulty = "easy"
    summary = "Part of hotel-reservation stopped answering after a capacity change."
    description = (
        "Shortly after someone ran a capacity clean-up on the cluster, one feature of the hotel-reservation "
        "site fails for every user. No pod is crash-looping and no alert fired about nodes."
    )
    mechanism = Mechanism(
        "scaled_to_zero",
        "kubernetes",
        "a workload was scaled to zero replicas",
        (
            r"\bscaled? (?:down )?to (?:zero|0)(?: replicas?)?\b",
            r"\b(?:zero|0|no) (?:running |ready )?replicas\b",
            r"\breplicas:? ?(?:=|of|set to|is)? ?0\b",
        ),
        detail_keys=("deployment", "expected_replicas"),
    )

    def draw_variant(self, backend: "Backend", rng: np.random.Generator) -> dict[str, Any]:
        service = str(rng.choice(self.targets))
        dep = backend.api.get("Deployment", service, self.namespace)
        return {"service": service, "replicas": int(dep["spec"].get("replicas", 1))}

    def inject(self, backend: "Backend") -> None:
        v = self.variant
        ScaleDeployment(self.namespace, v["service"], 0, v["replicas"]).inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        return self.unreachable_cause(
            "deployment scaled to zero replicas",
            f"deployment/{v['service']} was scaled to 0 replicas (baseline {v['replicas']}); with no pods behind service/{v['service']}, "
            f"{_and(self.callers()) if self.callers() else 'clients'} cannot reach it. ",
            {"deployment": v["service"], "expected_replicas": v["replicas"], "replicas": 0},
        )

    def reference_solution(self) -> list[str]:
        v = self.variant
        ns = self.namespace
        return [
            f"kubectl get deploy -n {ns}",
            f"kubectl scale deployment/{v['service']} -n {ns} --replicas={v['replicas']}",
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        ns = self.namespace
        callers = self.callers()
        return {
            "rollout_restart": [f"kubectl rollout restart deployment/{v['service']} -n {ns}"],
            "restart_callers": [f"kubectl rollout restart deployment/{c} -n {ns}" for c in callers or [self.app.entrypoint]],
            "delete_deployment": [f"kubectl delete deployment {v['service']} -n {ns}"],
        }

    def cause_checks(self, backend: "Backend") -> list[Check]:
        v = self.variant
        dep = find(backend, "Deployment", v["service"], self.namespace)
        if dep is None:
            return [gone("Deployment", v["service"])]
        have = int(dep["spec"].get("replicas", 0))
        return [Check("replicas_restored", have >= v["replicas"], f"deployment/{v['service']} wants {have} replicas (baseline {v['replicas']})")]
