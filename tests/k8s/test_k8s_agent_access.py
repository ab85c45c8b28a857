"""The agent's Role: the verbs it grants and the ones it must not, decided as RBAC decides them, and asked
through the served API with the real ``kubectl auth can-i`` (answered by the namespace guard)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from sre_env.k8s.agent_access import AGENT_NAME, agent_role, agent_rules, agent_user
from sre_env.k8s.guard import access_review, guard_kubeconfig
from sre_env.k8s.sandbox import HostShell, scoped_kubeconfig
from sre_env.kube.rbac import StaticRbacObjects, allows

NS = "hotel-reservation"
USER = agent_user(NS)
RBAC = StaticRbacObjects(agent_role(NS))

#: (verb, resource, group, namespace, name): what an SRE repairing the namespace does
GRANTED = [
    ("get", "pods", "", NS, None), ("list", "pods", "", NS, None), ("watch", "pods", "", NS, None),
    ("get", "pods/log", "", NS, None), ("delete", "pods", "", NS, None), ("create", "pods/eviction", "", NS, None),
    ("create", "pods/exec", "", NS, None), ("list", "events", "", NS, None),
    ("patch", "deployments", "apps", NS, None), ("update", "statefulsets", "apps", NS, None), ("patch", "deployments/scale", "apps", NS, None),
    ("delete", "replicasets", "apps", NS, None), ("create", "jobs", "batch", NS, None),
    ("patch", "services", "", NS, None), ("create", "configmaps", "", NS, None), ("patch", "horizontalpodautoscalers", "autoscaling", NS, None),
    ("patch", "networkpolicies", "networking.k8s.io", NS, None), ("list", "roles", "rbac.authorization.k8s.io", NS, None),
    ("list", "nodes", "", None, None), ("get", "persistentvolumes", "", None, None), ("list", "nodes", "metrics.k8s.io", None, None),
    ("get", "namespaces", "", None, NS), ("create", "pods", "", NS, None),
]
#: escapes: token minting, RBAC writes, other namespaces, cluster-scoped writes, node proxy, secrets made or removed
ABSENT = [
    ("create", "serviceaccounts/token", "", NS, "default"), ("create", "serviceaccounts", "", NS, None), ("create", "secrets", "", NS, None),
    ("delete", "secrets", "", NS, None), ("list", "secrets", "", NS, None), ("get", "secrets", "", NS, "db"), ("patch", "secrets", "", NS, "db"),
    ("create", "roles", "rbac.authorization.k8s.io", NS, None), ("create", "rolebindings", "rbac.authorization.k8s.io", NS, None),
    ("patch", "roles", "rbac.authorization.k8s.io", NS, AGENT_NAME), ("create", "clusterrolebindings", "rbac.authorization.k8s.io", None, None),
    ("create", "clusterroles", "rbac.authorization.k8s.io", None, None), ("bind", "clusterroles", "rbac.authorization.k8s.io", None, "cluster-admin"),
    ("escalate", "roles", "rbac.authorization.k8s.io", NS, None), ("impersonate", "users", "", None, None),
    ("get", "nodes/proxy", "", None, "worker-1"), ("create", "nodes/proxy", "", None, "worker-1"), ("delete", "nodes", "", None, None),
    ("patch", "nodes", "", None, "worker-1"), ("delete", "namespaces", "", None, NS), ("patch", "namespaces", "", None, NS),
    ("get", "namespaces", "", None, "kube-system"), ("list", "pods", "", "kube-system", None), ("get", "secrets", "", "kube-system", None),
    ("create", "pods/exec", "", "kube-system", None), ("patch", "pods/ephemeralcontainers", "", NS, None), ("deletecollection", "pods", "", NS, None),
    ("patch", "resourcequotas", "", NS, None), ("create", "validatingwebhookconfigurations", "admissionregistration.k8s.io", None, None),
    ("create", "pods", "", "default", None), ("*", "*", "*", NS, None),
]


@pytest.mark.parametrize(("verb", "resource", "group", "ns", "name"), GRANTED)
def test_the_role_grants_what_an_sre_needs(verb: str, resource: str, group: str, ns: str | None, name: str | None) -> None:
    assert allows(RBAC, USER, verb, resource, group, ns, name)


@pytest.mark.parametrize(("verb", "resource", "group", "ns", "name"), ABSENT)
def test_the_role_grants_no_escape(verb: str, resource: str, group: str, ns: str | None, name: str | None) -> None:
    assert not allows(RBAC, USER, verb, resource, group, ns, name)


def test_no_rule_names_a_wildcard_or_an_escalating_verb() -> None:
    namespaced, cluster = agent_rules(NS)
    for rule in namespaced + cluster:
        assert "*" not in rule["verbs"] and "*" not in rule["resources"] and "*" not in rule["apiGroups"]
        assert not {"escalate", "bind", "impersonate", "deletecollection"} & set(rule["verbs"])
    assert all(set(r["verbs"]) <= {"get", "list", "watch"} for r in cluster)  # cluster-wide: reads only
    assert not any("serviceaccounts/token" in r["resources"] or "nodes/proxy" in r["resources"] for r in namespaced + cluster)
    assert not any("secrets" in r["resources"] for r in namespaced)  # no verified scenario's repair reads a Secret
    named = StaticRbacObjects(agent_role(NS, secret_names=("db",)))
    assert allows(named, USER, "get", "secrets", "", NS, "db") and allows(named, USER, "patch", "secrets", "", NS, "db")
    assert not allows(named, USER, "get", "secrets", "", NS, "other") and not allows(named, USER, "list", "secrets", "", NS, None)
    without = agent_rules(NS, create_pods=False)[0]
    assert not any("create" in r["verbs"] for r in without if "pods" in r["resources"])


def test_access_reviews_answer_json_and_refuse_nonsense() -> None:
    code, body = access_review(b'{"kind":"SelfSubjectAccessReview","apiVersion":"authorization.k8s.io/v1","spec":{"resourceAttributes":{"namespace":"hotel-reservation","verb":"delete","resource":"pods"}}}', NS, USER, rbac=RBAC)
    assert code == 201 and body["status"] == {"allowed": True}
    code, body = access_review(b'{"spec":{"nonResourceAttributes":{"path":"/version","verb":"get"}}}', NS, USER, rbac=RBAC)
    assert code == 201 and body["status"]["allowed"] is True
    code, body = access_review(b'{"spec":{}}', NS, USER, rbac=RBAC)
    assert code == 422 and body["reason"] == "Invalid"
    code, body = access_review(b"k8s\x00\xff\xff", NS, USER, rbac=RBAC)
    assert code == 415


#: (kubectl auth can-i arguments, the answer)
CAN_I = [
    (["delete", "pods"], "yes"),
    (["create", "pods", "--subresource=exec"], "yes"),
    (["patch", "deployments.apps"], "yes"),
    (["list", "nodes"], "yes"),
    (["get", "/version"], "yes"),
    (["create", "serviceaccounts", "--subresource=token"], "no"),
    (["create", "secrets"], "no"),
    (["list", "secrets"], "no"),
    (["create", "rolebindings.rbac.authorization.k8s.io"], "no"),
    (["create", "clusterrolebindings.rbac.authorization.k8s.io"], "no"),
    (["get", "nodes", "--subresource=proxy"], "no"),
    (["delete", f"namespaces/{NS}"], "no"),
    (["get", f"namespaces/{NS}"], "yes"),
    (["list", "pods", "-n", "kube-system"], "no"),
    (["list", "pods", "-A"], "no"),
    (["*", "*"], "no"),
]


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")
def test_real_kubectl_auth_can_i_through_the_served_api(paused, tmp_path: Path) -> None:
    from kubernetes import config

    from sre_env.k8s.api import KubeApi

    api = KubeApi(config.new_client_from_config(config_file=str(paused.kubeconfig)))
    creds = scoped_kubeconfig(api, paused.kubeconfig, NS, tmp_path / "agent")
    guard = guard_kubeconfig(creds.kubeconfig, NS, token=creds.guard_token, upstream_token=creds.upstream_token)
    assert guard is not None
    labels = lambda: paused.sim.api.get("Namespace", NS)["metadata"].get("labels") or {}  # noqa: E731
    with paused.server.lock:  # the served namespace says what the guard enforces
        assert labels()["pod-security.kubernetes.io/enforce"] == "baseline" and labels()["pod-security.kubernetes.io/warn"] == "restricted"
    box = HostShell(creds.kubeconfig)
    try:
        for args, answer in CAN_I:
            got = box.run("kubectl auth can-i " + " ".join(f"'{a}'" for a in args))
            assert (got.output.strip().splitlines() or [""])[-1] == answer and got.exit_code == (0 if answer == "yes" else 1), (args, got.output)
    finally:
        box.close()
        guard.stop()
        creds.revoke(api)
    with paused.server.lock:  # and its labels come back when the credentials go
        assert "pod-security.kubernetes.io/enforce" not in labels()
