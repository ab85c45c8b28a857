"""The API server's defaults for container probes, applied when pods and pod templates are written.

A real API server fills in ``timeoutSeconds: 1``, ``periodSeconds: 10``,
``successThreshold: 1``, ``failureThreshold: 3`` and, for ``httpGet``, ``path: /``
and ``scheme: HTTP`` on every create and update, so a probe added by a patch reads
back complete (``kubectl describe`` prints ``#success=1``, not ``#success=0``).
The store calls :func:`default_probes` on writes of the kinds in
:data:`DEFAULTED_KINDS`; the prober reads the same values it would have assumed.
"""

from __future__ import annotations

from typing import Any

__all__ = ["DEFAULTED_KINDS", "PROBE_DEFAULTS", "default_probes"]

Obj = dict[str, Any]

PROBE_DEFAULTS = (("timeoutSeconds", 1), ("periodSeconds", 10), ("successThreshold", 1), ("failureThreshold", 3))
_PROBES = ("livenessProbe", "readinessProbe", "startupProbe")
#: kinds that carry a pod spec (directly, in a template, or in a job template)
DEFAULTED_KINDS = frozenset({"Pod", "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronJob", "ReplicationController"})


def _pod_spec(obj: Obj) -> Obj | None:
    spec = obj.get("spec")
    if not isinstance(spec, dict):
        return None
    kind = obj.get("kind")
    if kind == "Pod":
        return spec
    if kind == "CronJob":
        spec = ((spec.get("jobTemplate") or {}).get("spec")) or {}
    tpl = spec.get("template") if isinstance(spec, dict) else None
    inner = tpl.get("spec") if isinstance(tpl, dict) else None
    return inner if isinstance(inner, dict) else None


def default_probes(obj: Obj) -> None:
    """Fill in the defaulted probe fields of ``obj``'s containers in place (idempotent)."""
    spec = _pod_spec(obj)
    if spec is None:
        return
    for key in ("containers", "initContainers"):
        for ctr in spec.get(key) or ():
            if not isinstance(ctr, dict):
                continue
            for name in _PROBES:
                probe = ctr.get(name)
                if not isinstance(probe, dict):
                    continue
                for field, value in PROBE_DEFAULTS:
                    probe.setdefault(field, value)
                http = probe.get("httpGet")
                if isinstance(http, dict):
                    http.setdefault("path", "/")
                    http.setdefault("scheme", "HTTP")
