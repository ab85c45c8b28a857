"""The real-cluster manifests: generated from the app spec, and the load generator they ship works."""

from __future__ import annotations

import http.server
import shutil
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest
import yaml

from sre_env.apps.hotel_reservation import HOTEL_RESERVATION
from sre_env.k8s.manifests import (
    MANIFEST_DIR,
    app_objects,
    loadgen_objects,
    monitoring_objects,
    render,
    write_all,
)


def test_the_committed_manifests_are_what_the_generator_writes(tmp_path: Path) -> None:
    for path in write_all(tmp_path):
        assert (MANIFEST_DIR / path.name).read_text() == path.read_text(), f"regenerate: python -m sre_env.k8s.manifests ({path.name})"


def test_the_app_keeps_the_simulators_names_without_mongo_auth() -> None:
    objs = app_objects(HOTEL_RESERVATION)
    deps = {o["metadata"]["name"]: o for o in objs if o["kind"] == "Deployment"}
    assert {c.name for c in HOTEL_RESERVATION.components} == set(deps)
    for comp in HOTEL_RESERVATION.components:
        ctr = deps[comp.name]["spec"]["template"]["spec"]["containers"][0]
        assert ctr["name"] == comp.container and ctr["image"] == comp.image
        env = {e["name"] for e in ctr.get("env") or ()}
        assert {d.address_env for d in comp.dependencies if d.address_env} <= env  # what MissingEnvVar removes
        assert "--auth" not in (ctr.get("args") or []) and not env & {"MONGO_USERNAME", "MONGO_INITDB_ROOT_PASSWORD"}
    assert not [o for o in objs if o["kind"] == "Secret"]
    docs = list(yaml.safe_load_all(render(objs)))
    assert all(d["apiVersion"] and d["kind"] and d["metadata"]["name"] for d in docs)


def test_monitoring_scrapes_the_load_generator_with_its_alert_rules() -> None:
    objs = {(o["kind"], o["metadata"]["name"]): o for o in monitoring_objects(HOTEL_RESERVATION) + loadgen_objects(HOTEL_RESERVATION)}
    cfg = yaml.safe_load(objs[("ConfigMap", "sre-env-prometheus")]["data"]["prometheus.yml"])
    job = cfg["scrape_configs"][0]
    assert job["job_name"] == "loadgen" and job["honor_labels"] is True
    assert job["static_configs"][0]["targets"] == ["loadgen-hotel-reservation.sre-env-system.svc.cluster.local:9100"]
    rules = yaml.safe_load(objs[("ConfigMap", "sre-env-prometheus")]["data"]["rules.yml"])["groups"][0]["rules"]
    assert {r["alert"] for r in rules} == {"LoadgenHighErrorRate", "LoadgenHighLatency"}
    env = {e["name"]: e["value"] for e in objs[("Deployment", "loadgen-hotel-reservation")]["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["TARGET"] == "http://frontend.hotel-reservation.svc.cluster.local:5000" and env["NAMESPACE"] == "hotel-reservation"


class _Frontend(http.server.BaseHTTPRequestHandler):
    def _answer(self) -> None:
        self.send_response(500 if self.path.startswith("/recommendations") else 200)
        self.end_headers()

    do_GET = _answer
    do_POST = _answer

    def log_message(self, *args: object) -> None:
        pass


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_the_load_generator_exports_the_series_the_gates_read() -> None:
    frontend = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Frontend)
    threading.Thread(target=frontend.serve_forever, daemon=True).start()
    env = {e["name"]: e["value"] for e in loadgen_objects(HOTEL_RESERVATION)[1]["spec"]["template"]["spec"]["containers"][0]["env"]}
    port = _free_port()
    env |= {"TARGET": f"http://127.0.0.1:{frontend.server_port}", "RPS": "200", "PORT": str(port), "PATH": "/usr/bin:/bin"}
    script = Path(__file__).resolve().parents[2] / "sre_env" / "k8s" / "loadgen.py"
    proc = subprocess.Popen([sys.executable, str(script)], env=env)
    try:
        text = ""
        for _ in range(50):
            time.sleep(0.1)
            try:
                text = urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=2).read().decode()
            except OSError:
                continue
            if 'endpoint="/recommendations",method="GET",status="500"' in text and 'endpoint="/hotels",method="GET",status="200"' in text:
                break
        assert 'loadgen_requests_total{namespace="hotel-reservation",endpoint="/hotels",method="GET",status="200"}' in text
        assert 'loadgen_requests_total{namespace="hotel-reservation",endpoint="/recommendations",method="GET",status="500"}' in text
        assert 'loadgen_request_duration_seconds_bucket{namespace="hotel-reservation",endpoint="/hotels",method="GET",le="+Inf"}' in text
        assert "loadgen_request_duration_seconds_count{" in text
    finally:
        proc.terminate()
        proc.wait(10)
        frontend.shutdown()
        frontend.server_close()


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_real_kubectl_accepts_every_manifest(paused) -> None:
    proc = subprocess.run(
        ["kubectl", f"--kubeconfig={paused.kubeconfig}", "apply", "--dry-run=client", "--validate=false", "-o", "name", "-f", str(MANIFEST_DIR)],
        capture_output=True, text=True, timeout=120, check=False,
    )
    assert proc.returncode == 0, proc.stderr
    names = proc.stdout.split()
    total = sum(len(list(yaml.safe_load_all(p.read_text()))) for p in MANIFEST_DIR.glob("*.yaml"))
    assert len(names) == total and "deployment.apps/prometheus" in names and "deployment.apps/loadgen-hotel-reservation" in names
