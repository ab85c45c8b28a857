"""flagd: what the flag daemon serves, from the flag file it read at start.

In the demo, flagd's init container copies ConfigMap ``flagd-config`` into an
emptyDir before flagd starts, and flagd serves that copy. So the flags a
service sees are those of the ConfigMap *as it was when the serving flagd
container started*: editing the ConfigMap changes nothing until flagd restarts,
and a service that cannot reach flagd evaluates every flag to its code default
(off). This module parses a flag file and evaluates flags the way flagd does
for the demo's static flags (``state``, ``variants``, ``defaultVariant``).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

__all__ = ["FlagSet", "parse_flags", "truthy"]


@dataclass(frozen=True)
class FlagSet:
    """The flags one flagd instance serves (empty when its file did not parse)."""

    values: dict[str, Any] = field(default_factory=dict)
    error: str = ""

    def value(self, name: str, default: Any = None) -> Any:
        return self.values.get(name, default)


def parse_flags(text: str | None) -> FlagSet:
    """Evaluate every flag of a ``demo.flagd.json`` to its default variant's value."""
    if not text:
        return FlagSet({}, "flag file is empty")
    try:
        doc = json.loads(text)
    except (ValueError, TypeError) as e:
        return FlagSet({}, f"error unmarshalling flag configuration: {e}")
    flags = doc.get("flags") if isinstance(doc, dict) else None
    if not isinstance(flags, dict):
        return FlagSet({}, "flag configuration has no flags object")
    values: dict[str, Any] = {}
    for name, spec in flags.items():
        if not isinstance(spec, dict) or spec.get("state", "ENABLED") != "ENABLED":
            continue
        variants = spec.get("variants") or {}
        default = spec.get("defaultVariant")
        if isinstance(variants, dict) and default in variants:
            values[str(name)] = variants[default]
    return FlagSet(values)


def truthy(value: Any) -> float:
    """A flag value as a number: booleans 0/1, numbers as they are, anything else 0."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        return float(value)
    return 0.0
