"""OS resources on one node (hotel-reservation): disk space, inodes — exhausted by something on the node."""

from __future__ import annotations

from .base import Scenario
from .disk_fill import DiskFull, InodeExhaustion

SCENARIOS: dict[str, type[Scenario]] = {
    "DiskFull": DiskFull,
    "InodeExhaustion": InodeExhaustion,
}
