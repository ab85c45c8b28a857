"""Builds the initial cluster: nodes, system components and an app's manifests.

Manifests are generated from an :class:`AppSpec` in the shape of the public
project's Kubernetes manifests (labels ``io.kompose.service``, container
names, ports), so ``kubectl get deploy -o yaml`` looks like the real thing.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from typing import Any

from sre_env.apps.base import AppSpec, Component
from sre_env.sim.node.host import Disk, HostNode, default_sysctls

__all__ = ["ClusterLayout", "DEFAULT_LAYOUT", "make_host_nodes", "node_object", "app_manifests", "namespace_object"]

GiB = 1024**3


@dataclass(frozen=True)
class ClusterLayout:
    workers: int = 3
    worker_cpu: int = 8
    worker_memory_gib: int = 16
    pod_cidr_prefix: str = "10.244"


DEFAULT_LAYOUT = ClusterLayout()


def make_host_nodes(layout: ClusterLayout) -> list[HostNode]:
    names = ["control-plane"] + [f"worker-{i}" for i in range(1, layout.workers + 1)]
    nodes = []
    for idx, name in enumerate(names):
        disks = [
            Disk(
                device="sda",
                model="Samsung SSD 870 EVO 250GB",
                serial=f"S6PENL0T{300000 + idx * 7919:06d}",
                size_bytes=250 * 1000**3,
                mountpoint="/",
                used_bytes=int((31.5 + idx * 2.25) * GiB),
            )
        ]
        if idx > 0:
            disks.append(
                Disk(
                    device="sdb",
                    model="WDC WD20EFZX-68AWUN0",
                    serial=f"WD-WX{21 + idx}2D{4100 + idx * 37}A{idx}K",
                    size_bytes=2000 * 1000**3,
                    mountpoint="/mnt/data",
                    used_bytes=int((118.0 + idx * 11.5) * GiB),
                    rotational=True,
                    power_on_hours=14_873 + idx * 1_203,
                )
            )
        cpu = 4 if idx == 0 else layout.worker_cpu
        mem = (8 if idx == 0 else layout.worker_memory_gib) * GiB
        nodes.append(
            HostNode(
                name=name,
                index=idx,
                cpu_cores=cpu,
                memory_bytes=mem,
                internal_ip=f"172.18.0.{idx + 2}",
                disks=disks,
                sysctls=default_sysctls(),
            )
        )
    return nodes


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


def namespace_object(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "kind": "Namespace",
        "apiVersion": "v1",
        "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name, **(labels or {})}},
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }


def _container(c: Component) -> dict[str, Any]:
    ctr: dict[str, Any] = {"name": c.container, "image": c.image}
    if c.command:
        ctr["command"] = list(c.command)
    if c.args:
        ctr["args"] = list(c.args)
    if c.env or c.secret_env:
        ctr["env"] = [{"name": k, "value": v} for k, v in c.env] + [
            {"name": k, "valueFrom": {"secretKeyRef": {"name": sec, "key": key}}} for k, sec, key in c.secret_env
        ]
    if c.env_from:
        ctr["envFrom"] = [{"configMapRef" if src == "configMap" else "secretRef": {"name": name}} for src, name in c.env_from]
    ports = [{"containerPort": p, "protocol": proto} | ({"name": n} if n else {}) for n, p, proto in c.container_ports]
    if ports:
        ctr["ports"] = ports
    res: dict[str, Any] = {}
    limits = {k: v for k, v in (("cpu", c.cpu_limit), ("memory", c.memory_limit)) if v}
    requests = {k: v for k, v in (("cpu", c.cpu_request), ("memory", c.memory_request)) if v}
    if limits:
        res["limits"] = limits
    if requests:
        res["requests"] = requests
    ctr["resources"] = res
    ctr["imagePullPolicy"] = "IfNotPresent"
    ctr["terminationMessagePath"] = "/dev/termination-log"
    ctr["terminationMessagePolicy"] = "File"
    if c.volume_claim:
        ctr["volumeMounts"] = [{"name": c.volume_claim.removesuffix("-pvc") + "-storage" if c.volume_claim.endswith("-pvc") else c.volume_claim, "mountPath": c.data_path}]
    if c.config_files:
        ctr.setdefault("volumeMounts", []).extend({"name": f"{c.name}-config", "mountPath": path, "subPath": key} for key, path, _ in c.config_files)
    return ctr


def component_labels(c: Component, label_key: str = "io.kompose.service") -> dict[str, str]:
    labels = {label_key: c.name}
    labels.update(dict(c.labels))
    return labels


def app_manifests(app: AppSpec) -> list[dict[str, Any]]:
    """Namespace, PVCs, workloads and services of an app, in creation order."""
    objs: list[dict[str, Any]] = [namespace_object(app.namespace)]
    for name, data in app.config_maps:
        objs.append({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": name, "namespace": app.namespace}, "data": dict(data)})
    for name, data in app.secrets:
        encoded = {k: base64.b64encode(v.encode()).decode() for k, v in data}
        objs.append({"kind": "Secret", "apiVersion": "v1", "metadata": {"name": name, "namespace": app.namespace}, "type": "Opaque", "data": encoded})
    helm = app.manifest_style == "helm"
    for c in app.components:
        if c.config_files:
            objs.append({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": c.name, "namespace": app.namespace}, "data": {key: content for key, _, content in c.config_files}})
        if c.volume_claim:
            objs.append(
                {
                    "kind": "PersistentVolumeClaim",
                    "apiVersion": "v1",
                    "metadata": {"name": c.volume_claim, "namespace": app.namespace, "labels": component_labels(c, app.label_key)},
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": c.storage}},
                        "storageClassName": "local-path",
                        "volumeMode": "Filesystem",
                    },
                }
            )
    for c in app.components:
        labels = component_labels(c, app.label_key)
        template: dict[str, Any] = {
            "metadata": {"labels": {**labels, **dict(c.template_labels)}, "annotations": {} if helm else {"sidecar.istio.io/statsInject": "false"}},
            "spec": {
                "containers": [_container(c)],
                "restartPolicy": "Always",
                "terminationGracePeriodSeconds": 30,
                "dnsPolicy": "ClusterFirst",
                "schedulerName": "default-scheduler",
            },
        }
        if c.volume_claim:
            vol_name = _container(c)["volumeMounts"][0]["name"]
            template["spec"]["volumes"] = [{"name": vol_name, "persistentVolumeClaim": {"claimName": c.volume_claim}}]
        if c.config_files:
            template["spec"].setdefault("volumes", []).append({"name": f"{c.name}-config", "configMap": {"name": c.name, "defaultMode": 420}})
        if helm:
            template["spec"]["hostname"] = c.name
        spec: dict[str, Any] = {
            "replicas": c.replicas,
            "selector": {"matchLabels": dict(labels)},
            "template": template,
            "revisionHistoryLimit": 10,
        }
        if c.kind == "Deployment":
            spec["strategy"] = (
                {"type": "Recreate"}
                if c.volume_claim
                else {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}
            )
            spec["progressDeadlineSeconds"] = 600
        else:
            spec["serviceName"] = c.name
            spec["podManagementPolicy"] = "OrderedReady"
            spec["updateStrategy"] = {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
        objs.append(
            {
                "kind": c.kind,
                "apiVersion": "apps/v1",
                "metadata": {
                    "name": c.name,
                    "namespace": app.namespace,
                    "labels": dict(labels),
                    "annotations": {} if helm else {"kompose.cmd": "kompose convert", "kompose.version": "1.22.0 (955b78124)"},
                },
                "spec": spec,
            }
        )
        if c.service_ports:
            objs.append(
                {
                    "kind": "Service",
                    "apiVersion": "v1",
                    "metadata": {"name": c.name, "namespace": app.namespace, **({} if helm else {"labels": dict(labels)})},
                    "spec": {
                        "type": "ClusterIP",
                        "selector": dict(labels),
                        "ports": [
                            {"name": n, "port": p, "targetPort": tp, "protocol": proto}
                            for n, p, tp, proto in c.service_ports
                        ],
                        "sessionAffinity": "None",
                        "ipFamilies": ["IPv4"],
                        "ipFamilyPolicy": "SingleStack",
                        "internalTrafficPolicy": "Cluster",
                    },
                }
            )
    if app.customize is not None:
        objs = app.customize(app, objs)
    return objs
