"""What the agent may do on a cluster: one definition, enforced by the API server on a real cluster and by the
namespace guard (``guard.py``) in front of a served simulator.

Least privilege for an SRE repairing one namespace:

* **read** the namespace's workloads, pods and their logs, services, endpoints,
  ConfigMaps, events, quotas, autoscalers, disruption budgets, network policies,
  roles and bindings; **cluster-wide**, only nodes, persistent volumes, storage
  classes, node and pod metrics, and its own Namespace object;
* **repair**: create, update, patch and delete workloads (Deployments,
  StatefulSets, DaemonSets, ReplicaSets, Jobs, CronJobs), Services, ConfigMaps,
  autoscalers, disruption budgets and network policies; scale; delete and evict
  pods; ``exec`` into them;
* **Secrets**: none, unless the caller names the ones a scenario's repair needs
  (``secret_names``: read and update those, by name); no verified scenario does;
* **create pods** only as Pod Security ``restricted`` admits them (below);
* nothing else: no RBAC writes (``escalate``, ``bind``, ``impersonate`` are never
  granted), no ServiceAccounts or ``serviceaccounts/token`` (no token minting;
  Secrets cannot be created or listed, so no ``service-account-token`` Secret either), no
  ephemeral containers (``kubectl debug``), no quota or limit changes, no
  ``deletecollection``, nothing in another namespace, no cluster-scoped writes.
  Node repairs (cordon, drain, taints) are cluster-scoped writes that reach
  other tenants' pods, so they are not granted: scenarios whose fix is a node
  repair run on the simulator only (none is in ``LIVE_SCENARIOS``).

Pod Security on a real cluster: the app namespace is labelled
``pod-security.kubernetes.io/enforce=baseline`` while the agent is scoped to it
(the app's own pods meet ``baseline``; its earlier labels come back when the
credentials are revoked), so no pod in it -- whoever makes it, from whatever
template the agent wrote -- gets host namespaces, host ports, privileges,
extra capabilities or ``hostPath`` volumes. The pods the agent creates itself
must meet ``restricted``: a ValidatingAdmissionPolicy bound to the agent's
ServiceAccount (:func:`pod_policy`; ``admissionregistration.k8s.io/v1``,
Kubernetes 1.30+). A cluster without that API gets a Role without pod creation.
The guard applies the same two levels to the same requests
(``sre_env.kube.pod_security``).

An agent that can ``exec`` into the app's pods can use their ServiceAccounts'
tokens: give the app's ServiceAccounts no rights beyond what the agent has.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "AGENT_NAME",
    "MANAGED_LABELS",
    "POD_SECURITY_LABELS",
    "agent_role",
    "agent_rules",
    "agent_user",
    "pod_policy",
]

Obj = dict[str, Any]

#: the ServiceAccount, Role and RoleBinding the agent acts as
AGENT_NAME = "sre-env-agent"
MANAGED_LABELS = {"app.kubernetes.io/managed-by": "sre-env"}
#: the app namespace's Pod Security labels while the agent is scoped to it (see the module docstring)
POD_SECURITY_LABELS = {"pod-security.kubernetes.io/enforce": "baseline", "pod-security.kubernetes.io/enforce-version": "latest", "pod-security.kubernetes.io/warn": "restricted", "pod-security.kubernetes.io/warn-version": "latest"}

_READ = ["get", "list", "watch"]
_WRITE = ["create", "update", "patch", "delete"]
_WORKLOADS = {"apps": ["deployments", "statefulsets", "daemonsets", "replicasets"], "batch": ["jobs", "cronjobs"]}


def agent_user(namespace: str) -> str:
    """The user name the API server gives the agent's ServiceAccount token."""
    return f"system:serviceaccount:{namespace}:{AGENT_NAME}"


def agent_rules(namespace: str, *, create_pods: bool = True, secret_names: tuple[str, ...] = ()) -> tuple[list[Obj], list[Obj]]:
    """(the Role's rules in ``namespace``, the ClusterRole's rules); ``create_pods`` False where no admission
    policy can hold the agent's pods to ``restricted``; ``secret_names``: the Secrets the agent may read and update."""
    pod_verbs = ["delete", "create"] if create_pods else ["delete"]
    namespaced: list[Obj] = [
        {"apiGroups": [""], "resources": ["pods", "pods/log", "services", "endpoints", "configmaps", "serviceaccounts", "persistentvolumeclaims", "events", "replicationcontrollers", "resourcequotas", "limitranges", "podtemplates"], "verbs": _READ},
        {"apiGroups": ["apps"], "resources": ["deployments", "statefulsets", "daemonsets", "replicasets", "controllerrevisions", "deployments/scale", "statefulsets/scale", "replicasets/scale"], "verbs": _READ},
        {"apiGroups": ["batch"], "resources": ["jobs", "cronjobs"], "verbs": _READ},
        {"apiGroups": ["autoscaling"], "resources": ["horizontalpodautoscalers"], "verbs": _READ},
        {"apiGroups": ["policy"], "resources": ["poddisruptionbudgets"], "verbs": _READ},
        {"apiGroups": ["networking.k8s.io"], "resources": ["networkpolicies", "ingresses"], "verbs": _READ},
        {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": _READ},
        {"apiGroups": ["events.k8s.io"], "resources": ["events"], "verbs": _READ},
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": _READ},
        {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles", "rolebindings"], "verbs": _READ},
        {"apiGroups": ["metrics.k8s.io"], "resources": ["pods"], "verbs": ["get", "list"]},
        # repairs
        {"apiGroups": [""], "resources": ["pods"], "verbs": pod_verbs},
        {"apiGroups": [""], "resources": ["pods/eviction"], "verbs": ["create"]},
        # kubectl exec: POST, or a websocket GET (authorized as get by older servers, create by newer ones)
        {"apiGroups": [""], "resources": ["pods/exec"], "verbs": ["create", "get"]},
        {"apiGroups": [""], "resources": ["services", "configmaps", "replicationcontrollers"], "verbs": _WRITE},
        *([{"apiGroups": [""], "resources": ["secrets"], "resourceNames": list(secret_names), "verbs": ["get", "watch", "update", "patch"]}] if secret_names else []),
        *({"apiGroups": [group], "resources": resources, "verbs": _WRITE} for group, resources in _WORKLOADS.items()),
        {"apiGroups": ["apps"], "resources": ["deployments/scale", "statefulsets/scale", "replicasets/scale"], "verbs": ["update", "patch"]},
        {"apiGroups": ["autoscaling"], "resources": ["horizontalpodautoscalers"], "verbs": _WRITE},
        {"apiGroups": ["policy"], "resources": ["poddisruptionbudgets"], "verbs": _WRITE},
        {"apiGroups": ["networking.k8s.io"], "resources": ["networkpolicies"], "verbs": _WRITE},
        {"apiGroups": ["networking.k8s.io"], "resources": ["ingresses"], "verbs": ["update", "patch"]},
    ]
    cluster: list[Obj] = [
        {"apiGroups": [""], "resources": ["nodes", "persistentvolumes"], "verbs": _READ},
        {"apiGroups": ["storage.k8s.io"], "resources": ["storageclasses"], "verbs": _READ},
        {"apiGroups": ["metrics.k8s.io"], "resources": ["nodes"], "verbs": ["get", "list"]},
        {"apiGroups": [""], "resources": ["namespaces"], "resourceNames": [namespace], "verbs": ["get", "watch"]},
    ]
    return namespaced, cluster


def agent_role(namespace: str, *, create_pods: bool = True, secret_names: tuple[str, ...] = ()) -> list[Obj]:
    """The agent's ServiceAccount, Role and RoleBinding in ``namespace``, and its ClusterRole and binding (reads)."""
    meta = {"name": AGENT_NAME, "namespace": namespace, "labels": dict(MANAGED_LABELS)}
    cluster_name = f"{AGENT_NAME}-{namespace}"
    cluster_meta = {"name": cluster_name, "labels": dict(MANAGED_LABELS)}
    namespaced, cluster = agent_rules(namespace, create_pods=create_pods, secret_names=secret_names)
    subject = {"kind": "ServiceAccount", "name": AGENT_NAME, "namespace": namespace}
    rbac = "rbac.authorization.k8s.io/v1"
    return [
        # the agent's kubeconfig carries a TokenRequest token; nothing mounts this account's token anywhere
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": dict(meta), "automountServiceAccountToken": False},
        {"apiVersion": rbac, "kind": "Role", "metadata": dict(meta), "rules": namespaced},
        {"apiVersion": rbac, "kind": "RoleBinding", "metadata": dict(meta), "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": AGENT_NAME}, "subjects": [subject]},
        {"apiVersion": rbac, "kind": "ClusterRole", "metadata": dict(cluster_meta), "rules": cluster},
        {"apiVersion": rbac, "kind": "ClusterRoleBinding", "metadata": dict(cluster_meta), "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": cluster_name}, "subjects": [subject]},
    ]


# ---------------------------------------------------------------- the agent's own pods: restricted
_SC = "has(c.securityContext)"
#: (reason, CEL expression that holds when the check passes), the restricted checks of sre_env.kube.pod_security
_RESTRICTED_CEL: tuple[tuple[str, str], ...] = (
    ("allowPrivilegeEscalation != false", f"variables.containers.all(c, {_SC} && has(c.securityContext.allowPrivilegeEscalation) && c.securityContext.allowPrivilegeEscalation == false)"),
    (
        "unrestricted capabilities",
        f"variables.containers.all(c, {_SC} && has(c.securityContext.capabilities) && has(c.securityContext.capabilities.drop) && 'ALL' in c.securityContext.capabilities.drop"
        " && (!has(c.securityContext.capabilities.add) || c.securityContext.capabilities.add.all(a, a == 'NET_BIND_SERVICE')))",
    ),
    (
        "restricted volume types",
        "!has(object.spec.volumes) || object.spec.volumes.all(v, has(v.configMap) || has(v.csi) || has(v.downwardAPI) || has(v.emptyDir) || has(v.ephemeral) || has(v.persistentVolumeClaim) || has(v.projected) || has(v.secret))",
    ),
    (
        "runAsNonRoot != true",
        "!(variables.podContext && has(object.spec.securityContext.runAsNonRoot) && object.spec.securityContext.runAsNonRoot == false)"
        f" && variables.containers.all(c, ({_SC} && has(c.securityContext.runAsNonRoot)) ? c.securityContext.runAsNonRoot == true"
        " : (variables.podContext && has(object.spec.securityContext.runAsNonRoot) && object.spec.securityContext.runAsNonRoot == true))",
    ),
    (
        "runAsUser=0",
        "!(variables.podContext && has(object.spec.securityContext.runAsUser) && object.spec.securityContext.runAsUser == 0)"
        f" && variables.containers.all(c, !({_SC} && has(c.securityContext.runAsUser) && c.securityContext.runAsUser == 0))",
    ),
    (
        "seccompProfile",
        "!(variables.podSeccomp && !(object.spec.securityContext.seccompProfile.type in ['RuntimeDefault', 'Localhost']))"
        f" && variables.containers.all(c, ({_SC} && has(c.securityContext.seccompProfile)) ? c.securityContext.seccompProfile.type in ['RuntimeDefault', 'Localhost']"
        " : (variables.podSeccomp && object.spec.securityContext.seccompProfile.type in ['RuntimeDefault', 'Localhost']))",
    ),
)
_POD_VARIABLES = (
    ("containers", "object.spec.containers + (has(object.spec.initContainers) ? object.spec.initContainers : []) + (has(object.spec.ephemeralContainers) ? object.spec.ephemeralContainers : [])"),
    ("podContext", "has(object.spec.securityContext)"),
    ("podSeccomp", "has(object.spec.securityContext) && has(object.spec.securityContext.seccompProfile)"),
)


def pod_policy(namespace: str) -> list[Obj]:
    """A ValidatingAdmissionPolicy and its binding: the pods the agent itself creates in ``namespace`` meet Pod
    Security ``restricted`` (pods made by controllers are the namespace label's business)."""
    name = f"{AGENT_NAME}-restricted-pods-{namespace}"
    api = "admissionregistration.k8s.io/v1"
    policy = {
        "apiVersion": api,
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name, "labels": dict(MANAGED_LABELS)},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["pods"]}]},
            "matchConditions": [{"name": "the-agent", "expression": f"request.userInfo.username == '{agent_user(namespace)}'"}],
            "variables": [{"name": n, "expression": e} for n, e in _POD_VARIABLES],
            "validations": [{"expression": expr, "message": f'violates PodSecurity "restricted:latest": {reason}', "reason": "Forbidden"} for reason, expr in _RESTRICTED_CEL],
        },
    }
    binding = {
        "apiVersion": api,
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": name, "labels": dict(MANAGED_LABELS)},
        "spec": {"policyName": name, "validationActions": ["Deny"], "matchResources": {"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}}}},
    }
    return [policy, binding]
