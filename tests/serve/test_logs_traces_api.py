"""Loki's and Jaeger's query APIs over the simulated incident's logs and traces."""

from __future__ import annotations

import pytest

import sre_env
from sre_env.serve.logs_traces_api import handle_jaeger, handle_loki
from sre_env.telemetry.traces import find_traces

NS = "hotel-reservation"


@pytest.fixture(scope="module")
def backend():
    env = sre_env.SREEnv("TargetPortMisconfig")
    env.reset(seed=0)
    return env


def test_loki_streams_and_metric_queries(backend) -> None:
    env = backend
    r = handle_loki(env.backend, "/loki/api/v1/query_range", f'query={{namespace="{NS}",app="frontend"}}%20|=%20"error"&limit=3')
    assert r.status == 200 and r.body["data"]["resultType"] == "streams"
    values = [v for s in r.body["data"]["result"] for v in s["values"]]
    assert 0 < len(values) <= 3 and all("error" in line for _, line in values)
    assert all(len(ts) == 19 for ts, _ in values), "Loki timestamps are nanoseconds"
    r = handle_loki(env.backend, "/loki/api/v1/query_range", f'query=sum%20by%20(app)%20(count_over_time({{namespace="{NS}"}}[5m]))&step=60')
    assert r.body["data"]["resultType"] == "matrix" and any(s["metric"] == {"app": "frontend"} for s in r.body["data"]["result"])
    assert "app" in handle_loki(env.backend, "/loki/api/v1/labels", "").body["data"]
    assert "frontend" in handle_loki(env.backend, "/loki/api/v1/label/app/values", "").body["data"]
    bad = handle_loki(env.backend, "/loki/api/v1/query_range", "query={bad")
    assert bad.status == 400 and "parse error" in bad.body


def test_jaeger_search_and_fetch(backend) -> None:
    env = backend
    services = handle_jaeger(env.backend, "/api/services", "").body["data"]
    assert "frontend" in services and "search" in services
    ops = handle_jaeger(env.backend, "/api/services/frontend/operations", "").body["data"]
    assert ops
    found = handle_jaeger(env.backend, "/api/traces", "service=frontend&limit=3&lookback=1h").body["data"]
    assert 0 < len(found) <= 3 and all(t["spans"] and t["processes"] for t in found)
    same = find_traces(env.backend.world, "frontend", limit=3)
    assert [t["traceID"] for t in found] == [t.trace_id for t in same]
    one = handle_jaeger(env.backend, f"/api/traces/{found[0]['traceID']}", "")
    assert one.status == 200 and one.body["data"][0]["traceID"] == found[0]["traceID"]
    assert handle_jaeger(env.backend, "/api/traces/ffffffffffffffff", "").status == 404
    assert handle_jaeger(env.backend, "/api/traces", "").status == 400


def test_loki_refuses_more_entries_than_its_limit(backend) -> None:
    query = f'query={{namespace="{NS}"}}'
    r = handle_loki(backend.backend, "/loki/api/v1/query_range", f"{query}&limit=5001")
    assert (r.status, r.body) == (400, "max entries limit per query exceeded, limit > max_entries_limit_per_query (5001 > 5000)\n")
    assert handle_loki(backend.backend, "/loki/api/v1/query_range", f"{query}&limit=x").status == 400
    assert handle_loki(backend.backend, "/loki/api/v1/query_range", f"{query}&limit=5000").status == 200


def test_a_month_of_logs_costs_the_containers_life(backend) -> None:
    # the world's containers started minutes ago: a 30-day range reads what they wrote, no more
    from sre_env.telemetry import logql

    world = backend.backend.world
    month = logql.run_query(world, f'{{namespace="{NS}"}}', logql.QueryOptions(since_s=30 * 86400, limit=5000))
    life = logql.run_query(world, f'{{namespace="{NS}"}}', logql.QueryOptions(since_s=world.clock.now + 3600, limit=5000))
    assert month == life and month[1] == 0 and month[0]
