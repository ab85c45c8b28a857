"""Catalog module: pod, probe and volume incidents on hotel-reservation.

See envs/registry.py for the id scheme.
"""

from __future__ import annotations

from .base import Scenario
from .pod_probes import (
    LivenessProbeMisconfig,
    LivenessProbeTooAggressive,
    ReadinessProbeMisconfig,
    RollingUpdateMisconfigured,
)
from .pod_runtime import InitContainerHang, ServicePortConflict, SidecarPortConflict
from .pod_volumes import DuplicatePVCMounts, PVAffinityViolation, PVCMismatch

SCENARIOS: dict[str, type[Scenario]] = {
    "LivenessProbeMisconfig": LivenessProbeMisconfig,
    "LivenessProbeTooAggressive": LivenessProbeTooAggressive,
    "ReadinessProbeMisconfig": ReadinessProbeMisconfig,
    "RollingUpdateMisconfigured": RollingUpdateMisconfigured,
    "InitContainerHang": InitContainerHang,
    "SidecarPortConflict": SidecarPortConflict,
    "ServicePortConflict": ServicePortConflict,
    "PVCMismatch": PVCMismatch,
    "DuplicatePVCMounts": DuplicatePVCMounts,
    "PVAffinityViolation": PVAffinityViolation,
}
