"""Pod Security Standards: the checks and their wording, as Pod Security admission prints them."""

from __future__ import annotations

from sre_env.kube.pod_security import forbidden_message, new_violations, pod_spec_of, violations

RESTRICTED = {
    "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
    "containers": [{"name": "a", "image": "x", "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]}}}],
    "volumes": [{"name": "c", "configMap": {"name": "c"}}, {"name": "t", "emptyDir": {}}],
}
ESCAPE = {
    "hostNetwork": True,
    "containers": [{"name": "a", "image": "x", "securityContext": {"privileged": True, "capabilities": {"add": ["SYS_ADMIN"]}}, "ports": [{"containerPort": 80, "hostPort": 80}]}],
    "volumes": [{"name": "h", "hostPath": {"path": "/"}}],
}


def test_a_restricted_pod_passes_both_levels() -> None:
    assert violations(RESTRICTED, "restricted") == [] and violations(RESTRICTED, "baseline") == []
    assert violations(ESCAPE, "privileged") == []


def test_baseline_refuses_every_way_onto_the_node() -> None:
    assert [r for r, _ in violations(ESCAPE, "baseline")] == ["host namespaces", "hostPort", "privileged", "non-default capabilities", "hostPath volumes"]


def test_the_refusal_reads_like_pod_security_admission() -> None:
    found = violations({"containers": [{"name": "a", "image": "x"}]}, "restricted")
    assert forbidden_message("pods", "p", "restricted", found) == (
        'pods "p" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false '
        '(container "a" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities '
        '(container "a" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "a" '
        'must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "a" must set '
        'securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")'
    )


def test_root_and_other_volumes_fail_restricted() -> None:
    spec = {**RESTRICTED, "securityContext": {**RESTRICTED["securityContext"], "runAsUser": 0}, "volumes": [{"name": "n", "nfs": {"server": "s", "path": "/"}}]}
    assert {r for r, _ in violations(spec, "restricted")} == {"restricted volume types", "runAsUser=0"}


def test_updates_are_judged_on_what_they_add() -> None:
    before = {"containers": [{"name": "a", "image": "x", "securityContext": {"privileged": True}}]}
    after = {**before, "hostPID": True}
    assert [r for r, _ in new_violations(after, before, "baseline")] == ["host namespaces"]
    assert new_violations(before, before, "baseline") == []


def test_pod_specs_come_from_pods_and_templates() -> None:
    assert pod_spec_of({"kind": "Pod", "spec": RESTRICTED}) == RESTRICTED
    assert pod_spec_of({"kind": "Deployment", "spec": {"template": {"spec": ESCAPE}}}) == ESCAPE
    assert pod_spec_of({"kind": "CronJob", "spec": {"jobTemplate": {"spec": {"template": {"spec": ESCAPE}}}}}) == ESCAPE
    assert pod_spec_of({"kind": "ConfigMap", "data": {}}) is None and pod_spec_of({"kind": "Deployment", "spec": None}) is None
