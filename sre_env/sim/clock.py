"""Simulated time: one clock and one heap of timers; no wall clock anywhere.

Timers are ``(due, seq, name, payload)`` tuples; ``seq`` makes ties resolve in
scheduling order, so two runs with the same inputs fire timers identically.
"""

from __future__ import annotations

import heapq
from datetime import datetime, timedelta, timezone
from typing import Any

__all__ = ["SimClock", "EPOCH", "iso", "parse_iso", "human_age"]

#: Simulated second 0. Fixed so that timestamps in observations are reproducible.
EPOCH = datetime(2026, 3, 2, 9, 0, 0, tzinfo=timezone.utc)


def iso(t: float) -> str:
    """RFC 3339 timestamp of simulated second ``t``, as the Kubernetes API writes it."""
    return (EPOCH + timedelta(seconds=int(t))).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_iso(s: str) -> float:
    dt = datetime.strptime(s, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    return (dt - EPOCH).total_seconds()


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


class SimClock:
    """Seconds since :data:`EPOCH` plus a deterministic timer heap."""

    def __init__(self, now: float = 0.0) -> None:
        self.now = float(now)
        self._heap: list[tuple[float, int, str, Any]] = []
        self._seq = 0

    def schedule(self, delay: float, name: str, payload: Any = None) -> None:
        self._seq += 1
        heapq.heappush(self._heap, (self.now + delay, self._seq, name, payload))

    def pop_due(self) -> list[tuple[str, Any]]:
        """Remove and return the timers due at or before ``now``, in order."""
        out = []
        heap = self._heap
        while heap and heap[0][0] <= self.now:
            _, _, name, payload = heapq.heappop(heap)
            out.append((name, payload))
        return out

    def next_due(self) -> float | None:
        return self._heap[0][0] if self._heap else None
