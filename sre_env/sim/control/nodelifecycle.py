"""The node lifecycle controller: what the control plane does when a kubelet goes silent.

After ``node-monitor-grace-period`` (40 s) without status from a node's kubelet
the controller sets the node's conditions to ``Unknown``, marks its pods not
ready (so Endpoints drop them), and taints it ``node.kubernetes.io/unreachable``
(NoSchedule and NoExecute). The taint manager then evicts each pod when its
toleration of that taint runs out (300 s by default); the pods stay
``Terminating`` because no kubelet confirms the deletion, and their controllers
create replacements elsewhere — except where a local volume pins a pod to the
node. When the kubelet comes back the taints go, the node turns Ready and the
kubelet finishes the deletions and reports its pods again.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sre_env.kube.timefmt import iso
from sre_env.kube.tolerations import toleration_matches
from sre_env.sim.kernel.hosts import kubelet_x509_error
from sre_env.sim.kubelet.node_status import update_node_conditions

if TYPE_CHECKING:
    from sre_env.sim.kernel.hosts import HostNode
    from sre_env.sim.kernel.world import World

__all__ = ["reconcile_node_lifecycle", "NODE_MONITOR_GRACE_S", "UNREACHABLE"]

NODE_MONITOR_GRACE_S = 40.0
UNREACHABLE = "node.kubernetes.io/unreachable"
_UNREACHABLE_NO_EXECUTE = {"key": UNREACHABLE, "effect": "NoExecute"}


def reconcile_node_lifecycle(world: "World") -> None:
    """Called every tick; costs a loop over the hosts when every kubelet is connected."""
    now = world.clock.now
    for host in world.hosts.values():
        connected = host.kubelet_connected()
        if connected:
            if host.lost_since is not None:
                _recovered(world, host, now)
            continue
        if host.kubelet_running and int(now) % 60 < 5:
            # a running kubelet that cannot talk to the API server says why, every minute
            host.journal.append((now, "kubelet", kubelet_x509_error(host, now)))
        if host.lost_since is None:
            host.lost_since = now
            continue
        if now - host.lost_since >= NODE_MONITOR_GRACE_S:
            _unreachable(world, host, now)


def _unreachable(world: "World", host: "HostNode", now: float) -> None:
    node = world.store.find("Node", host.name)
    if node is None:
        return
    taints = node.setdefault("spec", {}).get("taints") or []
    if not any(t.get("key") == UNREACHABLE for t in taints):
        added = iso(now)
        node["spec"]["taints"] = [*taints, {"key": UNREACHABLE, "effect": "NoSchedule", "timeAdded": added}, {"key": UNREACHABLE, "effect": "NoExecute", "timeAdded": added}]
        conds = []
        for c in node.setdefault("status", {}).get("conditions") or []:
            c = dict(c)
            c.update(status="Unknown", reason="NodeStatusUnknown", message="Kubelet stopped posting node status.", lastTransitionTime=added)
            conds.append(c)
        node["status"]["conditions"] = conds
        world.store.touch(node)
        world.event(node, "Normal", "NodeNotReady", f"Node {host.name} status is now: NodeNotReady", "node-controller")
        for pod in _pods_on(world, host.name):
            _mark_not_ready(world, pod, added)
    # the taint manager: evict pods whose toleration of the NoExecute taint has run out
    since = host.lost_since + NODE_MONITOR_GRACE_S if host.lost_since is not None else now
    for pod in _pods_on(world, host.name):
        meta = pod["metadata"]
        if meta.get("deletionTimestamp"):
            continue
        limit = _toleration_seconds(pod)
        if limit is not None and now - since >= limit:
            world.event(pod, "Normal", "TaintManagerEviction", f"Marking for deletion Pod {meta['namespace']}/{meta['name']}", "taint-eviction-controller")
            world.delete_pod(pod)


def _recovered(world: "World", host: "HostNode", now: float) -> None:
    host.lost_since = None
    node = world.store.find("Node", host.name)
    if node is None:
        return
    taints = [t for t in node.setdefault("spec", {}).get("taints") or [] if t.get("key") != UNREACHABLE]
    if taints != (node["spec"].get("taints") or []):
        if taints:
            node["spec"]["taints"] = taints
        else:
            node["spec"].pop("taints", None)
        world.store.touch(node)
        world.event(node, "Normal", "NodeReady", f"Node {host.name} status is now: NodeReady", "kubelet")
    update_node_conditions(world)
    # the kubelet re-lists its pods and reports them (and finishes pending deletions)
    for pod in _pods_on(world, host.name):
        rt = world.runtimes.get(pod["metadata"]["uid"])
        if rt is not None:
            rt.seen_rv = ""
            rt.wake_at = min(rt.wake_at, now)
    world.kubelet_wake = min(world.kubelet_wake, now)
    world.runtime_epoch += 1


def _pods_on(world: "World", node: str) -> list[dict[str, Any]]:
    return [p for p in world.store.list("Pod") if p["spec"].get("nodeName") == node]


def _mark_not_ready(world: "World", pod: dict[str, Any], when: str) -> None:
    changed = False
    for cond in pod.get("status", {}).get("conditions") or ():
        if cond.get("type") in ("Ready", "ContainersReady") and cond.get("status") == "True":
            cond["status"] = "False"
            cond["lastTransitionTime"] = when
            changed = True
    if changed:
        world.store.touch(pod)


def _toleration_seconds(pod: dict[str, Any]) -> float | None:
    """How long the pod tolerates an unreachable node (None: forever)."""
    for tol in pod["spec"].get("tolerations") or ():
        if toleration_matches(tol, _UNREACHABLE_NO_EXECUTE):
            secs = tol.get("tolerationSeconds")
            return None if secs is None else float(secs)
    return 0.0
