"""The hotel-reservation spec is consistent; every log dialect renders every event."""

from __future__ import annotations

import json

import pytest

from sre_env.apps.hotel_reservation import HOTEL_RESERVATION as APP
from sre_env.sim.logs import render as logs

NAMES = {c.name for c in APP.components}


def test_component_names_unique_and_expected():
    assert len(NAMES) == len(APP.components)
    for n in (
        "frontend", "search", "geo", "rate", "profile", "recommendation", "reservation", "user",
        "memcached-rate", "memcached-profile", "memcached-reserve",
        "mongodb-geo", "mongodb-rate", "mongodb-profile", "mongodb-recommendation",
        "mongodb-reservation", "mongodb-user", "consul", "jaeger",
    ):
        assert n in NAMES
    assert APP.namespace == "hotel-reservation"


@pytest.mark.parametrize("comp", APP.components, ids=lambda c: c.name)
def test_component_is_consistent(comp):
    assert comp.container_ports, comp.name
    cports = {p for _, p, _ in comp.container_ports}
    assert comp.listen_port in cports
    assert comp.service_ports
    for _, port, target, proto in comp.service_ports:
        assert target in cports
        assert proto in ("TCP", "UDP")
    env_names = {k for k, _ in comp.env}
    assert set(comp.required_env) <= env_names
    assert ("io.kompose.service", comp.name) in comp.labels
    assert comp.log_format in logs.DIALECTS
    for dep in comp.dependencies:
        assert dep.service in NAMES, (comp.name, dep.service)
        callee = APP.component(dep.service)
        assert dep.port in {p for _, p, _, _ in callee.service_ports}, (comp.name, dep)
        if dep.address_env is not None:
            assert dep.address_env in env_names
            assert dict(comp.env)[dep.address_env] == f"{dep.service}:{dep.port}"
    if comp.role == "database":
        assert comp.volume_claim == f"{comp.name.removeprefix('mongodb-')}-pvc"
    if comp.image.startswith("yinfangchen/"):
        assert comp.required_env, comp.name
        assert comp.command == (comp.name,)
        assert comp.container == f"hotel-reserv-{comp.name}"


def test_requests():
    assert abs(sum(r.weight for r in APP.requests) - 1.0) <= 0.01
    assert {(r.method, r.path) for r in APP.requests} == {
        ("GET", "/hotels"), ("GET", "/recommendations"), ("POST", "/user"), ("POST", "/reservation"),
    }
    for r in APP.requests:
        reached = {APP.entrypoint}
        for call in r.calls:
            assert call.caller in NAMES and call.callee in NAMES
            assert call.caller in reached, (r.name, call)  # calls are listed top-down
            reached.add(call.callee)
            assert 0.0 < call.miss_ratio <= 1.0 and call.times > 0
            deps = {d.service for d in APP.component(call.caller).dependencies}
            assert call.callee in deps, (r.name, call)
    assert APP.entry_port in {p for _, p, _, _ in APP.component(APP.entrypoint).service_ports}


def test_healthy_load_is_well_below_capacity():
    load = {n: 0.0 for n in NAMES}
    load[APP.entrypoint] = APP.rps
    for r in APP.requests:
        for call in r.calls:
            load[call.callee] += APP.rps * r.weight * call.times * call.miss_ratio
    for c in APP.components:
        assert load[c.name] < 0.5 * c.capacity_rps * c.replicas, (c.name, load[c.name])


DIALECTS = sorted(logs.DIALECTS)
EVENTS = sorted(logs.EVENTS) + ["no-such-event"]
FIELDS = {
    "service": "rate", "port": 8084, "method": "GET", "path": "/hotels?inDate=2015-04-09", "status": 200,
    "latency_ms": 3.5, "op": "find", "target": "mongodb-rate:27017", "error": "connection refused",
    "var": "RATE_MONGO_ADDRESS", "host": "mongodb-rate-7d9f8c6b5-x2k9p", "db": "rate-db", "coll": "inventory",
}
ODD = {"service": 'we"ird{x}', "path": "/a\\b\n{c}", "target": "h{}:1", "status": "x", "latency_ms": None}


@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("event", EVENTS)
def test_render_every_event(dialect, event):
    for variant in (0, 1, 7, 12345, -3):
        for fields in (FIELDS, {}, ODD):
            line = logs.render(dialect, event, 5.25, fields, variant)
            assert isinstance(line, str) and line.strip()
            assert "\n" not in line
            assert line == logs.render(dialect, event, 5.25, dict(fields), variant)
            if dialect == "mongodb":
                obj = json.loads(line)
                assert obj["t"]["$date"] == "2026-03-02T09:00:05.250+00:00"
            if dialect == "jaeger":
                json.loads(line)


@pytest.mark.parametrize("target,kind", [
    ("mongodb-geo:27017", "connection refused"), ("memcached-rate:11211", "i/o timeout"),
    ("consul:8500", "no such host"), ("rate:8084", "connection refused"), ("jaeger:6831", "i/o timeout"),
])
def test_go_dependency_errors(target, kind):
    line = logs.render("go-service", "dependency_error", 0, {"service": "rate", "target": target, "error": kind}, 0)
    assert line.startswith("2026-03-02T09:00:00Z ")
    if "mongodb" not in target:  # Go prints the resolved IP, or the name when resolution fails
        host, port = target.split(":")
        assert (host in line) if kind == "no such host" else (f":{port}:" in line or f":{port} " in line)


def test_real_formats():
    assert logs.render("go-service", "startup", 5, {"service": "geo"}, 0) == (
        "2026-03-02T09:00:05Z INF cmd/geo/main.go:23 > Reading config..."
    )
    line = logs.render("mongodb", "connection_accepted", 1.5, {}, 3)
    assert line.startswith('{"t":{"$date":"2026-03-02T09:00:01.500+00:00"},"s":"I",  "c":"NETWORK",  "id":22943,   "ctx":"listener"')
    eio = json.loads(logs.render("mongodb", "disk_read_error", 60, {}, 4))
    assert eio["s"] == "E" and eio["attr"]["error"] == 5
    assert "failed to read 4096 bytes at offset" in eio["attr"]["message"]
    assert eio["attr"]["message"].endswith("Input/output error")
    fa = json.loads(logs.render("mongodb", "fatal_assertion", 60, {}, 4))
    assert fa["s"] == "F" and fa["msg"] == "Fatal assertion"
    fatal = logs.render("go-service", "missing_env", 0, {"service": "geo", "var": "GEO_MONGO_ADDRESS"}, 0)
    assert " FTL " in fatal and "GEO_MONGO_ADDRESS" in fatal


@pytest.mark.parametrize("dialect", DIALECTS)
def test_startup_lines(dialect):
    for comp in APP.components:
        if comp.log_format != dialect:
            continue
        fields = {"service": comp.name, "port": comp.listen_port, "host": f"{comp.name}-0"}
        lines = logs.component_startup_lines(dialect, 10.0, fields, 1)
        assert lines == logs.component_startup_lines(dialect, 10.0, fields, 1)
        if dialect == "memcached":
            assert lines == []
            assert logs.component_startup_lines(dialect, 10.0, {"verbose": True}, 1)
            continue
        assert lines and all(isinstance(s, str) and "\n" not in s for s in lines)
        if dialect == "mongodb":
            for s in lines:
                json.loads(s)
        if dialect in ("go-service", "frontend"):
            assert any(f"cmd/{comp.name}/main.go" in s for s in lines)


