"""The simulator's metrics behind the Prometheus HTTP API, for real clients and a real Prometheus."""

from __future__ import annotations

import shutil
import socket
import subprocess
import time

import pytest

import sre_env

pytest.importorskip("aiohttp", reason="the [serve] extra (aiohttp) is not installed")
httpx = pytest.importorskip("httpx", reason="httpx is not installed")

from sre_env.serve.server import IncidentServer  # noqa: E402


@pytest.fixture(scope="module")
def prom():
    env = sre_env.SREEnv("TargetPortMisconfig")
    env.reset(seed=0)
    server = IncidentServer(env.backend, speed=0).start()
    with httpx.Client(headers=server.auth_headers) as http:  # the server's bearer token on every request
        yield env, server, http
    server.stop()


def test_instant_and_range_queries(prom) -> None:
    env, server, http = prom
    u = server.prometheus_url
    body = http.get(f"{u}/api/v1/query", params={"query": 'count by (namespace) (kube_pod_info{namespace="hotel-reservation"})'}).json()
    assert body["status"] == "success" and body["data"]["resultType"] == "vector"
    pods = len([p for p in env.backend.api.list("Pod", "hotel-reservation")])
    assert body["data"]["result"][0]["value"][1] == str(pods)
    now = body["data"]["result"][0]["value"][0]
    ranged = http.post(f"{u}/api/v1/query_range", data={"query": "sum(loadgen_requests_total)", "start": now - 600, "end": now, "step": "60s"}).json()
    assert ranged["data"]["resultType"] == "matrix" and len(ranged["data"]["result"][0]["values"]) == 11


def test_metadata_endpoints(prom) -> None:
    env, server, http = prom
    u = server.prometheus_url
    series = http.get(f"{u}/api/v1/series", params={"match[]": 'kube_deployment_spec_replicas{namespace="hotel-reservation"}'}).json()["data"]
    assert {s["deployment"] for s in series} >= {"frontend", "geo", "search"}
    assert "namespace" in http.get(f"{u}/api/v1/labels").json()["data"]
    assert "kube-state-metrics" in http.get(f"{u}/api/v1/label/job/values").json()["data"]
    alerts = http.get(f"{u}/api/v1/alerts").json()["data"]["alerts"]
    assert alerts and all(a["state"] in ("firing", "pending") for a in alerts)
    rules = http.get(f"{u}/api/v1/rules").json()["data"]["groups"][0]["rules"]
    assert any(r["state"] == "firing" for r in rules) and all(r["type"] == "alerting" for r in rules)


def test_errors_have_prometheus_shapes(prom) -> None:
    env, server, http = prom
    u = server.prometheus_url
    bad = http.get(f"{u}/api/v1/query", params={"query": "sum(("})
    assert bad.status_code == 400 and bad.json() == {"status": "error", "errorType": "bad_data", "error": "parse error: unclosed left parenthesis"}
    step = http.get(f"{u}/api/v1/query_range", params={"query": "up", "start": "1", "end": "2", "step": "0"}).json()
    assert step["errorType"] == "bad_data" and "step" in step["error"]
    assert http.get(f"{u}/api/v1/series").json()["error"] == "no match[] parameter provided"


def test_metrics_exposition_parses(prom) -> None:
    env, server, http = prom
    text = http.get(f"{server.prometheus_url}/metrics").text
    parsers = pytest.importorskip("prometheus_client.parser", reason="prometheus_client is not installed")
    families = {f.name for f in parsers.text_string_to_metric_families(text)}
    assert {"kube_pod_info", "node_nf_conntrack_entries", "container_cpu_usage_seconds_total"} <= families or "kube_pod_info" in families


def test_prometheus_api_client_talks_to_it(prom) -> None:
    client_mod = pytest.importorskip("prometheus_api_client", reason="prometheus-api-client is not installed")
    env, server, http = prom
    pc = client_mod.PrometheusConnect(url=server.prometheus_url, headers=server.auth_headers, disable_ssl=True)
    result = pc.custom_query('kube_deployment_status_replicas_available{namespace="hotel-reservation", deployment="geo"}')
    assert result and result[0]["metric"]["deployment"] == "geo"
    assert "kube_pod_info" in pc.all_metrics()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("prometheus") is None, reason="the prometheus server binary is not installed")
def test_a_real_prometheus_scrapes_and_answers(prom, tmp_path) -> None:
    env, server, http = prom
    port = _free_port()
    target = server.prometheus_url.removeprefix("http://")
    # the scrape sends the server's bearer token (Prometheus' ``authorization``, type Bearer by default)
    (tmp_path / "prometheus.yml").write_text(f"global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: sre-env\n    authorization:\n      credentials: {server.token}\n    static_configs:\n      - targets: ['{target}']\n")
    proc = subprocess.Popen(
        ["prometheus", f"--config.file={tmp_path / 'prometheus.yml'}", f"--storage.tsdb.path={tmp_path / 'data'}", f"--web.listen-address=127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        found: list = []
        while time.monotonic() < deadline and not found:
            time.sleep(1)
            try:
                body = httpx.get(f"http://127.0.0.1:{port}/api/v1/query", params={"query": 'kube_pod_info{namespace="hotel-reservation"}'}, timeout=5).json()
            except httpx.HTTPError:
                continue
            found = body.get("data", {}).get("result", [])
        assert found, "the real Prometheus never scraped the simulated cluster"
        assert {r["metric"]["exported_job"] if "exported_job" in r["metric"] else r["metric"]["job"] for r in found} <= {"kube-state-metrics", "sre-env"}
    finally:
        proc.terminate()
        proc.wait(10)
