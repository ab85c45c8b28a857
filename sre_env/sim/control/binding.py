"""Binding a pod to its node, and the local-path provisioner that binding triggers.

Claims of the ``local-path`` class wait for their first consumer
(``WaitForFirstConsumer``): the volume is provisioned on the node the scheduler
picked, as a directory on that node's data disk, and pinned there by node affinity.
"""

from __future__ import annotations

from typing import Any

from sre_env.kube.timefmt import iso
from sre_env.sim.kernel.world import World

__all__ = ["bind_pod", "provision"]

Obj = dict[str, Any]


def bind_pod(world: World, pod: Obj, node: str) -> None:
    ns = pod["metadata"]["namespace"]
    for vol in pod["spec"].get("volumes") or ():
        claim = (vol.get("persistentVolumeClaim") or {}).get("claimName")
        if claim:
            pvc = world.store.find("PersistentVolumeClaim", claim, ns)
            if pvc is not None and not pvc["spec"].get("volumeName"):
                provision(world, pvc, node)
    world.store.bind_pod(pod, node)
    pod.setdefault("status", {})["conditions"] = [{"type": "PodScheduled", "status": "True", "lastProbeTime": None, "lastTransitionTime": iso(world.clock.now)}]
    world.store.touch(pod)
    world.event(pod, "Normal", "Scheduled", f"Successfully assigned {ns}/{pod['metadata']['name']} to {node}", "default-scheduler")


def provision(world: World, pvc: Obj, node: str) -> None:
    """local-path provisioner: a directory on the node's data disk, pinned to the node."""
    ns, name = pvc["metadata"]["namespace"], pvc["metadata"]["name"]
    pv_name = "pvc-" + pvc["metadata"]["uid"]
    host = world.hosts[node]
    base = "/mnt/data" if host.disk("sdb") else "/opt"
    path = f"{base}/local-path-provisioner/{pv_name}_{ns}_{name}"
    storage = pvc["spec"].get("resources", {}).get("requests", {}).get("storage", "1Gi")
    world.store.create(
        {
            "kind": "PersistentVolume",
            "apiVersion": "v1",
            "metadata": {"name": pv_name, "annotations": {"local.path.provisioner/selected-node": node, "pv.kubernetes.io/provisioned-by": "rancher.io/local-path"}, "finalizers": ["kubernetes.io/pv-protection"]},
            "spec": {
                "accessModes": list(pvc["spec"].get("accessModes", ["ReadWriteOnce"])),
                "capacity": {"storage": storage},
                "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "name": name, "namespace": ns, "uid": pvc["metadata"]["uid"]},
                "hostPath": {"path": path, "type": "DirectoryOrCreate"},
                "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}]}},
                "persistentVolumeReclaimPolicy": "Delete",
                "storageClassName": pvc["spec"].get("storageClassName", "local-path"),
                "volumeMode": "Filesystem",
            },
            "status": {"phase": "Bound"},
        }
    )
    pvc["spec"]["volumeName"] = pv_name
    pvc["status"] = {"phase": "Bound", "accessModes": list(pvc["spec"].get("accessModes", ["ReadWriteOnce"])), "capacity": {"storage": storage}}
    pvc["metadata"].setdefault("annotations", {}).update({"pv.kubernetes.io/bind-completed": "yes", "pv.kubernetes.io/bound-by-controller": "yes", "volume.kubernetes.io/selected-node": node, "volume.kubernetes.io/storage-provisioner": "rancher.io/local-path"})
    world.store.touch(pvc)
    world.event(pvc, "Normal", "ProvisioningSucceeded", f"Successfully provisioned volume {pv_name}", "rancher.io/local-path_local-path-provisioner")
    world.fault_epoch += 1
