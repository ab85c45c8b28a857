"""TargetPortMisconfig: a Service's targetPort points at a port nobody listens on.

Endpoints still list the (healthy, ready) pods, so ``get pods`` looks fine;
callers get "connection refused". Restarting the backing pods or editing the
container's declared port changes nothing — the process listens where its
binary says. The fix is the Service's targetPort.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from sre_env.apps.hotel_reservation import HOTEL_RESERVATION
from sre_env.errors import ApiError
from sre_env.faults.service import ServiceTargetPort
from sre_env.rewards.base import Check, Mechanism
from sre_env.sim.model import ModelBackend

from .app_common import callers_of
from .base import RootCause, Scenario
from .briefs import impact, user_report

if TYPE_CHECKING:
    from sre_env.backend import Backend

__all__ = ["TargetPortMisconfig"]

#: hotel-reservation's targets: Services on a request path (the order is part of the seeded variant)
_SERVICES = ("frontend", "search", "geo", "rate", "profile", "reservation", "recommendation", "mongodb-profile", "mongodb-rate", "mongodb-reservation")


class TargetPortMisconfig(Scenario):
    family = "TargetPortMisconfig"
    app = HOTEL_RESERVATION
    #: Services whose targetPort the variant may break; ``for_app(app, targets=...)`` sets another app's
    targets: ClassVar[tuple[str, ...]] = _SERVICES
    layer = "kubernetes"
    difficulty = "medium"
    summary = "Requests through one hotel-reservation service fail although all pods are running."
    description = (
        "Users of the hotel-reservation site get errors on some pages although every pod is Running and "
        "Ready and nothing is crash-looping. An infrastructure change was applied to the cluster earlier "
        "today; the application teams say they have not deployed."
    )
    mechanism = Mechanism(
        "service_target_port",
        "kubernetes",
        "a Service's targetPort points where no process listens",
        (
            r"\btarget[ _-]?ports?\b",
            r"\b(?:service|svc) port (?:mismatch|misconfig\w*|is wrong)\b",
            r"\bports? (?:mismatch\w*|misconfig\w*)\b",
            r"\b(?:wrong|incorrect|bad|mismatched|misconfigured) (?:service |target |container )?port\b",
            r"\bports? (?:do(?:es)? not|don't|doesn't) match\b",
            r"\b(?:service|svc) (?:points?|routes?|forwards?|sends?) (?:traffic )?to (?:the |a )?(?:wrong|incorrect|unused) port\b",
            r"\bnothing (?:is )?listening on (?:port )?\d+",
            r"\bno (?:process|container|pod) (?:is )?listening on\b",
        ),
        detail_keys=("targetPort", "expected_targetPort"),
    )

    def draw_variant(self, backend: "Backend", rng: np.random.Generator) -> dict[str, Any]:
        service = str(rng.choice(self.targets))
        comp = self.app.component(service)
        _, port, target, _ = comp.service_ports[0]
        choices = sorted({port + 1, port + 10, 8080, 9090, 80, target + 100} - {target})
        wrong = int(rng.choice(choices))
        return {"service": service, "port": int(port), "target": int(target), "wrong": wrong}

    def inject(self, backend: "Backend") -> None:
        v = self.variant
        ServiceTargetPort(self.namespace, v["service"], v["port"], v["wrong"], v["target"]).inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        callers = callers_of(self.app, v["service"])
        return RootCause(
            component=f"service/{v['service']}",
            namespace=self.namespace,
            layer="kubernetes",
            mechanism="service targetPort misconfigured",
            summary=f"service/{v['service']} sends port {v['port']} to targetPort {v['wrong']}, but the pods listen on {v['target']}; connections are refused. " + impact(self.app, v["service"]),
            details={"service": v["service"], "port": v["port"], "targetPort": v["wrong"], "expected_targetPort": v["target"]},
            affected=tuple([f"service/{v['service']}"] + [f"deployment/{c}" for c in callers]),
        )

    def brief(self) -> str:
        # a database behind a cache only fails the requests that miss
        return user_report(self.app, self.variant["service"], intermittent=self.app.component(self.variant["service"]).role == "database")

    def reference_solution(self) -> list[str]:
        v = self.variant
        ns = self.namespace
        return [
            f"kubectl get endpoints {v['service']} -n {ns}",
            f"kubectl describe svc {v['service']} -n {ns}",
            f"kubectl patch service {v['service']} -n {ns} --type=json -p '[{{\"op\": \"replace\", \"path\": \"/spec/ports/0/targetPort\", \"value\": {v['target']}}}]'",
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        ns = self.namespace
        comp = self.app.component(v["service"])
        return {
            "rollout_restart": [f"kubectl rollout restart deployment/{v['service']} -n {ns}"],
            "delete_pods": [f"kubectl delete pod -n {ns} -l {self.app.label_key}={v['service']}"],
            "change_container_port": [
                f"kubectl patch deployment {v['service']} -n {ns} -p '{{\"spec\":{{\"template\":{{\"spec\":{{\"containers\":[{{\"name\":\"{comp.container}\",\"ports\":[{{\"containerPort\":{v['wrong']},\"protocol\":\"TCP\"}}]}}]}}}}}}}}'"
            ],
            "delete_service": [f"kubectl delete service {v['service']} -n {ns}"],
        }

    def cause_checks(self, backend: "Backend") -> list[Check]:
        """The Service sends its port to where the process listens: on the simulator, where its
        connections really end up; over the API, its ready endpoints' port."""
        v = self.variant
        if not isinstance(backend, ModelBackend):
            return [self._endpoints_check(backend)]
        route = backend.model.route(self.namespace, f"{v['service']}:{v['port']}")
        return [Check("service_routes_to_listener", route.ok >= 0.999, f"{v['service']}:{v['port']} reaches a listening pod in {route.ok:.0%} of connections" + (f" ({route.error})" if route.error else ""))]

    def _endpoints_check(self, backend: "Backend") -> Check:
        """The Service's ready endpoints are all on the port the pods listen on."""
        v = self.variant
        try:
            ep = backend.api.get("Endpoints", v["service"], self.namespace)
        except ApiError:
            return Check("service_routes_to_listener", False, f"service/{v['service']} has no endpoints object")
        ready = [(a, p) for sub in ep.get("subsets") or () for a in sub.get("addresses") or () for p in sub.get("ports") or ()]
        good = [1 for _, p in ready if int(p.get("port", 0)) == v["target"]]
        ports = sorted({int(p.get("port", 0)) for _, p in ready})
        detail = f"{v['service']}:{v['port']} -> ready endpoints on port(s) {ports or 'none'} (the pods listen on {v['target']})"
        return Check("service_routes_to_listener", bool(good) and len(good) == len(ready), detail)
