"""Observability surfaces: metrics (TSDB, exporters, PromQL, alerts), logs (LogQL), traces.

Everything is computed from the simulator's state; logs and traces are
generated lazily when queried, so telemetry nobody reads costs nothing.
"""

from __future__ import annotations

__all__ = ["telemetry_reference"]


def telemetry_reference() -> str:
    """The observability commands, for help text and LLM prompts."""
    return (
        "Observability (answers like Prometheus, Loki and Jaeger):\n"
        "  promql '<expr>' [--range 30m --step 1m] [--time T] [-o table|json]\n"
        "      PromQL over kube-state-metrics, cAdvisor, node-exporter and app metrics.\n"
        "  alerts [--all]\n"
        "      Firing alerts (pending ones too with --all).\n"
        "  logql '<query>' [--since 5m] [--limit N] [--forward] [-o raw|jsonl|json|table]\n"
        "      LogQL: {namespace=\"...\", app=\"...\"} |= \"error\" | json | level=\"error\"; count_over_time(...[5m]).\n"
        "  traces services | operations SVC | find --service S [--operation O] [--tags error=true]\n"
        "         [--min-duration 500ms] [--lookback 1h] [--limit N] | get TRACE_ID | deps | summary\n"
        "      Jaeger-style traces and the service dependency graph.\n"
        "  submit <diagnosis>\n"
        "      End the episode. Free text and/or JSON with component, namespace, layer, mechanism, details, affected.\n"
    )
