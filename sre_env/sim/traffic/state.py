"""The traffic layer's own bookkeeping, kept in the world between ticks.

Caches of what the flow computation derives from slower-changing state: each
pod's CPU-bound capacity, the share of requests each pod fails (disk, kernel
limits, node faults, release bugs), which database pods read which disks, and
whether an app's flow has settled (same routes, same load: last tick's result
stands).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sre_env.sim.kernel.world import World

__all__ = ["TrafficState", "traffic_state"]


@dataclass
class TrafficState:
    #: pod uid -> (requests/s its CPU limit allows, node): pods' resources and nodes are fixed
    cpu_caps: dict[str, tuple[float, str]] = field(default_factory=dict)
    #: pod uid -> share of its requests that fail from its own causes (disk reads, kernel limits, releases)
    pod_err: dict[str, float] = field(default_factory=dict)
    #: pod uid -> share that fails from its node (conntrack, NIC)
    pod_net_err: dict[str, float] = field(default_factory=dict)
    #: the revisions pod_err was computed at
    pod_err_key: tuple = ()
    #: node-level failure inputs pod_net_err was computed from
    host_fault_key: tuple = ()
    #: app name -> the database pods of its plan and the disks under their volumes
    db_disks: dict[str, list[Any]] = field(default_factory=dict)
    #: app name -> whether last tick's flow will repeat (same routes, same load)
    settled: dict[str, bool] = field(default_factory=dict)
    #: app name -> the world's flow_input_rev when ``settled`` was last decided
    inputs_seen: dict[str, int] = field(default_factory=dict)

    def pod_error_fraction(self, uid: str) -> float:
        """Share of the requests a pod serves that fail, from its own and its node's causes."""
        disk = self.pod_err.get(uid, 0.0)
        net = self.pod_net_err.get(uid, 0.0) if self.pod_net_err else 0.0
        return disk + net - disk * net if net else disk


def traffic_state(world: "World") -> TrafficState:
    return world.slot(TrafficState)
