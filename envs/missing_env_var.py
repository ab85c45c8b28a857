"""MissingEnvVar: a config push removes a required env var from one service.

The new ReplicaSet's pods exit at start-up (the Go binary's fatal line names
the variable) and crash-loop; because the app defines no readiness probes the
rollout had already replaced the old pod. A restart changes nothing; the fix is
restoring the variable (or rolling back to the previous revision).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from sre_env.apps.hotel_reservation import HOTEL_RESERVATION
from sre_env.errors import ApiError
from sre_env.faults.workload import RemoveEnvVar
from sre_env.rewards.base import Check, Mechanism
from sre_env.sim.model import ModelBackend

from .app_common import api_pod_env, misrouted_pods
from .base import RootCause
from .blind import rollback_repairs
from .service_fault import ServiceFault

if TYPE_CHECKING:
    from sre_env.backend import Backend

__all__ = ["MissingEnvVar"]

_SERVICES = ("frontend", "search", "geo", "rate", "profile", "recommendation", "reservation")

#: words for "it is gone" and for an environment variable, in the mechanism's terms
_GONE = r"(?:missing|removed|deleted|dropped|unset|absent|not set|not defined|undefined|lost|gone|empty)"
_ENV = r"(?:env|environment)(?:[ _-]?var(?:iable)?s?)?"


class MissingEnvVar(ServiceFault):
    family = "MissingEnvVar"
    app = HOTEL_RESERVATION
    layer = "application"
    difficulty = "easy"
    #: the repair puts the variable back: the Deployment is as it was
    repaired_kind = None
    summary = "Part of hotel-reservation stopped working after a configuration change."
    description = (
        "Right after a routine configuration push, one feature of the hotel-reservation site fails for "
        "every user with HTTP 500 or timeouts; the rest of the site works. The push went out through the "
        "normal pipeline and nobody has touched the cluster since."
    )
    accepted_blind = rollback_repairs("the configuration push that removed the env var")
    mechanism = Mechanism(
        "missing_env_var",
        "application",
        "a required environment variable is missing",
        (
            rf"\b(?:missing|removed|deleted|dropped|unset|absent|undefined|lost) (?:a |an |the )?(?:required )?{_ENV}\b",
            rf"\b{_ENV}\b(?:\s+[\w./:-]+){{0,3}}\s+(?:is |was |were |got |has been |have been )?{_GONE}\b",
            rf"\b{{variable}}\b[^.;\n]{{0,40}}?\b{_GONE}\b",
            r"\b(?:missing|removed|deleted|dropped|unset|without|lacks?|lacking|no longer (?:has|sets?|defines?|contains?|includes?))\b[^.;\n]{0,40}?\b{variable}\b",
        ),
        detail_keys=("variable", "expected_value"),
    )

    def draw_variant(self, backend: "Backend", rng: np.random.Generator) -> dict[str, Any]:
        service = str(rng.choice(_SERVICES))
        comp = self.app.component(service)
        candidates = [d.address_env for d in comp.dependencies if d.address_env and d.protocol in ("mongodb", "consul") and d.address_env in comp.required_env]
        var = str(rng.choice(sorted(candidates)))
        value = dict(comp.env)[var]
        return {"service": service, "container": comp.container, "var": var, "value": value}

    def inject(self, backend: "Backend") -> None:
        v = self.variant
        RemoveEnvVar(self.namespace, v["service"], v["container"], v["var"], v["value"]).inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        return self.service_cause(
            "missing required environment variable",
            f"The env var {v['var']} (= {v['value']}) was removed from deployment/{v['service']}; its process exits at start-up and crash-loops. ",
            {"variable": v["var"], "expected_value": v["value"], "container": v["container"]},
        )

    def reference_solution(self) -> list[str]:
        v = self.variant
        ns = self.namespace
        return [
            f"kubectl get pods -n {ns}",
            f"kubectl logs deployment/{v['service']} -n {ns} --previous --tail=20",
            # -c: `set env` also writes init containers, which never had the variable
            f"kubectl set env deployment/{v['service']} -n {ns} -c {v['container']} {v['var']}={v['value']}",
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        ns = self.namespace
        port = v["value"].rsplit(":", 1)[-1]
        return self.service_wrong_fixes(wrong_value=[f"kubectl set env deployment/{v['service']} -n {ns} -c {v['container']} {v['var']}=localhost:{port}"])

    def cause_checks(self, backend: "Backend") -> list[Check]:
        """The running pods see the variable with a value that reaches its dependency.

        This is the live system; whether the fix is persisted in the Deployment is the
        durability gate's question (it restarts everything and looks again). On the
        simulator the value is resolved the way the process dials it; over the API it
        must name the dependency's Service and a port that Service serves.
        """
        v = self.variant
        dep = next(d for d in self.app.component(v["service"]).dependencies if d.address_env == v["var"])
        if isinstance(backend, ModelBackend):
            n, bad = misrouted_pods(backend, self.app, self.pod_selector(v["service"]), v["container"], v["var"], dep.service, dep.port, exact_port=False, unset=None)
        else:
            n, bad = self._misnamed_pods(backend, dep.service, dep.port)
        if not n:
            return [Check("variable_restored", False, f"no pod of {v['service']} is running")]
        detail = "; ".join(bad) if bad else f"every {v['service']} pod has {v['var']} reaching {dep.service}:{dep.port}"
        return [Check("variable_restored", not bad, detail)]

    def _misnamed_pods(self, backend: "Backend", service: str, port: int) -> tuple[int, list[str]]:
        """The live pods, and ``<pod>: VAR='value'`` for each whose variable (as the API describes the
        pod's environment) does not name ``service:port`` on a port the Service serves."""
        v = self.variant
        api = backend.api
        pods = [p for p in api.list("Pod", self.namespace, self.pod_selector(v["service"])) if not p["metadata"].get("deletionTimestamp")]
        try:
            svc = api.get("Service", service, self.namespace)
            ports = {int(p["port"]) for p in svc["spec"].get("ports") or ()}
        except ApiError:
            ports = set()
        bad = []
        for pod in pods:
            value = api_pod_env(api, pod, v["container"]).get(v["var"])
            host, _, got = (value or "").rpartition(":")
            if not (value and host.split(".")[0] == service and got.isdigit() and int(got) == port and int(got) in ports):
                bad.append(f"{pod['metadata']['name']}: {v['var']}={value!r}")
        return len(pods), bad
