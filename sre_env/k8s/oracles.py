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

Cause checks: a scenario's ``cause_checks`` run as they are when they read only
``backend.api``; scenarios whose checks read the simulator's model get an
API-level equivalent in :data:`API_CAUSE_CHECKS`. :data:`LIVE_SCENARIOS` lists the
scenario ids verified to run end to end on this backend.
"""

from __future__ import annotations

import copy
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sre_env.errors import ApiError
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

__all__ = ["API_CAUSE_CHECKS", "LIVE_SCENARIOS", "LiveGates", "harness_owned", "live_cause_checks", "record_live_baseline"]

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


# ---------------------------------------------------------------- cause checks over the API
def _pod_env(api: Any, pod: Obj, container: str) -> dict[str, str]:
    """The environment a container was started with, as the API describes it (env, envFrom, key refs)."""
    ns = pod["metadata"]["namespace"]
    spec = next((c for c in pod["spec"].get("containers") or () if c["name"] == container), None)
    if spec is None:
        return {}

    def source(kind: str, name: str) -> dict[str, str]:
        try:
            obj = api.get(kind, name, ns)
        except ApiError:
            return {}
        if kind == "Secret":
            import base64

            return {k: base64.b64decode(v).decode("utf-8", "replace") for k, v in (obj.get("data") or {}).items()}
        return dict(obj.get("data") or {})

    env: dict[str, str] = {}
    for ref in spec.get("envFrom") or ():
        prefix = ref.get("prefix") or ""
        if ref.get("configMapRef"):
            env.update({prefix + k: v for k, v in source("ConfigMap", ref["configMapRef"]["name"]).items()})
        if ref.get("secretRef"):
            env.update({prefix + k: v for k, v in source("Secret", ref["secretRef"]["name"]).items()})
    for item in spec.get("env") or ():
        if "value" in item:
            env[item["name"]] = str(item["value"])
            continue
        vf = item.get("valueFrom") or {}
        for kind, key in (("ConfigMap", "configMapKeyRef"), ("Secret", "secretKeyRef")):
            ref = vf.get(key)
            if ref:
                value = source(kind, ref["name"]).get(ref["key"])
                if value is not None:
                    env[item["name"]] = value
    return env


def _live_pods(api: Any, scenario: "Scenario", service: str) -> list[Obj]:
    selector = scenario.pod_selector(service) if hasattr(scenario, "pod_selector") else f"{scenario.app.label_key}={service}"
    return [p for p in api.list("Pod", scenario.namespace, selector) if not p["metadata"].get("deletionTimestamp")]


def _missing_env_var(scenario: "Scenario", backend: Any) -> list[Check]:
    """Every pod of the service has the variable, and it names the dependency's Service and port."""
    v = scenario.variant
    api = backend.api
    dep = next(d for d in scenario.app.component(v["service"]).dependencies if d.address_env == v["var"])
    pods = _live_pods(api, scenario, v["service"])
    if not pods:
        return [Check("variable_restored", False, f"no pod of {v['service']} is running")]
    try:
        svc = api.get("Service", dep.service, scenario.namespace)
        ports = {int(p["port"]) for p in svc["spec"].get("ports") or ()}
    except ApiError:
        ports = set()
    bad = []
    for pod in pods:
        value = _pod_env(api, pod, v["container"]).get(v["var"])
        host, _, port = (value or "").rpartition(":")
        ok = bool(value) and host.split(".")[0] == dep.service and port.isdigit() and int(port) == dep.port and int(port) in ports
        if not ok:
            bad.append(f"{pod['metadata']['name']}: {v['var']}={value!r}")
    detail = "; ".join(bad) if bad else f"every {v['service']} pod has {v['var']} reaching {dep.service}:{dep.port}"
    return [Check("variable_restored", not bad, detail)]


def _target_port(scenario: "Scenario", backend: Any) -> list[Check]:
    """The Service's endpoints send its port to the port the process listens on, on ready pods."""
    v = scenario.variant
    api = backend.api
    try:
        ep = api.get("Endpoints", v["service"], scenario.namespace)
    except ApiError:
        return [Check("service_routes_to_listener", False, f"service/{v['service']} has no endpoints object")]
    ready = [(a, p) for sub in ep.get("subsets") or () for a in sub.get("addresses") or () for p in sub.get("ports") or ()]
    good = [1 for _, p in ready if int(p.get("port", 0)) == v["target"]]
    ports = sorted({int(p.get("port", 0)) for _, p in ready})
    detail = f"{v['service']}:{v['port']} -> ready endpoints on port(s) {ports or 'none'} (the pods listen on {v['target']})"
    return [Check("service_routes_to_listener", bool(good) and len(good) == len(ready), detail)]


def _routes_to_component(scenario: "Scenario", backend: Any, service: str, port: int, name: str) -> Check:
    """``service:port`` exists and its ready endpoints are the component's own pods, on the port it listens on."""
    api = backend.api
    ns = scenario.namespace
    comp = scenario.app.component(service)
    try:
        svc = api.get("Service", service, ns)
    except ApiError:
        return Check(name, False, f"service/{service} does not exist")
    if not any(int(p.get("port", 0)) == port for p in svc["spec"].get("ports") or ()):
        return Check(name, False, f"service/{service} has no port {port}")
    try:
        ep = api.get("Endpoints", service, ns)
    except ApiError:
        ep = {}
    label = scenario.pod_selector(service).split("=", 1)[0] if hasattr(scenario, "pod_selector") else scenario.app.label_key
    good, bad = 0, []
    for sub in ep.get("subsets") or ():
        ports = sorted({int(p.get("port", 0)) for p in sub.get("ports") or ()})
        for addr in sub.get("addresses") or ():
            ref = addr.get("targetRef") or {}
            try:
                pod = api.get("Pod", ref["name"], ns) if ref.get("kind") == "Pod" else None
            except ApiError:
                pod = None
            owner = ((pod or {}).get("metadata", {}).get("labels") or {}).get(label)
            if owner == service and comp.listen_port in ports:
                good += 1
            else:
                bad.append(f"{ref.get('name', addr.get('ip'))} ({label}={owner}, port(s) {ports})")
    if not good and not bad:
        return Check(name, False, f"{service}:{port} has no ready endpoints")
    detail = f"{service}:{port} -> " + ("; ".join(bad) if bad else f"{good} ready {service} pod(s) on port {comp.listen_port}")
    return Check(name, good > 0 and not bad, detail)


def _wrong_selector(scenario: "Scenario", backend: Any) -> list[Check]:
    v = scenario.variant
    return [_routes_to_component(scenario, backend, v["service"], v["port"], "service_selects_its_pods")]


def _missing_service(scenario: "Scenario", backend: Any) -> list[Check]:
    v = scenario.variant
    return [_routes_to_component(scenario, backend, v["service"], v["port"], "service_exists_and_routes")]


#: API-level cause checks for families whose own checks read the simulator's model
API_CAUSE_CHECKS: dict[str, Callable[["Scenario", Any], list[Check]]] = {
    "MissingEnvVar": _missing_env_var,
    "TargetPortMisconfig": _target_port,
    "WrongServiceSelector": _wrong_selector,
    "MissingService": _missing_service,
}

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


def live_cause_checks(scenario: "Scenario", backend: Any) -> list[Check]:
    fn = API_CAUSE_CHECKS.get(scenario.family)
    return fn(scenario, backend) if fn is not None else list(scenario.cause_checks(backend))


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
            checks = [*live_cause_checks(scenario, backend), self._serving(backend, scenario, baseline, min(waited, self.window_s), self.immediate_margin)]
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
        checks.extend(live_cause_checks(scenario, backend))
        return OracleResult.from_checks(name, checks, settle_s=self.settle_s, live_cluster=True)


def restart_namespace(backend: "KubernetesBackend", scenario: "Scenario") -> list[str]:
    """A maintenance window, for real: roll every workload of the namespace and delete its pods."""
    done = roll_namespace(backend.api, scenario.namespace, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
    done.append("node reboots skipped (live cluster)")
    return done
