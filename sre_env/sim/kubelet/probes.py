"""The kubelet's prober: what a liveness/readiness probe gets back from the pod.

A probe's result is computed from the process side, as the real prober sees it:

* ``tcpSocket``: does any process in the pod's network namespace listen on the
  port (the kernel accepts the connection even when the process is busy);
* ``httpGet``: a listener must exist, must speak HTTP/1.1 (a gRPC server answers
  with an HTTP/2 SETTINGS frame, memcached with ``ERROR``: "malformed HTTP
  response"), must serve the path with a 2xx/3xx status (the hotel frontend's
  file server gives 404 for a path it has no file for, its handlers 400 without
  their query parameters), and must answer within ``timeoutSeconds`` — the
  answer waits in the same queue as the pod's requests, so its latency is the
  pod's queueing delay under the load the traffic model gives it;
* ``exec``: the command runs while the process does.

Failure texts are the kubelet's own (``connect: connection refused``,
``HTTP probe failed with statuscode: 404``, ``context deadline exceeded
(Client.Timeout exceeded while awaiting headers)``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sre_env.sim.kernel.images import split_image

if TYPE_CHECKING:
    from sre_env.apps.base import Component
    from sre_env.sim.kernel.pods import ContainerRuntime, PodRuntime
    from sre_env.sim.kernel.world import World

__all__ = ["ProbeResult", "probe_port", "run_probe", "process_latency_ms", "http_status"]

Obj = dict[str, Any]

#: what an HTTP/1.1 client reads back from servers that do not speak it
_MALFORMED = {
    # grpc-go writes its SETTINGS frame before reading the client preface
    "grpc": "\\x00\\x00\\x06\\x04\\x00\\x00\\x00\\x00\\x00\\x00\\x05\\x00\\x00@\\x00",
    "memcached": "ERROR",
}

#: HTTP routes of programs that serve HTTP on their listen port: (image repo, command) -> path -> status
_FRONTEND_ROUTES = {"/": 200, "/index.html": 301, "/hotels": 400, "/recommendations": 400, "/user": 400, "/reservation": 400}
_CONSUL_ROUTES = {"/v1/status/leader": 200, "/v1/status/peers": 200, "/v1/agent/self": 200, "/v1/agent/members": 200, "/v1/catalog/services": 200, "/ui/": 200, "/": 301}


@dataclass(frozen=True)
class ProbeResult:
    ok: bool
    #: the prober's output on failure (what the Unhealthy event says after "Liveness probe failed: ")
    output: str = ""


def probe_port(probe: Obj, spec: Obj) -> int | None:
    """The probe's port as a number (named ports resolve against the container's ports; -1: no such name)."""
    for kind in ("httpGet", "tcpSocket", "grpc"):
        if kind in probe:
            port = (probe[kind] or {}).get("port")
            if isinstance(port, str) and not port.isdigit():
                for p in spec.get("ports") or ():
                    if p.get("name") == port:
                        return int(p["containerPort"])
                return -1
            try:
                return int(port) if port is not None else None
            except (TypeError, ValueError):
                return -1
    return None


def _protocol(world: "World", pod: Obj, ctr: "ContainerRuntime") -> str:
    """What the process listening in ``ctr`` speaks: http, grpc, mongodb, memcached or tcp."""
    from sre_env.sim.runtime.programs import main_component

    spec = next((c for c in pod["spec"].get("containers") or () if c.get("name") == ctr.name), {})
    comp = main_component(world, pod, spec)
    if comp is None:
        repo, _ = split_image(spec.get("image", ""))
        base = repo.rsplit("/", 1)[-1]
        if base in ("mongo", "memcached"):
            return "mongodb" if base == "mongo" else "memcached"
        return "http"  # exporters, nginx, tools: HTTP servers
    return component_protocol(comp)


def component_protocol(comp: "Component") -> str:
    if comp.log_format in ("mongodb", "memcached"):
        return comp.log_format
    if comp.log_format in ("frontend", "consul"):
        return "http"
    if comp.log_format == "go-service":
        return "grpc"
    return "tcp"


def http_status(comp: "Component | None", path: str) -> int:
    """The status a program's HTTP server answers ``GET path`` with (no query string)."""
    path = (path or "/").split("?", 1)[0] or "/"
    if comp is None:
        return 200
    if comp.log_format == "frontend":
        return _FRONTEND_ROUTES.get(path, 404)
    if comp.log_format == "consul":
        if path.startswith(("/v1/health/", "/v1/kv/", "/v1/catalog/")):
            return 200
        return _CONSUL_ROUTES.get(path, 404)
    if comp.log_format == "mongodb":
        # mongod answers any HTTP request on its port with a plain-text notice and 200
        return 200
    return 404


def process_latency_ms(world: "World", uid: str, comp: "Component | None") -> float:
    """How long a request to the pod's process waits and runs now, from the traffic model's load on it.

    The pod is a single queue (M/M/1): service time / (1 - utilisation). An
    overloaded pod's queue grows until its clients time out, so its answer
    takes the clients' timeout.
    """
    if comp is None:
        return 1.0
    app = next((a for a in world.apps if any(c is comp for c in a.components)), None)
    res = world.last_traffic.get(app.name) if app is not None else None
    rps = res.pod_rps.get(uid, 0.0) if res is not None else 0.0
    rho = rps / comp.capacity_rps if comp.capacity_rps > 0 else 0.0
    if rho >= 1.0:
        return (app.client_timeout_s if app is not None else 10.0) * 1000.0
    return comp.latency_ms / (1.0 - rho)


def _listener(rt: "PodRuntime", port: int, now: float) -> "ContainerRuntime | None":
    for c in rt.containers.values():
        if c.listen_port == port and c.serving(now):
            return c
    return None


def run_probe(world: "World", pod: Obj, rt: "PodRuntime", ctr: "ContainerRuntime", spec: Obj, probe: Obj, now: float) -> ProbeResult:
    """One probe of ``ctr`` at ``now``."""
    from sre_env.sim.runtime.programs import main_component

    ip = rt.ip
    if "exec" in probe:
        if ctr.serving(now) or (ctr.state == "running" and ctr.listen_port is None and ctr.exit_at is None and ctr.started_at is not None):
            return ProbeResult(True)
        return ProbeResult(False, "")
    port = probe_port(probe, spec)
    if port is None:
        return ProbeResult(False, "")
    if "httpGet" in probe:
        get = probe["httpGet"] or {}
        host = get.get("host") or ip
        scheme = str(get.get("scheme", "HTTP")).lower()
        path = get.get("path", "/") or "/"
        url = f"{scheme}://{host}:{port}{path}"
        if port < 0:
            return ProbeResult(False, f'Get "{scheme}://{host}:{get.get("port")}{path}": dial tcp: address {get.get("port")}: invalid port')
        holder = _listener(rt, port, now)
        if holder is None:
            return ProbeResult(False, f'Get "{url}": dial tcp {host}:{port}: connect: connection refused')
        proto = _protocol(world, pod, holder)
        if proto in _MALFORMED:
            return ProbeResult(False, f'Get "{url}": net/http: HTTP/1.x transport connection broken: malformed HTTP response "{_MALFORMED[proto]}"')
        if proto == "tcp":
            return ProbeResult(False, f'Get "{url}": EOF')
        hspec = next((c for c in pod["spec"].get("containers") or () if c.get("name") == holder.name), {})
        comp = main_component(world, pod, hspec)
        latency = process_latency_ms(world, rt.uid, comp)
        timeout_ms = max(float(probe.get("timeoutSeconds", 1) or 1), 1.0) * 1000.0
        if latency > timeout_ms:
            return ProbeResult(False, f'Get "{url}": context deadline exceeded (Client.Timeout exceeded while awaiting headers)')
        status = http_status(comp, path)
        if 200 <= status < 400:
            return ProbeResult(True)
        return ProbeResult(False, f"HTTP probe failed with statuscode: {status}")
    if "tcpSocket" in probe:
        host = (probe["tcpSocket"] or {}).get("host") or ip
        if port > 0 and _listener(rt, port, now) is not None:
            return ProbeResult(True)
        return ProbeResult(False, f"dial tcp {host}:{port}: connect: connection refused")
    if "grpc" in probe:
        holder = _listener(rt, port, now) if port > 0 else None
        if holder is not None and _protocol(world, pod, holder) == "grpc":
            return ProbeResult(True)
        if holder is not None:
            return ProbeResult(False, f'timeout: failed to connect service "{ip}:{port}" within 1s: context deadline exceeded')
        return ProbeResult(False, f'timeout: failed to connect service "{ip}:{port}" within 1s: context deadline exceeded')
    return ProbeResult(False, "")
