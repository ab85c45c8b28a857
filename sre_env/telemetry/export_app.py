"""Application request metrics: what the services' and load generator's /metrics would expose.

The hotel-reservation services are Go gRPC servers, instrumented here as with
go-grpc-prometheus (``grpc_server_started_total``, ``grpc_server_handled_total``,
``grpc_server_handling_seconds``); the frontend speaks HTTP and is instrumented
like promhttp (``http_requests_total``, ``http_request_duration_seconds``); the
load generator reports ``loadgen_requests_total`` and
``loadgen_request_duration_seconds``.

Counters accumulate each scrape interval's requests from the traffic model's
per-pod rates and restart from zero when the serving process restarts, so
``rate()`` sees real counter resets. Latency histograms spread each interval's
requests over the buckets with a log-normal around the model's mean latency
whose p99 is 2.2x the mean (the ratio the world's p99 series assume), so
``histogram_quantile(0.99, ...)`` lands near the same value. Everything is
vectorised over the app's series; the layout is rebuilt only when pods change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .tsdb import TSDB, series_key

if TYPE_CHECKING:
    from sre_env.apps.base import AppSpec, Component
    from sre_env.sim.kernel.flows import TickResult
    from sre_env.sim.kernel.world import World

__all__ = ["AppExporter", "BUCKETS", "lognormal_cdf", "method_shares", "GRPC_CODES"]

#: Prometheus' DefBuckets (client_golang), seconds
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, float("inf"))
#: log-normal shape with p99 / mean = 2.2: solve 2.3263 s - s^2 / 2 = ln 2.2
SIGMA = 0.36840
GRPC_CODES = ("Unknown", "Unavailable", "DeadlineExceeded")
HTTP_ERROR = "500"
STARTED, OK, ERR, BUCKET, SUM, COUNT = range(6)


def _erf(x: np.ndarray) -> np.ndarray:
    """Abramowitz & Stegun 7.1.26 (|error| < 1.5e-7): numpy has no erf and scipy is not a dependency."""
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return sign * (1.0 - poly * np.exp(-a * a))


def lognormal_cdf(le: np.ndarray, mean_s: np.ndarray) -> np.ndarray:
    """P(latency <= le) for a log-normal with the given mean and p99 = 2.2 x mean."""
    with np.errstate(divide="ignore", invalid="ignore"):
        mu = np.log(np.maximum(mean_s, 1e-9)) - SIGMA * SIGMA / 2
        z = (np.log(le) - mu) / (SIGMA * np.sqrt(2.0))
        out = 0.5 * (1.0 + _erf(np.where(np.isfinite(z), z, np.sign(z) * 10.0)))
    return np.where(np.isinf(le), 1.0, out)


def method_shares(app: "AppSpec", comp: str) -> list[tuple[str, float]]:
    """(gRPC method, share of the component's calls) from the app's request mix."""
    weights: dict[str, float] = {}
    for rt in app.requests:
        for call in rt.calls:
            if call.callee == comp:
                name = call.operation or "Call"
                weights[name] = weights.get(name, 0.0) + rt.weight * call.times * call.miss_ratio
    total = sum(weights.values())
    if total <= 0:
        return [("Call", 1.0)]
    return sorted((m, w / total) for m, w in weights.items())


def _error_code(res: "TickResult", comp: str) -> int:
    """Which gRPC status a component's failures carry, from the errors its calls saw."""
    for caller, _callee, _target, error, failed in res.failed_edges:
        if caller == comp and failed > 0:
            text = error.lower()
            if "timeout" in text or "deadline" in text:
                return 2
            if "dial tcp" in text or "refused" in text or "no such host" in text or "unavailable" in text:
                return 1
            return 0
    return 0


@dataclass
class _Layout:
    revision: tuple
    pods: list[tuple[str, "Component", int]]  # (uid, component, component index)
    keys: list[str]
    cols: np.ndarray
    up_cols: np.ndarray
    pod_idx: np.ndarray
    kind: np.ndarray
    share: np.ndarray
    le: np.ndarray
    code: np.ndarray


class AppExporter:
    """Counters of one app's services and of its load generator."""

    def __init__(self) -> None:
        self.acc: dict[str, np.ndarray] = {}
        self.keys: dict[str, list[str]] = {}
        #: pod uid -> start time of the process whose counters are accumulated
        self.started: dict[str, float] = {}
        self.loadgen_acc: dict[str, np.ndarray] = {}
        self.last_t: dict[str, float] = {}
        self._layouts: dict[str, _Layout] = {}
        self._loadgen: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}
        #: lognormal bucket shares of the last scrape, reused while latencies stand still (derived)
        self._cdf_cache: dict[str, tuple] = {}

    # layouts (TSDB columns of each app's series) travel with a snapshot, like the TSDB

    # ------------------------------------------------------------------ layout
    def _layout(self, world: "World", app: "AppSpec", tsdb: TSDB) -> _Layout:
        # pods appear as targets once the kubelet gave them a runtime (an IP)
        rev = (world.store.bound_pod_revision, len(world.runtimes))
        lay = self._layouts.get(app.name)
        if lay is not None and lay.revision == rev:
            return lay
        comps = {c.name: (i, c) for i, c in enumerate(app.components)}
        pods = []
        keys: list[str] = []
        up_keys: list[str] = []
        pod_idx: list[int] = []
        kind: list[int] = []
        share: list[float] = []
        le: list[float] = []
        code: list[int] = []
        for pod in world.store.iter("Pod"):
            meta = pod["metadata"]
            if meta["namespace"] != app.namespace:
                continue
            comp = world.component_for(pod)
            rt = world.runtimes.get(meta["uid"])
            if comp is None or rt is None or comp.name not in comps or comp.role not in ("service", "frontend"):
                continue
            p = len(pods)
            ci = comps[comp.name][0]
            pods.append((meta["uid"], comp, ci))
            target = {"namespace": app.namespace, "pod": meta["name"], "instance": f"{rt.ip}:{comp.listen_port}", "job": comp.name, "service": comp.name}
            up_keys.append(series_key("up", target))

            def add(name: str, labels: dict[str, str], k: int, s: float, bound: float = np.inf, c: int = -1) -> None:
                keys.append(series_key(name, {**target, **labels}))
                pod_idx.append(p)
                kind.append(k)
                share.append(s)
                le.append(bound)
                code.append(c)

            if comp.role == "frontend":
                for rt_ in app.requests:
                    ep = {"handler": rt_.path, "method": rt_.method}
                    add("http_requests_total", {**ep, "code": "200"}, OK, rt_.weight)
                    add("http_requests_total", {**ep, "code": HTTP_ERROR}, ERR, rt_.weight, c=0)
                    for b in BUCKETS:
                        add("http_request_duration_seconds_bucket", {**ep, "le": _le(b)}, BUCKET, rt_.weight, b)
                    add("http_request_duration_seconds_sum", ep, SUM, rt_.weight)
                    add("http_request_duration_seconds_count", ep, COUNT, rt_.weight)
            else:
                svc = f"{comp.name}.{comp.name.capitalize()}"
                for method, s in method_shares(app, comp.name):
                    m = {"grpc_service": svc, "grpc_method": method, "grpc_type": "unary"}
                    add("grpc_server_started_total", m, STARTED, s)
                    add("grpc_server_handled_total", {**m, "grpc_code": "OK"}, OK, s)
                    for c, name in enumerate(GRPC_CODES):
                        add("grpc_server_handled_total", {**m, "grpc_code": name}, ERR, s, c=c)
                    for b in BUCKETS:
                        add("grpc_server_handling_seconds_bucket", {**m, "le": _le(b)}, BUCKET, s, b)
                    add("grpc_server_handling_seconds_sum", m, SUM, s)
                    add("grpc_server_handling_seconds_count", m, COUNT, s)
        old = dict(zip(self.keys.get(app.name, ()), self.acc.get(app.name, np.empty(0))))
        self.acc[app.name] = np.array([old.get(k, 0.0) for k in keys], dtype=np.float64)
        self.keys[app.name] = keys
        lay = _Layout(
            rev,
            pods,
            keys,
            tsdb.columns(keys),
            tsdb.columns(up_keys),
            np.asarray(pod_idx, dtype=np.int64),
            np.asarray(kind, dtype=np.int64),
            np.asarray(share, dtype=np.float64),
            np.asarray(le, dtype=np.float64),
            np.asarray(code, dtype=np.int64),
        )
        self._layouts[app.name] = lay
        return lay

    def _cdf(self, lay: _Layout, mean_s: np.ndarray) -> np.ndarray:
        """Bucket shares of the layout's histogram series: recomputed only when a pod's mean latency moves."""
        key = (id(lay), mean_s.tobytes())
        hit = self._cdf_cache.get("pods")
        if hit is not None and hit[0] == key and hit[2] is lay:
            return hit[1]
        bucket = lay.kind == BUCKET
        cdf = lognormal_cdf(lay.le[bucket], mean_s[lay.pod_idx][bucket])
        self._cdf_cache["pods"] = (key, cdf, lay)
        return cdf

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state["_cdf_cache"] = {}  # derived
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.__dict__.setdefault("_cdf_cache", {})

    # ------------------------------------------------------------------ scrape
    def collect(self, world: "World", app: "AppSpec", res: "TickResult", tsdb: TSDB, jitter: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        now = world.clock.now
        last = self.last_t.get(app.name)
        window = 0.0 if last is None else max(now - last, 0.0)
        self.last_t[app.name] = now
        lay = self._layout(world, app, tsdb)
        n_pods = len(lay.pods)
        up = np.zeros(n_pods, dtype=bool)
        reset = np.zeros(n_pods, dtype=bool)
        dt = np.zeros(n_pods)
        total = np.zeros(n_pods)
        err = np.zeros(n_pods)
        mean_s = np.full(n_pods, 1e-3)
        pcode = np.zeros(n_pods, dtype=np.int64)
        comp_cache: dict[str, tuple[float, float, int]] = {}
        for p, (uid, comp, ci) in enumerate(lay.pods):
            rt = world.runtimes.get(uid)
            if rt is None:
                continue
            start = None
            for ctr in rt.containers.values():
                if ctr.serving(now):
                    start = ctr.started_at if ctr.started_at is not None else now
                    break
            if start is None:
                continue
            up[p] = True
            if self.started.get(uid) != start:
                self.started[uid] = start
                reset[p] = True
            dt[p] = min(window, max(now - start, 0.0))
            info = comp_cache.get(comp.name)
            if info is None:
                rps = res.rps.get(comp.name, 0.0)
                # HTTP servers have a single error series (500); gRPC ones one per status code
                code = 0 if comp.role == "frontend" else _error_code(res, comp.name)
                info = (res.errors.get(comp.name, 0.0) / rps if rps > 0 else 0.0, res.latency_ms.get(comp.name, comp.latency_ms) / 1000.0, code)
                comp_cache[comp.name] = info
            total[p] = res.pod_rps.get(uid, 0.0) * float(jitter[2 + (ci % 64)])
            err[p], mean_s[p], pcode[p] = info
        acc = self.acc[app.name]
        pi = lay.pod_idx
        kinds = lay.kind
        tot = total[pi]
        inc = np.where(kinds == OK, tot * (1.0 - err[pi]), tot)
        inc = np.where(kinds == ERR, tot * err[pi] * (lay.code == pcode[pi]), inc)
        bucket = kinds == BUCKET
        if bucket.any():
            inc[bucket] = tot[bucket] * self._cdf(lay, mean_s)
        inc = np.where(kinds == SUM, tot * mean_s[pi], inc)
        inc *= lay.share * dt[pi]
        acc[reset[pi]] = 0.0
        acc += inc
        live = up[pi]
        values = np.where(live, acc, np.nan)
        parts = [(lay.cols, values), (lay.up_cols, up.astype(np.float64))]
        parts.append(self._loadgen_part(app, res, tsdb, jitter, window))
        # forget pods that are gone
        if len(self.started) > 4 * max(n_pods, 1) + 64:
            keep = {uid for uid, _, _ in lay.pods}
            self.started = {k: v for k, v in self.started.items() if k in keep}
        return parts

    def _loadgen_part(self, app: "AppSpec", res: "TickResult", tsdb: TSDB, jitter: np.ndarray, window: float) -> tuple[np.ndarray, np.ndarray]:
        cached = self._loadgen.get(app.name)
        if cached is None:
            keys, kind, share, le, status = [], [], [], [], []
            for rt in app.requests:
                ep = {"namespace": app.namespace, "job": "loadgen", "endpoint": rt.path, "method": rt.method}
                for st in ("200", "500", "0"):
                    keys.append(series_key("loadgen_requests_total", {**ep, "status": st}))
                    kind.append(OK if st == "200" else ERR)
                    share.append(rt.weight)
                    le.append(np.inf)
                    status.append({"200": 0, "500": 1, "0": 2}[st])
                for b in BUCKETS:
                    keys.append(series_key("loadgen_request_duration_seconds_bucket", {**ep, "le": _le(b)}))
                    kind.append(BUCKET)
                    share.append(rt.weight)
                    le.append(b)
                    status.append(-1)
                for suffix, k in (("sum", SUM), ("count", COUNT)):
                    keys.append(series_key(f"loadgen_request_duration_seconds_{suffix}", ep))
                    kind.append(k)
                    share.append(rt.weight)
                    le.append(np.inf)
                    status.append(-1)
            if app.name not in self.loadgen_acc or len(self.loadgen_acc[app.name]) != len(keys):
                self.loadgen_acc[app.name] = np.zeros(len(keys))
            cached = (tsdb.columns(keys), np.asarray(kind), np.asarray(share), np.asarray(le), np.asarray(status))
            self._loadgen[app.name] = cached
        cols, kind, share, le, status = cached
        offered = res.client_rps * float(jitter[0])
        reached = min(max(res.rps.get(app.entrypoint, 0.0) / res.client_rps, 0.0), 1.0) if res.client_rps > 0 else 0.0
        transport = 1.0 - reached
        http_fail = max(1.0 - res.client_success - transport, 0.0)
        by_status = np.array([max(res.client_success, 0.0), http_fail, transport])
        mean_s = max(res.client_latency_ms, 0.01) / 1000.0
        inc = np.full(len(kind), offered)
        counters = status >= 0
        inc[counters] = offered * by_status[status[counters]]
        bucket = kind == BUCKET
        cdf_key = (app.name, mean_s)
        cdf = self._cdf_cache.get("loadgen")
        if cdf is None or cdf[0] != cdf_key:
            cdf = self._cdf_cache["loadgen"] = (cdf_key, lognormal_cdf(le[bucket], np.full(int(bucket.sum()), mean_s)))
        inc[bucket] = offered * cdf[1]
        inc[kind == SUM] = offered * mean_s
        acc = self.loadgen_acc[app.name]
        acc += inc * share * window
        return cols, acc.copy()


def _le(b: float) -> str:
    if b == np.inf:
        return "+Inf"
    s = repr(float(b))
    return s[:-2] if s.endswith(".0") else s
