"""The namespace guard: what the agent's Role allows, enforced in front of a server without authentication."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sre_env.k8s.guard import decide, guard_kubeconfig
from sre_env.k8s.sandbox import SubprocessSandbox, scoped_kubeconfig

NS = "hotel-reservation"
USER = f"system:serviceaccount:{NS}:sre-env-agent"


@pytest.mark.parametrize(
    ("method", "path", "query", "allowed"),
    [
        ("GET", "/api", "", True),
        ("GET", "/apis/apps/v1", "", True),
        ("GET", "/version", "", True),
        ("GET", f"/api/v1/namespaces/{NS}/pods", "", True),
        ("DELETE", f"/apis/apps/v1/namespaces/{NS}/deployments/geo", "", True),
        ("POST", f"/api/v1/namespaces/{NS}/pods/geo-1/eviction", "", True),
        ("GET", f"/api/v1/namespaces/{NS}", "", True),
        ("GET", "/api/v1/nodes", "watch=true", True),
        ("GET", "/apis/metrics.k8s.io/v1beta1/nodes", "", True),
        ("GET", "/api/v1/namespaces/kube-system/pods", "", False),
        ("GET", "/api/v1/pods", "", False),
        ("DELETE", f"/api/v1/namespaces/{NS}", "", False),
        ("GET", "/api/v1/namespaces", "", False),
        ("PATCH", "/api/v1/nodes/worker-1", "", False),
        ("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", "", False),
        ("POST", "/api", "", False),
    ],
)
def test_decisions_follow_the_agents_roles(method: str, path: str, query: str, allowed: bool) -> None:
    assert (decide(method, path, query, NS, USER) is None) is allowed


def test_refusals_read_like_rbac() -> None:
    assert decide("GET", "/api/v1/namespaces/kube-system/pods", "", NS, USER) == (
        f'pods is forbidden: User "{USER}" cannot list resource "pods" in API group "" in the namespace "kube-system"'
    )
    assert decide("POST", "/api/v1/namespaces/default/pods/x/exec", "", NS, USER) == (
        f'pods "x" is forbidden: User "{USER}" cannot create resource "pods/exec" in API group "" in the namespace "default"'
    )
    assert decide("DELETE", "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/gk", "", NS, USER) == (
        f'validatingwebhookconfigurations.admissionregistration.k8s.io "gk" is forbidden: User "{USER}" cannot delete resource '
        '"validatingwebhookconfigurations" in API group "admissionregistration.k8s.io" at the cluster scope'
    )


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_real_kubectl_through_the_guard(running, tmp_path: Path) -> None:
    from kubernetes import config

    from sre_env.k8s.api import KubeApi

    api = KubeApi(config.new_client_from_config(config_file=str(running.kubeconfig)))
    creds = scoped_kubeconfig(api, running.kubeconfig, NS, tmp_path / "agent")
    guard = guard_kubeconfig(creds.kubeconfig, NS)
    assert guard is not None and guard.url in creds.kubeconfig.read_text()
    box = SubprocessSandbox(creds.kubeconfig)
    try:
        assert "frontend" in box.run("kubectl get deploy").output
        refused = box.run("kubectl get pods -n kube-system")
        assert refused.exit_code == 1 and refused.output.startswith("Error from server (Forbidden): pods is forbidden")
        assert box.run("kubectl get pods -A").exit_code == 1
        assert box.run("kubectl delete ns hotel-reservation").exit_code == 1
        assert "worker-1" in box.run("kubectl get nodes").output
        rolled = box.run("kubectl rollout restart deploy/geo && kubectl rollout status deploy/geo --timeout=60s", timeout_s=90)
        assert rolled.exit_code == 0 and 'deployment "geo" successfully rolled out' in rolled.output  # a watch, relayed
        try:
            import sre_env.serve.kube_exec  # noqa: F401
        except ImportError:
            return
        shown = box.run("kubectl exec deploy/geo -- printenv CONSUL_ADDRESS")  # a websocket, relayed
        assert (shown.output, shown.exit_code) == ("consul:8500\n", 0)
        missing = box.run("kubectl exec nope -- ls")
        assert missing.exit_code == 1 and 'pods "nope" not found' in missing.output
    finally:
        box.close()
        guard.stop()
    with running.server.lock:
        assert running.sim.api.get("Namespace", NS)["status"]["phase"] == "Active"
