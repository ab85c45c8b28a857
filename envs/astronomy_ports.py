"""A caller's ``*_ADDR`` in the astronomy shop names the wrong port or host.

IncorrectPortAssignment: the demo's 1.x charts gave every service its own port
(cart 7070, product-catalog 3550, payment 50051 ...); 2.x moved them all to
8080. A values file carried an old port into one caller's ``*_ADDR`` during an
upgrade. The Service has no such port, so every call on that edge times out at
the cluster IP (``i/o timeout``) while the pods of both sides are Running.

MisconfiguredEnv: a config push put a mistyped or wrongly qualified host into
the same kind of variable; the name does not resolve (``no such host``).

Restarting either side changes nothing; the fix is the address in the
caller's Deployment.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from sre_env.apps.astronomy_shop import ASTRONOMY_SHOP
from sre_env.faults.app_config import SetContainerEnv
from sre_env.rewards.base import Check

from .app_common import address_check
from .app_env import IncorrectPortAssignment, MisconfiguredEnv
from .base import RootCause, SimScenario
from .blind import rollback_repairs
from .missing_env_var import MissingEnvVar
from .service_fault import ServiceFault

if TYPE_CHECKING:
    from sre_env.backend import Backend
    from sre_env.sim.model import ModelBackend

__all__ = ["AstronomyIncorrectPort", "AstronomyMisconfiguredEnv", "AstronomyMissingEnvVar"]

#: the port each service listened on in the demo's 1.x manifests
_OLD_PORTS = {"cart": 7070, "currency": 7001, "payment": 50051, "product-catalog": 3550, "shipping": 50050, "ad": 9555, "checkout": 5050, "recommendation": 9001, "quote": 8090}

#: (caller, env var) whose dependency is on a request path and critical
_EDGES = (
    ("checkout", "CART_ADDR"), ("checkout", "CURRENCY_ADDR"), ("checkout", "PAYMENT_ADDR"), ("checkout", "PRODUCT_CATALOG_ADDR"), ("checkout", "SHIPPING_ADDR"),
    ("frontend", "AD_ADDR"), ("frontend", "CART_ADDR"), ("frontend", "CHECKOUT_ADDR"), ("frontend", "PRODUCT_CATALOG_ADDR"), ("frontend", "RECOMMENDATION_ADDR"),
    ("recommendation", "PRODUCT_CATALOG_ADDR"), ("shipping", "QUOTE_ADDR"),
)


class AstronomyIncorrectPort(ServiceFault, SimScenario):
    family = "IncorrectPortAssignment"
    app = ASTRONOMY_SHOP
    layer = "application"
    difficulty = "medium"
    mechanism = IncorrectPortAssignment.mechanism
    summary = "Part of the astronomy shop times out after the chart upgrade."
    description = (
        "Since the astronomy shop was upgraded to the new chart version this morning, one part of the shop hangs and "
        "then fails for every user while the rest works. All pods are Running and Ready and nothing restarts."
    )
    accepted_blind = rollback_repairs("the chart upgrade that set the wrong port")

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        service, var = _EDGES[int(rng.integers(0, len(_EDGES)))]
        comp = self.app.component(service)
        dep = next(d for d in comp.dependencies if d.address_env == var)
        value = dict(comp.env)[var]
        return {"service": service, "container": comp.container, "var": var, "value": value, "dependency": dep.service, "port": dep.port,
                **self._wrong(value, dep.service, rng)}

    def _wrong(self, value: str, dependency: str, rng: np.random.Generator) -> dict[str, Any]:
        wrong_port = _OLD_PORTS[dependency]
        return {"wrong": value.rsplit(":", 1)[0] + f":{wrong_port}", "wrong_port": wrong_port}

    def inject(self, backend: "ModelBackend") -> None:
        v = self.variant
        SetContainerEnv(self.namespace, v["service"], v["container"], v["var"], v["wrong"], v["value"]).inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        return self.service_cause(
            "caller address env points at the wrong port",
            f"The env var {v['var']} of deployment/{v['service']} was set to {v['wrong']}: the wrong port {v['wrong_port']} (the 1.x port) "
            f"instead of {v['port']}. Service {v['dependency']} has no port {v['wrong_port']}, so every call from {v['service']} to "
            f"{v['dependency']} fails with an i/o timeout, and deployment/{self.app.entrypoint} returns errors. ",
            {"variable": v["var"], "wrong_value": v["wrong"], "wrong_port": v["wrong_port"], "expected_port": v["port"], "expected_value": v["value"], "mechanism_id": "wrong_port_env"},
            affected=self._with_dependency(),
        )

    def _with_dependency(self) -> tuple[str, ...]:
        # the dependency is named by the wrong address: it is where the calls go, not a bystander
        v = self.variant
        return tuple(dict.fromkeys((f"deployment/{v['service']}", f"deployment/{self.app.entrypoint}", f"deployment/{v['dependency']}")))

    def reference_solution(self) -> list[str]:
        v = self.variant
        ns = self.namespace
        return [
            f"kubectl logs deployment/{v['service']} -n {ns} --tail=20",
            f"kubectl get svc {v['dependency']} -n {ns}",
            f"kubectl set env deployment/{v['service']} -n {ns} --list",
            f"kubectl set env deployment/{v['service']} -n {ns} {v['var']}={v['value']}",
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        ns = self.namespace
        return self.service_wrong_fixes(
            restart_dependency=[f"kubectl rollout restart deployment/{v['dependency']} -n {ns}"],
            scale_up_dependency=[f"kubectl scale deployment/{v['dependency']} -n {ns} --replicas=3"],
        )

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        v = self.variant
        return [address_check(backend, self.app, self.pod_selector(v["service"]), v["service"], v["container"], v["var"], v["dependency"], v["port"])]


class AstronomyMisconfiguredEnv(AstronomyIncorrectPort):
    family = "MisconfiguredEnv"
    difficulty = "easy"
    mechanism = MisconfiguredEnv.mechanism
    summary = "One feature of the astronomy shop fails after a configuration push."
    description = (
        "A configuration change went out through the deploy pipeline a few minutes ago. Since then one part of the "
        "astronomy shop fails for every user while the rest works; all pods are Running and none restarts."
    )
    accepted_blind = rollback_repairs("the configuration change that set the wrong address")

    def _wrong(self, value: str, dependency: str, rng: np.random.Generator) -> dict[str, Any]:
        scheme = "http://" if value.startswith("http://") else ""
        port = value.rsplit(":", 1)[1]
        typo = dependency.replace("-", "") if "-" in dependency else dependency[:-1] + dependency[-1] * 2
        hosts = (typo, f"{dependency}.default", f"{dependency}-service")
        return {"wrong": f"{scheme}{hosts[int(rng.integers(0, len(hosts)))]}:{port}"}

    def root_cause(self) -> RootCause:
        v = self.variant
        return self.service_cause(
            "misconfigured dependency address in env",
            f"A config push set the env var {v['var']} of deployment/{v['service']} to the wrong host {v['wrong']} instead of {v['value']}; "
            f"the name does not resolve in cluster DNS, so every call from {v['service']} to {v['dependency']} fails and "
            f"deployment/{self.app.entrypoint} returns errors. ",
            {"variable": v["var"], "wrong_value": v["wrong"], "expected_value": v["value"], "container": v["container"], "mechanism_id": "misconfigured_env"},
            affected=self._with_dependency(),
        )


#: (service, required variable) an astronomy-shop process cannot start without
_REQUIRED = tuple((svc, var) for svc in ("checkout", "cart") for var in ASTRONOMY_SHOP.component(svc).required_env)


class AstronomyMissingEnvVar(MissingEnvVar):
    """MissingEnvVar on the astronomy shop: checkout's Go ``mustMapEnv`` panics, the .NET cart throws at start."""

    app = ASTRONOMY_SHOP
    summary = "Part of the astronomy shop stopped working after a configuration change."
    description = (
        "Right after a routine configuration push, one part of the astronomy shop fails for every user while "
        "the rest of the shop works. The push went out through the normal pipeline and nobody has touched the "
        "cluster since."
    )

    def draw_variant(self, backend: "Backend", rng: np.random.Generator) -> dict[str, Any]:
        service, var = _REQUIRED[int(rng.integers(0, len(_REQUIRED)))]
        comp = self.app.component(service)
        return {"service": service, "container": comp.container, "var": var, "value": dict(comp.env)[var]}

    def wrong_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        ns = self.namespace
        return self.service_wrong_fixes(wrong_value=[f"kubectl set env deployment/{v['service']} -n {ns} {v['var']}=localhost:8080"])
