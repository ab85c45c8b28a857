"""A node's own clock: simulated time as the node's wall clock shows it, skew included.

Every timestamp a node writes or prints (``date``, the journal, ``dmesg -T``,
cron's schedule, ``iptables-save``'s header) reads this clock, so a skewed
node is wrong in all of them the same way.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from sre_env.kube.timefmt import EPOCH

if TYPE_CHECKING:
    from sre_env.sim.kernel.hosts import HostNode

__all__ = ["wall", "boot_wall"]


def wall(node: HostNode, t: float) -> datetime:
    """The node's wall clock at simulated second ``t`` (including its clock skew)."""
    return EPOCH + timedelta(seconds=t + node.clock_offset_s)


def boot_wall(node: HostNode, now: float) -> datetime:
    """When the node booted, as its own clock reports it."""
    return wall(node, now - node.uptime(now))
