"""Builds the initial cluster: its layout, the node hosts and their Node objects.

An app's own objects come from its spec (sre_env.apps.manifests).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sre_env.sim.node.host import Disk, HostNode, default_sysctls

__all__ = ["ClusterLayout", "DEFAULT_LAYOUT", "make_host_nodes", "node_object"]

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
