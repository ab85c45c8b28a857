"""LogQL over the simulated cluster's logs, and the lazily generated request lines under it.

A healthy warmed-up cluster and one whose ``mongodb-profile`` Service sends
traffic to a port nobody listens on (connection refused on profile's cache
misses) give known lines: MongoDB JSON start-up lines, zerolog dependency
errors, per-request trace lines with a status mix from the error ratio.
"""

from __future__ import annotations

import json
import re

import pytest

from sre_env.apps.hotel_reservation import HOTEL_RESERVATION as APP
from sre_env.shell import ShellContext, run_command
from sre_env.sim.backend import SimBackend
from sre_env.sim.engine import advance
from sre_env.sim.episodes import healthy_world
from sre_env.sim.kernel.world import World
from sre_env.telemetry.lazylogs import (
    MAX_PER_INTERVAL,
    ServiceSampler,
    container_entries,
    container_lines,
)
from sre_env.telemetry.log_trace_commands import log_trace_commands
from sre_env.telemetry.logql import QueryOptions, parse, run_query
from sre_env.telemetry.metrics_store import service_sample

NS = APP.namespace
_STAMP = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?Z) ")


def _break_target_port(world: World, service: str, port: int, seconds: float = 180.0) -> World:
    api = SimBackend(world).api
    ports = api.get("Service", service, NS)["spec"]["ports"]
    ports[0]["targetPort"] = port
    api.patch("Service", service, NS, {"spec": {"ports": ports}}, "merge")
    advance(world, seconds)
    return world


@pytest.fixture(scope="module")
def healthy() -> World:
    return healthy_world(APP)


@pytest.fixture(scope="module")
def broken() -> World:
    return _break_target_port(healthy_world(APP), "mongodb-profile", 27018)


def q(world: World, query: str, **kw) -> str:
    out, code = run_query(world, query, QueryOptions(**kw))
    assert code == 0, out
    return out


def lines(world: World, query: str, **kw) -> list[str]:
    """The log lines of a query, without timestamps and labels."""
    return [ln for ln in q(world, query, output="raw", **kw).splitlines()]


def jsonl(world: World, query: str, **kw) -> list[dict]:
    return [json.loads(ln) for ln in q(world, query, output="jsonl", **kw).splitlines()]


def pod_of(world: World, app: str) -> dict:
    return next(p for p in world.store.iter("Pod") if (p["metadata"].get("labels") or {}).get("io.kompose.service") == app)


# --------------------------------------------------------------------------- selectors


def test_equality_selector_returns_only_that_stream(broken):
    rows = jsonl(broken, '{namespace="hotel-reservation", app="profile"}', limit=200)
    assert rows
    pod = pod_of(broken, "profile")
    for r in rows:
        assert r["labels"] == {"namespace": NS, "app": "profile", "pod": pod["metadata"]["name"], "container": "hotel-reserv-profile", "node": pod["spec"]["nodeName"], "stream": "stdout"}


def test_regex_and_negative_matchers(healthy):
    apps = {r["labels"]["app"] for r in jsonl(healthy, '{app=~"mongodb-.*"}', limit=1000, since_s=3600)}
    assert apps == {c.name for c in APP.components if c.name.startswith("mongodb-")}
    apps = {r["labels"]["app"] for r in jsonl(healthy, '{namespace="hotel-reservation", app!~"mongodb-.*|memcached-.*", app!="frontend"}', limit=5000)}
    assert apps and not any(a.startswith(("mongodb-", "memcached-")) or a == "frontend" for a in apps)
    pod = pod_of(healthy, "geo")
    by_pod = jsonl(healthy, f'{{pod="{pod["metadata"]["name"]}", container="hotel-reserv-geo", stream="stdout"}}', limit=5)
    assert by_pod and {r["labels"]["app"] for r in by_pod} == {"geo"}
    node = pod["spec"]["nodeName"]
    assert {r["labels"]["node"] for r in jsonl(healthy, f'{{node="{node}"}}', limit=300)} == {node}


def test_selector_without_a_non_empty_matcher_is_rejected(healthy):
    out, code = run_query(healthy, '{app=~".*"}')
    assert code == 1 and "queries require at least one regexp or equality matcher that does not have an empty-compatible value" in out


# --------------------------------------------------------------------------- line filters


def test_line_filters(broken):
    refused = lines(broken, '{app="profile"} |= "connection refused"', limit=1000, since_s=600)
    assert refused and all("connection refused" in ln for ln in refused)
    not_refused = lines(broken, '{app="profile"} != "connection refused"', limit=1000, since_s=600)
    assert not_refused and not any("connection refused" in ln for ln in not_refused)
    everything = lines(broken, '{app="profile"}', limit=5000, since_s=600)
    assert len(refused) + len(not_refused) == len(everything)
    rx = lines(broken, '{app="profile"} |~ "hotelId \\\\[[0-9]+\\\\]"', limit=1000, since_s=600)
    assert rx and all(re.search(r"hotelId \[[0-9]+\]", ln) for ln in rx)
    nrx = lines(broken, '{app="profile"} !~ "ERR|TRC"', limit=1000, since_s=600)
    assert all("ERR" not in ln and "TRC" not in ln for ln in nrx)
    chained = lines(broken, '{app="profile"} |= "TRC" != "status=OK" |~ "latency=[0-9.]+ms"', limit=1000, since_s=600)
    assert chained and all("TRC" in ln and "status=OK" not in ln for ln in chained)
    either = lines(broken, '{app="profile"} |= "status=Unknown" or "refused"', limit=1000, since_s=600)
    assert set(either) >= set(refused) and any("status=Unknown" in ln for ln in either)


# --------------------------------------------------------------------------- parsers and label filters


def test_json_parser_on_mongodb_lines(healthy):
    rows = jsonl(healthy, '{app=~"mongodb-.*"} | json | s="W"', limit=1000, since_s=3600)
    assert rows
    for r in rows:
        obj = json.loads(r["line"])
        assert obj["s"] == "W" and r["labels"]["s"] == "W"
        assert r["labels"]["t__date"] == obj["t"]["$date"]  # nested keys flattened, "$" sanitised
        assert r["labels"]["c"] == obj["c"]
    numeric = jsonl(healthy, '{app="mongodb-geo"} | json | attr_port >= 27017 and c="NETWORK"', limit=100, since_s=3600)
    assert numeric and all(json.loads(r["line"])["attr"]["port"] == 27017 for r in numeric)
    none = lines(healthy, '{app="mongodb-geo"} | json | attr_port > 27017', limit=100, since_s=3600)
    assert none == []
    params = jsonl(healthy, '{app="mongodb-geo"} | json sev="s", message="msg" | sev="I"', limit=5, since_s=3600)
    assert params and all(set(r["labels"]) >= {"sev", "message"} and "c" not in r["labels"] for r in params)


def test_json_parser_error_label_on_non_json(healthy):
    rows = jsonl(healthy, '{app="geo"} | json | __error__="JSONParserErr"', limit=5, since_s=3600)
    assert rows and all(not r["line"].startswith("{") for r in rows)
    ok = jsonl(healthy, '{app="geo"} | json | __error__=""', limit=50, since_s=3600)
    assert all(r["line"].startswith("{") for r in ok)  # zerolog's first three JSON lines


def test_logfmt_and_numeric_label_filters(broken):
    rows = jsonl(broken, '{app="profile"} | logfmt | status="Unknown"', limit=50, since_s=300)
    assert rows and all("status=Unknown" in r["line"] and r["labels"]["latency"].endswith("ms") for r in rows)
    slow = jsonl(broken, '{app="profile"} | logfmt | latency > 2.5ms', limit=500, since_s=300)
    assert slow and all(float(r["labels"]["latency"][:-2]) > 2.5 for r in slow)
    fast = jsonl(broken, '{app="profile"} | logfmt | latency <= 2.5ms', limit=500, since_s=300)
    assert fast and all(float(r["labels"]["latency"][:-2]) <= 2.5 for r in fast)


def test_pattern_parser_and_line_format(broken):
    out = lines(broken, '{app="profile"} | pattern "<ts> <level> <caller> > <msg>" | level="ERR" | line_format "{{.level}} {{ .msg }}"', limit=10, since_s=300)
    assert out and all(ln.startswith("ERR Tried to find hotelId") and "connection refused" in ln for ln in out)
    kept = jsonl(broken, '{app="profile"} | pattern "<_> <level> <_> > <_>" | keep level, app', limit=3, since_s=300)
    assert kept and all(set(r["labels"]) == {"level", "app"} for r in kept)


# --------------------------------------------------------------------------- metric queries


def _expected_requests(world: World, service: str, seconds: float, error_only: bool = False) -> float:
    now = world.clock.now
    total = 0.0
    t = now - seconds
    while t < now - 1e-9:
        step = min(15.0 - (t % 15.0), now - t)
        rps, err, _ = service_sample(world, NS, service, (t // 15) * 15 + 15 - 1e-6)
        total += rps * step * (err if error_only else 1.0)
        t += step
    return total


def _vector(world: World, query: str) -> dict[tuple, float]:
    body = json.loads(q(world, query, output="json"))
    assert body["status"] == "success" and body["data"]["resultType"] == "vector"
    return {tuple(sorted(r["metric"].items())): float(r["value"][1]) for r in body["data"]["result"]}


def test_count_over_time_agrees_with_request_metrics(broken):
    got = _vector(broken, 'sum(count_over_time({app="frontend"}[2m]))')[()]
    want = _expected_requests(broken, "frontend", 120)
    assert got == pytest.approx(want, rel=0.05)
    rate = _vector(broken, 'sum(rate({app="frontend"}[2m]))')[()]
    assert rate == pytest.approx(got / 120, rel=1e-6)
    errors = _vector(broken, 'sum(count_over_time({app="profile"} |= "status=Unknown" [2m]))')[()]
    assert errors == pytest.approx(_expected_requests(broken, "profile", 120, error_only=True), rel=0.1)


def test_healthy_has_no_error_request_lines(healthy):
    assert _vector(healthy, 'sum(count_over_time({namespace="hotel-reservation"} |= "status=Unknown" [10m]))') == {}


def test_sum_by_and_topk(broken):
    by_app = _vector(broken, 'sum by (app) (rate({namespace="hotel-reservation"} |~ "status=Unknown|refused" [1m]))')
    assert set(by_app) == {(("app", "profile"),), (("app", "frontend"),)}  # the frontend's 500s quote profile's error
    assert by_app[(("app", "profile"),)] > by_app[(("app", "frontend"),)]
    top = _vector(broken, 'topk(2, sum by (app) (count_over_time({namespace="hotel-reservation"}[1m])))')
    assert len(top) == 2 and (("app", "frontend"),) in top
    filtered = _vector(broken, 'sum by (app) (rate({namespace="hotel-reservation"}[1m])) > 100')
    assert filtered and all(v > 100 for v in filtered.values())
    scaled = _vector(broken, 'sum(rate({app="frontend"}[1m])) * 60')
    assert scaled[()] == pytest.approx(_vector(broken, 'sum(count_over_time({app="frontend"}[1m]))')[()], rel=1e-6)


def test_matrix_with_step(broken):
    body = json.loads(q(broken, 'sum(count_over_time({app="profile"} |= "refused" [1m]))', output="json", step_s=60.0, since_s=300.0))
    assert body["data"]["resultType"] == "matrix"
    values = body["data"]["result"][0]["values"]
    assert len(values) >= 3 and all(float(v) > 0 for _, v in values[-3:])
    table = q(broken, 'sum(count_over_time({app="profile"} |= "refused" [1m]))', step_s=60.0, since_s=300.0)
    assert table.startswith("{}\n") and table.count("\n") == len(values) + 1


def test_unwrap_over_parsed_latency(broken):
    got = _vector(broken, 'max_over_time({app="profile"} | logfmt | unwrap duration(latency) [5m])')
    assert got and all(0 < v < 1 for v in got.values())  # seconds


# --------------------------------------------------------------------------- syntax errors


@pytest.mark.parametrize(
    "query, message",
    [
        ('{app=profile}', "parse error at line 1, col 6: syntax error: unexpected IDENTIFIER, expecting STRING"),
        ('{app="x"} foo', "parse error at line 1, col 11: syntax error: unexpected IDENTIFIER, expecting != or !~ or |~ or |="),
        ('{app="x" |= "y"', "parse error at line 1, col 10: syntax error: unexpected |=, expecting , or }"),
        ('{app > "x"}', "parse error at line 1, col 6: syntax error: unexpected >, expecting = or != or =~ or !~"),
        ('rate({app="x"})', "parse error at line 1, col 15: syntax error: unexpected ), expecting RANGE"),
        ('{app="x', "parse error at line 1, col 6: literal not terminated"),
        ('{app="x"', "parse error at line 1, col 9: syntax error: unexpected $end, expecting , or }"),
        ('{app="x"} |~ "("', "parse error at line 1, col 14: error parsing regexp"),
        ('sum by (app) count_over_time({app="x"}[1m])', "syntax error: unexpected IDENTIFIER, expecting ("),
        ('sum_over_time({app="x"}[1m])', "invalid aggregation sum_over_time without unwrap"),
    ],
)
def test_syntax_errors_read_like_loki(healthy, query, message):
    out, code = run_query(healthy, query)
    assert code == 1
    assert out.startswith("Query failed: Error response from server: parse error")
    assert message in out


@pytest.mark.parametrize("query", ["", "{", "}", "|=", "{a=\"b\"} | json |", "sum(", "count_over_time({a=\"b\"}[5x])", "{a=\"b\"} | line_format", "((((1", "1 +", "{a=\"b\"}[", "\x00", "{a=\"b\"} | unwrap", "topk(x, 1)"])
def test_garbage_never_raises(healthy, query):
    out, code = run_query(healthy, query)
    assert isinstance(out, str) and code in (0, 1)


def test_parse_returns_an_ast():
    expr = parse('sum by (pod) (count_over_time({app="geo"} |= "x" | json | s="E" [5m]))')
    assert type(expr).__name__ == "VectorAgg"


# --------------------------------------------------------------------------- limit, direction, output


def test_limit_and_direction(broken):
    out = q(broken, '{app="frontend"}', limit=5)
    body = out.splitlines()
    assert body[0].startswith("Common labels: {app=\"frontend\"")
    stamps = [_STAMP.match(ln).group(1) for ln in body[1:]]
    assert len(stamps) == 5 and stamps == sorted(stamps, reverse=True)
    fwd = [_STAMP.match(ln).group(1) for ln in q(broken, '{app="frontend"}', limit=5, forward=True, since_s=600, quiet=True).splitlines()]
    assert len(fwd) == 5 and fwd == sorted(fwd) and fwd[0] < stamps[-1]
    assert q(broken, '{app="frontend"}', limit=0) == ""


def test_since_bounds_the_window(broken):
    now = broken.clock.now
    rows = jsonl(broken, '{app="frontend"}', limit=10000, since_s=60)
    from sre_env.kube.timefmt import parse_iso

    assert rows and all(parse_iso(r["timestamp"][:19] + "Z") >= now - 61 for r in rows)


def test_streams_json_shape(broken):
    body = json.loads(q(broken, '{app=~"profile|frontend"} |= "refused"', output="json", limit=7))
    assert body["status"] == "success" and body["data"]["resultType"] == "streams"
    result = body["data"]["result"]
    assert sum(len(s["values"]) for s in result) == 7
    for s in result:
        assert s["stream"]["app"] in ("profile", "frontend")
        for ts, line in s["values"]:
            assert ts.isdigit() and len(ts) == 19 and "refused" in line


def test_memcached_is_silent_and_mongodb_prints_only_slow_queries(healthy):
    assert lines(healthy, '{app=~"memcached-.*"}', limit=100, since_s=600) == []
    assert lines(healthy, '{app="mongodb-rate"} |= "Slow query"', limit=100, since_s=600) == []


# --------------------------------------------------------------------------- lazy lines


def test_lazy_lines_are_deterministic_and_bounded(broken):
    pod = pod_of(broken, "frontend")
    now = broken.clock.now
    a = container_lines(broken, pod, "hotel-reserv-frontend", now - 300, now)
    b = container_lines(broken, pod, "hotel-reserv-frontend", now - 300, now)
    c = container_lines(broken.fork(), pod, "hotel-reserv-frontend", now - 300, now)
    assert a == b == c
    assert [t for t, _ in a] == sorted(t for t, _ in a)
    materialised = sum(1 for t, _ in pod_runtime_log(broken, pod) if now - 300 <= t <= now)
    assert len(a) <= materialised + (300 // 15 + 1) * MAX_PER_INTERVAL
    sub = container_lines(broken, pod, "hotel-reserv-frontend", now - 120, now - 60)
    assert sub == [(t, ln) for t, ln in a if now - 120 <= t <= now - 60]
    without = container_lines(broken, pod, "hotel-reserv-frontend", now - 300, now, include_requests=False)
    assert len(without) == materialised


def pod_runtime_log(world: World, pod: dict) -> list:
    ctr = world.runtimes[pod["metadata"]["uid"]].containers["hotel-reserv-frontend"]
    return list(ctr.prev_log) + list(ctr.log)


def test_lazy_lines_cost_nothing_until_queried(broken):
    before = broken.snapshot()
    pod = pod_of(broken, "profile")
    entries = container_entries(broken, pod, "hotel-reserv-profile", broken.clock.now - 600, broken.clock.now)
    assert entries and any(e.weight > 1 for e in entries)
    q(broken, '{namespace="hotel-reservation"}', limit=10)
    assert broken.snapshot() == before  # nothing stored, no RNG drawn, no cache written


def test_sampler_matches_world_service_sample(broken):
    sampler = ServiceSampler(broken)
    now = broken.clock.now
    for t in (now, now - 7, now - 600.5, now - 3000, 0.0, -5.0):
        for svc in ("frontend", "mongodb-profile", "nope"):
            assert sampler.sample(NS, svc, t) == service_sample(broken, NS, svc, t)


# --------------------------------------------------------------------------- shell command


def test_logql_command(broken):
    ctx = ShellContext(SimBackend(broken), NS, log_trace_commands(broken))
    r = run_command(ctx, "logql '{app=\"profile\"} |= \"refused\"' --since=5m --limit 3 -o raw")
    assert r.exit_code == 0 and len(r.output.splitlines()) == 3 and "connection refused" in r.output
    r = run_command(ctx, "logql '{app=\"profile\"}' --limit 100 | grep -c TRC")
    assert r.exit_code == 0 and int(r.output) > 0
    assert run_command(ctx, "logql").output == "logql: error: required argument 'query' not provided, try --help\n"
    assert run_command(ctx, "logql --since 5q '{app=\"x\"}'").exit_code == 1
    assert run_command(ctx, "logql --nope '{app=\"x\"}'").output.startswith("logql: error: unknown long flag '--nope'")
    assert run_command(ctx, "logql '{app=\"x\"} |= ' ").exit_code == 1
    assert "usage: logql" in run_command(ctx, "logql --help").output
    assert "profile" in run_command(ctx, "logql labels app").output.split()
    assert run_command(ctx, "logql 'sum(rate({app=\"frontend\"}[1m]))'").output.startswith("{}  ")

