"""``kubectl describe daemonset``: kubectl's DaemonSet describer layout.

Unlike the other workload describers it prints no Namespace line, and its
node counts are written without a tab (``Desired Number of Nodes Scheduled: 4``),
which ends the aligned block above them — both as kubectl does.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .kctx import K

Obj = dict[str, Any]

__all__ = ["DESCRIBERS_DS"]


def describe_daemonset(k: K, ds: Obj) -> str:
    from .kdescribe import _W, _finish, _pod_template, _pods_status, _selector_str

    w = _W()
    m, sp, st = ds["metadata"], ds.get("spec") or {}, ds.get("status") or {}
    tpl_spec = (sp.get("template") or {}).get("spec") or {}
    w.kv(0, "Name", m["name"])
    w.kv(0, "Selector", _selector_str(ds))
    w.kv(0, "Node-Selector", ",".join(f"{a}={b}" for a, b in sorted((tpl_spec.get("nodeSelector") or {}).items())) or "<none>")
    w.labels(0, "Labels", m.get("labels"))
    w.annotations(0, "Annotations", m.get("annotations"))
    w.raw(0, f"Desired Number of Nodes Scheduled: {st.get('desiredNumberScheduled', 0)}")
    w.raw(0, f"Current Number of Nodes Scheduled: {st.get('currentNumberScheduled', 0)}")
    w.raw(0, f"Number of Nodes Scheduled with Up-to-date Pods: {st.get('updatedNumberScheduled', 0)}")
    w.raw(0, f"Number of Nodes Scheduled with Available Pods: {st.get('numberAvailable', 0)}")
    w.raw(0, f"Number of Nodes Misscheduled: {st.get('numberMisscheduled', 0)}")
    w.kv(0, "Pods Status", _pods_status(k, ds))
    _pod_template(w, sp.get("template") or {})
    return _finish(k, w, ds)


DESCRIBERS_DS: dict[str, Callable[[K, Obj], str]] = {"DaemonSet": describe_daemonset}
