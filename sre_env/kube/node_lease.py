"""A node's heartbeat Lease (``kube-node-lease/<node>``), derived from the Node object.

The kubelet renews its Lease every 10 s while it can reach the API server; when it
cannot, the lease stops being renewed and the node lifecycle controller marks the
node's Ready condition Unknown. The simulator models the kubelet's reachability
through that Ready condition, so the Lease is derived from it instead of being a
stored object that would need writing every 10 s: renewed up to ``now`` while the
node is Ready, frozen at the transition when it is not. ``kubectl describe node``
(built-in shell) and the served ``coordination.k8s.io`` API both read this.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sre_env.kube.timefmt import iso

__all__ = ["LEASE_DURATION_S", "LEASE_NAMESPACE", "RENEW_INTERVAL_S", "node_lease"]

Obj = dict[str, Any]

LEASE_NAMESPACE = "kube-node-lease"
RENEW_INTERVAL_S = 10
LEASE_DURATION_S = 40


def _epoch(ts: str | None) -> float | None:
    if not ts:
        return None
    try:
        return datetime.strptime(ts, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC).timestamp()
    except ValueError:
        return None


def _micro(t: float) -> str:
    """A MicroTime (``2026-03-02T09:17:31.000000Z``), as the Lease API serializes renewTime."""
    return f"{iso(t)[:-1]}.{int(round((t % 1) * 1e6)) % 1_000_000:06d}Z"


def node_lease(node: Obj, now: float) -> Obj:
    """The Lease the node's kubelet holds at simulated time ``now``."""
    meta = node.get("metadata") or {}
    name = str(meta.get("name", ""))
    created = _epoch(meta.get("creationTimestamp")) or now
    ready = next((c for c in (node.get("status") or {}).get("conditions") or () if c.get("type") == "Ready"), None)
    if ready is not None and ready.get("status") != "True":
        # not renewed since the kubelet went quiet: the last renewal before the controller noticed
        stopped = _epoch(ready.get("lastTransitionTime")) or now
        renew = max(created, stopped - LEASE_DURATION_S)
    else:
        renew = created + ((now - created) // RENEW_INTERVAL_S) * RENEW_INTERVAL_S
    uid = str(meta.get("uid", "00000000"))
    return {
        "kind": "Lease",
        "apiVersion": "coordination.k8s.io/v1",
        "metadata": {
            "name": name,
            "namespace": LEASE_NAMESPACE,
            "uid": f"1ea5e{uid[5:]}" if len(uid) > 5 else uid,
            "resourceVersion": str(meta.get("resourceVersion", "1")),
            "creationTimestamp": meta.get("creationTimestamp"),
            "ownerReferences": [{"apiVersion": "v1", "kind": "Node", "name": name, "uid": uid}],
        },
        "spec": {"holderIdentity": name, "leaseDurationSeconds": LEASE_DURATION_S, "renewTime": _micro(renew)},
    }
