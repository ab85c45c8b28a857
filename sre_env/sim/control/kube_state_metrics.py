"""kube-state-metrics as a client of the API: its service account, its RBAC, and what it can list.

The exporter (``sre_env.telemetry.export_kube``) turns objects into ``kube_*``
series; here is the part that makes it a real cluster component: a Deployment
in ``kube-system`` running under the ``kube-state-metrics`` service account,
with the upstream ClusterRole and ClusterRoleBinding. Each object kind is
exported only while RBAC lets that service account list it; a denied list is
logged by the process's reflector the way client-go logs it, and the kind's
series disappear from Prometheus.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sre_env.kube.rbac import forbidden_message, service_account_user
from sre_env.kube.timefmt import iso
from sre_env.sim.control.apiserver import create
from sre_env.sim.control.rbac import authorize, rbac_revision

if TYPE_CHECKING:
    from sre_env.sim.kernel.world import World

__all__ = ["LISTS", "NAME", "NAMESPACE", "USER", "cluster_role", "cluster_role_binding", "denied_kinds", "install_kube_state_metrics", "log_denials"]

Obj = dict[str, Any]
NAME = "kube-state-metrics"
NAMESPACE = "kube-system"
IMAGE = "registry.k8s.io/kube-state-metrics/kube-state-metrics:v2.13.0"
USER = service_account_user(NAMESPACE, NAME)
#: exported kind -> (resource, API group, Go type) the reflector lists
LISTS: dict[str, tuple[str, str, str]] = {
    "Node": ("nodes", "", "*v1.Node"),
    "Pod": ("pods", "", "*v1.Pod"),
    "Deployment": ("deployments", "apps", "*v1.Deployment"),
    "StatefulSet": ("statefulsets", "apps", "*v1.StatefulSet"),
    "PersistentVolumeClaim": ("persistentvolumeclaims", "", "*v1.PersistentVolumeClaim"),
    "PersistentVolume": ("persistentvolumes", "", "*v1.PersistentVolume"),
}
_LABELS = {"app.kubernetes.io/name": NAME, "app.kubernetes.io/component": "exporter", "app.kubernetes.io/version": "2.13.0"}
_LOG_EVERY_S = 30.0


def cluster_role() -> Obj:
    def lw() -> list[str]:
        return ["list", "watch"]

    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRole",
        "metadata": {"name": NAME, "labels": dict(_LABELS)},
        "rules": [
            {"apiGroups": [""], "resources": ["configmaps", "secrets", "nodes", "pods", "services", "serviceaccounts", "resourcequotas", "replicationcontrollers", "limitranges", "persistentvolumeclaims", "persistentvolumes", "namespaces", "endpoints"], "verbs": lw()},
            {"apiGroups": ["apps"], "resources": ["statefulsets", "daemonsets", "deployments", "replicasets"], "verbs": lw()},
            {"apiGroups": ["batch"], "resources": ["cronjobs", "jobs"], "verbs": lw()},
            {"apiGroups": ["autoscaling"], "resources": ["horizontalpodautoscalers"], "verbs": lw()},
            {"apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"], "verbs": ["create"]},
            {"apiGroups": ["authorization.k8s.io"], "resources": ["subjectaccessreviews"], "verbs": ["create"]},
            {"apiGroups": ["policy"], "resources": ["poddisruptionbudgets"], "verbs": lw()},
            {"apiGroups": ["certificates.k8s.io"], "resources": ["certificatesigningrequests"], "verbs": lw()},
            {"apiGroups": ["discovery.k8s.io"], "resources": ["endpointslices"], "verbs": lw()},
            {"apiGroups": ["storage.k8s.io"], "resources": ["storageclasses", "volumeattachments"], "verbs": lw()},
            {"apiGroups": ["admissionregistration.k8s.io"], "resources": ["mutatingwebhookconfigurations", "validatingwebhookconfigurations"], "verbs": lw()},
            {"apiGroups": ["networking.k8s.io"], "resources": ["networkpolicies", "ingressclasses", "ingresses"], "verbs": lw()},
            {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": lw()},
            {"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["clusterrolebindings", "clusterroles", "rolebindings", "roles"], "verbs": lw()},
        ],
    }


def cluster_role_binding() -> Obj:
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding",
        "metadata": {"name": NAME, "labels": dict(_LABELS)},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": NAME},
        "subjects": [{"kind": "ServiceAccount", "name": NAME, "namespace": NAMESPACE}],
    }


def install_kube_state_metrics(world: World) -> None:
    world.images.add(IMAGE)
    store = world.store
    if store.find("ClusterRole", "cluster-admin") is None:
        store.create(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRole",
                "metadata": {"name": "cluster-admin", "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"}, "annotations": {"rbac.authorization.kubernetes.io/autoupdate": "true"}},
                "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}, {"nonResourceURLs": ["*"], "verbs": ["*"]}],
            }
        )
    create(world, {"kind": "ServiceAccount", "apiVersion": "v1", "metadata": {"name": NAME, "namespace": NAMESPACE, "labels": dict(_LABELS)}})
    store.create(cluster_role())
    store.create(cluster_role_binding())
    container = {
        "name": NAME,
        "image": IMAGE,
        "imagePullPolicy": "IfNotPresent",
        "ports": [{"name": "http-metrics", "containerPort": 8080, "protocol": "TCP"}, {"name": "telemetry", "containerPort": 8081, "protocol": "TCP"}],
        "livenessProbe": {"httpGet": {"path": "/livez", "port": "http-metrics"}, "initialDelaySeconds": 5, "timeoutSeconds": 5},
        "readinessProbe": {"httpGet": {"path": "/readyz", "port": "http-metrics"}, "initialDelaySeconds": 5, "timeoutSeconds": 5},
        "resources": {"requests": {"cpu": "10m", "memory": "190Mi"}, "limits": {"memory": "250Mi"}},
        "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}, "readOnlyRootFilesystem": True, "runAsNonRoot": True, "runAsUser": 65534, "seccompProfile": {"type": "RuntimeDefault"}},
    }
    create(
        world,
        {
            "kind": "Deployment",
            "apiVersion": "apps/v1",
            "metadata": {"name": NAME, "namespace": NAMESPACE, "labels": dict(_LABELS)},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app.kubernetes.io/name": NAME}},
                "template": {
                    "metadata": {"labels": dict(_LABELS)},
                    "spec": {
                        "automountServiceAccountToken": True,
                        "containers": [container],
                        "nodeSelector": {"kubernetes.io/os": "linux", "node-role.kubernetes.io/control-plane": ""},
                        "tolerations": [{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"}],
                        "serviceAccountName": NAME,
                    },
                },
            },
        }
    )
    create(
        world,
        {
            "kind": "Service",
            "apiVersion": "v1",
            "metadata": {"name": NAME, "namespace": NAMESPACE, "labels": dict(_LABELS)},
            "spec": {"clusterIP": "None", "selector": {"app.kubernetes.io/name": NAME}, "ports": [{"name": "http-metrics", "port": 8080, "targetPort": "http-metrics"}, {"name": "telemetry", "port": 8081, "targetPort": "telemetry"}]},
        }
    )


@dataclass
class _KsmState:
    #: (RBAC revision, kinds kube-state-metrics may not list at it)
    denied: tuple[Any, frozenset[str]] | None = None
    #: when the reflectors log their next round of retries
    next_log: float = 0.0


def denied_kinds(world: World) -> frozenset[str]:
    """Exported kinds kube-state-metrics' service account may not list (cached per RBAC revision)."""
    store = world.store
    state = world.slot(_KsmState)
    rev = rbac_revision(store)
    if state.denied is not None and state.denied[0] == rev:
        return state.denied[1]
    denied = frozenset(k for k, (res, grp, _) in LISTS.items() if not authorize(world, USER, "list", res, grp))
    state.denied = (rev, denied)
    return denied


def log_denials(world: World) -> None:
    """The reflectors' retries: client-go's warning and error lines in the exporter's log."""
    now = world.clock.now
    state = world.slot(_KsmState)
    if now < state.next_log:
        return
    state.next_log = now + _LOG_EVERY_S
    denied = denied_kinds(world)
    if not denied:
        return
    for pod in world.store.list("Pod", NAMESPACE, f"app.kubernetes.io/name={NAME}"):
        rt = world.runtimes.get(pod["metadata"]["uid"])
        ctr = rt.containers.get(NAME) if rt else None
        if ctr is None or ctr.state != "running":
            continue
        stamp = iso(now)
        head = f"{stamp[5:7]}{stamp[8:10]} {stamp[11:19]}.{int(now * 7919) % 1_000_000:06d}       1"
        for kind in sorted(denied):
            res, grp, gotype = LISTS[kind]
            msg = forbidden_message(USER, "list", res, grp)
            ctr.log.append((now, f"W{head} reflector.go:561] pkg/mod/k8s.io/client-go@v0.31.0/tools/cache/reflector.go:243: failed to list {gotype}: {msg}"))
            quoted = msg.replace('"', '\\"')
            ctr.log.append((now, f'E{head} reflector.go:158] "Unhandled Error" err="pkg/mod/k8s.io/client-go@v0.31.0/tools/cache/reflector.go:243: Failed to watch {gotype}: failed to list {gotype}: {quoted}" logger="UnhandledError"'))
        if not isinstance(ctr.log, deque):
            ctr.log = deque(ctr.log, maxlen=1000)
