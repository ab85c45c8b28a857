"""The evaluator's caches across restored worlds and growing TSDBs: faster, never different.

A restored or forked world gets a new TSDB and a new Evaluator; label work is
shared through process-wide interned label dicts, and a selector's columns are
handed out as the same array while no series is added. None of it may change
an answer.
"""

from __future__ import annotations

import pickle

import numpy as np

from sre_env.apps.hotel_reservation import HOTEL_RESERVATION
from sre_env.sim.engine import advance
from sre_env.sim.episodes import healthy_world
from sre_env.telemetry.alerting import RULES, AlertState, alerts_of
from sre_env.telemetry.metrics_store import metrics_of
from sre_env.telemetry.promql_ast import compile_expr
from sre_env.telemetry.promql_engine import Context, Evaluator, interned_labels
from sre_env.telemetry.promql_values import Vector
from sre_env.telemetry.tsdb import TSDB, series_key

#: broad queries (a healthy cluster fires no rule, so the rules alone would answer nothing)
BROAD = (
    "sum by (namespace, service) (rate(grpc_server_handled_total[1m]))",
    "histogram_quantile(0.99, sum by (namespace, service, le) (rate(grpc_server_handling_seconds_bucket[2m])))",
    "kube_deployment_spec_replicas >= kube_deployment_status_replicas_available",
    'max by (namespace, pod) (kube_pod_status_phase{phase="Running"}) * on (namespace, pod) group_left (owner_kind) kube_pod_owner',
    "node_filesystem_avail_bytes / node_filesystem_size_bytes * 100",
    "changes(kube_deployment_status_replicas_updated[3m]) == 0",
)


def _answers(ev: Evaluator, now: float) -> list:
    """Every rule's, precondition's and broad query's result as (expression, labels, value bits)."""
    exprs = [e for rule in RULES for e in (rule.expr, rule.precondition) if e] + list(BROAD)
    out = []
    for expr in exprs:
        val = ev.evaluate(compile_expr(expr), Context(np.array([now]), now, now))
        if isinstance(val, Vector):
            for i in np.flatnonzero(val.p[0]):
                out.append((expr, sorted(val.labels[i].items()), float(val.v[0, i]).hex()))
    return out


def test_a_restored_world_shares_label_dicts_and_answers_the_same() -> None:
    world = healthy_world(HOTEL_RESERVATION)
    advance(world, 120.0)
    now = world.clock.now
    parent = Evaluator(metrics_of(world).tsdb)
    expected = _answers(parent, now)
    assert expected, "the healthy cluster has series the rules select"
    fork = pickle.loads(pickle.dumps(world))
    tsdb, fork_tsdb = metrics_of(world).tsdb, metrics_of(fork).tsdb
    assert fork_tsdb is not tsdb
    # the same series key -> the very same label dict in both worlds (what lets memos carry over)
    for col in range(0, tsdb.width, max(tsdb.width // 50, 1)):
        assert interned_labels(fork_tsdb, col) is interned_labels(tsdb, col)
        assert interned_labels(tsdb, col) == tsdb.labels(col)
    assert _answers(Evaluator(fork_tsdb), now) == expected
    # and a cold evaluator (nothing shared yet for it) agrees with both
    assert _answers(Evaluator(fork_tsdb), now) == _answers(parent, now)


def test_a_selection_keeps_its_array_until_it_gains_a_series() -> None:
    db = TSDB(capacity=20, interval_s=15.0)
    a = series_key("up", {"job": "a"})
    db.append(0.0, [(db.columns([a]), np.array([1.0]))])
    ev = Evaluator(db)
    sel = compile_expr('up{job=~"a|b"}')
    first = ev.select(sel)
    # an unrelated series: a new TSDB selection array, but the same columns -> the same object
    other = series_key("other", {"job": "x"})
    db.append(15.0, [(db.columns([a, other]), np.array([1.0, 2.0]))])
    assert ev.select(sel) is first
    # a series the selector matches: a new answer
    b = series_key("up", {"job": "b"})
    db.append(30.0, [(db.columns([a, other, b]), np.array([1.0, 2.0, 0.0]))])
    grown = ev.select(sel)
    assert grown is not first and list(grown) == [0, 2]
    res = ev.evaluate(compile_expr('up{job=~"a|b"} == 0'), Context(np.array([30.0]), 30.0, 30.0))
    assert [lab["job"] for lab in res.labels] == ["b"]


def test_alert_state_after_restore_matches_an_uninterrupted_one() -> None:
    world = healthy_world(HOTEL_RESERVATION)
    fork = pickle.loads(pickle.dumps(world))
    advance(world, 300.0)
    advance(fork, 300.0)
    assert isinstance(alerts_of(fork), AlertState)
    assert alerts_of(fork).active == alerts_of(world).active
