"""A namespace guard for API servers without authentication (``sre-env serve`` on loopback).

On a real cluster the agent's token and its Role confine it to the app namespace.
A server without authentication cannot tell the agent from the harness, so the
backend puts this loopback reverse proxy in front of it and gives the agent's
kubeconfig the proxy's address: it lets through discovery, everything under the
app namespace, reading that namespace and reading nodes — what the agent's Role
and node-reading ClusterRole allow — and answers anything else with the 403
Status RBAC returns. Streams (watches) and websocket upgrades (``kubectl exec``)
are relayed as they are.

aiohttp is the ``[serve]`` extra; :func:`start_guard` returns None without it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from sre_env.loop_thread import LoopThread

__all__ = ["NamespaceGuard", "decide", "guard_kubeconfig", "start_guard"]

_HOP = frozenset({"host", "connection", "upgrade", "keep-alive", "transfer-encoding", "content-length", "sec-websocket-key", "sec-websocket-version", "sec-websocket-protocol", "sec-websocket-extensions"})
_VERB = {"GET": "get", "POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}


def decide(method: str, path: str, query: str, namespace: str, user: str) -> str | None:
    """None when the agent may make this request, else the Forbidden message RBAC would give."""
    parts = [p for p in path.split("/") if p]
    verb = _VERB.get(method.upper(), method.lower())
    discovery = not parts or parts[0] in ("version", "openapi", "healthz", "livez", "readyz") or (parts[0] == "api" and len(parts) <= 2) or (parts[0] == "apis" and len(parts) <= 3)
    if discovery:
        return None if verb == "get" else f'forbidden: User "{user}" cannot {verb} path "{path}"'
    if parts[0] == "api":
        group, rest = "", parts[2:]
    elif parts[0] == "apis":
        group, rest = parts[1], parts[3:]
    else:
        return f'forbidden: User "{user}" cannot {verb} path "{path}"'
    ns = None
    if rest[0] == "namespaces" and len(rest) >= 3:
        ns, rest = rest[1], rest[2:]
    resource, name = rest[0], (rest[1] if len(rest) > 1 else None)
    if verb == "get" and ("watch=true" in query or "watch=1" in query):
        verb = "watch"
    elif verb == "get" and name is None:
        verb = "list"
    if ns == namespace:
        return None
    if ns is None:
        if resource == "namespaces" and name == namespace and len(rest) == 2 and verb in ("get", "watch"):
            return None  # reading its own namespace
        if resource == "nodes" and group in ("", "metrics.k8s.io") and verb in ("get", "list", "watch"):
            return None  # the node-reading ClusterRole
        where = "at the cluster scope"
    else:
        where = f'in the namespace "{ns}"'
    full = "/".join([resource, *rest[2:3]])
    shown = f"{resource}.{group}" if group else resource
    named = f' "{name}"' if name else ""
    return f'{shown}{named} is forbidden: User "{user}" cannot {verb} resource "{full}" in API group "{group}" {where}'


@dataclass
class NamespaceGuard:
    """Serves on ``host``:``port`` (0: any free port) and relays allowed requests to ``upstream``."""

    upstream: str
    namespace: str
    user: str
    host: str = "127.0.0.1"
    port: int = 0
    _loop: LoopThread = field(default_factory=lambda: LoopThread("sre-env-namespace-guard"), init=False, repr=False)
    _runner: Any = field(default=None, init=False, repr=False)
    _session: Any = field(default=None, init=False, repr=False)

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    async def _relay(self, request: Any) -> Any:
        import aiohttp
        from aiohttp import WSMsgType, web

        denied = decide(request.method, request.path, request.query_string, self.namespace, self.user)
        if denied is not None:
            body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": denied, "reason": "Forbidden", "code": 403}
            return web.json_response(body, status=403)
        url = self.upstream.rstrip("/") + str(request.rel_url)
        headers = {k: v for k, v in request.headers.items() if k.lower() not in _HOP}
        if request.headers.get("Upgrade", "").lower() == "websocket":
            offered = [p.strip() for p in request.headers.get("Sec-WebSocket-Protocol", "").split(",") if p.strip()]
            try:
                upstream = await self._session.ws_connect(url, protocols=offered, headers=headers, autoping=False)
            except aiohttp.WSServerHandshakeError as exc:  # the upstream refused the upgrade: pass its status on
                status = int(exc.status or 502)
                reason = {400: "BadRequest", 403: "Forbidden", 404: "NotFound"}.get(status, "InternalError")
                body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": str(exc.message), "reason": reason, "code": status}
                return web.json_response(body, status=status)
            client = web.WebSocketResponse(protocols=[upstream.protocol] if upstream.protocol else (), autoping=False)
            await client.prepare(request)

            async def pump(src: Any, dst: Any) -> None:
                async for msg in src:
                    if msg.type == WSMsgType.BINARY:
                        await dst.send_bytes(msg.data)
                    elif msg.type == WSMsgType.TEXT:
                        await dst.send_str(msg.data)
                    elif msg.type in (WSMsgType.CLOSE, WSMsgType.CLOSING, WSMsgType.CLOSED, WSMsgType.ERROR):
                        break
                await dst.close()

            await asyncio.gather(pump(upstream, client), pump(client, upstream), return_exceptions=True)
            return client
        body = await request.read()
        async with self._session.request(request.method, url, headers=headers, data=body or None, allow_redirects=False) as resp:
            out = web.StreamResponse(status=resp.status, headers={k: v for k, v in resp.headers.items() if k.lower() not in _HOP})
            await out.prepare(request)
            try:
                async for chunk in resp.content.iter_any():
                    await out.write(chunk)
                await out.write_eof()
            except ConnectionResetError:
                pass  # the client hung up (a watch it no longer needs): leaving the block closes the upstream
            return out

    async def _start(self) -> None:
        import aiohttp
        from aiohttp import web

        self._session = aiohttp.ClientSession(auto_decompress=False)
        app = web.Application(client_max_size=8 * 1024 * 1024)
        app.router.add_route("*", "/{tail:.*}", self._relay)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        sockets = getattr(site._server, "sockets", None) or []  # noqa: SLF001 - aiohttp exposes the bound port only here
        self.port = int(sockets[0].getsockname()[1]) if sockets else self.port

    def start(self) -> "NamespaceGuard":
        self._loop.start(self._start, "the namespace guard")
        return self

    def stop(self) -> None:
        async def teardown() -> None:
            if self._runner is not None:
                await self._runner.cleanup()
            if self._session is not None:
                await self._session.close()

        self._loop.stop(teardown)


def start_guard(upstream: str, namespace: str, user: str) -> NamespaceGuard | None:
    """A running guard in front of a plain-HTTP ``upstream``, or None (no aiohttp, or TLS upstream)."""
    if not upstream.startswith("http://"):
        return None
    try:
        import aiohttp  # noqa: F401
    except ImportError:
        return None
    return NamespaceGuard(upstream, namespace, user).start()


def guard_kubeconfig(kubeconfig: Path, namespace: str, user: str | None = None) -> NamespaceGuard | None:
    """Start a guard for the server ``kubeconfig`` names and point the kubeconfig at it (None: not possible)."""
    from .sandbox import AGENT_NAME

    cfg = yaml.safe_load(kubeconfig.read_text())
    cluster = cfg["clusters"][0]["cluster"]
    guard = start_guard(cluster["server"], namespace, user or f"system:serviceaccount:{namespace}:{AGENT_NAME}")
    if guard is not None:
        cluster["server"] = guard.url
        kubeconfig.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return guard
