"""Shell commands over the cluster's metrics: ``promql`` (queries) and ``alerts``.

``promql`` answers like Prometheus' HTTP API (``-o json``) or promtool's text
output (default). Errors print Prometheus' message and exit 1; nothing raises.
Register with ``ShellContext(extra_commands=metrics_commands(world))``: the handlers
read that simulated world (a live cluster has the real tools instead).
"""

from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from functools import partial
from typing import TYPE_CHECKING, Any, Callable

import promql_parser

from sre_env.kube.timefmt import EPOCH
from sre_env.telemetry.alerting import alerts_of
from sre_env.telemetry.metrics_store import metrics_of

from .promql import query, query_range

if TYPE_CHECKING:
    from sre_env.sim.kernel.world import World

__all__ = ["metrics_commands", "promql_command", "alerts_command", "PROMQL_HELP", "ALERTS_HELP"]

Handler = Callable[[object, list[str]], tuple[str, int]]
EPOCH_UNIX = EPOCH.timestamp()

PROMQL_HELP = """\
Usage: promql '<expr>' [flags]

Evaluate a PromQL expression against the cluster's Prometheus (15 s scrapes, 1 h retention).

Flags:
  --time <t>         evaluation time of an instant query, or end of a range query (default: now)
  --range <dur>      make it a range query over the last <dur> before --time (e.g. 30m, 1h)
  --start <t>        range query start (instead of --range)
  --end <t>          range query end (default: --time)
  --step <dur>       range query resolution (default: range/60, at least 15s)
  -o, --output <f>   table (default, promtool's format) or json (the HTTP API's body)
  -h, --help         show this help

Times: RFC 3339 (2026-03-02T09:15:00Z), unix seconds, now, or now-<dur>.
Series: kube-state-metrics (kube_*), node-exporter (node_*), cAdvisor (container_*),
the services' gRPC/HTTP metrics (grpc_server_*, http_request*), the load generator
(loadgen_*) and up.

Examples:
  promql 'sum by (service) (rate(grpc_server_handled_total{grpc_code!="OK"}[1m]))'
  promql 'histogram_quantile(0.99, sum by (le) (rate(loadgen_request_duration_seconds_bucket[2m])))' --range 30m
  promql 'kube_pod_container_status_restarts_total{namespace="hotel-reservation"} > 0' -o json
"""

ALERTS_HELP = """\
Usage: alerts [--all] [-o table|json]

List the alerts Prometheus' rules fire (kube-prometheus style, evaluated every minute).
  --all              include pending alerts (matching, but not yet for their 'for' duration)
  -o, --output <f>   table (default) or json (the /api/v1/alerts body)
"""


def metrics_commands(world: "World") -> dict[str, Handler]:
    """The extra shell commands this module provides, by name, reading ``world``."""
    return {"promql": partial(promql_command, world), "alerts": partial(alerts_command, world)}


class _UsageError(Exception):
    pass


def _duration(text: str) -> float:
    if re.fullmatch(r"\d+(\.\d+)?", text):
        return float(text)
    try:
        return float(promql_parser.parse_duration(text).total_seconds())
    except (ValueError, TypeError, AttributeError):
        raise _UsageError(f'invalid duration "{text}"') from None


def _time(text: str, now_unix: float) -> float:
    """A user's time as unix seconds."""
    t = text.strip()
    if t == "now":
        return now_unix
    m = re.fullmatch(r"now-(.+)", t)
    if m:
        return now_unix - _duration(m.group(1))
    if re.fullmatch(r"-?\d+(\.\d+)?", t):
        return float(t)
    try:
        dt = datetime.fromisoformat(t.replace("Z", "+00:00"))
    except ValueError:
        raise _UsageError(f'cannot parse "{text}" to a valid timestamp') from None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.timestamp()


def _flags(argv: list[str], spec: dict[str, str], bool_flags: set[str]) -> tuple[dict[str, Any], list[str]]:
    """Parse ``--flag value``/``--flag=value``/``-o json``; spec maps aliases to names."""
    opts: dict[str, Any] = {}
    rest: list[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            rest += argv[i + 1 :]
            break
        if a.startswith("-") and len(a) > 1 and not re.fullmatch(r"-\d.*", a):
            name, eq, value = a.partition("=")
            key = spec.get(name)
            if key is None:
                raise _UsageError(f"unknown flag: {name}")
            if key in bool_flags:
                opts[key] = True
            else:
                if not eq:
                    i += 1
                    if i >= len(argv):
                        raise _UsageError(f"flag needs an argument: {name}")
                    value = argv[i]
                opts[key] = value
        else:
            rest.append(a)
        i += 1
    return opts, rest


def promql_command(world: "World", ctx: object, argv: list[str]) -> tuple[str, int]:
    """``promql '<expr>' [--range D --step D] [--time T] [-o json|table]``."""
    spec = {"--time": "time", "--range": "range", "--start": "start", "--end": "end", "--step": "step", "-o": "output", "--output": "output", "-h": "help", "--help": "help"}
    try:
        opts, rest = _flags(argv, spec, {"help"})
    except _UsageError as exc:
        return f"promql: error: {exc}, try --help\n", 2
    if opts.get("help"):
        return PROMQL_HELP, 0
    if not rest:
        return "promql: error: required argument 'expr' not provided, try --help\n", 2
    output = opts.get("output", "table")
    if output not in ("table", "json"):
        return f"promql: error: invalid output format {output!r} (table or json)\n", 2
    tsdb = metrics_of(world).tsdb
    now_unix = world.clock.now + EPOCH_UNIX
    expr = " ".join(rest)
    try:
        at = _time(opts["time"], now_unix) if "time" in opts else now_unix
        ranged = any(k in opts for k in ("range", "start", "step"))
        if ranged:
            end = _time(opts["end"], now_unix) if "end" in opts else at
            if "start" in opts:
                start = _time(opts["start"], now_unix)
            else:
                start = end - _duration(opts.get("range", "1h"))
            step = _duration(opts["step"]) if "step" in opts else max(15.0, (end - start) / 60.0)
    except _UsageError as exc:
        return f"promql: error: {exc}\n", 2
    if ranged:
        result = query_range(tsdb, expr, start - EPOCH_UNIX, end - EPOCH_UNIX, step)
    else:
        result = query(tsdb, expr, at - EPOCH_UNIX)
    if output == "json":
        return json.dumps(result.to_json(), separators=(",", ":")) + "\n", 0 if result.ok else 1
    return result.to_table(), 0 if result.ok else 1


def alerts_command(world: "World", ctx: object, argv: list[str]) -> tuple[str, int]:
    """``alerts [--all] [-o table|json]``: firing (or pending and firing) alerts."""
    spec = {"--all": "all", "-a": "all", "-o": "output", "--output": "output", "-h": "help", "--help": "help"}
    try:
        opts, rest = _flags(argv, spec, {"all", "help"})
    except _UsageError as exc:
        return f"alerts: error: {exc}, try --help\n", 2
    if opts.get("help"):
        return ALERTS_HELP, 0
    if rest:
        return f"alerts: error: unexpected argument {rest[0]!r}, try --help\n", 2
    output = opts.get("output", "table")
    if output not in ("table", "json"):
        return f"alerts: error: invalid output format {output!r} (table or json)\n", 2
    state = alerts_of(world)
    alerts = state.alerts(world.clock.now)
    if not opts.get("all"):
        alerts = [a for a in alerts if a.firing]
    if output == "json":
        body = {"status": "success", "data": {"alerts": [alert_json(a) for a in alerts]}}
        return json.dumps(body, separators=(",", ":")) + "\n", 0
    if not alerts:
        return ("No alerts pending or firing.\n" if opts.get("all") else "No alerts firing.\n"), 0
    lines = [f"{a.line()} (active since {_rfc3339(a.active_since + EPOCH_UNIX)})" for a in alerts]
    return "\n".join(lines) + "\n", 0


def alert_json(a: Any) -> dict[str, Any]:
    """One alert as Prometheus' ``/api/v1/alerts`` lists it."""
    return {
        "labels": {"alertname": a.name, **dict(a.labels), "severity": a.severity},
        "annotations": {"description": a.summary},
        "state": a.state,
        "activeAt": _rfc3339(a.active_since + EPOCH_UNIX),
        "value": "1e+00",
    }


def _rfc3339(unix: float) -> str:
    return datetime.fromtimestamp(unix, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
