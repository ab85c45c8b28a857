"""The mitigation oracle: is the app healthy again, on a fork of the world, under load?

Grading never trusts the agent's commands, only the model's state: the world is
forked, advanced several minutes under the workload, and then checked against
the baseline recorded before the fault — client success rate, every baseline
workload available at its baseline replica count, every baseline Service still
selecting ready pods — plus the scenario's own "the cause is gone" checks.
Deleting the app, scaling it to zero or swapping the failing component out all
fail the baseline-preservation checks.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .base import Check, OracleResult

if TYPE_CHECKING:
    from sre_env.envs.base import Scenario
    from sre_env.sim.model import ModelBackend

__all__ = ["Baseline", "record_baseline", "object_key", "preservation_checks", "MitigationOracle", "WATCHED_KINDS"]


#: kinds the cleanup gate compares with the pre-incident state
WATCHED_KINDS = (
    "Namespace",
    "Node",
    "Deployment",
    "StatefulSet",
    "DaemonSet",
    "Service",
    "ConfigMap",
    "Secret",
    "PersistentVolumeClaim",
    "Pod",
    "ServiceAccount",
    # networking: policies and the app's edge
    "NetworkPolicy",
    "Ingress",
    # control plane: admission, RBAC, batch
    "ValidatingWebhookConfiguration",
    "MutatingWebhookConfiguration",
    "Assign",
    "Role",
    "RoleBinding",
    "ClusterRole",
    "ClusterRoleBinding",
    "CronJob",
    # custom resources of modelled operators
    "TidbCluster",
)


@dataclass(frozen=True)
class Baseline:
    namespace: str
    #: (kind, name) -> replicas
    workloads: tuple[tuple[str, str, int], ...]
    #: service name -> selector items
    services: tuple[tuple[str, tuple[tuple[str, str], ...]], ...]
    client_success: float
    client_latency_ms: float
    #: deep copies of the watched objects before the fault, keyed "Kind/namespace/name"
    objects: dict[str, dict[str, Any]] = field(default_factory=dict, compare=False, repr=False)


def record_baseline(backend: "ModelBackend", namespace: str, app_name: str) -> Baseline:
    """The pre-incident state of a simulated cluster (a live one: ``sre_env.k8s.oracles.record_live_baseline``)."""
    api = backend.api
    workloads = []
    for kind in ("Deployment", "StatefulSet"):
        for obj in api.list(kind, namespace):
            workloads.append((kind, obj["metadata"]["name"], int(obj["spec"].get("replicas", 1))))
    services = tuple(
        (s["metadata"]["name"], tuple(sorted((s["spec"].get("selector") or {}).items()))) for s in api.list("Service", namespace)
    )
    hist = backend.model.client_history(app_name)[-24:]
    success = sum(s for _, s, _ in hist) / len(hist) if hist else 1.0
    latency = sum(l for _, _, l in hist) / len(hist) if hist else 0.0
    objects = {}
    for kind in WATCHED_KINDS:
        for obj in api.list(kind):
            objects[object_key(obj)] = copy.deepcopy(obj)
    return Baseline(namespace, tuple(workloads), services, success, latency, objects)


def object_key(obj: dict[str, Any]) -> str:
    meta = obj["metadata"]
    return f"{obj['kind']}/{meta.get('namespace', '')}/{meta['name']}"


class MitigationOracle:
    """Checks a forked world after ``settle_s`` seconds of traffic."""

    name = "mitigation"

    def __init__(self, *, settle_s: float = 300.0, window_s: float = 120.0, success_margin: float = 0.02, latency_factor: float = 3.0) -> None:
        self.settle_s = settle_s
        self.window_s = window_s
        self.success_margin = success_margin
        self.latency_factor = latency_factor

    def evaluate(self, backend: "ModelBackend", scenario: "Scenario", baseline: Baseline) -> OracleResult:
        fork = backend.fork()
        # metastable incidents: the transient trigger comes back, and the repair must ride it out
        replayed = scenario.replay_trigger(fork)
        fork.advance(self.settle_s)
        checks = self.health_checks(fork, scenario, baseline)
        checks.extend(scenario.cause_checks(fork))
        extra = {"trigger_replayed": replayed} if replayed else {}
        return OracleResult.from_checks(self.name, checks, settle_s=self.settle_s, **extra)

    def health_checks(self, fork: "ModelBackend", scenario: "Scenario", baseline: Baseline) -> list[Check]:
        ns = baseline.namespace
        checks = preservation_checks(fork.api, baseline)
        success, latency = self._client_window(fork, scenario.app.name)
        need = max(baseline.client_success - self.success_margin, 0.0)
        checks.append(Check("client_success", success >= need, f"success rate {success:.4f} over the last {int(self.window_s)}s (baseline {baseline.client_success:.4f}, need >= {need:.4f})"))
        lat_limit = max(baseline.client_latency_ms * self.latency_factor, baseline.client_latency_ms + 50.0)
        checks.append(Check("client_latency", latency <= lat_limit, f"mean latency {latency:.1f} ms (baseline {baseline.client_latency_ms:.1f} ms, limit {lat_limit:.1f} ms)"))
        # info-severity alerts (CPUThrottlingHigh and friends) inform; they do not page
        firing = [a.line() for a in fork.model.firing_alerts() if ("namespace", ns) in a.labels and a.severity != "info"]
        checks.append(Check("alerts_silent", not firing, "; ".join(firing[:3]) if firing else f"no warning or critical alert firing for namespace {ns}"))
        return checks

    def _client_window(self, fork: "ModelBackend", app_name: str) -> tuple[float, float]:
        now = fork.now
        hist = [(t, s, l) for t, s, l in fork.model.client_history(app_name) if t > now - self.window_s]
        if not hist:
            return 0.0, float("inf")
        return sum(s for _, s, _ in hist) / len(hist), sum(l for _, _, l in hist) / len(hist)


def preservation_checks(api: Any, baseline: Baseline) -> list[Check]:
    """Baseline preservation over the API alone: every baseline workload exists at its baseline
    replicas, every baseline Service still selects ready pods (the live gates reuse it on real clusters)."""
    ns = baseline.namespace
    checks: list[Check] = []
    missing, short = [], []
    for kind, name, replicas in baseline.workloads:
        try:
            obj = api.get(kind, name, ns)
        except Exception:  # noqa: BLE001 - any API failure means it is gone
            missing.append(f"{kind.lower()}/{name}")
            continue
        available = int(obj.get("status", {}).get("availableReplicas", 0))
        if available < replicas:
            short.append(f"{kind.lower()}/{name} {available}/{replicas} available")
    checks.append(Check("workloads_present", not missing, "missing: " + ", ".join(missing) if missing else "all baseline workloads exist"))
    checks.append(Check("workloads_available", not short and not missing, "; ".join(short) if short else "every workload at its baseline replicas"))
    broken = []
    for name, selector in baseline.services:
        svc = next((s for s in api.list("Service", ns) if s["metadata"]["name"] == name), None)
        if svc is None:
            broken.append(f"service/{name} deleted")
            continue
        if not selector:
            continue
        ep = next((e for e in api.list("Endpoints", ns) if e["metadata"]["name"] == name), None)
        ready = sum(len(sub.get("addresses") or ()) for sub in (ep or {}).get("subsets") or ())
        if ready == 0:
            broken.append(f"service/{name} has no ready endpoints")
    checks.append(Check("services_serving", not broken, "; ".join(broken) if broken else "every baseline service has ready endpoints"))
    return checks
