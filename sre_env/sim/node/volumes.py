"""Where a pod's data lives: the node, disk and host path under each volume it mounts.

A local-path PersistentVolume is a directory on one node's disk; a pod reading its
data reads that disk, whichever node the pod itself runs on. Disk faults reach
the processes through these paths.

A network block volume (CSI, EBS, PD, Azure Disk, Cinder, RBD, iSCSI) is instead
attached to one node at a time when it is ``ReadWriteOnce``: a second pod on a
*different* node that mounts the same claim cannot start -- the attach/detach
controller records ``Multi-Attach error for volume "<pv>" Volume is already used
by pod(s) <pods>`` and the kubelet times out mounting it. Local volumes are never
attached: their node affinity keeps every user on one node instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sre_env.sim.kernel.world import World

__all__ = ["pod_volume_paths", "pod_volume_disks", "volume_read_error_fraction", "ATTACHABLE_SOURCES", "is_attachable", "multi_attach_error"]

Obj = dict[str, Any]


def pod_volume_paths(world: "World", pod: Obj) -> list[tuple[str, Any, str]]:
    """(node, Disk, host path) of each PersistentVolume the pod mounts."""
    out = []
    ns = pod["metadata"]["namespace"]
    for vol in pod["spec"].get("volumes") or ():
        claim = (vol.get("persistentVolumeClaim") or {}).get("claimName")
        if not claim:
            continue
        pvc = world.store.find("PersistentVolumeClaim", claim, ns)
        pv = world.store.find("PersistentVolume", pvc["spec"].get("volumeName", "")) if pvc else None
        if pv is None:
            continue
        node = pv["metadata"].get("annotations", {}).get("local.path.provisioner/selected-node") or pod["spec"].get("nodeName")
        host = world.hosts.get(node)
        if host is not None:
            path = pv["spec"].get("hostPath", {}).get("path", "/")
            out.append((node, host.disk_for_path(path), path))
    return out


def pod_volume_disks(world: "World", pod: Obj) -> list[tuple[str, Any]]:
    """(node, Disk) under each PersistentVolume the pod mounts."""
    return [(node, disk) for node, disk, _ in pod_volume_paths(world, pod)]


def volume_read_error_fraction(world: "World", pod: Obj) -> float:
    """Worst share of failing reads over the volumes a pod mounts."""
    return max((max(disk.read_error_fraction(path), disk.corruption_fraction(path)) for _, disk, path in pod_volume_paths(world, pod)), default=0.0)


#: PersistentVolume sources that are attached to a node by the attach/detach controller
ATTACHABLE_SOURCES = ("csi", "awsElasticBlockStore", "gcePersistentDisk", "azureDisk", "cinder", "rbd", "iscsi", "vsphereVolume")


def is_attachable(pv: Obj) -> bool:
    spec = pv.get("spec") or {}
    return any(k in spec for k in ATTACHABLE_SOURCES)


def _claim_pv(world: "World", namespace: str, claim: str) -> Obj | None:
    pvc = world.store.find("PersistentVolumeClaim", claim, namespace)
    if pvc is None or not pvc["spec"].get("volumeName"):
        return None
    return world.store.find("PersistentVolume", pvc["spec"]["volumeName"])


def multi_attach_error(world: "World", pod: Obj, claim: str) -> str | None:
    """The attach/detach controller's error when ``claim`` is an RWO block volume in use on another node."""
    ns = pod["metadata"]["namespace"]
    pv = _claim_pv(world, ns, claim)
    if pv is None or not is_attachable(pv):
        return None
    modes = pv["spec"].get("accessModes") or ["ReadWriteOnce"]
    if "ReadWriteMany" in modes or "ReadOnlyMany" in modes:
        return None
    node = pod["spec"].get("nodeName")
    # the volume is attached where its earliest user started; every pod there shares it
    users: list[tuple[float, str, str]] = []
    for other in world.store.iter("Pod"):
        meta = other["metadata"]
        if meta["namespace"] != ns or meta.get("deletionTimestamp") or other.get("status", {}).get("phase") in ("Succeeded", "Failed"):
            continue
        ort = world.runtimes.get(meta["uid"])
        onode = other["spec"].get("nodeName")
        if ort is None or not onode:
            continue
        if any((v.get("persistentVolumeClaim") or {}).get("claimName") == claim for v in other["spec"].get("volumes") or ()):
            users.append((ort.started, meta["name"], onode))
    if not users:
        return None
    attached = min(users)[2]
    if attached == node:
        return None
    holders = sorted(name for _, name, n in users if n == attached)
    return f'Multi-Attach error for volume "{pv["metadata"]["name"]}" Volume is already used by pod(s) {", ".join(holders)}'
