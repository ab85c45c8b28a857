"""Per-request log lines, generated only when a time range is asked for.

The world materialises discrete events (start-up, fatal errors, dependency
errors) as log lines while it ticks. Lines for every request would cost memory
and time on every tick whether or not anyone reads them, so they are derived
here, on demand, from what the world already stores: the per-service request
rate, error ratio and p99 latency at 15 s resolution (``World.service_sample``).

For one container and a window, each 15 s interval gets a small, bounded number
of representative lines (:data:`MAX_PER_INTERVAL`), drawn from a PRNG seeded
with ``crc32(variant_seed, pod uid, interval)``: the same window gives the same
lines on every call, in every process, and a fork of the world sees the same
past. Each representative carries an integer *weight* (how many real requests
it stands for) so metric queries (``count_over_time``) agree with the request
metrics instead of counting samples.

What is printed follows the processes' default verbosity:

* Go services print a trace-level access line per request, the frontend in its
  HTTP handler format (``starts searchHandler`` / ``SearchHandler ... failed``);
* MongoDB prints a ``Slow query`` line only for operations over its 100 ms
  ``slowms``; with ``-v`` in its args it also prints each command (D1);
* memcached prints nothing unless started with ``-v``/``-vv``;
* consul and jaeger print nothing per request unless verbose.
"""

from __future__ import annotations

import bisect
import math
import random
import zlib
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from sre_env.kube.timefmt import parse_iso
from sre_env.sim.logs import render as logfmt
from sre_env.telemetry.metrics_store import metrics_of, service_sample

if TYPE_CHECKING:
    from sre_env.apps.base import AppSpec, Component, RequestType
    from sre_env.sim.kernel.pods import ContainerRuntime
    from sre_env.sim.kernel.world import World

__all__ = ["LogEntry", "ServiceSampler", "container_lines", "container_entries", "grpc_method", "request_entries", "MAX_PER_INTERVAL", "INTERVAL_S"]

Obj = dict[str, Any]

INTERVAL_S = 15.0
#: representative request lines per container per 15 s interval (bounds cost)
MAX_PER_INTERVAL = 4
#: mongod's default slowOpThresholdMs
MONGO_SLOW_MS = 100.0

# MongoDB database/collection per component (hotel-reservation's mgo sessions)
_MONGO_NS = {
    "mongodb-geo": ("geo-db", "geo"),
    "mongodb-rate": ("rate-db", "inventory"),
    "mongodb-profile": ("profile-db", "hotels"),
    "mongodb-recommendation": ("recommendation-db", "recommend"),
    "mongodb-reservation": ("reservation-db", "reservation"),
    "mongodb-user": ("user-db", "user"),
}


@dataclass(frozen=True)
class LogEntry:
    """One log line and how many real lines it stands for (1 for materialised events)."""

    t: float
    line: str
    weight: int = 1


def container_lines(world: "World", pod: Obj, container: str, start: float, end: float, *, include_requests: bool = True) -> list[tuple[float, str]]:
    """Every line of ``container`` in ``pod`` with ``start <= t <= end``, oldest first.

    Materialised event lines (current and previous instance) merged with the
    lazily generated request lines of the window.
    """
    return [(e.t, e.line) for e in container_entries(world, pod, container, start, end, include_requests=include_requests)]


def container_entries(world: "World", pod: Obj, container: str, start: float, end: float, *, include_requests: bool = True, sampler: ServiceSampler | None = None) -> list[LogEntry]:
    """Like :func:`container_lines` with each line's weight (for metric queries)."""
    rt = world.runtimes.get(pod["metadata"]["uid"])
    ctr = rt.containers.get(container) if rt else None
    if ctr is None:
        return []
    out = [LogEntry(t, line) for t, line in list(ctr.prev_log) + list(ctr.log) if start <= t <= end]
    if include_requests:
        out.extend(request_entries(world, pod, container, start, end, sampler))
    # stable: materialised lines keep their order among equal times and come first
    out.sort(key=lambda e: e.t)
    return out


# --------------------------------------------------------------------------- metric samples


class ServiceSampler:
    """:func:`~sre_env.telemetry.metrics_store.service_sample` memoised per call site, by bisection.

    ``service_sample`` scans the recorded ring backwards from the newest row, which
    is fine for one lookup but quadratic over an hour of 15 s intervals; here the
    scrape row at or before ``t`` is found by bisection over the ring's times
    (the same row, so the same numbers).
    """

    def __init__(self, world: "World") -> None:
        self.world = world
        self._memo: dict[tuple[str, str, float], tuple[float, float, float] | None] = {}
        self._times: list[float] | None = None
        self._rows: list[int] = []
        ring = metrics_of(world).recorded
        n = min(ring.rows, ring.capacity)
        rows = [(ring.rows - n + i) % ring.capacity for i in range(n)]
        times = [float(ring.times[r]) for r in rows]
        if all(b >= a for a, b in zip(times, times[1:])):
            self._times, self._rows, self._ring = times, rows, ring

    def sample(self, namespace: str, service: str, t: float) -> tuple[float, float, float] | None:
        """(requests/s, error ratio, p99 ms) at the last scrape at or before ``t``."""
        key = (namespace, service, t)
        if key in self._memo:
            return self._memo[key]
        out = service_sample(self.world, namespace, service, t) if self._times is None else self._fast(namespace, service, t)
        self._memo[key] = out
        return out

    def _fast(self, namespace: str, service: str, t: float) -> tuple[float, float, float] | None:
        assert self._times is not None
        i = bisect.bisect_right(self._times, t) - 1
        if i < 0:
            return None
        row = self._rows[i]
        vals = []
        for m in ("rps", "error_ratio", "latency_p99_ms"):
            col = self._ring.index.get(f"{m}{{namespace={namespace},service={service}}}")
            v = float(self._ring.data[row, col]) if col is not None else float("nan")
            vals.append(0.0 if v != v else v)
        return (vals[0], vals[1], vals[2])


def interval_time(k: int) -> float:
    """The time whose scrape describes 15 s interval ``k`` (its last instant)."""
    return k * INTERVAL_S + INTERVAL_S - 1e-6


# --------------------------------------------------------------------------- request lines


def request_entries(world: "World", pod: Obj, container: str, start: float, end: float, sampler: ServiceSampler | None = None) -> list[LogEntry]:
    """Representative per-request lines of one container over ``[start, end]``."""
    sampler = sampler or ServiceSampler(world)
    comp = world.component_for(pod)
    if comp is None:
        return []
    app = _app_of(world, pod["metadata"]["namespace"], comp.name)
    rt = world.runtimes.get(pod["metadata"]["uid"])
    ctr = rt.containers.get(container) if rt else None
    if app is None or ctr is None:
        return []
    dialect = comp.log_format
    verbose = _verbosity(pod, container)
    if dialect in ("memcached", "consul", "jaeger") and verbose == 0:
        return []
    end = min(end, world.clock.now)
    windows = _serving_windows(ctr, world.clock.now)
    if not windows:
        return []
    # no line outside the serving windows: a query over 30 days costs the container's life, not the range
    start, end = max(start, min(a for a, _ in windows)), min(end, max(b for _, b in windows))
    if end < start:
        return []
    ns = app.namespace
    plan = world.plans.get(app.name)
    replicas = max(1, len(plan.serving.get(comp.name, ()))) if plan is not None else max(1, comp.replicas)
    uid = pod["metadata"]["uid"]
    out: list[LogEntry] = []
    first, last = int(start // INTERVAL_S), int(end // INTERVAL_S)
    for k in range(first, last + 1):
        lo, hi = max(start, k * INTERVAL_S), min(end, (k + 1) * INTERVAL_S)
        spans = [(max(lo, a), min(hi, b)) for a, b in windows if min(hi, b) > max(lo, a)]
        if not spans:
            continue
        sample = sampler.sample(ns, comp.name, interval_time(k))
        if sample is None:
            continue
        rps, err, p99 = sample
        if rps <= 0:
            continue
        covered = sum(b - a for a, b in spans)
        n = rps / replicas * covered
        if n < 0.5:
            continue
        rng = random.Random(zlib.crc32(f"{world.variant_seed}/{uid}/{k}".encode()))
        out.extend(_interval_lines(world, app, comp, dialect, verbose, rng, spans, int(round(n)), err, p99))
    return out


def _interval_lines(world: "World", app: "AppSpec", comp: "Component", dialect: str, verbose: int, rng: random.Random, spans: list[tuple[float, float]], n: int, err: float, p99: float) -> list[LogEntry]:
    k = min(MAX_PER_INTERVAL, n)
    n_err = int(round(n * min(max(err, 0.0), 1.0)))
    k_err = 0 if n_err == 0 else max(1, min(k, int(round(k * n_err / n))))
    if n_err < n and k_err == k and k > 1:
        k_err = k - 1
    k_ok = k - k_err
    weights = _split(n - n_err, k_ok) + _split(n_err, k_err)
    failed = [False] * k_ok + [True] * k_err
    mean = max(p99 / 2.2, comp.latency_ms * 0.5, 0.05)
    out: list[LogEntry] = []
    for i in range(k):
        a, b = spans[rng.randrange(len(spans))] if len(spans) > 1 else spans[0]
        t = a + rng.random() * (b - a)
        latency = mean * math.exp(rng.gauss(0.0, 0.35))
        variant = rng.getrandbits(31)
        line = _render(world, app, comp, dialect, verbose, rng, t, failed[i], latency, variant)
        if line and weights[i] > 0:
            out.append(LogEntry(t, line, weights[i]))
    return out


def _split(total: int, parts: int) -> list[int]:
    """``total`` as ``parts`` integers that differ by at most one."""
    if parts <= 0:
        return []
    q, r = divmod(total, parts)
    return [q + (1 if i < r else 0) for i in range(parts)]


def _render(world: "World", app: "AppSpec", comp: "Component", dialect: str, verbose: int, rng: random.Random, t: float, failed: bool, latency: float, variant: int) -> str | None:
    if dialect == "frontend":
        return _frontend_line(world, app, rng, t, failed, latency, variant)
    if dialect == "go-service":
        op = _served_operation(app, comp.name, rng)
        status = "Unknown" if failed else "OK"
        fields = {"service": comp.name, "op": "grpc", "method": "unary", "path": grpc_method(app, comp.name, op), "status": status, "latency_ms": round(latency, 2)}
        return logfmt.render(dialect, "request", t, fields, variant)
    if dialect == "mongodb":
        db, coll = _MONGO_NS.get(comp.name, (comp.name.removeprefix("mongodb-") + "-db", comp.name.removeprefix("mongodb-")))
        if latency >= MONGO_SLOW_MS:
            fields = {"db": db, "coll": coll, "latency_ms": latency, "hotel_id": str(1 + variant % 80)}
            return logfmt.render(dialect, "slow_query", t, fields, variant)
        if verbose:
            return logfmt.render(dialect, "request", t, {"db": db, "coll": coll, "op": "find"}, variant)
        return None
    if dialect == "consul":
        return logfmt.render(dialect, "request", t, {"latency_ms": latency}, variant)
    model = world.app_models.get(app.name)
    if model is not None:
        # an app model knows what its process logs for a request (and why one failed)
        fields = model.request_log_fields(world, comp.name, failed, latency, variant)
        return None if fields is None else logfmt.render(dialect, "request", t, fields, variant)
    return logfmt.render(dialect, "request", t, {}, variant)


def _frontend_line(world: "World", app: "AppSpec", rng: random.Random, t: float, failed: bool, latency: float, variant: int) -> str:
    plan = world.plans.get(app.name)
    rtypes = list(app.requests)
    if failed and plan is not None:
        broken = [(r, e) for r in rtypes for e in [_failing_edge(plan, r)] if e is not None]
        if broken:
            rtype, (caller, callee, first_callee, _target, error) = _weighted(rng, broken, key=lambda x: x[0].weight)
            if caller == app.entrypoint and error.startswith("dial tcp"):
                grpc_error = f'rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing {error}"'
            else:
                grpc_error = f"rpc error: code = Unknown desc = {callee if caller == app.entrypoint else caller}: {error}"
            # the handler message names the first-level call that failed
            order = [c.callee for c in rtype.calls if c.caller == app.entrypoint]
            handler_idx = {"reservation": 0, "profile": 1, "search": 2}.get(first_callee, 0) if rtype.path == "/hotels" else 0
            fields = {"method": rtype.method, "path": rtype.path, "status": 500, "latency_ms": round(latency, 1), "grpc_error": grpc_error, "upstream": order[0] if order else ""}
            return logfmt.render("frontend", "request", t, fields, variant * 3 + handler_idx)
    rtype = _weighted(rng, rtypes, key=lambda r: r.weight)
    fields = {"method": rtype.method, "path": rtype.path, "status": 500 if failed else 200, "latency_ms": round(latency, 1)}
    return logfmt.render("frontend", "request", t, fields, variant)


def _failing_edge(plan: Any, rtype: "RequestType") -> tuple[str, str, str, str, str] | None:
    """(caller, callee, first-level callee, target, error) of a currently failing edge under ``rtype``."""
    first_level: dict[str, str] = {}
    root = rtype.calls[0].caller if rtype.calls else ""
    for call in rtype.calls:
        top = call.callee if call.caller == root else first_level.get(call.caller, call.caller)
        first_level.setdefault(call.callee, top)
        edge = plan.edges.get((call.caller, call.callee))
        if edge is not None and edge.ok < 0.999:
            return call.caller, call.callee, top, edge.target, edge.error or "connection refused"
    return None


def _weighted(rng: random.Random, items: list, key: Any) -> Any:
    total = sum(key(x) for x in items)
    r = rng.random() * total
    for x in items:
        r -= key(x)
        if r <= 0:
            return x
    return items[-1]


def _served_operation(app: "AppSpec", comp: str, rng: random.Random) -> str:
    ops = [(c.operation, r.weight) for r in app.requests for c in r.calls if c.callee == comp and c.operation]
    if not ops:
        return "Handle"
    return _weighted(rng, ops, key=lambda x: x[1])[0]


@lru_cache(maxsize=None)
def _span_names(names: tuple[tuple[tuple[str, str], str], ...]) -> dict[tuple[str, str], str]:
    return dict(names)


def grpc_method(app: "AppSpec | None", service: str, operation: str) -> str:
    """Full gRPC method name of a call: the app's own (``AppSpec.span_names``, e.g. the
    OpenTelemetry demo's ``oteldemo.PaymentService/Charge``), else as hotel-reservation's
    protos define it (``/geo.Geo/Nearby``)."""
    name = _span_names(app.span_names).get((service, operation)) if app is not None else None
    if name is not None:
        return name
    return f"/{service}.{service.capitalize()}/{operation}"


def _app_of(world: "World", namespace: str, comp: str) -> "AppSpec | None":
    for app in world.apps:
        if app.namespace == namespace and any(c.name == comp for c in app.components):
            return app
    return None


def _serving_windows(ctr: "ContainerRuntime", now: float) -> list[tuple[float, float]]:
    """Times the container's process served: the current instance, and the previous one if known."""
    out: list[tuple[float, float]] = []
    last = ctr.last_terminated or {}
    try:
        began, ended = parse_iso(last["startedAt"]), parse_iso(last["finishedAt"])
        if began > 0 and ended > began:
            out.append((began, ended))
    except (KeyError, ValueError, TypeError):
        pass
    if ctr.state == "running" and ctr.serve_at is not None and ctr.serve_at <= now:
        out.append((ctr.serve_at, now))
    return out


def _verbosity(pod: Obj, container: str) -> int:
    """Number of ``v`` in a ``-v``/``-vv``/``--verbose`` flag of the container's command line."""
    spec = next((c for c in pod["spec"].get("containers", []) if c.get("name") == container), None)
    if spec is None:
        return 0
    level = 0
    for arg in list(spec.get("command") or ()) + list(spec.get("args") or ()):
        a = str(arg)
        if a == "--verbose" or a.startswith("--verbose="):
            level = max(level, 1)
        elif len(a) > 1 and a[0] == "-" and a[1:] == "v" * (len(a) - 1):
            level = max(level, len(a) - 1)
    return level
