"""Kubernetes object faults: Services, replica counts, placement rules, resources, quotas, priorities.

Each one changes what an operator or a pipeline changes in a real incident —
a Service's selector, a Deployment re-applied from an edited manifest, a taint,
a ResourceQuota, a PriorityClass — through the API. The scheduler, the
controllers and the kubelet produce everything that follows.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .base import Fault

if TYPE_CHECKING:
    from sre_env.backend import Backend
    from sre_env.sim.model import ModelBackend

__all__ = [
    "CreateObjects",
    "DeleteService",
    "RedeployDeployment",
    "ScaleDeployment",
    "ServiceSelector",
    "SetContainerResources",
    "TaintNode",
    "TrafficSurge",
]

Obj = dict[str, Any]
#: seconds the garbage collector needs to remove a deleted Deployment's ReplicaSets and pods
_GC_WAIT_S = 15.0


@dataclass(frozen=True)
class ServiceSelector(Fault):
    """A Service's selector is replaced (a bad edit, a half-finished relabelling)."""

    namespace: str
    service: str
    wrong: tuple[tuple[str, str], ...]
    right: tuple[tuple[str, str], ...]

    def _set(self, backend: "Backend", selector: tuple[tuple[str, str], ...]) -> None:
        backend.api.patch("Service", self.service, self.namespace, [{"op": "replace", "path": "/spec/selector", "value": dict(selector)}], "json")

    def inject(self, backend: "Backend") -> None:
        self._set(backend, self.wrong)

    def recover(self, backend: "Backend") -> None:
        self._set(backend, self.right)


def manifest_of(obj: Obj) -> Obj:
    """What ``kubectl get -o yaml`` minus the server's fields: the object as it was applied."""
    meta = obj["metadata"]
    out: Obj = {"apiVersion": obj.get("apiVersion", "v1"), "kind": obj["kind"], "metadata": {"name": meta["name"]}}
    if meta.get("namespace"):
        out["metadata"]["namespace"] = meta["namespace"]
    for key in ("labels", "annotations"):
        if meta.get(key):
            out["metadata"][key] = copy.deepcopy(meta[key])
    spec = copy.deepcopy(obj.get("spec") or {})
    if obj["kind"] == "Service":
        spec.pop("clusterIP", None)
        spec.pop("clusterIPs", None)
    out["spec"] = spec
    return out


@dataclass(frozen=True)
class DeleteService(Fault):
    """A Service is deleted (a cleanup script, a namespace-wide ``kubectl delete``)."""

    namespace: str
    service: str
    #: the Service's manifest before the fault, for recover()
    manifest: Obj = field(default_factory=dict, hash=False, compare=False)

    def inject(self, backend: "Backend") -> None:
        backend.api.delete("Service", self.service, self.namespace)

    def recover(self, backend: "Backend") -> None:
        backend.api.create(copy.deepcopy(self.manifest))


@dataclass(frozen=True)
class ScaleDeployment(Fault):
    namespace: str
    deployment: str
    replicas: int
    baseline: int = 1

    def inject(self, backend: "Backend") -> None:
        backend.api.scale("Deployment", self.deployment, self.namespace, self.replicas)

    def recover(self, backend: "Backend") -> None:
        backend.api.scale("Deployment", self.deployment, self.namespace, self.baseline)


@dataclass(frozen=True)
class RedeployDeployment(Fault):
    """A Deployment is deleted and re-created from an edited manifest (``kubectl replace --force``).

    Unlike an in-place edit, nothing of the old rollout survives: no old pod keeps
    serving while the new one waits, and the revision history starts again.
    ``pod_spec`` entries replace those keys of the pod template's spec;
    ``resources`` replaces ``container``'s resources.
    """

    namespace: str
    deployment: str
    pod_spec: tuple[tuple[str, Any], ...] = ()
    container: str = ""
    resources: Obj | None = field(default=None, hash=False, compare=False)
    #: the manifest before the fault, for recover()
    original: Obj = field(default_factory=dict, hash=False, compare=False)

    def inject(self, backend: "Backend") -> None:
        current = backend.api.get("Deployment", self.deployment, self.namespace)
        manifest = manifest_of(current)
        tspec = manifest["spec"]["template"]["spec"]
        for key, value in self.pod_spec:
            tspec[key] = copy.deepcopy(value)
        if self.resources is not None:
            ctr = next(c for c in tspec["containers"] if c["name"] == self.container)
            ctr["resources"] = copy.deepcopy(self.resources)
        backend.api.delete("Deployment", self.deployment, self.namespace)
        backend.advance(_GC_WAIT_S)
        backend.api.create(manifest)

    def recover(self, backend: "Backend") -> None:
        backend.api.delete("Deployment", self.deployment, self.namespace)
        backend.advance(_GC_WAIT_S)
        backend.api.create(copy.deepcopy(self.original))


@dataclass(frozen=True)
class TaintNode(Fault):
    node: str
    key: str
    value: str
    effect: str = "NoExecute"

    def inject(self, backend: "Backend") -> None:
        node = backend.api.get("Node", self.node)
        taints = list(node["spec"].get("taints") or []) + [{"key": self.key, "value": self.value, "effect": self.effect}]
        backend.api.patch("Node", self.node, None, {"spec": {"taints": taints}}, "merge")

    def recover(self, backend: "Backend") -> None:
        node = backend.api.get("Node", self.node)
        taints = [t for t in node["spec"].get("taints") or [] if t.get("key") != self.key]
        backend.api.patch("Node", self.node, None, {"spec": {"taints": taints or None}}, "merge")


@dataclass(frozen=True)
class SetContainerResources(Fault):
    """A container's resources are replaced in place (a rollout follows)."""

    namespace: str
    deployment: str
    container: str
    resources: Obj = field(default_factory=dict, hash=False, compare=False)
    original: Obj = field(default_factory=dict, hash=False, compare=False)

    def _set(self, backend: "Backend", resources: Obj) -> None:
        dep = backend.api.get("Deployment", self.deployment, self.namespace)
        idx = next(i for i, c in enumerate(dep["spec"]["template"]["spec"]["containers"]) if c["name"] == self.container)
        backend.api.patch("Deployment", self.deployment, self.namespace, [{"op": "replace", "path": f"/spec/template/spec/containers/{idx}/resources", "value": copy.deepcopy(resources)}], "json")

    def inject(self, backend: "Backend") -> None:
        self._set(backend, self.resources)

    def recover(self, backend: "Backend") -> None:
        self._set(backend, self.original)


@dataclass(frozen=True)
class CreateObjects(Fault):
    """Objects someone applied (a quota, a PriorityClass and the workload using it, an HPA)."""

    objects: tuple[Obj, ...] = field(default=(), hash=False, compare=False)

    def inject(self, backend: "Backend") -> None:
        for obj in self.objects:
            backend.api.create(copy.deepcopy(obj))

    def recover(self, backend: "Backend") -> None:
        for obj in reversed(self.objects):
            meta = obj["metadata"]
            try:
                backend.api.delete(obj["kind"], meta["name"], meta.get("namespace"))
            except Exception:  # noqa: BLE001 - already gone is fine for a recover
                pass


@dataclass(frozen=True)
class TrafficSurge(Fault):
    """Not a fault on its own: the load that turns a latent misconfiguration into an outage.

    It scales the simulator's load generator (a live cluster brings its own traffic).
    """

    app: str
    factor: float

    def inject(self, backend: "ModelBackend") -> None:
        backend.model.set_load_factor(self.app, self.factor)

    def recover(self, backend: "ModelBackend") -> None:
        backend.model.set_load_factor(self.app, 1.0)
