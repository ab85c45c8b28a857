"""kube-scheduler in miniature: filter nodes, score by free CPU, bind, explain failures.

The failure message follows the real scheduler's wording
("0/4 nodes are available: 1 node(s) were unschedulable, ...") because agents
read it to find the cause.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sre_env.kube.affinity import (
    AFFINITY_REASON,
    NODE_AFFINITY_REASON,
    inter_pod_reason,
    node_matches,
)
from sre_env.kube.quantity import cpu_millicores, memory_bytes
from sre_env.kube.timefmt import iso
from sre_env.kube.tolerations import untolerated_taint
from sre_env.sim.control.binding import bind_pod
from sre_env.sim.control.preemption import preempt, select_victims
from sre_env.sim.control.priority import pod_priority

if TYPE_CHECKING:
    from sre_env.sim.kernel.world import World

__all__ = ["schedule_pending", "pod_requests"]

Obj = dict[str, Any]


def pod_requests(pod: Obj) -> tuple[int, int]:
    cpu = mem = 0
    for ctr in pod["spec"].get("containers", []):
        req = (ctr.get("resources") or {}).get("requests") or {}
        try:
            cpu += cpu_millicores(req.get("cpu", 0))
            mem += memory_bytes(req.get("memory", 0))
        except ValueError:
            pass
    return cpu, mem


def _taint_text(t: Obj) -> str:
    return f"{{{t['key']}: {t.get('value', '')}}}"


def _pv_node(world: "World", pod: Obj) -> tuple[str | None, str | None]:
    """(required node from a bound local PV, or an error reason when a claim is unusable)."""
    ns = pod["metadata"]["namespace"]
    for vol in pod["spec"].get("volumes") or ():
        claim = (vol.get("persistentVolumeClaim") or {}).get("claimName")
        if not claim:
            continue
        pvc = world.store.find("PersistentVolumeClaim", claim, ns)
        if pvc is None:
            return None, f'persistentvolumeclaim "{claim}" not found'
        if pvc["metadata"].get("deletionTimestamp"):
            return None, f'persistentvolumeclaim "{claim}" is being deleted'
        pv_name = pvc["spec"].get("volumeName")
        if pv_name:
            pv = world.store.find("PersistentVolume", pv_name)
            if pv is None:
                return None, f'persistentvolume "{pv_name}" not found'
            terms = ((pv["spec"].get("nodeAffinity") or {}).get("required") or {}).get("nodeSelectorTerms") or []
            for term in terms:
                for expr in term.get("matchExpressions", []):
                    if expr.get("key") == "kubernetes.io/hostname" and expr.get("values"):
                        return expr["values"][0], None
    return None, None


@dataclass
class _PodFacts:
    """What the scheduler derives from one pod version: its requests and its scheduling signature.

    Derived data, keyed by uid and resourceVersion and dropped from snapshots: pods of one
    template share a signature, so 5000 replicas that cannot fit cost one filter pass.
    """

    facts: dict[str, tuple[str, tuple[int, int], str]] = field(default_factory=dict)

    def __getstate__(self) -> dict:
        return {"facts": {}}

    def of(self, pod: Obj) -> tuple[tuple[int, int], str]:
        meta = pod["metadata"]
        rv = meta.get("resourceVersion", "")
        hit = self.facts.get(meta["uid"])
        if hit is not None and hit[0] == rv:
            return hit[1], hit[2]
        req = pod_requests(pod)
        spec = pod["spec"]
        claims = [(v.get("persistentVolumeClaim") or {}).get("claimName") for v in spec.get("volumes") or () if isinstance(v, dict)]
        sig = repr((meta["namespace"], sorted((meta.get("labels") or {}).items()), spec.get("nodeSelector"), spec.get("affinity"), spec.get("tolerations"), pod_priority(pod), spec.get("preemptionPolicy"), req, claims))
        self.facts[meta["uid"]] = (rv, req, sig)
        return req, sig

    def prune(self, live: int) -> None:
        if len(self.facts) > 2 * live + 1024:
            self.facts.clear()


@dataclass
class _Queue:
    """What the last pass saw (derived; dropped from snapshots, so a restored world starts with a full pass).

    ``key`` fingerprints everything a pending pod's outcome depends on besides the pod itself
    (the nodes, the pods bound to them, volumes); ``None`` after a pass that bound or preempted.
    While it holds, a pending pod that was not written since gets the same answer as before,
    so it is not tried again (kube-scheduler parks such pods among its unschedulable ones
    until a cluster event may help them).
    """

    key: tuple | None = None

    def __getstate__(self) -> dict:
        return {"key": None}


def _state_key(world: "World", nodes: list[Obj], bound: list[Obj], facts: _PodFacts) -> tuple:
    kr = world.store.kind_revision
    node_part = tuple(
        (n["metadata"]["name"], repr(((n.get("spec") or {}).get("unschedulable"), (n.get("spec") or {}).get("taints"), (n.get("status") or {}).get("allocatable"), n["metadata"].get("labels"))), world.node_ready(n["metadata"]["name"]))
        for n in nodes
    )
    pod_part = []
    for p in bound:
        meta = p["metadata"]
        phase = (p.get("status") or {}).get("phase")
        if phase in ("Succeeded", "Failed"):
            continue
        pod_part.append((meta["uid"], p["spec"].get("nodeName"), facts.of(p)[1], bool(meta.get("deletionTimestamp")), meta["name"], (p.get("status") or {}).get("startTime") or meta.get("creationTimestamp", "")))
    return (node_part, hash(tuple(pod_part)), len(pod_part), kr.get("PersistentVolumeClaim", 0), kr.get("PersistentVolume", 0))


def _queue_order(p: Obj) -> tuple:
    # the scheduling queue: higher priority first, then first come first served
    return (-pod_priority(p), p["metadata"].get("creationTimestamp", ""), p["metadata"]["namespace"], p["metadata"]["name"])


def _pending(p: Obj) -> bool:
    return not p["spec"].get("nodeName") and not p["metadata"].get("deletionTimestamp")


def schedule_pending(world: "World", changed: dict[tuple[str, str, str], None] | None = None) -> None:
    """One scheduling pass over the queue; ``changed``: the objects written since the last pass
    (None: try every pending pod). Pods that did not change are tried again only when the
    cluster they were tried against did."""
    store = world.store
    facts = world.slot(_PodFacts)
    queue = world.slot(_Queue)
    nodes = store.list("Node")
    bound = store.bound_pods()
    by_name = {n["metadata"]["name"]: n for n in nodes}
    used: dict[str, list[int]] = {n["metadata"]["name"]: [0, 0, 0] for n in nodes}
    #: bound pods per node (for preemption) and those that take part in inter-pod affinity
    on_node: dict[str, list[Obj]] = {name: [] for name in used}
    placed: list[Obj] = []
    for p in bound:
        node = p["spec"].get("nodeName")
        if node in used and p.get("status", {}).get("phase") not in ("Succeeded", "Failed"):
            c, m = facts.of(p)[0]
            used[node][0] += c
            used[node][1] += m
            used[node][2] += 1
            on_node[node].append(p)
            if not p["metadata"].get("deletionTimestamp"):
                placed.append(p)
    key = _state_key(world, nodes, bound, facts)
    full = changed is None or key != queue.key
    if full:
        pending = [p for p in store.iter("Pod") if _pending(p)]
        facts.prune(store.count("Pod"))
    else:
        pending = []
        for kind, ns, name in changed:
            if kind == "Pod":
                p = store.find("Pod", name, ns)
                if p is not None and _pending(p):
                    pending.append(p)
    queue.key = key
    if not pending:
        return
    pending.sort(key=_queue_order)
    anti_holders = any(_has_affinity(p) for p in placed)
    #: bumped whenever a bind or a preemption changes what the nodes hold in this pass
    version = 0
    #: signature -> (version, message) of a pod that found no node and preempted nothing: an
    #: identical pod at the same version gets the same answer (the scheduler's work stays
    #: proportional to the distinct pods pending, not to their number)
    failed: dict[str, tuple[int, str]] = {}
    i = 0
    while i < len(pending):
        pod = pending[i]
        i += 1
        if version and not full:
            # the nodes changed under the queue: every pod behind this one is tried again, in order
            full = True
            at = _queue_order(pending[i - 2]) if i >= 2 else None
            rest = sorted((p for p in store.iter("Pod") if _pending(p) and (at is None or _queue_order(p) > at)), key=_queue_order)
            pending = pending[: i - 1] + rest
            if not rest:
                break
            pod = pending[i - 1]
        (cpu, mem), sig = facts.of(pod)
        known = failed.get(sig)
        if known is not None and known[0] == version:
            _unschedulable(world, pod, known[1])
            continue
        reasons: Counter[str] = Counter()
        required_node, claim_error = _pv_node(world, pod)
        if claim_error:
            _unschedulable(world, pod, f"0/{len(nodes)} nodes are available: {claim_error}. preemption: 0/{len(nodes)} nodes are available: {len(nodes)} Preemption is not helpful for scheduling.")
            continue
        fits: list[tuple[float, str]] = []
        #: nodes that failed only for lack of resources (preemption could help there): node -> free
        resource_only: dict[str, tuple[int, int, int]] = {}
        inter_pod = anti_holders or _has_affinity(pod)
        #: nodes failing inter-pod anti-affinity: preemption is tried there (and finds no victims here)
        anti_only = 0
        for n in nodes:
            name = n["metadata"]["name"]
            alloc = (n.get("status") or {}).get("allocatable") or {}  # a Node no kubelet posted for has none
            if n["spec"].get("unschedulable"):
                reasons["node(s) were unschedulable"] += 1
                continue
            bad_taint = untolerated_taint(n["spec"].get("taints"), pod["spec"].get("tolerations"))
            if bad_taint is not None:
                reasons[f"node(s) had untolerated taint {_taint_text(bad_taint)}"] += 1
                continue
            if not world.node_ready(name):
                reasons["node(s) had untolerated taint {node.kubernetes.io/unreachable: }"] += 1
                continue
            if not node_matches(pod, n):
                reasons[NODE_AFFINITY_REASON] += 1
                continue
            # NodeResourcesFit runs before VolumeBinding and reports every short resource
            free_cpu = cpu_millicores(alloc.get("cpu", "0")) - used[name][0]
            free_mem = memory_bytes(alloc.get("memory", "0")) - used[name][1]
            slots = int(alloc.get("pods", 110)) - used[name][2]
            short = [r for r, bad in (("Too many pods", slots <= 0), ("Insufficient cpu", cpu > free_cpu), ("Insufficient memory", mem > free_mem)) if bad]
            if short:
                for r in short:
                    reasons[r] += 1
                if required_node is None or required_node == name:
                    resource_only[name] = (free_cpu, free_mem, slots)
                continue
            if required_node is not None and required_node != name:
                reasons["node(s) had volume node affinity conflict"] += 1
                continue
            if inter_pod:
                why = inter_pod_reason(pod, n, by_name, placed)
                if why is not None:
                    reasons[why] += 1
                    anti_only += why != AFFINITY_REASON
                    continue
            fits.append((-(free_cpu - cpu) / max(cpu_millicores(alloc["cpu"]), 1), name))
        if not fits:
            # FitError sorts the "<count> <reason>" strings themselves, as does the preemption summary
            parts = ", ".join(sorted(f"{count} {reason}" for reason, count in reasons.items()))
            candidates: dict[str, list[Obj]] = {}
            for name, free in resource_only.items():
                victims = select_victims(pod, on_node[name], free, pod_requests)
                if victims:
                    candidates[name] = victims
            chosen = preempt(world, pod, candidates)
            if chosen is not None:
                node, victims = chosen
                # the victims' room is now the preemptor's (nominated), not anyone else's
                for v in victims:
                    c, m = pod_requests(v)
                    used[node][0] -= c
                    used[node][1] -= m
                    used[node][2] -= 1
                    if v in placed:
                        placed.remove(v)
                used[node][0] += cpu
                used[node][1] += mem
                used[node][2] += 1
                version += 1
                _unschedulable(world, pod, f"0/{len(nodes)} nodes are available: {parts}.")
                continue
            helpful = len(resource_only) + anti_only
            pre = sorted(
                f"{n} {why}" for n, why in ((len(nodes) - helpful, "Preemption is not helpful for scheduling"), (helpful, "No preemption victims found for incoming pod")) if n
            )
            preempt_msg = f"preemption: 0/{len(nodes)} nodes are available: {', '.join(pre)}."
            message = f"0/{len(nodes)} nodes are available: {parts}. {preempt_msg}"
            failed[sig] = (version, message)
            _unschedulable(world, pod, message)
            continue
        fits.sort()
        node = fits[0][1]
        used[node][0] += cpu
        used[node][1] += mem
        used[node][2] += 1
        on_node[node].append(pod)
        placed.append(pod)
        if pod.get("status", {}).get("nominatedNodeName"):
            del pod["status"]["nominatedNodeName"]
        version += 1
        bind_pod(world, pod, node)
        anti_holders = anti_holders or _has_affinity(pod)
    if version:
        queue.key = None  # the pass changed the nodes: the next one tries every pending pod


def _has_affinity(pod: Obj) -> bool:
    aff = (pod.get("spec") or {}).get("affinity") or {}
    return any((aff.get(k) or {}).get("requiredDuringSchedulingIgnoredDuringExecution") for k in ("podAffinity", "podAntiAffinity"))


def _unschedulable(world: "World", pod: Obj, message: str) -> None:
    status = pod.setdefault("status", {})
    conds = status.get("conditions") or []
    cur = next((c for c in conds if c["type"] == "PodScheduled"), None)
    if cur and cur.get("message") == message and status.get("phase") == "Pending":
        return
    status["phase"] = "Pending"
    status["qosClass"] = status.get("qosClass", "Burstable")
    status["conditions"] = [
        {"type": "PodScheduled", "status": "False", "lastProbeTime": None, "lastTransitionTime": iso(world.clock.now), "reason": "Unschedulable", "message": message}
    ]
    world.store.touch(pod)
    world.event(pod, "Warning", "FailedScheduling", message, "default-scheduler")
