"""Background noise: transient, self-healing events unrelated to the fault.

Real incidents happen on clusters where other things go wrong too: a pod is
rescheduled, a burst of scary-looking but harmless log lines, a short load
spike that trips a latency alert, a failing batch job nobody owns, a ConfigMap
whose name suggests a failure. Agents that chase these lose time or "fix" the
wrong thing. Noise is drawn from the episode seed when the episode starts and
scheduled on the simulated clock; graders ignore it (forks drop pending noise,
the cleanup gate skips the objects it created), and the env reveals the
schedule only in the final ``info``.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from sre_env.kube.timefmt import iso

if TYPE_CHECKING:
    from sre_env.apps.base import AppSpec
    from sre_env.sim.kernel.world import World

__all__ = ["NOISE_LEVELS", "NoiseEvent", "schedule_noise"]

#: level -> number of noise events over an episode's first ``horizon_s``
NOISE_LEVELS: dict[str, int] = {"none": 0, "low": 2, "high": 6}
NOISE_KINDS = ("pod_restart", "log_spike", "load_spike", "decoy_configmap", "failed_batch_job", "packet_loss_burst")

# Harmless lines that real gRPC / Go services print (client went away, load balancer probes).
_BENIGN_LINES = (
    'grpc: Server.Serve failed to complete security handshake from "{peer}": EOF',
    'transport: loopyWriter.run returning. connection error: desc = "transport is closing"',
    "http: TLS handshake error from {peer}: read tcp {self}->{peer}: read: connection reset by peer",
    "context canceled while sending response (client went away)",
    "slow request: took 1.{ms}s (threshold 1s)",
)
_DECOY_NAMES = ("{svc}-config-broken-backup", "{svc}-env-override-old", "hotfix-{svc}-rollback", "{svc}-failover-disabled")


@dataclass(frozen=True)
class NoiseEvent:
    """One scheduled noise event. ``fire`` must never fail: targets may have moved on."""

    at: float
    kind: str
    namespace: str
    target: str
    detail: str = ""
    #: for load spikes: the factor to set (1.0 ends the spike)
    factor: float = 1.0
    tag: str = "noise"

    def fire(self, world: "World") -> None:
        handler = getattr(self, f"_fire_{self.kind}")
        handler(world)
        world.noise_log.append(self.as_dict())

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"time": self.at, "kind": self.kind, "namespace": self.namespace, "target": self.target}
        if self.detail:
            out["detail"] = self.detail
        if self.kind == "load_spike":
            out["factor"] = self.factor
        return out

    # ---------------------------------------------------------------- kinds
    def _fire_pod_restart(self, world: "World") -> None:
        """A pod of a stateless Deployment is evicted/killed; its ReplicaSet replaces it."""
        pods = [p for p in _pods_of(world, self.namespace, self.target) if not p["metadata"].get("deletionTimestamp")]
        if pods:
            world.delete_pod(pods[0])

    def _fire_log_spike(self, world: "World") -> None:
        for pod in _pods_of(world, self.namespace, self.target)[:1]:
            rt = world.runtimes.get(pod["metadata"]["uid"])
            if rt is None:
                continue
            for ctr in list(rt.containers.values())[:1]:
                seed = zlib.crc32(f"{self.target}:{self.at}".encode())
                rng = np.random.default_rng(seed)
                n = int(rng.integers(15, 40))
                for i in range(n):
                    t = self.at - 30.0 + 30.0 * i / n
                    peer = f"10.244.{int(rng.integers(0, 4))}.{int(rng.integers(2, 250))}:{int(rng.integers(32768, 60999))}"
                    line = _BENIGN_LINES[int(rng.integers(0, len(_BENIGN_LINES)))].format(peer=peer, self=f"{pod['status'].get('podIP', '10.244.0.2')}:{ctr.name and 8080}", ms=int(rng.integers(100, 999)))
                    level = "WRN" if "slow" in line or "canceled" in line else "ERR"
                    world.container_raw_log(pod, ctr, t, f"{iso(t)} {level} server.go:{int(rng.integers(60, 300))} > {line}")

    def _fire_load_spike(self, world: "World") -> None:
        world.set_load_factor(self.target, self.factor)

    def _fire_packet_loss_burst(self, world: "World") -> None:
        """A top-of-rack hiccup: one node drops a share of frames for a minute, then recovers."""
        host = world.hosts.get(self.target)
        if host is not None:
            host.nic_crc_error_fraction = self.factor if self.detail != "end" else 0.0
            host.nic_fault_since = world.clock.now

    def _fire_decoy_configmap(self, world: "World") -> None:
        name = self.detail
        if world.store.find("ConfigMap", name, self.namespace) is not None:
            return
        world.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": self.namespace}, "data": {"NOTE": "kept for reference after the last incident; not mounted anywhere", "MAX_RETRIES": "0", "FEATURE_ENABLED": "false"}})
        world.noise_objects.add(f"ConfigMap/{self.namespace}/{name}")

    def _fire_failed_batch_job(self, world: "World") -> None:
        """A report job owned by another team fails (a bare pod that exits 1, as a Job's pod would)."""
        ns = "batch"
        if world.store.find("Namespace", ns) is None:
            from sre_env.apps.manifests import namespace_object

            world.create(namespace_object(ns))
            world.noise_objects.add(f"Namespace//{ns}")
        name = f"{self.target}-{int(self.at) // 60}"
        if world.store.find("Pod", name, ns) is not None:
            return
        world.create(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": name, "namespace": ns, "labels": {"app": self.target}},
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "report", "image": "busybox:1.36", "command": ["sh", "-c", "echo 'connecting to warehouse-db:5432'; echo 'FATAL: password authentication failed for user \"reports\"'; exit 1"]}],
                },
            }
        )
        world.noise_objects.add(f"Pod/{ns}/{name}")


def _pods_of(world: "World", namespace: str, deployment: str) -> list[dict[str, Any]]:
    """Pods a Deployment's ReplicaSets own (``<deployment>-<template hash>-<suffix>``)."""
    return [p for p in world.store.list("Pod", namespace) if p["metadata"]["name"].rsplit("-", 2)[0] == deployment and p["metadata"].get("ownerReferences")]


def schedule_noise(world: "World", app: "AppSpec", level: str, seed: int, *, start: float, horizon_s: float = 600.0, avoid: tuple[str, ...] = ()) -> list[NoiseEvent]:
    """Draw ``NOISE_LEVELS[level]`` events from ``seed`` and schedule them on ``world``.

    Targets are drawn from the app's stateless services, never from ``avoid``
    (the components the fault involves), so noise stays unrelated to the cause.
    """
    if level not in NOISE_LEVELS:
        raise ValueError(f"noise must be one of {', '.join(NOISE_LEVELS)}, got {level!r}")
    count = NOISE_LEVELS[level]
    if count == 0:
        return []
    rng = np.random.default_rng([seed, zlib.crc32(b"noise")])
    services = [c.name for c in app.components if c.kind == "Deployment" and c.role in ("service", "frontend") and c.name not in avoid] or [app.entrypoint]
    events: list[NoiseEvent] = []
    kinds = list(NOISE_KINDS)
    for i in range(count):
        kind = kinds[int(rng.integers(0, len(kinds)))] if i >= len(kinds) or level != "high" else kinds[i % len(kinds)]
        at = start + float(rng.uniform(0.0, horizon_s))
        svc = services[int(rng.integers(0, len(services)))]
        if kind == "load_spike":
            factor = round(float(rng.uniform(1.5, 2.2)), 2)
            length = float(rng.uniform(60.0, 150.0))
            events.append(NoiseEvent(at, kind, app.namespace, app.name, f"{int(length)}s", factor))
            events.append(NoiseEvent(at + length, kind, app.namespace, app.name, "end", 1.0))
        elif kind == "decoy_configmap":
            name = _DECOY_NAMES[int(rng.integers(0, len(_DECOY_NAMES)))].format(svc=svc)
            events.append(NoiseEvent(at, kind, app.namespace, svc, name))
        elif kind == "failed_batch_job":
            events.append(NoiseEvent(at, kind, "batch", "nightly-report"))
        elif kind == "packet_loss_burst":
            nodes = sorted(n for n in world.hosts if n.startswith("worker") and n not in avoid) or sorted(world.hosts)
            node = nodes[int(rng.integers(0, len(nodes)))]
            length = float(rng.uniform(30.0, 75.0))
            events.append(NoiseEvent(at, kind, "", node, f"{int(length)}s", round(float(rng.uniform(0.002, 0.006)), 4)))
            events.append(NoiseEvent(at + length, kind, "", node, "end", 0.0))
        else:
            events.append(NoiseEvent(at, kind, app.namespace, svc))
    for ev in events:
        world.schedule(ev.at, ev)
    return events
