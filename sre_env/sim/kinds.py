"""The Kubernetes kinds the simulator knows: names, aliases, scope, apiVersion.

One table feeds the API (scope, plural names in error messages), kubectl
(``po``, ``deploy``, ``svc`` ...) and the HTTP server, so a kind is declared once.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["KindInfo", "KINDS", "resolve_kind", "kind_info"]


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
)

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
