"""The StatefulSet controller: stable names, ordered start, per-replica claims, rolling update.

Pods are ``<name>-<ordinal>``; with ``podManagementPolicy: OrderedReady`` pod *i*
is created only when pods *0..i-1* are Running and Ready, scale-down removes the
highest ordinal first, and a template change replaces pods from the highest
ordinal down (above ``partition``), one at a time, as the real controller does.
Creates go at the pace of the controller's API client (sre_env.sim.control.client_limits).
Each ``volumeClaimTemplates`` entry yields a PVC ``<template>-<name>-<ordinal>``
that outlives its pod.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from sre_env.errors import ApiError
from sre_env.sim.control.apiserver import create
from sre_env.sim.control.client_limits import ClientLimits, client
from sre_env.sim.control.controllers import pod_is_ready, template_hash

if TYPE_CHECKING:
    from sre_env.sim.kernel.world import World

__all__ = ["reconcile_statefulsets", "reconcile_dirty_statefulsets"]

Obj = dict[str, Any]
REVISION_LABEL = "controller-revision-hash"


def reconcile_statefulsets(world: "World", only: set[tuple[str, str]] | None = None) -> None:
    store = world.store
    for sts in store.list("StatefulSet"):
        key = (sts["metadata"]["namespace"], sts["metadata"]["name"])
        if only is not None and key not in only:
            continue
        if sts["metadata"].get("deletionTimestamp"):
            continue
        _reconcile(world, sts)


def _ordinal(pod: Obj, name: str) -> int | None:
    suffix = pod["metadata"]["name"][len(name) + 1 :]
    return int(suffix) if suffix.isdigit() else None


def _reconcile(world: "World", sts: Obj) -> None:
    store = world.store
    meta, spec = sts["metadata"], sts["spec"]
    ns, name = meta["namespace"], meta["name"]
    replicas = int(spec.get("replicas", 1))
    revision = f"{name}-{template_hash(spec['template'])}"
    ordered = spec.get("podManagementPolicy", "OrderedReady") == "OrderedReady"
    pods: dict[int, Obj] = {}
    for pod in store.list("Pod", ns):
        refs = pod["metadata"].get("ownerReferences") or ()
        if any(r.get("uid") == meta["uid"] for r in refs):
            ordinal = _ordinal(pod, name)
            if ordinal is not None:
                pods[ordinal] = pod
    # create missing ordinals (in order, waiting for readiness when OrderedReady), as fast as the
    # controller's API client may (a Parallel set of many replicas fills over several ticks)
    limiter = client(world.slot(ClientLimits), "statefulset-controller")
    for i in range(replicas):
        pod = pods.get(i)
        if pod is None:
            if not limiter.take(world.clock.now):
                store.requeue(sts)
                break
            _ensure_claims(world, sts, i)
            try:
                pods[i] = _create_pod(world, sts, i, revision)
            except ApiError as exc:
                # admission refused it (a failing webhook, quota): the controller's event, retried next sync
                world.event(sts, "Warning", "FailedCreate", f"create Pod {name}-{i} in StatefulSet {name} failed error: {exc.message}", "statefulset-controller")
                store.requeue(sts)
                break
            world.event(sts, "Normal", "SuccessfulCreate", f"create Pod {name}-{i} in StatefulSet {name} successful", "statefulset-controller")
            if ordered:
                break
        elif ordered and not (pod_is_ready(pod) and not pod["metadata"].get("deletionTimestamp")):
            break
    else:
        # scale down: highest ordinal first
        extra = sorted((i for i in pods if i >= replicas), reverse=True)
        for i in extra:
            if not pods[i]["metadata"].get("deletionTimestamp"):
                world.delete_pod(pods[i])
                world.event(sts, "Normal", "SuccessfulDelete", f"delete Pod {name}-{i} in StatefulSet {name} successful", "statefulset-controller")
            if ordered:
                break
        if not extra:
            _rolling_update(world, sts, pods, replicas, revision)
    _status(world, sts, pods, replicas, revision)


def _rolling_update(world: "World", sts: Obj, pods: dict[int, Obj], replicas: int, revision: str) -> None:
    strategy = sts["spec"].get("updateStrategy") or {"type": "RollingUpdate"}
    if strategy.get("type") == "OnDelete":
        return
    partition = int((strategy.get("rollingUpdate") or {}).get("partition", 0))
    if any(not pod_is_ready(p) or p["metadata"].get("deletionTimestamp") for p in pods.values()):
        return  # one at a time: wait until the set is healthy
    for i in sorted(pods, reverse=True):
        if i < partition:
            break
        if pods[i]["metadata"].get("labels", {}).get(REVISION_LABEL) != revision:
            world.delete_pod(pods[i])
            return


def _ensure_claims(world: "World", sts: Obj, ordinal: int) -> None:
    ns, name = sts["metadata"]["namespace"], sts["metadata"]["name"]
    for tmpl in sts["spec"].get("volumeClaimTemplates") or ():
        claim = f"{tmpl['metadata']['name']}-{name}-{ordinal}"
        if world.store.find("PersistentVolumeClaim", claim, ns) is None:
            labels = dict(sts["spec"]["selector"].get("matchLabels") or {})
            create(
                world,
                {
                    "kind": "PersistentVolumeClaim",
                    "apiVersion": "v1",
                    "metadata": {"name": claim, "namespace": ns, "labels": labels},
                    "spec": copy.deepcopy(tmpl.get("spec") or {}),
                }
            )


def _create_pod(world: "World", sts: Obj, ordinal: int, revision: str) -> Obj:
    ns, name = sts["metadata"]["namespace"], sts["metadata"]["name"]
    template = copy.deepcopy(sts["spec"]["template"])
    meta = template.setdefault("metadata", {})
    pod_name = f"{name}-{ordinal}"
    meta.setdefault("labels", {}).update(
        {REVISION_LABEL: revision, "statefulset.kubernetes.io/pod-name": pod_name, "apps.kubernetes.io/pod-index": str(ordinal)}
    )
    pspec = template.setdefault("spec", {})
    pspec["hostname"] = pod_name
    if sts["spec"].get("serviceName"):
        pspec["subdomain"] = sts["spec"]["serviceName"]
    volumes = pspec.setdefault("volumes", [])
    for tmpl in sts["spec"].get("volumeClaimTemplates") or ():
        vol = tmpl["metadata"]["name"]
        if not any(v.get("name") == vol for v in volumes):
            volumes.append({"name": vol, "persistentVolumeClaim": {"claimName": f"{vol}-{name}-{ordinal}"}})
    meta["name"] = pod_name
    meta["namespace"] = ns
    meta["ownerReferences"] = [
        {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": name, "uid": sts["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}
    ]
    return create(world, {"kind": "Pod", "apiVersion": "v1", "metadata": meta, "spec": pspec})


def _status(world: "World", sts: Obj, pods: dict[int, Obj], replicas: int, revision: str) -> None:
    live = [p for p in pods.values() if not p["metadata"].get("deletionTimestamp")]
    ready = sum(1 for p in live if pod_is_ready(p))
    updated = sum(1 for p in live if p["metadata"].get("labels", {}).get(REVISION_LABEL) == revision)
    old = sts.get("status") or {}
    current_rev = old.get("currentRevision", revision)
    if updated == replicas and ready == replicas:
        current_rev = revision
    status: Obj = {
        "observedGeneration": sts["metadata"].get("generation", 1),
        "replicas": len(live),
        "readyReplicas": ready,
        "availableReplicas": ready,
        "currentReplicas": sum(1 for p in live if p["metadata"].get("labels", {}).get(REVISION_LABEL) == current_rev),
        "updatedReplicas": updated,
        "currentRevision": current_rev,
        "updateRevision": revision,
        "collisionCount": 0,
    }
    for k in ("readyReplicas", "availableReplicas", "currentReplicas", "updatedReplicas"):
        if not status[k]:
            del status[k]
    if status != old:
        sts["status"] = status
        world.store.touch(sts)


def reconcile_dirty_statefulsets(world: World, dirty: dict[tuple[str, str, str], None]) -> None:
    """Reconcile the StatefulSets that dirty objects (their pods, themselves) belong to."""
    only: set[tuple[str, str]] = set()
    for kind, ns, name in dirty:
        if kind == "StatefulSet":
            only.add((ns, name))
        elif kind == "Pod":
            pod = world.store.find("Pod", name, ns)
            ref = next((r for r in (pod["metadata"].get("ownerReferences") or ()) if r.get("kind") == "StatefulSet"), None) if pod else None
            if ref:
                only.add((ns, ref["name"]))
            elif pod is None and name.rsplit("-", 1)[-1].isdigit():
                only.add((ns, name.rsplit("-", 1)[0]))
    if only:
        reconcile_statefulsets(world, only)
