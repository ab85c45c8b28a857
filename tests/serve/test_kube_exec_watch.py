"""``kubectl exec`` (WebSocket v5 channels) and watches (``get -w``, ``watch.Watch``) against ``serve``.

Exec runs the simulator's in-container commands: the real kubectl must print what
the built-in shell's ``kubectl exec`` prints, with the same exit status. Watches
must report the writes made while they are open, including the ones the
simulated controllers make as the clock advances.
"""

from __future__ import annotations

import gc
import json
import shutil
import subprocess
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from _kubectl import run_kubectl

import sre_env
from sre_env.shell import ShellContext, run_command

aiohttp = pytest.importorskip("aiohttp", reason="the [serve] extra (aiohttp) is not installed")
KUBECTL = shutil.which("kubectl")
needs_kubectl = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")

from sre_env.serve.kube_exec import exec_status, is_exec
from sre_env.serve.kube_watch import WatchState, is_watch
from sre_env.serve.server import IncidentServer

NS = "hotel-reservation"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    """The simulated clock stands still (speed 0): only the test's own writes change the cluster."""
    env = sre_env.SREEnv("TargetPortMisconfig")
    env.reset(seed=0)
    server = IncidentServer(env.backend, speed=0, prom_port=None).start()
    cfg = server.write_kubeconfig(tmp_path_factory.mktemp("kube") / "kubeconfig", NS)
    yield env, server, cfg
    server.stop()


def kubectl(cfg: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return run_kubectl(KUBECTL, cfg, *args, stdin=stdin)


def shell(env, server, command: str):
    with server.lock:
        return run_command(ShellContext(backend=env.backend, namespace=NS), command)


# ---------------------------------------------------------------------------------------- exec
EXECS = [
    "exec deploy/geo -- cat /etc/hostname",
    "exec deploy/geo -- sh -c 'exit 3'",
    "exec deploy/geo -- ls /nonexistent",
    "exec deploy/geo -- foo",
    "exec deploy/frontend -- env",
    "exec deploy/mongodb-geo -- mongo --quiet --eval 'db.version()'",
    "exec deploy/geo -c nope -- ls",
    "exec nope -- ls",
    "exec deploy/geo",
]


@needs_kubectl
@pytest.mark.parametrize("command", EXECS)
def test_real_kubectl_exec_prints_what_the_builtin_shell_prints(served, command: str) -> None:
    env, server, cfg = served
    import shlex

    real = kubectl(cfg, *shlex.split(command))
    ours = shell(env, server, "kubectl " + command)
    assert (real.stdout + real.stderr).strip("\n") == ours.output.strip("\n")
    assert real.returncode == ours.exit_code or (real.returncode == 1 and ours.exit_code == 1)


@needs_kubectl
def test_exec_exit_codes_propagate(served) -> None:
    env, server, cfg = served
    out = kubectl(cfg, "exec", "deploy/geo", "--", "sh", "-c", "exit 7")
    assert out.returncode == 7 and out.stderr.strip() == "command terminated with exit code 7"
    ok = kubectl(cfg, "exec", "deploy/geo", "-c", "hotel-reserv-geo", "--", "hostname")
    assert ok.returncode == 0 and ok.stdout.startswith("geo-")


@needs_kubectl
def test_exec_reads_piped_stdin(served) -> None:
    env, server, cfg = served
    script = kubectl(cfg, "exec", "-i", "deploy/geo", "--", "sh", stdin="echo piped-in\nhostname\n")
    assert script.returncode == 0, script.stderr
    assert script.stdout.splitlines()[0] == "piped-in" and script.stdout.splitlines()[1].startswith("geo-")
    count = kubectl(cfg, "exec", "-i", "deploy/geo", "--", "wc", "-l", stdin="a\nb\nc\n")
    assert count.returncode == 0 and count.stdout.strip() == "3"


@needs_kubectl
def test_exec_into_a_container_that_is_not_running_is_refused_like_the_kubelet(served) -> None:
    env, server, cfg = served
    made = kubectl(cfg, "run", "never-started", "--image=busybox:1.36", "--restart=Never", "--", "sleep", "3600")
    assert made.returncode == 0, made.stderr
    real = kubectl(cfg, "exec", "never-started", "--", "ls")
    ours = shell(env, server, "kubectl exec never-started -- ls")
    assert real.returncode == 1 and real.stderr.startswith("error: unable to upgrade connection: ")
    assert real.stderr.strip("\n") == ours.output.strip("\n")
    kubectl(cfg, "delete", "pod", "never-started", "--grace-period=0", "--force")


@pytest.mark.filterwarnings("ignore::ResourceWarning")
def test_the_kubernetes_client_streams_exec_over_websocket(served) -> None:
    k8s = pytest.importorskip("kubernetes", reason="the kubernetes client ([k8s] extra) is not installed")
    from kubernetes.stream import stream

    env, server, cfg = served
    with k8s.config.new_client_from_config(config_file=str(cfg)) as api:
        _exec_through_the_client(k8s, stream, k8s.client.CoreV1Api(api))
    gc.collect()  # websocket-client leaves its sockets to the collector: collect them here, where that is expected


def _exec_through_the_client(k8s, stream, v1) -> None:
    pod = v1.list_namespaced_pod(NS, label_selector="io.kompose.service=geo").items[0].metadata.name
    # _preload_content=False throughout: the client's preloading call never closes its socket
    resp = stream(v1.connect_get_namespaced_pod_exec, pod, NS, command=["cat", "/etc/hostname"], stderr=True, stdin=False, stdout=True, tty=False, _preload_content=False)
    resp.run_forever(timeout=10)
    assert resp.read_stdout(timeout=1).strip() == pod and resp.returncode == 0
    resp.close()
    resp = stream(v1.connect_get_namespaced_pod_exec, pod, NS, command=["sh", "-c", "exit 4"], stderr=True, stdin=False, stdout=True, tty=False, _preload_content=False)
    resp.run_forever(timeout=10)
    assert resp.returncode == 4
    resp.close()
    resp = stream(v1.connect_get_namespaced_pod_exec, pod, NS, command=["wc", "-l"], stderr=True, stdin=True, stdout=True, tty=False, _preload_content=False)
    resp.write_stdin("x\ny\n")
    resp.close_channel(0)  # v5: half-close stdin, the command runs
    resp.run_forever(timeout=10)
    assert resp.read_stdout(timeout=1).strip() == "2" and resp.returncode == 0
    resp.close()


def test_exec_status_matches_the_kubelet_status() -> None:
    assert exec_status(0, ["ls"]) == {"metadata": {}, "status": "Success"}
    st = exec_status(3, ["sh", "-c", "exit 3"])
    assert st["status"] == "Failure" and st["reason"] == "NonZeroExitCode"
    assert st["details"] == {"causes": [{"reason": "ExitCode", "message": "3"}]}
    assert st["message"] == "command terminated with non-zero exit code: error executing command [sh -c exit 3], exit code 3"
    assert is_exec("POST", f"/api/v1/namespaces/{NS}/pods/geo-1/exec") and is_exec("GET", f"/api/v1/namespaces/{NS}/pods/geo-1/exec")
    assert not is_exec("POST", f"/api/v1/namespaces/{NS}/pods/geo-1/log")


def test_exec_without_a_websocket_upgrade_is_a_bad_request(served) -> None:
    env, server, cfg = served
    with server.lock:
        pod = env.backend.api.list("Pod", NS, "io.kompose.service=geo")[0]["metadata"]["name"]
    code, body = _http_error(server, urllib.request.Request(f"{server.url}/api/v1/namespaces/{NS}/pods/{pod}/exec?command=ls&stdout=true", method="POST", headers=server.auth_headers))
    assert code == 400 and body["kind"] == "Status" and body["reason"] == "BadRequest"
    code, body = _http_error(server, urllib.request.Request(f"{server.url}/api/v1/namespaces/{NS}/pods/nope/exec?command=ls", method="POST", headers=server.auth_headers))
    assert code == 404 and body["message"] == 'pods "nope" not found' and body["details"] == {"name": "nope", "kind": "pods"}


# ---------------------------------------------------------------------------------------- watch
def _http_error(server, req: urllib.request.Request) -> tuple[int, dict]:
    """The status and Status body of a request the server refuses."""
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(req, timeout=10, context=server.client_ssl_context())
    with err.value:
        return err.value.code, json.loads(err.value.read())


def _watch_lines(server, url: str, seconds: float, accept: str = "application/json") -> list[dict]:
    req = urllib.request.Request(url, headers={"Accept": accept, **server.auth_headers})
    out: list[dict] = []
    with urllib.request.urlopen(req, timeout=seconds + 10, context=server.client_ssl_context()) as resp:
        for line in resp:
            if line.strip():
                out.append(json.loads(line))
    return out


def test_watch_reports_writes_made_while_it_is_open(served) -> None:
    env, server, cfg = served
    with server.lock:
        rv = int(json.loads(json.dumps(env.backend.api.get("Deployment", "geo", NS)))["metadata"]["resourceVersion"])
    result: list[dict] = []
    url = f"{server.url}/apis/apps/v1/namespaces/{NS}/deployments?watch=true&timeoutSeconds=2&resourceVersion={rv + 10**6}"
    t = threading.Thread(target=lambda: result.extend(_watch_lines(server, url, 2)))
    t.start()
    time.sleep(0.6)
    with server.lock:
        env.backend.api.scale("Deployment", "geo", NS, 3)
    t.join(15)
    assert not t.is_alive(), "timeoutSeconds must end the watch"
    assert [(e["type"], e["object"]["metadata"]["name"], e["object"]["spec"]["replicas"]) for e in result] == [("MODIFIED", "geo", 3)]
    with server.lock:
        env.backend.api.scale("Deployment", "geo", NS, 1)


def test_watch_starts_with_added_events_and_honours_selectors_and_tables(served) -> None:
    env, server, cfg = served
    base = f"{server.url}/api/v1/namespaces/{NS}/pods?watch=1&timeoutSeconds=1&labelSelector=io.kompose.service%3Dgeo"
    events = _watch_lines(server, base, 1)
    assert [e["type"] for e in events] == ["ADDED"] and events[0]["object"]["kind"] == "Pod"
    table = _watch_lines(server, base, 1, "application/json;as=Table;v=v1;g=meta.k8s.io,application/json")
    obj = table[0]["object"]
    assert obj["kind"] == "Table" and [c["name"] for c in obj["columnDefinitions"]][:3] == ["Name", "Ready", "Status"]
    assert obj["rows"][0]["cells"][0] == events[0]["object"]["metadata"]["name"]
    code, body = _http_error(server, urllib.request.Request(f"{server.url}/api/v1/namespaces/{NS}/pods?watch=1&labelSelector=a%20in%20b", headers=server.auth_headers))
    assert code == 400 and body["reason"] == "BadRequest"


@needs_kubectl
def test_kubectl_get_watch_prints_the_changes(served) -> None:
    env, server, cfg = served
    proc = subprocess.Popen([KUBECTL, f"--kubeconfig={cfg}", "get", "deploy", "-w", "--output-watch-events"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(2.0)
        assert kubectl(cfg, "scale", "deploy/search", "--replicas=2").returncode == 0
        time.sleep(1.5)
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=10)
    lines = out.splitlines()
    assert lines[0].split()[:2] == ["EVENT", "NAME"], (out, err)
    assert any(ln.split()[:3] == ["ADDED", "search", "1/1"] for ln in lines)
    assert any(ln.split()[:3] == ["MODIFIED", "search", "1/2"] for ln in lines), out
    kubectl(cfg, "scale", "deploy/search", "--replicas=1")


def test_watch_state_diffs_by_uid_and_resource_version() -> None:
    objs = {"a": {"metadata": {"name": "a", "namespace": "n", "uid": "1", "resourceVersion": "5"}}}

    class Store:
        kind_revision = {"Pod": 1}

    store = Store()
    state = WatchState("Pod", lambda: list(objs.values()), store)
    assert [t for t, _ in state.start("")] == ["ADDED"]
    assert state.poll() == []  # the kind's write counter did not move: nothing is listed
    objs["a"] = {"metadata": {"name": "a", "namespace": "n", "uid": "2", "resourceVersion": "9"}}
    objs["b"] = {"metadata": {"name": "b", "namespace": "n", "uid": "3", "resourceVersion": "10"}}
    store.kind_revision["Pod"] = 2
    assert [(t, o["metadata"]["uid"]) for t, o in state.poll()] == [("DELETED", "1"), ("ADDED", "2"), ("ADDED", "3")]
    del objs["b"]
    objs["a"]["metadata"]["resourceVersion"] = "11"
    store.kind_revision["Pod"] = 3
    assert [(t, o["metadata"]["name"]) for t, o in state.poll()] == [("DELETED", "b"), ("MODIFIED", "a")]
    later = WatchState("Pod", lambda: list(objs.values()), store)
    assert later.start("10") == [("MODIFIED", objs["a"])]  # only what was written after resourceVersion 10
    assert is_watch("GET", "watch=true&resourceVersion=3") and not is_watch("GET", "watch=false") and not is_watch("POST", "watch=1")


@pytest.fixture(scope="module")
def running(tmp_path_factory: pytest.TempPathFactory):
    """A server whose simulated clock runs 20x faster than the wall clock (controllers act)."""
    env = sre_env.SREEnv("TargetPortMisconfig")
    env.reset(seed=0)
    server = IncidentServer(env.backend, speed=20, prom_port=None).start()
    cfg = server.write_kubeconfig(tmp_path_factory.mktemp("kube-run") / "kubeconfig", NS)
    yield env, server, cfg
    server.stop()


def test_the_kubernetes_client_watch_sees_the_controllers_act(running) -> None:
    k8s = pytest.importorskip("kubernetes", reason="the kubernetes client ([k8s] extra) is not installed")
    env, server, cfg = running
    with k8s.config.new_client_from_config(config_file=str(cfg)) as api:
        _watch_through_the_client(k8s, k8s.client.CoreV1Api(api), k8s.client.AppsV1Api(api))


def _watch_through_the_client(k8s, v1, apps) -> None:

    def scale_up() -> None:
        time.sleep(0.8)
        apps.patch_namespaced_deployment_scale("frontend", NS, {"spec": {"replicas": 2}})

    threading.Thread(target=scale_up).start()
    seen: list[tuple[str, str]] = []
    for ev in k8s.watch.Watch().stream(v1.list_namespaced_pod, NS, label_selector="io.kompose.service=frontend", timeout_seconds=4):
        seen.append((ev["type"], ev["object"].metadata.name))
    added = [name for kind, name in seen if kind == "ADDED"]
    assert len(added) == 2 and len(set(added)) == 2, seen  # the existing pod, then the one the ReplicaSet controller created
    apps.patch_namespaced_deployment_scale("frontend", NS, {"spec": {"replicas": 1}})


@needs_kubectl
def test_kubectl_rollout_status_follows_a_rollout_through_the_watch(running) -> None:
    env, server, cfg = running
    assert kubectl(cfg, "rollout", "restart", "deploy/geo").returncode == 0
    status = kubectl(cfg, "rollout", "status", "deploy/geo", "--timeout=60s")
    assert status.returncode == 0, status.stderr
    lines = status.stdout.splitlines()
    assert lines[-1] == 'deployment "geo" successfully rolled out'
    assert any(ln.startswith('Waiting for deployment "geo" rollout to finish') for ln in lines)  # it saw the rollout progress


@needs_kubectl
def test_kubectl_logs_follow_streams_new_lines_until_the_container_stops(running) -> None:
    env, server, cfg = running
    proc = subprocess.Popen([KUBECTL, f"--kubeconfig={cfg}", "logs", "-f", "deploy/search", "--tail=1", "--timestamps"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(4.0)  # 80 simulated seconds of traffic
        with server.lock:
            pod = env.backend.api.list("Pod", NS, "io.kompose.service=search")[0]["metadata"]["name"]
        assert kubectl(cfg, "delete", "pod", pod, "--wait=false").returncode == 0
        out, err = proc.communicate(timeout=30)  # the stream ends with the container, as on a real cluster
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    lines = out.splitlines()
    stamps = [ln.split(" ", 1)[0] for ln in lines]
    assert len(lines) > 3 and stamps == sorted(stamps) and len(set(lines)) == len(lines)
    assert stamps[-1] > stamps[0]  # lines written after the follow began arrived


def test_a_followed_log_sends_each_line_once() -> None:
    from sre_env.serve.kube_logs import is_follow, new_lines

    text = "2026-03-02T09:00:01.000000000Z a\n2026-03-02T09:00:02.000000000Z b\n2026-03-02T09:00:02.000000000Z c\n2026-03-02T09:00:03.000000000Z d\n"
    assert new_lines(text, "2026-03-02T09:00:02.000000000Z", {"2026-03-02T09:00:02.000000000Z b"}) == ["2026-03-02T09:00:02.000000000Z c", "2026-03-02T09:00:03.000000000Z d"]
    assert new_lines(text, "", set()) == text.splitlines()
    assert is_follow("GET", f"/api/v1/namespaces/{NS}/pods/geo-1/log", "follow=true&container=geo")
    assert not is_follow("GET", f"/api/v1/namespaces/{NS}/pods/geo-1/log", "tailLines=3")
