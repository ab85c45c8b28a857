"""Pod priority: PriorityClass objects and the Priority admission plugin.

The API server resolves a pod's ``priorityClassName`` into ``spec.priority`` (and
``spec.preemptionPolicy``) when the pod is created, so changing or deleting a
PriorityClass later never changes running pods — only the pods created after.
A name with no PriorityClass is rejected, which is what a ReplicaSet sees when
someone deletes the class its template names. The two system classes exist in
every cluster.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sre_env.errors import ApiError

if TYPE_CHECKING:
    from sre_env.sim.kernel.store import ObjectStore

__all__ = ["BUILTIN_PRIORITY_CLASSES", "admit_priority", "builtin_priority_classes", "pod_priority", "preempts"]

Obj = dict[str, Any]

#: name -> (value, description), as the API server creates them at start-up
BUILTIN_PRIORITY_CLASSES: dict[str, tuple[int, str]] = {
    "system-cluster-critical": (2000000000, "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary."),
    "system-node-critical": (2000001000, "Used for system critical pods that must not be moved from their current node."),
}


def builtin_priority_classes() -> list[Obj]:
    return [
        {
            "kind": "PriorityClass",
            "apiVersion": "scheduling.k8s.io/v1",
            "metadata": {"name": name},
            "value": value,
            "globalDefault": False,
            "description": text,
            "preemptionPolicy": "PreemptLowerPriority",
        }
        for name, (value, text) in sorted(BUILTIN_PRIORITY_CLASSES.items())
    ]


def admit_priority(store: "ObjectStore", pod: Obj) -> None:
    """Fill ``spec.priority``/``preemptionPolicy`` from the pod's class (or the global default)."""
    spec = pod.setdefault("spec", {})
    name = spec.get("priorityClassName")
    if name:
        pc = store.find("PriorityClass", name)
        if pc is None:
            pod_name = pod.get("metadata", {}).get("name") or pod.get("metadata", {}).get("generateName", "")
            raise ApiError.forbidden(f'pods "{pod_name}" is forbidden: no PriorityClass with name {name} was found')
    else:
        pc = next((c for c in store.iter("PriorityClass") if c.get("globalDefault")), None)
        if pc is not None:
            spec["priorityClassName"] = pc["metadata"]["name"]
    value = int(pc.get("value", 0)) if pc is not None else 0
    if "priority" in spec and spec["priority"] is not None and int(spec["priority"]) != value:
        pod_name = pod.get("metadata", {}).get("name", "")
        raise ApiError.forbidden(f'pods "{pod_name}" is forbidden: the integer value of priority ({spec["priority"]}) must not be provided in pod spec; priority admission controller computed {value} from the given PriorityClass name')
    spec["priority"] = value
    spec["preemptionPolicy"] = (pc or {}).get("preemptionPolicy", "PreemptLowerPriority")


def pod_priority(pod: Obj) -> int:
    """The priority the scheduler uses (0 for pods admitted before priorities were tracked)."""
    try:
        return int((pod.get("spec") or {}).get("priority") or 0)
    except (TypeError, ValueError):
        return 0


def preempts(pod: Obj) -> bool:
    return (pod.get("spec") or {}).get("preemptionPolicy", "PreemptLowerPriority") != "Never"
