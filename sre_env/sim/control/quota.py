"""ResourceQuota: admission of new pods against a namespace's hard limits, and quota status.

Quota is enforced when a pod is *created*, never on running pods: a quota set
below what a namespace already uses changes nothing until a pod has to be
replaced (a rollout, a crash-looping pod deleted, a node drained). Then the
API server refuses the create with the exact ``exceeded quota`` text, and the
ReplicaSet controller reports it as a ``FailedCreate`` event and retries with
back-off. Usage counts the requests and limits of the namespace's
non-terminal pods, like the quota controller's pod evaluator.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sre_env.errors import ApiError
from sre_env.kube.quantity import (
    cpu_millicores,
    format_bytes,
    format_millicores,
    memory_bytes,
)

if TYPE_CHECKING:
    from sre_env.backend import ClusterAPI
    from sre_env.sim.kernel.store import ObjectStore

__all__ = ["TRACKED", "admit_pod_quota", "format_quantity", "namespace_usage", "pod_usage", "quota_status", "refresh_quota_status"]

Obj = dict[str, Any]

#: quota resource -> (pod field, "cpu"|"memory"|"count")
TRACKED: dict[str, tuple[str, str]] = {
    "pods": ("pods", "count"),
    "requests.cpu": ("requests", "cpu"),
    "cpu": ("requests", "cpu"),
    "requests.memory": ("requests", "memory"),
    "memory": ("requests", "memory"),
    "limits.cpu": ("limits", "cpu"),
    "limits.memory": ("limits", "memory"),
}


def _parse(resource: str, value: Any) -> int:
    kind = TRACKED[resource][1]
    try:
        if kind == "cpu":
            return cpu_millicores(value)
        if kind == "memory":
            return memory_bytes(value)
        return int(str(value))
    except ValueError:
        return 0


def format_quantity(resource: str, amount: int) -> str:
    """The canonical form the API prints: ``1900m``/``2`` for CPU, ``512Mi`` for memory."""
    kind = TRACKED.get(resource, ("", "count"))[1]
    if kind == "cpu":
        return format_millicores(amount)
    if kind == "memory":
        return format_bytes(amount)
    return str(amount)


def _counted(pod: Obj) -> bool:
    if pod.get("status", {}).get("phase") in ("Succeeded", "Failed"):
        return False
    return not pod["metadata"].get("deletionTimestamp")


def pod_usage(pod: Obj) -> tuple[dict[str, int], dict[str, list[str]]]:
    """(resource -> amount, resource -> containers that do not set it) for one pod."""
    usage: dict[str, int] = {"pods": 1}
    missing: dict[str, list[str]] = {}
    for resource, (field, kind) in TRACKED.items():
        if kind == "count":
            continue
        total = 0
        for ctr in (pod.get("spec") or {}).get("containers") or ():
            value = ((ctr.get("resources") or {}).get(field) or {}).get(kind)
            if value is None:
                missing.setdefault(resource, []).append(ctr.get("name", ""))
                continue
            total += _parse(resource, value)
        usage[resource] = total
    return usage, missing


def namespace_usage(store: "ObjectStore | ClusterAPI", namespace: str, exclude_uid: str | None = None) -> dict[str, int]:
    """What the namespace's counted pods use of each tracked resource (``store``: the object store or an API listing pods)."""
    used: dict[str, int] = {r: 0 for r in TRACKED}
    for pod in store.list("Pod", namespace):
        if not _counted(pod) or pod["metadata"].get("uid") == exclude_uid:
            continue
        usage, _ = pod_usage(pod)
        for r, v in usage.items():
            used[r] += v
    return used


def admit_pod_quota(store: "ObjectStore", pod: Obj) -> None:
    """Refuse a pod that would take a namespace over any of its quotas (first quota by name wins)."""
    ns = pod.get("metadata", {}).get("namespace") or "default"
    quotas = store.list("ResourceQuota", ns) if store.find("Namespace", ns) is not None else []
    if not quotas:
        return
    name = pod.get("metadata", {}).get("name", "")
    usage, missing = pod_usage(pod)
    used = namespace_usage(store, ns)
    for q in quotas:
        hard = {r: v for r, v in ((q.get("spec") or {}).get("hard") or {}).items() if r in TRACKED}
        need = [r for r in sorted(hard) if r in missing]
        if need:
            parts = "; ".join(f"{r} for: {','.join(missing[r])}" for r in need)
            raise ApiError.forbidden(f'pods "{name}" is forbidden: failed quota: {q["metadata"]["name"]}: must specify {parts}')
        over = [r for r in sorted(hard) if used[r] + usage.get(r, 0) > _parse(r, hard[r])]
        if over:
            requested = ",".join(f"{r}={format_quantity(r, usage.get(r, 0))}" for r in over)
            in_use = ",".join(f"{r}={format_quantity(r, used[r])}" for r in over)
            limited = ",".join(f"{r}={hard[r]}" for r in over)
            raise ApiError.forbidden(f'pods "{name}" is forbidden: exceeded quota: {q["metadata"]["name"]}, requested: {requested}, used: {in_use}, limited: {limited}')


def quota_status(store: "ObjectStore", quota: Obj) -> Obj:
    hard = dict((quota.get("spec") or {}).get("hard") or {})
    used = namespace_usage(store, quota["metadata"]["namespace"])
    return {"hard": hard, "used": {r: format_quantity(r, used[r]) if r in TRACKED else "0" for r in sorted(hard)}}


def refresh_quota_status(store: "ObjectStore", namespaces: set[str] | None = None) -> None:
    """Recompute ``status`` of the quotas in ``namespaces`` (all when None); writes only on change."""
    for q in store.list("ResourceQuota"):
        if namespaces is not None and q["metadata"]["namespace"] not in namespaces:
            continue
        status = quota_status(store, q)
        if q.get("status") != status:
            q["status"] = status
            store.touch(q)
