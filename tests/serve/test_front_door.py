"""serve's front door: the bearer token on every endpoint family, and hostile bodies answered 4xx, never 500.

The refusals are the real servers' own: the apiserver's 401 ``Unauthorized``
Status, 413 ``RequestEntityTooLarge`` over its 3 MiB body limit, 415
``UnsupportedMediaType``, 400 for bodies nested past the decoders' depth
(``sre_env.serve.limits``); Prometheus' exporter-toolkit 401 on the
observability port.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import ssl
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

import sre_env

pytest.importorskip("aiohttp", reason="the [serve] extra (aiohttp) is not installed")
httpx = pytest.importorskip("httpx", reason="httpx is not installed")

from sre_env.kube.limits import MAX_REQUEST_BODY_BYTES  # noqa: E402
from sre_env.serve.limits import input_body  # noqa: E402
from sre_env.serve.server import IncidentServer  # noqa: E402

NS = "hotel-reservation"
CM = f"/api/v1/namespaces/{NS}/configmaps"

#: one path per endpoint family: (port, path)
FAMILIES = [
    ("kube", "/api/v1/namespaces"),
    ("kube", f"/apis/apps/v1/namespaces/{NS}/deployments"),
    ("kube", "/version"),
    ("prom", "/api/v1/query?query=up"),
    ("prom", "/metrics"),
    ("prom", "/loki/api/v1/labels"),
    ("prom", "/api/services"),
]


@pytest.fixture(scope="module")
def served():
    env = sre_env.SREEnv("TargetPortMisconfig")
    env.reset(seed=0)
    server = IncidentServer(env.backend, speed=0).start()
    with httpx.Client(verify=server.client_ssl_context(), timeout=30) as http:
        yield server, http
    server.stop()


def _url(server: IncidentServer, port: str, path: str) -> str:
    return (server.url if port == "kube" else server.prometheus_url) + path


@pytest.mark.parametrize(("port", "path"), FAMILIES)
def test_every_endpoint_needs_the_token(served, port: str, path: str) -> None:
    server, http = served
    url = _url(server, port, path)
    for headers in ({}, {"Authorization": "Bearer not-the-token"}, {"Authorization": f"Basic {server.token}"}, {"Authorization": "Bearer"}):
        resp = http.get(url, headers=headers)
        assert resp.status_code == 401, (headers, resp.text)
        if port == "kube":
            assert resp.json() == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": "Unauthorized", "reason": "Unauthorized", "code": 401}
        else:
            assert resp.text == "Unauthorized\n" and resp.headers["WWW-Authenticate"] == "Bearer"
    ok = http.get(url, headers={"Authorization": f"bearer {server.token}"})  # the scheme is case-insensitive
    assert ok.status_code == 200, ok.text


def test_writes_without_the_token_change_nothing(served) -> None:
    server, http = served
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "intruder"}}
    assert http.post(server.url + CM, json=body).status_code == 401
    assert http.delete(server.url + f"/api/v1/namespaces/{NS}").status_code == 401
    with server.lock:
        assert server.backend.api.get("Namespace", NS)
        assert not [c for c in server.backend.api.list("ConfigMap", NS) if c["metadata"]["name"] == "intruder"]


def test_the_kubeconfig_carries_the_token_and_the_ca_and_is_private(served, tmp_path: Path) -> None:
    server, _ = served
    path = server.write_kubeconfig(tmp_path / "kubeconfig", NS)
    cfg = yaml.safe_load(path.read_text())
    assert cfg["users"][0]["user"] == {"token": server.token}
    assert cfg["clusters"][0]["cluster"]["server"] == server.url and server.url.startswith("https://")
    assert cfg["clusters"][0]["cluster"]["certificate-authority-data"]
    assert path.stat().st_mode & 0o077 == 0


def test_tokens_are_fresh_per_server_not_seeded() -> None:
    env = sre_env.SREEnv("TargetPortMisconfig")
    env.reset(seed=0)
    a, b = IncidentServer(env.backend), IncidentServer(env.backend)
    assert a.token and b.token and a.token != b.token and len(a.token) >= 40


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_real_kubectl_with_the_kubeconfig_and_without_it(served, tmp_path: Path) -> None:
    server, _ = served
    cfg = server.write_kubeconfig(tmp_path / "kubeconfig", NS)
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path)}
    ok = subprocess.run(["kubectl", "--kubeconfig", str(cfg), "get", "deployments", "-o", "name"], capture_output=True, text=True, env=env, timeout=60)
    assert ok.returncode == 0 and "deployment.apps/frontend" in ok.stdout, ok.stderr
    can = subprocess.run(["kubectl", "--kubeconfig", str(cfg), "auth", "can-i", "delete", "namespaces"], capture_output=True, text=True, env=env, timeout=60)
    assert (can.returncode, can.stdout.strip()) == (0, "yes"), can.stderr  # the token holder is the cluster's admin
    bare = subprocess.run(["kubectl", "--kubeconfig", str(cfg), "--token", "wrong", "get", "pods"], capture_output=True, text=True, env=env, timeout=60)
    assert bare.returncode != 0 and "Unauthorized" in bare.stderr, bare.stderr


# ---------------------------------------------------------------- hostile bodies
def _auth(server: IncidentServer, ctype: str = "application/json") -> dict[str, str]:
    return {**server.auth_headers, "Content-Type": ctype}


def _deep_json(levels: int) -> bytes:
    return b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep"},"data":{"x":' + b"[" * levels + b"]" * levels + b"}}"


HOSTILE = [
    ("POST", CM, "application/json", _deep_json(10_000), 400),
    ("POST", CM, "application/json", b"[" * 100_000, 400),  # unbalanced and deep
    ("POST", CM, "application/yaml", ("a:\n" + "".join(" " * i + "- \n" for i in range(1, 2000))).encode(), 400),
    ("POST", CM, "application/yaml", b"x: " + b"[" * 10_000 + b"]" * 10_000, 400),
    ("POST", CM, "application/json", b"[1, 2]", 400),
    ("POST", CM, "application/json", b'"configmap"', 400),
    ("POST", CM, "application/json", b"null", None),  # an empty object: refused by validation, whatever it says
    ("POST", CM, "application/json", b"{not json", 400),
    ("POST", CM, "application/json", b"\xff\xfe", 400),
    ("POST", CM, "text/plain", b'{"kind":"ConfigMap"}', 415),
    ("POST", CM, "application/x-www-form-urlencoded", b"a=b", 415),
    ("PUT", f"{CM}/frontend", "application/xml", b"<ConfigMap/>", 415),
    ("PATCH", "/apis/apps/v1/namespaces/hotel-reservation/deployments/frontend", "text/plain", b"{}", 415),
    ("PATCH", "/apis/apps/v1/namespaces/hotel-reservation/deployments/frontend", "application/merge-patch+json", b"null", 400),
    ("PATCH", "/apis/apps/v1/namespaces/hotel-reservation/deployments/frontend", "application/merge-patch+json", b'{"spec":' * 5000 + b"1" + b"}" * 5000, 400),
    ("PATCH", "/apis/apps/v1/namespaces/hotel-reservation/deployments/frontend", "application/json-patch+json", b"{}", 400),
    ("PATCH", "/apis/apps/v1/namespaces/hotel-reservation/deployments/frontend?fieldManager=t", "application/apply-patch+yaml", b"a: " + b"[" * 10_000, 400),
    ("PUT", "/apis/apps/v1/namespaces/hotel-reservation/deployments/frontend/scale", "application/json", b"[]", 400),
    ("DELETE", f"/api/v1/namespaces/{NS}/pods/nothing-here", "application/json", b"[]", 400),
]


@pytest.mark.parametrize(("method", "path", "ctype", "body", "code"), HOSTILE, ids=[f"{m}-{c}-{i}" for i, (m, _, c, _, _) in enumerate(HOSTILE)])
def test_hostile_bodies_get_a_4xx_status(served, method: str, path: str, ctype: str, body: bytes, code: int | None) -> None:
    server, http = served
    resp = http.request(method, server.url + path, headers=_auth(server, ctype), content=body)
    assert 400 <= resp.status_code < 500, (resp.status_code, resp.text[:500])
    if code is not None:
        assert resp.status_code == code, resp.text[:500]
    status = resp.json()
    assert status["kind"] == "Status" and status["code"] == resp.status_code


def test_a_body_over_the_apiservers_limit_is_413(served) -> None:
    server, http = served
    big = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"}, "data": {"x": "a" * MAX_REQUEST_BODY_BYTES}}).encode()
    resp = http.post(server.url + CM, headers=_auth(server), content=big)
    assert resp.status_code == 413 and resp.json()["message"] == "Request entity too large: limit is 3145728"
    with server.lock:
        assert not [c for c in server.backend.api.list("ConfigMap", NS) if c["metadata"]["name"] == "big"]


def test_a_yaml_create_works_and_the_server_still_answers(served) -> None:
    server, http = served
    body = yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "from-yaml"}, "data": {"k": "v"}}).encode()
    resp = http.post(server.url + CM, headers=_auth(server, "application/yaml"), content=body)
    assert resp.status_code == 201, resp.text
    assert http.get(server.url + f"{CM}/from-yaml", headers=server.auth_headers).json()["data"] == {"k": "v"}


def test_a_huge_prometheus_form_is_refused(served) -> None:
    server, http = served
    resp = http.post(server.prometheus_url + "/api/v1/query", headers={**server.auth_headers, "Content-Type": "application/x-www-form-urlencoded"}, content=b"query=" + b"u" * (11 << 20))
    assert resp.status_code == 413 and resp.json()["status"] == "error"


def test_yaml_bodies_are_converted_to_json() -> None:
    assert input_body(None, b"{}") == b"{}" and input_body("application/yaml; charset=utf-8", b"a: 1") == b'{"a": 1}'


# ---------------------------------------------------------------- --no-auth
def test_no_auth_serves_anyone_and_warns(tmp_path: Path) -> None:
    cfg = tmp_path / "kubeconfig"
    argv = [sys.executable, "-m", "sre_env.cli", "serve", "TargetPortMisconfig", "--port", "0", "--prometheus-port", "0", "--speed", "0", "--kubeconfig", str(cfg), "--no-auth"]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path)
    try:
        lines = []
        for line in proc.stdout:  # type: ignore[union-attr]
            lines.append(line)
            if line.startswith("Prometheus API:"):
                break
        out = "".join(lines)
        assert "Bearer token" not in out
        url = next(line.split(": ", 1)[1].strip() for line in lines if line.startswith("Kubernetes API:"))
        prom = next(line.split(": ", 1)[1].split()[0].removesuffix("/api/v1/query") for line in lines if line.startswith("Prometheus API:"))
        kube = yaml.safe_load(cfg.read_text())
        assert kube["users"][0]["user"] == {}
        ca = ssl.create_default_context(cadata=base64.b64decode(kube["clusters"][0]["cluster"]["certificate-authority-data"]).decode())
        with httpx.Client(verify=ca, timeout=30) as http:
            assert http.get(f"{url}/api/v1/namespaces").status_code == 200
            assert http.get(f"{prom}/api/v1/query", params={"query": "up"}).status_code == 200
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    assert "warning: --no-auth" in err and "every Secret" in err
