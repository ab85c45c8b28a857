"""Simulated time: one clock and one heap of timers; no wall clock anywhere.

The world advances in fixed ticks of :data:`TICK_S`; a timer fires at the first
tick at or after its due time. Timers are ``(due, seq, event)`` entries: ``seq``
makes ties resolve in scheduling order, so two runs with the same inputs fire
identically. An event is any picklable object with ``fire(world)`` (and a ``tag``
to cancel it by), so a snapshot of the world carries its pending timers.
"""

from __future__ import annotations

import heapq
from typing import Any, Protocol

__all__ = ["SimClock", "TimedEvent", "TICK_S", "SCRAPE_S"]

#: seconds of cluster time per tick of the simulation
TICK_S = 5.0
#: kube-prometheus' default scrape interval
SCRAPE_S = 30.0


class TimedEvent(Protocol):
    """Something scheduled on the clock: noise, a replayed trigger, a cron run."""

    tag: str

    def fire(self, world: Any) -> None: ...


class SimClock:
    """Seconds of cluster time since :data:`sre_env.kube.timefmt.EPOCH`, and the one timer heap."""

    def __init__(self, now: float = 0.0) -> None:
        self.now = float(now)
        self.timers: list[tuple[float, int, TimedEvent]] = []
        self._seq = 0

    def schedule(self, at: float, event: TimedEvent) -> None:
        """Fire ``event`` at the first tick at or after cluster second ``at``."""
        self._seq += 1
        heapq.heappush(self.timers, (float(at), self._seq, event))

    def cancel(self, tag: str) -> int:
        """Drop every pending event tagged ``tag``; returns how many were dropped."""
        kept = [t for t in self.timers if getattr(t[2], "tag", "") != tag]
        dropped = len(self.timers) - len(kept)
        if dropped:
            heapq.heapify(kept)
            self.timers = kept
        return dropped

    def pop_due(self) -> TimedEvent | None:
        """The earliest event due at or before ``now`` (removed), or None.

        One at a time, so an event that schedules another one due now sees it fire
        in the same tick, after itself.
        """
        if self.timers and self.timers[0][0] <= self.now:
            return heapq.heappop(self.timers)[2]
        return None

    def pending(self) -> list[TimedEvent]:
        """The events still to fire, earliest first."""
        return [event for _, _, event in sorted(self.timers, key=lambda t: (t[0], t[1]))]
