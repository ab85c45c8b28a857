"""OS and hardware faults on one node (hotel-reservation): the layers agents blame on the app."""

from __future__ import annotations

from .base import Scenario
from .cpu_throttling import CfsThrottling
from .node_faults import (
    ClocksourceUnstable,
    ConntrackExhaustion,
    KubeletDown,
    MemoryEccErrors,
    NicLinkFlap,
    NicPacketCorruption,
    NodeClockDrift,
)
from .silent_corruption import SilentDataCorruption

SCENARIOS: dict[str, type[Scenario]] = {
    "KubeletDown": KubeletDown,
    "NodeClockDrift": NodeClockDrift,
    "ConntrackExhaustion": ConntrackExhaustion,
    "CfsThrottling": CfsThrottling,
    "NicPacketCorruption": NicPacketCorruption,
    "NicLinkFlap": NicLinkFlap,
    "MemoryEccErrors": MemoryEccErrors,
    "ClocksourceUnstable": ClocksourceUnstable,
    "SilentDataCorruption": SilentDataCorruption,
}
