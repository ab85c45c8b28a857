"""The TSDB: labelled series on a ring of scrape rows, staleness, selection, compact pickling."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from sre_env.telemetry.tsdb import TSDB, is_stale, parse_key, series_key


def _write(db: TSDB, t: float, samples: dict[str, float]) -> None:
    keys = list(samples)
    db.append(t, [(db.columns(keys), np.array([samples[k] for k in keys], dtype=np.float64))])


def test_series_key_is_canonical_and_round_trips() -> None:
    a = series_key("up", {"job": "x", "instance": "a:1", "empty": ""})
    b = series_key("up", [("instance", "a:1"), ("job", "x")])
    assert a == b
    assert parse_key(a) == {"__name__": "up", "instance": "a:1", "job": "x"}


def test_window_returns_rows_in_time_order_with_nan_for_absent_samples() -> None:
    db = TSDB(capacity=10)
    ka, kb = series_key("a"), series_key("b")
    _write(db, 0.0, {ka: 1.0})
    _write(db, 15.0, {ka: 2.0, kb: 7.0})
    times, block = db.window(db.columns([ka, kb]), -1.0, 15.0)
    assert times.tolist() == [0.0, 15.0]
    assert block[:, 0].tolist() == [1.0, 2.0]
    assert np.isnan(block[0, 1]) and not is_stale(block[:1, 1:]).any() and block[1, 1] == 7.0


def test_a_series_that_disappears_gets_a_stale_marker_once() -> None:
    db = TSDB(capacity=10)
    ka, kb = series_key("a"), series_key("b")
    _write(db, 0.0, {ka: 1.0, kb: 1.0})
    _write(db, 15.0, {ka: 1.0})
    _write(db, 30.0, {ka: 1.0})
    _, block = db.window(db.columns([kb]), -1.0, 30.0)
    assert block[0, 0] == 1.0
    assert is_stale(block[1:2, 0]).all()  # the scrape that missed it
    assert np.isnan(block[2, 0]) and not is_stale(block[2:3, 0]).any()  # afterwards: simply absent


def test_ring_keeps_the_last_capacity_rows_and_columns_grow_in_chunks() -> None:
    db = TSDB(capacity=5)
    keys = [series_key("m", {"i": str(i)}) for i in range(TSDB.COL_CHUNK + 10)]
    for r in range(12):
        _write(db, r * 15.0, {k: float(r) for k in keys[: 5 + r * 30]})
    assert db.width == len(keys) and db.stored_rows == 5
    times, block = db.window(db.columns(keys[:1]), -1e9, 1e9)
    assert times.tolist() == [105.0, 120.0, 135.0, 150.0, 165.0]
    assert block[:, 0].tolist() == [7.0, 8.0, 9.0, 10.0, 11.0]


def test_select_follows_prometheus_matcher_semantics() -> None:
    db = TSDB()
    _write(db, 0.0, {series_key("up", {"job": "api", "pod": "api-1"}): 1, series_key("up", {"job": "db", "pod": "db-1"}): 1, series_key("up", {"job": "web"}): 0, series_key("down", {"job": "api"}): 1})

    def names(*matchers):
        return sorted(db.keys[c].replace("\x1f", " ").replace("\x1d", "=") for c in db.select(tuple(matchers)))

    assert len(names(("__name__", "=", "up"))) == 3
    assert names(("__name__", "=", "up"), ("job", "=~", "a.*")) == ["up job=api pod=api-1"]
    assert names(("__name__", "=", "up"), ("job", "=~", "p")) == []  # regexes are anchored
    assert names(("__name__", "=", "up"), ("job", "!~", "api|db")) == ["up job=web"]
    assert names(("__name__", "=", "up"), ("pod", "=", "")) == ["up job=web"]  # missing label == ""
    assert names(("__name__", "=", "up"), ("pod", "!=", "")) == ["up job=api pod=api-1", "up job=db pod=db-1"]
    assert names(("job", "=", "api")) == ["down job=api", "up job=api pod=api-1"]
    # incremental: a new series that matches a cached selection is found
    _write(db, 15.0, {series_key("up", {"job": "api", "pod": "api-2"}): 1})
    assert names(("__name__", "=", "up"), ("job", "=", "api")) == ["up job=api pod=api-1", "up job=api pod=api-2"]


@pytest.mark.parametrize("rows", [0, 3, 7, 25])
def test_pickle_round_trip_is_bit_exact(rows: int) -> None:
    db = TSDB(capacity=10)
    const, sparse, dense = series_key("const"), series_key("sparse"), series_key("dense")
    for r in range(rows):
        samples = {const: 5.0, dense: float(r) * 1.5}
        if r % 9 != 4:
            samples[sparse] = float(r // 6)
        _write(db, r * 15.0, samples)
    db2 = pickle.loads(pickle.dumps(db))
    assert db2.keys == db.keys and db2.rows == db.rows
    cols = db.columns([const, sparse, dense]) if rows else np.empty(0, dtype=np.int64)
    t1, b1 = db.window(cols, -1e9, 1e9)
    t2, b2 = db2.window(cols, -1e9, 1e9)
    assert np.array_equal(t1, t2)
    assert np.array_equal(b1.view(np.uint64), b2.view(np.uint64))  # NaN and stale markers included
    # the restored database keeps working
    _write(db2, 1e4, {const: 1.0})
    assert db2.latest(const) == 1.0


def test_pickle_stores_constant_series_once() -> None:
    db = TSDB(capacity=240)
    keys = [series_key("k", {"i": str(i)}) for i in range(300)]
    for r in range(200):
        _write(db, r * 15.0, {k: 1.0 for k in keys})
    assert len(pickle.dumps(db)) < 300 * 200 * 8 / 20


def test_last_changed_tracks_value_and_presence_changes() -> None:
    db = TSDB()
    k = series_key("x")
    other = series_key("y")
    _write(db, 0.0, {k: 1.0, other: 0.0})
    _write(db, 15.0, {k: 1.0, other: 0.0})
    _write(db, 30.0, {k: 2.0, other: 0.0})
    _write(db, 45.0, {k: 2.0, other: 0.0})
    col = db.columns([k])
    assert db.last_changed(col) == 2
    _write(db, 60.0, {other: 0.0})
    assert db.last_changed(col) == 4
