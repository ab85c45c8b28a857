"""The first scenarios, on hotel-reservation: one per layer the foundation modelled."""

from __future__ import annotations

from .base import Scenario
from .disk_sector import DiskSector
from .missing_env_var import MissingEnvVar
from .target_port import TargetPortMisconfig

SCENARIOS: dict[str, type[Scenario]] = {
    "DiskSector": DiskSector,
    "MissingEnvVar": MissingEnvVar,
    "TargetPortMisconfig": TargetPortMisconfig,
}
