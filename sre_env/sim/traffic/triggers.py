"""Triggers of metastable incidents, fired by the cluster's clock.

A metastable failure outlives what started it: a short load spike, a cache that
comes back empty. The scenarios schedule these triggers when they inject the
incident and again when the live gate replays it; once fired, the model alone
decides whether the system recovers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sre_env.sim.kernel.world import World

__all__ = ["LoadSpike", "CacheRestart"]


@dataclass(frozen=True)
class LoadSpike:
    """A timed change of the load generator's rate (a marketing e-mail, a crawler)."""

    app: str
    factor: float
    tag: str = "trigger"

    def fire(self, world: "World") -> None:
        world.set_load_factor(self.app, self.factor)


@dataclass(frozen=True)
class CacheRestart:
    """The cache's pod goes away (evicted in maintenance, OOM) and comes back empty."""

    namespace: str
    cache: str
    tag: str = "trigger"

    def fire(self, world: "World") -> None:
        for pod in world.store.list("Pod", self.namespace):
            if pod["metadata"]["name"].rsplit("-", 2)[0] == self.cache and not pod["metadata"].get("deletionTimestamp"):
                world.delete_pod(pod)
