"""The HorizontalPodAutoscaler controller (autoscaling/v2, CPU utilisation metrics).

Every 15 s (the controller manager's ``--horizontal-pod-autoscaler-sync-period``)
each HPA reads its target's pods' CPU usage — the same figure ``kubectl top``
and metrics-server report, computed from the requests each pod serves — and
divides it by the pods' CPU *requests*. A pod container without a CPU request
makes utilisation undefined: the HPA reports ``<unknown>``, records
``FailedGetResourceMetric`` and does not scale, exactly the real failure. Scale
up is immediate; scale down waits for the 5-minute stabilisation window.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sre_env.kube.autoscaling import cpu_target
from sre_env.kube.quantity import cpu_millicores
from sre_env.kube.selectors import has_labels
from sre_env.kube.timefmt import iso
from sre_env.sim.control.sched_hooks import sched_state

if TYPE_CHECKING:
    from sre_env.sim.kernel.world import World

__all__ = ["SYNC_S", "ensure_hpa_loop", "sync_hpas"]

Obj = dict[str, Any]
SYNC_S = 15.0
TOLERANCE = 0.1
DOWNSCALE_WINDOW_S = 300.0


@dataclass(frozen=True)
class _HpaSync:
    tag: str = "controller"

    def fire(self, world: "World") -> None:
        st = sched_state(world)
        if not world.store.list("HorizontalPodAutoscaler"):
            st.hpa_loop = False
            return
        sync_hpas(world)
        world.clock.schedule(world.clock.now + SYNC_S, _HpaSync())


def ensure_hpa_loop(world: "World") -> None:
    st = sched_state(world)
    if not st.hpa_loop:
        st.hpa_loop = True
        world.clock.schedule(world.clock.now + SYNC_S, _HpaSync())


def _pod_usage(world: "World", pod: Obj) -> int:
    from sre_env.sim.runtime.cpu import pod_cpu_millicores

    rps = 0.0
    for res in world.last_traffic.values():
        rps += res.pod_rps.get(pod["metadata"]["uid"], 0.0)
    return pod_cpu_millicores(world.component_for(pod), rps)


def _condition(hpa: Obj, type_: str, status: str, reason: str, message: str, now: str) -> Obj:
    old = next((c for c in (hpa.get("status") or {}).get("conditions") or () if c.get("type") == type_), None)
    transition = old["lastTransitionTime"] if old and old.get("status") == status else now
    return {"type": type_, "status": status, "lastTransitionTime": transition, "reason": reason, "message": message}


def _sync_one(world: "World", hpa: Obj) -> None:
    store = world.store
    meta, spec = hpa["metadata"], hpa.get("spec") or {}
    ns = meta["namespace"]
    now = world.clock.now
    stamp = iso(now)
    ref = spec.get("scaleTargetRef") or {}
    target = store.find(ref.get("kind", "Deployment"), ref.get("name", ""), ns)
    old_status = hpa.get("status") or {}
    status: Obj = {"currentReplicas": 0, "desiredReplicas": 0}
    if old_status.get("lastScaleTime"):
        status["lastScaleTime"] = old_status["lastScaleTime"]
    lo, hi = int(spec.get("minReplicas", 1)), int(spec.get("maxReplicas", 1))
    if target is None:
        msg = f'the HPA controller was unable to get the target\'s current scale: deployments/scale.apps "{ref.get("name", "")}" not found'
        world.event(hpa, "Warning", "FailedGetScale", f'deployments/scale.apps "{ref.get("name", "")}" not found', "horizontal-pod-autoscaler")
        status["conditions"] = [_condition(hpa, "AbleToScale", "False", "FailedGetScale", msg, stamp)]
        _write(world, hpa, status)
        return
    current = int(target["spec"].get("replicas", 1))
    status["currentReplicas"] = current
    status["desiredReplicas"] = current
    able = _condition(hpa, "AbleToScale", "True", "SucceededGetScale", "the HPA controller was able to get the target's current scale", stamp)
    target_pct = cpu_target(hpa)
    selector = ((target["spec"].get("selector") or {}).get("matchLabels")) or {}
    pods = [p for p in store.list("Pod", ns) if selector and has_labels(selector, p["metadata"].get("labels")) and not p["metadata"].get("deletionTimestamp") and p.get("status", {}).get("phase") == "Running"]
    if current == 0:
        status["conditions"] = [able, _condition(hpa, "ScalingActive", "False", "ScalingDisabled", "scaling is disabled since the replica count of the target is zero", stamp)]
        _write(world, hpa, status)
        return
    desired = current
    error = None
    if target_pct is not None:
        requested = used = 0
        for pod in pods:
            for ctr in pod["spec"].get("containers") or ():
                req = ((ctr.get("resources") or {}).get("requests") or {}).get("cpu")
                if req is None:
                    error = f"missing request for cpu in container {ctr['name']} of Pod {pod['metadata']['name']}"
                    break
                requested += cpu_millicores(req)
            if error:
                break
            used += _pod_usage(world, pod)
        if error is None and not pods:
            error = "did not receive metrics for targeted pods (pods might be unready)"
        if error is not None:
            text = f"failed to get cpu utilization: {error}"
            world.event(hpa, "Warning", "FailedGetResourceMetric", text, "horizontal-pod-autoscaler")
            world.event(hpa, "Warning", "FailedComputeMetricsReplicas", f"invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value: {text}", "horizontal-pod-autoscaler")
            status["currentMetrics"] = [{"type": ""}]
            status["conditions"] = [
                able,
                _condition(hpa, "ScalingActive", "False", "FailedGetResourceMetric", f"the HPA was unable to compute the replica count: {text}", stamp),
            ]
            _write(world, hpa, status)
            return
        utilization = int(round(100.0 * used / requested)) if requested else 0
        status["currentMetrics"] = [{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": utilization, "averageValue": f"{used // max(len(pods), 1)}m"}}}]
        ratio = utilization / target_pct if target_pct else 1.0
        if abs(ratio - 1.0) > TOLERANCE:
            desired = int(math.ceil(ratio * len(pods)))
    limited = None
    if desired > hi:
        desired, limited = hi, ("TooManyReplicas", "the desired replica count is more than the maximum replica count")
    elif desired < lo:
        desired, limited = lo, ("TooFewReplicas", "the desired replica count is less than the minimum replica count")
    # scale down only to the highest recommendation of the stabilisation window
    recs = sched_state(world).hpa_recommendations
    history = [(t, d) for t, d in recs.get(meta["uid"], ()) if t > now - DOWNSCALE_WINDOW_S]
    history.append((now, desired))
    recs[meta["uid"]] = history
    if desired < current:
        desired = min(current, max(d for _, d in history))
    if desired == current:
        able = _condition(hpa, "AbleToScale", "True", "ReadyForNewScale", "recommended size matches current size", stamp)
    else:
        reason = "above" if desired > current else "below"
        store.patch(ref.get("kind", "Deployment"), target["metadata"]["name"], ns, {"spec": {"replicas": desired}}, "merge")
        world.event(hpa, "Normal", "SuccessfulRescale", f"New size: {desired}; reason: cpu resource utilization (percentage of request) {reason} target", "horizontal-pod-autoscaler")
        status["lastScaleTime"] = stamp
        able = _condition(hpa, "AbleToScale", "True", "SucceededRescale", f"the HPA controller was able to update the target scale to {desired}", stamp)
    status["desiredReplicas"] = desired
    conds = [able, _condition(hpa, "ScalingActive", "True", "ValidMetricFound", "the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)", stamp)]
    if limited:
        conds.append(_condition(hpa, "ScalingLimited", "True", limited[0], limited[1], stamp))
    else:
        conds.append(_condition(hpa, "ScalingLimited", "False", "DesiredWithinRange", "the desired count is within the acceptable range", stamp))
    status["conditions"] = conds
    _write(world, hpa, status)


def _write(world: "World", hpa: Obj, status: Obj) -> None:
    if hpa.get("status") != status:
        hpa["status"] = status
        world.store.touch(hpa)


def sync_hpas(world: "World") -> None:
    for hpa in world.store.list("HorizontalPodAutoscaler"):
        _sync_one(world, hpa)
