"""The namespace guard: the agent's Role and Pod Security, enforced in front of a server that cannot scope a token.

On a real cluster the agent's ServiceAccount token, its Role and the admission
checks confine it to the app namespace (``agent_access.py``). ``sre-env serve``
has one bearer token for everything (or none with ``--no-auth``), so the
backend puts this reverse proxy in front of it and gives the agent's kubeconfig
the proxy's address and a token of the proxy's own. The guard:

* answers a request without that token with the apiserver's 401 (it may
  listen on the Docker bridge, where other containers can reach it);
* authorizes every request against the agent's Role and ClusterRole
  (``agent_access.agent_rules``, decided by ``sre_env.kube.rbac`` as the
  apiserver's RBAC authorizer decides), plus the discovery paths every
  authenticated user may read, and refuses anything else with RBAC's 403;
* admits writes as Pod Security would: a pod the agent creates must meet
  ``restricted``, and a workload it creates or changes must not add a
  ``baseline`` violation to its pod template (the object is judged as the
  server would store it: the request is first sent with ``dryRun=All``). A
  real cluster with the namespace label accepts such a workload and refuses its
  pods; the simulator runs no Pod Security admission, so the guard refuses the
  write itself, in the same words;
* relays the rest with the server's own token, which the agent never sees;
  streams (watches) and websocket upgrades (``kubectl exec``) are relayed as
  they are.

It speaks HTTPS with a CA of its own (``kubectl`` sends no credentials over
plain HTTP; ``sre_env.kube.serving_cert``), written into the agent's kubeconfig,
and trusts the server's CA from the harness's kubeconfig.

aiohttp is the ``[serve]`` extra; :func:`start_guard` returns None without it.
"""

from __future__ import annotations

import asyncio
import base64
import json
import ssl
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode

import yaml

from sre_env.errors import ApiError
from sre_env.kube.access_review import SSAR_PATH, review_answer, review_spec
from sre_env.kube.authn import authenticated, bearer_header, unauthorized_status
from sre_env.kube.pod_security import forbidden_message, new_violations, pod_spec_of, violations
from sre_env.kube.rbac import StaticRbacObjects, allows
from sre_env.kube.serving_cert import ServingCert, serving_cert
from sre_env.loop_thread import LoopThread, cleanup_runner

from .agent_access import agent_role, agent_user

__all__ = ["NamespaceGuard", "RequestAttributes", "access_review", "decide", "guard_kubeconfig", "request_attributes", "start_guard"]

_HOP = frozenset({"host", "connection", "upgrade", "keep-alive", "transfer-encoding", "content-length", "authorization", "sec-websocket-key", "sec-websocket-version", "sec-websocket-protocol", "sec-websocket-extensions"})
_VERB = {"GET": "get", "POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete"}
#: paths every authenticated user may GET (the system:discovery and system:public-info-viewer ClusterRoles)
_DISCOVERY_ROOTS = ("version", "openapi", "healthz", "livez", "readyz")
#: resource (plural) -> kind, for the kinds whose writes Pod Security judges
_TEMPLATED = {"deployments": "Deployment", "statefulsets": "StatefulSet", "daemonsets": "DaemonSet", "replicasets": "ReplicaSet", "replicationcontrollers": "ReplicationController", "jobs": "Job", "cronjobs": "CronJob"}


@dataclass(frozen=True)
class RequestAttributes:
    """What the apiserver's request-info resolver makes of a resource request (RBAC's attributes)."""

    verb: str
    group: str
    resource: str
    subresource: str | None
    namespace: str | None
    name: str | None

    @property
    def full_resource(self) -> str:
        return f"{self.resource}/{self.subresource}" if self.subresource else self.resource


def request_attributes(method: str, path: str, query: str) -> RequestAttributes | None:
    """The RBAC attributes of a resource request, or None for a non-resource path (discovery and the rest)."""
    parts = [p for p in path.split("/") if p]
    if parts[:1] == ["api"] and len(parts) > 2:
        group, rest = "", parts[2:]
    elif parts[:1] == ["apis"] and len(parts) > 3:
        group, rest = parts[1], parts[3:]
    else:
        return None
    ns = None
    if rest[0] == "namespaces" and len(rest) >= 3:
        ns, rest = rest[1], rest[2:]
    resource, name = rest[0], (rest[1] if len(rest) > 1 else None)
    sub = rest[2] if len(rest) > 2 else None
    verb = _VERB.get(method.upper(), method.lower())
    params = dict(parse_qsl(query))
    if verb == "get" and params.get("watch") in ("true", "1"):
        verb = "watch"
    elif verb == "get" and name is None:
        verb = "list"
    elif verb == "delete" and name is None:
        verb = "deletecollection"
    return RequestAttributes(verb, group, resource, sub, ns, name)


def _forbidden(user: str, attrs: RequestAttributes) -> str:
    """RBAC's wording: ``pods "x" is forbidden: User "u" cannot create resource "pods/exec" in API group "" ...``."""
    where = f'in the namespace "{attrs.namespace}"' if attrs.namespace else "at the cluster scope"
    shown = f"{attrs.resource}.{attrs.group}" if attrs.group else attrs.resource
    named = f' "{attrs.name}"' if attrs.name else ""
    return f'{shown}{named} is forbidden: User "{user}" cannot {attrs.verb} resource "{attrs.full_resource}" in API group "{attrs.group}" {where}'


def decide(method: str, path: str, query: str, namespace: str, user: str, *, rbac: StaticRbacObjects | None = None) -> str | None:
    """None when the agent's Role and ClusterRole allow this request, else the Forbidden message RBAC would give.

    ``user`` is the agent's ServiceAccount user (``system:serviceaccount:<ns>:sre-env-agent``); ``rbac`` its
    objects (default: :func:`agent_access.agent_role` of ``namespace``).
    """
    attrs = request_attributes(method, path, query)
    if attrs is None:
        verb = _VERB.get(method.upper(), method.lower())
        return None if _non_resource_allowed(verb, path) else f'forbidden: User "{user}" cannot {verb} path "{path}"'
    objects = rbac if rbac is not None else StaticRbacObjects(agent_role(namespace))
    if allows(objects, user, attrs.verb, attrs.full_resource, attrs.group, attrs.namespace, attrs.name):
        return None
    return _forbidden(user, attrs)


def _non_resource_allowed(verb: str, path: str) -> bool:
    """What every authenticated user may do off the resource paths: read discovery (``/api/*``, ``/apis/*``,
    ``/version``, ``/openapi/*``) and the health checks."""
    parts = [p for p in path.split("/") if p]
    return verb == "get" and (not parts or parts[0] in _DISCOVERY_ROOTS or parts[0] in ("api", "apis"))


def access_review(body: bytes, namespace: str, user: str, *, rbac: StaticRbacObjects | None = None) -> tuple[int, dict[str, Any]]:
    """(code, body) answering a SelfSubjectAccessReview (``kubectl auth can-i``) as the agent's Role decides it."""
    try:
        spec = review_spec(body)
    except ApiError as err:
        return err.code, _status(err.code, err.reason, err.message)
    res = spec.get("resourceAttributes")
    if res is None:
        attrs = spec["nonResourceAttributes"]
        return 201, review_answer(spec, _non_resource_allowed(str(attrs.get("verb", "")), str(attrs.get("path", ""))))
    objects = rbac if rbac is not None else StaticRbacObjects(agent_role(namespace))
    resource, sub = str(res.get("resource", "")), res.get("subresource")
    full = f"{resource}/{sub}" if sub else resource
    allowed = allows(objects, user, str(res.get("verb", "")), full, str(res.get("group", "")), res.get("namespace") or None, res.get("name") or None)
    return 201, review_answer(spec, allowed)


def _status(code: int, reason: str, message: str) -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message, "reason": reason, "code": code}


@dataclass
class NamespaceGuard:
    """Serves on ``host``:``port`` (0: any free port) and relays what the agent may do to ``upstream``.

    ``token``: what the agent must present (None: nothing is checked); ``upstream_token``: what the guard
    presents to ``upstream`` (the served simulator's token); ``upstream_ca``: the CA it trusts for ``upstream``
    (base64 PEM, a kubeconfig's ``certificate-authority-data``).
    """

    upstream: str
    namespace: str
    user: str
    host: str = "127.0.0.1"
    port: int = 0
    token: str | None = field(default=None, repr=False)
    upstream_token: str | None = field(default=None, repr=False)
    upstream_ca: str | None = field(default=None, repr=False)
    #: the guard's own CA and certificate (made by ``start``)
    cert: ServingCert | None = field(default=None, init=False, repr=False)
    _loop: LoopThread = field(default_factory=lambda: LoopThread("sre-env-namespace-guard"), init=False, repr=False)
    _runner: Any = field(default=None, init=False, repr=False)
    _session: Any = field(default=None, init=False, repr=False)
    _rbac: StaticRbacObjects = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self._rbac = StaticRbacObjects(agent_role(self.namespace))

    @property
    def url(self) -> str:
        return f"https://{self.host}:{self.port}"

    def _headers(self, request: Any) -> dict[str, str]:
        """The request's headers for upstream: hop-by-hop ones and the agent's credential replaced by the guard's."""
        return {**{k: v for k, v in request.headers.items() if k.lower() not in _HOP}, **bearer_header(self.upstream_token)}

    async def _json(self, method: str, url: str, headers: dict[str, str], body: bytes | None) -> tuple[int, Any]:
        async with self._session.request(method, url, headers={**headers, "Accept": "application/json"}, data=body, allow_redirects=False) as resp:
            text = await resp.read()
        try:
            return resp.status, json.loads(text)
        except ValueError:
            return resp.status, None

    async def _admission(self, request: Any, attrs: RequestAttributes, body: bytes) -> str | None:
        """The Pod Security refusal of a write (see the module docstring), or None."""
        pods = attrs.resource == "pods" and attrs.group == "" and attrs.subresource is None
        kind = _TEMPLATED.get(attrs.resource) if attrs.subresource is None else None
        if not (pods or kind) or attrs.verb not in ("create", "update", "patch"):
            return None
        headers = self._headers(request)
        base = self.upstream.rstrip("/") + request.path
        live = None
        if attrs.verb != "create":
            code, live = await self._json("GET", base, headers, None)
            live = live if code == 200 else None
        if pods and (attrs.verb != "create" and live is not None):
            return None  # a pod's spec is all but immutable once created
        query = urlencode([*parse_qsl(request.query_string, keep_blank_values=True), ("dryRun", "All")])
        code, result = await self._json(request.method, f"{base}?{query}", headers, body or None)
        spec = pod_spec_of(result) if code < 300 else None
        if spec is None:
            return None  # refused or not a pod-making object: the real request gets the server's own answer
        name = str((result.get("metadata") or {}).get("name") or attrs.name or "")
        resource = f"{attrs.resource}.{attrs.group}" if attrs.group else attrs.resource
        if pods:
            found = violations(spec, "restricted")
            return forbidden_message(resource, name, "restricted", found) if found else None
        found = new_violations(spec, pod_spec_of(live), "baseline")
        return forbidden_message(resource, name, "baseline", found) if found else None

    async def _relay(self, request: Any) -> Any:
        import aiohttp
        from aiohttp import WSMsgType, web

        if not authenticated(request.headers.get("Authorization"), self.token):
            return web.json_response(unauthorized_status(), status=401)
        if request.method == "POST" and request.path == SSAR_PATH:  # kubectl auth can-i: the guard's Role answers
            code, answer = access_review(await request.read(), self.namespace, self.user, rbac=self._rbac)
            return web.json_response(answer, status=code)
        denied = decide(request.method, request.path, request.query_string, self.namespace, self.user, rbac=self._rbac)
        if denied is not None:
            return web.json_response(_status(403, "Forbidden", denied), status=403)
        url = self.upstream.rstrip("/") + str(request.rel_url)
        headers = self._headers(request)
        if request.headers.get("Upgrade", "").lower() == "websocket":
            offered = [p.strip() for p in request.headers.get("Sec-WebSocket-Protocol", "").split(",") if p.strip()]
            try:
                upstream = await self._session.ws_connect(url, protocols=offered, headers=headers, autoping=False)
            except aiohttp.WSServerHandshakeError as exc:  # the upstream refused the upgrade: pass its status on
                status = int(exc.status or 502)
                reason = {400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound"}.get(status, "InternalError")
                return web.json_response(_status(status, reason, str(exc.message)), status=status)
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
        attrs = request_attributes(request.method, request.path, request.query_string)
        refused = await self._admission(request, attrs, body) if attrs is not None else None
        if refused is not None:
            return web.json_response(_status(403, "Forbidden", refused), status=403)
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

        trust = ssl.create_default_context(cadata=base64.b64decode(self.upstream_ca).decode()) if self.upstream_ca else ssl.create_default_context()
        self._session = aiohttp.ClientSession(auto_decompress=False, connector=aiohttp.TCPConnector(ssl=trust))
        app = web.Application(client_max_size=8 * 1024 * 1024)  # above the server's own limit: it answers the 413
        app.router.add_route("*", "/{tail:.*}", self._relay)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        assert self.cert is not None
        site = web.TCPSite(self._runner, self.host, self.port, ssl_context=self.cert.server_context())
        await site.start()
        sockets = getattr(site._server, "sockets", None) or []  # noqa: SLF001 - aiohttp exposes the bound port only here
        self.port = int(sockets[0].getsockname()[1]) if sockets else self.port

    def start(self) -> "NamespaceGuard":
        self.cert = serving_cert([self.host])
        self._loop.start(self._start, "the namespace guard")
        return self

    def stop(self) -> None:
        async def teardown() -> None:
            if self._runner is not None:
                await cleanup_runner(self._runner)
            if self._session is not None:
                await self._session.close()

        self._loop.stop(teardown)


def start_guard(upstream: str, namespace: str, user: str, *, host: str = "127.0.0.1", token: str | None = None, upstream_token: str | None = None, upstream_ca: str | None = None) -> NamespaceGuard | None:
    """A running guard in front of ``upstream``, or None without aiohttp (the ``[serve]`` extra)."""
    try:
        import aiohttp  # noqa: F401
    except ImportError:
        return None
    return NamespaceGuard(upstream, namespace, user, host, token=token, upstream_token=upstream_token, upstream_ca=upstream_ca).start()


def guard_kubeconfig(kubeconfig: Path, namespace: str, *, host: str = "127.0.0.1", token: str | None = None, upstream_token: str | None = None) -> NamespaceGuard | None:
    """Start a guard (on ``host``) for the server ``kubeconfig`` names and point the kubeconfig at it, trusting the
    guard's CA (None: not possible). ``token`` is the one the kubeconfig's user carries; ``upstream_token`` the
    server's; the server's CA is the kubeconfig's own."""
    cfg = yaml.safe_load(kubeconfig.read_text())
    cluster = cfg["clusters"][0]["cluster"]
    guard = start_guard(cluster["server"], namespace, agent_user(namespace), host=host, token=token, upstream_token=upstream_token, upstream_ca=cluster.get("certificate-authority-data"))
    if guard is not None and guard.cert is not None:
        cfg["clusters"][0]["cluster"] = {"server": guard.url, "certificate-authority-data": guard.cert.ca_data}
        kubeconfig.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return guard
