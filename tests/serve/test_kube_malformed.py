"""Malformed objects sent by the real ``kubectl`` to ``sre-env serve``: the API server's errors, the world unchanged.

The same manifests as ``tests/sim/test_admission.py`` (the built-in shell);
served writes go through the same admission, so each gets the text a real
cluster gives, nothing is stored, and the episode still steps and grades.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from _kubectl import run_kubectl

import sre_env

aiohttp = pytest.importorskip("aiohttp", reason="the [serve] extra (aiohttp) is not installed")
KUBECTL = shutil.which("kubectl")
pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")

from sre_env.serve.kube_api import handle  # noqa: E402
from sre_env.serve.server import IncidentServer  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "sim"))
from test_admission import REFUSED  # noqa: E402

NS = "hotel-reservation"

#: what the real kubectl prints for the documents it refuses itself, before it sends anything
CLIENT_SIDE = {
    "yaml-10001-flow-levels": "error: error parsing STDIN: error converting YAML to JSON: yaml: exceeded max depth of 10000",
    "yaml-10009-block-levels": "error: error parsing STDIN: error converting YAML to JSON: yaml: line 10005: exceeded max depth of 10000",
}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    env = sre_env.SREEnv("TargetPortMisconfig")
    env.reset(seed=0)
    server = IncidentServer(env.backend, speed=0, prom_port=None).start()
    cfg = server.write_kubeconfig(tmp_path_factory.mktemp("kube") / "kubeconfig", NS)
    yield env, server, cfg
    server.stop()
    env.close()


def kubectl(cfg: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return run_kubectl(KUBECTL, cfg, *args, stdin=stdin)


def _names(env, server, kind: str) -> list[str]:
    with server.lock:
        return sorted(o["metadata"]["name"] for o in env.backend.api.list(kind))


@pytest.mark.parametrize("case", list(REFUSED))
def test_malformed_objects_get_the_api_servers_errors_and_change_nothing(served, case: str) -> None:
    env, server, cfg = served
    text, verb, expected, kind = REFUSED[case]
    before = _names(env, server, kind)
    out = kubectl(cfg, verb, "-f", "-", stdin=text + "\n")
    assert out.returncode == 1
    assert out.stderr.strip() == CLIENT_SIDE.get(case, expected)
    assert _names(env, server, kind) == before
    assert kubectl(cfg, "get", "pods").returncode == 0


def test_null_replicas_are_defaulted_to_one(served) -> None:
    env, server, cfg = served
    manifest = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: nullreplicas\nspec:\n  replicas: null\n"
        "  selector:\n    matchLabels: {app: nullreplicas}\n  template:\n    metadata:\n      labels: {app: nullreplicas}\n"
        "    spec:\n      containers:\n      - name: c\n        image: nginx\n"
    )
    out = kubectl(cfg, "apply", "-f", "-", stdin=manifest)
    assert out.returncode == 0 and out.stdout == "deployment.apps/nullreplicas created\n"
    with server.lock:
        env.backend.advance(30)
        dep = env.backend.api.get("Deployment", "nullreplicas", NS)
    assert dep["spec"]["replicas"] == 1 and dep["status"].get("readyReplicas") == 1


def test_a_node_without_status_then_kubectl_run_and_grading(served) -> None:
    env, server, cfg = served
    out = kubectl(cfg, "apply", "-f", "-", stdin="apiVersion: v1\nkind: Node\nmetadata:\n  name: ghost\n")
    assert out.returncode == 0 and out.stdout == "node/ghost created\n"
    out = kubectl(cfg, "run", "probe", "--image=nginx")
    assert out.returncode == 0 and out.stdout == "pod/probe created\n"
    with server.lock:
        env.backend.advance(20)
        pod = env.backend.api.get("Pod", "probe", NS)
    assert pod["spec"]["nodeName"] != "ghost"
    assert kubectl(cfg, "describe", "node", "ghost").returncode == 0


def test_the_episode_steps_and_grades_after_the_refused_writes(served) -> None:
    env, server, cfg = served
    with server.lock:
        obs, _, _, _, info = env.step("kubectl get deploy -n hotel-reservation")
        assert info["exit_code"] == 0
        _, _, terminated, _, info = env.step("submit done")
    assert terminated and info["submitted"] and info["oracles"]


def _deep(levels: int) -> str:
    return '{"a":' * levels + "1" + "}" * levels


@pytest.mark.parametrize("levels", [150, 20000])
def test_bodies_nested_too_deep_are_bad_requests(served, levels: int) -> None:
    """kubectl refuses such documents itself; a raw request gets Go's decoder error, never a 500."""
    env, server, cfg = served
    cm = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"deep","annotations":%s}}' % _deep(levels)
    patch = '{"metadata":{"labels":%s}}' % _deep(levels)
    with server.lock:
        created = handle(env.backend, "POST", f"/api/v1/namespaces/{NS}/configmaps", "", {"content-type": "application/json"}, cm.encode())
        patched = handle(env.backend, "PATCH", f"/apis/apps/v1/namespaces/{NS}/deployments/user", "", {"content-type": "application/merge-patch+json"}, patch.encode())
        applied = handle(env.backend, "PATCH", f"/api/v1/namespaces/{NS}/configmaps/deep", "fieldManager=me", {"content-type": "application/apply-patch+yaml"}, cm.encode())
    assert (created.status, created.body["message"]) == (400, "invalid character '{' exceeded max depth")
    assert (patched.status, patched.body["message"]) == (400, "error decoding patch: invalid character '{' exceeded max depth")
    assert applied.status == 400 and applied.body["message"].startswith("error decoding YAML: yaml: exceeded max depth of ")
    assert "deep" not in _names(env, server, "ConfigMap")


def test_scale_bodies_of_the_wrong_shape_are_bad_requests(served) -> None:
    env, server, cfg = served
    path = f"/apis/apps/v1/namespaces/{NS}/deployments/user/scale"
    headers = {"content-type": "application/merge-patch+json"}
    with server.lock:
        before = env.backend.api.get("Deployment", "user", NS)["spec"]["replicas"]
        text = handle(env.backend, "PATCH", path, "", headers, b'{"spec":{"replicas":"two"}}')
        listed = handle(env.backend, "PATCH", path, "", headers, b"[1]")
        after = env.backend.api.get("Deployment", "user", NS)["spec"]["replicas"]
    assert (text.status, text.body["message"]) == (400, 'Scale in version "v1" cannot be handled as a Scale: json: cannot unmarshal string into Go struct field ScaleSpec.spec.replicas of type int32')
    assert (listed.status, listed.body["message"]) == (400, "json: cannot unmarshal array into Go value of type v1.Scale")
    assert after == before
