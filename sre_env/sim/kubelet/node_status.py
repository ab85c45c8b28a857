"""The node status a kubelet posts: its conditions (pressure from the eviction manager, Ready).

A kubelet that stops posting leaves ``Ready`` at ``Unknown`` ("Kubelet stopped
posting node status."), which is what the node lifecycle controller then acts on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sre_env.kube.timefmt import iso

if TYPE_CHECKING:
    from sre_env.sim.kernel.hosts import HostNode
    from sre_env.sim.kernel.world import World

__all__ = ["update_node_conditions"]

Obj = dict[str, Any]


def update_node_conditions(world: "World") -> None:
    for node in world.store.list("Node"):
        host = world.hosts.get(node["metadata"]["name"])
        if host is None:  # a Node object no kubelet runs for: nobody posts its status
            continue
        status = node.setdefault("status", {})
        conds = _node_conditions(host, world.clock.now, status.get("conditions") or [])
        if conds != status.get("conditions"):
            status["conditions"] = conds
            world.store.touch(node)


def _node_conditions(host: HostNode, now: float, old: list[Obj]) -> list[Obj]:
    prev = {c["type"]: c for c in old}
    t = iso(now)

    def cond(type_: str, status: str, reason: str, message: str) -> Obj:
        p = prev.get(type_)
        transition = p["lastTransitionTime"] if p and p["status"] == status else t
        return {"type": type_, "status": status, "lastHeartbeatTime": t if not p else p["lastHeartbeatTime"], "lastTransitionTime": transition, "reason": reason, "message": message}

    ready = host.kubelet_connected()
    return [
        # set by the kubelet's eviction manager (sre_env.sim.kubelet.eviction) when a threshold is crossed
        cond("MemoryPressure", "True", "KubeletHasInsufficientMemory", "kubelet has insufficient memory available") if host.memory_pressure else cond("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
        cond("DiskPressure", "True", "KubeletHasDiskPressure", "kubelet has disk pressure") if host.disk_pressure else cond("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
        cond("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
        cond("Ready", "True" if ready else "Unknown", "KubeletReady" if ready else "NodeStatusUnknown", "kubelet is posting ready status" if ready else "Kubelet stopped posting node status."),
    ]
