"""The DaemonSet controller: one pod per eligible node, rolled node by node.

Eligible nodes match the template's nodeSelector and tolerate the node's
NoSchedule/NoExecute taints. ``RollingUpdate`` replaces old-template pods while
fewer than ``maxUnavailable`` nodes lack a ready pod — so a new template whose
pod never becomes ready (a bad image) stalls after the first node, exactly as
a real rollout does. ``OnDelete`` replaces a pod only when someone deletes it.
"""

from __future__ import annotations

import copy
import math
from typing import TYPE_CHECKING, Any

from sre_env.kube.selectors import has_labels
from sre_env.kube.tolerations import untolerated_taint
from sre_env.sim.control.apiserver import new_pod_from_template
from sre_env.sim.control.binding import bind_pod
from sre_env.sim.control.controllers import pod_is_ready, template_hash

if TYPE_CHECKING:
    from sre_env.sim.kernel.world import World

__all__ = ["reconcile_daemonsets", "daemonset_pods"]

Obj = dict[str, Any]

#: tolerations the DaemonSet controller adds to every daemon pod
_DS_TOLERATIONS = (
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
)


def _eligible(node: Obj, tspec: Obj) -> bool:
    if not has_labels(tspec.get("nodeSelector") or {}, node["metadata"].get("labels")):
        return False
    return untolerated_taint(node["spec"].get("taints"), [*(tspec.get("tolerations") or ()), *_DS_TOLERATIONS]) is None


def daemonset_pods(world: "World", ds: Obj) -> list[Obj]:
    uid = ds["metadata"]["uid"]
    return [p for p in world.store.iter("Pod") if p["metadata"]["namespace"] == ds["metadata"]["namespace"] and any(r.get("uid") == uid for r in p["metadata"].get("ownerReferences") or ())]


def _max_unavailable(ds: Obj, desired: int) -> int:
    ru = ((ds["spec"].get("updateStrategy") or {}).get("rollingUpdate") or {}).get("maxUnavailable", 1)
    if isinstance(ru, str) and ru.endswith("%"):
        try:
            return max(1, math.floor(desired * float(ru[:-1]) / 100.0))
        except ValueError:
            return 1
    try:
        return max(1, int(ru))
    except (TypeError, ValueError):
        return 1


def _create_pod(world: "World", ds: Obj, node: str, hash_: str) -> None:
    template = copy.deepcopy(ds["spec"]["template"])
    meta = template.setdefault("metadata", {})
    labels = meta.setdefault("labels", {})
    labels["controller-revision-hash"] = hash_
    labels["pod-template-generation"] = str(ds["metadata"].get("generation", 1))
    spec = template.setdefault("spec", {})
    tols = list(spec.get("tolerations") or ())
    for t in _DS_TOLERATIONS:
        if t not in tols:
            tols.append(dict(t))
    spec["tolerations"] = tols
    spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}]}}}
    pod = new_pod_from_template(world, ds, {"metadata": meta, "spec": spec}, ds["metadata"]["name"] + "-")
    if pod is not None:
        world.event(ds, "Normal", "SuccessfulCreate", f"Created pod: {pod['metadata']['name']}", "daemonset-controller")
        bind_pod(world, pod, node)


def _reconcile_one(world: "World", ds: Obj) -> None:
    tspec = ds["spec"]["template"].get("spec") or {}
    hash_ = template_hash(ds["spec"]["template"])
    nodes = sorted(world.store.list("Node"), key=lambda n: n["metadata"]["name"])
    eligible = [n["metadata"]["name"] for n in nodes if _eligible(n, tspec)]
    pods = daemonset_pods(world, ds)
    by_node: dict[str, list[Obj]] = {}
    for p in pods:
        if p["metadata"].get("deletionTimestamp"):
            by_node.setdefault(p["spec"].get("nodeName", ""), []).append(p)
            continue
        by_node.setdefault(p["spec"].get("nodeName", ""), []).append(p)
    for node, plist in sorted(by_node.items()):
        if node not in eligible:
            for p in plist:
                if not p["metadata"].get("deletionTimestamp"):
                    world.delete_pod(p)
                    world.event(ds, "Normal", "SuccessfulDelete", f"Deleted pod: {p['metadata']['name']}", "daemonset-controller")
    for node in eligible:
        live = [p for p in by_node.get(node, ()) if not p["metadata"].get("deletionTimestamp")]
        if not live and not by_node.get(node):
            _create_pod(world, ds, node, hash_)
        for extra in live[1:]:
            world.delete_pod(extra)
    strategy = (ds["spec"].get("updateStrategy") or {}).get("type", "RollingUpdate")
    if strategy == "RollingUpdate":
        desired = len(eligible)
        unavailable = sum(1 for n in eligible if not any(pod_is_ready(p) and not p["metadata"].get("deletionTimestamp") for p in by_node.get(n, ())))
        budget = _max_unavailable(ds, desired) - unavailable
        old = []
        for n in eligible:
            for p in by_node.get(n, ()):
                if not p["metadata"].get("deletionTimestamp") and (p["metadata"].get("labels") or {}).get("controller-revision-hash") != hash_:
                    old.append(p)
        # unhealthy old pods go first: replacing them costs no availability
        for p in sorted(old, key=lambda p: (pod_is_ready(p), p["spec"].get("nodeName", ""))):
            if not pod_is_ready(p):
                world.delete_pod(p)
                world.event(ds, "Normal", "SuccessfulDelete", f"Deleted pod: {p['metadata']['name']}", "daemonset-controller")
            elif budget > 0:
                budget -= 1
                world.delete_pod(p)
                world.event(ds, "Normal", "SuccessfulDelete", f"Deleted pod: {p['metadata']['name']}", "daemonset-controller")
    _write_status(world, ds, eligible, hash_)


def _write_status(world: "World", ds: Obj, eligible: list[str], hash_: str) -> None:
    pods = [p for p in daemonset_pods(world, ds) if not p["metadata"].get("deletionTimestamp")]
    on = {p["spec"].get("nodeName") for p in pods}
    ready = sum(1 for p in pods if pod_is_ready(p))
    updated = sum(1 for p in pods if (p["metadata"].get("labels") or {}).get("controller-revision-hash") == hash_)
    status = {
        "currentNumberScheduled": len(on & set(eligible)),
        "desiredNumberScheduled": len(eligible),
        "numberAvailable": ready,
        "numberMisscheduled": len(on - set(eligible)),
        "numberReady": ready,
        "observedGeneration": ds["metadata"].get("generation", 1),
        "updatedNumberScheduled": updated,
    }
    if len(eligible) - ready > 0:
        status["numberUnavailable"] = len(eligible) - ready
    if ds.get("status") != status:
        ds["status"] = status
        world.store.touch(ds)


def reconcile_daemonsets(world: "World", dirty: dict[tuple[str, str, str], None]) -> None:
    """Reconcile the DaemonSets a change could concern (their own edits, their pods, any node)."""
    sets = list(world.store.iter("DaemonSet"))
    if not sets:
        return
    namespaces = {ns for kind, ns, _ in dirty if kind == "Pod"}
    nodes_changed = any(kind == "Node" for kind, _, _ in dirty)
    touched = {(ns, name) for kind, ns, name in dirty if kind == "DaemonSet"}
    for ds in sorted(sets, key=lambda d: (d["metadata"]["namespace"], d["metadata"]["name"])):
        key = (ds["metadata"]["namespace"], ds["metadata"]["name"])
        if nodes_changed or key in touched or key[0] in namespaces:
            _reconcile_one(world, ds)
