"""Moving an app off a node: the repair for faults that live in a node's hardware.

A node with a failing NIC, memory or disk has to be taken out of service:
cordoned so nothing new lands there, and emptied. Stateless pods move by
themselves once evicted; a database whose volume is a local PV on that node
cannot follow its data, so its claim is recreated on a healthy node (restored
from a replica or backup in real life). These helpers compute what sits on the
node and the commands that move it, for every scenario that needs them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from sre_env.rewards.base import AllowedChange, Check

from .base import RootCause

if TYPE_CHECKING:
    from sre_env.apps.base import AppSpec
    from sre_env.backend import Backend

    from .base import Scenario

__all__ = ["LocalVolume", "local_volumes_on", "app_pods_on", "evacuation_commands", "isolation_allowed_changes", "node_cause", "off_node_check"]


def node_cause(scenario: "Scenario", mechanism: str, summary: str, details: Mapping[str, Any], affected: Iterable[str]) -> RootCause:
    """The ground truth of a fault that lives on ``node/<variant["node"]>`` (the details name the node first)."""
    node = scenario.variant["node"]
    return RootCause(
        component=f"node/{node}",
        namespace=scenario.namespace,
        layer=scenario.layer,
        mechanism=mechanism,
        summary=summary,
        details={"node": node, **details},
        affected=tuple(affected),
    )


@dataclass(frozen=True)
class LocalVolume:
    workload: str
    claim: str
    selector: str  # label selector of the workload's pods
    storage: str
    storage_class: str


def local_volumes_on(backend: "Backend", app: "AppSpec", node: str) -> tuple[LocalVolume, ...]:
    """The app's claims whose local PV lives on ``node`` (with the workload that mounts each)."""
    ns = app.namespace
    out = []
    for comp in app.components:
        if not comp.volume_claim:
            continue
        claim = backend.api.get("PersistentVolumeClaim", comp.volume_claim, ns)
        pv_name = claim["spec"].get("volumeName")
        if not pv_name:
            continue
        pv = backend.api.get("PersistentVolume", pv_name)
        if (pv["metadata"].get("annotations") or {}).get("local.path.provisioner/selected-node") != node:
            continue
        workload = backend.api.get(comp.kind, comp.name, ns)
        labels = (workload["spec"].get("selector") or {}).get("matchLabels") or {}
        selector = ",".join(f"{k}={v}" for k, v in sorted(labels.items()))
        size = ((claim["spec"].get("resources") or {}).get("requests") or {}).get("storage", comp.storage)
        out.append(LocalVolume(comp.name, comp.volume_claim, selector, str(size), str(claim["spec"].get("storageClassName") or "local-path")))
    return tuple(sorted(out, key=lambda v: v.workload))


def app_pods_on(backend: "Backend", app: "AppSpec", node: str) -> list[str]:
    return sorted(p["metadata"]["name"] for p in backend.api.list("Pod", app.namespace) if p["spec"].get("nodeName") == node and not p["metadata"].get("deletionTimestamp"))


def evacuation_commands(namespace: str, node: str, volumes: tuple[LocalVolume, ...]) -> list[str]:
    """Cordon, release the local claims, drain, and recreate the claims on healthy nodes."""
    steps = [f"kubectl cordon {node}"]
    steps += [f"kubectl delete pvc {v.claim} -n {namespace} --wait=false" for v in volumes]
    steps.append(f"kubectl drain {node} --ignore-daemonsets --delete-emptydir-data")
    if volumes:
        steps.append("sleep 15")
        manifests = "".join(
            "---\napiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n"
            f"  name: {v.claim}\nspec:\n  accessModes: [ReadWriteOnce]\n  storageClassName: {v.storage_class}\n"
            f"  resources:\n    requests:\n      storage: {v.storage}\n"
            for v in volumes
        )
        steps.append(f"kubectl apply -n {namespace} -f - <<'EOF'\n{manifests}EOF")
    steps += ["sleep 30", f"kubectl get pods -n {namespace} -o wide"]
    return steps


def isolation_allowed_changes(namespace: str, node: str, volumes: tuple[LocalVolume, ...]) -> list[AllowedChange]:
    return [
        AllowedChange("Node", "", node, "cordoned"),
        AllowedChange("Node", "", node, "tainted"),
        *(AllowedChange("PersistentVolumeClaim", namespace, v.claim, "*") for v in volumes),
    ]


def off_node_check(backend: "Backend", app: "AppSpec", node: str, name: str = "off_bad_node") -> Check:
    """No pod of the app runs on ``node`` any more, and nothing new can land there."""
    left = app_pods_on(backend, app, node)
    cordoned = bool(backend.api.get("Node", node)["spec"].get("unschedulable"))
    ok = not left and cordoned
    if ok:
        detail = f"{node} is cordoned and runs none of {app.name}'s pods"
    else:
        detail = (f"still on {node}: {', '.join(left)}" if left else "") + ("" if cordoned else f"; {node} still accepts pods")
    return Check(name, ok, detail.strip("; "))
