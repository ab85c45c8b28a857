"""Reset on a real cluster: put the app namespace back to the recorded baseline.

A real cluster cannot be restored from a snapshot, so reset recovers the fault
by reconciling: every baseline object of the namespace that is missing is
created again, every one that drifted is replaced by its baseline version, and
objects that appeared in the namespace after the baseline (a fault's or the
agent's) are deleted; a node the episode cordoned is uncordoned. Objects that
were there when the baseline was recorded are never deleted, nothing outside
the namespace is deleted, and the harness's own objects are left alone.
"""

from __future__ import annotations

import copy
from typing import Any

from sre_env.errors import ApiError
from sre_env.rewards.cleanup import _normalise
from sre_env.rewards.mitigation import WATCHED_KINDS, Baseline, object_key

from .oracles import harness_owned

__all__ = ["fresh_copy", "reconcile"]

Obj = dict[str, Any]

_VOLATILE_META = ("resourceVersion", "uid", "creationTimestamp", "managedFields", "generation", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds", "ownerReferences")
#: creation order: what others refer to first
_ORDER = ("ServiceAccount", "Role", "RoleBinding", "ConfigMap", "Secret", "PersistentVolumeClaim", "Service", "NetworkPolicy", "Deployment", "StatefulSet", "DaemonSet", "CronJob", "Ingress")
#: kinds whose spec the API server will not let a replace change
_IMMUTABLE = frozenset({"PersistentVolumeClaim"})


def fresh_copy(obj: Obj) -> Obj:
    """The object as a client would submit it: no status, no server-assigned metadata."""
    out = copy.deepcopy(obj)
    out.pop("status", None)
    meta = out.setdefault("metadata", {})
    for key in _VOLATILE_META:
        meta.pop(key, None)
    return out


def _rank(key: str) -> int:
    kind = key.split("/", 1)[0]
    return _ORDER.index(kind) if kind in _ORDER else len(_ORDER)


def reconcile(api: Any, baseline: Baseline, namespace: str) -> list[str]:
    """Drive ``namespace`` back to ``baseline``; returns what was done (for logs and tests)."""
    done: list[str] = []
    kinds = [k for k in WATCHED_KINDS if k not in ("Namespace", "Node", "Pod") and api.serves(k)]
    current: dict[str, Obj] = {}
    for kind in kinds:
        for obj in api.list(kind, namespace):
            # cluster-scoped kinds list cluster-wide: only what lives in the namespace is ours to touch
            if (obj.get("metadata") or {}).get("namespace") == namespace and not harness_owned(obj):
                current[object_key(obj)] = obj
    wanted = {k: o for k, o in baseline.objects.items() if (o.get("metadata") or {}).get("namespace") == namespace and o["kind"] in kinds}
    for key in sorted(wanted, key=lambda k: (_rank(k), k)):
        want, have = wanted[key], current.get(key)
        kind, _, name = key.split("/", 2)
        try:
            if have is None:
                api.create(fresh_copy(want))
                done.append(f"recreated {kind.lower()}/{name}")
            elif kind not in _IMMUTABLE and _normalise(have) != _normalise(want):
                body = fresh_copy(want)
                body["metadata"]["resourceVersion"] = have["metadata"].get("resourceVersion")
                if kind == "Service":
                    for field in ("clusterIP", "clusterIPs"):
                        if field in (have.get("spec") or {}):
                            body["spec"][field] = have["spec"][field]
                api.replace(body)
                done.append(f"restored {kind.lower()}/{name}")
        except ApiError as err:
            done.append(f"could not restore {kind.lower()}/{name}: {err.message}")
    for key in sorted(set(current) - set(wanted), key=lambda k: (-_rank(k), k)):
        kind, _, name = key.split("/", 2)
        try:
            api.delete(kind, name, namespace)
            done.append(f"deleted {kind.lower()}/{name} (created after the baseline)")
        except ApiError as err:
            if err.code != 404:
                done.append(f"could not delete {kind.lower()}/{name}: {err.message}")
    # bare pods (``kubectl run``, ``kubectl debug`` copies) the episode left; controllers own the rest
    for pod in api.list("Pod", namespace):
        meta = pod["metadata"]
        if not meta.get("ownerReferences") and object_key(pod) not in baseline.objects and not harness_owned(pod):
            try:
                api.delete("Pod", meta["name"], namespace)
                done.append(f"deleted pod/{meta['name']} (created after the baseline)")
            except ApiError:
                pass
    for key, node in baseline.objects.items():
        if node["kind"] != "Node" or (node.get("spec") or {}).get("unschedulable"):
            continue
        try:
            now = api.get("Node", node["metadata"]["name"])
        except ApiError:
            continue
        if (now.get("spec") or {}).get("unschedulable"):
            api.patch("Node", node["metadata"]["name"], None, {"spec": {"unschedulable": None}}, "merge")
            done.append(f"uncordoned node/{node['metadata']['name']}")
    return done
