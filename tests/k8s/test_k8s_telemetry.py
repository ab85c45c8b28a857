"""LiveTelemetry: prometheus-api-client, Loki and Jaeger HTTP against ``sre-env serve``."""

from __future__ import annotations

from sre_env.env import metric_names
from sre_env.envs.registry import scenario_class
from sre_env.k8s.telemetry import LiveTelemetry

NS = "hotel-reservation"


def test_client_series_alerts_logs_and_traces_from_the_served_apis(paused) -> None:
    url = paused.server.prometheus_url
    tel = LiveTelemetry(url, loki_url=url, jaeger_url=url, bearer_token=paused.server.token)
    client = tel.client_window(NS, 120)
    assert client.has_data and client.success > 0.99 and 0 < client.latency_ms < 1000
    with paused.server.lock:
        now = paused.sim.now
    assert abs(tel.server_time() - (now + _epoch())) < 1.0  # the served cluster's clock, not the wall's
    assert tel.firing_alerts(NS) == []  # healthy
    names = metric_names(scenario_class("ScalePodZero"))
    window, mask = tel.metrics_window(scenario_class("ScalePodZero").app, names, 12)
    assert window.shape == (12, len(names)) and mask[:3].tolist() == [1, 1, 1]
    assert 0.99 < window[-1, 0] <= 1.0 and window[-1, 1] > 0  # success ratio, request rate
    ready = names.index(f"ready_replicas{{namespace={NS},service=geo}}")
    assert mask[ready] == 1 and window[-1, ready] == 1.0
    assert isinstance(tel.recent_logs(NS), str)
    assert tel.trace_summary("frontend").startswith("traces (last 1m, ")


def test_without_the_token_the_served_apis_give_no_data(paused) -> None:
    """The observability port wants the server's bearer token: the project's clients send it, and without it
    they get nothing (degrading to no data, as for a server that is down)."""
    url = paused.server.prometheus_url
    tel = LiveTelemetry(url, loki_url=url, jaeger_url=url)
    assert not tel.client_window(NS, 120).has_data and tel.server_time() is None and tel.recent_logs(NS) == ""


def _epoch() -> float:
    from sre_env.serve.prom_api import EPOCH_UNIX

    return EPOCH_UNIX


def test_missing_servers_mean_no_data_not_exceptions() -> None:
    tel = LiveTelemetry(None)
    assert not tel.client_window(NS, 60).has_data and tel.firing_alerts() == [] and tel.server_time() is None
    down = LiveTelemetry("http://127.0.0.1:9", loki_url="http://127.0.0.1:9", jaeger_url="http://127.0.0.1:9", timeout_s=1.0)
    assert not down.client_window(NS, 60).has_data and down.recent_logs(NS) == "" and down.trace_summary("frontend") == ""
