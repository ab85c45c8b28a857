"""Scheduling and resource hooks: pod admission, ReplicaSet create failures, taint eviction.

The world calls ``admit_pod`` on every pod create (defaulting, Priority and
ResourceQuota admission) and ``reconcile_extras`` after the controllers, with
the store's dirty set, so everything here costs nothing while no quota, taint
or failed create exists. ``failed_create`` is the ReplicaSet controller's side
of a refused create: the ``FailedCreate`` event, the ``ReplicaFailure``
condition and a retry with back-off (or at once when a quota or priority
class changes).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sre_env.errors import ApiError
from sre_env.kube.timefmt import iso
from sre_env.kube.tolerations import tolerates
from sre_env.sim.control.priority import admit_priority
from sre_env.sim.control.quota import admit_pod_quota, refresh_quota_status

if TYPE_CHECKING:
    from sre_env.sim.kernel.world import World

__all__ = ["SchedState", "admit_pod", "created_ok", "failed_create", "reconcile_extras", "sched_state"]

Obj = dict[str, Any]
#: first retry of a refused create, doubling up to the cap (the controller's rate limiter, coarsely)
RETRY_S = 10.0
RETRY_MAX_S = 160.0


@dataclass
class SchedState:
    #: (namespace, replicaset) -> consecutive refused creates
    failed_creates: dict[tuple[str, str], int] = field(default_factory=dict)
    #: (namespace, replicaset) -> when its one pending retry fires
    retry_at: dict[tuple[str, str], float] = field(default_factory=dict)
    #: HPA sync loop already scheduled
    hpa_loop: bool = False
    #: HPA uid -> (time, recommended replicas) within the scale-down stabilisation window
    hpa_recommendations: dict[str, list[tuple[float, int]]] = field(default_factory=dict)


def sched_state(world: "World") -> SchedState:
    return world.slot(SchedState)


def admit_pod(world: "World", pod: Obj) -> None:
    """Defaulting and admission the API server applies to a new pod, in its order."""
    for ctr in (pod.get("spec") or {}).get("containers") or ():
        res = ctr.get("resources")
        if isinstance(res, dict) and isinstance(res.get("limits"), dict):
            # requests default to limits for every resource that sets only a limit
            req = res.setdefault("requests", {})
            for r, v in res["limits"].items():
                req.setdefault(r, v)
    admit_priority(world.store, pod)
    admit_pod_quota(world.store, pod)


@dataclass(frozen=True)
class _RetryCreate:
    """Timer: the ReplicaSet controller takes a refused ReplicaSet off its back-off queue."""

    namespace: str
    name: str
    tag: str = "controller"

    def fire(self, world: "World") -> None:
        st = sched_state(world)
        st.retry_at.pop((self.namespace, self.name), None)
        rs = world.store.find("ReplicaSet", self.name, self.namespace)
        if rs is not None and (self.namespace, self.name) in st.failed_creates:
            world.store.touch(rs)


def failed_create(world: "World", rs: Obj, errors: list[ApiError]) -> None:
    """Record the refused pod creates of one sync on its ReplicaSet and schedule the retry.

    One FailedCreate event per refused create (repeats fold into its count), one
    step of back-off per sync. The controller creates pods by ``generateName``, so
    the refusal names the prefix.
    """
    meta = rs["metadata"]
    prefix = f"{meta['name']}-"
    for exc in errors:
        message = "Error creating: " + re.sub(r'pods "' + re.escape(prefix) + r'[a-z0-9]+"', f'pods "{prefix}"', exc.message)
        world.event(rs, "Warning", "FailedCreate", message, "replicaset-controller")
    exc = errors[-1]
    key = (meta["namespace"], meta["name"])
    st = sched_state(world)
    n = st.failed_creates.get(key, 0) + 1
    st.failed_creates[key] = n
    conds = [c for c in (rs.get("status") or {}).get("conditions") or () if c.get("type") != "ReplicaFailure"]
    conds.append({"type": "ReplicaFailure", "status": "True", "lastTransitionTime": iso(world.clock.now), "reason": "FailedCreate", "message": exc.message})
    rs.setdefault("status", {})["conditions"] = conds
    if key not in st.retry_at:
        st.retry_at[key] = world.clock.now + min(RETRY_S * 2 ** (n - 1), RETRY_MAX_S)
        world.clock.schedule(st.retry_at[key], _RetryCreate(meta["namespace"], meta["name"]))


def created_ok(world: "World", rs: Obj) -> None:
    """A create went through: forget the back-off and clear the condition."""
    meta = rs["metadata"]
    st = world.peek(SchedState)
    if st is not None and st.failed_creates.pop((meta["namespace"], meta["name"]), None) is not None:
        status = rs.get("status") or {}
        status["conditions"] = [c for c in status.get("conditions") or () if c.get("type") != "ReplicaFailure"]
        if not status["conditions"]:
            del status["conditions"]
        world.store.touch(rs)


def _evict_untolerated(world: "World", nodes: set[str]) -> None:
    """The taint-eviction controller: pods that do not tolerate a node's NoExecute taint are deleted."""
    store = world.store
    tainted: dict[str, list[Obj]] = {}
    for name in sorted(nodes):
        node = store.find("Node", name)
        taints = [t for t in ((node or {}).get("spec") or {}).get("taints") or () if t.get("effect") == "NoExecute"]
        if taints:
            tainted[name] = taints
    if not tainted:
        return
    for pod in store.list("Pod"):
        node = pod["spec"].get("nodeName")
        if node not in tainted or pod["metadata"].get("deletionTimestamp"):
            continue
        if all(tolerates((pod.get("spec") or {}).get("tolerations"), t) for t in tainted[node]):
            continue
        meta = pod["metadata"]
        world.event(pod, "Normal", "TaintManagerEviction", f"Marking for deletion Pod {meta['namespace']}/{meta['name']}", "taint-eviction-controller")
        conds = [c for c in pod.get("status", {}).get("conditions") or () if c.get("type") != "DisruptionTarget"]
        conds.append({"type": "DisruptionTarget", "status": "True", "lastProbeTime": None, "lastTransitionTime": iso(world.clock.now), "reason": "DeletionByTaintManager", "message": "Taint manager: deleting due to NoExecute taint"})
        pod.setdefault("status", {})["conditions"] = conds
        world.delete_pod(pod)


def reconcile_extras(world: "World", dirty: dict[tuple[str, str, str], None]) -> None:
    """Quota status, retries of refused creates and NoExecute evictions for what changed."""
    from sre_env.sim.control.controllers import reconcile_replicasets

    store = world.store
    kinds: set[str] = set()
    pod_ns: set[str] = set()
    nodes: set[str] = set()
    for kind, ns, name in dirty:
        kinds.add(kind)
        if kind in ("Pod", "ResourceQuota"):
            pod_ns.add(ns)
        elif kind == "Node":
            nodes.add(name)
    if pod_ns and store.kind_revision.get("ResourceQuota"):
        refresh_quota_status(store, pod_ns)
    st = world.peek(SchedState)
    if st is not None and st.failed_creates and kinds & {"ResourceQuota", "PriorityClass"}:
        reconcile_replicasets(world, set(st.failed_creates))
    if nodes:
        _evict_untolerated(world, nodes)
    if "HorizontalPodAutoscaler" in kinds:
        from sre_env.sim.control.hpa import ensure_hpa_loop

        ensure_hpa_loop(world)
