"""MissingEnvVar: a config push removes a required env var from one service.

The new ReplicaSet's pods exit at start-up (the Go binary's fatal line names
the variable) and crash-loop; because the app defines no readiness probes the
rollout had already replaced the old pod. A restart changes nothing; the fix is
restoring the variable (or rolling back to the previous revision).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from sre_env.faults.workload import RemoveEnvVar
from sre_env.rewards.base import Check
from sre_env.sim.apps.hotel_reservation import HOTEL_RESERVATION
from sre_env.sim.network import resolve_route

from .base import RootCause, Scenario
from .briefs import impact, user_report

if TYPE_CHECKING:
    from sre_env.sim.backend import SimBackend

__all__ = ["MissingEnvVar"]

_SERVICES = ("frontend", "search", "geo", "rate", "profile", "recommendation", "reservation")


class MissingEnvVar(Scenario):
    family = "MissingEnvVar"
    app = HOTEL_RESERVATION
    layer = "application"
    difficulty = "easy"
    summary = "Part of hotel-reservation stopped working after a configuration change."
    description = (
        "Right after a routine configuration push, one feature of the hotel-reservation site fails for "
        "every user with HTTP 500 or timeouts; the rest of the site works. The push went out through the "
        "normal pipeline and nobody has touched the cluster since."
    )

    def draw_variant(self, backend: "SimBackend", rng: np.random.Generator) -> dict[str, Any]:
        service = str(rng.choice(_SERVICES))
        comp = self.app.component(service)
        candidates = [d.address_env for d in comp.dependencies if d.address_env and d.protocol in ("mongodb", "consul") and d.address_env in comp.required_env]
        var = str(rng.choice(sorted(candidates)))
        value = dict(comp.env)[var]
        return {"service": service, "container": comp.container, "var": var, "value": value}

    def inject(self, backend: "SimBackend") -> None:
        v = self.variant
        RemoveEnvVar(self.namespace, v["service"], v["container"], v["var"], v["value"]).inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        return RootCause(
            component=f"deployment/{v['service']}",
            namespace=self.namespace,
            layer="application",
            mechanism="missing required environment variable",
            summary=f"The env var {v['var']} (= {v['value']}) was removed from deployment/{v['service']}; its process exits at start-up and crash-loops. " + impact(self.app, v["service"]),
            details={"variable": v["var"], "expected_value": v["value"], "container": v["container"]},
            affected=tuple(dict.fromkeys((f"deployment/{v['service']}", f"deployment/{self.app.entrypoint}"))),
        )

    def brief(self) -> str:
        return user_report(self.app, self.variant["service"], intermittent=False)

    def reference_solution(self) -> list[str]:
        v = self.variant
        ns = self.namespace
        return [
            f"kubectl get pods -n {ns}",
            f"kubectl logs deployment/{v['service']} -n {ns} --previous --tail=20",
            f"kubectl set env deployment/{v['service']} -n {ns} {v['var']}={v['value']}",
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        ns = self.namespace
        port = v["value"].rsplit(":", 1)[-1]
        return {
            "rollout_restart": [f"kubectl rollout restart deployment/{v['service']} -n {ns}"],
            "delete_pods": [f"kubectl delete pod -n {ns} -l io.kompose.service={v['service']}"],
            "wrong_value": [f"kubectl set env deployment/{v['service']} -n {ns} {v['var']}=localhost:{port}"],
            "scale_to_zero": [f"kubectl scale deployment/{v['service']} -n {ns} --replicas=0"],
        }

    def cause_checks(self, backend: "SimBackend") -> list[Check]:
        """The running pods see the variable with a value that reaches its dependency.

        This is the live system; whether the fix is persisted in the Deployment is the
        durability gate's question (it restarts everything and looks again).
        """
        v = self.variant
        world = backend.world
        dep_spec = next(d for d in self.app.component(v["service"]).dependencies if d.address_env == v["var"])
        pods = [p for p in backend.api.list("Pod", self.namespace, f"io.kompose.service={v['service']}") if not p["metadata"].get("deletionTimestamp")]
        if not pods:
            return [Check("variable_restored", False, f"no pod of {v['service']} is running")]
        bad = []
        for pod in pods:
            value = world.pod_env(pod["metadata"]["uid"], v["container"]).get(v["var"])
            route = resolve_route(world, self.namespace, value or "", dep_spec.port) if value else None
            if not value or route is None or route.ok <= 0 or route.target.split(":")[0].split(".")[0] != dep_spec.service:
                bad.append(f"{pod['metadata']['name']}: {v['var']}={value!r}")
        detail = "; ".join(bad) if bad else f"every {v['service']} pod has {v['var']} reaching {dep_spec.service}:{dep_spec.port}"
        return [Check("variable_restored", not bad, detail)]
