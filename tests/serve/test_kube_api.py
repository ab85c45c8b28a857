"""The simulator behind the Kubernetes API, driven by the real kubectl.

Fidelity: for the same cluster state, the real ``kubectl get`` against
``sre-env serve`` and the built-in shell's ``kubectl get`` must print the same
table; a difference is a bug in one of them.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest
from _kubectl import run_kubectl

import sre_env
from sre_env.kube.timefmt import human_age
from sre_env.serve.kube_api import handle
from sre_env.shell import ShellContext, run_command

aiohttp = pytest.importorskip("aiohttp", reason="the [serve] extra (aiohttp) is not installed")
KUBECTL = shutil.which("kubectl")
needs_kubectl = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")

from sre_env.serve.server import IncidentServer  # noqa: E402

NS = "hotel-reservation"


#: the wall clock the served times are anchored to: set to the current second before each kubectl
#: call (``sync_wall``), so the shift is known exactly and kubectl's own clock is at most ~1 s ahead
_WALL = [time.time()]


def sync_wall() -> None:
    """Anchor the served clock at this wall second (the simulated clock stands still: speed 0)."""
    _WALL[0] = float(int(time.time()))


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    env = sre_env.SREEnv("TargetPortMisconfig")
    env.reset(seed=0)
    server = IncidentServer(env.backend, speed=0, wall_clock=lambda: _WALL[0]).start()
    cfg = server.write_kubeconfig(tmp_path_factory.mktemp("kube") / "kubeconfig", NS)
    yield env, server, cfg
    server.stop()


def kubectl(cfg: Path, *args: str) -> subprocess.CompletedProcess:
    sync_wall()
    return run_kubectl(KUBECTL, cfg, *args)


GETS = [
    "get pods", "get pods -o wide", "get pods -A", "get pods --show-labels", "get pods -l io.kompose.service=geo",
    "get svc", "get svc -o wide", "get deploy", "get deploy -o wide", "get deploy -A", "get rs", "get sts -A", "get ds -A",
    "get nodes", "get nodes -o wide", "get ns", "get cm", "get secrets", "get sa", "get pvc", "get pv", "get sc", "get ep",
    "get pod nope", "get frobs", "top pods", "top nodes", "rollout status deployment/geo",
    "get all", "get deploy,svc", "get rs -o wide", "get sts -A -o wide", "get ds -A -o wide", "get ep -o wide", "get cm -A",
    "get events", "get ev -A", "get pods -o name", "get pods -A -o wide", "get nodes --show-labels",
    "get pods --field-selector status.phase=Running,spec.nodeName=worker-1",
    "get pods --field-selector foo=bar", "get deploy --field-selector spec.replicas=1",
]
#: describe of the core kinds; the real kubectl computes ages and prints dates from its own clock and the
#: served (wall-clock) timestamps: the same ages as the shell, up to the second or two kubectl takes
DESCRIBES = [
    "describe pods", "describe pod -l io.kompose.service=geo", "describe deploy", "describe rs", "describe svc",
    "describe ep", "describe nodes", "describe node worker-1", "describe cm", "describe secret", "describe ns",
    "describe ns hotel-reservation", "describe sts -A", "describe ds -A", "describe pvc", "describe pv", "describe sa",
    "describe deploy nope", "describe svc -A",
]
#: whose map-valued fields kubectl prints in Go's random map order
_UNORDERED = ("describe cm", "describe secret")
_AGE = re.compile(r"(?<![\w.:/-])(?=\d)(?:\d+y)?(?:\d+d)?(?:\d+h)?(?:\d+m)?(?:\d+s)?(?![\w.:/%-])")
#: describe's dates (Go's RFC1123Z)
_DATE = re.compile(r"\w{3}, \d{2} \w{3} \d{4} \d{2}:\d{2}:\d{2} \+0000")
_UNITS = {"y": 365 * 86400, "d": 86400, "h": 3600, "m": 60, "s": 1}


def _masked(text: str, command: str) -> list[str]:
    """Lines with client-side ages masked and tab-aligned spacing collapsed (the age width moves the columns)."""
    lines = [" ".join(_AGE.sub("<age>", ln).split()) for ln in text.strip("\n").splitlines()]
    return sorted(lines) if command.startswith(_UNORDERED) else lines


def _seconds(age: str) -> tuple[int, int]:
    """An age's lower bound in seconds and the size of its last unit (``5m`` is 300..359 s)."""
    parts = re.findall(r"(\d+)([ydhms])", age)
    return sum(int(n) * _UNITS[u] for n, u in parts), _UNITS[parts[-1][1]]


def _same_age(real: str, ours: str, slack_s: int = 3) -> bool:
    """kubectl's age is the shell's, read up to ``slack_s`` seconds later (kubectl reads its own clock)."""
    lo, unit = _seconds(ours)
    return real == ours or any(human_age(lo + d) == real for d in range(unit + slack_s))


def _shift_dates(text: str, offset: int) -> str:
    """The shell's simulated dates as the served clock shows them."""
    fmt = "%a, %d %b %Y %H:%M:%S +0000"
    return _DATE.sub(lambda m: (datetime.strptime(m.group(0), fmt) + timedelta(seconds=offset)).strftime(fmt), text)


def assert_same_describe(real: str, ours: str, command: str, offset: int) -> None:
    """Line for line the same, dates shifted to the served clock, ages equal up to kubectl's reading delay."""
    ours = _shift_dates(ours, offset)
    assert _masked(real, command) == _masked(ours, command)
    real_ages = [a for ln in real.splitlines() for a in _AGE.findall(ln)]
    our_ages = [a for ln in ours.splitlines() for a in _AGE.findall(ln)]
    if command.startswith(_UNORDERED):
        real_ages, our_ages = sorted(real_ages), sorted(our_ages)
    bad = [(r, o) for r, o in zip(real_ages, our_ages) if not _same_age(r, o)]
    assert len(real_ages) == len(our_ages) and not bad, bad


@needs_kubectl
@pytest.mark.parametrize("command", GETS)
def test_real_kubectl_prints_what_the_builtin_shell_prints(served, command: str) -> None:
    env, server, cfg = served
    real = kubectl(cfg, *command.split())
    with server.lock:
        ours = run_command(ShellContext(backend=env.backend, namespace=NS), "kubectl " + command)
    if command == "get frobs":
        assert real.returncode != 0 and 'the server doesn\'t have a resource type "frobs"' in real.stderr
        return
    assert (real.stdout + real.stderr).strip("\n") == ours.output.strip("\n")
    assert (real.returncode == 0) == (ours.exit_code == 0)


@needs_kubectl
@pytest.mark.parametrize("command", DESCRIBES)
def test_real_kubectl_describes_what_the_builtin_shell_describes(served, command: str) -> None:
    env, server, cfg = served
    real = kubectl(cfg, *command.split())
    with server.lock:
        ours = run_command(ShellContext(backend=env.backend, namespace=NS), "kubectl " + command)
        offset = server.offset()
    assert_same_describe(real.stdout + real.stderr, ours.output, command, offset)
    assert (real.returncode == 0) == (ours.exit_code == 0)


@needs_kubectl
def test_describe_service_reads_endpoint_slices_like_kubectl(tmp_path: Path) -> None:
    """Five ready endpoints: kubectl shows three and "+ 2 more..." (from the EndpointSlices the server derives)."""
    env = sre_env.SREEnv("TargetPortMisconfig")
    env.reset(seed=0)
    env.backend.api.scale("Deployment", "geo", NS, 5)
    env.backend.advance(120)
    server = IncidentServer(env.backend, speed=0, prom_port=None, wall_clock=lambda: _WALL[0]).start()
    try:
        cfg = server.write_kubeconfig(tmp_path / "kubeconfig", NS)
        real = kubectl(cfg, "describe", "svc", "geo")
        with server.lock:
            ours = run_command(ShellContext(backend=env.backend, namespace=NS), "kubectl describe svc geo")
            offset = server.offset()
    finally:
        server.stop()
    line = next(ln for ln in real.stdout.splitlines() if ln.startswith("Endpoints:"))
    assert line.endswith(" + 2 more...") and line.count(":8083") == 3
    assert_same_describe(real.stdout, ours.output, "describe svc", offset)


@needs_kubectl
def test_mutating_verbs_change_the_simulated_cluster(served) -> None:
    env, server, cfg = served
    assert kubectl(cfg, "scale", "deployment/geo", "--replicas=2").stdout.strip() == "deployment.apps/geo scaled"
    assert kubectl(cfg, "cordon", "worker-3").stdout.strip() == "node/worker-3 cordoned"
    patch = kubectl(cfg, "patch", "deployment", "geo", "--type=json", "-p", '[{"op":"replace","path":"/spec/replicas","value":1}]')
    assert patch.returncode == 0, patch.stderr
    assert kubectl(cfg, "annotate", "svc", "geo", "team=maps").returncode == 0
    assert kubectl(cfg, "rollout", "restart", "deployment/search").stdout.strip() == "deployment.apps/search restarted"
    out = kubectl(cfg, "delete", "pod", "-l", "io.kompose.service=user", "--wait=false")
    assert out.returncode == 0 and "deleted" in out.stdout
    with server.lock:
        api = env.backend.api
        assert api.get("Deployment", "geo", NS)["spec"]["replicas"] == 1
        assert api.get("Node", "worker-3")["spec"].get("unschedulable") is True
        assert api.get("Service", "geo", NS)["metadata"]["annotations"]["team"] == "maps"
        assert "kubectl.kubernetes.io/restartedAt" in api.get("Deployment", "search", NS)["spec"]["template"]["metadata"]["annotations"]
    assert kubectl(cfg, "uncordon", "worker-3").returncode == 0


@needs_kubectl
def test_logs_and_json_output(served) -> None:
    env, server, cfg = served
    logs = kubectl(cfg, "logs", "deployment/frontend", "--tail=3")
    assert logs.returncode == 0 and len(logs.stdout.splitlines()) == 3
    pods = json.loads(kubectl(cfg, "get", "pods", "-o", "json").stdout)
    assert pods["kind"] == "List" and all(p["metadata"]["namespace"] == NS for p in pods["items"])
    name = kubectl(cfg, "get", "deploy", "geo", "-o", "jsonpath={.metadata.name}").stdout
    assert name == "geo"


def test_errors_are_status_objects() -> None:
    env = sre_env.SREEnv("TargetPortMisconfig")
    env.reset(seed=0)
    r = handle(env.backend, "GET", f"/api/v1/namespaces/{NS}/pods/nope", "", {}, b"")
    assert r.status == 404 and r.body["kind"] == "Status" and r.body["reason"] == "NotFound" and r.body["message"] == 'pods "nope" not found'
    r = handle(env.backend, "PATCH", f"/apis/apps/v1/namespaces/{NS}/deployments/geo", "", {"Content-Type": "text/plain"}, b"{}")
    assert r.status == 415 and r.body["reason"] == "UnsupportedMediaType"
    r = handle(env.backend, "POST", f"/api/v1/namespaces/{NS}/pods", "", {}, b"{not json")
    assert r.status == 400 and r.body["kind"] == "Status"
    r = handle(env.backend, "GET", "/apis/nope.example.com/v1", "", {}, b"")
    assert r.status == 404
    r = handle(env.backend, "GET", "/api/v1", "", {}, b"")
    names = {res["name"] for res in r.body["resources"]}
    assert {"pods", "pods/log", "services", "nodes", "limitranges"} <= names
    assert "all" in next(res for res in r.body["resources"] if res["name"] == "pods")["categories"]


def test_bad_requests_get_the_api_servers_error_shapes() -> None:
    env = sre_env.SREEnv("TargetPortMisconfig")
    env.reset(seed=0)
    deploy = f"/apis/apps/v1/namespaces/{NS}/deployments/geo"

    def call(method: str, path: str, query: str = "", ctype: str = "", body: bytes = b"") -> tuple[int, dict]:
        r = handle(env.backend, method, path, query, {"Content-Type": ctype} if ctype else {}, body)
        assert r.body["kind"] == "Status" and r.body["apiVersion"] == "v1" and r.body["status"] == "Failure" and r.body["code"] == r.status
        return r.status, r.body

    code, body = call("PATCH", deploy, ctype="application/merge-patch+json", body=b"{spec: 1}")
    assert (code, body["reason"], body["message"]) == (400, "BadRequest", "error decoding patch: invalid character 's' looking for beginning of object key string")
    code, body = call("PATCH", deploy, ctype="application/json-patch+json", body=b'{"op": "replace"}')
    assert (code, body["message"]) == (400, "json: cannot unmarshal object into Go value of type jsonpatch.Patch")
    code, body = call("PATCH", deploy, ctype="application/strategic-merge-patch+json", body=b'{"spec": ')
    assert (code, body["message"]) == (400, "error decoding patch: unexpected end of JSON input")
    code, body = call("GET", f"/api/v1/namespaces/{NS}/pods", "fieldSelector=foo%3Dbar")
    assert (code, body["reason"], body["message"]) == (400, "BadRequest", "field label not supported: foo")
    code, body = call("GET", f"/apis/apps/v1/namespaces/{NS}/deployments", "fieldSelector=spec.replicas%3D1")
    assert body["message"] == '"spec.replicas" is not a known field selector: only "metadata.name", "metadata.namespace"'
    code, body = call("GET", f"/api/v1/namespaces/{NS}/pods/geo/frobnicate")
    assert (code, body["reason"], body["message"]) == (404, "NotFound", "the server could not find the requested resource")
    code, body = call("GET", f"/apis/apps/v1/namespaces/{NS}/deployments/nope")
    assert (code, body["details"]) == (404, {"name": "nope", "group": "apps", "kind": "deployments"})
    code, body = call("DELETE", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/worker-1")
    assert (code, body["reason"]) == (405, "MethodNotAllowed")
    code, body = call("GET", "/apis/discovery.k8s.io/v1/namespaces/hotel-reservation/endpointslices/nope")
    assert (code, body["message"]) == (404, 'endpointslices.discovery.k8s.io "nope" not found')


def test_derived_kinds_follow_the_simulated_cluster() -> None:
    env = sre_env.SREEnv("TargetPortMisconfig")
    env.reset(seed=0)
    slices = handle(env.backend, "GET", f"/apis/discovery.k8s.io/v1/namespaces/{NS}/endpointslices", "labelSelector=kubernetes.io%2Fservice-name%3Dgeo", {}, b"").body["items"]
    ep = env.backend.api.get("Endpoints", "geo", NS)
    assert [e["addresses"][0] for e in slices[0]["endpoints"]] == [a["ip"] for a in ep["subsets"][0]["addresses"]]
    lease = handle(env.backend, "GET", "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/worker-2", "", {}, b"").body
    assert lease["spec"]["holderIdentity"] == "worker-2" and lease["spec"]["leaseDurationSeconds"] == 40
    assert handle(env.backend, "GET", f"/api/v1/namespaces/{NS}/limitranges", "", {}, b"").body["items"] == []


def test_the_kubernetes_python_client_works_against_it(served) -> None:
    k8s = pytest.importorskip("kubernetes", reason="the kubernetes client ([k8s] extra) is not installed")
    env, server, cfg = served
    api_client = k8s.config.new_client_from_config(config_file=str(cfg))
    v1, apps = k8s.client.CoreV1Api(api_client), k8s.client.AppsV1Api(api_client)
    pods = v1.list_namespaced_pod(NS, label_selector="io.kompose.service=frontend")
    assert len(pods.items) == 1 and pods.items[0].status.phase == "Running"
    assert v1.read_namespaced_pod_log(pods.items[0].metadata.name, NS, tail_lines=2).count("\n") >= 1
    apps.patch_namespaced_deployment_scale("frontend", NS, {"spec": {"replicas": 2}})
    assert apps.read_namespaced_deployment("frontend", NS).spec.replicas == 2
    apps.patch_namespaced_deployment_scale("frontend", NS, {"spec": {"replicas": 1}})
    with pytest.raises(k8s.client.ApiException) as err:
        v1.read_namespaced_pod("nope", NS)
    assert err.value.status == 404
    assert {n.metadata.name for n in v1.list_node().items} >= {"worker-1", "worker-2", "worker-3"}
