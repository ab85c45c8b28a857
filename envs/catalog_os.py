"""OS resources: a node's disk space and inodes, and a process's ephemeral ports and open files."""

from __future__ import annotations

from .base import Scenario
from .disk_fill import DiskFull, InodeExhaustion
from .os_limits import (
    DevShmExhaustion,
    EphemeralPortExhaustion,
    FileDescriptorExhaustion,
)

SCENARIOS: dict[str, type[Scenario]] = {
    "DiskFull": DiskFull,
    "InodeExhaustion": InodeExhaustion,
    "EphemeralPortExhaustion": EphemeralPortExhaustion,
    "FileDescriptorExhaustion": FileDescriptorExhaustion,
    "DevShmExhaustion": DevShmExhaustion,
}
