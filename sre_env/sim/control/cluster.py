"""Bootstrapping a cluster: its Nodes, system namespaces and add-ons, then each app.

Hosts (``sre_env.sim.kernel.hosts``) are the machines; a Node is what their
kubelets post to the API (labels, capacity, addresses, node info). The system
objects are what a kind cluster with kube-prometheus, ingress-nginx, Gatekeeper
and the local-path provisioner has before any app is deployed.
"""

from __future__ import annotations

from typing import Any

from sre_env.apps.base import AppSpec, register_spec
from sre_env.apps.manifests import app_manifests, namespace_object
from sre_env.sim.control.addons import install_control_plane_addons
from sre_env.sim.control.apiserver import create
from sre_env.sim.control.app_models import build_app_model
from sre_env.sim.control.priority import builtin_priority_classes
from sre_env.sim.kernel.hosts import ClusterLayout, HostNode
from sre_env.sim.kernel.world import World
from sre_env.sim.kubelet.node_status import update_node_conditions
from sre_env.sim.network.netsystem import app_edge_objects, system_network_objects

__all__ = ["bootstrap", "install_app", "node_object"]

Obj = dict[str, Any]


def node_object(node: HostNode, layout: ClusterLayout) -> dict[str, Any]:
    control = node.index == 0
    labels = {
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": node.name,
        "kubernetes.io/os": "linux",
    }
    if control:
        labels["node-role.kubernetes.io/control-plane"] = ""
    mem_ki = node.memory_bytes // 1024
    capacity = {
        "cpu": str(node.cpu_cores),
        "ephemeral-storage": "244506940Ki",
        "memory": f"{mem_ki}Ki",
        "pods": "110",
    }
    allocatable = dict(capacity)
    allocatable["memory"] = f"{mem_ki - 102400}Ki"
    spec: dict[str, Any] = {
        "podCIDR": f"{layout.pod_cidr_prefix}.{node.index}.0/24",
        "podCIDRs": [f"{layout.pod_cidr_prefix}.{node.index}.0/24"],
        "providerID": f"kind://docker/sre-env/{node.name}",
    }
    if control:
        spec["taints"] = [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]
    return {
        "kind": "Node",
        "apiVersion": "v1",
        "metadata": {
            "name": node.name,
            "labels": labels,
            "annotations": {
                "kubeadm.alpha.kubernetes.io/cri-socket": "unix:///run/containerd/containerd.sock",
                "node.alpha.kubernetes.io/ttl": "0",
                "volumes.kubernetes.io/controller-managed-attach-detach": "true",
            },
        },
        "spec": spec,
        "status": {
            "capacity": capacity,
            "allocatable": allocatable,
            "addresses": [
                {"type": "InternalIP", "address": node.internal_ip},
                {"type": "Hostname", "address": node.name},
            ],
            "conditions": [],
            "nodeInfo": {
                "architecture": "amd64",
                "containerRuntimeVersion": node.container_runtime,
                "kernelVersion": node.kernel,
                "kubeProxyVersion": node.kubelet_version,
                "kubeletVersion": node.kubelet_version,
                "operatingSystem": "linux",
                "osImage": node.os_image,
                "machineID": f"{node.index:02d}4f1c2e9b7a4d8c6e5f3a2b1c0d9e8f",
                "systemUUID": f"{node.index:08d}-0000-4000-8000-00000000{node.index:04d}",
                "bootID": f"b0{node.index}d5e2a-3c4f-4e7b-9a1d-2f6c8e0b4a7{node.index}",
            },
        },
    }


def bootstrap(world: World) -> None:
    """The cluster before any app: Nodes, system namespaces, Services, priority classes and add-ons."""
    for host in world.hosts.values():
        world.store.create(node_object(host, world.layout))
        host.journal.append((-120.0, "kubelet", "Started kubelet: The Kubernetes Node Agent."))
    update_node_conditions(world)
    for ns in ("default", "kube-system", "kube-public", "kube-node-lease", "local-path-storage"):
        world.store.create(namespace_object(ns))
    world.store.create(
        {
            "kind": "StorageClass",
            "apiVersion": "storage.k8s.io/v1",
            "metadata": {"name": "local-path", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
            "provisioner": "rancher.io/local-path",
            "reclaimPolicy": "Delete",
            "volumeBindingMode": "WaitForFirstConsumer",
        }
    )
    world.store.create({"kind": "Service", "metadata": {"name": "kubernetes", "namespace": "default", "labels": {"component": "apiserver", "provider": "kubernetes"}}, "spec": {"type": "ClusterIP", "clusterIP": "10.96.0.1", "clusterIPs": ["10.96.0.1"], "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}], **_SERVICE_DEFAULTS}})
    world.store.create({"kind": "Service", "metadata": {"name": "kube-dns", "namespace": "kube-system", "labels": {"k8s-app": "kube-dns"}}, "spec": {"type": "ClusterIP", "clusterIP": "10.96.0.10", "selector": {"k8s-app": "kube-dns"}, "clusterIPs": ["10.96.0.10"], "ports": [{"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 53}, {"name": "dns-tcp", "port": 53, "protocol": "TCP", "targetPort": 53}], **_SERVICE_DEFAULTS}})
    for pc in builtin_priority_classes():
        world.store.create(pc)
    world.images.add("registry.k8s.io/coredns/coredns:v1.11.3")
    world.images.add("docker.io/rancher/local-path-provisioner:v0.0.30")
    for obj in system_network_objects(world):
        create(world, obj)
    create(world, _system_deployment("local-path-provisioner", "local-path-storage", "docker.io/rancher/local-path-provisioner:v0.0.30", {"app": "local-path-provisioner"}, 1, [], control_plane=True))
    install_control_plane_addons(world)


def install_app(world: "World", app: AppSpec) -> None:
    register_spec(app)
    for comp in app.components:
        world.components[(app.namespace, comp.name)] = comp
        world.images.add(comp.image)
        if comp.command:
            world.images.add_program(comp.image, comp.command[0], comp)
    for ref in app.extra_images:
        world.images.add(ref)
    for node, labels, taints in app.node_setup:
        obj = world.store.get("Node", node)
        obj["metadata"].setdefault("labels", {}).update(dict(labels))
        obj["spec"].setdefault("taints", []).extend(dict(t) for t in taints)
        world.store.touch(obj)
    for obj in app_manifests(app):
        create(world, obj)
    for obj in app_edge_objects(app):
        create(world, obj)
    model = build_app_model(app)
    if model is not None:
        world.app_models[app.name] = model


#: the Service fields the API server defaults (the two bootstrap Services are stored without the create path)
_SERVICE_DEFAULTS: Obj = {"sessionAffinity": "None", "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack", "internalTrafficPolicy": "Cluster"}


def _system_deployment(name: str, ns: str, image: str, labels: dict[str, str], replicas: int, ports: list[tuple[str, int, str]], control_plane: bool) -> Obj:
    spec: Obj = {
        "containers": [
            {
                "name": name,
                "image": image,
                "ports": [{"name": n, "containerPort": p, "protocol": proto} for n, p, proto in ports],
                "resources": {"requests": {"cpu": "100m", "memory": "70Mi"}},
            }
        ],
        "priorityClassName": "system-cluster-critical",
    }
    if control_plane:
        spec["tolerations"] = [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]
        spec["nodeSelector"] = {"kubernetes.io/os": "linux"}
    return {
        "kind": "Deployment",
        "apiVersion": "apps/v1",
        "metadata": {"name": name, "namespace": ns, "labels": dict(labels)},
        "spec": {"replicas": replicas, "selector": {"matchLabels": dict(labels)}, "template": {"metadata": {"labels": dict(labels)}, "spec": spec}},
    }
