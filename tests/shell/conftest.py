"""A small realistic cluster: two nodes, a two-revision Deployment with a crash-looping pod, a Service, events."""

from __future__ import annotations

from typing import Any

import pytest

from sre_env.kube.timefmt import iso
from sre_env.shell import ShellContext, run_command

from .fake_backend import FakeBackend


def _node(name: str, role: str | None, ip: str) -> dict[str, Any]:
    labels = {"kubernetes.io/hostname": name}
    if role:
        labels[f"node-role.kubernetes.io/{role}"] = ""
    return {
        "kind": "Node", "apiVersion": "v1", "metadata": {"name": name, "labels": labels},
        "spec": {"podCIDR": "10.244.0.0/24"},
        "status": {
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady", "message": "kubelet is posting ready status"}],
            "addresses": [{"type": "InternalIP", "address": ip}, {"type": "Hostname", "address": name}],
            "capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
            "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
            "nodeInfo": {"kubeletVersion": "v1.32.2", "osImage": "Ubuntu 22.04.4 LTS", "kernelVersion": "5.15.0-105-generic", "containerRuntimeVersion": "containerd://1.7.13"},
        },
    }


def _template(image: str, rev_hash: str | None = None) -> dict[str, Any]:
    labels = {"app": "web"}
    if rev_hash:
        labels["pod-template-hash"] = rev_hash
    return {
        "metadata": {"labels": labels},
        "spec": {"containers": [{"name": "web", "image": image, "ports": [{"containerPort": 8080, "protocol": "TCP"}],
                                 "env": [{"name": "MODE", "value": "prod"}],
                                 "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "500m", "memory": "128Mi"}}}]},
    }


@pytest.fixture()
def backend() -> FakeBackend:
    b = FakeBackend()
    s = b.store
    for ns in ("default", "shop", "kube-system"):
        s.create({"kind": "Namespace", "apiVersion": "v1", "metadata": {"name": ns}, "status": {"phase": "Active"}})
    s.create(_node("node-1", "control-plane", "10.0.0.11"))
    s.create(_node("node-2", None, "10.0.0.12"))
    dep = s.create({
        "kind": "Deployment", "apiVersion": "apps/v1",
        "metadata": {"name": "web", "namespace": "shop", "labels": {"app": "web"}, "annotations": {"deployment.kubernetes.io/revision": "2"}},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}, "template": _template("registry.local/web:1.1")},
        "status": {"replicas": 2, "updatedReplicas": 2, "readyReplicas": 1, "availableReplicas": 1, "observedGeneration": 1,
                   "conditions": [{"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable"}]},
    })
    owner = [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": dep["metadata"]["uid"], "controller": True}]
    for rev, h, image, n in (("1", "7d4b9c", "registry.local/web:1.0", 0), ("2", "5f6a8b", "registry.local/web:1.1", 2)):
        rs = s.create({
            "kind": "ReplicaSet", "apiVersion": "apps/v1",
            "metadata": {"name": f"web-{h}", "namespace": "shop", "labels": {"app": "web", "pod-template-hash": h},
                         "annotations": {"deployment.kubernetes.io/revision": rev}, "ownerReferences": owner},
            "spec": {"replicas": n, "selector": {"matchLabels": {"app": "web", "pod-template-hash": h}}, "template": _template(image, h)},
            "status": {"replicas": n, "readyReplicas": 1 if n else 0},
        })
    rs_owner = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-5f6a8b", "uid": rs["metadata"]["uid"], "controller": True}]
    tpl = _template("registry.local/web:1.1", "5f6a8b")
    s.create({
        "kind": "Pod", "apiVersion": "v1",
        "metadata": {"name": "web-5f6a8b-abcde", "namespace": "shop", "labels": tpl["metadata"]["labels"], "ownerReferences": rs_owner},
        "spec": {**tpl["spec"], "nodeName": "node-1"},
        "status": {"phase": "Running", "podIP": "10.244.1.5", "podIPs": [{"ip": "10.244.1.5"}], "hostIP": "10.0.0.11", "startTime": iso(0),
                   "conditions": [{"type": "Ready", "status": "True"}, {"type": "Initialized", "status": "True"}, {"type": "PodScheduled", "status": "True"}],
                   "containerStatuses": [{"name": "web", "ready": True, "restartCount": 0, "image": "registry.local/web:1.1",
                                          "state": {"running": {"startedAt": iso(5)}}}]},
    })
    bad = s.create({
        "kind": "Pod", "apiVersion": "v1",
        "metadata": {"name": "web-5f6a8b-fghij", "namespace": "shop", "labels": tpl["metadata"]["labels"], "ownerReferences": rs_owner},
        "spec": {**tpl["spec"], "nodeName": "node-2"},
        "status": {"phase": "Running", "podIP": "10.244.2.7", "podIPs": [{"ip": "10.244.2.7"}], "hostIP": "10.0.0.12", "startTime": iso(0),
                   "conditions": [{"type": "Ready", "status": "False"}, {"type": "Initialized", "status": "True"}, {"type": "PodScheduled", "status": "True"}],
                   "containerStatuses": [{"name": "web", "ready": False, "restartCount": 5, "image": "registry.local/web:1.1",
                                          "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off 2m40s restarting failed container"}},
                                          "lastState": {"terminated": {"exitCode": 1, "reason": "Error", "startedAt": iso(3400), "finishedAt": iso(3480)}}}]},
    })
    ds = s.create({
        "kind": "DaemonSet", "apiVersion": "apps/v1", "metadata": {"name": "kube-proxy", "namespace": "kube-system"},
        "spec": {"selector": {"matchLabels": {"k8s-app": "kube-proxy"}}, "template": {"metadata": {"labels": {"k8s-app": "kube-proxy"}}, "spec": {"containers": [{"name": "kube-proxy", "image": "kube-proxy:v1.32.2"}]}}},
        "status": {"desiredNumberScheduled": 2, "currentNumberScheduled": 2, "numberReady": 2, "updatedNumberScheduled": 2, "numberAvailable": 2},
    })
    s.create({
        "kind": "Pod", "apiVersion": "v1",
        "metadata": {"name": "kube-proxy-x7k2p", "namespace": "kube-system", "labels": {"k8s-app": "kube-proxy"},
                     "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": "kube-proxy", "uid": ds["metadata"]["uid"], "controller": True}]},
        "spec": {"containers": [{"name": "kube-proxy", "image": "kube-proxy:v1.32.2"}], "nodeName": "node-2"},
        "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}],
                   "containerStatuses": [{"name": "kube-proxy", "ready": True, "restartCount": 0, "state": {"running": {"startedAt": iso(1)}}}]},
    })
    s.create({
        "kind": "Service", "apiVersion": "v1", "metadata": {"name": "web", "namespace": "shop", "labels": {"app": "web"}},
        "spec": {"type": "ClusterIP", "clusterIP": "10.96.0.10", "clusterIPs": ["10.96.0.10"], "selector": {"app": "web"},
                 "ports": [{"name": "http", "port": 80, "targetPort": 8080, "protocol": "TCP"}]},
    })
    s.create({
        "kind": "Endpoints", "apiVersion": "v1", "metadata": {"name": "web", "namespace": "shop"},
        "subsets": [{"addresses": [{"ip": "10.244.1.5"}], "notReadyAddresses": [{"ip": "10.244.2.7"}], "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}]}],
    })
    s.create({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "web-config", "namespace": "shop"}, "data": {"MODE": "prod", "app.yaml": "port: 8080\n"}})
    b.clock.now = 3000.0
    s.record_event(bad, "Normal", "Pulled", 'Container image "registry.local/web:1.1" already present on machine', "kubelet")
    b.clock.now = 3500.0
    s.record_event(bad, "Warning", "BackOff", "Back-off restarting failed container web in pod web-5f6a8b-fghij_shop(uid)", "kubelet")
    for _ in range(6):
        s.record_event(bad, "Warning", "BackOff", "Back-off restarting failed container web in pod web-5f6a8b-fghij_shop(uid)", "kubelet")
    b.clock.now = 3600.0
    b.api.logs_text[("web-5f6a8b-fghij", "web", False)] = "starting\nconnecting to db\nerror: connection refused\n"
    b.api.logs_text[("web-5f6a8b-fghij", "web", True)] = "starting\npanic: config missing\n"
    b.api.logs_text[("web-5f6a8b-abcde", "web", False)] = "".join(f"GET /api {i} 200\n" for i in range(30))
    b.api.usage.update({("shop", "web-5f6a8b-abcde"): (12, 34 * 1024 * 1024), ("shop", "web-5f6a8b-fghij"): (1, 5 * 1024 * 1024),
                        ("kube-system", "kube-proxy-x7k2p"): (3, 20 * 1024 * 1024)})
    b.api.node_usage.update({"node-1": (250, 4000, 2 * 1024**3, 8 * 1024**3), "node-2": (120, 4000, 1024**3, 8 * 1024**3)})
    return b


@pytest.fixture()
def ctx(backend: FakeBackend) -> ShellContext:
    return ShellContext(backend=backend, namespace="shop")


@pytest.fixture()
def sh(ctx: ShellContext):
    def run(cmd: str):
        return run_command(ctx, cmd)

    return run
