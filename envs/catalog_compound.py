"""Compound incidents: concurrent independent faults built with ``compose``.

A major fault that users notice and a minor one that hides behind it; both
must be repaired. These ids exercise the composition API that users can call
themselves (see README, "Composing scenarios").
"""

from __future__ import annotations

from .base import Scenario
from .compose import compose
from .correlated import CorrelatedKubeletConfig
from .disk_sector import DiskSector
from .metastable import CacheFlushStampede, GcDegradation, RetryStorm
from .missing_env_var import MissingEnvVar
from .target_port import TargetPortMisconfig

SCENARIOS: dict[str, type[Scenario]] = {
    "RetryStorm": RetryStorm,
    "CacheFlushStampede": CacheFlushStampede,
    "GcDegradation": GcDegradation,
    "Correlated-KubeletConfig": CorrelatedKubeletConfig,
    "Concurrent-DiskSectorAndMissingEnvVar": compose(
        "ConcurrentDiskSectorAndMissingEnvVar",
        DiskSector,
        MissingEnvVar,
        summary="Intermittent database failures in hotel-reservation, and one feature broken outright.",
        description=(
            "On-call reports two things at once: hotel-reservation has had intermittent HTTP 500s for a few "
            "minutes with a database pod restarting, and since a configuration push one feature fails for "
            "every user. It is not known whether the two are related."
        ),
    ),
    "Concurrent-TargetPortAndMissingEnvVar": compose(
        "ConcurrentTargetPortAndMissingEnvVar",
        TargetPortMisconfig,
        MissingEnvVar,
        summary="Several hotel-reservation features fail although most pods are running.",
        description=(
            "After a day with both an infrastructure change and an application configuration push, users of "
            "hotel-reservation report that several features fail with errors. Most pods look healthy; one "
            "team says its service keeps restarting."
        ),
    ),
}
