"""How many requests per second a component's pods can serve.

Each pod is bounded by its component's capacity and by the CPU its limit allows
(a CFS quota below the work throttles it), scaled by its node's CPU efficiency
(clock source, thermal state).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sre_env.kube.quantity import CPU_MS_PER_REQUEST_MS, cpu_millicores
from sre_env.sim.traffic.state import traffic_state

if TYPE_CHECKING:
    from sre_env.apps.base import Component
    from sre_env.sim.kernel.world import World

__all__ = ["serving_capacity"]


def serving_capacity(world: "World", comp: Component, uids: tuple[str, ...]) -> float:
    """Requests/s the pods can serve: each is bounded by the component's capacity and by
    the CPU its limit allows (a CFS quota below the work throttles it)."""
    total = 0.0
    cache = traffic_state(world).cpu_caps
    hosts = world.hosts
    for uid in uids:
        hit = cache.get(uid)
        if hit is None:
            pod = world.pod_by_uid(uid)
            hit = cache[uid] = (_cpu_capacity(world, comp, uid), (pod or {}).get("spec", {}).get("nodeName", ""))
        host = hosts.get(hit[1])
        total += hit[0] * (host.cpu_efficiency if host is not None else 1.0)
    return total


def _cpu_capacity(world: "World", comp: Component, uid: str) -> float:
    pod = world.pod_by_uid(uid)
    limit = 0
    if pod is not None:
        for ctr in pod["spec"].get("containers") or ():
            if ctr.get("name") == comp.container:
                limit = cpu_millicores(((ctr.get("resources") or {}).get("limits") or {}).get("cpu", 0))
    if limit <= 0:
        return comp.capacity_rps
    # the inverse of the CPU model in sre_env.sim.runtime.cpu.pod_cpu_millicores
    return min(comp.capacity_rps, max(limit - 1, 0) / (max(comp.latency_ms, 0.01) * CPU_MS_PER_REQUEST_MS))
