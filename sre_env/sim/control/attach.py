"""Volume attachment: the PV controller's static binding and the attach/detach controller's RWO rule.

A network block volume (CSI, EBS, PD, Azure Disk, Cinder, RBD, iSCSI) is
attached to one node at a time when it is ``ReadWriteOnce``: a second pod on a
*different* node that mounts the same claim cannot start — the attach/detach
controller records ``Multi-Attach error for volume "<pv>" Volume is already
used by pod(s) <pods>`` and the kubelet times out mounting it. Local volumes
(local-path, hostPath) are never attached: their node affinity keeps every
user on one node instead. A claim created with ``spec.volumeName`` is bound to
that volume by the PV controller.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sre_env.sim.kernel.world import World

__all__ = ["ATTACHABLE_SOURCES", "is_attachable", "multi_attach_error", "bind_static_claims"]

Obj = dict[str, Any]
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


def bind_static_claims(world: "World") -> None:
    """Pending claims that name their volume (``spec.volumeName``) bind to it, as the PV controller does."""
    store = world.store
    for pvc in store.list("PersistentVolumeClaim"):
        name = pvc["spec"].get("volumeName")
        if not name or (pvc.get("status") or {}).get("phase") == "Bound":
            continue
        pv = store.find("PersistentVolume", name)
        if pv is None:
            continue
        ref = pv["spec"].get("claimRef")
        meta = pvc["metadata"]
        if ref and (ref.get("name") != meta["name"] or ref.get("namespace") != meta["namespace"]):
            continue
        pv["spec"]["claimRef"] = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "name": meta["name"], "namespace": meta["namespace"], "uid": meta["uid"]}
        pv["status"] = {"phase": "Bound"}
        store.touch(pv)
        modes = list(pv["spec"].get("accessModes") or pvc["spec"].get("accessModes") or ["ReadWriteOnce"])
        pvc["status"] = {"phase": "Bound", "accessModes": modes, "capacity": dict(pv["spec"].get("capacity") or {})}
        meta.setdefault("annotations", {}).update({"pv.kubernetes.io/bind-completed": "yes"})
        store.touch(pvc)
