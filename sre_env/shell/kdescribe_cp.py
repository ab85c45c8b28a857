"""``kubectl describe`` for the control-plane kinds: Jobs, CronJobs and APIServices.

Field order and wording follow kubectl's describers
(``k8s.io/kubectl/pkg/describe``: JobDescriber, CronJobDescriber); the pod
template and the Events block reuse the workload describers' helpers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .kctx import K

Obj = dict[str, Any]

__all__ = ["DESCRIBERS_CP"]


def describe_job(k: K, job: Obj) -> str:
    from .kdescribe import (
        _W,
        _controller,
        _finish,
        _pod_template,
        _selector_str,
        rfc1123,
    )

    w = _W()
    m, sp, st = job["metadata"], job.get("spec") or {}, job.get("status") or {}
    w.kv(0, "Name", m["name"])
    w.kv(0, "Namespace", m.get("namespace"))
    w.kv(0, "Selector", _selector_str(job))
    w.labels(0, "Labels", m.get("labels"))
    w.annotations(0, "Annotations", m.get("annotations"))
    ctl = _controller(job)
    if ctl:
        w.kv(0, "Controlled By", ctl)
    w.kv(0, "Parallelism", sp.get("parallelism", 1))
    w.kv(0, "Completions", sp.get("completions", "<unset>"))
    w.kv(0, "Completion Mode", sp.get("completionMode", "NonIndexed"))
    w.kv(0, "Suspend", str(bool(sp.get("suspend"))).lower())
    w.kv(0, "Backoff Limit", sp.get("backoffLimit", 6))
    if sp.get("activeDeadlineSeconds") is not None:
        w.kv(0, "Active Deadline Seconds", f"{sp['activeDeadlineSeconds']}s")
    if st.get("startTime"):
        w.kv(0, "Start Time", rfc1123(st["startTime"]))
    if st.get("completionTime"):
        w.kv(0, "Completed At", rfc1123(st["completionTime"]))
    w.kv(0, "Pods Statuses", f"{st.get('active', 0)} Active ({st.get('ready', 0)} Ready) / {st.get('succeeded', 0)} Succeeded / {st.get('failed', 0)} Failed")
    _pod_template(w, sp.get("template") or {})
    return _finish(k, w, job)


def describe_cronjob(k: K, cj: Obj) -> str:
    from .kdescribe import _W, _finish, _pod_template, rfc1123

    w = _W()
    m, sp, st = cj["metadata"], cj.get("spec") or {}, cj.get("status") or {}
    job = (sp.get("jobTemplate") or {}).get("spec") or {}
    w.kv(0, "Name", m["name"])
    w.kv(0, "Namespace", m.get("namespace"))
    w.labels(0, "Labels", m.get("labels"))
    w.annotations(0, "Annotations", m.get("annotations"))
    w.kv(0, "Schedule", sp.get("schedule", ""))
    w.kv(0, "Concurrency Policy", sp.get("concurrencyPolicy", "Allow"))
    w.kv(0, "Suspend", "True" if sp.get("suspend") else "False")
    w.kv(0, "Successful Job History Limit", sp.get("successfulJobsHistoryLimit", 3))
    w.kv(0, "Failed Job History Limit", sp.get("failedJobsHistoryLimit", 1))
    w.kv(0, "Starting Deadline Seconds", f"{sp['startingDeadlineSeconds']}s" if sp.get("startingDeadlineSeconds") is not None else "<unset>")
    w.kv(0, "Selector", "<unset>")
    w.kv(0, "Parallelism", job.get("parallelism", "<unset>"))
    w.kv(0, "Completions", job.get("completions", "<unset>"))
    if job.get("activeDeadlineSeconds") is not None:
        w.kv(0, "Active Deadline Seconds", f"{job['activeDeadlineSeconds']}s")
    _pod_template(w, job.get("template") or {})
    w.kv(0, "Last Schedule Time", rfc1123(st["lastScheduleTime"]) if st.get("lastScheduleTime") else "<unset>")
    active = ", ".join(a.get("name", "") for a in st.get("active") or ())
    w.kv(0, "Active Jobs", active or "<none>")
    return _finish(k, w, cj)


def describe_apiservice(k: K, svc: Obj) -> str:
    from .kdescribe import _W, _finish, rfc1123

    w = _W()
    m, sp = svc["metadata"], svc.get("spec") or {}
    w.kv(0, "Name", m["name"])
    w.kv(0, "Namespace", "")
    w.labels(0, "Labels", m.get("labels"))
    w.annotations(0, "Annotations", m.get("annotations"))
    w.kv(0, "API Version", "apiregistration.k8s.io/v1")
    w.kv(0, "Kind", "APIService")
    w.raw(0, "Spec:")
    w.kv(1, "Group", sp.get("group", ""))
    w.kv(1, "Group Priority Minimum", sp.get("groupPriorityMinimum", ""))
    if sp.get("insecureSkipTLSVerify"):
        w.kv(1, "Insecure Skip TLS Verify", "true")
    ref = sp.get("service")
    if ref:
        w.raw(1, "Service:")
        w.kv(2, "Name", ref.get("name", ""))
        w.kv(2, "Namespace", ref.get("namespace", ""))
        w.kv(2, "Port", ref.get("port", 443))
    w.kv(1, "Version", sp.get("version", ""))
    w.kv(1, "Version Priority", sp.get("versionPriority", ""))
    w.raw(0, "Status:")
    w.raw(1, "Conditions:")
    for c in (svc.get("status") or {}).get("conditions") or ():
        w.kv(2, "Last Transition Time", rfc1123(c.get("lastTransitionTime")))
        w.kv(2, "Message", c.get("message", ""))
        w.kv(2, "Reason", c.get("reason", ""))
        w.kv(2, "Status", c.get("status", ""))
        w.kv(2, "Type", c.get("type", ""))
    return _finish(k, w, svc)


DESCRIBERS_CP: dict[str, Callable[[K, Obj], str]] = {"Job": describe_job, "CronJob": describe_cronjob, "APIService": describe_apiservice}
