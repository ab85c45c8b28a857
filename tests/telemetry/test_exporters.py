"""Exporters: real metric names and labels on a healthy cluster, counter semantics, the observation series."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from sre_env.apps.hotel_reservation import HOTEL_RESERVATION
from sre_env.sim.backend import SimBackend
from sre_env.sim.engine import advance
from sre_env.sim.episodes import healthy_world
from sre_env.sim.kernel.pods import StartOutcome
from sre_env.sim.runtime.cpu import pod_cpu_millicores
from sre_env.telemetry.exporters import observation_series
from sre_env.telemetry.metrics_store import (
    client_sample,
    metrics_of,
    service_sample,
    window_and_mask,
)
from sre_env.telemetry.promql import query, query_range
from sre_env.telemetry.tsdb import parse_key

NS = HOTEL_RESERVATION.namespace


@pytest.fixture(scope="module")
def world():
    w = healthy_world(HOTEL_RESERVATION)
    advance(w, 300)
    return w


def _labels(world, metric: str) -> list[dict[str, str]]:
    return [parse_key(k) for k in metrics_of(world).tsdb.keys if k.split("\x1f", 1)[0] == metric]


def _names(world) -> set[str]:
    return set(metrics_of(world).tsdb.metric_names())


def test_kube_state_metrics_names_and_labels(world) -> None:
    names = _names(world)
    for metric in (
        "kube_pod_status_phase",
        "kube_pod_status_ready",
        "kube_pod_container_status_restarts_total",
        "kube_pod_container_status_ready",
        "kube_pod_info",
        "kube_pod_owner",
        "kube_pod_container_resource_requests",
        "kube_deployment_spec_replicas",
        "kube_deployment_status_replicas_available",
        "kube_deployment_status_replicas_unavailable",
        "kube_deployment_status_observed_generation",
        "kube_deployment_metadata_generation",
        "kube_node_status_condition",
        "kube_node_spec_unschedulable",
        "kube_node_status_allocatable",
        "kube_persistentvolumeclaim_status_phase",
    ):
        assert metric in names, metric
    phases = [lab for lab in _labels(world, "kube_pod_status_phase") if lab["namespace"] == NS]
    assert {tuple(sorted(set(lab) - {"__name__"})) for lab in phases} == {("job", "namespace", "phase", "pod", "uid")}
    assert {lab["phase"] for lab in phases} == {"Pending", "Running", "Succeeded", "Failed", "Unknown"}
    info = next(lab for lab in _labels(world, "kube_pod_info") if lab["pod"].startswith("frontend-"))
    assert {"host_ip", "pod_ip", "node", "created_by_kind", "created_by_name", "uid"} <= set(info)
    assert info["created_by_kind"] == "ReplicaSet"
    res = query(metrics_of(world).tsdb, f'sum(kube_pod_status_phase{{namespace="{NS}", phase="Running"}})')
    assert res.series[0].values[0] == len([p for p in world.store.iter("Pod") if p["metadata"]["namespace"] == NS])
    ready = query(metrics_of(world).tsdb, 'kube_node_status_condition{condition="Ready", status="true"}')
    assert len(ready.series) == len(world.hosts) and all(s.values[0] == 1 for s in ready.series)
    alloc = {(lab["resource"], lab["unit"]) for lab in _labels(world, "kube_node_status_allocatable")}
    assert {("cpu", "core"), ("memory", "byte"), ("pods", "integer")} <= alloc
    # healthy: nothing waits, nothing was terminated
    assert "kube_pod_container_status_waiting_reason" not in names or not query(metrics_of(world).tsdb, f'kube_pod_container_status_waiting_reason{{namespace="{NS}"}}').series


def test_cadvisor_and_node_exporter_names_and_labels(world) -> None:
    names = _names(world)
    for metric in ("container_cpu_usage_seconds_total", "container_memory_working_set_bytes", "container_cpu_cfs_periods_total", "container_cpu_cfs_throttled_periods_total", "container_spec_cpu_quota", "container_spec_memory_limit_bytes", "container_last_seen"):
        assert metric in names, metric
    ctr = next(lab for lab in _labels(world, "container_cpu_usage_seconds_total") if lab.get("pod", "").startswith("search-"))
    assert {"namespace", "pod", "container", "image", "name"} <= set(ctr)
    for metric in (
        "node_cpu_seconds_total",
        "node_memory_MemAvailable_bytes",
        "node_memory_MemTotal_bytes",
        "node_filesystem_avail_bytes",
        "node_filesystem_size_bytes",
        "node_filesystem_files",
        "node_filesystem_files_free",
        "node_disk_reads_completed_total",
        "node_disk_read_bytes_total",
        "node_disk_io_time_seconds_total",
        "node_nf_conntrack_entries",
        "node_nf_conntrack_entries_limit",
        "node_load1",
        "node_timex_offset_seconds",
        "node_boot_time_seconds",
    ):
        assert metric in names, metric
    # node-exporter has no disk error counter: failing sectors show elsewhere
    assert not any("error" in n for n in names if n.startswith("node_disk_"))
    cpu = _labels(world, "node_cpu_seconds_total")
    assert {lab["mode"] for lab in cpu} >= {"idle", "user", "system", "iowait"}
    host = world.hosts["worker-1"]
    assert {lab["instance"] for lab in cpu if lab["node"] == "worker-1"} == {f"{host.internal_ip}:9100"}
    assert len({lab["cpu"] for lab in cpu if lab["node"] == "worker-1"}) == host.cpu_cores
    fs = {lab["mountpoint"]: lab for lab in _labels(world, "node_filesystem_avail_bytes") if lab["node"] == "worker-1"}
    assert fs["/"]["fstype"] == "ext4" and fs["/mnt/data"]["device"] == "/dev/sdb1"
    limit = query(metrics_of(world).tsdb, 'node_nf_conntrack_entries_limit{node="worker-1"}').series[0].values[0]
    assert limit == float(host.sysctls["net.netfilter.nf_conntrack_max"])
    # the cpu counters advance at about the node's core count per second
    total = query(metrics_of(world).tsdb, 'sum by (node) (rate(node_cpu_seconds_total{node="worker-1"}[1m]))').series[0].values[0]
    assert total == pytest.approx(host.cpu_cores, rel=0.02)


def test_app_metrics_match_the_traffic_model(world) -> None:
    db = metrics_of(world).tsdb
    handled = _labels(world, "grpc_server_handled_total")
    assert {lab["service"] for lab in handled} == {"search", "geo", "rate", "profile", "recommendation", "user", "reservation"}
    search = next(lab for lab in handled if lab["service"] == "search")
    assert {"namespace", "pod", "instance", "job", "grpc_service", "grpc_method", "grpc_code", "grpc_type"} <= set(search)
    assert search["grpc_service"] == "search.Search"
    assert {lab["le"] for lab in _labels(world, "grpc_server_handling_seconds_bucket")} >= {"0.005", "0.1", "1", "+Inf"}
    res = world.last_traffic[HOTEL_RESERVATION.name]
    rate = query(db, 'sum(rate(grpc_server_handled_total{service="search"}[1m]))').series[0].values[0]
    assert rate == pytest.approx(res.rps["search"], rel=0.1)
    errors = query(db, 'sum(rate(grpc_server_handled_total{grpc_code!="OK"}[1m]))').series[0].values[0]
    assert errors == 0
    http = query(db, 'sum(rate(http_requests_total{service="frontend"}[1m]))').series[0].values[0]
    assert http == pytest.approx(res.rps["frontend"], rel=0.1)
    loadgen = query(db, 'sum by (status) (rate(loadgen_requests_total[1m]))')
    by = {s.labels["status"]: s.values[0] for s in loadgen.series}
    assert by["200"] == pytest.approx(HOTEL_RESERVATION.rps, rel=0.1) and by["500"] == 0 and by["0"] == 0
    # the latency histogram's p99 lands near the model's p99 (2.2 x the mean)
    p99 = query(db, 'histogram_quantile(0.99, sum by (le) (rate(loadgen_request_duration_seconds_bucket[2m])))').series[0].values[0]
    assert p99 == pytest.approx(res.client_latency_ms * 2.2 / 1000, rel=0.5)
    up = query(db, f'up{{namespace="{NS}"}}')
    assert up.series and all(s.values[0] == 1 for s in up.series)


def test_counters_are_monotonic_without_restarts(world) -> None:
    db = metrics_of(world).tsdb
    w = pickle.loads(pickle.dumps(world))
    advance(w, 600)
    db = metrics_of(w).tsdb
    for metric in ("grpc_server_handled_total", "http_requests_total", "loadgen_requests_total", "node_cpu_seconds_total", "container_cpu_usage_seconds_total", "node_disk_io_time_seconds_total", "grpc_server_handling_seconds_bucket"):
        res = query(db, f"resets({metric}[10m])")
        assert res.ok and res.series, metric
        assert all(s.values[0] == 0 for s in res.series), metric


def _crash(world, prefix: str) -> str:
    """Make the running process of a pod exit (as a crash would); the kubelet restarts it."""
    pod = next(p for p in world.store.iter("Pod") if p["metadata"]["name"].startswith(prefix))
    uid = pod["metadata"]["uid"]
    rt = world.runtimes[uid]
    now = world.clock.now
    for ctr in rt.containers.values():
        ctr.outcome = StartOutcome(exit_after=0.0, exit_code=2, reason="Error")
        ctr.exit_at = now + 1.0
    rt.wake_at = now + 1.0
    world.kubelet_wake = min(world.kubelet_wake, rt.wake_at)
    return pod["metadata"]["name"]


def test_counters_reset_when_the_serving_process_restarts(world) -> None:
    w = pickle.loads(pickle.dumps(world))
    name = _crash(w, "search-")
    advance(w, 240)
    db = metrics_of(w).tsdb
    restarts = query(db, f'kube_pod_container_status_restarts_total{{pod="{name}"}}').series[0].values[0]
    assert restarts >= 1
    assert query(db, f'resets(grpc_server_handled_total{{pod="{name}", grpc_code="OK"}}[5m])').series[0].values[0] >= 1
    # while it was down the target reported up=0 and its series went stale
    assert query(db, f'min_over_time(up{{pod="{name}"}}[5m])').series[0].values[0] == 0
    # rate() handles the reset: never negative, and back near the model's rate
    res = query_range(db, f'sum(rate(grpc_server_handled_total{{pod="{name}"}}[1m]))', w.clock.now - 240, w.clock.now, 15)
    assert min(res.series[0].values) >= 0
    assert res.series[0].values[-1] == pytest.approx(w.last_traffic[HOTEL_RESERVATION.name].rps["search"], rel=0.15)


def test_observation_series_and_window(world) -> None:
    names = observation_series(HOTEL_RESERVATION)
    assert names[:3] == [f"client_success_ratio{{namespace={NS}}}", f"client_rps{{namespace={NS}}}", f"client_latency_p99_ms{{namespace={NS}}}"]
    assert f"cpu_cores{{namespace={NS},service=frontend}}" in names and f"memory_bytes{{namespace={NS},service=frontend}}" in names
    assert len(names) == 3 + 7 * len(HOTEL_RESERVATION.components)
    window, mask = window_and_mask(world, names, 12)
    assert window.shape == (12, len(names)) and window.dtype == np.float32
    assert mask.dtype == np.int8 and mask.all()
    col = {n: i for i, n in enumerate(names)}
    assert window[-1, col[f"client_success_ratio{{namespace={NS}}}"]] == pytest.approx(1.0)
    assert window[-1, col[f"memory_bytes{{namespace={NS},service=frontend}}"]] == pytest.approx(30 * 2**20)
    assert window[-1, col[f"cpu_cores{{namespace={NS},service=frontend}}"]] > 0
    assert window[-1, col[f"ready_replicas{{namespace={NS},service=frontend}}"]] == 1


def test_shared_cpu_estimate_matches_kubectl_top(world) -> None:
    api = SimBackend(world).api
    rps = {}
    for res in world.last_traffic.values():
        rps.update(res.pod_rps)
    for ns, name, cpu, _mem in api.top_pods(NS):
        pod = world.store.get("Pod", name, ns)
        assert cpu == pod_cpu_millicores(world.component_for(pod), rps.get(pod["metadata"]["uid"], 0.0))


def test_service_sample_reads_the_recorded_series(world) -> None:
    rps, err, p99 = service_sample(world, NS, "frontend", world.clock.now)
    assert rps == pytest.approx(HOTEL_RESERVATION.rps, rel=0.1) and err == 0 and p99 > 0
    offered, success, latency = client_sample(world, NS, world.clock.now)
    assert offered == pytest.approx(HOTEL_RESERVATION.rps, rel=0.1) and success == pytest.approx(1.0) and latency > 0
