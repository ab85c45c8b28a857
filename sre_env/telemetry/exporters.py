"""One scrape of the simulated cluster: every exporter's samples into the TSDB.

The scrape runs every 15 s of cluster time. kube-state-metrics (export_kube),
node-exporter and cAdvisor (export_host), the services' and load generator's
request metrics (export_app) each return (columns, values) blocks that the
TSDB writes as one row. The same inputs also feed a handful of *recorded*
series per service (request rate, error ratio, p99 latency, CPU, memory, ready
replicas, restarts; the client's rate, success ratio and p99) in a small float32
ring: they are what a recording rule would precompute, and the observation's
metrics window reads them without evaluating PromQL on every step.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sre_env.sim.control.controllers import pod_is_ready
from sre_env.sim.runtime.cpu import pod_cpu_millicores

from .export_app import AppExporter
from .export_host import HostExporters, MiB
from .export_kube import KubeStateMetrics
from .tsdb import TSDB

if TYPE_CHECKING:
    from sre_env.apps.base import AppSpec
    from sre_env.sim.kernel.world import World
    from sre_env.telemetry.metrics_store import SeriesRing

__all__ = ["Scraper", "observation_series", "pod_cpu_millicores", "pod_memory_bytes", "SERVICE_SERIES", "CLIENT_SERIES"]

#: per-service recorded series, in observation order
SERVICE_SERIES = ("rps", "error_ratio", "latency_p99_ms", "cpu_cores", "memory_bytes", "ready_replicas", "restarts")
#: client (load generator) recorded series, in observation order
CLIENT_SERIES = ("client_success_ratio", "client_rps", "client_latency_p99_ms")
#: p99 latency over the mean latency the traffic model reports
P99_FACTOR = 2.2


def observation_series(app: "AppSpec") -> list[str]:
    """Names of the observation's metric columns for ``app``: the client's view, then each service's."""
    ns = app.namespace
    names = [f"{m}{{namespace={ns}}}" for m in CLIENT_SERIES]
    for comp in sorted(app.components, key=lambda c: c.name):
        names += [f"{m}{{namespace={ns},service={comp.name}}}" for m in SERVICE_SERIES]
    return names


def pod_memory_bytes(world: "World", uid: str) -> int:
    """Working set of a pod's running containers (what ``kubectl top pod`` shows), bytes."""
    rt = world.runtimes.get(uid)
    if rt is None:
        return 0
    return sum(int(c.memory_mib * MiB) for c in rt.containers.values() if c.state == "running")


class Scraper:
    """Exporter state carried between scrapes (counters, caches), one per World."""

    def __init__(self) -> None:
        self.kube = KubeStateMetrics()
        self.host = HostExporters()
        self.app = AppExporter()
        self._names: dict[str, list[str]] = {}
        self._obj_rev = -1
        self._obj_values: dict[str, float] = {}


    def scrape(self, world: "World", tsdb: TSDB, recorded: "SeriesRing") -> None:
        now = world.clock.now
        # same draw as before the TSDB existed, so the world's random stream is unchanged
        jitter = world.rng.normal(1.0, 0.02, size=2 + 2 * 32)
        pod_rps: dict[str, float] = {}
        for res in world.last_traffic.values():
            pod_rps.update(res.pod_rps)
        parts: list[tuple[np.ndarray, np.ndarray]] = [self.kube.collect(world, tsdb)]
        parts += self.host.collect(world, tsdb, pod_rps)
        values: dict[str, float] = {}
        for app in world.apps:
            res = world.last_traffic.get(app.name)
            if res is None:
                continue
            parts += self.app.collect(world, app, res, tsdb, jitter)
            names = self._series_names(app)
            values[names[0]] = res.client_success
            values[names[1]] = res.client_rps * float(jitter[0])
            values[names[2]] = res.client_latency_ms * P99_FACTOR * float(jitter[1])
            rps_get, err_get, lat_get = res.rps.get, res.errors.get, res.latency_ms.get
            for i, comp in enumerate(app.components):
                base = 3 + len(SERVICE_SERIES) * i
                rps = rps_get(comp.name, 0.0)
                values[names[base]] = rps * float(jitter[2 + (i % 64)])
                values[names[base + 1]] = err_get(comp.name, 0.0) / rps if rps > 0 else 0.0
                values[names[base + 2]] = lat_get(comp.name, 0.0) * P99_FACTOR
        values.update(self._usage_series(world))
        if self._obj_rev != world.store.revision:
            self._obj_values = self._object_series(world)
            self._obj_rev = world.store.revision
        values.update(self._obj_values)
        tsdb.append(now, parts)
        recorded.write(now, values)

    def _series_names(self, app: "AppSpec") -> list[str]:
        names = self._names.get(app.name)
        if names is None:
            ns = app.namespace
            names = [f"{m}{{namespace={ns}}}" for m in CLIENT_SERIES]
            for comp in app.components:
                names += [f"{m}{{namespace={ns},service={comp.name}}}" for m in SERVICE_SERIES]
            self._names[app.name] = names
        return names

    def _usage_series(self, world: "World") -> dict[str, float]:
        """CPU cores and memory bytes per service, summed over its running containers (from cAdvisor's pass)."""
        usage = self.host.usage
        out: dict[str, float] = {}
        names = self.__dict__.get("_usage_names")
        if names is None or len(names) != len(world.components):
            names = self._usage_names = {key: (f"cpu_cores{{namespace={key[0]},service={key[1]}}}", f"memory_bytes{{namespace={key[0]},service={key[1]}}}") for key in world.components}
        for key in world.components:
            cores, mem = usage.get(key, (0.0, 0.0))
            cpu_name, mem_name = names.get(key) or (f"cpu_cores{{namespace={key[0]},service={key[1]}}}", f"memory_bytes{{namespace={key[0]},service={key[1]}}}")
            out[cpu_name] = cores
            out[mem_name] = mem
        return out

    @staticmethod
    def _object_series(world: "World") -> dict[str, float]:
        """Ready replicas and restarts per service: from API objects, recomputed when they change."""
        ready: dict[tuple[str, str], int] = {}
        restarts: dict[tuple[str, str], int] = {}
        for pod in world.store.iter("Pod"):
            comp = world.component_for(pod)
            if comp is None:
                continue
            key = (pod["metadata"]["namespace"], comp.name)
            ready[key] = ready.get(key, 0) + (1 if pod_is_ready(pod) else 0)
            restarts[key] = restarts.get(key, 0) + sum(cs.get("restartCount", 0) for cs in pod.get("status", {}).get("containerStatuses") or ())
        out: dict[str, float] = {}
        for ns, name in sorted(world.components):
            out[f"ready_replicas{{namespace={ns},service={name}}}"] = ready.get((ns, name), 0)
            out[f"restarts{{namespace={ns},service={name}}}"] = restarts.get((ns, name), 0)
        return out
