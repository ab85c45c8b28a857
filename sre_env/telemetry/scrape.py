"""One scrape of the simulated cluster: every exporter into the TSDB, then the alert rules.

The engine calls :func:`scrape` every ``SCRAPE_S`` of cluster time (kube-prometheus'
interval); rules are evaluated right after the scrape that reaches their interval,
as Prometheus' rule manager does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sre_env.telemetry.alerting import alerts_of
from sre_env.telemetry.metrics_store import metrics_of

if TYPE_CHECKING:
    from sre_env.sim.kernel.world import World

__all__ = ["scrape"]


def scrape(world: "World") -> None:
    metrics = metrics_of(world)
    metrics.scrape(world)
    alerts_of(world).evaluate(metrics.tsdb, world.clock.now)
