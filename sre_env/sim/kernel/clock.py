"""Simulated time: one clock and one heap of timers; no wall clock anywhere.

Timers are ``(due, seq, name, payload)`` tuples; ``seq`` makes ties resolve in
scheduling order, so two runs with the same inputs fire timers identically.
"""

from __future__ import annotations

import heapq
from typing import Any

__all__ = ["SimClock"]


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
