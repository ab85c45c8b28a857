"""Env-var misconfiguration of hotel-reservation's Go services.

* MisconfiguredEnv: a database address in a service's env names the wrong
  host (a typo, another namespace, another service's database). The new pods
  cannot reach or log in to their MongoDB at start-up and crash-loop.
* IncorrectPortAssignment: a service's address env var has the right host and
  the wrong port; the dial times out or is refused, the process exits at start.
* EnvVarShadowing: an ``env`` entry overrides the value the container gets from
  its ``envFrom`` ConfigMap with a wrong one; the ConfigMap looks right, the
  process sees the override.

A restart changes nothing in any of them: the value lives in the pod template.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from sre_env.apps.hotel_reservation import HOTEL_RESERVATION
from sre_env.faults.app_config import SetContainerEnv
from sre_env.rewards.base import Check, Mechanism

from .app_common import DB_CLIENTS, DB_NAME, address_check, live_pods, pods_serving
from .base import RootCause, SimScenario
from .blind import rollback_repairs
from .service_fault import ServiceFault

if TYPE_CHECKING:
    from sre_env.sim.model import ModelBackend

__all__ = ["EnvVarShadowing", "IncorrectPortAssignment", "MisconfiguredEnv"]

_GO = ("frontend", "search", "geo", "rate", "profile", "recommendation", "user", "reservation")
_MONGO_SERVICES = ("geo", "rate", "profile", "recommendation", "user", "reservation")


def _affected(app: Any, service: str, wrong: str) -> tuple[str, ...]:
    """The broken service, the entrypoint that reports the errors, and whatever the wrong address names."""
    host = wrong.rsplit(":", 1)[0].split(".")[0]
    names = {c.name for c in app.components}
    named = host if host in names else host.rsplit("-", 1)[0] if host.rsplit("-", 1)[0] in names and host.rsplit("-", 1)[-1].isdigit() else None
    out = [f"deployment/{service}", f"deployment/{app.entrypoint}"] + ([f"deployment/{named}"] if named else [])
    return tuple(dict.fromkeys(out))


class _EnvValueScenario(ServiceFault, SimScenario):
    """A pod-template env value is wrong; the fix is the right value in the Deployment."""

    layer = "application"

    def inject(self, backend: "ModelBackend") -> None:
        v = self.variant
        SetContainerEnv(self.namespace, v["service"], v["container"], v["var"], v["wrong"], v["value"]).inject(backend)

    def _dependency(self) -> Any:
        v = self.variant
        return next(d for d in self.app.component(v["service"]).dependencies if d.address_env == v["var"])

    def reference_solution(self) -> list[str]:
        v = self.variant
        ns = self.namespace
        return [
            f"kubectl get pods -n {ns}",
            f"kubectl logs deployment/{v['service']} -n {ns} --previous --tail=20",
            f"kubectl set env deployment/{v['service']} -n {ns} --list",
            f"kubectl set env deployment/{v['service']} -n {ns} {v['var']}={v['value']}",
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        return self.service_wrong_fixes(restart_dependency=[f"kubectl rollout restart deployment/{self._dependency().service} -n {self.namespace}"])

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        """Every running pod sees the variable with a value that reaches the right dependency."""
        v = self.variant
        dep = self._dependency()
        return [
            address_check(backend, self.app, self.pod_selector(v["service"]), v["service"], v["container"], v["var"], dep.service, dep.port),
            pods_serving(backend, self.namespace, v["service"]),
        ]


class MisconfiguredEnv(_EnvValueScenario):
    family = "MisconfiguredEnv"
    app = HOTEL_RESERVATION
    difficulty = "easy"
    summary = "A hotel-reservation feature broke right after a configuration push."
    description = (
        "A configuration change rolled out through the deploy pipeline a few minutes ago. Since then one "
        "feature of the hotel-reservation site fails for every user with HTTP 500s, while the rest of the "
        "site still works. Nobody has touched the cluster by hand."
    )
    accepted_blind = rollback_repairs("the configuration change that set the wrong value")
    mechanism = Mechanism(
        "misconfigured_env",
        "application",
        "an env var holds a wrong host or URL for a dependency",
        (
            r"\b(?:wrong|incorrect|bad|misconfigured|mistyped|invalid|typo(?:ed)?)\b[^.;\n]{0,40}?\b(?:host(?:name)?|address|url|uri|endpoint|database address|db address)\b",
            r"\b(?:host(?:name)?|address|url|uri|endpoint)\b[^.;\n]{0,30}?\b(?:is |was )?(?:wrong|incorrect|misconfigured|mistyped|a typo)\b",
            r"\btypo\b",
            r"\bmisconfigured (?:env|environment)\b",
            r"\b{variable}\b[^.;\n]{0,60}?\b(?:wrong|incorrect|misconfigured|mistyped) (?:host(?:name)?|address|url|value)\b",
        ),
        detail_keys=("variable", "wrong_value", "expected_value"),
        compatible=("network_fault",),
    )

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        service = str(rng.choice(_MONGO_SERVICES))
        comp = self.app.component(service)
        dep = next(d for d in comp.dependencies if d.protocol == "mongodb")
        value = dict(comp.env)[dep.address_env]
        host = dep.service
        choices = [f"{host}s:27017", f"{host.replace('mongodb-', 'mongo-')}:27017", f"{host}.default:27017", f"{host}-0:27017"]
        if service in DB_CLIENTS:
            # another service's database: it answers, but knows nothing of this service's user
            choices += [f"mongodb-{other}:27017" for other in DB_CLIENTS if other != service]
        wrong = str(rng.choice(sorted(choices)))
        return {"service": service, "container": comp.container, "var": dep.address_env, "value": value, "wrong": wrong}

    def root_cause(self) -> RootCause:
        v = self.variant
        return self.service_cause(
            "misconfigured dependency address in env",
            f"A config push set the env var {v['var']} of deployment/{v['service']} to the wrong host {v['wrong']} "
            f"instead of {v['value']}, so its pods cannot open their database session at start-up and crash-loop; "
            f"deployment/{self.app.entrypoint} returns errors. ",
            {"variable": v["var"], "wrong_value": v["wrong"], "expected_value": v["value"], "container": v["container"], "mechanism_id": "misconfigured_env"},
            affected=_affected(self.app, v["service"], v["wrong"]),
        )


class IncorrectPortAssignment(_EnvValueScenario):
    family = "IncorrectPortAssignment"
    app = HOTEL_RESERVATION
    difficulty = "medium"
    summary = "One hotel-reservation service keeps restarting after a manifest update."
    description = (
        "After this morning's manifest update the hotel-reservation site returns errors on some pages for "
        "every user. Dashboards show one backend restarting over and over; its dependencies look healthy "
        "and were not changed."
    )
    accepted_blind = rollback_repairs("the manifest update that set the wrong port")
    mechanism = Mechanism(
        "wrong_port_env",
        "application",
        "a caller's address env var points at the wrong port",
        (
            r"\b(?:wrong|incorrect|bad|misconfigured|mistyped|invalid)\b[^.;\n]{0,30}?\bports?\b",
            r"\bports? (?:mismatch\w*|misconfig\w*|is wrong|was wrong)\b",
            r"\b(?:wrong|incorrect) port {wrong_port}\b",
        ),
        detail_keys=("variable", "wrong_port", "expected_port"),
        compatible=("service_target_port", "misconfigured_env"),
    )

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        service = str(rng.choice(_GO))
        comp = self.app.component(service)
        deps = [d for d in comp.dependencies if d.address_env and d.protocol in ("mongodb", "consul")]
        dep = deps[int(rng.integers(0, len(deps)))]
        value = dict(comp.env)[dep.address_env]
        host = value.rsplit(":", 1)[0]
        ports = (27018, 27107, 2717, 28017) if dep.protocol == "mongodb" else (8300, 8501, 8600, 8050)
        wrong_port = int(rng.choice(ports))
        return {"service": service, "container": comp.container, "var": dep.address_env, "value": value, "wrong": f"{host}:{wrong_port}", "wrong_port": wrong_port, "port": dep.port}

    def root_cause(self) -> RootCause:
        v = self.variant
        return self.service_cause(
            "caller address env points at the wrong port",
            f"The env var {v['var']} of deployment/{v['service']} was set to {v['wrong']}: the wrong port {v['wrong_port']} "
            f"instead of {v['port']}, so its pods cannot connect at start-up and crash-loop; deployment/{self.app.entrypoint} returns errors. ",
            {"variable": v["var"], "wrong_value": v["wrong"], "wrong_port": v["wrong_port"], "expected_port": v["port"], "expected_value": v["value"], "mechanism_id": "wrong_port_env"},
            affected=_affected(self.app, v["service"], v["wrong"]),
        )


class EnvVarShadowing(ServiceFault, SimScenario):
    family = "EnvVarShadowing"
    app = HOTEL_RESERVATION
    layer = "application"
    difficulty = "hard"
    summary = "A hotel-reservation backend crash-loops although its configuration looks unchanged."
    description = (
        "One hotel-reservation feature fails for every user since a change was rolled out. The team checked "
        "the service's ConfigMap and says its values are exactly what they should be, and the database is up."
    )
    accepted_blind = rollback_repairs("the change that added the env entry shadowing the ConfigMap's value")
    mechanism = Mechanism(
        "env_shadowing",
        "application",
        "an env entry overrides (shadows) the value from envFrom",
        (
            r"\bshadow\w*\b",
            r"\boverrid\w*\b",
            r"\btakes? precedence\b",
            r"\b(?:env|environment) (?:entry|var\w*) (?:wins|beats)\b",
        ),
        detail_keys=("variable", "wrong_value", "configmap"),
        compatible=("misconfigured_env",),
    )

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        service = str(rng.choice(DB_CLIENTS))
        comp = self.app.component(service)
        var = str(rng.choice(("MONGO_DATABASE", "MONGO_AUTH_SOURCE")))
        configmap = f"{service}-mongo-config"
        value = DB_NAME[service] if var == "MONGO_DATABASE" else "admin"
        wrongs = (service, f"{service}_db", "test") if var == "MONGO_DATABASE" else (DB_NAME[service], service, "test")
        wrong = str(rng.choice(wrongs))
        return {"service": service, "container": comp.container, "var": var, "value": value, "wrong": wrong, "configmap": configmap}

    def inject(self, backend: "ModelBackend") -> None:
        v = self.variant
        SetContainerEnv(self.namespace, v["service"], v["container"], v["var"], v["wrong"], None).inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        what = "database name" if v["var"] == "MONGO_DATABASE" else "authentication database"
        return self.service_cause(
            "env entry shadows the envFrom ConfigMap value",
            f"deployment/{v['service']} got an explicit env entry {v['var']}={v['wrong']} that overrides (shadows) the {what} "
            f"{v['value']} its container reads from ConfigMap {v['configmap']} via envFrom; its database refuses the session at start-up, "
            f"the pods crash-loop and deployment/{self.app.entrypoint} returns errors. ",
            {"variable": v["var"], "wrong_value": v["wrong"], "expected_value": v["value"], "configmap": v["configmap"], "mechanism_id": "env_shadowing"},
        )

    def reference_solution(self) -> list[str]:
        v = self.variant
        ns = self.namespace
        return [
            f"kubectl logs deployment/{v['service']} -n {ns} --previous --tail=20",
            f"kubectl get configmap {v['configmap']} -n {ns} -o yaml",
            f"kubectl set env deployment/{v['service']} -n {ns} --list",
            f"kubectl set env deployment/{v['service']} -n {ns} {v['var']}-",
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        ns = self.namespace
        return self.service_wrong_fixes(
            restart_database=[f"kubectl rollout restart deployment/mongodb-{v['service']} -n {ns}"],
            edit_configmap=[
                f"kubectl patch configmap {v['configmap']} -n {ns} --type=merge -p '{{\"data\":{{\"{v['var']}\":\"{v['value']}\"}}}}'",
                f"kubectl rollout restart deployment/{v['service']} -n {ns}",
            ],
        )

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        v = self.variant
        dep = backend.api.get("Deployment", v["service"], self.namespace)
        ctr = next(c for c in dep["spec"]["template"]["spec"]["containers"] if c["name"] == v["container"])
        shadow = [e for e in ctr.get("env") or () if e.get("name") == v["var"] and e.get("value") != v["value"]]
        seen = [backend.model.pod_env(p["metadata"]["uid"], v["container"]).get(v["var"]) for p in live_pods(backend, self.namespace, v["service"])]
        stale = [s for s in seen if s != v["value"]]
        return [
            Check("no_shadowing_entry", not shadow, f"env entry {v['var']}={shadow[0].get('value')!r} still overrides the ConfigMap" if shadow else "the ConfigMap's value is the one the container gets"),
            Check("pods_see_configmap_value", bool(seen) and not stale, f"pods see {v['var']}={stale[0]!r}" if stale else (f"every pod sees {v['var']}={v['value']}" if seen else "no pod")),
            pods_serving(backend, self.namespace, v["service"]),
        ]
