"""``sre-env serve`` shows a live-looking incident: simulated times mapped to the wall clock.

The real ``kubectl`` computes ages from its own clock and dashboards ask for "the
last N minutes" of wall time, so every served API moves the simulator's times
(seconds since 2026-03-02T09:00Z) to wall-clock ones and the times clients send
back to simulated ones (``sre_env.serve.timeshift``).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
import urllib.parse
import urllib.request
from datetime import UTC, datetime
from pathlib import Path

import pytest
from _kubectl import run_kubectl

import sre_env
from sre_env.kube.timefmt import human_age, parse_iso
from sre_env.serve.timeshift import (
    EPOCH_UNIX,
    TimeMap,
    shift_json_text,
    shift_log_line,
    shift_log_text,
    shift_rfc3339,
)
from sre_env.shell import ShellContext, run_command

aiohttp = pytest.importorskip("aiohttp", reason="the [serve] extra (aiohttp) is not installed")
KUBECTL = shutil.which("kubectl")
needs_kubectl = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")

from sre_env.serve.server import IncidentServer

NS = "hotel-reservation"
DAY = 86400


# ------------------------------------------------------------------------------ the mapping
def test_json_timestamps_move_only_in_timestamp_fields() -> None:
    doc = {
        "metadata": {"creationTimestamp": "2026-03-02T09:00:05Z", "annotations": {"kubectl.kubernetes.io/restartedAt": "2026-03-02T10:00:00+01:00", "kubectl.kubernetes.io/last-applied-configuration": json.dumps({"metadata": {"creationTimestamp": "2026-03-02T09:00:05Z"}}), "note": "2026-03-02T09:00:05Z"}},
        "status": {"conditions": [{"lastTransitionTime": "2026-03-02T09:00:05Z"}], "containerStatuses": [{"state": {"terminated": {"startedAt": "2026-03-02T09:00:05Z", "finishedAt": "2026-03-02T23:59:59Z"}}}]},
        "eventTime": "2026-03-02T09:00:05.123456Z",
        "data": {"when": "2026-03-02T09:00:05Z"},
    }
    out = json.loads(shift_json_text(json.dumps(doc), 3600))
    assert out["metadata"]["creationTimestamp"] == "2026-03-02T10:00:05Z"
    assert out["metadata"]["annotations"]["kubectl.kubernetes.io/restartedAt"] == "2026-03-02T10:00:00Z"  # +01:00 normalized to UTC, then moved
    assert out["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"] == doc["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
    assert out["metadata"]["annotations"]["note"] == out["data"]["when"] == "2026-03-02T09:00:05Z"  # not a timestamp field
    assert out["status"]["conditions"][0]["lastTransitionTime"] == "2026-03-02T10:00:05Z"
    assert out["status"]["containerStatuses"][0]["state"]["terminated"]["finishedAt"] == "2026-03-03T00:59:59Z"
    assert out["eventTime"] == "2026-03-02T10:00:05.123456Z"
    assert json.loads(shift_json_text(shift_json_text(json.dumps(doc), 3600), -3600))["status"] == doc["status"]
    assert shift_rfc3339("2026-03-02T09:00:05.5Z", -5) == "2026-03-02T09:00:00.5Z" and shift_rfc3339("soon", 5) == "soon"


@pytest.mark.parametrize(
    ("line", "moved"),
    [
        ("2026-03-02T09:15:56Z TRC services/frontend/server.go:139 > starts searchHandler", "2026-03-02T10:16:01Z TRC services/frontend/server.go:139 > starts searchHandler"),
        ("2026-03-02T09:00:15.199Z [INFO]  agent.server.raft: initial configuration", "2026-03-02T10:00:20.199Z [INFO]  agent.server.raft: initial configuration"),
        ("2026/03/02 09:00:00 listening on :8080", "2026/03/02 10:00:05 listening on :8080"),
        ("2026-03-02 09:00:00,123 INFO worker ready", "2026-03-02 10:00:05,123 INFO worker ready"),
        ("I0302 23:59:58.123456       1 main.go:10] started", "I0303 01:00:03.123456       1 main.go:10] started"),
        ('{"t":{"$date":"2026-03-02T09:00:15.199+00:00"},"s":"I"}', '{"t":{"$date":"2026-03-02T10:00:20.199+00:00"},"s":"I"}'),
        ('{"level":"info","ts":1772442010.2000005,"msg":"x"}', '{"level":"info","ts":1772445615.2000005,"msg":"x"}'),
        ("slab class   2: chunk size       120", "slab class   2: chunk size       120"),
        ("Error 2026-03-02T09:00:00Z inside", "Error 2026-03-02T09:00:00Z inside"),
    ],
)
def test_log_lines_keep_their_format_with_the_leading_time_moved(line: str, moved: str) -> None:
    assert shift_log_line(line, 3605) == moved
    assert shift_log_line(moved, -3605) == line


def test_kubelet_prefixes_and_message_stamps_move_together() -> None:
    text = "2026-03-02T09:00:01.000000001Z 2026/03/02 09:00:01 hello\n"
    assert shift_log_text(text, 60, prefixed=True) == "2026-03-02T09:01:01.000000001Z 2026/03/02 09:01:01 hello\n"
    assert shift_log_text(text, 0, prefixed=True) is text


def test_the_offset_is_fixed_at_speed_one_and_re_anchored_otherwise() -> None:
    sim, wall = [100.0], [EPOCH_UNIX + 1_000_000.4]
    live = TimeMap(lambda: sim[0], 1.0, wall=lambda: wall[0])
    fast = TimeMap(lambda: sim[0], 120.0, wall=lambda: wall[0])
    assert live.offset() == fast.offset() == 999_900
    sim[0] += 1200.0
    wall[0] += 10.0
    assert live.offset() == 999_900  # constant: a stamp read earlier maps back to the same second
    assert fast.to_unix(sim[0]) == pytest.approx(wall[0], abs=0.5)  # simulated now is the wall's now
    assert live.to_sim(live.to_unix(42.0)) == 42.0
    assert TimeMap(lambda: sim[0], 1.0, enabled=False).offset() == 0


# ------------------------------------------------------------------------------ against a served incident
@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory):
    """A served incident whose clock runs with the wall's (speed 1)."""
    env = sre_env.SREEnv("TargetPortMisconfig")
    env.reset(seed=0)
    env.backend.api.scale("Deployment", "geo", NS, 2)  # events a minute or two old (scaling, scheduling, pulling)
    env.backend.advance(90)
    server = IncidentServer(env.backend, speed=1.0).start()
    cfg = server.write_kubeconfig(tmp_path_factory.mktemp("live") / "kubeconfig", NS)
    yield env, server, cfg
    server.stop()


def kubectl(cfg: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return run_kubectl(KUBECTL, cfg, *args, stdin=stdin)


def _get(server: IncidentServer, path: str, **params: object) -> dict:
    """A GET on the observability port, with the server's bearer token."""
    req = urllib.request.Request(f"{server.prometheus_url}{path}?{urllib.parse.urlencode(params)}", headers=server.auth_headers)
    with urllib.request.urlopen(req, timeout=20) as resp:
        return json.loads(resp.read())


_AGE = re.compile(r"(?<![\w.:/-])(?=\d)(?:\d+y)?(?:\d+d)?(?:\d+h)?(?:\d+m)?(?:\d+s)?(?![\w.:/%-])")
_DATE = re.compile(r"\w{3}, (\d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2}) \+0000")


@needs_kubectl
def test_kubectl_describe_shows_ages_of_minutes_and_todays_dates(live) -> None:
    env, server, cfg = live
    with server.lock:
        pod = env.backend.api.list("Pod", NS, "io.kompose.service=frontend")[0]
        started = parse_iso(pod["status"]["startTime"])
        sim_age = env.backend.now - started
    out = kubectl(cfg, "describe", "pod", pod["metadata"]["name"])
    assert out.returncode == 0, out.stderr
    start_line = next(ln for ln in out.stdout.splitlines() if ln.startswith("Start Time:"))
    shown = datetime.strptime(_DATE.search(start_line).group(1), "%d %b %Y %H:%M:%S").replace(tzinfo=UTC).timestamp()
    assert abs((time.time() - shown) - sim_age) < 5  # started as long ago as in the simulation, by the wall clock
    assert sim_age < DAY and not any(("d" in a or "y" in a) for a in _AGE.findall(out.stdout))  # no "272d"


@needs_kubectl
def test_kubectl_get_events_ages_match_the_builtin_shell(live) -> None:
    env, server, cfg = live
    real = kubectl(cfg, "get", "events", "-o", "json")
    got = json.loads(real.stdout)["items"]
    assert got, "the incident has events"
    now_wall = time.time()
    with server.lock:
        ours = {(e["involvedObject"]["name"], e["reason"], e.get("count")): e for e in env.backend.api.list("Event", NS)}
        now_sim = env.backend.now
    for e in got:
        mine = ours.get((e["involvedObject"]["name"], e["reason"], e.get("count")))
        if mine is None or not mine.get("lastTimestamp"):
            continue  # written between the two reads
        real_age = now_wall - datetime.fromisoformat(e["lastTimestamp"]).timestamp()
        assert abs(real_age - (now_sim - parse_iso(mine["lastTimestamp"]))) < 3
    table = kubectl(cfg, "get", "events")
    with server.lock:
        shell = run_command(ShellContext(backend=env.backend, namespace=NS), "kubectl get events")
    # LAST SEEN is computed server-side against the simulated now, as the shell does: same ages (up to the clock moving)
    first = lambda text: [ln.split()[0] for ln in text.splitlines()[1:]]
    assert len(first(table.stdout)) == len(first(shell.output))
    assert all(r == o or human_age(_secs(o) + 1) == r or human_age(_secs(o) + 2) == r for r, o in zip(first(table.stdout), first(shell.output)))


def _secs(age: str) -> int:
    return sum(int(n) * {"d": DAY, "h": 3600, "m": 60, "s": 1}[u] for n, u in re.findall(r"(\d+)([dhms])", age))


@needs_kubectl
def test_logs_timestamps_and_since_time_use_the_wall_clock(live) -> None:
    _, _, cfg = live
    out = kubectl(cfg, "logs", "deploy/frontend", "--timestamps", "--tail=5")
    assert out.returncode == 0, out.stderr
    stamps = [datetime.fromisoformat(ln.split(" ", 1)[0][:19] + "+00:00").timestamp() for ln in out.stdout.splitlines()]
    assert stamps and all(time.time() - 600 < s <= time.time() + 2 for s in stamps)
    # the app's own leading timestamp moved with the kubelet's prefix
    assert all(ln.split(" ", 2)[1][:19] == ln.split(" ", 1)[0][:19] for ln in out.stdout.splitlines() if " TRC " in ln)
    since = datetime.fromtimestamp(time.time() - 30, tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    recent = kubectl(cfg, "logs", "deploy/frontend", "--timestamps", f"--since-time={since}")
    assert recent.returncode == 0, recent.stderr
    assert recent.stdout and all(ln.split(" ", 1)[0][:19] >= since[:19] for ln in recent.stdout.splitlines())


def test_prometheus_last_five_wall_minutes_have_samples(live) -> None:
    _, server, _ = live
    now = time.time()
    body = _get(server, "/api/v1/query_range", query='up{job="kube-state-metrics"} or up', start=now - 300, end=now, step=15)
    series = body["data"]["result"]
    assert series and all(now - 301 <= float(t) <= now + 1 for s in series for t, _ in s["values"])
    t, value = _get(server, "/api/v1/query", query="time()")["data"]["result"]
    assert abs(float(value) - time.time()) < 3 and float(value) == pytest.approx(t, abs=1e-3)
    ages = _get(server, "/api/v1/query", query="time() - kube_pod_created")["data"]["result"]
    assert ages and all(0 <= float(a["value"][1]) < DAY for a in ages)  # ages, not 272 days
    alerts = _get(server, "/api/v1/alerts")["data"]["alerts"]
    assert all(now - DAY < datetime.fromisoformat(a["activeAt"]).timestamp() <= now + 2 for a in alerts)


def test_prometheus_api_client_asks_for_wall_clock_ranges(live) -> None:
    pac = pytest.importorskip("prometheus_api_client", reason="prometheus-api-client ([k8s] extra) is not installed")
    _, server, _ = live
    prom = pac.PrometheusConnect(url=server.prometheus_url, headers=server.auth_headers, disable_ssl=True)
    end = datetime.now(UTC)
    data = prom.custom_query_range('sum(rate(http_requests_total[1m]))', start_time=datetime.fromtimestamp(end.timestamp() - 300, tz=UTC), end_time=end, step="15")
    assert data and len(data[0]["values"]) >= 10


def test_loki_and_jaeger_ranges_by_the_wall_clock(live) -> None:
    _, server, _ = live
    now = time.time()
    body = _get(server, "/loki/api/v1/query_range", query=f'{{namespace="{NS}"}}', start=int((now - 300) * 1e9), end=int(now * 1e9), limit=50)
    values = [v for s in body["data"]["result"] for v in s["values"]]
    assert values and all(now - 301 <= int(ts) / 1e9 <= now + 1 for ts, _ in values)
    traces = _get(server, "/api/traces", service="frontend", start=int((now - 300) * 1e6), end=int(now * 1e6), lookback="custom", limit=5)["data"]
    assert traces and all(now - 301 <= sp["startTime"] / 1e6 <= now + 1 for tr in traces for sp in tr["spans"])


@needs_kubectl
def test_get_yaml_replace_round_trip_keeps_the_simulated_times(live) -> None:
    env, server, cfg = live
    with server.lock:
        before = json.loads(json.dumps(env.backend.api.get("Deployment", "geo", NS)))
    shown = kubectl(cfg, "get", "deploy", "geo", "-o", "yaml")
    assert "2026-03-02" not in shown.stdout.split("status:")[0] or time.strftime("%Y-%m-%d") == "2026-03-02"
    out = kubectl(cfg, "replace", "--validate=false", "-f", "-", stdin=shown.stdout)  # the served API has no /openapi
    assert out.returncode == 0 and out.stdout.strip() == "deployment.apps/geo replaced", out.stderr
    with server.lock:
        after = env.backend.api.get("Deployment", "geo", NS)
        assert after["metadata"]["creationTimestamp"] == before["metadata"]["creationTimestamp"]
        times = [c["lastUpdateTime"] for c in after["status"]["conditions"]]
        assert all(abs(parse_iso(t) - env.backend.now) < DAY for t in times)  # mapped back, not shifted twice
    again = kubectl(cfg, "rollout", "status", "deploy/geo", "--timeout=20s")
    assert again.returncode == 0, again.stderr


@needs_kubectl
def test_real_epoch_serves_the_simulators_own_stamps(tmp_path: Path) -> None:
    env = sre_env.SREEnv("TargetPortMisconfig")
    env.reset(seed=0)
    server = IncidentServer(env.backend, speed=0, prom_port=None, real_epoch=True).start()
    try:
        cfg = server.write_kubeconfig(tmp_path / "kubeconfig", NS)
        pod = json.loads(kubectl(cfg, "get", "pods", "-l", "io.kompose.service=geo", "-o", "json").stdout)["items"][0]
        with server.lock:
            mine = env.backend.api.get("Pod", pod["metadata"]["name"], NS)
        assert pod["metadata"]["creationTimestamp"] == mine["metadata"]["creationTimestamp"] and pod["metadata"]["creationTimestamp"].startswith("2026-03-02T")
        assert server.offset() == 0
    finally:
        server.stop()
    from sre_env.cli import build_parser

    assert build_parser().parse_args(["serve", "TargetPortMisconfig", "--real-epoch"]).real_epoch is True


# ------------------------------------------------------------------------------ probe defaults
def test_a_probe_added_by_a_patch_reads_back_with_the_api_servers_defaults() -> None:
    env = sre_env.SREEnv("TargetPortMisconfig")
    env.reset(seed=0)
    api = env.backend.api
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "hotel-reserv-geo", "readinessProbe": {"tcpSocket": {"port": 8083}}, "livenessProbe": {"httpGet": {"port": 8083}, "periodSeconds": 5}}]}}}}
    api.patch("Deployment", "geo", NS, patch, "strategic")
    ctr = api.get("Deployment", "geo", NS)["spec"]["template"]["spec"]["containers"][0]
    assert ctr["readinessProbe"] == {"tcpSocket": {"port": 8083}, "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3}
    assert ctr["livenessProbe"]["periodSeconds"] == 5 and ctr["livenessProbe"]["httpGet"] == {"port": 8083, "path": "/", "scheme": "HTTP"}
    env.backend.advance(60)
    pod = api.list("Pod", NS, "io.kompose.service=geo")[-1]
    assert pod["spec"]["containers"][0]["readinessProbe"]["successThreshold"] == 1  # pods inherit the defaulted template
    out = run_command(ShellContext(backend=env.backend, namespace=NS), "kubectl describe deploy geo").output
    assert "tcp-socket :8083 delay=0s timeout=1s period=10s #success=1 #failure=3" in out


@needs_kubectl
def test_real_kubectl_describes_a_patched_probe_like_the_shell(tmp_path: Path) -> None:
    env = sre_env.SREEnv("TargetPortMisconfig")
    env.reset(seed=0)
    server = IncidentServer(env.backend, speed=0, prom_port=None).start()
    try:
        cfg = server.write_kubeconfig(tmp_path / "kubeconfig", NS)
        patch = '{"spec":{"template":{"spec":{"containers":[{"name":"hotel-reserv-geo","readinessProbe":{"tcpSocket":{"port":8083}}}]}}}}'
        assert kubectl(cfg, "patch", "deploy", "geo", "-p", patch).returncode == 0
        real = kubectl(cfg, "describe", "deploy", "geo").stdout
        with server.lock:
            ours = run_command(ShellContext(backend=env.backend, namespace=NS), "kubectl describe deploy geo").output
    finally:
        server.stop()
    line = "Readiness: tcp-socket :8083 delay=0s timeout=1s period=10s #success=1 #failure=3"
    assert line in " ".join(real.split()) and line in " ".join(ours.split())
