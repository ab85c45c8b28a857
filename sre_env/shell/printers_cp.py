"""kubectl table columns for the control-plane kinds: Jobs, CronJobs, webhooks, RBAC, Gatekeeper mutators.

Columns follow kubectl's built-in printers (``k8s.io/kubernetes/pkg/printers/internalversion``);
``Assign`` is a CRD without printer columns, so it gets NAME and AGE.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sre_env.kube.timefmt import parse_iso

Obj = dict[str, Any]
RowFn = Callable[[Obj, float, bool], list[str]]

__all__ = ["COLUMNS_CP", "job_status"]


def _age(o: Obj, now: float) -> str:
    from .printers import age

    return age(o["metadata"].get("creationTimestamp"), now)


def _images(spec: Obj) -> list[str]:
    ctrs = spec.get("containers") or []
    return [",".join(c.get("name", "") for c in ctrs), ",".join(c.get("image", "") for c in ctrs)]


def _dur(seconds: float) -> str:
    from sre_env.kube.timefmt import iso

    from .printers import age as _a  # HumanDuration, like kubectl's DURATION column

    return _a(iso(0), max(seconds, 0.0))


def job_status(o: Obj) -> str:
    """kubectl's STATUS column for a Job: the first of these conditions that holds."""
    st = o.get("status") or {}
    true = {c.get("type") for c in st.get("conditions") or () if c.get("status") == "True"}
    for cond in ("Complete", "Failed"):
        if cond in true:
            return cond
    if (o.get("spec") or {}).get("suspend") or "Suspended" in true:
        return "Suspended"
    for cond in ("FailureTarget", "SuccessCriteriaMet"):
        if cond in true:
            return cond
    if st.get("terminating"):
        return "Terminating"
    return "Running"


def _job(o: Obj, now: float, wide: bool) -> list[str]:
    spec, st = o.get("spec") or {}, o.get("status") or {}
    completions = spec.get("completions")
    done = f"{st.get('succeeded', 0)}/{completions}" if completions is not None else f"{st.get('succeeded', 0)}/1 of {spec.get('parallelism', 1)}"
    duration = ""
    if st.get("startTime"):
        end = parse_iso(st["completionTime"]) if st.get("completionTime") else now
        duration = _dur(end - parse_iso(st["startTime"]))
    row = [job_status(o), done, duration, _age(o, now)]
    if wide:
        sel = ((spec.get("selector") or {}).get("matchLabels")) or {}
        row += [*_images((spec.get("template") or {}).get("spec") or {}), ",".join(f"{k}={v}" for k, v in sorted(sel.items())) or "<none>"]
    return row


def _cronjob(o: Obj, now: float, wide: bool) -> list[str]:
    from .printers import age

    spec, st = o.get("spec") or {}, o.get("status") or {}
    last = age(st["lastScheduleTime"], now) if st.get("lastScheduleTime") else "<none>"
    row = [spec.get("schedule", ""), spec.get("timeZone") or "<none>", "True" if spec.get("suspend") else "False", str(len(st.get("active") or [])), last, _age(o, now)]
    if wide:
        tpl = (((spec.get("jobTemplate") or {}).get("spec") or {}).get("template") or {}).get("spec") or {}
        row += [*_images(tpl), "<none>"]
    return row


def _webhooks(o: Obj, now: float, wide: bool) -> list[str]:
    return [str(len(o.get("webhooks") or [])), _age(o, now)]


def _created_at(o: Obj, now: float, wide: bool) -> list[str]:
    return [o["metadata"].get("creationTimestamp", "")]


def _binding(o: Obj, now: float, wide: bool) -> list[str]:
    ref = o.get("roleRef") or {}
    row = [f"{ref.get('kind', '')}/{ref.get('name', '')}", _age(o, now)]
    if wide:
        subs = o.get("subjects") or []
        users = ",".join(s.get("name", "") for s in subs if s.get("kind") == "User")
        groups = ",".join(s.get("name", "") for s in subs if s.get("kind") == "Group")
        sas = ",".join(f"{s.get('namespace', '')}/{s.get('name', '')}" for s in subs if s.get("kind") == "ServiceAccount")
        row += [users, groups, sas]
    return row


def _apiservice(o: Obj, now: float, wide: bool) -> list[str]:
    ref = (o.get("spec") or {}).get("service")
    service = f"{ref.get('namespace', '')}/{ref.get('name', '')}" if ref else "Local"
    cond = next((c for c in (o.get("status") or {}).get("conditions") or () if c.get("type") == "Available"), None)
    avail = "Unknown" if cond is None else (cond["status"] if cond["status"] == "True" else f"{cond['status']} ({cond.get('reason', '')})")
    return [service, avail, _age(o, now)]


def _name_age(o: Obj, now: float, wide: bool) -> list[str]:
    return [_age(o, now)]


COLUMNS_CP: dict[str, tuple[list[str], list[str], RowFn]] = {
    "Job": (["STATUS", "COMPLETIONS", "DURATION", "AGE"], ["CONTAINERS", "IMAGES", "SELECTOR"], _job),
    "CronJob": (["SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST SCHEDULE", "AGE"], ["CONTAINERS", "IMAGES", "SELECTOR"], _cronjob),
    "ValidatingWebhookConfiguration": (["WEBHOOKS", "AGE"], [], _webhooks),
    "MutatingWebhookConfiguration": (["WEBHOOKS", "AGE"], [], _webhooks),
    "Role": (["CREATED AT"], [], _created_at),
    "ClusterRole": (["CREATED AT"], [], _created_at),
    "RoleBinding": (["ROLE", "AGE"], ["USERS", "GROUPS", "SERVICEACCOUNTS"], _binding),
    "ClusterRoleBinding": (["ROLE", "AGE"], ["USERS", "GROUPS", "SERVICEACCOUNTS"], _binding),
    "Assign": (["AGE"], [], _name_age),
    "APIService": (["SERVICE", "AVAILABLE", "AGE"], [], _apiservice),
}
