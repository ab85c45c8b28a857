"""Alert rules: silent on the healthy cluster, firing where users expect in each scenario; ``for:`` state;
snapshot/restore and determinism of the whole metrics pipeline; the promql/alerts shell commands."""

from __future__ import annotations

import json
import pickle
from types import SimpleNamespace

import gymnasium as gym
import numpy as np
import pytest

import sre_env  # noqa: F401  (registers the ids)
from sre_env.apps.hotel_reservation import HOTEL_RESERVATION
from sre_env.shell import ShellContext, run_command
from sre_env.sim.engine import advance
from sre_env.sim.episodes import healthy_world
from sre_env.telemetry.alerting import (
    RULES,
    AlertState,
    Rule,
    alerts_of,
    render_template,
)
from sre_env.telemetry.metrics_commands import metrics_commands
from sre_env.telemetry.metrics_store import metrics_of
from sre_env.telemetry.promql import query, query_range
from sre_env.telemetry.tsdb import TSDB, series_key

NS = HOTEL_RESERVATION.namespace


def _developed(env_id: str, seed: int, minutes: int = 4):
    env = gym.make(env_id)
    env.reset(seed=seed)
    for _ in range(minutes):
        env.step("sleep 60")
    core = env.unwrapped
    return core, alerts_of(core.backend.world).alerts()


def _names(alerts, state: str = "firing") -> set[str]:
    return {a.name for a in alerts if a.state == state}


def test_every_rule_compiles() -> None:
    world = healthy_world(HOTEL_RESERVATION)
    for rule in RULES:
        res = query(metrics_of(world).tsdb, rule.expr)
        assert res.ok, (rule.name, res.error)


def test_healthy_baseline_is_silent() -> None:
    world = healthy_world(HOTEL_RESERVATION)
    advance(world, 1200)
    assert alerts_of(world).alerts() == []
    assert alerts_of(world).errors == {}


@pytest.mark.parametrize("seed", [0, 2])
def test_missing_env_var_fires_crash_looping_and_error_rate(seed: int) -> None:
    core, alerts = _developed("SREGym/MissingEnvVar-v0", seed)
    firing = _names(alerts)
    assert "KubePodCrashLooping" in firing
    assert firing & {"LoadgenHighErrorRate", "ServiceHighErrorRate"}
    service = core.scenario.variant["service"]
    crash = next(a for a in alerts if a.name == "KubePodCrashLooping")
    assert dict(crash.labels)["pod"].startswith(service + "-") and ("namespace", NS) in crash.labels


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_target_port_misconfig_fires_error_rate_with_healthy_pods(seed: int) -> None:
    _, alerts = _developed("SREGym/TargetPortMisconfig-v0", seed)
    firing = _names(alerts)
    assert firing & {"LoadgenHighErrorRate", "ServiceHighErrorRate"}
    assert not {a.name for a in alerts} & {"KubePodCrashLooping", "KubePodNotReady", "KubeContainerWaiting", "KubeDeploymentReplicasMismatch", "TargetDown"}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_disk_sector_fires_on_the_database(seed: int) -> None:
    core, alerts = _developed("SREGym/DiskSector-v0", seed)
    db = core.scenario.variant["database"]
    firing = [a for a in alerts if a.firing]
    assert any(a.name == "KubePodCrashLooping" and dict(a.labels)["pod"].startswith(db + "-") for a in firing)
    assert any(a.name in ("ServiceHighErrorRate", "LoadgenHighErrorRate") for a in alerts)
    assert not any(a.name.startswith("Node") and a.name != "NodeDiskIOSaturation" for a in alerts)


class _FakeWorld:
    """A clock and a TSDB: what an AlertState evaluates over."""

    def __init__(self) -> None:
        self.clock = SimpleNamespace(now=0.0)
        self.tsdb = TSDB()

    def scrape(self, value: float | None) -> None:
        db = self.tsdb
        parts = []
        if value is not None:
            parts.append((db.columns([series_key("errors", {"namespace": "ns", "pod": "p"})]), np.array([value])))
        db.append(self.clock.now, parts)


def test_for_duration_pending_firing_resolved() -> None:
    world = _FakeWorld()
    state = AlertState((Rule("TooManyErrors", "errors > 5", 30.0, "critical", "{{ $labels.pod }} has {{ $value }} errors"),), interval_s=15.0)
    seen = []
    for t, value in [(0, 1), (15, 9), (30, 9), (45, 9), (60, 1)]:
        world.clock.now = float(t)
        world.scrape(float(value))
        state.evaluate(world.tsdb, world.clock.now)
        seen.append([(a.state, a.active_since) for a in state.alerts()])
    assert seen == [[], [("pending", 15.0)], [("pending", 15.0)], [("firing", 15.0)], []]
    world.clock.now = 75.0
    world.scrape(9.0)
    state.evaluate(world.tsdb, world.clock.now)
    (alert,) = state.alerts()
    assert alert.line() == "[pending] TooManyErrors severity=critical namespace=ns pod=p - p has 9 errors"
    assert state.firing() == []


def test_rules_are_evaluated_on_the_evaluation_interval() -> None:
    world = _FakeWorld()
    state = AlertState((Rule("High", "errors > 5", 0.0, "warning", "x"),), interval_s=60.0)
    for t in range(0, 120, 15):
        world.clock.now = float(t)
        world.scrape(9.0 if t >= 15 else 0.0)
        state.evaluate(world.tsdb, world.clock.now)
        assert bool(state.firing()) == (t >= 60), t


def test_templates() -> None:
    labels = {"namespace": "ns", "pod": "p"}
    assert render_template("{{ $labels.namespace }}/{{ $labels.pod }}", labels, 1) == "ns/p"
    assert render_template("{{ $value | humanizePercentage }}", labels, 0.1234) == "12.34%"
    assert render_template('{{ printf "%.2f" $value }}s', labels, 1.23456) == "1.23s"
    assert render_template("{{ $value | humanize }}", labels, 1234567) == "1.235M"


def test_snapshot_restore_keeps_tsdb_and_alerts_identical() -> None:
    core, _ = _developed("SREGym/MissingEnvVar-v0", 0, minutes=2)
    world = core.backend.world
    copy = pickle.loads(world.snapshot())
    a, b = metrics_of(world).tsdb, metrics_of(copy).tsdb
    assert a.keys == b.keys and a.rows == b.rows
    ta, va = a.window(np.arange(a.width), -1e12, 1e12)
    tb, vb = b.window(np.arange(b.width), -1e12, 1e12)
    assert np.array_equal(ta, tb) and np.array_equal(va.view(np.uint64), vb.view(np.uint64))
    assert [x.line() for x in alerts_of(copy).alerts()] == [x.line() for x in alerts_of(world).alerts()]
    # both continue identically
    advance(world, 120)
    advance(copy, 120)
    expr = 'sum by (service) (rate(grpc_server_handled_total[1m])) or sum by (service) (rate(http_requests_total[1m]))'
    assert query(metrics_of(world).tsdb, expr).to_json() == query(metrics_of(copy).tsdb, expr).to_json()
    assert [x.line() for x in alerts_of(copy).alerts()] == [x.line() for x in alerts_of(world).alerts()]


def test_same_seed_same_query_results() -> None:
    out = []
    for _ in range(2):
        core, alerts = _developed("SREGym/DiskSector-v0", 1, minutes=2)
        db = metrics_of(core.backend.world).tsdb
        now = core.backend.world.clock.now
        out.append(
            (
                json.dumps(query_range(db, '{namespace="hotel-reservation"}', now - 600, now, 60).to_json(), sort_keys=True),
                json.dumps(query(db, "sum by (node) (rate(node_disk_io_time_seconds_total[5m]))").to_json(), sort_keys=True),
                [a.line() for a in alerts],
            )
        )
    assert out[0] == out[1]


def test_shell_commands() -> None:
    env = gym.make("SREGym/MissingEnvVar-v0")
    env.reset(seed=0)
    ctx = ShellContext(backend=env.unwrapped.backend, namespace="default", extra_commands=metrics_commands(env.unwrapped.backend.world))
    r = run_command(ctx, "promql --help")
    assert r.exit_code == 0 and "Usage: promql" in r.output
    r = run_command(ctx, """promql 'sum by (status) (rate(loadgen_requests_total[1m]))'""")
    assert r.exit_code == 0 and '{status="500"} => ' in r.output
    r = run_command(ctx, """promql 'up == 0' -o json""")
    body = json.loads(r.output)
    assert r.exit_code == 0 and body["status"] == "success" and body["data"]["result"][0]["metric"]["__name__"] == "up"
    r = run_command(ctx, """promql 'sum(rate(loadgen_requests_total[1m]))' --range 10m --step 1m -o json""")
    assert json.loads(r.output)["data"]["resultType"] == "matrix" and len(json.loads(r.output)["data"]["result"][0]["values"]) == 11
    r = run_command(ctx, """promql 'sum(rate(x[5m])'""")
    assert r.exit_code == 1 and r.output == "bad_data: parse error: unclosed left parenthesis\n"
    r = run_command(ctx, """promql 'sum(rate(x[5m])' -o json""")
    assert r.exit_code == 1 and json.loads(r.output) == {"status": "error", "errorType": "bad_data", "error": "parse error: unclosed left parenthesis"}
    r = run_command(ctx, "promql 'time()' --time 2026-03-02T09:10:00Z")
    assert r.output == "scalar: 1772442600 @[1772442600]\n"
    r = run_command(ctx, "alerts")
    assert r.exit_code == 0 and "[firing] KubePodCrashLooping" in r.output
    assert run_command(ctx, "alerts | grep -c firing").output.strip().isdigit()
    body = json.loads(run_command(ctx, "alerts --all -o json").output)
    assert all(a["state"] in ("pending", "firing") for a in body["data"]["alerts"])
    for bad in ["promql", "promql --bogus", "promql up --time never", "promql up --range forever", "alerts extra", "promql 'up' -o yaml"]:
        r = run_command(ctx, bad)
        assert r.exit_code != 0 and r.output
