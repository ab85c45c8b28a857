"""The API server's create path: defaulting, admission and generated fields.

Everything the simulator creates goes through :func:`create`, as a real API
server's writes go through its handlers: cluster IPs for Services, the PVC
protection finalizer, the Pod and workload defaults, then the admission chain
(namespace lifecycle, mutating and validating webhooks, PodSecurity, quota,
priority). Controllers create their pods with :func:`new_pod_from_template`.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from sre_env.errors import ApiError
from sre_env.kube.kinds import kind_info
from sre_env.sim.control.admission import admit_pod as admission_chain
from sre_env.sim.control.sched_hooks import admit_pod
from sre_env.sim.kernel.world import World

__all__ = ["ApiServerState", "create", "new_pod_from_template", "check_create_allowed"]

Obj = dict[str, Any]


@dataclass
class ApiServerState:
    """The API server's own counters (the Service IP allocator)."""

    service_ip_counter: int = 10


def create(world: World, obj: Obj, *, copy_in: bool = True) -> Obj:
    """Create through the API's admission path (cluster IPs, finalizers, defaults).

    ``copy_in=False``: ``obj`` was built for this call and nothing else holds it, so
    the store takes it as is (a pod from a template is already a deep copy).
    """
    obj = copy.deepcopy(obj) if copy_in else obj
    kind = obj.get("kind")
    check_create_allowed(world, obj)
    if kind == "Service":
        spec = obj.setdefault("spec", {})
        spec.setdefault("type", "ClusterIP")
        if not spec.get("clusterIP"):
            spec["clusterIP"] = _allocate_service_ip(world)
        spec.setdefault("clusterIPs", [spec["clusterIP"]])
        for p in spec.get("ports") or ():
            p.setdefault("protocol", "TCP")
            p.setdefault("targetPort", p.get("port"))
        spec.setdefault("sessionAffinity", "None")
        # the API server's dual-stack and traffic-policy defaults (what `kubectl describe svc` prints)
        spec.setdefault("ipFamilies", ["IPv4"])
        spec.setdefault("ipFamilyPolicy", "SingleStack")
        spec.setdefault("internalTrafficPolicy", "Cluster")
    elif kind == "PersistentVolumeClaim":
        obj.setdefault("metadata", {}).setdefault("finalizers", ["kubernetes.io/pvc-protection"])
        obj.setdefault("status", {"phase": "Pending"})
    elif kind == "Pod":
        spec = obj.setdefault("spec", {})
        spec.setdefault("restartPolicy", "Always")
        spec.setdefault("dnsPolicy", "ClusterFirst")
        spec.setdefault("schedulerName", "default-scheduler")
        spec.setdefault("terminationGracePeriodSeconds", 30)
        spec.setdefault("tolerations", [
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
        ])
        obj.setdefault("status", {"phase": "Pending", "qosClass": "BestEffort"})
        obj = admission_chain(world, obj)
        admit_pod(world, obj)
    elif kind in ("Deployment", "StatefulSet"):
        spec = obj.setdefault("spec", {})
        spec.setdefault("replicas", 1)
        spec.setdefault("revisionHistoryLimit", 10)
        if kind == "Deployment":
            spec.setdefault("strategy", {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}})
            spec.setdefault("progressDeadlineSeconds", 600)
    return world.store.create(obj, copy_in=False)


def _allocate_service_ip(world: World) -> str:
    state = world.slot(ApiServerState)
    while True:
        state.service_ip_counter += 1
        n = (state.service_ip_counter * 7919) % 65000 + 20
        ip = f"10.96.{n // 250}.{n % 250 + 2}"
        if not any(s["spec"].get("clusterIP") == ip for s in world.store.iter("Service")):
            return ip


def new_pod_from_template(world: World, owner: Obj, template: Obj, prefix: str) -> Obj | None:
    meta = copy.deepcopy(template.get("metadata") or {})
    spec = copy.deepcopy(template.get("spec") or {})
    for _ in range(5):
        name = prefix + world.name_suffix()
        if world.store.find("Pod", name, owner["metadata"]["namespace"]) is None:
            break
    meta["name"] = name
    meta["namespace"] = owner["metadata"]["namespace"]
    meta["ownerReferences"] = [
        {"apiVersion": owner.get("apiVersion", "apps/v1"), "kind": owner["kind"], "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}
    ]
    meta.pop("generateName", None)
    return create(world, {"kind": "Pod", "apiVersion": "v1", "metadata": meta, "spec": spec}, copy_in=False)


def check_create_allowed(world: World, obj: Obj) -> None:
    """The NamespaceLifecycle admission plugin: nothing new in (or named like) a terminating namespace.

    New namespaces get the API's defaults (the ``kubernetes`` finalizer, phase Active).
    """
    kind = obj.get("kind", "")
    meta = obj.get("metadata") or {}
    if kind == "Namespace":
        existing = world.store.find("Namespace", meta.get("name", ""))
        if existing is not None and existing["metadata"].get("deletionTimestamp"):
            raise ApiError(409, "AlreadyExists", f'object is being deleted: namespaces "{meta.get("name", "")}" already exists')
        # the API's defaults for a new namespace
        obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
        obj.setdefault("status", {}).setdefault("phase", "Active")
        meta.setdefault("labels", {}).setdefault("kubernetes.io/metadata.name", meta.get("name", ""))
        return
    if kind == "Event":
        return
    try:
        namespaced = kind_info(kind).namespaced
    except KeyError:
        return
    if not namespaced:
        return
    ns = world.store.find("Namespace", meta.get("namespace") or "default")
    if ns is not None and ns["metadata"].get("deletionTimestamp"):
        resource = kind_info(kind).resource
        raise ApiError.forbidden(f'{resource} "{meta.get("name") or meta.get("generateName", "")}" is forbidden: unable to create new content in namespace {ns["metadata"]["name"]} because it is being terminated')
