"""The Prometheus HTTP API and a ``/metrics`` endpoint, answered from the simulator's TSDB.

``/api/v1/query``, ``query_range``, ``series``, ``labels``, ``label/<name>/values``,
``alerts``, ``rules`` and ``status/buildinfo`` with Prometheus' JSON envelopes
(``{"status": "success", "data": ...}`` or ``errorType``/``error``), evaluated by
the same PromQL engine the agent's ``promql`` command uses. ``/metrics`` exposes
the latest scrape in the text exposition format, so a real Prometheus server can
scrape the simulated cluster.
"""

from __future__ import annotations

import math
from datetime import datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

from sre_env.kube.timefmt import EPOCH
from sre_env.telemetry.alerting import RULES, alerts_of
from sre_env.telemetry.metrics_commands import alert_json
from sre_env.telemetry.metrics_store import metrics_of
from sre_env.telemetry.promql import query, query_range
from sre_env.telemetry.promql_ast import PromQLError, Selector, compile_expr

from .kube_api import KubeResponse
from .timeshift import TIME_VALUED_METRICS, shift_rfc3339, tsdb_epoch, wall_evaluator

if TYPE_CHECKING:
    from sre_env.sim.backend import SimBackend

__all__ = ["handle_prometheus", "exposition"]

EPOCH_UNIX = EPOCH.timestamp()
_BUILD = {"version": "2.53.2", "revision": "sre-env", "branch": "HEAD", "buildUser": "sre-env", "buildDate": "20240809-10:00:00", "goVersion": "go1.22.5"}


def _ok(data: Any) -> KubeResponse:
    return KubeResponse(200, {"status": "success", "data": data})


def _err(kind: str, message: str, code: int = 400) -> KubeResponse:
    return KubeResponse(code, {"status": "error", "errorType": kind, "error": message})


def _time(text: str, default: float) -> float:
    """A Prometheus time parameter: unix seconds or RFC 3339."""
    if not text:
        return default
    try:
        return float(text)
    except ValueError:
        pass
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
    except ValueError:
        raise ValueError(f'cannot parse "{text}" to a valid timestamp') from None


def _duration(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        pass
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}
    for unit in sorted(units, key=len, reverse=True):
        if text.endswith(unit) and text[: -len(unit)].isdigit():
            return int(text[: -len(unit)]) * units[unit]
    raise ValueError(f'cannot parse "{text}" to a valid duration')


def handle_prometheus(backend: "SimBackend", method: str, path: str, query_string: str, body: bytes, offset: int = 0, now_unix: float | None = None) -> KubeResponse:
    """Answer one Prometheus API request (GET or form-encoded POST); never raises.

    ``offset``: seconds from the simulator's unix times to the wall-clock ones the
    client sees (``sre_env.serve.timeshift``): the TSDB's epoch is moved by it for
    the request, so every time read or written by PromQL is a wall-clock one.
    ``now_unix``: the default evaluation time (the served clock's now; default: the
    simulated now, which trails the wall clock by up to one simulator tick).
    """
    with tsdb_epoch(metrics_of(backend.world).tsdb, offset):
        return _handle_prometheus(backend, method, path, query_string, body, offset, now_unix)


def _handle_prometheus(backend: "SimBackend", method: str, path: str, query_string: str, body: bytes, offset: int, now: float | None) -> KubeResponse:
    params = parse_qs(query_string)
    if method.upper() == "POST" and body:
        for k, v in parse_qs(body.decode("utf-8", "replace")).items():
            params.setdefault(k, []).extend(v)
    arg = lambda key, default="": (params.get(key) or [default])[0]  # noqa: E731
    world = backend.world
    tsdb = metrics_of(world).tsdb
    epoch = tsdb.epoch
    now_unix = max(world.clock.now + epoch, now or 0.0)
    ev = wall_evaluator(tsdb, offset)
    path = path.rstrip("/")
    try:
        if path == "/metrics":
            return KubeResponse(200, exposition(backend, offset), "text/plain")
        if path in ("/-/healthy", "/-/ready"):
            return KubeResponse(200, "Prometheus Server is Ready.\n", "text/plain")
        if path == "/api/v1/status/buildinfo":
            return _ok(_BUILD)
        if path == "/api/v1/query":
            if not arg("query"):
                return _err("bad_data", "invalid parameter \"query\": no query provided")
            at = _time(arg("time"), now_unix)
            res = query(tsdb, arg("query"), at - epoch, evaluator=ev)
            return KubeResponse(200 if res.ok else 400, res.to_json())
        if path == "/api/v1/query_range":
            if not arg("query"):
                return _err("bad_data", "invalid parameter \"query\": no query provided")
            start, end, step = _time(arg("start"), math.nan), _time(arg("end"), math.nan), _duration(arg("step") or "0")
            if math.isnan(start) or math.isnan(end):
                return _err("bad_data", "invalid parameter \"start\": cannot parse \"\" to a valid timestamp")
            if step <= 0:
                return _err("bad_data", "invalid parameter \"step\": zero or negative query resolution step widths are not accepted. Try a positive integer")
            if end < start:
                return _err("bad_data", "invalid parameter \"end\": end timestamp must not be before start time")
            if (end - start) / step > 11000:
                return _err("bad_data", "exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query resolution (?step=XX)")
            res = query_range(tsdb, arg("query"), start - epoch, end - epoch, step, evaluator=ev)
            return KubeResponse(200 if res.ok else 400, res.to_json())
        if path == "/api/v1/labels":
            names = sorted({k for col in _columns(tsdb, params.get("match[]") or []) for k in tsdb.labels(col)})
            return _ok(names)
        if path.startswith("/api/v1/label/") and path.endswith("/values"):
            name = path[len("/api/v1/label/") : -len("/values")]
            values = sorted({tsdb.labels(col).get(name) for col in _columns(tsdb, params.get("match[]") or [])} - {None})
            return _ok(values)
        if path == "/api/v1/series":
            matches = params.get("match[]") or []
            if not matches:
                return _err("bad_data", "no match[] parameter provided")
            return _ok([tsdb.labels(col) for col in _columns(tsdb, matches)])
        if path == "/api/v1/alerts":
            return _ok({"alerts": [_alert(a, offset) for a in alerts_of(world).alerts(world.clock.now)]})
        if path == "/api/v1/rules":
            return _ok({"groups": [_rule_group(world, offset)]})
    except ValueError as exc:
        return _err("bad_data", str(exc))
    except PromQLError as exc:
        return _err(exc.error_type, exc.message)
    return KubeResponse(404, "404 page not found\n", "text/plain")


def _columns(tsdb: Any, matches: list[str]) -> list[int]:
    """TSDB columns selected by ``match[]`` selectors (all series when none are given)."""
    if not matches:
        return list(range(tsdb.width))
    cols: set[int] = set()
    for m in matches:
        node = compile_expr(m)
        if not isinstance(node, Selector):
            raise ValueError(f'invalid parameter "match[]": {m!r} is not a series selector')
        for alternative in node.matchers:
            cols.update(int(c) for c in tsdb.select(alternative))
    return sorted(cols)


def _alert(a: Any, offset: int) -> dict[str, Any]:
    out = alert_json(a)
    out["activeAt"] = shift_rfc3339(out["activeAt"], offset)
    return out


def _rule_group(world: Any, offset: int = 0) -> dict[str, Any]:
    alerts_by_rule: dict[str, list[dict[str, Any]]] = {}
    for a in alerts_of(world).alerts(world.clock.now):
        alerts_by_rule.setdefault(a.name, []).append(_alert(a, offset))
    rules = []
    for r in RULES:
        active = alerts_by_rule.get(r.name, [])
        state = "firing" if any(a["state"] == "firing" for a in active) else ("pending" if active else "inactive")
        rules.append({"name": r.name, "query": r.expr, "duration": r.for_s, "labels": {"severity": r.severity}, "annotations": {"description": r.description}, "alerts": active, "health": "ok", "type": "alerting", "state": state})
    return {"name": "sre-env.rules", "file": "/etc/prometheus/rules/sre-env.yaml", "rules": rules, "interval": 60}


def exposition(backend: "SimBackend", offset: int = 0) -> str:
    """The latest sample of every series in the text exposition format (version 0.0.4).

    ``offset`` moves the values of the series that hold unix times (``kube_pod_created``...).
    """
    tsdb = metrics_of(backend.world).tsdb
    cols = list(range(tsdb.width))
    if not cols:
        return ""
    import numpy as np

    # Prometheus' lookback: series not scraped in the last five minutes are gone
    values, _, valid = tsdb.latest_samples(np.asarray(cols, dtype=np.int64), backend.world.clock.now - 300.0)
    lines = []
    for col, value, ok in zip(cols, values, valid):
        if not ok:
            continue
        labels = dict(tsdb.labels(col))
        name = labels.pop("__name__", "")
        if not name:
            continue
        if offset and name in TIME_VALUED_METRICS:
            value = float(value) + offset
        inner = ",".join(f'{k}="{_escape(v)}"' for k, v in sorted(labels.items()))
        lines.append(f"{name}{{{inner}}} {_format(float(value))}" if inner else f"{name} {_format(float(value))}")
    lines.sort()
    return "\n".join(lines) + "\n"


def _escape(v: str) -> str:
    return str(v).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _format(v: float) -> str:
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    return repr(v) if v != int(v) or abs(v) >= 1e15 else str(int(v))
