"""kube-controller-manager in miniature: deployments, replica sets, GC, endpoints, volumes.

Each controller is a function ``reconcile_x(world)`` that reads the store and
writes only what changed, so a settled cluster costs almost nothing per tick.
The rolling update follows the Deployment controller's arithmetic (maxSurge
rounds up, maxUnavailable rounds down, never both zero).
"""

from __future__ import annotations

import copy
import hashlib
import json
from typing import TYPE_CHECKING, Any

from sre_env.errors import ApiError
from sre_env.kube.quantity import parse_int_or_percent
from sre_env.kube.selectors import has_labels
from sre_env.kube.timefmt import iso
from sre_env.sim.control.apiserver import new_pod_from_template
from sre_env.sim.control.client_limits import ClientLimits, TokenBucket, client
from sre_env.sim.control.sched_hooks import created_ok, failed_create, reconcile_extras

if TYPE_CHECKING:
    from sre_env.sim.kernel.world import World

__all__ = ["reconcile_all", "template_hash", "pod_is_ready", "owner_uid"]

Obj = dict[str, Any]
REVISION = "deployment.kubernetes.io/revision"
#: the ReplicaSet controller's burstReplicas: creates or deletes per sync (replica_set.go's BurstReplicas)
BURST_REPLICAS = 500
#: the first batch of manageReplicas' slow start (controller_utils.go's SlowStartInitialBatchSize)
SLOW_START_INITIAL_BATCH = 1
_HASH_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def template_hash(template: Obj) -> str:
    """A stable pod-template-hash label value (10 chars in Kubernetes' safe alphabet)."""
    digest = hashlib.blake2b(json.dumps(template, sort_keys=True).encode(), digest_size=8).digest()
    n = int.from_bytes(digest, "big")
    out = []
    for _ in range(10):
        n, r = divmod(n, len(_HASH_ALPHABET))
        out.append(_HASH_ALPHABET[r])
    return "".join(out)


def owner_uid(obj: Obj) -> str | None:
    for ref in obj["metadata"].get("ownerReferences") or ():
        if ref.get("controller"):
            return ref.get("uid")
    return None


def pod_is_ready(pod: Obj) -> bool:
    for cond in pod.get("status", {}).get("conditions") or ():
        if cond.get("type") == "Ready":
            return cond.get("status") == "True"
    return False


def _owner_ref(owner: Obj) -> dict[str, Any]:
    return {
        "apiVersion": owner.get("apiVersion", "apps/v1"),
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def _set_status(world: "World", obj: Obj, status: Obj) -> None:
    if obj.get("status") != status:
        obj["status"] = status
        world.store.touch(obj)


# --------------------------------------------------------------------------- deployments
def reconcile_deployments(world: "World", only: set[tuple[str, str]] | None = None) -> None:
    store = world.store
    rs_by_owner: dict[str, list[Obj]] = {}
    for rs in store.iter("ReplicaSet"):
        uid = owner_uid(rs)
        if uid:
            rs_by_owner.setdefault(uid, []).append(rs)
    for dep in store.list("Deployment"):
        if dep["metadata"].get("deletionTimestamp"):
            continue
        if only is not None and (dep["metadata"]["namespace"], dep["metadata"]["name"]) not in only:
            continue
        _reconcile_deployment(world, dep, rs_by_owner.get(dep["metadata"]["uid"], []))


def _reconcile_deployment(world: "World", dep: Obj, owned: list[Obj]) -> None:
    store = world.store
    spec = dep["spec"]
    ns = dep["metadata"]["namespace"]
    desired = int(spec.get("replicas", 1))
    key = (dep["metadata"]["uid"], dep["metadata"].get("generation", 1))
    thash = world.template_hashes.get(key)
    if thash is None:
        thash = world.template_hashes[key] = template_hash(spec["template"])
    owned.sort(key=lambda r: int(r["metadata"].get("annotations", {}).get(REVISION, "0")))
    max_rev = max((int(r["metadata"].get("annotations", {}).get(REVISION, "0")) for r in owned), default=0)
    new_rs = next((r for r in owned if r["metadata"].get("labels", {}).get("pod-template-hash") == thash), None)
    if new_rs is None:
        template = copy.deepcopy(spec["template"])
        template.setdefault("metadata", {}).setdefault("labels", {})["pod-template-hash"] = thash
        selector = copy.deepcopy(spec["selector"])
        selector.setdefault("matchLabels", {})["pod-template-hash"] = thash
        name = f"{dep['metadata']['name']}-{thash}"
        rs_obj = {
            "kind": "ReplicaSet",
            "apiVersion": "apps/v1",
            "metadata": {
                "name": name,
                "namespace": ns,
                "labels": dict(template["metadata"]["labels"]),
                "annotations": {
                    REVISION: str(max_rev + 1),
                    "deployment.kubernetes.io/desired-replicas": str(desired),
                    "deployment.kubernetes.io/max-replicas": str(desired + 1),
                },
                "ownerReferences": [_owner_ref(dep)],
            },
            "spec": {"replicas": 0, "selector": selector, "template": template},
        }
        try:
            new_rs = store.create(rs_obj, copy_in=False)
        except ApiError:
            return
        owned.append(new_rs)
        world.event(dep, "Normal", "ScalingReplicaSet", f"Scaled up replica set {name} from 0 to {min(desired, 1) if desired else 0}", "deployment-controller")
    elif new_rs["metadata"]["annotations"].get(REVISION) != str(max_rev) and len(owned) > 1:
        # Rolling back to an old template makes its ReplicaSet the newest revision.
        new_rs["metadata"]["annotations"][REVISION] = str(max_rev + 1)
        store.touch(new_rs)
    old = [r for r in owned if r is not new_rs]
    strategy = spec.get("strategy") or {}
    if spec.get("paused"):
        pass  # a paused rollout keeps its replica sets as they are
    elif strategy.get("type") == "Recreate":
        active_old = [r for r in old if r["spec"].get("replicas", 0) > 0 or r.get("status", {}).get("replicas", 0) > 0]
        for r in old:
            _scale_rs(world, dep, r, 0)
        if not active_old:
            _scale_rs(world, dep, new_rs, desired)
    else:
        ru = strategy.get("rollingUpdate") or {}
        surge = parse_int_or_percent(ru.get("maxSurge", "25%"), desired, True)
        unavail = parse_int_or_percent(ru.get("maxUnavailable", "25%"), desired, False)
        if surge == 0 and unavail == 0:
            unavail = 1
        all_rs = [new_rs, *old]
        total = sum(r["spec"].get("replicas", 0) for r in all_rs)
        # scale up the new replica set
        new_spec = new_rs["spec"].get("replicas", 0)
        if new_spec < desired:
            room = desired + surge - total
            if room > 0:
                _scale_rs(world, dep, new_rs, min(desired, new_spec + room))
        elif new_spec > desired:
            _scale_rs(world, dep, new_rs, desired)
        # scale down old ones, keeping at least desired - maxUnavailable available
        total = sum(r["spec"].get("replicas", 0) for r in all_rs)
        available = sum(r.get("status", {}).get("availableReplicas", 0) for r in all_rs)
        new_unavailable = new_rs["spec"].get("replicas", 0) - new_rs.get("status", {}).get("availableReplicas", 0)
        budget = total - (desired - unavail) - max(new_unavailable, 0)
        # old replicas that are not available can always go
        for r in old:
            spec_n = r["spec"].get("replicas", 0)
            unhealthy = spec_n - r.get("status", {}).get("availableReplicas", 0)
            if spec_n > 0 and unhealthy > 0:
                _scale_rs(world, dep, r, spec_n - unhealthy)
        total = sum(r["spec"].get("replicas", 0) for r in all_rs)
        budget = min(budget, available - (desired - unavail)) if available else budget
        budget = max(budget, 0)
        for r in old:
            spec_n = r["spec"].get("replicas", 0)
            if budget <= 0:
                break
            if spec_n > 0:
                cut = min(spec_n, budget)
                _scale_rs(world, dep, r, spec_n - cut)
                budget -= cut
    _cleanup_history(world, dep, old)
    _deployment_status(world, dep, new_rs, old, desired)


def _scale_rs(world: "World", dep: Obj, rs: Obj, replicas: int) -> None:
    cur = rs["spec"].get("replicas", 0)
    if cur == replicas:
        return
    rs["spec"]["replicas"] = replicas
    rs["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"] = str(dep["spec"].get("replicas", 1))
    world.store.touch(rs)
    verb = "up" if replicas > cur else "down"
    world.event(dep, "Normal", "ScalingReplicaSet", f"Scaled {verb} replica set {rs['metadata']['name']} from {cur} to {replicas}", "deployment-controller")


def _cleanup_history(world: "World", dep: Obj, old: list[Obj]) -> None:
    limit = int(dep["spec"].get("revisionHistoryLimit", 10))
    idle = [r for r in old if r["spec"].get("replicas", 0) == 0 and r.get("status", {}).get("replicas", 0) == 0]
    for r in idle[: max(len(idle) - limit, 0)]:
        world.store.remove("ReplicaSet", r["metadata"]["name"], r["metadata"]["namespace"])


def _deployment_status(world: "World", dep: Obj, new_rs: Obj, old: list[Obj], desired: int) -> None:
    all_rs = [new_rs, *old]
    st = lambda r, k: r.get("status", {}).get(k, 0)  # noqa: E731
    replicas = sum(st(r, "replicas") for r in all_rs)
    updated = st(new_rs, "replicas")
    ready = sum(st(r, "readyReplicas") for r in all_rs)
    available = sum(st(r, "availableReplicas") for r in all_rs)
    prev = dep.get("status", {})
    prev_conds = {c["type"]: c for c in prev.get("conditions", [])}
    now = iso(world.clock.now)

    def cond(type_: str, status: str, reason: str, message: str) -> Obj:
        old_c = prev_conds.get(type_)
        if old_c and old_c["status"] == status and old_c["reason"] == reason and old_c["message"] == message:
            return old_c
        transition = old_c["lastTransitionTime"] if old_c and old_c["status"] == status else now
        return {"type": type_, "status": status, "lastUpdateTime": now, "lastTransitionTime": transition, "reason": reason, "message": message}

    ru = (dep["spec"].get("strategy") or {}).get("rollingUpdate") or {}
    max_unavail = parse_int_or_percent(ru.get("maxUnavailable", "25%"), desired, False)
    min_avail = desired - max_unavail
    avail_ok = available >= min_avail
    name = new_rs["metadata"]["name"]
    complete = updated == desired and available == desired and replicas == desired and st(new_rs, "availableReplicas") == desired
    conditions = [
        cond(
            "Available",
            "True" if avail_ok else "False",
            "MinimumReplicasAvailable" if avail_ok else "MinimumReplicasUnavailable",
            "Deployment has minimum availability." if avail_ok else "Deployment does not have minimum availability.",
        ),
        cond(
            "Progressing",
            "True",
            "NewReplicaSetAvailable" if complete else "ReplicaSetUpdated",
            f'ReplicaSet "{name}" has successfully progressed.' if complete else f'ReplicaSet "{name}" is progressing.',
        ),
    ]
    # a ReplicaSet whose pod creates are refused (quota, admission) surfaces on its Deployment
    failure = next((c for r in all_rs for c in (r.get("status") or {}).get("conditions") or () if c.get("type") == "ReplicaFailure"), None)
    if failure is not None:
        conditions.append(cond("ReplicaFailure", "True", "FailedCreate", failure.get("message", "")))
    status: Obj = {
        "observedGeneration": dep["metadata"].get("generation", 1),
        "replicas": replicas,
        "updatedReplicas": updated,
        "readyReplicas": ready,
        "availableReplicas": available,
        "conditions": conditions,
    }
    if replicas - available > 0:
        status["unavailableReplicas"] = replicas - available
    for k in ("readyReplicas", "availableReplicas", "updatedReplicas", "replicas"):
        if not status[k]:
            del status[k]
    if dep["metadata"].get("annotations", {}).get(REVISION) != new_rs["metadata"]["annotations"].get(REVISION):
        dep["metadata"].setdefault("annotations", {})[REVISION] = new_rs["metadata"]["annotations"][REVISION]
        world.store.touch(dep)
    _set_status(world, dep, status)


# --------------------------------------------------------------------------- replica sets
def reconcile_replicasets(world: "World", only: set[tuple[str, str]] | None = None) -> None:
    store = world.store
    pods_by_owner: dict[str, list[Obj]] = {}
    orphans: dict[str, list[Obj]] = {}
    for pod in store.iter("Pod"):
        uid = owner_uid(pod)
        if uid:
            pods_by_owner.setdefault(uid, []).append(pod)
        elif not pod["metadata"].get("deletionTimestamp"):
            orphans.setdefault(pod["metadata"]["namespace"], []).append(pod)
    limiter = client(world.slot(ClientLimits), "replicaset-controller")
    for rs in store.list("ReplicaSet"):
        if only is not None and (rs["metadata"]["namespace"], rs["metadata"]["name"]) not in only:
            continue
        pods = _claim_pods(world, rs, pods_by_owner.get(rs["metadata"]["uid"], []), orphans.get(rs["metadata"]["namespace"], []))
        live = [p for p in pods if not p["metadata"].get("deletionTimestamp") and p.get("status", {}).get("phase") not in ("Failed", "Succeeded")]
        want = int(rs["spec"].get("replicas", 0))
        if len(live) < want and not rs["metadata"].get("deletionTimestamp"):
            _create_pods(world, rs, live, want - len(live), limiter)
        elif len(live) > want:
            # delete the least useful first: unscheduled, not ready, newest
            def rank(p: Obj) -> tuple[int, int, str]:
                return (1 if p["spec"].get("nodeName") else 0, 1 if pod_is_ready(p) else 0, "~" + p["metadata"]["creationTimestamp"])

            diff = min(len(live) - want, BURST_REPLICAS)
            granted = limiter.take(world.clock.now, diff)
            if granted < len(live) - want:
                store.requeue(rs)  # the rest in a later sync
            victims = sorted(live, key=rank)[:granted]
            for p in victims:
                world.delete_pod(p)
                live.remove(p)
                world.event(rs, "Normal", "SuccessfulDelete", f"Deleted pod: {p['metadata']['name']}", "replicaset-controller")
        ready = sum(1 for p in live if pod_is_ready(p))
        status: Obj = {"replicas": len(live), "fullyLabeledReplicas": len(live), "readyReplicas": ready, "availableReplicas": ready, "observedGeneration": rs["metadata"].get("generation", 1)}
        for k in ("fullyLabeledReplicas", "readyReplicas", "availableReplicas"):
            if not status[k]:
                del status[k]
        if (rs.get("status") or {}).get("conditions"):
            status["conditions"] = rs["status"]["conditions"]
        _set_status(world, rs, status)


def _create_pods(world: "World", rs: Obj, live: list[Obj], short: int, limiter: TokenBucket) -> None:
    """manageReplicas' slow start: batches of 1, 2, 4, ... until one has a failure.

    At most :data:`BURST_REPLICAS` per sync and what the controller's API client may
    send this tick; a ReplicaSet still short after that syncs again next tick.
    """
    diff = min(short, BURST_REPLICAS)
    want = len(live) + short
    batch = min(diff, SLOW_START_INITIAL_BATCH)
    remaining = diff
    while batch > 0:
        errors: list[ApiError] = []
        granted = limiter.take(world.clock.now, batch)
        for _ in range(granted):
            try:
                pod = new_pod_from_template(world, rs, rs["spec"]["template"], f"{rs['metadata']['name']}-")
            except ApiError as exc:
                # admission refused it (quota, priority class): FailedCreate, retried with back-off
                errors.append(exc)
                continue
            if pod is None:
                continue
            created_ok(world, rs)
            live.append(pod)
            world.event(rs, "Normal", "SuccessfulCreate", f"Created pod: {pod['metadata']['name']}", "replicaset-controller")
        if errors:
            failed_create(world, rs, errors)
            return
        if granted < batch:
            break  # throttled: the client waits for tokens
        remaining -= batch
        batch = min(2 * batch, remaining)
    if len(live) < want:
        world.store.requeue(rs)


def _claim_pods(world: "World", rs: Obj, owned: list[Obj], orphans: list[Obj]) -> list[Obj]:
    """The controller ref manager: release owned pods the selector no longer matches, adopt matching orphans."""
    match = ((rs["spec"].get("selector") or {}).get("matchLabels")) or {}
    # an empty selector (which the API would refuse) claims no pods
    out = []
    for p in owned:
        if match and has_labels(match, p["metadata"].get("labels")):
            out.append(p)
        else:
            # relabelled out of the selector: orphaned, no longer counted (and no longer collected)
            p["metadata"]["ownerReferences"] = [r for r in p["metadata"]["ownerReferences"] if not r.get("controller")] or None
            if p["metadata"]["ownerReferences"] is None:
                del p["metadata"]["ownerReferences"]
            world.store.touch(p)
    if rs["metadata"].get("deletionTimestamp"):
        return out
    for p in list(orphans):
        if match and has_labels(match, p["metadata"].get("labels")):
            p["metadata"].setdefault("ownerReferences", []).append(_owner_ref(rs))
            world.store.touch(p)
            orphans.remove(p)
            out.append(p)
    return out


# --------------------------------------------------------------------------- garbage collector
def reconcile_garbage(world: "World") -> None:
    store = world.store
    live_uids = {o["metadata"]["uid"] for kind in ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Node", "Job", "CronJob") for o in store.iter(kind)}
    for kind in ("ReplicaSet", "Job", "Pod"):
        for obj in store.list(kind):
            refs = obj["metadata"].get("ownerReferences") or ()
            if refs and all(r.get("uid") not in live_uids for r in refs):
                if kind == "Pod":
                    world.delete_pod(obj)
                else:
                    store.remove(kind, obj["metadata"]["name"], obj["metadata"]["namespace"])


# --------------------------------------------------------------------------- endpoints
def _resolve_target_port(pod: Obj, target: Any) -> int | None:
    if isinstance(target, int):
        return target
    if isinstance(target, str) and target.isdigit():
        return int(target)
    for ctr in pod["spec"].get("containers", []):
        for p in ctr.get("ports") or ():
            if p.get("name") == target:
                return int(p["containerPort"])
    return None


def reconcile_endpoints(world: "World", dirty: dict[tuple[str, str, str], None] | None = None) -> None:
    """Rebuild Endpoints of services whose pods or spec changed (all when ``dirty`` is None)."""
    store = world.store
    only: set[tuple[str, str]] | None = None
    if dirty is not None:
        only = set()
        changed_labels: dict[str, list[dict[str, str]]] = {}
        changed_pods: dict[str, set[str]] = {}
        whole_ns: set[str] = set()
        for kind, ns, name in dirty:
            if kind == "Service":
                only.add((ns, name))
            elif kind == "Pod":
                pod = store.find("Pod", name, ns)
                if pod is None:
                    whole_ns.add(ns)
                else:
                    changed_labels.setdefault(ns, []).append(pod["metadata"].get("labels") or {})
                    changed_pods.setdefault(ns, set()).add(name)
        if not only and not changed_labels and not whole_ns:
            return
        for svc in store.iter("Service"):
            ns = svc["metadata"]["namespace"]
            sel = svc["spec"].get("selector") or {}
            # a Service without a selector selects no pods
            if ns in whole_ns or any(sel and has_labels(sel, labels) for labels in changed_labels.get(ns, ())):
                only.add((ns, svc["metadata"]["name"]))
            elif sel and ns in changed_pods and _endpoints_list_any(store.find("Endpoints", svc["metadata"]["name"], ns), changed_pods[ns]):
                # a pod that no longer matches (relabelled) must leave the Endpoints it is in
                only.add((ns, svc["metadata"]["name"]))
    _reconcile_endpoints(world, only)


def _endpoints_list_any(ep: Obj | None, pod_names: set[str]) -> bool:
    for sub in (ep or {}).get("subsets") or ():
        for key in ("addresses", "notReadyAddresses"):
            for addr in sub.get(key) or ():
                if (addr.get("targetRef") or {}).get("name") in pod_names:
                    return True
    return False


def _reconcile_endpoints(world: "World", only: set[tuple[str, str]] | None) -> None:
    store = world.store
    pods_by_ns: dict[str, list[Obj]] = {}
    # only a pod bound to a node has an IP: thousands of Pending replicas cost nothing here
    for pod in store.bound_pods():
        pods_by_ns.setdefault(pod["metadata"]["namespace"], []).append(pod)
    for svc in store.list("Service"):
        ns, name = svc["metadata"]["namespace"], svc["metadata"]["name"]
        if only is not None and (ns, name) not in only:
            continue
        selector = svc["spec"].get("selector")
        if not selector:
            continue  # a Service without a selector: its Endpoints are the user's to write
        members = [
            p
            for p in pods_by_ns.get(ns, [])
            if has_labels(selector, p["metadata"].get("labels")) and p.get("status", {}).get("podIP") and not p["metadata"].get("deletionTimestamp")
        ]
        subsets: list[Obj] = []
        groups: dict[tuple, dict[str, list]] = {}
        for p in members:
            ports = []
            for sp in svc["spec"].get("ports", []):
                tp = _resolve_target_port(p, sp.get("targetPort", sp["port"]))
                if tp is None:
                    continue
                entry = {"port": tp, "protocol": sp.get("protocol", "TCP")}
                if sp.get("name"):
                    entry["name"] = sp["name"]
                ports.append(entry)
            if not ports:
                continue
            key = tuple(sorted((e.get("name", ""), e["port"], e["protocol"]) for e in ports))
            g = groups.setdefault(key, {"ports": ports, "ready": [], "notready": []})
            addr = {
                "ip": p["status"]["podIP"],
                "nodeName": p["spec"].get("nodeName"),
                "targetRef": {"kind": "Pod", "name": p["metadata"]["name"], "namespace": ns, "uid": p["metadata"]["uid"]},
            }
            (g["ready"] if pod_is_ready(p) else g["notready"]).append(addr)
        for key in sorted(groups):
            g = groups[key]
            sub: Obj = {}
            if g["ready"]:
                sub["addresses"] = sorted(g["ready"], key=lambda a: a["ip"])
            if g["notready"]:
                sub["notReadyAddresses"] = sorted(g["notready"], key=lambda a: a["ip"])
            sub["ports"] = g["ports"]
            subsets.append(sub)
        ep = store.find("Endpoints", name, ns)
        if ep is None:
            obj: Obj = {"kind": "Endpoints", "apiVersion": "v1", "metadata": {"name": name, "namespace": ns, "labels": dict(svc["metadata"].get("labels") or {})}}
            if subsets:
                obj["subsets"] = subsets
            store.create(obj, copy_in=False)
        elif (ep.get("subsets") or []) != subsets:
            if subsets:
                ep["subsets"] = subsets
            else:
                ep.pop("subsets", None)
            store.touch(ep)
    # endpoints whose service is gone
    for ep in store.list("Endpoints"):
        if store.find("Service", ep["metadata"]["name"], ep["metadata"]["namespace"]) is None:
            store.remove("Endpoints", ep["metadata"]["name"], ep["metadata"]["namespace"])


# --------------------------------------------------------------------------- volumes
def reconcile_volumes(world: "World") -> None:
    """Static binding, pvc-protection finalizer release and Delete reclaim of local-path volumes."""
    from sre_env.sim.control.attach import bind_static_claims

    store = world.store
    bind_static_claims(world)
    in_use: set[tuple[str, str]] = set()
    for pod in store.iter("Pod"):
        # like the pvc-protection controller: only pods that were scheduled hold a claim
        if not pod["spec"].get("nodeName") or pod.get("status", {}).get("phase") in ("Succeeded", "Failed"):
            continue
        for vol in pod["spec"].get("volumes") or ():
            claim = (vol.get("persistentVolumeClaim") or {}).get("claimName")
            if claim:
                in_use.add((pod["metadata"]["namespace"], claim))
    for pvc in store.list("PersistentVolumeClaim"):
        meta = pvc["metadata"]
        if meta.get("deletionTimestamp") and (meta["namespace"], meta["name"]) not in in_use:
            meta["finalizers"] = [f for f in meta.get("finalizers", []) if f != "kubernetes.io/pvc-protection"]
            if not meta["finalizers"]:
                store.remove("PersistentVolumeClaim", meta["name"], meta["namespace"])
    for pv in store.list("PersistentVolume"):
        ref = pv["spec"].get("claimRef")
        if not ref:
            continue
        claim = store.find("PersistentVolumeClaim", ref["name"], ref["namespace"])
        if claim is None or claim["metadata"]["uid"] != ref.get("uid"):
            if pv["spec"].get("persistentVolumeReclaimPolicy", "Delete") == "Delete":
                store.remove("PersistentVolume", pv["metadata"]["name"])
                world.fault_epoch += 1  # routes through this volume change
            elif pv.get("status", {}).get("phase") != "Released":
                pv["status"] = {"phase": "Released"}
                store.touch(pv)


def reconcile_all(world: "World", dirty: dict[tuple[str, str, str], None] | None = None) -> None:
    """Run the controllers over what changed (everything when ``dirty`` is None)."""
    if dirty is None:
        reconcile_garbage(world)
        reconcile_deployments(world)
        reconcile_replicasets(world)
        reconcile_volumes(world)
        return
    store = world.store
    kinds = {k for k, _, _ in dirty}
    removed = {(k, ns, n) for k, ns, n in dirty if store.find(k, n, ns or None) is None}
    if any(k in ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Node", "Job", "CronJob") for k, _, _ in removed):
        reconcile_garbage(world)
    rs_names: set[tuple[str, str]] = set()
    dep_names: set[tuple[str, str]] = set()
    for kind, ns, name in dirty:
        if kind == "Deployment":
            dep_names.add((ns, name))
        elif kind == "ReplicaSet":
            rs_names.add((ns, name))
        elif kind == "Pod":
            pod = store.find("Pod", name, ns)
            ref = next((r for r in (pod["metadata"].get("ownerReferences") or ()) if r.get("kind") == "ReplicaSet"), None) if pod else None
            rs_names.add((ns, ref["name"] if ref else name.rsplit("-", 1)[0]))
    for ns, name in list(rs_names):
        rs = store.find("ReplicaSet", name, ns)
        ref = next((r for r in (rs["metadata"].get("ownerReferences") or ()) if r.get("kind") == "Deployment"), None) if rs else None
        if ref:
            dep_names.add((ns, ref["name"]))
    if dep_names:
        before = set(store.dirty)
        reconcile_deployments(world, dep_names)
        # replica sets the deployment pass just created or scaled act in the same tick
        rs_names |= {(ns, n) for k, ns, n in store.dirty if k == "ReplicaSet" and (k, ns, n) not in before}
    if rs_names:
        reconcile_replicasets(world, rs_names)
    if kinds & {"PersistentVolumeClaim", "PersistentVolume"} or any(k == "Pod" for k, _, _ in removed):
        reconcile_volumes(world)
    reconcile_extras(world, dirty)
