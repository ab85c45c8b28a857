"""Resource incidents: RequestTooLarge, LimitTooSmall, NamespaceQuota, PriorityPreemption, HPAWithoutRequests.

What a pod may use decides whether it is created (quota admission), where it
can run (requests against allocatable, priorities and preemption), whether it
survives (a memory limit below its working set) and whether it is scaled (an
HPA needs CPU requests to compute utilisation). Each fault changes one of those
objects; the API, scheduler, kubelet and HPA controller do the rest.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import yaml

from sre_env.apps.hotel_reservation import HOTEL_RESERVATION
from sre_env.faults.control_plane import LaterRollout
from sre_env.faults.scheduling import (
    CreateObjects,
    RedeployDeployment,
    SetContainerResources,
    TrafficSurge,
    manifest_of,
)
from sre_env.kube.quantity import cpu_millicores, memory_bytes, requests_within_limits
from sre_env.rewards.base import AllowedChange, Check, Mechanism
from sre_env.sim.control.priority import pod_priority
from sre_env.sim.control.quota import namespace_usage

from .app_common import find
from .base import RootCause, Scenario, SimScenario
from .blind import rollback_repairs
from .briefs import impact, user_report
from .sched_common import (
    STATELESS,
    UnreachableService,
    gone,
    json_patch_cmd,
    label_of,
    pods_running_check,
)
from .sched_common import and_list as _and

if TYPE_CHECKING:
    from sre_env.backend import Backend
    from sre_env.sim.model import ModelBackend

__all__ = ["HPAWithoutRequests", "LimitTooSmall", "NamespaceQuota", "PriorityPreemption", "RequestTooLarge"]

Obj = dict[str, Any]


def _resources(backend: "Backend", namespace: str, deployment: str, container: str) -> Obj | None:
    """A container's resources in a Deployment's template (None if the Deployment or container is gone)."""
    dep = find(backend, "Deployment", deployment, namespace)
    ctr = next((c for c in dep["spec"]["template"]["spec"]["containers"] if c["name"] == container), None) if dep else None
    return json.loads(json.dumps(ctr.get("resources") or {})) if ctr is not None else None


def _set_resources_cmd(namespace: str, deployment: str, resources: Obj) -> str:
    return json_patch_cmd("deployment", deployment, namespace, [{"op": "replace", "path": "/spec/template/spec/containers/0/resources", "value": resources}])


class RequestTooLarge(UnreachableService):
    family = "RequestTooLarge"
    app = HOTEL_RESERVATION
    targets: ClassVar[tuple[str, ...]] = STATELESS
    layer = "kubernetes"
    difficulty = "easy"
    summary = "One hotel-reservation feature is down after a service was given more resources."
    description = (
        "To give a hotel-reservation service 'more headroom' before a sale, an engineer raised its resources "
        "and re-applied it. Since then one feature of the site fails for every user and the service has no "
        "running pod."
    )
    mechanism = Mechanism(
        "request_exceeds_capacity",
        "kubernetes",
        "resource requests larger than any node's allocatable capacity",
        (
            r"\binsufficient (?:cpu|memory)\b",
            r"\brequests?\b[^.;\n]{0,60}?\b(?:exceed\w*|larger than|more than|bigger than|above|too (?:large|big|high))\b",
            r"\b(?:too (?:large|big|high)|excessive|oversized|huge) (?:cpu |memory |resource )?requests?\b",
            r"\b(?:exceeds?|more than|larger than) (?:any |every |the )?nodes?'? ?(?:allocatable|capacity)\b",
            r"\bno node (?:has|with) enough\b",
        ),
        detail_keys=("resource", "request"),
    )

    def draw_variant(self, backend: "Backend", rng: np.random.Generator) -> dict[str, Any]:
        service = str(rng.choice(self.targets))
        comp = self.app.component(service)
        resource, amount = (("cpu", "12"), ("cpu", "16"), ("memory", "32Gi"), ("memory", "48Gi"))[int(rng.integers(0, 4))]
        return {"service": service, "container": comp.container, "resource": resource, "request": amount, "original": json.dumps(_resources(backend, self.namespace, service, comp.container), sort_keys=True)}

    def _bad(self) -> Obj:
        v = self.variant
        res = json.loads(v["original"])
        res.setdefault("requests", {})[v["resource"]] = v["request"]
        res.setdefault("limits", {})[v["resource"]] = v["request"]
        return res

    def inject(self, backend: "Backend") -> None:
        v = self.variant
        RedeployDeployment(self.namespace, v["service"], (), v["container"], self._bad()).inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        alloc = "8 CPUs" if v["resource"] == "cpu" else "about 16Gi of memory"
        return self.unreachable_cause(
            "resources larger than any node's allocatable capacity",
            f"deployment/{v['service']} requests {v['resource']}={v['request']}, more than any node's allocatable ({alloc} per worker): "
            f"the scheduler reports Insufficient {v['resource']} on every node and the pod stays Pending, so {_and(self.callers())} cannot reach it. ",
            {"resource": v["resource"], "request": v["request"], "container": v["container"]},
        )

    def reference_solution(self) -> list[str]:
        v = self.variant
        return [*self.inspect_pods(), "kubectl describe nodes", _set_resources_cmd(self.namespace, v["service"], json.loads(v["original"]))]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        ns = self.namespace
        half = self._bad()
        amount = v["request"]
        half["requests"][v["resource"]] = half["limits"][v["resource"]] = (str(int(amount) // 2) if v["resource"] == "cpu" else f"{int(amount[:-2]) // 4}Gi")
        return self.service_wrong_fixes(
            # fits on a node now, but reserves a quarter of a worker or more for a service that uses a sliver
            halve_request=[_set_resources_cmd(ns, v["service"], half)],
            rollout_undo=[f"kubectl rollout undo deployment/{v['service']} -n {ns}"],
        )

    def cause_checks(self, backend: "Backend") -> list[Check]:
        v = self.variant
        res = _resources(backend, self.namespace, v["service"], v["container"])
        if res is None:
            return [gone("Deployment", v["service"])]
        req = (res.get("requests") or {}).get(v["resource"])
        try:
            amount = cpu_millicores(req) if v["resource"] == "cpu" and req is not None else memory_bytes(req) if req is not None else 0
        except ValueError:
            amount = 0
        sane = amount <= (2000 if v["resource"] == "cpu" else 4 * 1024**3)
        return [
            Check("request_right_sized", sane, f"{v['resource']} request {req} {'fits' if sane else 'still reserves a large share of'} a worker"),
            pods_running_check(backend, self.app, v["service"]),
        ]


class LimitTooSmall(UnreachableService):
    family = "LimitTooSmall"
    app = HOTEL_RESERVATION
    targets: ClassVar[tuple[str, ...]] = STATELESS
    layer = "kubernetes"
    difficulty = "medium"
    summary = "One hotel-reservation service restarts in a loop after a resource policy change."
    description = (
        "After a cost-saving change tightened resource settings on a hotel-reservation service, one feature "
        "of the site fails for every user and the service's pod keeps restarting. Its logs show nothing "
        "alarming before each restart."
    )
    accepted_blind = rollback_repairs("the cost-saving change that tightened the memory limit")
    mechanism = Mechanism(
        "memory_limit_too_low",
        "kubernetes",
        "a memory limit below the process's working set (OOMKilled)",
        (
            r"\boom[- ]?kill\w*\b",
            r"\bout of memory\b",
            r"\bexit code 137\b",
            r"\bmemory limits?\b[^.;\n]{0,60}?\b(?:too (?:low|small|tight)|below|under|less than|smaller than)\b",
            r"\b(?:too (?:low|small|tight)|undersized) memory limits?\b",
        ),
        detail_keys=("limit", "container"),
        compatible=("resource_exhaustion",),
    )

    def draw_variant(self, backend: "Backend", rng: np.random.Generator) -> dict[str, Any]:
        service = str(rng.choice(self.targets))
        comp = self.app.component(service)
        limit = str(rng.choice(("8Mi", "10Mi")))
        return {"service": service, "container": comp.container, "limit": limit, "working_set_mib": float(comp.memory_mib), "original": json.dumps(_resources(backend, self.namespace, service, comp.container), sort_keys=True)}

    def _with_limit(self, limit: str) -> Obj:
        res = json.loads(self.variant["original"])
        res.setdefault("limits", {})["memory"] = limit
        return requests_within_limits(res)  # a request above the new limit would be refused

    def inject(self, backend: "Backend") -> None:
        v = self.variant
        SetContainerResources(self.namespace, v["service"], v["container"], self._with_limit(v["limit"]), json.loads(v["original"])).inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        return self.unreachable_cause(
            "memory limit below the working set: OOMKilled",
            f"deployment/{v['service']} got a memory limit of {v['limit']} on container {v['container']}, below the ~{int(v['working_set_mib'])}Mi its process needs: "
            f"the process is OOMKilled (exit code 137) as its memory grows at start-up and crash-loops, so {_and(self.callers())} cannot reach it. ",
            {"limit": v["limit"], "container": v["container"], "working_set": f"{int(v['working_set_mib'])}Mi"},
        )

    def reference_solution(self) -> list[str]:
        v = self.variant
        return [*self.inspect_pods(), f"kubectl set resources deployment/{v['service']} -n {self.namespace} -c {v['container']} --limits=memory=256Mi --requests=memory=64Mi"]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        ns = self.namespace
        doubled = f"{int(v['limit'][:-2]) * 2}Mi"
        return self.service_wrong_fixes(
            double_limit=[f"kubectl set resources deployment/{v['service']} -n {ns} -c {v['container']} --limits=memory={doubled}"],
            scale_up=[f"kubectl scale deployment/{v['service']} -n {ns} --replicas=3"],
        )

    def cause_checks(self, backend: "Backend") -> list[Check]:
        v = self.variant
        res = _resources(backend, self.namespace, v["service"], v["container"])
        if res is None:
            return [gone("Deployment", v["service"])]
        limit = (res.get("limits") or {}).get("memory")
        try:
            ok = limit is None or memory_bytes(limit) >= v["working_set_mib"] * 1.5 * 1024 * 1024
        except ValueError:
            ok = False
        return [
            Check("memory_limit_sane", ok, f"memory limit {limit or 'unset'} vs a ~{int(v['working_set_mib'])}Mi working set"),
            pods_running_check(backend, self.app, v["service"]),
        ]


QUOTA_NAME = "compute-resources"


class NamespaceQuota(UnreachableService):
    family = "NamespaceQuota"
    app = HOTEL_RESERVATION
    targets: ClassVar[tuple[str, ...]] = STATELESS
    layer = "kubernetes"
    difficulty = "medium"
    summary = "One hotel-reservation service has no pods after a routine redeploy."
    description = (
        "The FinOps team rolled out cost guardrails to the application namespaces this week. Today a "
        "routine redeploy of one hotel-reservation service finished without errors in CI, but the service "
        "never came back and one feature of the site fails for every user."
    )
    mechanism = Mechanism(
        "quota_exceeded",
        "kubernetes",
        "a ResourceQuota refuses the pods a workload needs",
        (
            r"\bresource ?quotas?\b",
            r"\bexceeded quota\b",
            r"\bquota\b[^.;\n]{0,60}?\b(?:exceeded|exhausted|too (?:low|small|tight)|blocks?|blocking|refus\w*|forbid\w*|below)\b",
            r"\b(?:namespace|cpu) quota\b",
            r"\bfailedcreate\b",
        ),
        detail_keys=("quota", "hard_cpu"),
    )

    #: the quota is raised; the redeployed Deployment is as it was
    repaired_kind = None

    def extra_components(self) -> tuple[str, ...]:
        """The quota is a namespace object, not an app component; the grader must know its name."""
        return (QUOTA_NAME,)

    def draw_variant(self, backend: "Backend", rng: np.random.Generator) -> dict[str, Any]:
        service = str(rng.choice(self.targets))
        hard = str(rng.choice(("1", "1200m", "1500m")))
        manifest = manifest_of(backend.api.get("Deployment", service, self.namespace))
        return {"service": service, "hard_cpu": hard, "original": yaml.safe_dump(manifest, sort_keys=True)}

    def _quota(self) -> Obj:
        return {
            "apiVersion": "v1",
            "kind": "ResourceQuota",
            "metadata": {"name": QUOTA_NAME, "namespace": self.namespace, "labels": {"team": "finops", "policy": "cost-guardrail"}},
            "spec": {"hard": {"pods": "40", "requests.cpu": self.variant["hard_cpu"]}},
        }

    def inject(self, backend: "Backend") -> None:
        v = self.variant
        CreateObjects((self._quota(),)).inject(backend)
        # the routine redeploy: the running pod goes away, its replacement meets the quota
        RedeployDeployment(self.namespace, v["service"], original=yaml.safe_load(v["original"])).inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        return RootCause(
            component=f"resourcequota/{QUOTA_NAME}",
            namespace=self.namespace,
            layer="kubernetes",
            mechanism="ResourceQuota exceeded: pod creation forbidden",
            summary=(
                f"The ResourceQuota {QUOTA_NAME} caps requests.cpu at {v['hard_cpu']}, below what the namespace's pods already request; "
                f"when deployment/{v['service']} was redeployed, its ReplicaSet's pod creation was forbidden (FailedCreate: exceeded quota) "
                f"so {v['service']} has no pod and {_and(self.callers())} cannot reach it. " + impact(self.app, v["service"])
            ),
            details={"quota": QUOTA_NAME, "hard_cpu": v["hard_cpu"], "resource": "requests.cpu"},
            affected=self.with_callers(self.callers()),
        )

    def reference_solution(self) -> list[str]:
        v = self.variant
        ns = self.namespace
        return [
            f"kubectl get deploy {v['service']} -n {ns}",
            f"kubectl describe rs -n {ns} -l {label_of(self.app, v['service'])}",
            f"kubectl describe quota -n {ns}",
            f"kubectl patch resourcequota {QUOTA_NAME} -n {ns} --type=merge -p '{{\"spec\":{{\"hard\":{{\"requests.cpu\":\"4\"}}}}}}'",
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        ns = self.namespace
        donor = "user" if v["service"] != "user" else "recommendation"
        return self.service_wrong_fixes(
            # the guardrail is policy: removing it is not the team's call
            delete_quota=[f"kubectl delete resourcequota {QUOTA_NAME} -n {ns}"],
            starve_another_service=[f"kubectl scale deployment/{donor} -n {ns} --replicas=0"],
        )

    def cause_checks(self, backend: "Backend") -> list[Check]:
        v = self.variant
        ns = self.namespace
        quota = next((q for q in backend.api.list("ResourceQuota", ns) if q["metadata"]["name"] == QUOTA_NAME), None)
        if quota is None:
            return [Check("quota_kept", False, f"resourcequota/{QUOTA_NAME} was deleted")]
        hard = (quota.get("spec") or {}).get("hard") or {}
        used = namespace_usage(backend.api, ns)
        try:
            limit = cpu_millicores(hard["requests.cpu"]) if "requests.cpu" in hard else None
        except ValueError:
            limit = 0
        # room for what runs now plus one rolling-update surge pod
        ok = limit is None or limit >= used["requests.cpu"] + 100
        return [
            Check("quota_fits_workloads", ok, f"requests.cpu used {used['requests.cpu']}m of {hard.get('requests.cpu', 'unlimited')}"),
            pods_running_check(backend, self.app, v["service"]),
        ]


_BATCH_NS = "analytics"
_BATCH = "report-builder"
_HIGH = "high-priority"


class PriorityPreemption(Scenario):
    family = "PriorityPreemption"
    app = HOTEL_RESERVATION
    layer = "kubernetes"
    difficulty = "hard"
    summary = "Large parts of hotel-reservation went down when a batch workload started."
    description = (
        "Minutes after the analytics team launched their nightly report builder on the shared cluster, "
        "most hotel-reservation features started failing for every user and many of its pods are Pending. "
        "The analytics team says their job is business-critical and must keep running."
    )
    mechanism = Mechanism(
        "priority_preemption",
        "kubernetes",
        "a higher-priority workload preempts the application's pods",
        (
            r"\bpreempt\w*\b",
            r"\bpriority ?class(?:name)?\b",
            r"\b(?:higher|high|wrong|misconfigured) priority\b",
            r"\bpod priority\b",
        ),
        detail_keys=("priority_class", "batch"),
        compatible=("resource_exhaustion", "request_exceeds_capacity"),
    )

    def extra_components(self) -> tuple[str, ...]:
        """The batch workload lives outside the app; the grader must know its name."""
        return (_BATCH,)

    def extra_namespaces(self) -> tuple[str, ...]:
        """Re-prioritising the batch workload is the repair, not interference with a bystander."""
        return (_BATCH_NS,)

    def draw_variant(self, backend: "Backend", rng: np.random.Generator) -> dict[str, Any]:
        # each batch pod asks for almost a whole worker: it fits only once the app's pods there are gone
        other = {}
        for pod in backend.api.list("Pod"):
            node = pod["spec"].get("nodeName")
            if node and pod["metadata"]["namespace"] != self.namespace:
                cpu = sum(cpu_millicores(((c.get("resources") or {}).get("requests") or {}).get("cpu", 0)) for c in pod["spec"]["containers"])
                other[node] = other.get(node, 0) + cpu
        workers = [n for n in backend.api.list("Node") if not any(t.get("effect") == "NoSchedule" for t in n["spec"].get("taints") or ())]
        alloc = min(cpu_millicores(n["status"]["allocatable"]["cpu"]) - other.get(n["metadata"]["name"], 0) for n in workers)
        value = int(rng.choice((100000, 1000000)))
        return {"replicas": len(workers), "cpu": f"{alloc - 100}m", "value": value, "image": "busybox:1.36"}

    def _objects(self) -> tuple[Obj, ...]:
        v = self.variant
        labels = {"app": _BATCH, "team": "analytics"}
        return (
            {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": _HIGH}, "value": v["value"], "globalDefault": False, "description": "Business-critical workloads.", "preemptionPolicy": "PreemptLowerPriority"},
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": _BATCH_NS, "labels": {"kubernetes.io/metadata.name": _BATCH_NS}}},
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": _BATCH, "namespace": _BATCH_NS, "labels": dict(labels)},
                "spec": {
                    "replicas": v["replicas"],
                    "selector": {"matchLabels": {"app": _BATCH}},
                    "strategy": {"type": "Recreate"},
                    "template": {
                        "metadata": {"labels": dict(labels)},
                        "spec": {
                            "priorityClassName": _HIGH,
                            "containers": [
                                {
                                    "name": "builder",
                                    "image": v["image"],
                                    "command": ["sh", "-c", "while true; do build-reports --all-regions; sleep 60; done"],
                                    "resources": {"requests": {"cpu": v["cpu"], "memory": "2Gi"}, "limits": {"cpu": v["cpu"], "memory": "2Gi"}},
                                }
                            ],
                        },
                    },
                },
            },
        )

    def inject(self, backend: "Backend") -> None:
        CreateObjects(self._objects()).inject(backend)

    def _app_deployments(self) -> list[str]:
        return [c.name for c in self.app.components]

    def root_cause(self) -> RootCause:
        v = self.variant
        return RootCause(
            component=f"deployment/{_BATCH}",
            namespace=self.namespace,
            layer="kubernetes",
            mechanism="higher-priority workload preempts the application",
            summary=(
                f"deployment/{_BATCH} in namespace {_BATCH_NS} runs with priorityClassName {_HIGH} (value {v['value']}) and requests {v['cpu']} CPU per pod; "
                f"hotel-reservation pods have the default priority 0, so the scheduler preempted them to make room and their replacements stay Pending "
                f"(Insufficient cpu, no preemption victims); frontend fails as the services behind it disappear. "
                f"The batch workload must run below the serving workloads' priority. " + impact(self.app, self.app.entrypoint)
            ),
            details={"priority_class": _HIGH, "value": v["value"], "batch": f"{_BATCH_NS}/{_BATCH}", "cpu": v["cpu"]},
            affected=(f"deployment/{_BATCH}", f"deployment/{self.app.entrypoint}"),
        )

    def brief(self) -> str:
        return user_report(self.app, self.app.entrypoint, intermittent=False)

    def reference_solution(self) -> list[str]:
        ns = self.namespace
        low = (
            "apiVersion: scheduling.k8s.io/v1\n"
            "kind: PriorityClass\n"
            "metadata:\n"
            "  name: batch-low\n"
            "value: -100\n"
            "globalDefault: false\n"
            "preemptionPolicy: Never\n"
            "description: Batch work that runs on spare capacity only.\n"
        )
        return [
            f"kubectl get pods -n {ns}",
            f"kubectl get events -n {ns} --field-selector reason=Preempted",
            "kubectl get priorityclass",
            f"kubectl apply -f - <<'EOF'\n{low}EOF",
            json_patch_cmd("deployment", _BATCH, _BATCH_NS, [{"op": "replace", "path": "/spec/template/spec/priorityClassName", "value": "batch-low"}]),
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        ns = self.namespace
        return {
            "delete_batch": [f"kubectl delete deployment {_BATCH} -n {_BATCH_NS}"],
            "delete_priority_class": [f"kubectl delete priorityclass {_HIGH}"],
            # refused: a PriorityClass's value is immutable (and running pods keep theirs anyway)
            "lower_class_value": [f"kubectl patch priorityclass {_HIGH} --type=merge -p '{{\"value\":100}}'"],
            "delete_pending_pods": [f"kubectl delete pods -n {ns} --field-selector=status.phase=Pending"],
            "restart_app": [f"kubectl rollout restart deployment -n {ns} {' '.join(self._app_deployments())}"],
            # equal priority: fine until the app's pods are recreated after the waiting batch pods
            "drop_priority_class": [json_patch_cmd("deployment", _BATCH, _BATCH_NS, [{"op": "remove", "path": "/spec/template/spec/priorityClassName"}])],
        }

    def cause_checks(self, backend: "Backend") -> list[Check]:
        api = backend.api
        dep = next((d for d in api.list("Deployment", _BATCH_NS) if d["metadata"]["name"] == _BATCH), None)
        if dep is None or int(dep["spec"].get("replicas", 0)) < int(self.variant["replicas"]):
            return [Check("batch_kept", False, f"{_BATCH_NS}/{_BATCH} was removed or scaled down instead of re-prioritised")]
        app_prio = max((pod_priority(p) for p in api.list("Pod", self.namespace)), default=0)
        batch = [p for p in api.list("Pod", _BATCH_NS) if not p["metadata"].get("deletionTimestamp")]
        higher = [p["metadata"]["name"] for p in batch if pod_priority(p) >= app_prio]
        return [Check("batch_below_app_priority", not higher, f"batch pods at or above the app's priority: {', '.join(higher)}" if higher else "every batch pod runs below the app's priority")]

    def allowed_changes(self) -> list[AllowedChange]:
        # the batch workload is the analytics team's: it stays (re-prioritised)
        return [AllowedChange("Namespace", "", _BATCH_NS, "created"), AllowedChange("Deployment", _BATCH_NS, _BATCH, "created")]


#: offered load during the peak: beyond one replica of the web tier, within what four replicas serve
_SURGE = 11.0


class HPAWithoutRequests(SimScenario):
    """Simulator-only: the traffic peak is the load generator's offered rate (:class:`TrafficSurge`)."""

    family = "HPAWithoutRequests"
    app = HOTEL_RESERVATION
    layer = "kubernetes"
    difficulty = "hard"
    summary = "hotel-reservation buckles under a traffic peak although autoscaling is configured."
    description = (
        "A marketing campaign is driving about ten times the usual traffic to the hotel-reservation site. "
        "Autoscaling was set up for the web tier last sprint precisely for this, but the site is slow and "
        "a large share of requests fail; the number of pods has not changed."
    )
    mechanism = Mechanism(
        "hpa_missing_requests",
        "kubernetes",
        "an HPA cannot compute CPU utilisation because the pods set no CPU requests",
        (
            r"\b(?:missing|no|without|removed|dropped|lacks?|lacking) (?:cpu )?(?:resource )?requests?\b",
            r"\bcpu requests?\b[^.;\n]{0,40}?\b(?:missing|removed|dropped|not set|unset|absent)\b",
            r"\bmissing request for cpu\b",
            r"\bfailedgetresourcemetric\b",
            r"\b(?:hpa|autoscaler)\b[^.;\n]{0,80}?\b(?:unknown|cannot|can't|unable|fail\w*|does(?:n't| not) scale)\b",
            r"\butili[sz]ation\b[^.;\n]{0,40}?\b(?:unknown|undefined|cannot be computed)\b",
        ),
        detail_keys=("deployments", "target"),
        compatible=("resource_exhaustion",),
    )

    #: the services autoscaled for the peak (the ones one replica cannot carry at 11x)
    targets = ("frontend", "profile", "reservation")

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        target = int(rng.choice((50, 60, 70)))
        originals = {t: _resources(backend, self.namespace, t, self.app.component(t).container) for t in self.targets}
        return {"target": target, "max": 4, "originals": json.dumps(originals, sort_keys=True), "deployments": ", ".join(self.targets)}

    def _hpas(self) -> tuple[Obj, ...]:
        v = self.variant
        return tuple(
            {
                "apiVersion": "autoscaling/v2",
                "kind": "HorizontalPodAutoscaler",
                "metadata": {"name": t, "namespace": self.namespace},
                "spec": {
                    "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": t},
                    "minReplicas": 1,
                    "maxReplicas": v["max"],
                    "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": v["target"]}}}],
                },
            }
            for t in self.targets
        )

    def inject(self, backend: "ModelBackend") -> None:
        CreateObjects(self._hpas()).inject(backend)
        originals = json.loads(self.variant["originals"])
        for t in self.targets:
            # a values refactor dropped the resources block of the web tier
            SetContainerResources(self.namespace, t, self.app.component(t).container, {}, originals[t]).inject(backend)
        for t in self.targets:
            # last sprint's refactor, rolled out again since: no `rollout undo` brings the requests back
            LaterRollout(self.namespace, t).inject(backend)
        TrafficSurge(self.app.name, _SURGE).inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        containers = ", ".join(self.app.component(t).container for t in self.targets)
        return RootCause(
            component=f"deployment/{self.targets[0]}",
            namespace=self.namespace,
            layer="kubernetes",
            mechanism="HPA cannot compute CPU utilisation: no CPU resources set on the pods",
            summary=(
                f"The resources (CPU requests) were removed from deployment/frontend, deployment/profile and deployment/reservation (containers {containers}); their HPAs "
                f"(target {v['target']}% CPU) cannot compute utilisation (FailedGetResourceMetric: missing request for cpu, TARGETS <unknown>) and never scale "
                f"out, so under the traffic peak one replica each of frontend, profile and reservation saturates and user requests fail."
            ),
            details={"deployments": v["deployments"], "target": f"{v['target']}%", "metric": "cpu"},
            affected=tuple(f"deployment/{t}" for t in self.targets),
        )

    def brief(self) -> str:
        return user_report(self.app, self.app.entrypoint, intermittent=True)

    def reference_solution(self) -> list[str]:
        ns = self.namespace
        originals = json.loads(self.variant["originals"])
        steps = [f"kubectl get hpa -n {ns}", f"kubectl describe hpa {self.targets[0]} -n {ns}"]
        for t in self.targets:
            steps.append(_set_resources_cmd(ns, t, originals[t]))
        steps += ["sleep 45", f"kubectl get hpa -n {ns}"]
        return steps

    def wrong_fixes(self) -> dict[str, list[str]]:
        ns = self.namespace
        return {
            "rollout_restart": [f"kubectl rollout restart deployment/{t} -n {ns}" for t in self.targets],
            "delete_hpas": [f"kubectl delete hpa {t} -n {ns}" for t in self.targets],
            # capacity by hand: serves now, but nothing scales with the load any more
            "scale_by_hand": [f"kubectl scale deployment/{t} -n {ns} --replicas=4" for t in self.targets],
            "raise_max_replicas": [f"kubectl patch hpa {t} -n {ns} --type=merge -p '{{\"spec\":{{\"maxReplicas\":10}}}}'" for t in self.targets],
        }

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        ns = self.namespace
        checks = []
        for t in self.targets:
            hpa = next((h for h in backend.api.list("HorizontalPodAutoscaler", ns) if h["metadata"]["name"] == t), None)
            if hpa is None:
                checks.append(Check(f"{t}_autoscaled", False, f"hpa/{t} was deleted"))
                continue
            active = next((c for c in (hpa.get("status") or {}).get("conditions") or () if c.get("type") == "ScalingActive"), None)
            ok = active is not None and active.get("status") == "True"
            checks.append(Check(f"{t}_autoscaled", ok, f"hpa/{t}: " + ((active or {}).get("message") or "no status yet")))
        return checks

    def allowed_changes(self) -> list[AllowedChange]:
        # the autoscaler sizes the web tier now
        return [AllowedChange("Deployment", self.namespace, t, "modified") for t in self.targets]
