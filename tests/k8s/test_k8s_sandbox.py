"""The agent's sandbox: scrubbed environment, namespace-scoped kubeconfig, locked-down container, no silent fallback."""

from __future__ import annotations

import base64
import shutil
from pathlib import Path

import pytest
import yaml

from sre_env.errors import ApiError
from sre_env.k8s.agent_access import POD_SECURITY_LABELS
from sre_env.k8s.guard import guard_kubeconfig
from sre_env.k8s.sandbox import (
    AGENT_NAME,
    DockerSandbox,
    HostShell,
    SandboxUnavailable,
    UnsandboxedWarning,
    docker_gateway,
    is_mutating,
    make_sandbox,
    resolve_sandbox_mode,
    scoped_kubeconfig,
)

NS = "hotel-reservation"
needs_kubectl = pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")


def _kubeconfig(path: Path, user: dict, cluster: dict | None = None) -> Path:
    cfg = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "c", "cluster": cluster or {"server": "https://10.0.0.1:6443"}}],
        "users": [{"name": "admin", "user": user}],
        "contexts": [{"name": "ctx", "context": {"cluster": "c", "user": "admin"}}],
        "current-context": "ctx",
    }
    path.write_text(yaml.safe_dump(cfg))
    return path


def test_the_host_shell_sees_no_harness_variable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-harness-secret")
    monkeypatch.setenv("KUBECONFIG", "/root/.kube/admin.conf")
    box = HostShell(_kubeconfig(tmp_path / "kc", {}))
    try:
        out = box.run("env")
        names = {line.split("=", 1)[0] for line in out.output.splitlines() if "=" in line}
        assert names <= {"PATH", "HOME", "KUBECONFIG", "PWD", "SHLVL", "_"}
        assert "sk-harness-secret" not in out.output and "admin.conf" not in out.output
        home = box.run('echo "$HOME $KUBECONFIG"').output.split()
        assert home[1] == f"{home[0]}/.kube/config" and Path(home[1]).read_text() == (tmp_path / "kc").read_text()
        assert home[0] != str(Path.home())
        slow = box.run("sleep 5", timeout_s=0.3)
        assert slow.exit_code == 124 and "timed out" in slow.output
        failed = box.run("echo oops >&2; exit 3")
        assert (failed.output, failed.exit_code) == ("oops\n", 3)
    finally:
        box.close()
    assert not box.home.exists()


@pytest.mark.parametrize(
    ("command", "mutating"),
    [
        ("kubectl get pods", False),
        ("kubectl -n x scale deploy/a --replicas=1", True),
        ("kubectl rollout status deploy/a", False),
        ("kubectl rollout restart deploy/a", True),
        ("kubectl get pods | grep a", False),
        ("kubectl get svc a -o yaml | kubectl apply -f -", True),
        ("echo 'unterminated", False),
    ],
)
def test_mutating_commands_are_recognised(command: str, mutating: bool) -> None:
    assert is_mutating(command) is mutating


def test_the_docker_sandbox_is_locked_down(tmp_path: Path) -> None:
    box = DockerSandbox(_kubeconfig(tmp_path / "kc", {}), start=False)
    try:
        argv = box.run_argv()
        flags = " ".join(argv)
        for flag in ("--cap-drop ALL", "--read-only", "--security-opt no-new-privileges", "--user 65532:65532", "--network bridge", "-e KUBECONFIG=/kube/config"):
            assert flag in flags
        assert "--network host" not in flags and "--net=host" not in flags  # kubectl --server must reach no host port
        mounts = [argv[i + 1] for i, a in enumerate(argv) if a == "-v"]
        assert mounts == [f"{box.kubeconfig}:/kube/config:ro"]
        assert box.exec_argv("kubectl get pods")[-3:] == ["/bin/sh", "-c", "kubectl get pods"]
    finally:
        box.close()


def test_without_a_docker_engine_auto_is_an_error_and_none_must_be_asked_for(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sre_env.k8s.sandbox.docker_available", lambda docker="docker": False)
    with pytest.raises(SandboxUnavailable, match="no Docker engine.*sandbox='none'"):
        resolve_sandbox_mode("auto")
    with pytest.raises(SandboxUnavailable):
        make_sandbox(_kubeconfig(tmp_path / "kc", {}), "auto")
    with pytest.warns(UnsandboxedWarning, match="as this user"):
        assert resolve_sandbox_mode("none") == "none"
    box = make_sandbox(tmp_path / "kc", "none")
    try:
        assert isinstance(box, HostShell)
    finally:
        box.close()
    monkeypatch.setattr("sre_env.k8s.sandbox.docker_available", lambda docker="docker": True)
    assert resolve_sandbox_mode("auto") == "docker" and resolve_sandbox_mode("docker") == "docker"
    for wrong in ("vm", "subprocess"):
        with pytest.raises(ValueError, match="'auto', 'docker', 'none'"):
            resolve_sandbox_mode(wrong)


def test_the_backend_refuses_auto_without_an_engine_and_warns_for_none(paused, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("sre_env.k8s.sandbox.docker_available", lambda docker="docker": False)
    with pytest.raises(SandboxUnavailable):
        paused.backend(sandbox="auto")
    with pytest.warns(UnsandboxedWarning):
        backend = paused.backend(sandbox="none")
    assert backend.sandbox_mode == "none"
    backend.close()


class _RbacApi:
    """Records what scoped_kubeconfig creates and patches; the token request can be made to fail."""

    def __init__(self, fail_token: bool = False, policies: bool = True, tokens: bool = True) -> None:
        self.created: list[dict] = []
        self.deleted: list[tuple[str, str, str]] = []
        self.patched: list[dict] = []
        self.fail_token = fail_token
        self.policies = policies
        self.tokens = tokens

    def serves_token_requests(self) -> bool:
        return self.tokens

    def serves(self, kind: str, api_version: str | None = None) -> bool:
        return self.policies and kind == "ValidatingAdmissionPolicy"

    def get(self, kind: str, name: str, namespace: str | None = None) -> dict:
        return {"kind": kind, "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name}}}

    def patch(self, kind: str, name: str, namespace: str | None, patch: dict, patch_type: str = "strategic") -> dict:
        self.patched.append(patch)
        return {}

    def create(self, obj: dict) -> dict:
        self.created.append(obj)
        return obj

    def delete(self, kind: str, name: str, namespace: str | None = None, *, force: bool = False) -> dict:
        self.deleted.append((kind, name, namespace or ""))
        return {}

    def service_account_token(self, name: str, namespace: str, seconds: int) -> str:
        if self.fail_token:
            raise ApiError(404, "NotFound", "the server could not find the requested resource")
        return f"token-for-{namespace}-{name}-{seconds}"


def test_a_cluster_with_auth_gets_an_rbac_scoped_token(tmp_path: Path) -> None:
    ca = tmp_path / "ca.crt"
    ca.write_bytes(b"-----BEGIN CERTIFICATE-----\nabc\n-----END CERTIFICATE-----\n")
    src = _kubeconfig(tmp_path / "admin", {"client-certificate-data": "Y2VydA==", "client-key-data": "a2V5"}, {"server": "https://10.0.0.1:6443", "certificate-authority": str(ca)})
    api = _RbacApi()
    creds = scoped_kubeconfig(api, src, NS, tmp_path / "agent")  # type: ignore[arg-type]
    assert creds.mode == "token"
    kinds = ["ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding", "ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"]
    assert [o["kind"] for o in api.created] == kinds
    cluster_role = api.created[3]
    assert all(set(r["verbs"]) <= {"get", "list", "watch"} for r in cluster_role["rules"])  # cluster-wide: reads only
    assert {r for rule in cluster_role["rules"] for r in rule["resources"]} == {"nodes", "persistentvolumes", "storageclasses", "namespaces"}
    assert api.patched == [{"metadata": {"labels": POD_SECURITY_LABELS}}]  # Pod Security baseline for every pod of the namespace
    role = api.created[1]
    assert role["metadata"]["namespace"] == NS and all(r["verbs"] for r in role["rules"])
    binding = api.created[2]
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": AGENT_NAME, "namespace": NS}] and binding["roleRef"]["kind"] == "Role"
    cfg = yaml.safe_load(creds.kubeconfig.read_text())
    user = cfg["users"][0]["user"]
    assert user == {"token": f"token-for-{NS}-{AGENT_NAME}-7200"}  # the admin's certificate never reaches the agent
    cluster = cfg["clusters"][0]["cluster"]
    assert base64.b64decode(cluster["certificate-authority-data"]) == ca.read_bytes()
    assert cfg["contexts"][0]["context"]["namespace"] == NS
    creds.revoke(api)  # type: ignore[arg-type]
    assert [d[0] for d in api.deleted] == kinds[::-1]
    assert api.patched[-1] == {"metadata": {"labels": {k: None for k in POD_SECURITY_LABELS}}}  # the labels it found come back


def test_without_admission_policies_the_agent_creates_no_pods(tmp_path: Path) -> None:
    api = _RbacApi(policies=False)
    scoped_kubeconfig(api, _kubeconfig(tmp_path / "admin", {"token": "admin-token"}), NS, tmp_path / "agent")  # type: ignore[arg-type]
    assert [o["kind"] for o in api.created] == ["ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"]
    pod_rules = [r for r in api.created[1]["rules"] if "pods" in r["resources"]]
    assert not any("create" in r["verbs"] for r in pod_rules)


def test_a_server_that_cannot_mint_tokens_gets_the_guard_and_never_sees_the_harness_token(tmp_path: Path) -> None:
    api = _RbacApi(tokens=False)
    creds = scoped_kubeconfig(api, _kubeconfig(tmp_path / "admin", {"token": "the-servers-token"}, {"server": "http://127.0.0.1:6443"}), NS, tmp_path / "agent")  # type: ignore[arg-type]
    # nothing is created for the agent, but the namespace is labelled with what the guard enforces
    assert creds.mode == "guard" and not api.created and api.patched == [{"metadata": {"labels": POD_SECURITY_LABELS}}]
    assert creds.upstream_token == "the-servers-token" and creds.guard_token and creds.guard_token != creds.upstream_token
    text = creds.kubeconfig.read_text()
    assert "the-servers-token" not in text and yaml.safe_load(text)["users"][0]["user"] == {"token": creds.guard_token}
    with pytest.raises(ValueError, match="forwards a bearer token only"):
        scoped_kubeconfig(api, _kubeconfig(tmp_path / "cert", {"client-certificate-data": "Y2VydA=="}), NS, tmp_path / "agent2")  # type: ignore[arg-type]


def test_a_failed_token_request_removes_what_it_created(tmp_path: Path) -> None:
    src = _kubeconfig(tmp_path / "admin", {"token": "admin-token"})
    api = _RbacApi(fail_token=True)
    with pytest.raises(ApiError, match="namespace-scoped credentials"):
        scoped_kubeconfig(api, src, NS, tmp_path / "agent")  # type: ignore[arg-type]
    assert len(api.deleted) == 7 and not (tmp_path / "agent").exists()
    assert api.patched[-1] == {"metadata": {"labels": {k: None for k in POD_SECURITY_LABELS}}}


@needs_kubectl
def test_real_kubectl_in_the_sandbox_works_in_the_namespace(paused, tmp_path: Path) -> None:
    from kubernetes import config

    from sre_env.k8s.api import KubeApi

    api = KubeApi(config.new_client_from_config(config_file=str(paused.kubeconfig)))
    creds = scoped_kubeconfig(api, paused.kubeconfig, NS, tmp_path / "agent")
    assert creds.mode == "guard" and not creds.created  # the served simulator mints no tokens: the guard scopes the agent
    assert creds.upstream_token == paused.server.token
    guard = guard_kubeconfig(creds.kubeconfig, NS, token=creds.guard_token, upstream_token=creds.upstream_token)
    assert guard is not None
    box = HostShell(creds.kubeconfig)
    try:
        out = box.run("kubectl get deploy | grep -c hotel-reserv || kubectl get deploy")
        assert out.exit_code == 0, out.output
        listing = box.run("kubectl get deploy").output
        assert "frontend" in listing and "mongodb-geo" in listing  # the app namespace without -n
        scaled = box.run("kubectl scale deployment/geo --replicas=2")
        assert scaled.exit_code == 0 and scaled.mutating and "scaled" in scaled.output
        assert box.run("kubectl get pods nope").exit_code == 1
        try:
            import sre_env.serve.kube_exec  # noqa: F401 - exec is served: the agent's kubectl exec works too
        except ImportError:
            return
        shown = box.run("kubectl exec deploy/geo -- printenv CONSUL_ADDRESS")
        assert (shown.output, shown.exit_code) == ("consul:8500\n", 0)
    finally:
        box.close()
        guard.stop()


def test_the_docker_sandbox_lifecycle_with_a_stand_in_engine(tmp_path: Path) -> None:
    """A stand-in ``docker`` (records its argv; ``exec`` runs the command locally) drives start, run and close."""
    log = tmp_path / "docker.log"
    fake = tmp_path / "docker"
    fake.write_text(
        "#!/bin/sh\n"
        f'echo "$@" >> {log}\n'
        'case "$1" in\n'
        '  info) echo 28.2.2 ;;\n'
        '  run) echo 0123456789abcdef ;;\n'
        '  exec) shift $(($# - 1)); exec /bin/sh -c "$1" ;;\n'
        "esac\n"
    )
    fake.chmod(0o755)
    from sre_env.k8s.sandbox import docker_available

    assert docker_available(str(fake)) and not docker_available(str(tmp_path / "absent"))
    box = DockerSandbox(_kubeconfig(tmp_path / "kc", {}), docker=str(fake))
    out = box.run("echo from-the-container; exit 4")
    assert (out.output, out.exit_code, out.mutating) == ("from-the-container\n", 4, False)
    box.close()
    calls = [line.split()[0] for line in log.read_text().splitlines()]
    assert calls == ["info", "run", "exec", "rm"]
    assert f"rm -f {box.name}" in log.read_text() and not box.kubeconfig.exists()


def test_the_bridge_gateway_comes_from_docker(tmp_path: Path) -> None:
    fake = tmp_path / "docker"
    fake.write_text('#!/bin/sh\ncase "$3" in\n  bridge) echo "172.17.0.1 fd00::1 " ;;\n  *) echo "no such network" >&2; exit 1 ;;\nesac\n')
    fake.chmod(0o755)
    assert docker_gateway(str(fake)) == "172.17.0.1"
    with pytest.raises(SandboxUnavailable, match="no such network"):
        docker_gateway(str(fake), "other")


def test_the_sandbox_gets_a_network_of_its_own(tmp_path: Path) -> None:
    """A bridge without inter-container traffic, made per sandbox and removed after it; the container joins it."""
    from sre_env.k8s.sandbox import create_network, remove_network

    log = tmp_path / "docker.log"
    fake = tmp_path / "docker"
    fake.write_text(f'#!/bin/sh\necho "$@" >> {log}\n')
    fake.chmod(0o755)
    name = create_network(str(fake))
    assert name.startswith("sre-env-agent-")
    created = log.read_text().split()
    assert created[:4] == ["network", "create", "--driver", "bridge"] and "com.docker.network.bridge.enable_icc=false" in created and created[-1] == name
    box = DockerSandbox(_kubeconfig(tmp_path / "kc", {}), docker=str(fake), network=name, start=False)
    assert f"--network {name}" in " ".join(box.run_argv())
    box.close()
    remove_network(name, str(fake))
    assert log.read_text().splitlines()[-1] == f"network rm {name}"
    failing = tmp_path / "failing"
    failing.write_text('#!/bin/sh\necho "permission denied" >&2; exit 1\n')
    failing.chmod(0o755)
    with pytest.raises(SandboxUnavailable, match="permission denied"):
        create_network(str(failing))
