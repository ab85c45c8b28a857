"""Kubernetes time formats over simulated seconds: RFC 3339 stamps and kubectl's ages.

Simulated second 0 is :data:`EPOCH`, fixed so that timestamps in observations are
reproducible; nothing here reads the wall clock.
"""

from __future__ import annotations

import functools
from datetime import datetime, timedelta, timezone
from typing import Any

__all__ = ["EPOCH", "iso", "parse_iso", "parse_iso_safe", "human_age"]

#: Simulated second 0. Fixed so that timestamps in observations are reproducible.
EPOCH = datetime(2026, 3, 2, 9, 0, 0, tzinfo=timezone.utc)


def iso(t: float) -> str:
    """RFC 3339 timestamp of simulated second ``t``, as the Kubernetes API writes it."""
    return _iso(int(t))


@functools.lru_cache(maxsize=4096)
def _iso(t: int) -> str:
    # memoised: a tick stamps every object it writes with the same few seconds
    return (EPOCH + timedelta(seconds=t)).strftime("%Y-%m-%dT%H:%M:%SZ")


@functools.lru_cache(maxsize=4096)
def parse_iso(s: str) -> float:
    dt = datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    return (dt - EPOCH).total_seconds()


def parse_iso_safe(s: Any) -> float | None:
    """Simulated seconds of an RFC 3339 timestamp, or None for anything unparsable."""
    if not isinstance(s, str) or not s:
        return None
    try:
        dt = datetime.fromisoformat(s[:19])
    except ValueError:
        return None
    return (dt.replace(tzinfo=timezone.utc) - EPOCH).total_seconds()


def human_age(seconds: float) -> str:
    """kubectl's AGE column (k8s.io/apimachinery duration.HumanDuration)."""
    s = int(max(seconds, 0))
    if s < 60 * 2:
        return f"{s}s"
    m = s // 60
    if m < 10:
        rem = s % 60
        return f"{m}m{rem}s" if rem else f"{m}m"
    if m < 60 * 3:
        return f"{m}m"
    h = s // 3600
    if h < 8:
        rem = m % 60
        return f"{h}h{rem}m" if rem else f"{h}h"
    if h < 48:
        return f"{h}h"
    d = h // 24
    if h < 24 * 8:
        rem = h % 24
        return f"{d}d{rem}h" if rem else f"{d}d"
    if d < 365 * 2:
        return f"{d}d"
    y = d // 365
    if y < 8:
        rem = d % 365
        return f"{y}y{rem}d" if rem else f"{y}y"
    return f"{y}y"
