"""Live telemetry for a real cluster: Prometheus through ``prometheus-api-client``,
Loki and Jaeger over their HTTP query APIs.

The queries use the metric names the simulator exports (they are the real
exporters' names): the load generator's ``loadgen_requests_total`` and
``loadgen_request_duration_seconds``, kube-state-metrics' replica and restart
series. Every method degrades to "no data" rather than raising when a server is
not configured or does not answer, because observations must never fail a step;
the live oracles, which must not pass on missing data, check ``has_data``.

A server that wants a bearer token (``sre-env serve``'s observability port, or a
Prometheus behind an authenticating proxy) gets ``Authorization: Bearer
<bearer_token>`` on every request: ``prometheus-api-client`` through its
``headers``, the Loki and Jaeger queries on their own requests.
"""

from __future__ import annotations

import json
import math
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from sre_env.kube.authn import bearer_header

if TYPE_CHECKING:
    from sre_env.apps.base import AppSpec

__all__ = ["ClientWindow", "LiveTelemetry", "latency_query", "success_query"]

#: seconds between the samples of the observation's metrics window (one scrape interval)
STEP_S = 30.0


def success_query(namespace: str, window_s: float) -> str:
    """The load generator's success ratio over ``window_s`` (what the simulator's client_history holds)."""
    w = f"{int(window_s)}s"
    sel = f'namespace="{namespace}",job="loadgen"'
    return f'sum(rate(loadgen_requests_total{{{sel},status="200"}}[{w}])) / sum(rate(loadgen_requests_total{{{sel}}}[{w}]))'


def latency_query(namespace: str, window_s: float) -> str:
    """Mean client latency in milliseconds over ``window_s``."""
    w = f"{int(window_s)}s"
    sel = f'namespace="{namespace}",job="loadgen"'
    return f"1000 * sum(rate(loadgen_request_duration_seconds_sum{{{sel}}}[{w}])) / sum(rate(loadgen_request_duration_seconds_count{{{sel}}}[{w}]))"


@dataclass(frozen=True)
class ClientWindow:
    """What the load generator saw: success ratio, mean latency; ``has_data`` False when nothing was scraped."""

    success: float
    latency_ms: float
    has_data: bool


class LiveTelemetry:
    """Prometheus (required for grading), Loki and Jaeger (optional) of one cluster."""

    def __init__(self, prometheus_url: str | None, *, loki_url: str | None = None, jaeger_url: str | None = None, timeout_s: float = 10.0, bearer_token: str | None = None) -> None:
        self.prometheus_url = prometheus_url.rstrip("/") if prometheus_url else None
        self.loki_url = loki_url.rstrip("/") if loki_url else None
        self.jaeger_url = jaeger_url.rstrip("/") if jaeger_url else None
        self.timeout_s = timeout_s
        self._headers = bearer_header(bearer_token)
        self._prom: Any = None
        if self.prometheus_url:
            from prometheus_api_client import PrometheusConnect
            from urllib3.util.retry import Retry

            # a few quick retries: an observation must not hang on a Prometheus that is down
            retry = Retry(total=2, backoff_factor=0.2, status_forcelist=(502, 503, 504))
            self._prom = PrometheusConnect(url=self.prometheus_url, headers=self._headers or None, disable_ssl=True, retry=retry, timeout=int(max(timeout_s, 1)))

    # -- Prometheus ------------------------------------------------------------------
    def query(self, expr: str) -> list[dict[str, Any]]:
        """An instant query's vector (``[]`` on any failure or without Prometheus)."""
        if self._prom is None:
            return []
        try:
            return list(self._prom.custom_query(query=expr))
        except Exception:
            return []

    def scalar(self, expr: str) -> float | None:
        rows = self.query(expr)
        if not rows:
            return None
        value = float(rows[0]["value"][1])
        return None if math.isnan(value) else value

    def server_time(self) -> float | None:
        """The Prometheus server's clock (unix seconds): the cluster's time for a served simulator."""
        data = self._get_json(self.prometheus_url, "/api/v1/query", {"query": "time()"})
        result = ((data or {}).get("data") or {}).get("result")
        try:
            return float(result[1])  # a scalar result is [<eval time>, "<value>"]
        except (TypeError, IndexError, ValueError):
            return None

    def client_window(self, namespace: str, window_s: float) -> ClientWindow:
        success = self.scalar(success_query(namespace, window_s))
        latency = self.scalar(latency_query(namespace, window_s))
        if success is None:
            return ClientWindow(0.0, float("inf"), False)
        return ClientWindow(success, latency if latency is not None else 0.0, True)

    def firing_alerts(self, namespace: str | None = None) -> list[str]:
        """``alertname{labels} severity: description`` for every firing alert (of ``namespace``)."""
        data = self._get_json(self.prometheus_url, "/api/v1/alerts", {})
        alerts = ((data or {}).get("data") or {}).get("alerts") or []
        lines = []
        for a in alerts:
            labels = a.get("labels") or {}
            if a.get("state") != "firing" or (namespace and labels.get("namespace") not in (namespace, None)):
                continue
            shown = ",".join(f"{k}={v}" for k, v in sorted(labels.items()) if k not in ("alertname", "severity"))
            desc = (a.get("annotations") or {}).get("description") or (a.get("annotations") or {}).get("summary") or ""
            lines.append(f"{labels.get('alertname', '?')}{{{shown}}} {labels.get('severity', '')}: {desc}".rstrip(": "))
        return sorted(lines)

    def metrics_window(self, app: "AppSpec", names: list[str], length: int) -> tuple[np.ndarray, np.ndarray]:
        """The observation's metrics window from Prometheus: the client series and each service's
        ready replicas and restarts (columns Prometheus cannot answer stay 0 with mask 0)."""
        window = np.zeros((length, len(names)), dtype=np.float32)
        mask = np.zeros(len(names), dtype=np.int8)
        if self._prom is None:
            return window, mask
        ns = app.namespace
        sel = f'namespace="{ns}",job="loadgen"'
        exprs: dict[str, tuple[str, str | None]] = {
            f"client_success_ratio{{namespace={ns}}}": (success_query(ns, 60), None),
            f"client_rps{{namespace={ns}}}": (f"sum(rate(loadgen_requests_total{{{sel}}}[1m]))", None),
            f"client_latency_p99_ms{{namespace={ns}}}": (f"1000 * histogram_quantile(0.99, sum by (le) (rate(loadgen_request_duration_seconds_bucket{{{sel}}}[1m])))", None),
            "ready_replicas": (f'sum by (deployment) (kube_deployment_status_replicas_ready{{namespace="{ns}"}})', "deployment"),
            "restarts": (f'sum by (container) (kube_pod_container_status_restarts_total{{namespace="{ns}"}})', "container"),
        }
        index = {n: i for i, n in enumerate(names)}
        containers = {c.container: c.name for c in app.components if c.container}
        end = self.server_time() or time.time()
        start = end - STEP_S * (length - 1)
        for key, (expr, by) in exprs.items():
            for row in self._range(expr, start, end):
                if by is None:
                    col = index.get(key)
                else:
                    label = (row.get("metric") or {}).get(by, "")
                    service = containers.get(label, label) if by == "container" else label
                    col = index.get(f"{key}{{namespace={ns},service={service}}}")
                if col is None:
                    continue
                mask[col] = 1
                for t, v in row.get("values") or ():
                    slot = int(round((float(t) - start) / STEP_S))
                    value = float(v)
                    if 0 <= slot < length and math.isfinite(value):
                        window[slot, col] = value
        return window, mask

    def _range(self, expr: str, start: float, end: float) -> list[dict[str, Any]]:
        data = self._get_json(self.prometheus_url, "/api/v1/query_range", {"query": expr, "start": f"{start:.3f}", "end": f"{end:.3f}", "step": f"{int(STEP_S)}s"})
        return list(((data or {}).get("data") or {}).get("result") or [])

    # -- Loki and Jaeger ---------------------------------------------------------------
    def recent_logs(self, namespace: str, *, horizon_s: float = 120.0, limit: int = 12) -> str:
        """Warnings and errors of the namespace's containers (Loki), newest last."""
        end = self.server_time() or time.time()
        params = {
            "query": f'{{namespace="{namespace}"}} |~ "(?i)(error|fatal|panic|warn|fail)"',
            "start": str(int((end - horizon_s) * 1e9)),
            "limit": str(limit),
            "direction": "backward",
        }
        data = self._get_json(self.loki_url, "/loki/api/v1/query_range", params)
        rows = []
        for stream in ((data or {}).get("data") or {}).get("result") or []:
            pod = (stream.get("stream") or {}).get("pod", "?")
            for ts, line in stream.get("values") or ():
                rows.append((int(ts), pod, line))
        rows.sort()
        return "\n".join(f"{pod}: {line[:300]}" for _, pod, line in rows[-limit:])

    def trace_summary(self, service: str, *, lookback: str = "1m", limit: int = 20) -> str:
        """How many recent traces through ``service`` (the entrypoint) carry an error span (Jaeger)."""
        data = self._get_json(self.jaeger_url, "/api/traces", {"service": service, "lookback": lookback, "limit": str(limit)})
        traces = (data or {}).get("data")
        if not isinstance(traces, list):
            return ""
        failed: dict[str, int] = {}
        bad = 0
        for trace in traces:
            procs = trace.get("processes") or {}
            errs = [s for s in trace.get("spans") or () if any(t.get("key") == "error" and t.get("value") in (True, "true") for t in s.get("tags") or ())]
            if errs:
                bad += 1
            for s in errs:
                name = (procs.get(s.get("processID")) or {}).get("serviceName", "?")
                failed[name] = failed.get(name, 0) + 1
        head = f"traces (last {lookback}, {len(traces)} sampled): {bad} with errors"
        detail = ", ".join(f"{k} x{v}" for k, v in sorted(failed.items(), key=lambda kv: (-kv[1], kv[0]))[:6])
        return head + (f" ({detail})" if detail else "")

    # -- HTTP ------------------------------------------------------------------------
    def _get_json(self, base: str | None, path: str, params: dict[str, str]) -> Any:
        if not base:
            return None
        url = f"{base}{path}?{urllib.parse.urlencode(params)}" if params else f"{base}{path}"
        try:
            with urllib.request.urlopen(urllib.request.Request(url, headers=self._headers), timeout=self.timeout_s) as resp:
                return json.loads(resp.read().decode("utf-8", "replace"))
        except (urllib.error.URLError, OSError, ValueError):
            return None
