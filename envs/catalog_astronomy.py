"""Catalog module: see envs/registry.py for the id scheme.

Scenarios on the OpenTelemetry demo (``sre_env.apps.astronomy_shop``):

* ``FeatureFlag-<Flag>``: one id per flagd flag whose incident differs;
* ``KafkaPoisonPill``, ``DBLockContention``, ``CacheAuthChanged``, ``EdgeFilterCpu``:
  families whose primary app is this one (the back ends they need are modelled here);
* ``<Family>-AstronomyShop``: families first written for hotel-reservation, on this app.
"""

from __future__ import annotations

from .astronomy_backends import CacheAuthChanged, DBLockContention, KafkaPoisonPill
from .astronomy_ports import (
    AstronomyIncorrectPort,
    AstronomyMisconfiguredEnv,
    AstronomyMissingEnvVar,
)
from .base import Scenario
from .edge_proxy import EnvoyEdgeFilterCpu
from .feature_flag import FLAG_SCENARIOS

SCENARIOS: dict[str, type[Scenario]] = {
    **FLAG_SCENARIOS,
    "KafkaPoisonPill": KafkaPoisonPill,
    "DBLockContention": DBLockContention,
    "CacheAuthChanged": CacheAuthChanged,
    "EdgeFilterCpu": EnvoyEdgeFilterCpu,
    "IncorrectPortAssignment-AstronomyShop": AstronomyIncorrectPort,
    "MisconfiguredEnv-AstronomyShop": AstronomyMisconfiguredEnv,
    "MissingEnvVar-AstronomyShop": AstronomyMissingEnvVar,
}
