"""RBACMisconfig: kube-state-metrics' service account loses the permission to list what it exports.

A re-applied monitoring manifest binds the ClusterRole to a service account in
the wrong namespace (or an RBAC "least privilege" cleanup drops a rule), so the
exporter's reflectors get ``... is forbidden: User "system:serviceaccount:kube-system:kube-state-metrics"
cannot list resource ...`` and the ``kube_*`` series of those objects vanish:
dashboards show no data and the alerts built on them cannot fire — while the
pod itself stays Running and Ready. Restarting it changes nothing; binding it to
cluster-admin "works" and leaves a monitoring pod with every right in the cluster.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import numpy as np

from sre_env.apps.hotel_reservation import HOTEL_RESERVATION
from sre_env.faults.control_plane import PatchObject
from sre_env.kube.rbac import ApiRbacObjects, allows, forbidden_message
from sre_env.rewards.base import AllowedChange, Check, Mechanism
from sre_env.sim.control import kube_state_metrics as ksm

from .base import RootCause, Scenario

if TYPE_CHECKING:
    from sre_env.backend import Backend

__all__ = ["RBACMisconfig"]


class RBACMisconfig(Scenario):
    family = "RBACMisconfig"
    app = HOTEL_RESERVATION
    layer = "kubernetes"
    difficulty = "medium"
    summary = "The cluster's dashboards lost part of their Kubernetes metrics; the hotel-reservation site still works."
    description = (
        "Since the monitoring stack's manifests were re-synced this morning, the dashboards for hotel-reservation show "
        "'No data' for some Kubernetes panels and the alerts built on them have gone quiet. The site itself works and "
        "every monitoring pod is Running and Ready."
    )
    mechanism = Mechanism(
        "rbac_permission_missing",
        "kubernetes",
        "a service account lost an RBAC permission it needs",
        (
            r"\brbac\b",
            r"\b(?:cluster)?role ?binding\b",
            r"\bis forbidden\b",
            r"\bcannot (?:list|get|watch) (?:resource )?\"?\w+",
            r"\b(?:lost|lacks?|missing|no longer has|without)\b[^.;\n]{0,40}\b(?:permission|rights?|access|rules?)\b",
            r"\bpermissions?\b[^.;\n]{0,30}\b(?:missing|removed|lost|denied)\b",
        ),
        detail_keys=("binding", "service_account", "resource"),
    )

    def extra_components(self) -> tuple[str, ...]:
        return (ksm.NAME,)

    def extra_namespaces(self) -> tuple[str, ...]:
        return (ksm.NAMESPACE,)

    def draw_variant(self, backend: "Backend", rng: np.random.Generator) -> dict[str, Any]:
        how = str(rng.choice(("subject_namespace", "dropped_rule")))
        return {"how": how, "wrong_namespace": str(rng.choice(("monitoring", "observability", "prometheus")))}

    def _apps_rule(self) -> int:
        return next(i for i, r in enumerate(ksm.cluster_role()["rules"]) if r["apiGroups"] == ["apps"])

    def inject(self, backend: "Backend") -> None:
        v = self.variant
        if v["how"] == "subject_namespace":
            PatchObject("ClusterRoleBinding", ksm.NAME, None, ({"op": "replace", "path": "/subjects/0/namespace", "value": v["wrong_namespace"]},), ({"op": "replace", "path": "/subjects/0/namespace", "value": ksm.NAMESPACE},)).inject(backend)
        else:
            i = self._apps_rule()
            PatchObject("ClusterRole", ksm.NAME, None, ({"op": "remove", "path": f"/rules/{i}"},), ({"op": "add", "path": f"/rules/{i}", "value": ksm.cluster_role()["rules"][i]},)).inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        if v["how"] == "subject_namespace":
            component = f"clusterrolebinding/{ksm.NAME}"
            what = (
                f"clusterrolebinding/{ksm.NAME} now binds the ClusterRole to serviceaccount {v['wrong_namespace']}/{ksm.NAME} instead of "
                f"{ksm.NAMESPACE}/{ksm.NAME}, so the exporter's service account has no RBAC permission at all"
            )
            resource = "pods"
            lost = "every kube_* series (nodes, pods, deployments, statefulsets, volumes)"
        else:
            component = f"clusterrole/{ksm.NAME}"
            what = f"clusterrole/{ksm.NAME} lost its rule for the apps API group, so the exporter's service account can no longer list deployments and statefulsets"
            resource = "deployments"
            lost = "the kube_deployment_* and kube_statefulset_* series"
        msg = forbidden_message(ksm.USER, "list", resource, "apps" if resource == "deployments" else "")
        return RootCause(
            component=component,
            namespace=self.namespace,
            layer="kubernetes",
            mechanism="service account lost an RBAC permission",
            summary=(
                f"RBAC misconfiguration: {what}. deployment/{ksm.NAME} (namespace {ksm.NAMESPACE}) keeps running but its list calls fail "
                f"({msg}), so {lost} disappear from Prometheus. Impact: the hotel-reservation dashboards show no data and the alerts "
                "on those metrics cannot fire; users of the site are not affected."
            ),
            details={"binding": ksm.NAME, "service_account": f"{ksm.NAMESPACE}/{ksm.NAME}", "resource": resource, "how": v["how"]},
            affected=(f"deployment/{ksm.NAME}",),
        )

    def brief(self) -> str:
        return (
            f"PAGE: the Kubernetes panels of the {self.app.name} dashboards (namespace {self.namespace}) show 'No data' for some "
            "metrics since this morning's re-sync of the monitoring manifests, and the alerts built on them stay silent even for "
            "test conditions. The site works. Find the root cause, repair it durably, and submit your diagnosis."
        )

    def reference_solution(self) -> list[str]:
        v = self.variant
        steps = [
            f"kubectl get pods -n {ksm.NAMESPACE} -l app.kubernetes.io/name={ksm.NAME}",
            f"kubectl logs -n {ksm.NAMESPACE} deployment/{ksm.NAME} --tail=4",
            f"kubectl auth can-i list deployments --as={ksm.USER}",
            f"kubectl get clusterrolebinding {ksm.NAME} -o yaml",
        ]
        if v["how"] == "subject_namespace":
            steps.append(f"kubectl patch clusterrolebinding {ksm.NAME} --type=json -p '[{{\"op\": \"replace\", \"path\": \"/subjects/0/namespace\", \"value\": \"{ksm.NAMESPACE}\"}}]'")
        else:
            i = self._apps_rule()
            rule = json.dumps(ksm.cluster_role()["rules"][i])
            steps += [f"kubectl get clusterrole {ksm.NAME} -o yaml", f"kubectl patch clusterrole {ksm.NAME} --type=json -p '[{{\"op\": \"add\", \"path\": \"/rules/{i}\", \"value\": {rule}}}]'"]
        steps += [f"kubectl auth can-i list deployments --as={ksm.USER}", "sleep 60"]
        return steps

    def wrong_fixes(self) -> dict[str, list[str]]:
        admin = (
            "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata:\n  name: kube-state-metrics-admin\n"
            "roleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: ClusterRole\n  name: cluster-admin\n"
            f"subjects:\n- kind: ServiceAccount\n  name: {ksm.NAME}\n  namespace: {ksm.NAMESPACE}\n"
        )
        return {
            "restart_exporter": [f"kubectl rollout restart deployment/{ksm.NAME} -n {ksm.NAMESPACE}", "sleep 60"],
            # the metrics come back, and a monitoring pod can now do anything in the cluster
            "bind_cluster_admin": [f"kubectl apply -f - <<'EOF'\n{admin}EOF", "sleep 60"],
        }

    def cause_checks(self, backend: "Backend") -> list[Check]:
        api = ApiRbacObjects(backend.api)
        denied = sorted(f"{res}.{grp}" if grp else res for res, grp, _ in ksm.LISTS.values() if not allows(api, ksm.USER, "list", res, grp))
        checks = [Check("exporter_can_list", not denied, ("kube-state-metrics cannot list: " + ", ".join(denied)) if denied else "kube-state-metrics can list everything it exports")]
        over = allows(api, ksm.USER, "delete", "secrets", "", None) or allows(api, ksm.USER, "create", "pods", "", None)
        checks.append(Check("least_privilege", not over, "the kube-state-metrics service account can create or delete objects (bound to a write role)" if over else "the service account has read-only rights"))
        return checks

    def allowed_changes(self) -> list[AllowedChange]:
        return [AllowedChange("ClusterRoleBinding", "", ksm.NAME, "modified"), AllowedChange("ClusterRole", "", ksm.NAME, "modified")]
