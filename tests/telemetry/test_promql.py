"""PromQL against hand-computed values on a small TSDB built here (scrapes every 15 s, epoch 0)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from sre_env.telemetry.promql import query, query_range
from sre_env.telemetry.tsdb import TSDB, series_key

# a counter that resets between t=45 and t=60, a steady counter, pod metadata, a histogram
REQ_P1 = [0, 10, 20, 30, 5, 15, 25]
REQ_P2 = [0, 2, 4, 6, 8, 10, 12]


@pytest.fixture()
def db() -> TSDB:
    db = TSDB(capacity=240, interval_s=15.0)
    k1 = series_key("req_total", {"job": "api", "pod": "p1"})
    k2 = series_key("req_total", {"job": "api", "pod": "p2"})
    i1 = series_key("kube_pod_info", {"pod": "p1", "node": "n1", "namespace": "ns"})
    i2 = series_key("kube_pod_info", {"pod": "p2", "node": "n2", "namespace": "ns"})
    buckets = {"0.1": 10.0, "0.5": 30.0, "1": 40.0, "+Inf": 40.0}
    hk = {le: series_key("lat_seconds_bucket", {"job": "api", "le": le}) for le in buckets}
    for i in range(7):
        samples = {k1: REQ_P1[i], k2: REQ_P2[i], i1: 1.0, i2: 1.0}
        samples.update({hk[le]: c * (i + 1) for le, c in buckets.items()})
        keys = list(samples)
        db.append(i * 15.0, [(db.columns(keys), np.array([samples[k] for k in keys], dtype=np.float64))])
    return db


def vec(db: TSDB, expr: str, t: float = 90.0) -> dict[str, float]:
    """Instant query result as {"k=v,k=v": value} (metric name included as __name__)."""
    res = query(db, expr, t)
    assert res.ok, res.error
    assert res.result_type == "vector"
    return {",".join(f"{k}={v}" for k, v in sorted(s.labels.items())): s.values[0] for s in res.series}


def scalar(db: TSDB, expr: str, t: float = 90.0) -> float:
    res = query(db, expr, t)
    assert res.ok and res.result_type == "scalar", res.error
    return res.scalar[1]


def test_rate_over_a_counter_reset(db: TSDB) -> None:
    # window (30, 90]: samples 30@45, 5@60, 15@75, 25@90; the reset adds 30 -> increase 25 over 45 s.
    # first sample 15 s after the window start (< 1.1 x 15 s): extrapolate to the start; the counter's
    # zero point (45 * 30/25 = 54 s back) is further than that. 25 * 60/45 / 60 s.
    got = vec(db, "rate(req_total[1m])")
    assert got["job=api,pod=p1"] == pytest.approx(25 * (60 / 45) / 60)
    assert got["job=api,pod=p2"] == pytest.approx(6 * (60 / 45) / 60)


def test_increase_extrapolates_to_the_range_boundaries(db: TSDB) -> None:
    # window (0, 90]: 10@15 ... 25@90, increase 15 + 30 (reset) = 45 over 75 s, extrapolated by 15 s
    assert vec(db, "increase(req_total[90s])")["job=api,pod=p1"] == pytest.approx(45 * 90 / 75)
    # the zero point bounds the extrapolation: p2 starts at 2@15 growing 2 per 15 s -> zero at 0 s
    assert vec(db, "increase(req_total{pod='p2'}[90s])")["job=api,pod=p2"] == pytest.approx(12.0)
    # window (40, 100]: 6@45 .. 12@90; both gaps (5 s, 10 s) are under 1.1 x 15 s: extrapolate fully
    assert vec(db, "increase(req_total{pod='p2'}[1m])", t=100.0)["job=api,pod=p2"] == pytest.approx(6 * (45 + 5 + 10) / 45)
    # window (50, 110]: 8@60 .. 12@90; the 20 s gap to the end exceeds 1.1 x 15 s: only half an interval
    assert vec(db, "increase(req_total{pod='p2'}[1m])", t=110.0)["job=api,pod=p2"] == pytest.approx(4 * (30 + 10 + 7.5) / 30)


def test_irate_idelta_and_delta(db: TSDB) -> None:
    assert vec(db, "irate(req_total[1m])")["job=api,pod=p1"] == pytest.approx(10 / 15)
    assert vec(db, "irate(req_total[1m])", t=60.0)["job=api,pod=p1"] == pytest.approx(5 / 15)  # reset: last value / dt
    assert vec(db, "idelta(req_total[1m])", t=60.0)["job=api,pod=p1"] == pytest.approx(-25.0)
    assert vec(db, "delta(req_total{pod='p2'}[1m])")["job=api,pod=p2"] == pytest.approx(6 * 60 / 45)


def test_histogram_quantile_on_known_buckets(db: TSDB) -> None:
    # cumulative 10 <= 0.1, 30 <= 0.5, 40 <= 1 (x7 at t=90): rank 0.5*280 = 140 lies in (0.1, 0.5]
    assert vec(db, "histogram_quantile(0.5, lat_seconds_bucket)") == {"job=api": pytest.approx(0.1 + 0.4 * (140 - 70) / 140)}
    assert vec(db, "histogram_quantile(0.99, lat_seconds_bucket)")["job=api"] == pytest.approx(0.5 + 0.5 * (277.2 - 210) / 70)
    # a rank in the +Inf bucket answers the last finite bound
    assert vec(db, 'histogram_quantile(0.9, lat_seconds_bucket{le=~"0.1|\\\\+Inf"})')["job=api"] == pytest.approx(0.1)
    assert vec(db, "histogram_quantile(0.5, rate(lat_seconds_bucket[1m]))")["job=api"] == pytest.approx(0.3)


def test_aggregations_by_and_without(db: TSDB) -> None:
    assert vec(db, "sum by (job) (req_total)") == {"job=api": 37.0}
    assert vec(db, "sum without (pod) (req_total)") == {"job=api": 37.0}
    assert vec(db, "sum(req_total)") == {"": 37.0}
    assert vec(db, "count by (node) (kube_pod_info)") == {"node=n1": 1.0, "node=n2": 1.0}
    assert vec(db, "avg(req_total)") == {"": 18.5}
    assert vec(db, "max(req_total)") == {"": 25.0}
    assert vec(db, "min by (pod) (req_total)") == {"pod=p1": 25.0, "pod=p2": 12.0}
    assert vec(db, "stddev(req_total)") == {"": pytest.approx(6.5)}
    assert vec(db, "quantile(0.5, req_total)") == {"": pytest.approx(18.5)}
    assert vec(db, 'count_values("v", kube_pod_info)') == {"v=1": 2.0}


def test_topk_bottomk_and_sort_order(db: TSDB) -> None:
    res = query(db, "topk(1, req_total)", 90.0)
    assert [s.labels["pod"] for s in res.series] == ["p1"]
    res = query(db, "bottomk(2, req_total)", 90.0)
    assert [s.values[0] for s in res.series] == [12.0, 25.0]
    res = query(db, "sort_desc(req_total)", 90.0)
    assert [s.values[0] for s in res.series] == [25.0, 12.0]


def test_group_left_join_copies_labels_from_the_one_side(db: TSDB) -> None:
    got = vec(db, "req_total * on (pod) group_left (node) kube_pod_info")
    assert got == {"job=api,node=n1,pod=p1": 25.0, "job=api,node=n2,pod=p2": 12.0}
    got = vec(db, "kube_pod_info * on (pod) group_right (node) req_total")
    assert got == {"job=api,node=n1,pod=p1": 25.0, "job=api,node=n2,pod=p2": 12.0}
    # without group_left the label sets differ (job/namespace): nothing matches
    assert vec(db, "req_total + kube_pod_info") == {}
    assert vec(db, "req_total + on (pod) kube_pod_info") == {"pod=p1": 26.0, "pod=p2": 13.0}


def test_comparisons_filter_or_return_bool(db: TSDB) -> None:
    assert vec(db, "req_total > 20") == {"__name__=req_total,job=api,pod=p1": 25.0}
    assert vec(db, "req_total > bool 20") == {"job=api,pod=p1": 1.0, "job=api,pod=p2": 0.0}
    assert vec(db, "20 < req_total") == {"__name__=req_total,job=api,pod=p1": 25.0}
    assert scalar(db, "2 > bool 1") == 1.0
    assert vec(db, "req_total > on (pod) group_left kube_pod_info * 20") == {"__name__=req_total,job=api,pod=p1": 25.0}


def test_set_operators(db: TSDB) -> None:
    assert set(vec(db, 'req_total and on (pod) kube_pod_info{node="n1"}')) == {"__name__=req_total,job=api,pod=p1"}
    assert set(vec(db, 'req_total unless on (pod) kube_pod_info{node="n1"}')) == {"__name__=req_total,job=api,pod=p2"}
    assert vec(db, "absent(nothing) or vector(3)") == {"": 1.0}
    assert len(vec(db, "req_total or kube_pod_info")) == 4


def test_absent_and_label_functions(db: TSDB) -> None:
    assert vec(db, 'absent(nonexistent{job="x", env=~"p.*"})') == {"job=x": 1.0}
    assert vec(db, "absent(req_total)") == {}
    assert vec(db, 'absent_over_time(req_total{pod="p9"}[5m])') == {"pod=p9": 1.0}
    got = vec(db, 'label_replace(req_total, "short", "$1", "pod", "p(.*)")')
    assert set(got) == {"__name__=req_total,job=api,pod=p1,short=1", "__name__=req_total,job=api,pod=p2,short=2"}
    assert set(vec(db, 'label_replace(req_total, "short", "$1", "pod", "nomatch(.*)")')) == {"__name__=req_total,job=api,pod=p1", "__name__=req_total,job=api,pod=p2"}
    got = vec(db, 'label_join(kube_pod_info, "where", "/", "node", "pod")')
    assert {k.split("where=")[1] for k in got} == {"n1/p1", "n2/p2"}


def test_offset_at_and_lookback(db: TSDB) -> None:
    assert vec(db, "req_total offset 30s") == {"__name__=req_total,job=api,pod=p1": 5.0, "__name__=req_total,job=api,pod=p2": 8.0}
    assert vec(db, "req_total @ 45")["__name__=req_total,job=api,pod=p1"] == 30.0
    assert vec(db, "req_total @ start()", t=60.0)["__name__=req_total,job=api,pod=p1"] == 5.0
    # the last sample is at 90: still returned 5 minutes later (left-open lookback), not after
    assert len(vec(db, "req_total", t=389.0)) == 2
    assert vec(db, "req_total", t=390.0) == {}


def test_staleness_ends_a_series_at_once() -> None:
    db = TSDB()
    a, b = series_key("up", {"pod": "a"}), series_key("up", {"pod": "b"})
    db.append(0.0, [(db.columns([a, b]), np.array([1.0, 1.0]))])
    db.append(15.0, [(db.columns([a]), np.array([1.0]))])
    assert set(vec(db, "up", t=10.0)) == {"__name__=up,pod=a", "__name__=up,pod=b"}
    assert set(vec(db, "up", t=20.0)) == {"__name__=up,pod=a"}
    assert vec(db, "count_over_time(up[1m])", t=20.0) == {"pod=a": 2.0, "pod=b": 1.0}


def test_over_time_functions_and_math(db: TSDB) -> None:
    assert vec(db, "max_over_time(req_total{pod='p1'}[1m])") == {"job=api,pod=p1": 30.0}
    assert vec(db, "min_over_time(req_total{pod='p1'}[1m])") == {"job=api,pod=p1": 5.0}
    assert vec(db, "avg_over_time(req_total{pod='p2'}[1m])") == {"job=api,pod=p2": 9.0}
    assert vec(db, "sum_over_time(req_total{pod='p2'}[1m])") == {"job=api,pod=p2": 36.0}
    assert vec(db, "last_over_time(req_total{pod='p2'}[1m])") == {"__name__=req_total,job=api,pod=p2": 12.0}
    assert vec(db, "quantile_over_time(0.5, req_total{pod='p2'}[1m])") == {"job=api,pod=p2": 9.0}
    assert vec(db, "resets(req_total[5m])") == {"job=api,pod=p1": 1.0, "job=api,pod=p2": 0.0}
    assert vec(db, "changes(req_total{pod='p2'}[1m])") == {"job=api,pod=p2": 3.0}
    assert vec(db, "deriv(req_total{pod='p2'}[1m])") == {"job=api,pod=p2": pytest.approx(2 / 15)}
    assert vec(db, "predict_linear(req_total{pod='p2'}[1m], 60)") == {"job=api,pod=p2": pytest.approx(20.0)}
    assert vec(db, "clamp_max(req_total, 20)") == {"job=api,pod=p1": 20.0, "job=api,pod=p2": 12.0}
    assert vec(db, "clamp(req_total, 13, 20)") == {"job=api,pod=p1": 20.0, "job=api,pod=p2": 13.0}
    assert vec(db, "round(req_total / 7)") == {"job=api,pod=p1": 4.0, "job=api,pod=p2": 2.0}
    assert vec(db, "abs(-req_total{pod='p2'})") == {"job=api,pod=p2": 12.0}
    assert vec(db, "max_over_time(rate(req_total{pod='p2'}[30s])[1m:15s])")["job=api,pod=p2"] == pytest.approx(2 / 15)
    assert scalar(db, "scalar(req_total{pod='p2'})") == 12.0
    assert scalar(db, "time()") == 90.0
    assert vec(db, "timestamp(req_total{pod='p2'})", t=100.0) == {"job=api,pod=p2": 90.0}


def test_range_query_and_its_json(db: TSDB) -> None:
    res = query_range(db, "rate(req_total{pod='p2'}[1m])", 60.0, 90.0, 15.0)
    assert res.ok and res.result_type == "matrix"
    (s,) = res.series
    assert s.times == [60.0, 75.0, 90.0]
    assert s.values == pytest.approx([6 * (60 / 45) / 60] * 3)
    body = res.to_json()
    assert body["status"] == "success" and body["data"]["resultType"] == "matrix"
    assert body["data"]["result"][0]["metric"] == {"job": "api", "pod": "p2"}
    t0, v0 = body["data"]["result"][0]["values"][0]
    assert t0 == 60 and isinstance(v0, str) and float(v0) == pytest.approx(8 / 60)
    json.dumps(body)


def test_instant_results_as_api_json_and_promtool_text(db: TSDB) -> None:
    body = query(db, "req_total{pod='p2'}", 90.0).to_json()
    assert body == {"status": "success", "data": {"resultType": "vector", "result": [{"metric": {"__name__": "req_total", "job": "api", "pod": "p2"}, "value": [90, "12"]}]}}
    assert query(db, "1e-5", 90.0).to_json()["data"] == {"resultType": "scalar", "result": [90, "0.00001"]}
    assert query(db, '"hi"', 90.0).to_json()["data"] == {"resultType": "string", "result": [90, "hi"]}
    assert query(db, "req_total{pod='p2'}", 90.0).to_table() == 'req_total{job="api", pod="p2"} => 12 @[90]\n'
    matrix = query(db, "req_total{pod='p2'}[30s]", 90.0)
    assert matrix.result_type == "matrix" and matrix.series[0].values == [10.0, 12.0]


@pytest.mark.parametrize(
    "expr, error_type, fragment",
    [
        ("sum(rate(x[5m])", "bad_data", "parse error: unclosed left parenthesis"),
        ("foo{", "bad_data", "parse error:"),
        ("rate(x)", "bad_data", "expected type matrix"),
        ("", "bad_data", "parse error:"),
        ("nosuchfunc(x)", "bad_data", "parse error:"),
        ("req_total * on () kube_pod_info", "execution", "many-to-many matching not allowed"),
        ("req_total * on (job) group_left kube_pod_info", "execution", "many-to-many matching not allowed"),
        ('label_replace(req_total, "pod", "x", "job", "api")', "execution", "vector cannot contain metrics with the same labelset"),
    ],
)
def test_errors_look_like_prometheus_and_never_raise(db: TSDB, expr: str, error_type: str, fragment: str) -> None:
    res = query(db, expr, 90.0)
    assert not res.ok and res.error_type == error_type and fragment in res.error
    assert res.to_json() == {"status": "error", "errorType": error_type, "error": res.error}
    assert res.to_table().startswith(f"{error_type}: ")


def test_range_query_argument_errors(db: TSDB) -> None:
    assert "zero or negative query resolution step" in query_range(db, "up", 0, 10, 0).error
    assert "end timestamp must not be before start time" in query_range(db, "up", 10, 0, 1).error
    assert "exceeded maximum resolution of 11,000 points" in query_range(db, "up", 0, 1e6, 1).error
    assert 'invalid expression type "range vector"' in query_range(db, "up[5m]", 0, 90, 15).error


@pytest.mark.parametrize("expr", ["((", "}", "up[", "up offset", "sum by (", "@", "1 +* 2", "\x00", "up{a=~'('}", "topk(x, up)", 'count_values(1, up)', "histogram_quantile(1)", "a" * 5000])
def test_garbage_never_raises(db: TSDB, expr: str) -> None:
    res = query(db, expr, 90.0)
    assert not res.ok or res.result_type in ("vector", "scalar", "matrix", "string")


def test_queries_nested_past_the_limit_are_refused_before_parsing() -> None:
    from sre_env.telemetry.promql_ast import MAX_NESTING, PromQLError, compile_expr

    for q in ("(" * 5000 + "up" + ")" * 5000, "-" * 5000 + "up", "up+" * 3000 + "up"):
        with pytest.raises(PromQLError, match=f"query too deeply nested: more than {MAX_NESTING} operators"):
            compile_expr(q)
    compile_expr("sum(rate(http_requests_total{path=~\"((a|b)).*\"}[5m])) by (service) / 2")
