"""Preemption: the scheduler's PostFilter that evicts lower-priority pods for a pending one.

Follows kube-scheduler's DefaultPreemption: on every node that failed only for
lack of resources, remove all pods of lower priority, check that the pending
pod would fit, then give back ("reprieve") as many victims as possible, most
important first (higher priority, then longer running). The node whose victims
matter least wins. Victims are deleted gracefully, each with the scheduler's
``Preempted`` event and a ``DisruptionTarget`` condition; the preemptor is
nominated to the node and binds once the victims are gone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from sre_env.kube.timefmt import iso
from sre_env.sim.control.priority import pod_priority, preempts

if TYPE_CHECKING:
    from sre_env.sim.kernel.world import World

__all__ = ["preempt", "select_victims"]

Obj = dict[str, Any]
#: (cpu millicores, memory bytes) a pod requests
Requests = Callable[[Obj], tuple[int, int]]


def select_victims(pod: Obj, on_node: list[Obj], free: tuple[int, int, int], requests: Requests) -> list[Obj] | None:
    """Fewest, least important lower-priority pods whose removal lets ``pod`` fit; None if none do.

    ``free`` is (cpu, memory, pod slots) left on the node with every current pod counted.
    """
    prio = pod_priority(pod)
    cpu, mem = requests(pod)
    lower = [p for p in on_node if pod_priority(p) < prio and not p["metadata"].get("deletionTimestamp")]
    if not lower:
        return None
    fcpu, fmem, fslots = free
    for p in lower:
        c, m = requests(p)
        fcpu, fmem, fslots = fcpu + c, fmem + m, fslots + 1
    if cpu > fcpu or mem > fmem or fslots < 1:
        return None
    # most important first: higher priority, then the earlier start
    lower.sort(key=lambda p: (-pod_priority(p), p.get("status", {}).get("startTime") or p["metadata"].get("creationTimestamp", ""), p["metadata"]["name"]))
    victims = []
    for p in lower:
        c, m = requests(p)
        if cpu <= fcpu - c and mem <= fmem - m and fslots - 1 >= 1:
            fcpu, fmem, fslots = fcpu - c, fmem - m, fslots - 1  # reprieved
        else:
            victims.append(p)
    return victims


def preempt(world: "World", pod: Obj, candidates: dict[str, list[Obj]]) -> tuple[str, list[Obj]] | None:
    """Pick the node and evict its victims; ``candidates`` maps node -> victims. None if none."""
    if not candidates or not preempts(pod):
        return None

    def cost(item: tuple[str, list[Obj]]) -> tuple[int, int, int, str]:
        node, victims = item
        prios = [pod_priority(v) for v in victims]
        return (max(prios, default=-(2**31)), sum(prios), len(victims), node)

    node, victims = min(candidates.items(), key=cost)
    now = iso(world.clock.now)
    for v in victims:
        world.event(v, "Normal", "Preempted", f"Preempted by pod {pod['metadata']['uid']} on node {node}", "default-scheduler")
        conds = [c for c in v.get("status", {}).get("conditions") or () if c.get("type") != "DisruptionTarget"]
        conds.append({"type": "DisruptionTarget", "status": "True", "lastProbeTime": None, "lastTransitionTime": now, "reason": "PreemptionByScheduler", "message": "default-scheduler: preempting to accommodate a higher priority pod"})
        v.setdefault("status", {})["conditions"] = conds
        world.delete_pod(v)
    pod.setdefault("status", {})["nominatedNodeName"] = node
    world.store.touch(pod)
    return node, victims
