"""kube-state-metrics: series derived from API objects, with ksm v2's names and labels.

Why per-object caching: these series change only when an object is written, and
a scrape must stay cheap. Each object's samples (keys resolved to TSDB columns,
values in a numpy array) are cached by its resourceVersion; a scrape reuses the
assembled block until the store's revision moves, then rebuilds only the
objects that changed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Iterable

import numpy as np

from sre_env.kube.quantity import cpu_millicores, memory_bytes
from sre_env.kube.timefmt import EPOCH, parse_iso

from .tsdb import TSDB, series_key

if TYPE_CHECKING:
    from sre_env.sim.kernel.world import World

__all__ = ["KubeStateMetrics"]

Obj = dict[str, Any]
Sample = tuple[str, float]
JOB = "kube-state-metrics"
EPOCH_UNIX = EPOCH.timestamp()
POD_PHASES = ("Pending", "Running", "Succeeded", "Failed", "Unknown")
PVC_PHASES = ("Lost", "Bound", "Pending")
PV_PHASES = ("Pending", "Available", "Bound", "Released", "Failed")
CONDITION_STATUSES = (("true", "True"), ("false", "False"), ("unknown", "Unknown"))


def _s(name: str, labels: dict[str, str], value: float) -> Sample:
    labels["job"] = JOB
    return series_key(name, labels), float(value)


def _unix(stamp: str | None) -> float | None:
    if not stamp:
        return None
    try:
        return parse_iso(stamp) + EPOCH_UNIX
    except ValueError:
        return None


def _conditions(name: str, base: dict[str, str], conditions: Iterable[Obj]) -> list[Sample]:
    out = []
    for c in conditions:
        for label, status in CONDITION_STATUSES:
            out.append(_s(name, {**base, "condition": c.get("type", ""), "status": label}, 1.0 if c.get("status") == status else 0.0))
    return out


def pod_samples(pod: Obj) -> list[Sample]:
    meta = pod["metadata"]
    spec = pod.get("spec") or {}
    st = pod.get("status") or {}
    base = {"namespace": meta["namespace"], "pod": meta["name"], "uid": meta.get("uid", "")}
    node = spec.get("nodeName", "")
    out: list[Sample] = []
    owner = next(iter(meta.get("ownerReferences") or ()), None)
    out.append(
        _s(
            "kube_pod_info",
            {
                **base,
                "host_ip": st.get("hostIP", ""),
                "pod_ip": st.get("podIP", ""),
                "node": node,
                "created_by_kind": owner["kind"] if owner else "<none>",
                "created_by_name": owner["name"] if owner else "<none>",
                "priority_class": spec.get("priorityClassName", ""),
                "host_network": "true" if spec.get("hostNetwork") else "false",
            },
            1,
        )
    )
    out.append(
        _s(
            "kube_pod_owner",
            {**base, "owner_kind": owner["kind"] if owner else "<none>", "owner_name": owner["name"] if owner else "<none>", "owner_is_controller": ("true" if owner.get("controller") else "false") if owner else "<none>"},
            1,
        )
    )
    phase = st.get("phase", "Pending")
    for ph in POD_PHASES:
        out.append(_s("kube_pod_status_phase", {**base, "phase": ph}, 1.0 if ph == phase else 0.0))
    for cond in st.get("conditions") or ():
        if cond.get("type") == "Ready":
            for label, status in CONDITION_STATUSES:
                out.append(_s("kube_pod_status_ready", {**base, "condition": label}, 1.0 if cond.get("status") == status else 0.0))
        elif cond.get("type") == "PodScheduled":
            for label, status in CONDITION_STATUSES:
                out.append(_s("kube_pod_status_scheduled", {**base, "condition": label}, 1.0 if cond.get("status") == status else 0.0))
    created = _unix(meta.get("creationTimestamp"))
    if created is not None:
        out.append(_s("kube_pod_created", dict(base), created))
    started = _unix(st.get("startTime"))
    if started is not None:
        out.append(_s("kube_pod_start_time", dict(base), started))
    deleted = _unix(meta.get("deletionTimestamp"))
    if deleted is not None:
        out.append(_s("kube_pod_deletion_timestamp", dict(base), deleted))
    for cs in st.get("containerStatuses") or ():
        c = {**base, "container": cs.get("name", "")}
        state = cs.get("state") or {}
        out.append(_s("kube_pod_container_info", {**c, "image": cs.get("image", ""), "image_spec": cs.get("image", ""), "image_id": cs.get("imageID", ""), "container_id": cs.get("containerID", "")}, 1))
        out.append(_s("kube_pod_container_status_restarts_total", dict(c), cs.get("restartCount", 0)))
        out.append(_s("kube_pod_container_status_ready", dict(c), 1.0 if cs.get("ready") else 0.0))
        out.append(_s("kube_pod_container_status_running", dict(c), 1.0 if "running" in state else 0.0))
        out.append(_s("kube_pod_container_status_waiting", dict(c), 1.0 if "waiting" in state else 0.0))
        out.append(_s("kube_pod_container_status_terminated", dict(c), 1.0 if "terminated" in state else 0.0))
        if "waiting" in state:
            out.append(_s("kube_pod_container_status_waiting_reason", {**c, "reason": state["waiting"].get("reason", "")}, 1))
        if "terminated" in state:
            out.append(_s("kube_pod_container_status_terminated_reason", {**c, "reason": state["terminated"].get("reason", "")}, 1))
        last = (cs.get("lastState") or {}).get("terminated")
        if last:
            out.append(_s("kube_pod_container_status_last_terminated_reason", {**c, "reason": last.get("reason", "")}, 1))
            out.append(_s("kube_pod_container_status_last_terminated_exitcode", dict(c), last.get("exitCode", 0)))
    for ctr in spec.get("containers") or ():
        c = {**base, "container": ctr.get("name", ""), "node": node}
        res = ctr.get("resources") or {}
        for kind, name in (("requests", "kube_pod_container_resource_requests"), ("limits", "kube_pod_container_resource_limits")):
            vals = res.get(kind) or {}
            if "cpu" in vals:
                out.append(_s(name, {**c, "resource": "cpu", "unit": "core"}, cpu_millicores(vals["cpu"]) / 1000.0))
            if "memory" in vals:
                out.append(_s(name, {**c, "resource": "memory", "unit": "byte"}, memory_bytes(vals["memory"])))
    return out


def deployment_samples(dep: Obj) -> list[Sample]:
    meta = dep["metadata"]
    spec = dep.get("spec") or {}
    st = dep.get("status") or {}
    base = {"namespace": meta["namespace"], "deployment": meta["name"]}
    out = [
        _s("kube_deployment_spec_replicas", dict(base), spec.get("replicas", 1)),
        _s("kube_deployment_spec_paused", dict(base), 1.0 if spec.get("paused") else 0.0),
        _s("kube_deployment_status_replicas", dict(base), st.get("replicas", 0)),
        _s("kube_deployment_status_replicas_available", dict(base), st.get("availableReplicas", 0)),
        _s("kube_deployment_status_replicas_unavailable", dict(base), st.get("unavailableReplicas", 0)),
        _s("kube_deployment_status_replicas_updated", dict(base), st.get("updatedReplicas", 0)),
        _s("kube_deployment_status_replicas_ready", dict(base), st.get("readyReplicas", 0)),
        _s("kube_deployment_status_observed_generation", dict(base), st.get("observedGeneration", 0)),
        _s("kube_deployment_metadata_generation", dict(base), meta.get("generation", 1)),
    ]
    created = _unix(meta.get("creationTimestamp"))
    if created is not None:
        out.append(_s("kube_deployment_created", dict(base), created))
    out += _conditions("kube_deployment_status_condition", base, st.get("conditions") or ())
    return out


def statefulset_samples(sts: Obj) -> list[Sample]:
    meta = sts["metadata"]
    spec = sts.get("spec") or {}
    st = sts.get("status") or {}
    base = {"namespace": meta["namespace"], "statefulset": meta["name"]}
    return [
        _s("kube_statefulset_replicas", dict(base), spec.get("replicas", 1)),
        _s("kube_statefulset_status_replicas", dict(base), st.get("replicas", 0)),
        _s("kube_statefulset_status_replicas_ready", dict(base), st.get("readyReplicas", 0)),
        _s("kube_statefulset_status_replicas_available", dict(base), st.get("availableReplicas", 0)),
        _s("kube_statefulset_status_replicas_current", dict(base), st.get("currentReplicas", 0)),
        _s("kube_statefulset_status_replicas_updated", dict(base), st.get("updatedReplicas", 0)),
        _s("kube_statefulset_status_observed_generation", dict(base), st.get("observedGeneration", 0)),
        _s("kube_statefulset_metadata_generation", dict(base), meta.get("generation", 1)),
    ]


def _resource_samples(name: str, base: dict[str, str], values: dict[str, Any]) -> list[Sample]:
    out = []
    if "cpu" in values:
        out.append(_s(name, {**base, "resource": "cpu", "unit": "core"}, cpu_millicores(values["cpu"]) / 1000.0))
    if "memory" in values:
        out.append(_s(name, {**base, "resource": "memory", "unit": "byte"}, memory_bytes(values["memory"])))
    if "ephemeral-storage" in values:
        out.append(_s(name, {**base, "resource": "ephemeral_storage", "unit": "byte"}, memory_bytes(values["ephemeral-storage"])))
    if "pods" in values:
        out.append(_s(name, {**base, "resource": "pods", "unit": "integer"}, float(values["pods"])))
    return out


def node_samples(node: Obj) -> list[Sample]:
    meta = node["metadata"]
    spec = node.get("spec") or {}
    st = node.get("status") or {}
    info = st.get("nodeInfo") or {}
    base = {"node": meta["name"]}
    ip = next((a["address"] for a in st.get("addresses") or () if a.get("type") == "InternalIP"), "")
    out = [
        _s(
            "kube_node_info",
            {
                **base,
                "kernel_version": info.get("kernelVersion", ""),
                "os_image": info.get("osImage", ""),
                "container_runtime_version": info.get("containerRuntimeVersion", ""),
                "kubelet_version": info.get("kubeletVersion", ""),
                "kubeproxy_version": info.get("kubeProxyVersion", ""),
                "internal_ip": ip,
                "pod_cidr": spec.get("podCIDR", ""),
                "provider_id": spec.get("providerID", ""),
            },
            1,
        ),
        _s("kube_node_spec_unschedulable", dict(base), 1.0 if spec.get("unschedulable") else 0.0),
    ]
    for taint in spec.get("taints") or ():
        out.append(_s("kube_node_spec_taint", {**base, "key": taint.get("key", ""), "value": taint.get("value", ""), "effect": taint.get("effect", "")}, 1))
    out += _conditions("kube_node_status_condition", base, st.get("conditions") or ())
    out += _resource_samples("kube_node_status_allocatable", base, st.get("allocatable") or {})
    out += _resource_samples("kube_node_status_capacity", base, st.get("capacity") or {})
    return out


def pvc_samples(pvc: Obj) -> list[Sample]:
    meta = pvc["metadata"]
    spec = pvc.get("spec") or {}
    base = {"namespace": meta["namespace"], "persistentvolumeclaim": meta["name"]}
    phase = (pvc.get("status") or {}).get("phase", "Pending")
    out = [
        _s("kube_persistentvolumeclaim_info", {**base, "storageclass": spec.get("storageClassName", ""), "volumename": spec.get("volumeName", ""), "volumemode": spec.get("volumeMode", "Filesystem")}, 1),
    ]
    out += [_s("kube_persistentvolumeclaim_status_phase", {**base, "phase": ph}, 1.0 if ph == phase else 0.0) for ph in PVC_PHASES]
    storage = ((spec.get("resources") or {}).get("requests") or {}).get("storage")
    if storage:
        out.append(_s("kube_persistentvolumeclaim_resource_requests_storage_bytes", dict(base), memory_bytes(storage)))
    return out


def pv_samples(pv: Obj) -> list[Sample]:
    meta = pv["metadata"]
    base = {"persistentvolume": meta["name"]}
    phase = (pv.get("status") or {}).get("phase", "Pending")
    out = [_s("kube_persistentvolume_status_phase", {**base, "phase": ph}, 1.0 if ph == phase else 0.0) for ph in PV_PHASES]
    cap = ((pv.get("spec") or {}).get("capacity") or {}).get("storage")
    if cap:
        out.append(_s("kube_persistentvolume_capacity_bytes", dict(base), memory_bytes(cap)))
    return out


KINDS: tuple[tuple[str, Callable[[Obj], list[Sample]]], ...] = (
    ("Node", node_samples),
    ("Pod", pod_samples),
    ("Deployment", deployment_samples),
    ("StatefulSet", statefulset_samples),
    ("PersistentVolumeClaim", pvc_samples),
    ("PersistentVolume", pv_samples),
)


class KubeStateMetrics:
    """The object-derived block of a scrape, cached per object resourceVersion, kind and store revision."""

    def __init__(self) -> None:
        #: kind -> object key -> (resourceVersion, columns, values); rebuilt per kind, so deleted objects drop out
        self._objects: dict[str, dict[str, tuple[str, np.ndarray, np.ndarray]]] = {}
        self._rev = -1
        #: kind -> (kind revision, columns, values) of that kind's objects
        self._kinds: dict[str, tuple[int, np.ndarray, np.ndarray]] = {}
        self._block: tuple[np.ndarray, np.ndarray] = (np.empty(0, dtype=np.int64), np.empty(0))

    def collect(self, world: "World", tsdb: TSDB) -> tuple[np.ndarray, np.ndarray]:
        store = world.store
        if store.revision == self._rev:
            return self._block
        dirty = False
        # kube-state-metrics exports only what its service account may list (sre_env.sim.control.kube_state_metrics)
        from sre_env.sim.control.kube_state_metrics import denied_kinds

        denied = denied_kinds(world)
        for kind, fn in KINDS:
            krev = store.kind_revision.get(kind, 0) + 1_000_000 * store.membership_revision.get(kind, 0) + (-1 if kind in denied else 0) * 10**15
            cached = self._kinds.get(kind)
            if cached is not None and cached[0] == krev:
                continue
            cols_parts, val_parts = [], []
            old = self._objects.get(kind) or {}
            fresh: dict[str, tuple[str, np.ndarray, np.ndarray]] = {}
            for obj in (() if kind in denied else store.iter(kind)):
                meta = obj["metadata"]
                key = meta.get("uid") or f"{meta.get('namespace', '')}/{meta['name']}"
                rv = meta.get("resourceVersion", "")
                entry = old.get(key)
                if entry is None or entry[0] != rv:
                    samples = fn(obj)
                    entry = (rv, tsdb.columns([k for k, _ in samples]), np.fromiter((v for _, v in samples), dtype=np.float64, count=len(samples)))
                fresh[key] = entry
                cols_parts.append(entry[1])
                val_parts.append(entry[2])
            self._objects[kind] = fresh
            if cols_parts:
                block = (krev, np.concatenate(cols_parts), np.concatenate(val_parts))
            else:
                block = (krev, np.empty(0, dtype=np.int64), np.empty(0))
            if cached is None or not (np.array_equal(cached[1], block[1]) and np.array_equal(cached[2], block[2])):
                dirty = True
            self._kinds[kind] = block
        self._rev = store.revision
        if dirty:
            parts = [self._kinds[k] for k, _ in KINDS if k in self._kinds]
            self._block = (np.concatenate([p[1] for p in parts]), np.concatenate([p[2] for p in parts]))
        return self._block

    # the caches travel with a snapshot: rebuilding every object's series after each
    # restore would cost more than carrying them (they reference TSDB columns, which a
    # snapshot restores identically)
