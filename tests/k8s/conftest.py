"""A healthy simulated cluster served over the real protocols, for the KubernetesBackend's tests."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("kubernetes", reason="the [k8s] extra (kubernetes client) is not installed")
pytest.importorskip("prometheus_api_client", reason="the [k8s] extra (prometheus-api-client) is not installed")
pytest.importorskip("aiohttp", reason="the [serve] extra (aiohttp) is not installed")

from sre_env.apps.hotel_reservation import HOTEL_RESERVATION
from sre_env.serve.server import IncidentServer
from sre_env.sim.backend import SimBackend
from sre_env.sim.episodes import healthy_world

NS = HOTEL_RESERVATION.namespace
needs_kubectl = pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """These tests run the agent's commands unsandboxed (``sandbox="none"``, no Docker engine in CI) on purpose:
    its warning is asserted in test_k8s_sandbox.py, not repeated here."""
    for item in items:
        if "tests/k8s/" in str(item.fspath).replace("\\", "/"):
            item.add_marker(pytest.mark.filterwarnings("ignore::sre_env.k8s.sandbox.UnsandboxedWarning"))


@dataclass
class Served:
    sim: SimBackend
    server: IncidentServer
    kubeconfig: Path

    def backend(self, **options):
        from sre_env.k8s.backend import KubernetesBackend

        url = self.server.prometheus_url
        opts = {"prometheus_url": url, "loki_url": url, "jaeger_url": url, "telemetry_token": self.server.token, "time_scale": self.server.speed or 1.0, "sandbox": "none"}
        return KubernetesBackend(self.kubeconfig, **(opts | options))


def serve_healthy(tmp: Path, speed: float, app=HOTEL_RESERVATION) -> Served:
    """A healthy cluster running ``app`` (hotel-reservation by default), served at ``speed``."""
    sim = SimBackend(healthy_world(app))
    # the KubernetesBackend reads the cluster's clock from Prometheus' time(); served times are
    # re-anchored to the wall clock at speeds other than 1 (sre_env.serve.timeshift), so a
    # paused or sped-up cluster serves the simulator's own clock instead
    server = IncidentServer(sim, speed=speed, real_epoch=speed != 1.0).start()
    return Served(sim, server, server.write_kubeconfig(tmp / "kubeconfig", "default"))


@pytest.fixture()
def paused(tmp_path: Path) -> Iterator[Served]:
    """A healthy hotel-reservation cluster whose clock stands still (API behaviour only)."""
    served = serve_healthy(tmp_path, 0.0)
    yield served
    served.server.stop()


@pytest.fixture()
def running(tmp_path: Path) -> Iterator[Served]:
    """A healthy hotel-reservation cluster whose clock runs 120x faster than the wall."""
    served = serve_healthy(tmp_path, 120.0)
    yield served
    served.server.stop()


@pytest.fixture()
def serve_app(tmp_path: Path) -> Iterator:
    """A factory: ``serve_app(app)`` serves a healthy cluster running ``app`` at 120x (stopped after the test)."""
    started: list[Served] = []

    def start(app) -> Served:
        served = serve_healthy(tmp_path / str(len(started)), 120.0, app)
        started.append(served)
        return served

    yield start
    for served in started:
        served.server.stop()
