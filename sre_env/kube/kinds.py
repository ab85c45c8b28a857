"""The Kubernetes kinds the simulator knows: names, aliases, scope, apiVersion.

One table feeds the API (scope, plural names in error messages), kubectl
(``po``, ``deploy``, ``svc`` ...) and the HTTP server, so a kind is declared once.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["KindInfo", "KINDS", "CUSTOM_KINDS", "resolve_kind", "kind_info"]


@dataclass(frozen=True)
class KindInfo:
    kind: str
    plural: str
    singular: str
    short_names: tuple[str, ...]
    namespaced: bool
    api_version: str

    @property
    def group(self) -> str:
        return self.api_version.rsplit("/", 1)[0] if "/" in self.api_version else ""

    @property
    def resource(self) -> str:
        """The name kubectl uses in messages: ``pods``, ``deployments.apps``."""
        return f"{self.plural}.{self.group}" if self.group else self.plural


KINDS: tuple[KindInfo, ...] = (
    KindInfo("Namespace", "namespaces", "namespace", ("ns",), False, "v1"),
    KindInfo("Node", "nodes", "node", ("no",), False, "v1"),
    KindInfo("Pod", "pods", "pod", ("po",), True, "v1"),
    KindInfo("Service", "services", "service", ("svc",), True, "v1"),
    KindInfo("Endpoints", "endpoints", "endpoints", ("ep",), True, "v1"),
    KindInfo("ConfigMap", "configmaps", "configmap", ("cm",), True, "v1"),
    KindInfo("Secret", "secrets", "secret", (), True, "v1"),
    KindInfo("PersistentVolumeClaim", "persistentvolumeclaims", "persistentvolumeclaim", ("pvc",), True, "v1"),
    KindInfo("PersistentVolume", "persistentvolumes", "persistentvolume", ("pv",), False, "v1"),
    KindInfo("Event", "events", "event", ("ev",), True, "v1"),
    KindInfo("ServiceAccount", "serviceaccounts", "serviceaccount", ("sa",), True, "v1"),
    KindInfo("Deployment", "deployments", "deployment", ("deploy",), True, "apps/v1"),
    KindInfo("ReplicaSet", "replicasets", "replicaset", ("rs",), True, "apps/v1"),
    KindInfo("StatefulSet", "statefulsets", "statefulset", ("sts",), True, "apps/v1"),
    KindInfo("DaemonSet", "daemonsets", "daemonset", ("ds",), True, "apps/v1"),
    KindInfo("StorageClass", "storageclasses", "storageclass", ("sc",), False, "storage.k8s.io/v1"),
    KindInfo("NetworkPolicy", "networkpolicies", "networkpolicy", ("netpol",), True, "networking.k8s.io/v1"),
    KindInfo("Ingress", "ingresses", "ingress", ("ing",), True, "networking.k8s.io/v1"),
    KindInfo("IngressClass", "ingressclasses", "ingressclass", (), False, "networking.k8s.io/v1"),
    # control plane: batch, admission, RBAC (sre_env.sim.control.jobs, .admission, .rbac)
    KindInfo("Job", "jobs", "job", (), True, "batch/v1"),
    KindInfo("CronJob", "cronjobs", "cronjob", ("cj",), True, "batch/v1"),
    KindInfo("ValidatingWebhookConfiguration", "validatingwebhookconfigurations", "validatingwebhookconfiguration", (), False, "admissionregistration.k8s.io/v1"),
    KindInfo("MutatingWebhookConfiguration", "mutatingwebhookconfigurations", "mutatingwebhookconfiguration", (), False, "admissionregistration.k8s.io/v1"),
    KindInfo("Role", "roles", "role", (), True, "rbac.authorization.k8s.io/v1"),
    KindInfo("RoleBinding", "rolebindings", "rolebinding", (), True, "rbac.authorization.k8s.io/v1"),
    KindInfo("ClusterRole", "clusterroles", "clusterrole", (), False, "rbac.authorization.k8s.io/v1"),
    KindInfo("ClusterRoleBinding", "clusterrolebindings", "clusterrolebinding", (), False, "rbac.authorization.k8s.io/v1"),
    KindInfo("Assign", "assign", "assign", (), False, "mutations.gatekeeper.sh/v1"),
    KindInfo("APIService", "apiservices", "apiservice", (), False, "apiregistration.k8s.io/v1"),
    # scheduling and resources (sre_env.sim.control.quota, .priority, .hpa)
    KindInfo("ResourceQuota", "resourcequotas", "resourcequota", ("quota",), True, "v1"),
    KindInfo("PriorityClass", "priorityclasses", "priorityclass", ("pc",), False, "scheduling.k8s.io/v1"),
    KindInfo("HorizontalPodAutoscaler", "horizontalpodautoscalers", "horizontalpodautoscaler", ("hpa",), True, "autoscaling/v2"),
    # custom resources of modelled operators (sre_env.sim.control.operator_tidb)
    KindInfo("TidbCluster", "tidbclusters", "tidbcluster", ("tc",), True, "pingcap.com/v1alpha1"),
)

#: kinds served by CustomResourceDefinitions (no strategic merge patch, as on a real API server)
CUSTOM_KINDS: frozenset[str] = frozenset({"TidbCluster"})

_BY_NAME: dict[str, KindInfo] = {}
for _k in KINDS:
    for _alias in (_k.kind.lower(), _k.plural, _k.singular, *_k.short_names, _k.resource):
        _BY_NAME[_alias] = _k
    if _k.group:
        _BY_NAME[f"{_k.singular}.{_k.group}"] = _k
        _BY_NAME[f"{_k.plural}.{_k.api_version.replace('/', '.')}"] = _k


def resolve_kind(name: str) -> KindInfo | None:
    """Map what a user types (``po``, ``Deployment``, ``deployments.apps``) to a kind."""
    return _BY_NAME.get(name.lower())


def kind_info(kind: str) -> KindInfo:
    info = _BY_NAME.get(kind.lower())
    if info is None:
        raise KeyError(kind)
    return info
