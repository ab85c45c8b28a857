"""``sre-env serve``: a simulated incident in real time, behind the real protocols.

aiohttp applications serve the Kubernetes API subset (``kube_api``) and the
Prometheus HTTP API with ``/metrics`` (``prom_api``), Loki's and Jaeger's query APIs
(``logs_traces_api``, on the Prometheus port: their paths do not collide) on loopback ports. The simulated cluster advances with the wall clock (times a
speed-up) in the same event loop as the requests, so every request sees one
consistent world. A kubeconfig is written for the user's ``kubectl``. Times cross
the HTTP boundary as wall-clock times (``timeshift``: ``time_map``, ``offset()``)
unless ``real_epoch`` is set.

Every request must carry the server's bearer token (``token``: generated per
server from ``secrets``, written into the kubeconfig; ``sre_env.kube.authn``),
on both ports: loopback is shared by every user and process of the machine,
and this API reads every Secret and deletes namespaces. ``token=None``
(``sre-env serve --no-auth``) serves anyone. The Kubernetes API speaks HTTPS
with a CA made for this server (``sre_env.kube.serving_cert``; in the
kubeconfig), as a real apiserver does -- ``kubectl`` sends no credentials over
plain HTTP; the observability port stays plain HTTP, as Prometheus does. Bodies over the apiserver's size
limit are refused before they are read, and a handler that raises answers a
500 ``Status`` rather than an HTML page (``limits``). ``kubectl auth can-i``
(SelfSubjectAccessReview) is answered yes: the token's holder is the cluster's
admin (the namespace guard answers for the agent, ``sre_env.k8s.guard``).

aiohttp is the ``[serve]`` extra; importing this module without it raises a
clear message.
"""

from __future__ import annotations

import asyncio
import logging
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from sre_env.errors import ApiError, MissingExtraError
from sre_env.kube.access_review import SSAR_PATH, review_answer, review_spec
from sre_env.kube.authn import UNAUTHORIZED_TEXT, authenticated, bearer_header, new_token, unauthorized_status
from sre_env.kube.serving_cert import ServingCert, serving_cert
from sre_env.loop_thread import LoopThread, cleanup_runner

from .kube_api import handle, status_response
from .kube_exec import is_exec, serve_exec
from .kube_fields import warning_header
from .kube_logs import is_follow, serve_follow
from .kube_watch import is_watch, serve_watch
from .limits import MAX_REQUEST_BODY_BYTES, input_body, internal_error_status, too_large_status
from .logs_traces_api import handle_jaeger, handle_loki, is_jaeger, is_loki
from .prom_api import handle_prometheus
from .timeshift import TimeMap

if TYPE_CHECKING:
    from sre_env.sim.backend import SimBackend

__all__ = ["IncidentServer", "write_kubeconfig", "serve_forever"]

#: how often the simulated clock catches up with the wall clock
TICK_INTERVAL_S = 0.25
#: the form body Go's ``ParseForm`` reads at most (Prometheus' POST queries)
_MAX_FORM_BYTES = 10 << 20
_log = logging.getLogger(__name__)


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
    #: the bearer token every request must carry (fresh per server; None: no authentication, ``--no-auth``)
    token: str | None = field(default_factory=new_token, repr=False)
    #: simulated <-> wall-clock times at the HTTP boundary (``sre_env.serve.timeshift``); set by ``start``
    time_map: TimeMap | None = field(default=None, init=False, repr=False)
    #: the Kubernetes port's CA and certificate (fresh per ``start``)
    cert: ServingCert | None = field(default=None, init=False, repr=False)
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
        return f"https://{self.host}:{self.port}"

    @property
    def prometheus_url(self) -> str:
        return f"http://{self.host}:{self.prom_port}"

    @property
    def auth_headers(self) -> dict[str, str]:
        """What a client sends on either port (``Authorization: Bearer <token>``; empty without authentication)."""
        return bearer_header(self.token)

    def client_ssl_context(self) -> ssl.SSLContext:
        """A client TLS context that trusts this server's CA (for HTTP clients other than kubectl)."""
        if self.cert is None:
            raise RuntimeError("the server has not been started")
        return self.cert.client_context()

    def write_kubeconfig(self, path: str | Path, namespace: str = "default") -> Path:
        """A kubeconfig for this server: its URL, its CA, its token."""
        if self.cert is None:
            raise RuntimeError("the server has not been started")
        return write_kubeconfig(path, self.url, namespace, self.token, self.cert.ca_data)

    def _front_door(self, answer: Callable[[int, str], Any]) -> Any:
        """aiohttp middleware run before every handler: the token, then the body limit and failures
        (``answer(code, message)`` words them in the port's protocol)."""
        web = _aiohttp()

        @web.middleware
        async def door(request: Any, handler: Any) -> Any:
            if not authenticated(request.headers.get("Authorization"), self.token):
                return answer(401, "Unauthorized")
            try:
                return await handler(request)
            except web.HTTPRequestEntityTooLarge:
                return answer(413, "")
            except web.HTTPException:
                raise
            except Exception as exc:  # a bug in a handler: the client still gets an answer it can parse
                _log.exception("sre-env serve: %s %s failed", request.method, request.path)
                return answer(500, f"{type(exc).__name__}: {exc}")

        return door

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

        app = web.Application(client_max_size=_MAX_FORM_BYTES, middlewares=[self._front_door(_observability_answer)])
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
            if request.method == "POST" and request.path == SSAR_PATH:
                # kubectl auth can-i: whoever holds serve's token is the cluster's admin (the guard answers for the agent)
                try:
                    return web.json_response(review_answer(review_spec(body), True), status=201)
                except ApiError as err:
                    resp = status_response(err)
                    return web.Response(status=resp.status, text=resp.text(), content_type=resp.content_type)
            if request.method in ("POST", "PUT"):
                try:
                    body = input_body(request.headers.get("Content-Type"), body)  # 415 and YAML: limits
                except ApiError as err:
                    resp = status_response(err)
                    return web.Response(status=resp.status, text=resp.text(), content_type=resp.content_type)
            with self.lock:
                resp = handle(self.backend, request.method, request.path, request.query_string, dict(request.headers), body, f"{self.host}:{self.port}", self.offset())
            warned = [("Warning", warning_header(w)) for w in resp.warnings]  # dropped unknown fields (kube_fields)
            return web.Response(status=resp.status, text=resp.text(), content_type=resp.content_type, headers=warned or None)

        app = web.Application(client_max_size=MAX_REQUEST_BODY_BYTES, middlewares=[self._front_door(_kube_answer)])
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
        assert self.cert is not None
        site = web.TCPSite(self._runner, self.host, self.port, ssl_context=self.cert.server_context())
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
        self.cert = serving_cert([self.host])

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
                    await cleanup_runner(runner)

        self._loop.stop(teardown)


def _kube_answer(code: int, message: str) -> Any:
    """The Kubernetes API's refusals: the apiserver's Status bodies."""
    web = _aiohttp()
    if code == 401:
        body = unauthorized_status()
    elif code == 413:
        body = too_large_status()
    else:
        body = internal_error_status(message)
    return web.json_response(body, status=code)


def _observability_answer(code: int, message: str) -> Any:
    """The Prometheus port's refusals: exporter-toolkit's 401 (for a bearer token), Prometheus' error JSON otherwise."""
    web = _aiohttp()
    if code == 401:
        return web.Response(status=401, text=UNAUTHORIZED_TEXT, headers={"WWW-Authenticate": "Bearer"})
    kind, text = ("bad_data", "http: POST too large") if code == 413 else ("internal", message)
    return web.json_response({"status": "error", "errorType": kind, "error": text}, status=code)


def _bound_port(site: Any, asked: int) -> int:
    sockets = getattr(site._server, "sockets", None) or []  # noqa: SLF001 - aiohttp exposes the bound port only here
    return int(sockets[0].getsockname()[1]) if sockets else asked


def write_kubeconfig(path: str | Path, server: str, namespace: str = "default", token: str | None = None, ca_data: str | None = None) -> Path:
    """A kubeconfig with one cluster/user/context for ``server`` (trusting the base64 PEM ``ca_data``); the user
    carries ``token``. Readable by its owner only."""
    cluster: dict[str, Any] = {"server": server, **({"certificate-authority-data": ca_data} if ca_data else {})}
    cfg = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "sre-env", "cluster": cluster}],
        "users": [{"name": "sre-env", "user": {"token": token} if token else {}}],
        "contexts": [{"name": "sre-env", "context": {"cluster": "sre-env", "user": "sre-env", "namespace": namespace}}],
        "current-context": "sre-env",
        "preferences": {},
    }
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.touch(mode=0o600)
    p.chmod(0o600)
    p.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return p


def serve_forever(backend: "SimBackend", *, host: str, port: int, speed: float, kubeconfig: str | Path, namespace: str, prom_port: int | None = 9090, real_epoch: bool = False, auth: bool = True) -> None:
    """Serve until Ctrl-C; ``auth=False`` (``--no-auth``) serves without a token, after a warning on stderr."""
    import sys

    server = IncidentServer(backend, host, port, speed, prom_port, real_epoch, token=new_token() if auth else None)
    if not auth:
        print(f"warning: --no-auth: anyone who can reach {host} (every user and process of this machine on loopback) can read every Secret, change and delete everything in the served cluster", file=sys.stderr, flush=True)
    server.start()
    cfg = server.write_kubeconfig(kubeconfig, namespace)
    print(f"Kubernetes API: {server.url}\nkubeconfig: {cfg}\n  export KUBECONFIG={cfg}\n  kubectl get pods", flush=True)
    if server.token:
        print(f"Bearer token (in the kubeconfig; every request on both ports needs it):\n  export SRE_ENV_TOKEN={server.token}", flush=True)
    if server.prom_port is not None:
        u = server.prometheus_url
        print(f"Prometheus API: {u}/api/v1/query   metrics: {u}/metrics\nLoki API: {u}/loki/api/v1/query_range   Jaeger API: {u}/api/traces", flush=True)
        if server.token:
            print(f'  curl -H "Authorization: Bearer $SRE_ENV_TOKEN" {u}/api/v1/alerts', flush=True)
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
