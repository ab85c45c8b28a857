"""``sre-env serve``: a simulated incident in real time, behind the real protocols.

aiohttp applications serve the Kubernetes API subset (``kube_api``) and the
Prometheus HTTP API with ``/metrics`` (``prom_api``), Loki's and Jaeger's query APIs
(``logs_traces_api``, on the Prometheus port: their paths do not collide) on loopback ports. The simulated cluster advances with the wall clock (times a
speed-up) in the same event loop as the requests, so every request sees one
consistent world. A kubeconfig is written for the user's ``kubectl``. Times cross
the HTTP boundary as wall-clock times (``timeshift``: ``time_map``, ``offset()``)
unless ``real_epoch`` is set.

aiohttp is the ``[serve]`` extra; importing this module without it raises a
clear message.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from sre_env.errors import MissingExtraError
from sre_env.loop_thread import LoopThread

from .kube_api import handle
from .kube_exec import is_exec, serve_exec
from .kube_fields import warning_header
from .kube_logs import is_follow, serve_follow
from .kube_watch import is_watch, serve_watch
from .logs_traces_api import handle_jaeger, handle_loki, is_jaeger, is_loki
from .prom_api import handle_prometheus
from .timeshift import TimeMap

if TYPE_CHECKING:
    from sre_env.sim.backend import SimBackend

__all__ = ["IncidentServer", "write_kubeconfig", "serve_forever"]

#: how often the simulated clock catches up with the wall clock
TICK_INTERVAL_S = 0.25


def _aiohttp() -> Any:
    try:
        from aiohttp import web
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise MissingExtraError("sre-env serve needs the [serve] extra: pip install 'sre-env[serve]'") from exc
    return web


@dataclass
class IncidentServer:
    """Serves ``backend`` on ``host:port`` (0: any free port) from a background thread."""

    backend: "SimBackend"
    host: str = "127.0.0.1"
    port: int = 0
    speed: float = 1.0
    #: port of the observability APIs: Prometheus (and /metrics), Loki (/loki/...), Jaeger (/api/traces...)
    #: (0: any free port; None: not served)
    prom_port: int | None = 0
    #: serve the simulator's own timestamps (2026-03-02...) instead of wall-clock ones (``--real-epoch``)
    real_epoch: bool = False
    #: the wall clock the served times are anchored to (injectable for tests)
    wall_clock: Callable[[], float] = field(default=time.time, repr=False)
    #: simulated <-> wall-clock times at the HTTP boundary (``sre_env.serve.timeshift``); set by ``start``
    time_map: TimeMap | None = field(default=None, init=False, repr=False)
    _loop: LoopThread = field(default_factory=lambda: LoopThread("sre-env-serve"), init=False, repr=False)
    _runner: Any = field(default=None, init=False, repr=False)
    _ticker: "asyncio.Task[None] | None" = field(default=None, init=False, repr=False)
    _prom_runner: Any = field(default=None, init=False, repr=False)
    #: held while the world is read or advanced (requests and the clock share one thread; callers outside use it)
    lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    #: set by ``stop``: open watches end at their next poll instead of holding the shutdown
    stopping: bool = field(default=False, init=False, repr=False)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def prometheus_url(self) -> str:
        return f"http://{self.host}:{self.prom_port}"

    def prometheus_app(self) -> Any:
        web = _aiohttp()

        async def route(request: Any) -> Any:
            body = await request.read()
            with self.lock:
                offset = self.offset()
                if is_loki(request.path):
                    resp = handle_loki(self.backend, request.path, request.query_string, offset)
                elif is_jaeger(request.path):
                    resp = handle_jaeger(self.backend, request.path, request.query_string, offset)
                else:
                    now = self.time_map.wall() if self.time_map is not None and self.time_map.enabled else None
                    resp = handle_prometheus(self.backend, request.method, request.path, request.query_string, body, offset, now)
            ctype = "text/plain; version=0.0.4" if request.path == "/metrics" else resp.content_type
            return web.Response(status=resp.status, body=resp.text().encode(), content_type=ctype.split(";")[0], charset="utf-8")

        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", route)
        return app

    def app(self) -> Any:
        web = _aiohttp()

        async def route(request: Any) -> Any:
            if is_exec(request.method, request.path):
                return await serve_exec(self, request)
            if is_watch(request.method, request.query_string):
                return await serve_watch(self, request)
            if is_follow(request.method, request.path, request.query_string):
                return await serve_follow(self, request)
            body = await request.read()
            with self.lock:
                resp = handle(self.backend, request.method, request.path, request.query_string, dict(request.headers), body, f"{self.host}:{self.port}", self.offset())
            warned = [("Warning", warning_header(w)) for w in resp.warnings]  # dropped unknown fields (kube_fields)
            return web.Response(status=resp.status, text=resp.text(), content_type=resp.content_type, headers=warned or None)

        app = web.Application(client_max_size=8 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", route)
        return app

    async def _clock(self) -> None:
        last = time.monotonic()
        while True:
            await asyncio.sleep(TICK_INTERVAL_S)
            now = time.monotonic()
            if self.speed > 0:
                with self.lock:
                    self.backend.advance((now - last) * self.speed)
            last = now

    async def _start(self) -> None:
        web = _aiohttp()
        self._runner = web.AppRunner(self.app(), access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        self.port = _bound_port(site, self.port)
        if self.prom_port is not None:
            self._prom_runner = web.AppRunner(self.prometheus_app(), access_log=None)
            await self._prom_runner.setup()
            psite = web.TCPSite(self._prom_runner, self.host, self.prom_port)
            await psite.start()
            self.prom_port = _bound_port(psite, self.prom_port)
        self._ticker = asyncio.get_running_loop().create_task(self._clock())

    def offset(self) -> int:
        """Seconds from the simulator's unix times to the served wall-clock ones, for one request (hold ``lock``)."""
        return self.time_map.offset() if self.time_map is not None else 0

    def start(self) -> "IncidentServer":
        """Start serving in a daemon thread; returns once the port is bound."""
        _aiohttp()
        with self.lock:
            self.time_map = TimeMap(lambda: self.backend.now, self.speed, not self.real_epoch, self.wall_clock)

        self._loop.start(self._start, "the server")
        return self

    def stop(self) -> None:
        if not self._loop.running:
            return
        self.stopping = True

        async def teardown() -> None:
            if self._ticker is not None:
                self._ticker.cancel()
            for runner in (self._runner, self._prom_runner):
                if runner is not None:
                    await runner.cleanup()

        self._loop.stop(teardown)


def _bound_port(site: Any, asked: int) -> int:
    sockets = getattr(site._server, "sockets", None) or []  # noqa: SLF001 - aiohttp exposes the bound port only here
    return int(sockets[0].getsockname()[1]) if sockets else asked


def write_kubeconfig(path: str | Path, server: str, namespace: str = "default") -> Path:
    """A kubeconfig with one cluster/user/context for ``server`` (no credentials: loopback only)."""
    cfg = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "sre-env", "cluster": {"server": server}}],
        "users": [{"name": "sre-env", "user": {}}],
        "contexts": [{"name": "sre-env", "context": {"cluster": "sre-env", "user": "sre-env", "namespace": namespace}}],
        "current-context": "sre-env",
        "preferences": {},
    }
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return p


def serve_forever(backend: "SimBackend", *, host: str, port: int, speed: float, kubeconfig: str | Path, namespace: str, prom_port: int | None = 9090, real_epoch: bool = False) -> None:
    server = IncidentServer(backend, host, port, speed, prom_port, real_epoch).start()
    cfg = write_kubeconfig(kubeconfig, server.url, namespace)
    print(f"Kubernetes API: {server.url}\nkubeconfig: {cfg}\n  export KUBECONFIG={cfg}\n  kubectl get pods", flush=True)
    if server.prom_port is not None:
        u = server.prometheus_url
        print(f"Prometheus API: {u}/api/v1/query   metrics: {u}/metrics\nLoki API: {u}/loki/api/v1/query_range   Jaeger API: {u}/api/traces", flush=True)
    if real_epoch:
        print("Times: the simulator's own (from 2026-03-02T09:00:00Z).", flush=True)
    else:
        rule = "fixed offset" if speed == 1.0 else "simulated now re-anchored to the wall's now at every request"
        print(f"Times: by the wall clock ({rule}; --real-epoch shows the simulator's own).", flush=True)
    print("Ctrl-C stops.", flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        server.stop()
