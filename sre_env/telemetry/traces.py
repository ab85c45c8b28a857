"""Jaeger-style traces, generated lazily from the call graph and per-time state.

Nothing is stored per request. A trace is a pure function of ``(world state,
15 s bucket, request type, index)``: for each bucket the frontend served
requests in, a few representative traces per request type exist (ids derived
with blake2b from the variant seed, bucket and index; randomness from a
``crc32``-seeded PRNG). Walking a request type's call tree
(:class:`~sre_env.apps.base.Call`) gives the spans:

* every traced service (the Go services: frontend and the gRPC servers) has a
  server span; each call from it is a client span in the caller's process;
  gRPC callees get a server span under that client span, MongoDB and memcached
  calls are client spans only (those processes do not report to Jaeger);
* durations come from the services' p99 latency at that time
  (``service_sample``), the caller's own time being what its children leave;
* a call whose edge is broken in the current traffic plan (connection refused,
  DNS failure, timeout) fails with the edge's real error text once the metrics
  at that time show the caller failing or the callee starved; the callee then
  has no span at all, and the error propagates to the root as the Go handlers
  return it;
* leaf services fail on their own with their error ratio at that time (a
  MongoDB reading a failing disk);
* a cache call decides whether the database call under it appears (its miss
  ratio, or always when the cache call failed).

The past uses the current plan's edges and error texts: a fault fixed since
then still shows its old errors only where the metrics then showed failures.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import re
import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sre_env.kube.timefmt import EPOCH, iso
from sre_env.telemetry.metrics_store import client_sample, service_sample

from .lazylogs import INTERVAL_S, ServiceSampler, grpc_method, interval_time

if TYPE_CHECKING:
    from sre_env.apps.base import AppSpec, Call, Component, RequestType
    from sre_env.sim.kernel.world import World

__all__ = [
    "Span",
    "Trace",
    "TraceStore",
    "services",
    "operations",
    "find_traces",
    "get_trace",
    "dependencies",
    "trace_summary",
    "traces_json",
    "format_trace",
    "format_trace_list",
    "format_dependencies",
    "dependencies_json",
]

_EPOCH_US = int(EPOCH.timestamp()) * 1_000_000
#: representative traces per request type per 15 s bucket
TRACES_PER_TYPE = 3
#: how far back traces exist (Jaeger's in-memory store; our metric history is an hour)
RETENTION_S = 3600.0
_TRACED_ROLES = ("frontend", "service")


@dataclass
class Span:
    trace_id: str
    span_id: str
    parent_id: str | None
    service: str
    operation: str
    start_us: int
    duration_us: int
    kind: str  # server | client
    tags: list[tuple[str, Any]] = field(default_factory=list)
    logs: list[tuple[int, list[tuple[str, Any]]]] = field(default_factory=list)
    hostname: str = ""

    @property
    def error(self) -> bool:
        return any(k == "error" and v is True for k, v in self.tags)

    def tag(self, key: str) -> Any:
        return next((v for k, v in self.tags if k == key), None)


@dataclass
class Trace:
    trace_id: str
    t: float
    request: str
    #: requests this representative stands for
    weight: float
    spans: list[Span]

    @property
    def root(self) -> Span:
        return self.spans[0]

    @property
    def duration_us(self) -> int:
        return self.root.duration_us

    @property
    def error_count(self) -> int:
        return sum(1 for s in self.spans if s.error)


# =========================================================================== generation


def _app(world: "World", app: "AppSpec | str | None") -> "AppSpec | None":
    if app is None:
        return world.apps[0] if world.apps else None
    if isinstance(app, str):
        return next((a for a in world.apps if a.name == app or a.namespace == app), None)
    return app


def _traced(comp: "Component") -> bool:
    return comp.role in _TRACED_ROLES


def _trace_id(world: "World", app: "AppSpec", bucket: int, ri: int, j: int) -> str:
    return hashlib.blake2b(f"{world.variant_seed}/{app.name}/{bucket}/{ri}/{j}".encode(), digest_size=8).hexdigest()


class TraceStore:
    """Generates and memoises the traces of one world at its current time (one per command)."""

    def __init__(self, world: "World", app: "AppSpec | str | None" = None) -> None:
        self.world = world
        self.app = _app(world, app)
        self.sampler = ServiceSampler(world)
        self.now = world.clock.now
        self._buckets: dict[int, list[Trace]] = {}
        self._pods = self._pod_names()
        self._comps = {c.name: c for c in self.app.components} if self.app else {}

    def _pod_names(self) -> dict[str, str]:
        return {p["metadata"]["uid"]: p["metadata"]["name"] for p in self.world.store.iter("Pod")}

    # -- per-time state
    def _state(self, comp: str, bucket: int) -> tuple[float, float, float]:
        assert self.app is not None
        s = self.sampler.sample(self.app.namespace, comp, min(interval_time(bucket), self.now))
        return s if s is not None else (0.0, 0.0, 0.0)

    def _edge_fail(self, caller: str, callee: str, bucket: int) -> tuple[float, str, str]:
        """(probability, error text, target) that a call on this edge fails to connect at ``bucket``."""
        plan = self.world.plans.get(self.app.name) if self.app else None
        edge = plan.edges.get((caller, callee)) if plan is not None else None
        if edge is None or edge.ok >= 0.999:
            return 0.0, "", ""
        c_rps, c_err, _ = self._state(caller, bucket)
        d_rps, _, _ = self._state(callee, bucket)
        if c_err > 0.0005 or (c_rps > 0 and d_rps <= 0.01):
            return 1.0 - edge.ok, edge.error or "connection refused", edge.target
        return 0.0, "", ""

    def _op_fail(self, callee: str, operation: str) -> tuple[float, str] | None:
        """(share, error) of ``operation`` calls ``callee`` refuses, or None when it refuses no command in particular."""
        op_errors = self.world.op_errors
        plan = self.world.plans.get(self.app.name) if self.app else None
        if not op_errors or plan is None:
            return None
        uids = plan.serving.get(callee, ())
        mine = [(op, v) for (uid, op), v in op_errors.items() if uid in uids]
        if not mine:
            return None
        hits = [v for op, v in mine if op == operation]
        return (max(f for f, _ in hits), hits[0][1]) if hits else (0.0, "")

    def _children(self, rtype: "RequestType", comp: str) -> tuple["Call", ...]:
        plan = self.world.plans.get(self.app.name) if self.app else None
        if plan is not None and (rtype.name, comp) in plan.children:
            return plan.children[(rtype.name, comp)]
        return tuple(c for c in rtype.calls if c.caller == comp)

    def _own_error(self, comp: str, bucket: int) -> float:
        """Failure share of ``comp`` not explained by anything it calls (leaf errors, overload).

        The error ratio is an aggregate over all request types, so any failing
        callee or edge under ``comp`` in any request type explains it.
        """
        _, err, _ = self._state(comp, bucket)
        if err <= 0 or self.app is None:
            return 0.0
        for callee in {c.callee for r in self.app.requests for c in r.calls if c.caller == comp}:
            if self._edge_fail(comp, callee, bucket)[0] > 0 or self._state(callee, bucket)[1] > 0.0005:
                return 0.0
        return err

    def _mean_ms(self, comp: str, bucket: int) -> float:
        _, _, p99 = self._state(comp, bucket)
        spec = self._comps.get(comp)
        base = spec.latency_ms if spec else 1.0
        return p99 / 2.2 if p99 > 0 else base

    def _host(self, comp: str, rng: random.Random) -> str:
        plan = self.world.plans.get(self.app.name) if self.app else None
        uids = plan.serving.get(comp, ()) if plan is not None else ()
        if not uids:
            return comp
        return self._pods.get(uids[rng.randrange(len(uids))], comp)

    # -- traces
    def bucket(self, b: int) -> list[Trace]:
        """The representative traces whose root starts in 15 s bucket ``b``."""
        cached = self._buckets.get(b)
        if cached is not None:
            return cached
        out: list[Trace] = []
        app = self.app
        if app is not None and b * INTERVAL_S <= self.now and b * INTERVAL_S >= self.now - RETENTION_S - INTERVAL_S:
            sample = self.sampler.sample(app.namespace, app.entrypoint, min(interval_time(b), self.now))
            rps = sample[0] if sample else 0.0
            for ri, rtype in enumerate(app.requests):
                n = rps * rtype.weight * INTERVAL_S
                k = min(TRACES_PER_TYPE, int(math.ceil(n))) if n >= 0.5 else 0
                for j in range(k):
                    tr = self._make(b, ri, j, n / k)
                    if tr is not None:
                        out.append(tr)
        out.sort(key=lambda tr: (tr.t, tr.trace_id))
        self._buckets[b] = out
        return out

    def _make(self, b: int, ri: int, j: int, weight: float) -> Trace | None:
        app = self.app
        assert app is not None
        rtype = app.requests[ri]
        tid = _trace_id(self.world, app, b, ri, j)
        rng = random.Random(zlib.crc32(f"{self.world.variant_seed}/{app.name}/{b}/{ri}/{j}".encode()))
        t = b * INTERVAL_S + rng.random() * INTERVAL_S
        if t > self.now:
            return None
        builder = _Builder(self, rtype, b, tid, rng)
        root = builder.server(app.entrypoint, f"HTTP {rtype.method} {rtype.path}", None, _EPOCH_US + int(t * 1e6), root=True)
        builder.spans.sort(key=lambda s: (s.start_us, s.span_id))
        builder.spans.remove(root.span)
        return Trace(tid, t, rtype.name, weight, [root.span] + builder.spans)

    def traces(self, start: float, end: float) -> list[Trace]:
        """All representative traces with a root in ``[start, end]``, newest first."""
        out: list[Trace] = []
        for b in range(int(end // INTERVAL_S), int(start // INTERVAL_S) - 1, -1):
            out.extend(tr for tr in reversed(self.bucket(b)) if start <= tr.t <= end)
        return out

    def by_id(self, trace_id: str) -> Trace | None:
        app = self.app
        if app is None:
            return None
        tid = trace_id.strip().lower().lstrip("0")
        for b in range(int(self.now // INTERVAL_S), int((self.now - RETENTION_S) // INTERVAL_S) - 1, -1):
            for ri in range(len(app.requests)):
                for j in range(TRACES_PER_TYPE):
                    if _trace_id(self.world, app, b, ri, j).lstrip("0") == tid:
                        return next((tr for tr in self.bucket(b) if tr.trace_id.lstrip("0") == tid), None)
        return None


@dataclass
class _Result:
    span: Span
    failed: bool
    message: str


class _Builder:
    """Walks one request type's call tree into spans."""

    def __init__(self, store: TraceStore, rtype: "RequestType", bucket: int, trace_id: str, rng: random.Random) -> None:
        self.store = store
        self.rtype = rtype
        self.bucket = bucket
        self.trace_id = trace_id
        self.rng = rng
        self.spans: list[Span] = []
        self._n = 0

    def _span_id(self, root: bool) -> str:
        self._n += 1
        if root:
            return self.trace_id
        return hashlib.blake2b(f"{self.trace_id}/{self._n}".encode(), digest_size=8).hexdigest()

    def _jitter(self) -> float:
        return math.exp(self.rng.gauss(0.0, 0.3))

    def server(self, comp: str, operation: str, parent: str | None, start_us: int, root: bool = False) -> _Result:
        store, rng = self.store, self.rng
        span = Span(self.trace_id, self._span_id(root), parent, comp, operation, start_us, 0, "server", hostname=store._host(comp, rng))
        self.spans.append(span)
        children = store._children(self.rtype, comp)
        expected = sum(c.times * c.miss_ratio * store._mean_ms(c.callee, self.bucket) for c in children)
        spec = store._comps.get(comp)
        self_ms = max(store._mean_ms(comp, self.bucket) - expected, (spec.latency_ms if spec else 1.0) * 0.3) * self._jitter()
        cursor = start_us + max(1, int(self_ms * 400))  # ~40% of own time before the first call
        failed, message = False, ""
        cache_failed = False
        for call in children:
            if failed:
                break
            reps = int(call.times) + (1 if rng.random() < call.times - int(call.times) else 0)
            for _ in range(reps):
                if call.miss_ratio < 1.0 and not cache_failed and rng.random() >= call.miss_ratio:
                    continue
                res = self.client(comp, call, span.span_id, cursor + int(rng.uniform(20, 80)))
                cursor = res.span.start_us + res.span.duration_us
                critical = _critical(store._comps.get(comp), call.callee)
                if res.failed and critical:
                    failed, message = True, res.message
                    break
                if res.failed:
                    cache_failed = True
        if not failed and rng.random() < store._own_error(comp, self.bucket):
            failed, message = True, _own_error_text(comp)
        end = cursor + max(1, int(self_ms * 600))
        span.duration_us = end - start_us
        self._tag_server(span, comp, root, failed, message)
        return _Result(span, failed, message)

    def _tag_server(self, span: Span, comp: str, root: bool, failed: bool, message: str) -> None:
        if root:
            span.tags = [("component", "net/http"), ("http.method", self.rtype.method), ("http.url", self.rtype.path), ("http.status_code", 500 if failed else 200), ("span.kind", "server")]
        else:
            code = _grpc_code(message) if failed else 0
            span.tags = [("component", "gRPC"), ("grpc.status_code", code), ("span.kind", "server")]
        if failed:
            span.tags += [("error", True), ("otel.status_code", "ERROR"), ("otel.status_description", message)]
            span.logs.append((span.start_us + span.duration_us, [("event", "error"), ("message", message)]))

    def client(self, caller: str, call: "Call", parent: str, start_us: int) -> _Result:
        store, rng = self.store, self.rng
        callee = store._comps.get(call.callee)
        traced = callee is not None and _traced(callee)
        protocol = _protocol(store._comps.get(caller), call.callee)
        op, server_op = _span_names(store.app, protocol, traced, call)
        span = Span(self.trace_id, self._span_id(False), parent, caller, op, start_us, 0, "client", hostname=store._host(caller, rng))
        self.spans.append(span)
        p_fail, error, target = store._edge_fail(caller, call.callee, self.bucket)
        failed, message = False, ""
        if p_fail > 0 and rng.random() < p_fail:
            failed = True
            timeout = "timeout" in error
            span.duration_us = int((1_000_000 if timeout else rng.uniform(300, 1500)))
            message = _dial_message(protocol, error, timeout)
        elif traced:
            inner = self.server(call.callee, server_op, span.span_id, start_us + int(rng.uniform(40, 150)))
            span.duration_us = inner.span.start_us + inner.span.duration_us - start_us + int(rng.uniform(40, 150))
            failed, message = inner.failed, inner.message
            if failed:
                message = _grpc_wrap(inner.message)
        else:
            span.duration_us = max(1, int(store._mean_ms(call.callee, self.bucket) * self._jitter() * 1000))
            _, err, _ = store._state(call.callee, self.bucket)
            # a store that refuses only some commands (redis at maxmemory refuses writes) fails those alone
            op_fail = store._op_fail(call.callee, call.operation) if err > 0 else None
            if op_fail is not None:
                if op_fail[0] > 0 and rng.random() < op_fail[0]:
                    failed, message = True, op_fail[1]
            elif err > 0 and rng.random() < err:
                failed, message = True, "EOF" if protocol == "mongodb" else "memcache: unexpected response line from \"get\""
        span.tags = _client_tags(protocol, call, target or _default_target(store, call.callee), traced)
        if failed:
            code = _grpc_code(message)
            if traced or protocol == "grpc":
                span.tags.append(("grpc.status_code", code))
            span.tags += [("error", True), ("otel.status_code", "ERROR"), ("otel.status_description", message)]
            span.logs.append((span.start_us + span.duration_us, [("event", "error"), ("message", message)]))
        elif traced:
            span.tags.append(("grpc.status_code", 0))
        return _Result(span, failed, message)


def _critical(comp: "Component | None", callee: str) -> bool:
    if comp is None:
        return True
    return next((d.critical for d in comp.dependencies if d.service == callee), True)


def _span_names(app: "AppSpec | None", protocol: str, traced: bool, call: "Call") -> tuple[str, str]:
    """(client span, server span) operation names: gRPC method paths, or the Thrift services' snake_case spans."""
    if traced and protocol == "thrift":
        # DeathStarBench's C++ handlers: "read_home_timeline_client" / "read_home_timeline_server"
        snake = re.sub(r"(?<!^)(?=[A-Z])", "_", call.operation).lower()
        return f"{snake}_client", f"{snake}_server"
    if traced:
        name = grpc_method(app, call.callee, call.operation)
        return name, name
    name = f"{'mongo' if protocol == 'mongodb' else protocol} {call.operation}".strip()
    return name, name


def _protocol(comp: "Component | None", callee: str) -> str:
    if comp is None:
        return "grpc"
    return next((d.protocol for d in comp.dependencies if d.service == callee), "grpc")


def _default_target(store: TraceStore, callee: str) -> str:
    comp = store._comps.get(callee)
    port = comp.service_ports[0][1] if comp is not None and comp.service_ports else 0
    return f"{callee}:{port}" if port else callee


def _client_tags(protocol: str, call: "Call", target: str, traced: bool) -> list[tuple[str, Any]]:
    tags: list[tuple[str, Any]] = [("span.kind", "client"), ("peer.service", call.callee), ("peer.address", target)]
    if traced or protocol == "grpc":
        tags.insert(0, ("component", "gRPC"))
    elif protocol == "mongodb":
        tags = [("component", "mgo"), ("db.type", "mongodb"), ("db.instance", call.callee.removeprefix("mongodb-") + "-db"), ("db.statement", call.operation)] + tags
    else:
        tags = [("component", "gomemcache"), ("db.type", "memcached"), ("db.statement", call.operation)] + tags
    return tags


def _dial_message(protocol: str, error: str, timeout: bool) -> str:
    if protocol == "mongodb":
        return "no reachable servers" if not error.startswith("dial tcp") else error
    if protocol in ("memcached",):
        return error
    if timeout:
        return "rpc error: code = DeadlineExceeded desc = context deadline exceeded"
    return f'rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing {error}"'


def _grpc_wrap(message: str) -> str:
    return message if message.startswith("rpc error:") else f"rpc error: code = Unknown desc = {message}"


def _grpc_code(message: str) -> int:
    for name, code in (("Unavailable", 14), ("DeadlineExceeded", 4), ("Internal", 13), ("Unknown", 2)):
        if f"code = {name}" in message:
            return code
    return 2


def _own_error_text(comp: str) -> str:
    return f"{comp}: internal error"


# =========================================================================== queries


def services(world: "World", app: "AppSpec | str | None" = None) -> list[str]:
    """Services that report spans (the traced processes), sorted like Jaeger's list."""
    a = _app(world, app)
    return sorted(c.name for c in a.components if _traced(c)) if a else []


def operations(world: "World", service: str, app: "AppSpec | str | None" = None) -> list[tuple[str, str]]:
    """(operation, span kind) a service's spans carry, from the call graph."""
    a = _app(world, app)
    if a is None:
        return []
    comps = {c.name: c for c in a.components}
    ops: set[tuple[str, str]] = set()
    for r in a.requests:
        if service == a.entrypoint:
            ops.add((f"HTTP {r.method} {r.path}", "server"))
        for call in r.calls:
            callee = comps.get(call.callee)
            traced = callee is not None and _traced(callee)
            proto = _protocol(comps.get(call.caller), call.callee)
            client_op, server_op = _span_names(a, proto, traced, call)
            if call.callee == service and traced:
                ops.add((server_op, "server"))
            if call.caller == service:
                ops.add((client_op, "client"))
    return sorted(ops)


def _span_matches(span: Span, service: str, operation: str | None, tags: dict[str, str] | None, min_us: int | None, max_us: int | None) -> bool:
    if span.service != service:
        return False
    if operation is not None and span.operation != operation:
        return False
    if min_us is not None and span.duration_us < min_us:
        return False
    if max_us is not None and span.duration_us > max_us:
        return False
    if tags:
        have = {k: _tag_str(v) for k, v in span.tags}
        for _, fields in span.logs:  # Jaeger's tag search also matches log fields
            for k, v in fields:
                have.setdefault(k, _tag_str(v))
        if any(have.get(k) != v for k, v in tags.items()):
            return False
    return True


def _tag_str(v: Any) -> str:
    if v is True:
        return "true"
    if v is False:
        return "false"
    return str(v)


def find_traces(
    world: "World",
    service: str,
    operation: str | None = None,
    tags: dict[str, str] | None = None,
    min_duration_ms: float | None = None,
    lookback_s: float = 3600.0,
    limit: int = 20,
    max_duration_ms: float | None = None,
    app: "AppSpec | str | None" = None,
    store: TraceStore | None = None,
) -> list[Trace]:
    """Traces with a span of ``service`` matching the filters, newest first (Jaeger's search)."""
    store = store or TraceStore(world, app)
    now = store.now
    min_us = int(min_duration_ms * 1000) if min_duration_ms is not None else None
    max_us = int(max_duration_ms * 1000) if max_duration_ms is not None else None
    out: list[Trace] = []
    if limit <= 0:
        return out
    for tr in store.traces(now - min(lookback_s, RETENTION_S), now):
        if any(_span_matches(s, service, operation, tags, min_us, max_us) for s in tr.spans):
            out.append(tr)
            if len(out) >= limit:
                break
    return out


def get_trace(world: "World", trace_id: str, app: "AppSpec | str | None" = None) -> Trace | None:
    """The trace with this id, if it is still retained."""
    return TraceStore(world, app).by_id(trace_id)


def dependencies(world: "World", lookback_s: float = 3600.0, app: "AppSpec | str | None" = None) -> list[tuple[str, str, int]]:
    """(parent, child, call count) over the lookback, from the services' request rates."""
    a = _app(world, app)
    if a is None:
        return []
    ratios, shares = _edge_ratios(a)
    sampler = ServiceSampler(world)
    now = world.clock.now
    counts = {edge: 0.0 for edge in ratios}
    first = int((now - min(lookback_s, RETENTION_S)) // INTERVAL_S)
    for b in range(first, int(now // INTERVAL_S) + 1):
        lo, hi = max(b * INTERVAL_S, now - lookback_s), min((b + 1) * INTERVAL_S, now)
        if hi <= lo:
            continue
        at = min(interval_time(b), now)
        for (caller, callee), ratio in ratios.items():
            src = sampler.sample(a.namespace, caller, at)
            dst = sampler.sample(a.namespace, callee, at)
            if src is None or dst is None:
                continue
            # what reached the callee, or what the caller attempted when nothing did
            rate = dst[0] * shares[(caller, callee)] if dst[0] > 0.01 else src[0] * ratio
            counts[(caller, callee)] += rate * (hi - lo)
    return [(p, c, int(round(n))) for (p, c), n in sorted(counts.items())]


def _edge_ratios(app: "AppSpec") -> tuple[dict[tuple[str, str], float], dict[tuple[str, str], float]]:
    """Per edge: calls per request arriving at the caller, and the edge's share of the callee's arrivals.

    Both from the request mix, repeats and cache miss ratios of the call trees.
    """
    arrivals: dict[str, float] = {app.entrypoint: 1.0}
    calls: dict[tuple[str, str], float] = {}
    for r in app.requests:
        arr: dict[str, float] = {app.entrypoint: 1.0}
        for c in r.calls:
            n = arr.get(c.caller, 0.0) * c.times * c.miss_ratio
            calls[(c.caller, c.callee)] = calls.get((c.caller, c.callee), 0.0) + r.weight * n
            arr[c.callee] = arr.get(c.callee, 0.0) + n
        for comp, n in arr.items():
            if comp != app.entrypoint:
                arrivals[comp] = arrivals.get(comp, 0.0) + r.weight * n
    ratios = {edge: n / arrivals[edge[0]] for edge, n in calls.items() if arrivals.get(edge[0])}
    into: dict[str, float] = {}
    for (_, callee), n in calls.items():
        into[callee] = into.get(callee, 0.0) + n
    shares = {edge: (n / into[edge[1]] if into.get(edge[1]) else 0.0) for edge, n in calls.items() if edge in ratios}
    return ratios, shares


# =========================================================================== summary for the observation


def trace_summary(world: "World", app: "AppSpec | str | None", t: float | None = None, window_s: float = 60.0) -> str:
    """A few lines on the traces of the last ``window_s``: error rate by service, slowest operations."""
    a = _app(world, app)
    if a is None:
        return "traces: no application\n"
    store = TraceStore(world, a)
    end = store.now if t is None else min(t, store.now)
    traces = store.traces(end - window_s, end)
    if not traces:
        client = client_sample(world, a.namespace, end)
        if client is not None and client[0] > 0:
            return f"traces (last {int(window_s)}s): none; {a.entrypoint} reported no spans while clients offered {client[0]:.0f} req/s\n"
        return f"traces (last {int(window_s)}s): none sampled\n"
    total = sum(tr.weight for tr in traces)
    failed = sum(tr.weight for tr in traces if tr.root.error)
    spans: dict[str, float] = {}
    errors: dict[str, float] = {}
    durations: dict[tuple[str, str], list[int]] = {}
    first_error: tuple[str, str, str] | None = None
    for tr in traces:
        for s in tr.spans:
            if s.kind == "server":
                spans[s.service] = spans.get(s.service, 0.0) + tr.weight
                durations.setdefault((s.service, s.operation), []).append(s.duration_us)
            if s.error:
                if s.kind == "server":
                    errors[s.service] = errors.get(s.service, 0.0) + tr.weight
                if first_error is None and s.kind == "client" and not _has_failed_child(tr, s):
                    first_error = (s.service, str(s.tag("peer.service")), str(s.tag("otel.status_description")))
    lines = [f"traces (last {int(window_s)}s, {len(traces)} sampled of ~{int(round(total))} requests): {100.0 * failed / total:.1f}% failed"]
    rates = sorted(((errors[s] / spans[s], s) for s in errors if spans.get(s)), key=lambda x: (-x[0], x[1]))
    lines.append("  errors by service: " + (", ".join(f"{s} {100.0 * r:.1f}%" for r, s in rates) if rates else "none"))
    if first_error is not None:
        lines.append(f"  failing call: {first_error[0]} -> {first_error[1]}: {first_error[2]}")
    avg = {k: sum(v) / len(v) for k, v in durations.items()}
    backend = [(v, k) for k, v in avg.items() if k[0] != a.entrypoint]
    root = [(v, k) for k, v in avg.items() if k[0] == a.entrypoint]
    parts = []
    if root:
        v, (svc, op) = max(root, key=lambda x: (x[0], x[1]))
        parts.append(f"{svc} {op} avg {v / 1000:.1f}ms")
    if backend:
        v, (svc, op) = max(backend, key=lambda x: (x[0], x[1]))
        parts.append(f"backend {svc} {op} avg {v / 1000:.1f}ms")
    if parts:
        lines.append("  slowest: " + "; ".join(parts))
    return "\n".join(lines) + "\n"


def _has_failed_child(tr: Trace, span: Span) -> bool:
    return any(s.parent_id == span.span_id and s.error for s in tr.spans)


# =========================================================================== rendering


def _jtag(key: str, value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"key": key, "type": "bool", "value": value}
    if isinstance(value, int):
        return {"key": key, "type": "int64", "value": value}
    if isinstance(value, float):
        return {"key": key, "type": "float64", "value": value}
    return {"key": key, "type": "string", "value": str(value)}


def _trace_dict(tr: Trace) -> dict[str, Any]:
    procs: dict[tuple[str, str], str] = {}
    for s in tr.spans:
        procs.setdefault((s.service, s.hostname), f"p{len(procs) + 1}")
    spans = []
    for s in tr.spans:
        refs = [{"refType": "CHILD_OF", "traceID": tr.trace_id, "spanID": s.parent_id}] if s.parent_id else []
        spans.append(
            {
                "traceID": tr.trace_id,
                "spanID": s.span_id,
                "operationName": s.operation,
                "references": refs,
                "startTime": s.start_us,
                "duration": s.duration_us,
                "tags": [_jtag(k, v) for k, v in s.tags],
                "logs": [{"timestamp": ts, "fields": [_jtag(k, v) for k, v in fields]} for ts, fields in s.logs],
                "processID": procs[(s.service, s.hostname)],
                "warnings": None,
                "flags": 1,
            }
        )
    processes = {
        pid: {"serviceName": svc, "tags": [_jtag("hostname", host), _jtag("jaeger.version", "Go-2.30.0"), _jtag("client-uuid", hashlib.blake2b(f"{svc}/{host}".encode(), digest_size=8).hexdigest())]}
        for (svc, host), pid in procs.items()
    }
    return {"traceID": tr.trace_id, "spans": spans, "processes": processes, "warnings": None}


def traces_json(traces: list[Trace]) -> str:
    """The Jaeger query API's ``/api/traces`` response body."""
    return json.dumps({"data": [_trace_dict(tr) for tr in traces], "total": len(traces), "limit": 0, "offset": 0, "errors": None}, ensure_ascii=False) + "\n"


def _stamp(us: int) -> str:
    sec = (us - _EPOCH_US) // 1_000_000
    return f"{iso(sec)[:-1]}.{(us % 1_000_000) // 1000:03d}Z"


def _ms(us: int) -> str:
    return f"{us / 1000:.2f}ms"


def format_trace_list(traces: list[Trace]) -> str:
    """One row per trace, newest first, like Jaeger's search results."""
    if not traces:
        return "No traces found.\n"
    rows = [("TRACE ID", "START", "DURATION", "SPANS", "ERRORS", "ROOT")]
    for tr in traces:
        rows.append((tr.trace_id, _stamp(tr.root.start_us), _ms(tr.duration_us), str(len(tr.spans)), str(tr.error_count), f"{tr.root.service}: {tr.root.operation}"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    return "".join("   ".join(c.ljust(w) for c, w in zip(r[:-1], widths)) + "   " + r[-1] + "\n" for r in rows)


def format_trace(tr: Trace) -> str:
    """The span tree with offsets from the root, durations and the tags that matter."""
    head = f"Trace {tr.trace_id}  {tr.root.service}: {tr.root.operation}  {_ms(tr.duration_us)}  {len(tr.spans)} spans, {tr.error_count} errors  started {_stamp(tr.root.start_us)}\n"
    children: dict[str | None, list[Span]] = {}
    for s in tr.spans:
        children.setdefault(s.parent_id, []).append(s)
    out = [head, f"{'OFFSET':>10}  {'DURATION':>10}  SPAN\n"]
    t0 = tr.root.start_us

    def walk(span: Span, depth: int) -> None:
        keys = ("http.status_code", "grpc.status_code", "peer.address", "db.statement") if span.kind == "client" or span.parent_id is None else ("http.status_code", "grpc.status_code")
        shown = " ".join(f"{k}={_tag_str(span.tag(k))}" for k in keys if span.tag(k) is not None)
        flag = " ERROR" if span.error else ""
        out.append(f"{'+' + _ms(span.start_us - t0):>10}  {_ms(span.duration_us):>10}  {'  ' * depth}{span.service} {span.operation} [{span.kind}]{flag} {shown}".rstrip() + "\n")
        if span.error:
            msg = span.tag("otel.status_description")
            out.append(f"{'':>10}  {'':>10}  {'  ' * depth}  error: {msg}\n")
        for c in sorted(children.get(span.span_id, []), key=lambda s: (s.start_us, s.span_id)):
            walk(c, depth + 1)

    walk(tr.root, 0)
    return "".join(out)


def format_dependencies(deps: list[tuple[str, str, int]]) -> str:
    rows = [("PARENT", "CHILD", "CALLS")] + [(p, c, str(n)) for p, c, n in deps]
    w0, w1 = max(len(r[0]) for r in rows), max(len(r[1]) for r in rows)
    return "".join(f"{p.ljust(w0)}   {c.ljust(w1)}   {n}\n" for p, c, n in rows)


def dependencies_json(deps: list[tuple[str, str, int]]) -> str:
    return json.dumps({"data": [{"parent": p, "child": c, "callCount": n, "source": "jaeger"} for p, c, n in deps], "total": len(deps), "limit": 0, "offset": 0, "errors": None}) + "\n"


def span_summary(world: "World", app: "AppSpec | str | None", t: float | None = None, window_s: float = 30.0) -> str:
    """The trace summary without sampling traces: the same rates and edge errors the spans come from.

    Cheap enough for every observation; ``trace_summary`` samples real traces and
    agrees with it on which calls fail.
    """
    a = _app(world, app)
    if a is None:
        return "traces: no application\n"
    now = world.clock.now if t is None else t
    client = client_sample(world, a.namespace, now)
    if client is None:
        return f"traces (last {int(window_s)}s): none sampled\n"
    offered, success, _ = client
    lines = [f"traces (last {int(window_s)}s, ~{int(round(offered * window_s))} requests): {100.0 * (1.0 - success):.1f}% failed"]
    errors, slow = [], []
    for comp in sorted(a.components, key=lambda c: c.name):
        if not _traced(comp):
            continue
        sample = service_sample(world, a.namespace, comp.name, now)
        if sample is None:
            continue
        rps, err, p99 = sample
        if rps > 0 and err > 0.001:
            errors.append((-err, comp.name))
        if rps > 0:
            slow.append((-p99, comp.name))
    lines.append("  errors by service: " + (", ".join(f"{name} {100.0 * -e:.1f}%" for e, name in sorted(errors)) if errors else "none"))
    plan = world.plans.get(a.name)
    if plan is not None:
        broken = sorted((caller, callee, edge.error) for (caller, callee), edge in plan.edges.items() if edge.ok < 0.999 and edge.error)
        if broken:
            caller, callee, error = broken[0]
            lines.append(f"  failing call: {caller} -> {callee}: {error}")
    if slow:
        p99, name = sorted(slow)[0]
        lines.append(f"  slowest: {name} p99 {-p99:.1f}ms")
    return "\n".join(lines) + "\n"
