"""The PV controller's static binding: a claim created with ``spec.volumeName`` binds to that volume.

(The attach/detach controller's one-node rule for ReadWriteOnce block volumes is
:func:`sre_env.sim.node.volumes.multi_attach_error`: the kubelet consults it before
it mounts.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sre_env.sim.kernel.world import World

__all__ = ["bind_static_claims"]

Obj = dict[str, Any]
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
