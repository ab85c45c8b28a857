"""Namespace deletion and aggregated APIs: the namespace controller and the ``kubernetes`` finalizer.

Deleting a namespace marks it ``Terminating`` (``deletionTimestamp``, phase
``Terminating``); the namespace controller then deletes its content and
removes the ``kubernetes`` finalizer from ``spec.finalizers`` — but only once
it could *discover* every API group. An aggregated APIService whose back end
is gone (``v1beta1.metrics.k8s.io`` after a half-done metrics-server
uninstall) makes discovery fail, and the namespace stays Terminating with the
controller's ``NamespaceDeletionDiscoveryFailure`` condition, however often it
is deleted again. Creating anything in it, or a namespace of the same name,
is refused with the apiserver's words.

metrics-server itself is installed here (on the control-plane node), with its
APIService, so ``kubectl top`` has a Metrics API to ask.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sre_env.errors import ApiError
from sre_env.kube.kinds import kind_info
from sre_env.kube.timefmt import iso
from sre_env.sim.control.apiserver import create

if TYPE_CHECKING:
    from sre_env.sim.kernel.world import World

__all__ = [
    "namespaces_terminating",
    "METRICS_APISERVICE",
    "apiservice_condition",
    "begin_namespace_deletion",
    "install_metrics_server",
    "metrics_api_available",
    "metrics_server_objects",
    "reconcile_namespaces",
    "refresh_apiservices",
]

Obj = dict[str, Any]
METRICS_APISERVICE = "v1beta1.metrics.k8s.io"
METRICS_IMAGE = "registry.k8s.io/metrics-server/metrics-server:v0.7.2"
_PROTECTED = ("default", "kube-system", "kube-public")
_LOCAL_GROUPS = ("v1.", "v1.apps", "v1.batch", "v1.rbac.authorization.k8s.io", "v1.admissionregistration.k8s.io", "v1.storage.k8s.io", "v1.networking.k8s.io", "v1.coordination.k8s.io", "v2.autoscaling", "v1.policy")


def metrics_server_objects() -> list[Obj]:
    """The upstream components.yaml objects a namespace's discovery depends on (Service, Deployment)."""
    labels = {"k8s-app": "metrics-server"}
    return [
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "metrics-server", "namespace": "kube-system", "labels": dict(labels)},
            "spec": {"selector": dict(labels), "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": "https"}]},
        },
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "metrics-server", "namespace": "kube-system", "labels": dict(labels)},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": dict(labels)},
                "strategy": {"rollingUpdate": {"maxUnavailable": 0}},
                "template": {
                    "metadata": {"labels": dict(labels)},
                    "spec": {
                        "containers": [
                            {
                                "name": "metrics-server",
                                "image": METRICS_IMAGE,
                                "imagePullPolicy": "IfNotPresent",
                                "args": ["--cert-dir=/tmp", "--secure-port=10250", "--kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname", "--kubelet-use-node-status-port", "--metric-resolution=15s", "--kubelet-insecure-tls"],
                                "ports": [{"containerPort": 10250, "name": "https", "protocol": "TCP"}],
                                "readinessProbe": {"httpGet": {"path": "/readyz", "port": "https", "scheme": "HTTPS"}, "initialDelaySeconds": 20, "periodSeconds": 10, "failureThreshold": 3},
                                "resources": {"requests": {"cpu": "100m", "memory": "200Mi"}},
                                "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}, "readOnlyRootFilesystem": True, "runAsNonRoot": True, "runAsUser": 1000, "seccompProfile": {"type": "RuntimeDefault"}},
                                "volumeMounts": [{"mountPath": "/tmp", "name": "tmp-dir"}],
                            }
                        ],
                        "nodeSelector": {"kubernetes.io/os": "linux", "node-role.kubernetes.io/control-plane": ""},
                        "tolerations": [{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"}],
                        "priorityClassName": "system-cluster-critical",
                        "serviceAccountName": "metrics-server",
                        "volumes": [{"emptyDir": {}, "name": "tmp-dir"}],
                    },
                },
            },
        },
    ]


def install_metrics_server(world: World) -> None:
    world.images.add(METRICS_IMAGE)
    store = world.store
    for group in _LOCAL_GROUPS:
        version, _, grp = group.partition(".")
        name = group if grp else "v1."
        store.create({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": {"name": name, "labels": {"kube-aggregator.kubernetes.io/automanaged": "onstart"}}, "spec": {"group": grp, "version": version, "groupPriorityMinimum": 18000, "versionPriority": 15}, "status": {"conditions": [{"type": "Available", "status": "True", "lastTransitionTime": iso(0), "reason": "Local", "message": "Local APIServices are always available"}]}})
    create(world, {"kind": "ServiceAccount", "apiVersion": "v1", "metadata": {"name": "metrics-server", "namespace": "kube-system", "labels": {"k8s-app": "metrics-server"}}})
    for obj in metrics_server_objects():
        create(world, obj)
    store.create(
        {
            "apiVersion": "apiregistration.k8s.io/v1",
            "kind": "APIService",
            "metadata": {"name": METRICS_APISERVICE, "labels": {"k8s-app": "metrics-server"}},
            "spec": {"group": "metrics.k8s.io", "version": "v1beta1", "groupPriorityMinimum": 100, "versionPriority": 100, "insecureSkipTLSVerify": True, "service": {"name": "metrics-server", "namespace": "kube-system", "port": 443}},
            "status": {"conditions": []},
        }
    )
    refresh_apiservices(world)


def apiservice_condition(world: World, svc_obj: Obj) -> tuple[bool, str, str]:
    """(available, reason, message) of an APIService, as the aggregator's availability controller reports it."""
    ref = (svc_obj.get("spec") or {}).get("service")
    if not ref:
        return True, "Local", "Local APIServices are always available"
    name, ns = ref.get("name", ""), ref.get("namespace", "")
    svc = world.store.find("Service", name, ns)
    if svc is None:
        return False, "ServiceNotFound", f'service/{name} in "{ns}" is not present'
    ep = world.store.find("Endpoints", name, ns)
    port_name = next((p.get("name", "") for p in svc["spec"].get("ports") or () if int(p.get("port", 0)) == int(ref.get("port", 443))), "")
    if not any(s.get("addresses") for s in (ep or {}).get("subsets") or ()):
        return False, "MissingEndpoints", f'endpoints for service/{name} in "{ns}" have no addresses with port name "{port_name}"'
    return True, "Passed", "all checks passed"


def refresh_apiservices(world: World) -> None:
    now = iso(world.clock.now)
    for obj in world.store.list("APIService"):
        if not (obj.get("spec") or {}).get("service"):
            continue
        ok, reason, message = apiservice_condition(world, obj)
        prev = next((c for c in (obj.get("status") or {}).get("conditions") or () if c.get("type") == "Available"), None)
        status = "True" if ok else "False"
        if prev is not None and prev.get("status") == status and prev.get("reason") == reason:
            continue
        obj["status"] = {"conditions": [{"type": "Available", "status": status, "lastTransitionTime": now, "reason": reason, "message": message}]}
        world.store.touch(obj)


def metrics_api_available(world: World) -> bool:
    obj = world.store.find("APIService", METRICS_APISERVICE)
    return obj is not None and apiservice_condition(world, obj)[0]


def _discovery_failures(world: World) -> list[str]:
    out = []
    for obj in world.store.list("APIService"):
        if (obj.get("spec") or {}).get("service") and not apiservice_condition(world, obj)[0]:
            spec = obj["spec"]
            out.append(f"{spec.get('group', '')}/{spec.get('version', '')}")
    return out


# --------------------------------------------------------------------------- namespace controller
def begin_namespace_deletion(world: World, ns_obj: Obj) -> Obj:
    """``DELETE /api/v1/namespaces/NAME``: the namespace turns Terminating; the controller finishes it."""
    name = ns_obj["metadata"]["name"]
    if name in _PROTECTED:
        raise ApiError.forbidden(f'namespaces "{name}" is forbidden: this namespace may not be deleted')
    meta = ns_obj["metadata"]
    if not meta.get("deletionTimestamp"):
        meta["deletionTimestamp"] = iso(world.clock.now)
        ns_obj.setdefault("status", {})["phase"] = "Terminating"
        world.store.touch(ns_obj)
    world.slot(_Terminating).names[name] = None
    reconcile_namespaces(world)
    return ns_obj


def _content(world: World, name: str) -> list[tuple[str, Obj]]:
    out = []
    for k in world.store.kinds():
        if k != "Event" and kind_info(k).namespaced:
            out += [(k, o) for o in world.store.list(k, name)]
    return out


@dataclass
class _Terminating:
    #: namespaces being deleted whose content the namespace controller still has to remove
    names: dict[str, None] = field(default_factory=dict)


def namespaces_terminating(world: World) -> bool:
    state = world.peek(_Terminating)
    return bool(state is not None and state.names)


def reconcile_namespaces(world: World) -> None:
    if not namespaces_terminating(world):
        return
    pending = world.slot(_Terminating).names
    failures = _discovery_failures(world)
    now = iso(world.clock.now)
    for name in sorted(pending):
        ns_obj = world.store.find("Namespace", name)
        if ns_obj is None:
            del pending[name]
            continue
        for kind, obj in _content(world, name):
            if kind == "Pod":
                world.runtimes.pop(obj["metadata"]["uid"], None)
            world.store.remove(kind, obj["metadata"]["name"], name)
        for ev in world.store.list("Event", name):
            world.store.remove("Event", ev["metadata"]["name"], name)
        if not failures:
            world.store.remove("Namespace", name)
            del pending[name]
            continue
        failing = ", ".join(f"{g}: stale GroupVersion discovery: {g}" for g in failures)
        conds = [
            {"type": "NamespaceDeletionDiscoveryFailure", "status": "True", "lastTransitionTime": now, "reason": "DiscoveryFailed", "message": f"Discovery failed for some groups, {len(failures)} failing: unable to retrieve the complete list of server APIs: {failing}"},
            {"type": "NamespaceDeletionGroupVersionParsingFailure", "status": "False", "lastTransitionTime": now, "reason": "ParsedGroupVersions", "message": "All legacy kube types successfully parsed"},
            {"type": "NamespaceDeletionContentFailure", "status": "False", "lastTransitionTime": now, "reason": "ContentDeleted", "message": "All content successfully deleted, may be waiting on finalization"},
            {"type": "NamespaceContentRemaining", "status": "False", "lastTransitionTime": now, "reason": "ContentRemoved", "message": "All content successfully removed"},
            {"type": "NamespaceFinalizersRemaining", "status": "False", "lastTransitionTime": now, "reason": "ContentHasNoFinalizers", "message": "All content-preserving finalizers finished"},
        ]
        old = (ns_obj.get("status") or {}).get("conditions") or []
        if [(c["type"], c["status"], c["message"]) for c in old] != [(c["type"], c["status"], c["message"]) for c in conds]:
            ns_obj["status"] = {"phase": "Terminating", "conditions": conds}
            world.store.touch(ns_obj)
