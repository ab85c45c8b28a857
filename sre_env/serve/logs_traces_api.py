"""Loki's and Jaeger's query APIs over the simulator's logs and traces.

Loki: ``/loki/api/v1/query_range``, ``query``, ``labels``, ``label/<name>/values``
and ``/ready``; Jaeger (query service): ``/api/services``,
``/api/services/<service>/operations``, ``/api/traces`` (search) and
``/api/traces/<id>``. Both are answered by the same LogQL engine and trace
store that the agent's ``logql`` and ``traces`` commands use, so a tool built for
Grafana's data sources works against a simulated incident.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs, unquote

from sre_env.kube.timefmt import EPOCH
from sre_env.telemetry import logql, traces

from .kube_api import KubeResponse
from .timeshift import shift_log_line

if TYPE_CHECKING:
    from sre_env.sim.backend import SimBackend

__all__ = ["handle_loki", "handle_jaeger", "is_loki", "is_jaeger"]

EPOCH_UNIX = EPOCH.timestamp()
#: Loki's default limits_config.max_entries_limit_per_query
MAX_ENTRIES_LIMIT_PER_QUERY = 5000


def is_loki(path: str) -> bool:
    return path.startswith("/loki/")


def is_jaeger(path: str) -> bool:
    return path.startswith(("/api/services", "/api/traces", "/api/dependencies"))


def _seconds(text: str, default: float) -> float:
    """Loki accepts nanosecond or second unix timestamps (or RFC 3339)."""
    if not text:
        return default
    try:
        v = float(text)
    except ValueError:
        from datetime import datetime

        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    return v / 1e9 if v > 1e12 else v


def handle_loki(backend: "SimBackend", path: str, query_string: str, offset: int = 0) -> KubeResponse:
    """One Loki request; ``offset`` (``sre_env.serve.timeshift``): seconds from simulated to shown unix times."""
    world = backend.world
    q = parse_qs(query_string)
    arg = lambda key, default="": (q.get(key) or [default])[0]  # noqa: E731
    now_unix = world.clock.now + EPOCH_UNIX + offset
    path = path.rstrip("/")
    try:
        if path == "/loki/ready" or path == "/ready":
            return KubeResponse(200, "ready\n", "text/plain")
        if path in ("/loki/api/v1/labels", "/loki/api/v1/label"):
            return KubeResponse(200, {"status": "success", "data": logql.label_names(world)})
        if path.startswith("/loki/api/v1/label/") and path.endswith("/values"):
            name = unquote(path[len("/loki/api/v1/label/") : -len("/values")])
            return KubeResponse(200, {"status": "success", "data": logql.label_values(world, name)})
        if path in ("/loki/api/v1/query_range", "/loki/api/v1/query"):
            expr = arg("query")
            if not expr:
                return KubeResponse(400, "query parameter is required\n", "text/plain")
            try:
                limit = int(arg("limit") or 100)
            except ValueError:
                return KubeResponse(400, f"invalid limit: strconv.ParseInt: parsing {json.dumps(arg('limit'))}: invalid syntax\n", "text/plain")
            if limit > MAX_ENTRIES_LIMIT_PER_QUERY:
                # Loki's limits_config.max_entries_limit_per_query (default 5000), with the querier's message
                return KubeResponse(400, f"max entries limit per query exceeded, limit > max_entries_limit_per_query ({limit} > {MAX_ENTRIES_LIMIT_PER_QUERY})\n", "text/plain")
            start = _seconds(arg("start"), now_unix - 3600.0)
            opts = logql.QueryOptions(
                since_s=max(now_unix - start, 0.0),
                limit=limit,
                forward=arg("direction") == "forward",
                output="json",
                step_s=float(arg("step").rstrip("s")) if arg("step") else None,
            )
            text, code = logql.run_query(world, expr, opts)
            if code != 0:
                return KubeResponse(400, text.removeprefix("Query failed: Error response from server: "), "text/plain")
            return KubeResponse(200, _shift_loki(json.loads(text), offset))
    except (ValueError, TypeError) as exc:
        return KubeResponse(400, f"{exc}\n", "text/plain")
    return KubeResponse(404, "404 page not found\n", "text/plain")


def handle_jaeger(backend: "SimBackend", path: str, query_string: str, offset: int = 0) -> KubeResponse:
    """One Jaeger query request; ``offset`` (``sre_env.serve.timeshift``): seconds from simulated to shown unix times."""
    world = backend.world
    q = parse_qs(query_string)
    arg = lambda key, default="": (q.get(key) or [default])[0]  # noqa: E731
    path = path.rstrip("/")

    def envelope(data: Any) -> KubeResponse:
        return KubeResponse(200, {"data": data, "total": len(data) if isinstance(data, list) else 0, "limit": 0, "offset": 0, "errors": None})

    try:
        if path == "/api/services":
            return envelope(traces.services(world))
        if path.startswith("/api/services/") and path.endswith("/operations"):
            service = unquote(path[len("/api/services/") : -len("/operations")])
            return envelope(sorted({op for op, _ in traces.operations(world, service)}))
        if path == "/api/traces":
            service = arg("service")
            if not service:
                return KubeResponse(400, {"data": None, "total": 0, "limit": 0, "offset": 0, "errors": [{"code": 400, "msg": "parameter 'service' is required"}]})
            tags = json.loads(arg("tags")) if arg("tags") else None
            found = traces.find_traces(
                world,
                service,
                operation=arg("operation") or None,
                tags=tags,
                min_duration_ms=_ms(arg("minDuration")),
                max_duration_ms=_ms(arg("maxDuration")),
                lookback_s=_search_lookback(arg("lookback", "1h"), arg("start"), world.clock.now + EPOCH_UNIX + offset),
                limit=int(arg("limit") or 20),
            )
            return KubeResponse(200, _shift_traces(json.loads(traces.traces_json(found)), offset))
        if path.startswith("/api/traces/"):
            found = traces.get_trace(world, path.rsplit("/", 1)[-1])
            if found is None:
                return KubeResponse(404, {"data": None, "total": 0, "limit": 0, "offset": 0, "errors": [{"code": 404, "msg": "trace not found"}]})
            return KubeResponse(200, _shift_traces(json.loads(traces.traces_json([found])), offset))
        if path == "/api/dependencies":
            deps = traces.dependencies(world, lookback_s=float(arg("lookback") or 3_600_000) / 1000.0)
            return envelope([{"parent": a, "child": b, "callCount": n} for a, b, n in deps])
    except (ValueError, TypeError) as exc:
        return KubeResponse(400, {"data": None, "total": 0, "limit": 0, "offset": 0, "errors": [{"code": 400, "msg": str(exc)}]})
    return KubeResponse(404, "404 page not found\n", "text/plain")


def _ms(text: str) -> float | None:
    """Jaeger durations: ``1.2s``, ``300ms``, ``50us``."""
    if not text:
        return None
    for unit, factor in (("ms", 1.0), ("us", 0.001), ("µs", 0.001), ("s", 1000.0), ("m", 60_000.0)):
        if text.endswith(unit):
            return float(text[: -len(unit)]) * factor
    return float(text)


def _search_lookback(lookback: str, start_us: str, now_unix: float) -> float:
    """How far back a search looks: Jaeger UI's ``start`` (unix microseconds) when sent with ``lookback=custom``, else ``lookback``."""
    if start_us and (lookback == "custom" or not lookback):
        return max(now_unix - float(start_us) / 1e6, 0.0)
    return _lookback(lookback)


def _shift_loki(body: Any, offset: int) -> Any:
    """A Loki response's times (stream entries: nanosecond strings; matrix/vector: seconds) and log lines moved by ``offset``."""
    data = body.get("data") if isinstance(body, dict) else None
    if not offset or not isinstance(data, dict):
        return body
    ns = offset * 1_000_000_000
    for item in data.get("result") or ():
        if not isinstance(item, dict):
            continue
        if "values" in item and "stream" in item:
            item["values"] = [[str(int(t) + ns), shift_log_line(line, offset), *rest] for t, line, *rest in item["values"]]
        elif "values" in item:
            item["values"] = [[t + offset, v] for t, v in item["values"]]
        elif "value" in item:
            t, v = item["value"]
            item["value"] = [t + offset, v]
    if data.get("resultType") == "scalar" and isinstance(data.get("result"), list):
        t, v = data["result"]
        data["result"] = [t + offset, v]
    return body


def _shift_traces(body: Any, offset: int) -> Any:
    """Jaeger traces' span start times and span-log timestamps (unix microseconds) moved by ``offset``."""
    if not offset:
        return body
    us = offset * 1_000_000
    for tr in body.get("data") or ():
        for span in tr.get("spans") or ():
            if "startTime" in span:
                span["startTime"] += us
            for log in span.get("logs") or ():
                if "timestamp" in log:
                    log["timestamp"] += us
    return body


def _lookback(text: str) -> float:
    units = {"m": 60.0, "h": 3600.0, "d": 86400.0, "s": 1.0}
    if text and text[-1] in units:
        return float(text[:-1]) * units[text[-1]]
    return 3600.0
