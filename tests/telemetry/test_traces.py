"""Lazily generated Jaeger traces agree with the call graph and with the metrics.

Worlds: the healthy baseline; ``geo``'s Service pointed at a dead port (a gRPC
callee nobody can reach: search's calls fail, geo gets no traffic); and
``mongodb-profile``'s Service pointed at a dead port (profile fails on its
cache misses only).
"""

from __future__ import annotations

import json

import pytest

from sre_env.apps.hotel_reservation import HOTEL_RESERVATION as APP
from sre_env.shell import ShellContext, run_command
from sre_env.sim.backend import SimBackend
from sre_env.sim.engine import advance
from sre_env.sim.episodes import healthy_world
from sre_env.sim.kernel.world import World
from sre_env.telemetry import traces as T
from sre_env.telemetry.log_trace_commands import log_trace_commands
from sre_env.telemetry.metrics_store import service_sample

NS = APP.namespace
FAULT_AGE_S = 180.0


def _break_target_port(world: World, service: str, port: int) -> World:
    api = SimBackend(world).api
    ports = api.get("Service", service, NS)["spec"]["ports"]
    ports[0]["targetPort"] = port
    api.patch("Service", service, NS, {"spec": {"ports": ports}}, "merge")
    advance(world, FAULT_AGE_S)
    return world


@pytest.fixture(scope="module")
def healthy() -> World:
    return healthy_world(APP)


@pytest.fixture(scope="module")
def geo_down() -> World:
    return _break_target_port(healthy_world(APP), "geo", 9999)


@pytest.fixture(scope="module")
def profile_db_down() -> World:
    return _break_target_port(healthy_world(APP), "mongodb-profile", 27018)


def _after_fault(world: World) -> float:
    """A lookback that only covers time after the fault (one scrape of margin)."""
    return FAULT_AGE_S - 20.0


# --------------------------------------------------------------------------- healthy


def test_healthy_baseline_has_no_error_spans(healthy):
    traces = T.find_traces(healthy, "frontend", lookback_s=900, limit=10_000)
    assert len(traces) > 100
    spans = [s for tr in traces for s in tr.spans]
    assert sum(s.error for s in spans) <= 0.001 * len(spans)
    assert T.find_traces(healthy, "frontend", tags={"error": "true"}, lookback_s=900) == []
    assert all(tr.root.tag("http.status_code") == 200 for tr in traces)


def test_services_and_operations_follow_the_call_graph(healthy):
    assert T.services(healthy) == sorted(c.name for c in APP.components if c.role in ("frontend", "service"))
    ops = T.operations(healthy, "search")
    assert ("/search.Search/Nearby", "server") in ops and ("/geo.Geo/Nearby", "client") in ops and ("/rate.Rate/GetRates", "client") in ops
    assert ("HTTP GET /hotels", "server") in T.operations(healthy, "frontend")
    assert ("mongo find inventory", "client") in T.operations(healthy, "rate")


def _assert_tree_matches_calls(tr: T.Trace) -> None:
    rtype = next(r for r in APP.requests if r.name == tr.request)
    edges = {(c.caller, c.callee) for c in rtype.calls}
    by_id = {s.span_id: s for s in tr.spans}
    root = tr.root
    assert root.parent_id is None and root.service == APP.entrypoint and root.operation == f"HTTP {rtype.method} {rtype.path}"
    assert sum(1 for s in tr.spans if s.parent_id is None) == 1
    for s in tr.spans:
        if s.parent_id is None:
            continue
        parent = by_id[s.parent_id]
        # children lie inside their parent
        assert parent.start_us <= s.start_us and s.start_us + s.duration_us <= parent.start_us + parent.duration_us
        if s.kind == "client":
            # a call made by the parent's own process, on an edge of this request's call tree
            assert parent.kind == "server" and parent.service == s.service
            assert (s.service, s.tag("peer.service")) in edges
        else:
            # a server span sits under the client span of the call that reached it
            assert parent.kind == "client" and parent.tag("peer.service") == s.service and parent.operation == s.operation


def test_get_trace_tree_matches_the_call_tree(healthy):
    traces = T.find_traces(healthy, "frontend", lookback_s=300, limit=1000)
    seen = set()
    for tr in traces:
        _assert_tree_matches_calls(tr)
        seen.add(tr.request)
    assert seen == {r.name for r in APP.requests}
    search = next(tr for tr in traces if tr.request == "search_hotels")
    again = T.get_trace(healthy, search.trace_id)
    assert again is not None and T.traces_json([again]) == T.traces_json([search])
    services = {s.service for s in search.spans}
    assert services == {"frontend", "search", "geo", "rate", "reservation", "profile"}
    text = T.format_trace(again)
    assert text.splitlines()[0].startswith(f"Trace {search.trace_id}  frontend: HTTP GET /hotels")
    assert "  search /geo.Geo/Nearby [client]" in text and "geo /geo.Geo/Nearby [server]" in text


def test_cache_misses_decide_database_spans(healthy):
    traces = [tr for tr in T.find_traces(healthy, "profile", lookback_s=900, limit=10_000)]
    cache = sum(1 for tr in traces for s in tr.spans if s.operation == "memcached get_multi" and s.service == "profile")
    db = sum(1 for tr in traces for s in tr.spans if s.operation == "mongo find hotels")
    assert cache == len(traces) and 0 < db < 0.3 * cache  # miss ratio 0.1


def test_dependency_graph_matches_the_call_graph(healthy):
    deps = T.dependencies(healthy, lookback_s=600)
    assert {(p, c) for p, c, _ in deps} == {(c.caller, c.callee) for r in APP.requests for c in r.calls}
    counts = {(p, c): n for p, c, n in deps}
    assert all(n > 0 for n in counts.values())
    fe_rps = sum(service_sample(healthy, NS, "frontend", healthy.clock.now - k * 15)[0] for k in range(40)) / 40
    assert counts[("frontend", "search")] == pytest.approx(fe_rps * 0.6 * 600, rel=0.1)
    body = json.loads(T.dependencies_json(deps))
    assert {"parent", "child", "callCount"} <= set(body["data"][0])


# --------------------------------------------------------------------------- faults


def test_unreachable_grpc_callee_has_no_spans_and_its_caller_errors(geo_down):
    lookback = _after_fault(geo_down)
    assert T.find_traces(geo_down, "geo", lookback_s=lookback, limit=50) == []
    failing = T.find_traces(geo_down, "search", tags={"error": "true"}, lookback_s=lookback, limit=50)
    assert failing
    for tr in failing:
        _assert_tree_matches_calls(tr)
        calls = [s for s in tr.spans if s.kind == "client" and s.service == "search" and s.tag("peer.service") == "geo"]
        assert calls and all(s.error for s in calls)
        for s in calls:
            assert s.tag("grpc.status_code") == 14
            assert "connect: connection refused" in s.tag("otel.status_description")
            assert any(("message", s.tag("otel.status_description")) in fields for _, fields in s.logs)
            assert not any(c.parent_id == s.span_id for c in tr.spans)  # nothing answered
        assert tr.root.error and tr.root.tag("http.status_code") == 500
    # before the fault the same callee served
    assert T.find_traces(geo_down, "geo", lookback_s=600, limit=1)


def test_error_share_follows_the_metrics(geo_down):
    traces = T.find_traces(geo_down, "frontend", lookback_s=_after_fault(geo_down), limit=10_000)
    weight = sum(tr.weight for tr in traces)
    failed = sum(tr.weight for tr in traces if tr.root.error)
    _, err, _ = service_sample(geo_down, NS, "frontend", geo_down.clock.now)
    assert failed / weight == pytest.approx(err, abs=0.1)
    assert all(tr.request == "search_hotels" for tr in traces if tr.root.error)


def test_database_edge_errors_only_on_cache_misses(profile_db_down):
    lookback = _after_fault(profile_db_down)
    traces = T.find_traces(profile_db_down, "profile", lookback_s=lookback, limit=10_000)
    db_calls = [s for tr in traces for s in tr.spans if s.operation == "mongo find hotels"]
    assert db_calls and all(s.error for s in db_calls)
    assert all("10.96." in s.tag("otel.status_description") and "connection refused" in s.tag("otel.status_description") for s in db_calls)
    errored = [tr for tr in traces if tr.root.error]
    assert 0 < len(errored) < 0.4 * len(traces)
    for tr in errored:
        assert any(s.operation == "mongo find hotels" and s.error for s in tr.spans)
    assert T.find_traces(profile_db_down, "search", tags={"error": "true"}, lookback_s=lookback) == []


def test_min_duration_and_operation_filters(profile_db_down):
    all_traces = T.find_traces(profile_db_down, "frontend", lookback_s=300, limit=10_000)
    longest = max(tr.duration_us for tr in all_traces)
    slow = T.find_traces(profile_db_down, "frontend", min_duration_ms=longest / 1000 - 0.001, lookback_s=300, limit=10_000)
    assert slow and all(any(s.service == "frontend" and s.duration_us >= longest - 1 for s in tr.spans) for tr in slow)
    op = T.find_traces(profile_db_down, "user", operation="/user.User/CheckUser", lookback_s=300, limit=5)
    assert len(op) == 5 and all(tr.request in ("user_login", "reserve") for tr in op)
    starts = [tr.root.start_us for tr in op]
    assert starts == sorted(starts, reverse=True)


def test_trace_summary(healthy, geo_down):
    text = T.trace_summary(healthy, APP, healthy.clock.now, 60)
    assert "errors by service: none" in text and "slowest:" in text
    text = T.trace_summary(geo_down, APP, geo_down.clock.now, 60)
    lines = text.splitlines()
    assert 3 <= len(lines) <= 6
    assert "search 100.0%" in text and "failing call: search -> geo:" in text and "connection refused" in text


def test_determinism(profile_db_down):
    a = T.traces_json(T.find_traces(profile_db_down, "frontend", lookback_s=600, limit=50))
    b = T.traces_json(T.find_traces(profile_db_down, "frontend", lookback_s=600, limit=50))
    c = T.traces_json(T.find_traces(profile_db_down.fork(), "frontend", lookback_s=600, limit=50))
    assert a == b == c
    before = profile_db_down.snapshot()
    T.trace_summary(profile_db_down, APP)
    T.dependencies(profile_db_down)
    assert profile_db_down.snapshot() == before


def test_jaeger_json_shape(profile_db_down):
    tr = T.find_traces(profile_db_down, "profile", tags={"error": "true"}, lookback_s=300, limit=1)[0]
    body = json.loads(T.traces_json([tr]))
    data = body["data"][0]
    assert data["traceID"] == tr.trace_id and set(data["processes"]) == {s["processID"] for s in data["spans"]}
    for s in data["spans"]:
        assert {"traceID", "spanID", "operationName", "references", "startTime", "duration", "tags", "logs", "processID"} <= set(s)
        assert isinstance(s["startTime"], int) and isinstance(s["duration"], int)
    err = next(s for s in data["spans"] if s["operationName"] == "mongo find hotels")
    assert {"key": "error", "type": "bool", "value": True} in err["tags"]
    assert {p["serviceName"] for p in data["processes"].values()} <= set(T.services(profile_db_down))


# --------------------------------------------------------------------------- shell command


def test_traces_command(geo_down):
    ctx = ShellContext(SimBackend(geo_down), NS, log_trace_commands(geo_down))
    out = run_command(ctx, "traces services").output.split()
    assert out == T.services(geo_down)
    r = run_command(ctx, "traces find --service search --tags error=true --lookback 2m --limit 2")
    assert r.exit_code == 0 and r.output.startswith("TRACE ID") and len(r.output.splitlines()) == 3
    tid = r.output.splitlines()[1].split()[0]
    got = run_command(ctx, f"traces get {tid}")
    assert got.exit_code == 0 and "ERROR" in got.output and "connection refused" in got.output
    j = json.loads(run_command(ctx, f"traces get {tid} -o json").output)
    assert j["data"][0]["traceID"] == tid
    assert json.loads(run_command(ctx, "traces find --service search --tags '{\"error\":\"true\"}' --limit 1 -o json").output)["data"]
    assert run_command(ctx, "traces find --service geo --lookback 2m").output == "No traces found.\n"
    assert run_command(ctx, "traces get 00000000deadbeef").exit_code == 1
    assert "search" in run_command(ctx, "traces deps").output
    assert run_command(ctx, "traces operations geo -o json").exit_code == 0
    for bad in ("traces", "traces find", "traces bogus", "traces find --service x --lookback 1q", "traces find --service x --limit z", "traces get", "traces find --service x --tags nope"):
        r = run_command(ctx, bad)
        assert r.exit_code == 1 and "usage: traces" in r.output, bad
    assert "failing call: search -> geo" in run_command(ctx, "traces summary").output


def test_unreachable_entrypoint_reports_no_traces():
    world = _break_target_port(healthy_world(APP), "frontend", 9090)
    assert T.find_traces(world, "frontend", lookback_s=_after_fault(world)) == []
    text = T.trace_summary(world, APP, world.clock.now, 60)
    assert "frontend reported no spans while clients offered" in text
