"""How an application is described to the simulator: data, not code.

An :class:`AppSpec` lists the components (one Deployment or StatefulSet and one
Service each), how each process starts (required env, config keys, listen
port, start-up time), whom it calls (by DNS name and port, read from env or
config), what one request costs, how it logs, and the workload the load
generator drives through the call graph. The simulator turns this into
Kubernetes objects and computes behaviour from it each tick; faults change the
objects, never this spec.

A spec names what it needs from the simulator by string (its model, each
component's ``log_format``); the simulator resolves the names in its own tables
(sre_env.sim.control.app_models, sre_env.sim.logs.render), so this package imports
nothing but itself and sre_env.kube.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Dependency", "Component", "Call", "RequestType", "AppSpec", "register_spec"]

# App specs are immutable and shared by every world: snapshots pickle them by name.
_SPEC_KEYS: dict[int, tuple[str, ...]] = {}
_SPECS: dict[tuple[str, ...], Any] = {}


def _load_spec(key: tuple[str, ...]) -> Any:
    try:
        return _SPECS[key]
    except KeyError:
        raise LookupError(f"app spec {key!r} is not registered in this process; import its app module first") from None


class _PickledByName:
    def __reduce_ex__(self, protocol: Any) -> Any:
        key = _SPEC_KEYS.get(id(self))
        if key is not None and _SPECS.get(key) is self:
            return (_load_spec, (key,))
        return super().__reduce_ex__(protocol)


def register_spec(app: "AppSpec") -> None:
    """Make ``app`` and its components pickle by reference (idempotent)."""
    key = ("app", app.name)
    if _SPECS.get(key) is app:
        return
    _SPECS[key] = app
    _SPEC_KEYS[id(app)] = key
    for comp in app.components:
        ckey = ("component", app.name, comp.name)
        _SPECS[ckey] = comp
        _SPEC_KEYS[id(comp)] = ckey


@dataclass(frozen=True)
class Dependency:
    """An outgoing connection: the caller dials ``service:port``.

    ``address_env`` names the env var that carries the address (``host:port``)
    when the process reads it from its environment; ``None`` means the address
    is compiled into the image's config (then only Service/DNS faults break it).
    """

    service: str
    port: int
    address_env: str | None = None
    protocol: str = "grpc"  # grpc | http | mongodb | memcached | redis | consul | thrift
    #: a failing non-critical dependency degrades (cache miss) instead of failing the request.
    critical: bool = True
    #: the entry of the caller's JSON config file (``Component.address_file``) that holds
    #: ``{"addr": ..., "port": ...}`` for this peer, read at start (sre_env.sim.runtime.appconfig)
    config_key: str | None = None
    #: the client keeps its connections (pool, HTTP keep-alive, one HTTP/2 channel); False: it
    #: opens a new TCP connection per call and closes it, leaving a TIME_WAIT socket each time
    #: (sre_env.sim.runtime.oslimits)
    pooled: bool = True


@dataclass(frozen=True)
class Component(_PickledByName):
    name: str
    image: str
    container: str
    command: tuple[str, ...] = ()
    args: tuple[str, ...] = ()
    role: str = "service"  # frontend | service | cache | database | infra
    kind: str = "Deployment"  # Deployment | StatefulSet
    replicas: int = 1
    #: container ports as (name, containerPort, protocol)
    container_ports: tuple[tuple[str, int, str], ...] = ()
    #: service ports as (name, port, targetPort, protocol)
    service_ports: tuple[tuple[str, int, int, str], ...] = ()
    #: the port the process actually listens on (the first container port by default)
    listen_port: int = 0
    env: tuple[tuple[str, str], ...] = ()
    #: env vars without which the process exits at start (with ``missing_env_log``)
    required_env: tuple[str, ...] = ()
    dependencies: tuple[Dependency, ...] = ()
    labels: tuple[tuple[str, str], ...] = ()
    cpu_request: str = "100m"
    cpu_limit: str = "1"
    memory_request: str = ""
    memory_limit: str = ""
    #: steady working set of one replica, MiB
    memory_mib: float = 30.0
    #: requests per second one replica serves before queueing
    capacity_rps: float = 500.0
    #: service time of one request, ms, excluding downstream calls
    latency_ms: float = 2.0
    startup_s: float = 5.0
    #: name of the PVC mounted at ``data_path`` (databases); created with the app
    volume_claim: str | None = None
    data_path: str = "/data/db"
    storage: str = "1Gi"
    #: one of the log dialects in sre_env.sim.logs.render (go-service, mongodb, memcached, consul, jaeger, frontend)
    log_format: str = "go-service"
    #: ``envFrom`` sources as (``"configMap"`` | ``"secret"``, object name)
    env_from: tuple[tuple[str, str], ...] = ()
    #: env vars read from a Secret key: (var, secret name, key), rendered as ``valueFrom.secretKeyRef``
    secret_env: tuple[tuple[str, str, str], ...] = ()
    #: files from the component's own ConfigMap (named like it), mounted with subPath:
    #: (key, mountPath, content); helm-style manifests only
    config_files: tuple[tuple[str, str, str], ...] = ()
    #: mount path of the JSON config file the process reads peer addresses from (see Dependency.config_key)
    address_file: str = ""
    #: labels only the pod template carries (helm charts add ``app: <name>`` there)
    template_labels: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Call:
    """One edge of a request's call tree: ``caller`` calls ``callee`` ``times`` per request.

    ``miss_ratio`` < 1 models a read-through cache: the callee is only called on a miss.
    """

    caller: str
    callee: str
    times: float = 1.0
    operation: str = ""
    miss_ratio: float = 1.0
    #: bytes one call adds to the callee's dataset (writes into a stateful store such as redis)
    payload_bytes: float = 0.0


@dataclass(frozen=True)
class RequestType:
    name: str
    method: str
    path: str
    weight: float
    calls: tuple[Call, ...] = ()
    #: what users call this feature in an incident report ("hotel search"); defaults to the name
    feature: str = ""


@dataclass(frozen=True)
class AppSpec(_PickledByName):
    name: str
    namespace: str
    components: tuple[Component, ...]
    requests: tuple[RequestType, ...]
    #: the component the load generator calls and its port
    entrypoint: str = "frontend"
    entry_port: int = 5000
    #: the Service the load generator dials when it is not named like the entrypoint component
    entry_service: str = ""
    #: offered load, requests per second (wrk2-style constant throughput)
    rps: float = 200.0
    #: client timeout, seconds
    client_timeout_s: float = 10.0
    #: the load generator enters through ingress-nginx (an Ingress routing ``/`` to the entrypoint)
    edge_ingress: bool = False
    description: str = ""
    #: images that exist in the registry beyond those the components use
    extra_images: tuple[str, ...] = field(default_factory=tuple)
    #: ConfigMaps created with the app: (name, ((key, value), ...))
    config_maps: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()
    #: Opaque Secrets created with the app: (name, ((key, plain value), ...)); stored base64 as the API does
    secrets: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()
    #: reshapes the generic manifests into the app's own (labels, ConfigMaps, init containers):
    #: ``customize(app, objects) -> objects``; None keeps the kompose-style defaults
    customize: Any = None
    #: the name of the app's model in the simulator (feature flags, queues, sessions, an operator:
    #: an object with ``tick(world, app, plan, res, dt)`` and traffic modifiers), looked up in
    #: sre_env.sim.control.app_models; "": the app is stateless beyond its pods
    model: str = ""
    #: span and method names the app's own protos give its calls: ((callee, operation), name),
    #: e.g. the OpenTelemetry demo's ``oteldemo.PaymentService/Charge``; other calls are named
    #: the way hotel-reservation's protos name them (sre_env.telemetry.lazylogs.grpc_method)
    span_names: tuple[tuple[tuple[str, str], str], ...] = ()
    #: node labels and taints the app's deployment guide asks for (dedicated nodes), applied once
    #: before its objects are created: ``(node, ((label, value), ...), (taint, ...))``
    node_setup: tuple[tuple[str, tuple[tuple[str, str], ...], tuple[tuple[tuple[str, str], ...], ...]], ...] = ()
    #: the label that names a component on its objects and selects its pods
    label_key: str = "io.kompose.service"
    #: which public manifests the objects imitate: "kompose" (hotel-reservation) or "helm"
    manifest_style: str = "kompose"

    def component(self, name: str) -> Component:
        for c in self.components:
            if c.name == name:
                return c
        raise KeyError(name)
