"""FinalizerDeadlock: a namespace stuck Terminating because the namespace controller cannot discover an API.

metrics-server was half-uninstalled this morning: its Deployment and Service
went, its APIService ``v1beta1.metrics.k8s.io`` stayed. Nothing seems wrong
until CI tears down the hotel-reservation preview environment: the namespace
controller deletes the content but will not remove the ``kubernetes``
finalizer while discovery of ``metrics.k8s.io/v1beta1`` fails, so the namespace
stays Terminating and the pipeline cannot recreate it. Deleting it again,
patching its finalizers or forcing changes nothing; deleting the APIService
lets the namespace go but leaves the cluster without its Metrics API
(``kubectl top``, HPAs). The fix is the aggregated API's back end.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
import yaml

from sre_env.apps.hotel_reservation import HOTEL_RESERVATION
from sre_env.rewards.base import AllowedChange, Check, Mechanism
from sre_env.sim.control.namespaces import METRICS_APISERVICE, metrics_server_objects

from .app_common import find
from .base import RootCause, SimScenario

if TYPE_CHECKING:
    from sre_env.sim.model import ModelBackend

__all__ = ["FinalizerDeadlock"]


class FinalizerDeadlock(SimScenario):
    family = "FinalizerDeadlock"
    app = HOTEL_RESERVATION
    layer = "kubernetes"
    difficulty = "hard"
    develop_s = 180.0
    summary = "CI cannot recreate the hotel-reservation preview environment: its namespace never finishes deleting."
    description = (
        "The CI pipeline that builds a preview environment of hotel-reservation for every merge request fails: tearing "
        "down the previous preview left its namespace in Terminating for many minutes, and creating it again is refused. "
        "The production site works. The platform team removed an unused add-on from the cluster this morning."
    )
    mechanism = Mechanism(
        "namespace_finalizer_blocked",
        "kubernetes",
        "a namespace stuck terminating because an aggregated APIService is unavailable",
        (
            r"\bapi ?service\b",
            r"\bmetrics\.k8s\.io\b",
            r"\b(?:api )?discovery (?:fail\w*|error)\b",
            r"\bdiscoveryfailed\b|\bnamespacedeletiondiscoveryfailure\b",
            r"\baggregated api\b",
            r"\bstale (?:group ?version|api ?service)\b",
            r"\bmetrics-server\b[^.;\n]{0,60}\b(?:missing|deleted|removed|uninstalled|gone|not present)\b",
        ),
        detail_keys=("apiservice", "namespace"),
        # the removed Deployment and Service are how the APIService lost its back end
        compatible=("service_deleted", "missing_service"),
    )

    def extra_components(self) -> tuple[str, ...]:
        return ("metrics-server", self.variant["preview"])

    def extra_namespaces(self) -> tuple[str, ...]:
        return ("kube-system",)

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        mr = int(rng.integers(1200, 1900))
        return {"preview": f"hotel-reservation-mr-{mr}", "mr": mr}

    def inject(self, backend: "ModelBackend") -> None:
        v = self.variant
        api = backend.api
        # the preview environment CI created for the merge request
        api.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": v["preview"], "labels": {"app.kubernetes.io/part-of": "hotel-reservation", "ci/merge-request": str(v["mr"])}}})
        api.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "preview-config", "namespace": v["preview"]}, "data": {"MERGE_REQUEST": str(v["mr"])}})
        api.create({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default", "namespace": v["preview"]}})
        backend.advance(30.0)
        # the add-on removal: Deployment and Service deleted, the APIService left behind
        api.delete("Deployment", "metrics-server", "kube-system")
        api.delete("Service", "metrics-server", "kube-system")
        backend.advance(60.0)
        # CI tears the preview down
        api.delete("Namespace", v["preview"])

    def root_cause(self) -> RootCause:
        v = self.variant
        return RootCause(
            component="deployment/metrics-server",
            namespace="kube-system",
            layer="kubernetes",
            mechanism="finalizer blocked by an unavailable aggregated APIService",
            summary=(
                f"metrics-server (deployment/metrics-server and its Service in kube-system) was removed but its APIService {METRICS_APISERVICE} "
                f"was left behind (Available=False, ServiceNotFound). API discovery of metrics.k8s.io/v1beta1 fails, so the namespace controller "
                f"will not remove the kubernetes finalizer of namespace {v['preview']}: it stays Terminating (NamespaceDeletionDiscoveryFailure) "
                f"and CI cannot recreate it; kubectl top fails too. Impact: the preview environment pipeline is blocked and the cluster has no Metrics API."
            ),
            details={"apiservice": METRICS_APISERVICE, "namespace": v["preview"], "reason": "ServiceNotFound"},
            affected=("deployment/metrics-server", f"namespace/{v['preview']}"),
        )

    def brief(self) -> str:
        v = self.variant
        return (
            f"PAGE: the hotel-reservation preview pipeline fails: `kubectl create namespace {v['preview']}` is refused because the old one "
            "is still being deleted, and it has been Terminating for several minutes. Production is fine. Find the root cause, repair it "
            "durably, and submit your diagnosis."
        )

    def reference_solution(self) -> list[str]:
        v = self.variant
        manifest = "".join("---\n" + yaml.safe_dump(obj, sort_keys=False) for obj in metrics_server_objects())
        return [
            f"kubectl get namespace {v['preview']} -o yaml",
            "kubectl get apiservices",
            f"kubectl describe apiservice {METRICS_APISERVICE}",
            # reinstall the aggregated API's back end; discovery recovers and the namespace controller finishes
            f"kubectl apply -f - <<'EOF'\n{manifest}EOF",
            "sleep 90",
            "kubectl get apiservices",
            f"kubectl get namespace {v['preview']}",
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        return {
            "recreate_namespace": [f"kubectl create namespace {v['preview']}", "sleep 60"],
            "patch_finalizers": [f"kubectl patch namespace {v['preview']} --type=merge -p '{{\"spec\":{{\"finalizers\":[]}}}}'", "sleep 60"],
            # the namespace goes, and with it the cluster's Metrics API
            "delete_apiservice": [f"kubectl delete apiservice {METRICS_APISERVICE}", "sleep 60"],
        }

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        v = self.variant
        stuck = find(backend, "Namespace", v["preview"])
        checks = [Check("namespace_deleted", stuck is None, f"namespace {v['preview']} is still Terminating" if stuck is not None else f"namespace {v['preview']} finished deleting")]
        ok = backend.model.metrics_api_available()
        checks.append(Check("metrics_api_available", ok, f"apiservice {METRICS_APISERVICE} is Available" if ok else f"the Metrics API ({METRICS_APISERVICE}) is not available"))
        return checks

    def allowed_changes(self) -> list[AllowedChange]:
        return [AllowedChange("Deployment", "kube-system", "metrics-server", "*"), AllowedChange("Service", "kube-system", "metrics-server", "*")]
