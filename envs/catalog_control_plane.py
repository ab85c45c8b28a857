"""Catalog module: see envs/registry.py for the id scheme."""

from __future__ import annotations

from .base import Scenario

SCENARIOS: dict[str, type[Scenario]] = {}
