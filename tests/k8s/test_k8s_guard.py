"""The namespace guard: the agent's Role and Pod Security, enforced in front of a server that cannot scope a token."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sre_env.k8s.guard import decide, guard_kubeconfig
from sre_env.k8s.sandbox import HostShell, scoped_kubeconfig

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
        # least privilege inside the namespace
        ("GET", f"/api/v1/namespaces/{NS}/secrets", "", False),
        ("GET", f"/api/v1/namespaces/{NS}/secrets/db", "", False),
        ("PATCH", f"/api/v1/namespaces/{NS}/secrets/db", "", False),
        ("POST", f"/api/v1/namespaces/{NS}/secrets", "", False),
        ("DELETE", f"/api/v1/namespaces/{NS}/secrets/db", "", False),
        ("POST", f"/api/v1/namespaces/{NS}/serviceaccounts", "", False),
        ("POST", f"/api/v1/namespaces/{NS}/serviceaccounts/default/token", "", False),
        ("POST", f"/apis/rbac.authorization.k8s.io/v1/namespaces/{NS}/rolebindings", "", False),
        ("PATCH", f"/apis/rbac.authorization.k8s.io/v1/namespaces/{NS}/roles/sre-env-agent", "", False),
        ("GET", f"/apis/rbac.authorization.k8s.io/v1/namespaces/{NS}/roles", "", True),
        ("POST", f"/api/v1/namespaces/{NS}/pods", "", True),
        ("PATCH", f"/api/v1/namespaces/{NS}/pods/geo-1/ephemeralcontainers", "", False),
        ("DELETE", f"/api/v1/namespaces/{NS}/pods", "", False),
        ("PATCH", f"/api/v1/namespaces/{NS}/resourcequotas/q", "", False),
        ("POST", f"/api/v1/namespaces/{NS}/services", "", True),
        ("PATCH", f"/apis/apps/v1/namespaces/{NS}/deployments/geo/scale", "", True),
        ("POST", f"/api/v1/namespaces/{NS}/pods/geo-1/exec", "command=ls", True),
        ("GET", f"/api/v1/namespaces/{NS}/pods/geo-1/exec", "command=ls", True),
        ("POST", "/api/v1/namespaces/kube-system/pods/etcd/exec", "command=ls", False),
        ("GET", "/api/v1/namespaces/kube-system/secrets", "", False),
        ("GET", "/api/v1/secrets", "", False),
        ("POST", "/api/v1/namespaces/kube-system/pods/etcd/eviction", "", False),
        ("POST", "/api/v1/nodes/worker-1/proxy/x", "", False),
        ("GET", "/api/v1/persistentvolumes", "", True),
        ("DELETE", "/api/v1/persistentvolumes/pv-1", "", False),
        ("GET", "/api/v1/namespaces/default", "", False),
        ("PATCH", f"/api/v1/namespaces/{NS}", "", False),
        ("GET", "/apis/metrics.k8s.io/v1beta1/pods", "", False),
        ("GET", f"/apis/metrics.k8s.io/v1beta1/namespaces/{NS}/pods", "", True),
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
    guard = guard_kubeconfig(creds.kubeconfig, NS, token=creds.guard_token, upstream_token=creds.upstream_token)
    assert guard is not None and guard.url in creds.kubeconfig.read_text()
    assert running.server.token not in creds.kubeconfig.read_text()  # the server's own token stays with the guard
    box = HostShell(creds.kubeconfig)
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


#: a pod spec Pod Security ``restricted`` admits
_RESTRICTED_OVERRIDES = (
    '{"apiVersion": "v1", "spec": {"securityContext": {"runAsNonRoot": true, "runAsUser": 65532, "seccompProfile": {"type": "RuntimeDefault"}},'
    ' "containers": [{"name": "probe", "image": "busybox", "command": ["sleep", "3600"],'
    ' "securityContext": {"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}}}]}}'
)


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_the_guard_authenticates_and_admits_like_a_real_cluster(paused, tmp_path: Path) -> None:
    from kubernetes import config

    from sre_env.k8s.api import KubeApi

    api = KubeApi(config.new_client_from_config(config_file=str(paused.kubeconfig)))
    creds = scoped_kubeconfig(api, paused.kubeconfig, NS, tmp_path / "agent")
    guard = guard_kubeconfig(creds.kubeconfig, NS, token=creds.guard_token, upstream_token=creds.upstream_token)
    assert guard is not None
    box = HostShell(creds.kubeconfig)
    try:
        # the token: around the guard (no credential the server takes) and at the guard (a wrong one) -> 401
        around = box.run(f"kubectl --server={paused.server.url} --insecure-skip-tls-verify get secrets -A")
        assert around.exit_code == 1 and "error: You must be logged in to the server" in around.output
        wrong = box.run("kubectl --token=guessed get pods")
        assert wrong.exit_code == 1 and "error: You must be logged in to the server" in wrong.output
        # no token minting, no Secrets made, no RBAC writes
        for command, refused in [
            ("kubectl create token default", 'cannot create resource "serviceaccounts/token"'),
            ("kubectl create secret generic leak --from-literal=a=b", 'cannot create resource "secrets"'),
            ("kubectl create clusterrolebinding own --clusterrole=cluster-admin --serviceaccount=hotel-reservation:sre-env-agent", 'cannot create resource "clusterrolebindings"'),
            ("kubectl -n kube-system get secrets", 'cannot list resource "secrets" in API group "" in the namespace "kube-system"'),
        ]:
            out = box.run(command)
            assert out.exit_code == 1 and "forbidden: User" in out.output and refused in out.output, (command, out.output)
        # the agent's own pods: restricted
        plain = box.run("kubectl run probe --image=busybox -- sleep 3600")
        assert plain.exit_code == 1 and plain.output.startswith('Error from server (Forbidden): pods "probe" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "probe" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "probe" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "probe" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "probe" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")'), plain.output
        ok = box.run(f"kubectl run probe --image=busybox --overrides='{_RESTRICTED_OVERRIDES}'")
        assert ok.exit_code == 0 and "pod/probe created" in ok.output, ok.output
        # templates: no new baseline violation (privileged, host namespaces, hostPath...), whatever the patch type
        privileged = '{"spec":{"template":{"spec":{"hostPID":true,"containers":[{"name":"hotel-reserv-geo","securityContext":{"privileged":true}}]}}}}'
        out = box.run(f"kubectl patch deploy geo -p '{privileged}'")
        assert out.exit_code == 1 and 'deployments.apps "geo" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostPID), privileged (container "hotel-reserv-geo" must not set securityContext.privileged=true)' in out.output, out.output
        mount = '[{"op":"add","path":"/spec/template/spec/volumes","value":[{"name":"root","hostPath":{"path":"/"}}]}]'
        out = box.run(f"kubectl patch deploy geo --type=json -p '{mount}'")
        assert out.exit_code == 1 and 'hostPath volumes (volume "root")' in out.output, out.output
        assert box.run("kubectl set env deploy/geo REPAIRED=1").exit_code == 0  # an ordinary repair still goes through
    finally:
        box.close()
        guard.stop()
    with paused.server.lock:
        spec = paused.sim.api.get("Deployment", "geo", NS)["spec"]["template"]["spec"]
        assert not spec.get("hostPID") and not spec.get("volumes") and not any((c.get("securityContext") or {}).get("privileged") for c in spec["containers"])
        paused.sim.api.delete("Pod", "probe", NS, force=True)
