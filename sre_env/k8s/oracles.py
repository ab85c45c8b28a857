"""Grading on a live cluster: the simulator's gates without forking the world.

The simulator judges a repair on forks (``rewards/lifecycle.py``); a real
cluster has one timeline, so the gates run on it, in order, once the episode is
over (the agent no longer acts, so disturbing the cluster is fine):

1. ``cleanup`` — the objects compared with the pre-incident snapshot, exactly as
   on the simulator (objects the harness made, labelled
   ``app.kubernetes.io/managed-by=sre-env``, and kinds the cluster does not
   serve are left out);
2. ``immediate`` — poll for up to ``immediate_s`` of cluster time until the
   cause checks pass and the load generator is served again;
3. ``live`` — let ``settle_s`` pass under the workload, then baseline
   preservation over the API (workloads available at their baseline replicas,
   baseline Services selecting ready pods), the client's success ratio and mean
   latency over ``window_s`` from Prometheus, no warning/critical alert for the
   namespace, and the cause checks;
4. ``durability`` — roll every workload and delete every pod of the namespace
   for real, wait ``restart_settle_s``, then ``live`` again. Node reboots are not
   performed on a real cluster (the result says so).

Time is cluster time: ``backend.advance`` sleeps (divided by the backend's
``time_scale`` for a served simulator running faster than the wall clock).

Cause checks: each scenario's own ``cause_checks``; a scenario that is not a
:class:`sre_env.envs.base.SimScenario` reads only the Backend seam (those whose
simulator checks read the model fall back to the API when the backend has no
model). :data:`LIVE_SCENARIOS` lists the scenario ids verified to run end to end
on this backend.
"""

from __future__ import annotations

import copy
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sre_env.kube.selectors import has_labels
from sre_env.rewards.base import Check, OracleResult
from sre_env.rewards.cleanup import CleanupOracle
from sre_env.rewards.lifecycle import roll_namespace
from sre_env.rewards.mitigation import (
    WATCHED_KINDS,
    Baseline,
    object_key,
    preservation_checks,
)

from .nodes import MANAGED_BY

if TYPE_CHECKING:
    from sre_env.envs.base import Scenario

    from .backend import KubernetesBackend

__all__ = ["LIVE_SCENARIOS", "LiveGates", "harness_owned", "record_live_baseline"]

Obj = dict[str, Any]


def harness_owned(obj: Obj) -> bool:
    labels = (obj.get("metadata") or {}).get("labels") or {}
    return has_labels(MANAGED_BY, labels)


def watched_objects(backend: "KubernetesBackend") -> dict[str, Obj]:
    """Every watched object the cluster serves, except the harness's own."""
    out: dict[str, Obj] = {}
    for kind in WATCHED_KINDS:
        if not backend.api.serves(kind):
            continue
        for obj in backend.api.list(kind):
            if not harness_owned(obj):
                out[object_key(obj)] = obj
    return out


def record_live_baseline(backend: "KubernetesBackend", namespace: str, window_s: float = 120.0) -> Baseline:
    """The pre-incident state: workloads, services, the client's success and latency, and the watched objects."""
    api = backend.api
    workloads = []
    for kind in ("Deployment", "StatefulSet"):
        for obj in api.list(kind, namespace):
            workloads.append((kind, obj["metadata"]["name"], int(obj["spec"].get("replicas", 1))))
    services = tuple((s["metadata"]["name"], tuple(sorted((s["spec"].get("selector") or {}).items()))) for s in api.list("Service", namespace))
    client = backend.telemetry.client_window(namespace, window_s)
    objects = {k: copy.deepcopy(v) for k, v in watched_objects(backend).items()}
    return Baseline(namespace, tuple(workloads), services, client.success if client.has_data else 1.0, client.latency_ms if client.has_data else 0.0, objects)


#: scenario ids verified end to end on the KubernetesBackend against ``sre-env serve`` (inject through the
#: API, the live gates fail, the reference fix through the real kubectl passes every gate); the families'
#: tests are in tests/k8s/test_k8s_scenario.py (MissingService's, whose reference fix is ``kubectl apply``,
#: in tests/k8s/test_k8s_apply_scenario.py).
LIVE_SCENARIOS: frozenset[str] = frozenset(
    {
        "MissingEnvVar",
        "MissingEnvVar-AstronomyShop",
        "MissingService",
        "MissingService-SocialNetwork",
        "TargetPortMisconfig",
        "TargetPortMisconfig-SocialNetwork",
        "ScalePodZero",
        "ScalePodZero-SocialNetwork",
        "WrongServiceSelector",
        "WrongServiceSelector-SocialNetwork",
    }
)


def live_scenario_name(scenario_cls: type) -> str | None:
    """The registry name of a scenario class when it is verified on live clusters, else None."""
    from sre_env.envs.registry import scenario_class

    return next((name for name in sorted(LIVE_SCENARIOS) if scenario_class(name) is scenario_cls), None)


# ---------------------------------------------------------------- the gates
class _CleanupView:
    """What the cleanup gate sees of a live cluster: watched kinds it serves, minus the harness's objects."""

    def __init__(self, backend: "KubernetesBackend") -> None:
        self._objects = watched_objects(backend)
        self.api = self

    def list(self, kind: str, namespace: str | None = None, label_selector: str | None = None, field_selector: str | None = None) -> list[Obj]:
        return [o for k, o in self._objects.items() if k.startswith(kind + "/") and (namespace is None or o["metadata"].get("namespace") == namespace)]


@dataclass
class LiveGates:
    """The four lifecycle gates on one live timeline (see the module docstring); seconds are cluster time."""

    immediate_s: float = 60.0
    settle_s: float = 300.0
    window_s: float = 120.0
    restart_settle_s: float = 120.0
    poll_s: float = 10.0
    immediate_margin: float = 0.05
    success_margin: float = 0.02
    latency_factor: float = 3.0

    def evaluate(self, backend: "KubernetesBackend", scenario: "Scenario", baseline: Baseline) -> dict[str, OracleResult]:
        results = {"cleanup": CleanupOracle().evaluate(_CleanupView(backend), scenario, baseline)}  # type: ignore[arg-type]
        results["immediate"] = self.immediate(backend, scenario, baseline)
        results["live"] = self.live(backend, scenario, baseline, "live")
        disturbed = restart_namespace(backend, scenario)
        backend.advance(self.restart_settle_s)
        after = self.live(backend, scenario, baseline, "durability")
        checks = [Check(f"after_restart.{c.name}", c.passed, c.detail) for c in after.checks]
        results["durability"] = OracleResult.from_checks("durability", checks, disturbed=disturbed, live_cluster=True)
        return {k: results[k] for k in ("immediate", "live", "durability", "cleanup")}

    def _serving(self, backend: "KubernetesBackend", scenario: "Scenario", baseline: Baseline, window_s: float, margin: float) -> Check:
        client = backend.telemetry.client_window(scenario.namespace, window_s)
        need = max(baseline.client_success - margin, 0.0)
        if not client.has_data:
            return Check("serving", False, f"no load generator samples in Prometheus for namespace {scenario.namespace} over {window_s:.0f}s")
        return Check("serving", client.success >= need, f"client success {client.success:.4f} over the last {window_s:.0f}s (need >= {need:.4f})")

    def immediate(self, backend: "KubernetesBackend", scenario: "Scenario", baseline: Baseline) -> OracleResult:
        start = backend.now
        while True:
            # the serving window starts at the first poll, so errors from before the repair age out
            waited = max(backend.now - start, self.poll_s)
            checks = [*scenario.cause_checks(backend), self._serving(backend, scenario, baseline, min(waited, self.window_s), self.immediate_margin)]
            if all(c.passed for c in checks) or backend.now - start >= self.immediate_s:
                return OracleResult.from_checks("immediate", checks, settle_s=round(backend.now - start, 1), live_cluster=True)
            backend.advance(self.poll_s)

    def live(self, backend: "KubernetesBackend", scenario: "Scenario", baseline: Baseline, name: str) -> OracleResult:
        backend.advance(self.settle_s)
        ns = scenario.namespace
        checks = preservation_checks(backend.api, baseline)
        client = backend.telemetry.client_window(ns, self.window_s)
        need = max(baseline.client_success - self.success_margin, 0.0)
        if client.has_data:
            checks.append(Check("client_success", client.success >= need, f"success rate {client.success:.4f} over the last {int(self.window_s)}s (baseline {baseline.client_success:.4f}, need >= {need:.4f})"))
            limit = max(baseline.client_latency_ms * self.latency_factor, baseline.client_latency_ms + 50.0)
            checks.append(Check("client_latency", client.latency_ms <= limit, f"mean latency {client.latency_ms:.1f} ms (baseline {baseline.client_latency_ms:.1f} ms, limit {limit:.1f} ms)"))
        else:
            checks.append(Check("client_success", False, f"no load generator samples in Prometheus for namespace {ns}"))
        firing = [a for a in backend.telemetry.firing_alerts(ns) if " info:" not in a and not a.endswith(" info")]
        checks.append(Check("alerts_silent", not firing, "; ".join(firing[:3]) if firing else f"no warning or critical alert firing for namespace {ns}"))
        checks.extend(scenario.cause_checks(backend))
        return OracleResult.from_checks(name, checks, settle_s=self.settle_s, live_cluster=True)


def restart_namespace(backend: "KubernetesBackend", scenario: "Scenario") -> list[str]:
    """A maintenance window, for real: roll every workload of the namespace and delete its pods."""
    done = roll_namespace(backend.api, scenario.namespace, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    done.append("node reboots skipped (live cluster)")
    return done
