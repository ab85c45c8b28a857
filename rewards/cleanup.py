"""The cleanup gate: did the repair leave the cluster as it found it, apart from the fix?

Compares the objects at submit time with the pre-incident snapshot: objects the
agent created and left (the pod ``kubectl debug`` leaves behind, temporary
Services), unrelated objects it changed, cordons and taints it forgot, replicas
left above the baseline, and config drift. A scenario declares the changes its
repair legitimately makes (a bad-disk node stays cordoned, a volume claim is
recreated), so those are not residue.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any, Iterable

from sre_env.sim.model import ModelBackend

from .base import AllowedChange, Check, OracleResult
from .mitigation import WATCHED_KINDS, Baseline, object_key

if TYPE_CHECKING:
    from sre_env.backend import Backend
    from sre_env.envs.base import Scenario

__all__ = ["CleanupOracle", "cluster_changes"]

_IGNORED_ANNOTATIONS = ("kubectl.kubernetes.io/restartedAt", "deployment.kubernetes.io/revision", "kubectl.kubernetes.io/last-applied-configuration")


def _normalise(obj: dict[str, Any]) -> dict[str, Any]:
    """The parts of an object an operator configures, in a canonical order."""
    kind = obj["kind"]
    out: dict[str, Any] = {}
    meta = obj.get("metadata") or {}
    out["labels"] = dict(meta.get("labels") or {})
    out["annotations"] = {k: v for k, v in (meta.get("annotations") or {}).items() if k not in _IGNORED_ANNOTATIONS}
    for field_ in ("webhooks", "rules", "subjects", "roleRef", "aggregationRule"):
        if field_ in obj:
            out[field_] = copy.deepcopy(obj[field_])
    if kind in ("ConfigMap", "Secret"):
        out["data"] = obj.get("data") or {}
        out["stringData"] = obj.get("stringData") or {}
        return out
    spec = copy.deepcopy(obj.get("spec") or {})
    if kind == "PersistentVolumeClaim":
        spec.pop("volumeName", None)
        out["annotations"] = {}
    if kind == "Service":
        spec.pop("clusterIP", None)
        spec.pop("clusterIPs", None)
        spec["ports"] = sorted(spec.get("ports") or [], key=lambda p: (p.get("port", 0), p.get("protocol", "")))
    template = spec.get("template")
    if isinstance(template, dict):
        tmeta = template.get("metadata") or {}
        tmeta["annotations"] = {k: v for k, v in (tmeta.get("annotations") or {}).items() if k not in _IGNORED_ANNOTATIONS}
        for ctr in (template.get("spec") or {}).get("containers") or []:
            if isinstance(ctr.get("env"), list):
                ctr["env"] = sorted(ctr["env"], key=lambda e: str(e.get("name")))
    out["spec"] = spec
    return out


def cluster_changes(baseline: Baseline, backend: "Backend") -> list[tuple[str, str, str, str, str]]:
    """(kind, namespace, name, change, detail) for every difference from the pre-incident state."""
    now: dict[str, dict[str, Any]] = {}
    for kind in WATCHED_KINDS:
        for obj in backend.api.list(kind):
            now[object_key(obj)] = obj
    changes: list[tuple[str, str, str, str, str]] = []
    # objects background noise created are not the agent's residue
    for key in backend.model.noise_objects() if isinstance(backend, ModelBackend) else ():
        now.pop(key, None)
    for key in sorted(set(now) - set(baseline.objects)):
        obj = now[key]
        kind, ns, name = key.split("/", 2)
        if kind == "Pod":
            if obj["metadata"].get("ownerReferences"):
                continue  # replacements made by controllers
            phase = obj.get("status", {}).get("phase", "")
            changes.append((kind, ns, name, "created", f"pod {ns}/{name} left behind ({phase})"))
        else:
            changes.append((kind, ns, name, "created", f"{kind.lower()} {ns + '/' if ns else ''}{name} created and left"))
    for key in sorted(set(baseline.objects) - set(now)):
        kind, ns, name = key.split("/", 2)
        if kind == "Pod":
            continue
        changes.append((kind, ns, name, "deleted", f"{kind.lower()} {ns + '/' if ns else ''}{name} deleted"))
    for key in sorted(set(baseline.objects) & set(now)):
        kind, ns, name = key.split("/", 2)
        if kind == "Pod":
            continue
        before, after = baseline.objects[key], now[key]
        if kind == "Node":
            if bool(after["spec"].get("unschedulable")) and not before["spec"].get("unschedulable"):
                changes.append((kind, ns, name, "cordoned", f"node {name} left cordoned"))
            elif not after["spec"].get("unschedulable") and before["spec"].get("unschedulable"):
                changes.append((kind, ns, name, "modified", f"node {name} uncordoned"))
            if (after["spec"].get("taints") or []) != (before["spec"].get("taints") or []):
                changes.append((kind, ns, name, "tainted", f"node {name} taints changed"))
            continue
        b, a = _normalise(before), _normalise(after)
        if kind in ("Deployment", "StatefulSet"):
            want, have = int(before["spec"].get("replicas", 1)), int(after["spec"].get("replicas", 1))
            if have > want:
                changes.append((kind, ns, name, "modified", f"{kind.lower()} {ns}/{name} left at {have} replicas (baseline {want})"))
            elif have < want:
                changes.append((kind, ns, name, "modified", f"{kind.lower()} {ns}/{name} scaled down to {have} (baseline {want})"))
            b["spec"].pop("replicas", None)
            a["spec"].pop("replicas", None)
        if a != b:
            changes.append((kind, ns, name, "modified", f"{kind.lower()} {ns + '/' if ns else ''}{name} differs from its pre-incident configuration"))
    return changes


class CleanupOracle:
    name = "cleanup"

    def evaluate(self, backend: "Backend", scenario: "Scenario", baseline: Baseline) -> OracleResult:
        allowed: Iterable[AllowedChange] = scenario.allowed_changes()
        residue, tolerated = [], []
        for kind, ns, name, change, detail in cluster_changes(baseline, backend):
            if any(a.allows(kind, ns, name, change) for a in allowed):
                tolerated.append(detail)
            else:
                residue.append(detail)
        checks = [Check("no_residue", not residue, "; ".join(residue) if residue else "nothing left behind, no drift")]
        return OracleResult.from_checks(self.name, checks, residue=residue, tolerated=tolerated)
