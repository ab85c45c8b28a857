"""Cost of the metrics pipeline: scrape, rule evaluation, steps with and without it, queries, snapshots.

Reported, never asserted (machines are noisy); every figure is a median.

    python benchmarks/bench_telemetry.py
    python benchmarks/bench_telemetry.py --steps 3000 --json out.json

"Without telemetry" replaces the scrape by what the world did before the TSDB
existed (write the observation's recorded series only) and skips rule
evaluation, on the same command mix as benchmarks/bench_env.py.
"""

from __future__ import annotations

import argparse
import json
import pickle
import statistics
import sys
import time
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))

from bench_env import bench_steps  # noqa: E402

from sre_env.apps.hotel_reservation import HOTEL_RESERVATION  # noqa: E402
from sre_env.sim.engine import advance
from sre_env.sim.episodes import healthy_world  # noqa: E402
from sre_env.telemetry.alerting import AlertState  # noqa: E402
from sre_env.telemetry.metrics_store import metrics_of
from sre_env.telemetry.promql import query, query_range  # noqa: E402
from sre_env.telemetry.promql_engine import Evaluator  # noqa: E402

NS = HOTEL_RESERVATION.namespace


def median_ms(fn: Callable[[], object], repeats: int) -> float:
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def bench_scrape(repeats: int) -> dict[str, float]:
    world = healthy_world(HOTEL_RESERVATION)
    metrics = metrics_of(world)

    def scrape() -> None:
        world.clock.now += 15.0
        metrics.scrape(world)

    scrape_ms = median_ms(scrape, repeats)
    # rule evaluation: a full evaluation (fresh state, every rule runs) and the steady state
    # (one evaluation per minute; rules whose inputs did not change are skipped)
    full_ms = median_ms(lambda: AlertState().evaluate(world, force=True), max(repeats // 10, 5))
    state = AlertState()
    state.evaluate(world, force=True)
    times = []
    for _ in range(max(repeats // 4, 10)):
        for _ in range(4):
            scrape()
        t = time.perf_counter()
        state.evaluate(world, force=True)
        times.append(time.perf_counter() - t)
    steady_ms = statistics.median(times) * 1e3
    return {"series": metrics.tsdb.width, "scrape_ms": scrape_ms, "rules_full_ms": full_ms, "rules_steady_ms": steady_ms, "rules_per_scrape_ms": steady_ms / 4}


@contextmanager
def telemetry_off() -> Iterator[None]:
    """The world before the TSDB: recorded series only (no exporters' samples), no rule evaluation."""
    from sre_env.telemetry.export_app import AppExporter
    from sre_env.telemetry.export_host import HostExporters
    from sre_env.telemetry.export_kube import KubeStateMetrics

    saved = (KubeStateMetrics.collect, HostExporters.collect, AppExporter.collect, AlertState.evaluate)
    empty = (np.empty(0, dtype=np.int64), np.empty(0))
    KubeStateMetrics.collect = lambda self, world, tsdb: empty  # type: ignore[method-assign]
    HostExporters.collect = lambda self, world, tsdb, pod_rps: []  # type: ignore[method-assign]
    AppExporter.collect = lambda self, world, app, res, tsdb, jitter: []  # type: ignore[method-assign]
    AlertState.evaluate = lambda self, world, force=False: None  # type: ignore[method-assign]
    try:
        yield
    finally:
        KubeStateMetrics.collect, HostExporters.collect, AppExporter.collect, AlertState.evaluate = saved  # type: ignore[method-assign]


def bench_queries(repeats: int) -> dict[str, float]:
    world = healthy_world(HOTEL_RESERVATION)
    advance(world, 3600)  # a full hour of retention
    db = metrics_of(world).tsdb
    now = world.clock.now
    out: dict[str, float] = {"stored_rows": db.stored_rows, "series": db.width}
    cases = {
        "range 1h/15s sum by (service)(rate(grpc_server_handled_total[1m]))": ("range", "sum by (service) (rate(grpc_server_handled_total[1m]))", 15.0),
        '"range 1h/60s {namespace=hotel-reservation}"': ("range", f'{{namespace="{NS}"}}', 60.0),
        "range 1h/60s histogram_quantile p99 by service": ("range", "histogram_quantile(0.99, sum by (service, le) (rate(grpc_server_handling_seconds_bucket[2m])))", 60.0),
        "instant sum by (service)(rate(grpc_server_handled_total[1m]))": ("instant", "sum by (service) (rate(grpc_server_handled_total[1m]))", 0.0),
        '"instant {namespace=hotel-reservation}"': ("instant", f'{{namespace="{NS}"}}', 0.0),
    }
    for label, (kind, expr, step) in cases.items():
        if kind == "range":
            fn = lambda expr=expr, step=step: query_range(db, expr, now - 3600, now, step, evaluator=Evaluator(db))  # noqa: E731
        else:
            fn = lambda expr=expr: query(db, expr, now, evaluator=Evaluator(db))  # noqa: E731
        out[label] = median_ms(fn, repeats)
        out[label + " +json"] = median_ms(lambda fn=fn: json.dumps(fn().to_json()), max(repeats // 2, 3))
    blob = world.snapshot()
    out["snapshot_kb_1h"] = len(blob) / 1024
    out["snapshot_ms_1h"] = median_ms(world.snapshot, repeats)
    out["restore_ms_1h"] = median_ms(lambda: pickle.loads(blob), repeats)
    fresh = healthy_world(HOTEL_RESERVATION)
    fresh.advance(180)
    blob = fresh.snapshot()
    out["snapshot_kb_18min"] = len(blob) / 1024
    out["restore_ms_18min"] = median_ms(lambda: pickle.loads(blob), repeats)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ids", nargs="*", default=["SREGym/MissingEnvVar-v0", "SREGym/DiskSector-v0"])
    ap.add_argument("--steps", type=int, default=1500)
    ap.add_argument("--repeats", type=int, default=40)
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args(argv)
    report: dict[str, object] = {}
    scrape = bench_scrape(args.repeats * 5)
    report["scrape"] = scrape
    print(f"series: {scrape['series']}")
    print(f"scrape:                    {scrape['scrape_ms']:.3f} ms")
    print(f"rules, full evaluation:    {scrape['rules_full_ms']:.3f} ms")
    print(f"rules, steady (per minute): {scrape['rules_steady_ms']:.3f} ms  (= {scrape['rules_per_scrape_ms']:.3f} ms per scrape)")
    steps = {}
    for env_id in args.ids:
        with_t = bench_steps(env_id, args.steps)
        with telemetry_off():
            without = bench_steps(env_id, args.steps)
        steps[env_id] = {"with_telemetry": with_t, "without": without}
        print(f"{env_id:32} steps/s with telemetry {with_t:8.1f}   without {without:8.1f}   ({(1 / with_t - 1 / without) * 1e3:+.3f} ms/step)")
    report["steps"] = steps
    queries = bench_queries(args.repeats)
    report["queries"] = queries
    for k, v in queries.items():
        print(f"{k:82} {v:10.3f}")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
