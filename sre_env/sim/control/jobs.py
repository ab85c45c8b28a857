"""The Job and CronJob controllers.

A CronJob creates a Job at each scheduled minute (five-field cron, the
controller's ``<cronjob>-<minutes since epoch>`` names, ``concurrencyPolicy``,
history limits); a Job creates its pod, counts it ``succeeded`` when the pod's
phase is ``Succeeded`` — every regular container exited 0 — retries failed pods
up to ``backoffLimit`` and fails the Job on ``activeDeadlineSeconds``. So a pod
whose app container is done but whose sidecar keeps running stays ``Running``
(``NotReady``), and its Job never completes: exactly what a real cluster does.

Work happens only on the store's dirty set and at the next scheduled minute,
so a cluster without CronJobs pays nothing.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from sre_env.errors import ApiError
from sre_env.kube.timefmt import EPOCH, iso, parse_iso
from sre_env.sim.control.apiserver import new_pod_from_template

if TYPE_CHECKING:
    from sre_env.sim.kernel.world import World

__all__ = ["CronError", "next_schedule", "parse_cron", "reconcile_batch"]

Obj = dict[str, Any]
_EPOCH_MIN = int(EPOCH.timestamp()) // 60


class CronError(ValueError):
    pass


def _field(expr: str, lo: int, hi: int) -> frozenset[int]:
    out: set[int] = set()
    for part in expr.split(","):
        step = 1
        if "/" in part:
            part, s = part.split("/", 1)
            step = int(s)
            if step <= 0:
                raise CronError(f"invalid step {s}")
        if part in ("*", "?"):
            a, b = lo, hi
        elif "-" in part:
            x, y = part.split("-", 1)
            a, b = int(x), int(y)
        else:
            a = int(part)
            b = hi if step > 1 else a
        if a < lo or b > hi or a > b:
            raise CronError(f"{part} out of range")
        out.update(range(a, b + 1, step))
    return frozenset(out)


def parse_cron(schedule: str) -> tuple[frozenset[int], ...]:
    """(minutes, hours, days of month, months, days of week) of a standard five-field schedule."""
    aliases = {"@hourly": "0 * * * *", "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@weekly": "0 0 * * 0", "@monthly": "0 0 1 * *", "@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *"}
    schedule = aliases.get(schedule.strip(), schedule)
    parts = schedule.split()
    if len(parts) != 5:
        raise CronError(f"expected exactly 5 fields, found {len(parts)}: {schedule}")
    try:
        return (_field(parts[0], 0, 59), _field(parts[1], 0, 23), _field(parts[2], 1, 31), _field(parts[3], 1, 12), _field(parts[4].replace("7", "0"), 0, 6))
    except ValueError as exc:
        raise CronError(str(exc)) from None


def next_schedule(schedule: str, after: float) -> float:
    """The first scheduled minute strictly after simulated second ``after``."""
    mins, hours, doms, months, dows = parse_cron(schedule)
    t = EPOCH + timedelta(seconds=int(after // 60 + 1) * 60)
    for _ in range(60 * 24 * 366):
        if t.minute in mins and t.hour in hours and t.month in months and t.day in doms and (t.isoweekday() % 7) in dows:
            return (t - EPOCH).total_seconds()
        t += timedelta(minutes=1)
    return float("inf")


def _owner_ref(owner: Obj) -> Obj:
    return {"apiVersion": "batch/v1", "kind": owner["kind"], "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}


def _cond(type_: str, reason: str, message: str, now: float) -> Obj:
    t = iso(now)
    return {"type": type_, "status": "True", "lastProbeTime": t, "lastTransitionTime": t, "reason": reason, "message": message}


# --------------------------------------------------------------------------- jobs
def _job_finished(job: Obj) -> bool:
    return any(c.get("type") in ("Complete", "Failed") and c.get("status") == "True" for c in (job.get("status") or {}).get("conditions") or ())


def _sync_job(world: World, job: Obj) -> None:
    store = world.store
    now = world.clock.now
    meta, spec = job["metadata"], job["spec"]
    if _job_finished(job) or meta.get("deletionTimestamp"):
        return
    uid = meta["uid"]
    pods = [p for p in store.list("Pod", meta["namespace"]) if any(r.get("uid") == uid for r in p["metadata"].get("ownerReferences") or ())]
    phases = [(p.get("status") or {}).get("phase") for p in pods]
    succeeded = phases.count("Succeeded")
    failed = phases.count("Failed")
    active = [p for p, ph in zip(pods, phases) if ph not in ("Succeeded", "Failed") and not p["metadata"].get("deletionTimestamp")]
    status = copy.deepcopy(job.get("status") or {})
    status.setdefault("startTime", iso(now))
    completions = int(spec.get("completions", 1) or 1)
    deadline = spec.get("activeDeadlineSeconds")
    if succeeded >= completions:
        status["conditions"] = [_cond("SuccessCriteriaMet", "CompletionsReached", "Reached expected number of succeeded pods", now), _cond("Complete", "CompletionsReached", "Reached expected number of succeeded pods", now)]
        status["completionTime"] = iso(now)
        status.pop("active", None)
        status["ready"] = 0
        world.event(job, "Normal", "Completed", "Job completed", "job-controller")
    elif deadline is not None and now - parse_iso(status["startTime"]) >= float(deadline):
        for p in active:
            world.delete_pod(p)
        status["conditions"] = [_cond("FailureTarget", "DeadlineExceeded", "Job was active longer than specified deadline", now), _cond("Failed", "DeadlineExceeded", "Job was active longer than specified deadline", now)]
        status.pop("active", None)
        status["ready"] = 0
        world.event(job, "Warning", "DeadlineExceeded", "Job was active longer than specified deadline", "job-controller")
    elif failed > int(spec.get("backoffLimit", 6)):
        status["conditions"] = [_cond("FailureTarget", "BackoffLimitExceeded", "Job has reached the specified backoff limit", now), _cond("Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit", now)]
        status.pop("active", None)
        world.event(job, "Warning", "BackoffLimitExceeded", "Job has reached the specified backoff limit", "job-controller")
    elif not active and not spec.get("suspend"):
        try:
            pod = new_pod_from_template(world, job, spec["template"], f"{meta['name']}-")
        except ApiError as exc:
            world.event(job, "Warning", "FailedCreate", f"Error creating: {exc.message}", "job-controller")
            _schedule_job_retry(world, now + 10.0)
            pod = None
        if pod is not None:
            active = [pod]
            world.event(job, "Normal", "SuccessfulCreate", f"Created pod: {pod['metadata']['name']}", "job-controller")
    if not _job_finished({"status": status}):
        if deadline is not None:
            _schedule_job_retry(world, parse_iso(status["startTime"]) + float(deadline))
        ready = sum(1 for p in active if any(c.get("type") == "Ready" and c.get("status") == "True" for c in (p.get("status") or {}).get("conditions") or ()))
        status["active"] = len(active)
        status["ready"] = ready
        if not status["active"]:
            del status["active"]
    if succeeded:
        status["succeeded"] = succeeded
    if failed:
        status["failed"] = failed
    status["terminating"] = 0
    status["uncountedTerminatedPods"] = {}
    if status != job.get("status"):
        job["status"] = status
        store.touch(job)


@dataclass
class _BatchWake:
    #: when the Job/CronJob controllers must look again without a change (None: never scheduled)
    at: float | None = None


def _schedule_job_retry(world: World, at: float) -> None:
    state = world.slot(_BatchWake)
    state.at = min(state.at if state.at is not None else float("inf"), at)


# --------------------------------------------------------------------------- cronjobs
def _sync_cronjob(world: World, cj: Obj) -> None:
    store = world.store
    now = world.clock.now
    meta, spec = cj["metadata"], cj["spec"]
    ns = meta["namespace"]
    status = copy.deepcopy(cj.get("status") or {})
    jobs = [j for j in store.list("Job", ns) if any(r.get("uid") == meta["uid"] for r in j["metadata"].get("ownerReferences") or ())]
    active = [j for j in jobs if not _job_finished(j)]
    for j in jobs:
        if _job_finished(j) and not j["metadata"].get("annotations", {}).get("sre-env/cronjob-saw"):
            complete = any(c.get("type") == "Complete" and c.get("status") == "True" for c in j["status"]["conditions"])
            j["metadata"].setdefault("annotations", {})["sre-env/cronjob-saw"] = "1"
            world.event(cj, "Normal", "SawCompletedJob", f"Saw completed job: {j['metadata']['name']}, condition: {'Complete' if complete else 'Failed'}", "cronjob-controller")
            if complete:
                status["lastSuccessfulTime"] = j["status"].get("completionTime", iso(now))
    try:
        last = parse_iso(status["lastScheduleTime"]) if status.get("lastScheduleTime") else parse_iso(meta["creationTimestamp"])
        due = next_schedule(spec.get("schedule", ""), last)
    except (ValueError, KeyError):
        due = float("inf")
    if due <= now and not spec.get("suspend"):
        scheduled = due
        # missed runs collapse into the most recent one, as the controller does
        while True:
            nxt = next_schedule(spec["schedule"], scheduled)
            if nxt > now:
                break
            scheduled = nxt
        status["lastScheduleTime"] = iso(scheduled)
        policy = spec.get("concurrencyPolicy", "Allow")
        if active and policy == "Forbid":
            world.event(cj, "Normal", "JobAlreadyActive", "Not starting job because prior execution is running and concurrency policy is Forbid", "cronjob-controller")
        else:
            if active and policy == "Replace":
                for j in active:
                    store.remove("Job", j["metadata"]["name"], ns)
                    world.event(cj, "Normal", "SuccessfulDelete", f"Deleted job {j['metadata']['name']}", "cronjob-controller")
                active = []
            name = f"{meta['name']}-{_EPOCH_MIN + int(scheduled // 60)}"
            tpl = copy.deepcopy(spec.get("jobTemplate") or {})
            jmeta = tpl.get("metadata") or {}
            job = {
                "kind": "Job",
                "apiVersion": "batch/v1",
                "metadata": {
                    "name": name,
                    "namespace": ns,
                    "labels": dict(jmeta.get("labels") or {}),
                    "annotations": {**(jmeta.get("annotations") or {}), "batch.kubernetes.io/cronjob-scheduled-timestamp": iso(scheduled)},
                    "ownerReferences": [_owner_ref(cj)],
                },
                "spec": tpl.get("spec") or {},
            }
            if store.find("Job", name, ns) is None:
                created = create_job(world, job)
                active.append(created)
                world.event(cj, "Normal", "SuccessfulCreate", f"Created job {name}", "cronjob-controller")
    if active:
        status["active"] = [{"apiVersion": "batch/v1", "kind": "Job", "name": j["metadata"]["name"], "namespace": ns, "resourceVersion": j["metadata"]["resourceVersion"], "uid": j["metadata"]["uid"]} for j in active]
    else:
        status.pop("active", None)
    # history limits
    for limit_key, want_complete, default in (("successfulJobsHistoryLimit", True, 3), ("failedJobsHistoryLimit", False, 1)):
        done = [j for j in jobs if _job_finished(j) and store.find("Job", j["metadata"]["name"], ns) is not None and any(c.get("type") == "Complete" and c.get("status") == "True" for c in j["status"]["conditions"]) == want_complete]
        done.sort(key=lambda j: j["metadata"]["creationTimestamp"])
        for j in done[: max(len(done) - int(spec.get(limit_key, default)), 0)]:
            delete_job(world, j)
            world.event(cj, "Normal", "SuccessfulDelete", f"Deleted job {j['metadata']['name']}", "cronjob-controller")
    if status != cj.get("status"):
        cj["status"] = status
        store.touch(cj)
    try:
        nxt = next_schedule(spec.get("schedule", ""), max(now, parse_iso(status["lastScheduleTime"]) if status.get("lastScheduleTime") else now))
    except (ValueError, KeyError):
        nxt = float("inf")
    _schedule_job_retry(world, nxt)


def create_job(world: World, job: Obj) -> Obj:
    """Defaulting the API applies to a Job: selector and pod labels tying pods to it."""
    spec = job.setdefault("spec", {})
    spec.setdefault("backoffLimit", 6)
    spec.setdefault("completions", 1)
    spec.setdefault("parallelism", 1)
    spec.setdefault("completionMode", "NonIndexed")
    spec.setdefault("suspend", False)
    obj = world.store.create(job)
    uid = obj["metadata"]["uid"]
    labels = {"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": obj["metadata"]["name"], "controller-uid": uid, "job-name": obj["metadata"]["name"]}
    obj["spec"]["selector"] = {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    tpl = obj["spec"].setdefault("template", {})
    tpl.setdefault("metadata", {}).setdefault("labels", {}).update(labels)
    obj["metadata"].setdefault("labels", {}).update({k: v for k, v in labels.items() if k in ("batch.kubernetes.io/controller-uid", "batch.kubernetes.io/job-name", "controller-uid", "job-name")})
    world.store.touch(obj)
    return obj


def delete_job(world: World, job: Obj) -> None:
    """Background propagation: the Job goes, its pods follow."""
    meta = job["metadata"]
    for p in world.store.list("Pod", meta["namespace"]):
        if any(r.get("uid") == meta["uid"] for r in p["metadata"].get("ownerReferences") or ()):
            world.delete_pod(p)
    world.store.remove("Job", meta["name"], meta["namespace"])


def reconcile_batch(world: World, dirty: dict[tuple[str, str, str], None] | None = None) -> None:
    """Sync CronJobs that are due or changed and Jobs whose pods changed."""
    store = world.store
    if not store.kind_revision.get("CronJob") and not store.kind_revision.get("Job"):
        return
    state = world.slot(_BatchWake)
    now = world.clock.now
    due = now >= (state.at if state.at is not None else 0.0)
    jobs: set[tuple[str, str]] = set()
    cjs: set[tuple[str, str]] = set()
    for kind, ns, name in dirty or ():
        if kind == "Job":
            jobs.add((ns, name))
            job = store.find("Job", name, ns)
            for ref in (job or {}).get("metadata", {}).get("ownerReferences") or ():
                if ref.get("kind") == "CronJob":
                    cjs.add((ns, ref["name"]))
        elif kind == "CronJob":
            cjs.add((ns, name))
        elif kind == "Pod":
            pod = store.find("Pod", name, ns)
            for ref in (pod or {}).get("metadata", {}).get("ownerReferences") or ():
                if ref.get("kind") == "Job":
                    jobs.add((ns, ref["name"]))
    if due:
        state.at = float("inf")
        cjs |= {(c["metadata"]["namespace"], c["metadata"]["name"]) for c in store.iter("CronJob")}
        jobs |= {(j["metadata"]["namespace"], j["metadata"]["name"]) for j in store.iter("Job") if not _job_finished(j)}
    for ns, name in sorted(jobs):
        job = store.find("Job", name, ns)
        if job is not None:
            _sync_job(world, job)
            # a Job that just finished is seen by its CronJob in the same pass
            for ref in job["metadata"].get("ownerReferences") or ():
                if ref.get("kind") == "CronJob" and _job_finished(job):
                    cjs.add((ns, ref["name"]))
    for ns, name in sorted(cjs):
        cj = store.find("CronJob", name, ns)
        if cj is not None:
            _sync_cronjob(world, cj)
            # jobs it just created start their pods in the same tick
            for ref in (cj.get("status") or {}).get("active") or ():
                job = store.find("Job", ref["name"], ns)
                if job is not None and not (job.get("status") or {}).get("startTime"):
                    _sync_job(world, job)
