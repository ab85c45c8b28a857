"""ConfigMap incidents on hotel-reservation's database clients.

rate, profile and reservation take ``MONGO_DATABASE`` and ``MONGO_AUTH_SOURCE``
from ``<svc>-mongo-config`` through ``envFrom``. Environment is read when a
container starts, so a ConfigMap change only bites when pods (re)start:

* ConfigMapDrift: a value in the ConfigMap drifted and the service was
  restarted to pick up "the new config"; the pods now log in to or query the
  wrong database and crash-loop. Fix the value, then roll the pods.
* MissingConfigMap: the ConfigMap was deleted and the service's pods were
  recreated (a node drain); the kubelet cannot build their environment
  (CreateContainerConfigError). Recreate it as it was.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from sre_env.apps.hotel_reservation import HOTEL_RESERVATION
from sre_env.faults.app_config import (
    DeleteConfigMap,
    SetConfigMapKey,
    delete_pods,
    restart_deployment,
)
from sre_env.rewards.base import AllowedChange, Check, Mechanism

from .app_common import DB_CLIENTS, find, live_pods, pods_serving
from .base import RootCause, SimScenario
from .service_fault import ServiceFault

if TYPE_CHECKING:
    from sre_env.sim.model import ModelBackend

__all__ = ["ConfigMapDrift", "MissingConfigMap"]


def _baseline_data(app: Any, name: str) -> dict[str, str]:
    return dict(next(data for cm, data in app.config_maps if cm == name))


class _ConfigMapScenario(ServiceFault, SimScenario):
    app = HOTEL_RESERVATION
    layer = "application"

    def extra_components(self) -> tuple[str, ...]:
        """The ConfigMap is a component a diagnosis can name (it is not one of the app's workloads)."""
        return (self.variant["configmap"],) if self.variant else ()

    def _roll(self) -> str:
        return f"kubectl rollout restart deployment/{self.variant['service']} -n {self.namespace}"

    def _env_check(self, backend: "ModelBackend") -> Check:
        """The running pods were started with the ConfigMap's intended values."""
        v = self.variant
        want = _baseline_data(self.app, v["configmap"])
        ctr = self.app.component(v["service"]).container
        pods = live_pods(backend, self.namespace, v["service"])
        bad = []
        for pod in pods:
            env = backend.model.pod_env(pod["metadata"]["uid"], ctr)
            diff = [f"{k}={env.get(k)!r}" for k, val in want.items() if env.get(k) != val]
            if diff:
                bad.append(f"{pod['metadata']['name']}: {', '.join(diff)}")
        return Check("config_in_effect", bool(pods) and not bad, "; ".join(bad) if bad else (f"every {v['service']} pod runs with {v['configmap']} as intended" if pods else "no pod"))


class ConfigMapDrift(_ConfigMapScenario):
    family = "ConfigMapDrift"
    difficulty = "medium"
    summary = "A hotel-reservation service crash-loops since it was restarted to pick up new config."
    description = (
        "A teammate restarted one hotel-reservation backend so it would pick up the latest configuration. It has "
        "not come back since, and one feature of the site fails for every user. Its image and manifest did not change."
    )
    mechanism = Mechanism(
        "configmap_drift",
        "application",
        "a value in a ConfigMap drifted from its intended setting",
        (
            r"\bconfig ?map\b[^.;\n]{0,60}?\b(?:drift\w*|changed|wrong|incorrect|bad|edited|modified|altered)\b",
            r"\b(?:drift\w*|wrong|incorrect|bad|edited|modified|changed)\b[^.;\n]{0,40}?\bconfig ?map\b",
            r"\bconfig(?:uration)? drift\b",
            r"\b{key}\b[^.;\n]{0,40}?\bdrift\w*\b",
        ),
        detail_keys=("configmap", "key", "wrong_value", "expected_value"),
        compatible=("misconfigured_env",),
    )

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        service = str(rng.choice(DB_CLIENTS))
        configmap = f"{service}-mongo-config"
        data = _baseline_data(self.app, configmap)
        key = str(rng.choice(sorted(data)))
        value = data[key]
        wrongs = (service, f"{service}_db", f"{value}-v2") if key == "MONGO_DATABASE" else ("test", data["MONGO_DATABASE"], service)
        return {"service": service, "configmap": configmap, "key": key, "value": value, "wrong": str(rng.choice(wrongs))}

    def inject(self, backend: "ModelBackend") -> None:
        v = self.variant
        SetConfigMapKey(self.namespace, v["configmap"], v["key"], v["wrong"], v["value"]).inject(backend)
        restart_deployment(backend, self.namespace, v["service"], "2026-03-02T08:58:00Z")

    def root_cause(self) -> RootCause:
        v = self.variant
        return self.service_cause(
            "configmap value drifted",
            f"In ConfigMap {v['configmap']} the key {v['key']} drifted to {v['wrong']} (intended {v['value']}); deployment/{v['service']} "
            f"reads it through envFrom, and since its restart the database refuses the pods' session, they crash-loop and deployment/{self.app.entrypoint} returns errors. ",
            {"configmap": v["configmap"], "key": v["key"], "wrong_value": v["wrong"], "expected_value": v["value"], "mechanism_id": "configmap_drift"},
            component=f"configmap/{v['configmap']}",
        )

    def reference_solution(self) -> list[str]:
        v = self.variant
        ns = self.namespace
        return [
            f"kubectl logs deployment/{v['service']} -n {ns} --previous --tail=20",
            f"kubectl get configmap {v['configmap']} -n {ns} -o yaml",
            f"kubectl patch configmap {v['configmap']} -n {ns} --type=merge -p '{{\"data\":{{\"{v['key']}\":\"{v['value']}\"}}}}'",
            self._roll(),
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        ns = self.namespace
        return self.service_wrong_fixes(
            rollout_undo=[f"kubectl rollout undo deployment/{v['service']} -n {ns}"],
            restart_database=[f"kubectl rollout restart deployment/mongodb-{v['service']} -n {ns}"],
        )

    def allowed_changes(self) -> list[AllowedChange]:
        return [AllowedChange("ConfigMap", self.namespace, self.variant["configmap"], "modified"), AllowedChange("Deployment", self.namespace, self.variant["service"], "modified")]

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        v = self.variant
        cm = find(backend, "ConfigMap", v["configmap"], self.namespace)
        value = (cm or {}).get("data", {}).get(v["key"]) if cm else None
        return [
            Check("configmap_restored", value == v["value"], f"{v['configmap']}.{v['key']} = {value!r} (intended {v['value']!r})"),
            self._env_check(backend),
            pods_serving(backend, self.namespace, v["service"]),
        ]


class MissingConfigMap(_ConfigMapScenario):
    family = "MissingConfigMap"
    layer = "kubernetes"
    difficulty = "easy"
    summary = "A hotel-reservation service did not come back after node maintenance."
    description = (
        "After last night's node maintenance one hotel-reservation backend never came back up, and one feature of "
        "the site fails for every user. The other services restarted fine."
    )
    mechanism = Mechanism(
        "missing_configmap",
        "kubernetes",
        "a referenced ConfigMap was deleted",
        (
            r"\bconfig ?map\b[^.;\n]{0,60}?\b(?:missing|deleted|removed|not found|gone|does not exist|doesn't exist)\b",
            r"\b(?:missing|deleted|removed)\b[^.;\n]{0,30}?\bconfig ?map\b",
            r"\bcreatecontainerconfigerror\b",
            r"\bconfigmap \"?{configmap}\"? not found\b",
        ),
        detail_keys=("configmap",),
    )

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        service = str(rng.choice(DB_CLIENTS))
        return {"service": service, "configmap": f"{service}-mongo-config"}

    def inject(self, backend: "ModelBackend") -> None:
        v = self.variant
        DeleteConfigMap(self.namespace, v["configmap"], tuple(sorted(_baseline_data(self.app, v["configmap"]).items()))).inject(backend)
        delete_pods(backend, self.namespace, f"io.kompose.service={v['service']}")

    def root_cause(self) -> RootCause:
        v = self.variant
        return self.service_cause(
            "referenced configmap deleted",
            f"ConfigMap {v['configmap']}, which deployment/{v['service']} references through envFrom, was deleted; after its pods "
            f"were recreated the kubelet cannot build their environment (CreateContainerConfigError: configmap \"{v['configmap']}\" not found), "
            f"so {v['service']} has no running pod and deployment/{self.app.entrypoint} returns errors. ",
            {"configmap": v["configmap"], "mechanism_id": "missing_configmap"},
            component=f"configmap/{v['configmap']}",
        )

    def reference_solution(self) -> list[str]:
        v = self.variant
        ns = self.namespace
        literals = " ".join(f"--from-literal={k}={val}" for k, val in sorted(_baseline_data(self.app, v["configmap"]).items()))
        return [
            f"kubectl get pods -n {ns}",
            f"kubectl describe pod -n {ns} -l io.kompose.service={v['service']}",
            f"kubectl create configmap {v['configmap']} -n {ns} {literals}",
            "sleep 20",
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        ns = self.namespace
        return self.service_wrong_fixes(
            empty_configmap=[f"kubectl create configmap {v['configmap']} -n {ns}"],
            drop_envfrom=[f"kubectl patch deployment {v['service']} -n {ns} --type=json -p '[{{\"op\": \"remove\", \"path\": \"/spec/template/spec/containers/0/envFrom\"}}]'"],
        )

    def allowed_changes(self) -> list[AllowedChange]:
        return [AllowedChange("ConfigMap", self.namespace, self.variant["configmap"], "created")]

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        v = self.variant
        cm = find(backend, "ConfigMap", v["configmap"], self.namespace)
        want = _baseline_data(self.app, v["configmap"])
        have = (cm or {}).get("data") or {}
        return [
            Check("configmap_present", cm is not None and have == want, f"{v['configmap']} = {have!r} (intended {want!r})" if cm is not None else f"configmap {v['configmap']} does not exist"),
            self._env_check(backend),
            pods_serving(backend, self.namespace, v["service"]),
        ]
