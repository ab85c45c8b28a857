"""CfsThrottling: a CPU limit "right-sized" from a quiet hour throttles a service under real load.

The CFS quota lets the container use ``limit`` millicores per period; the work
its traffic needs is more, so requests queue behind the quota: latency climbs,
clients time out, ``container_cpu_cfs_throttled_periods_total`` rises and the
CPUThrottlingHigh alert fires, while ``kubectl top`` shows the pod pinned at its
limit. Restarting or adding a replica of a throttled pod does not give it CPU;
the limit has to fit the work.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from sre_env.apps.hotel_reservation import HOTEL_RESERVATION
from sre_env.faults.cpu import CpuLimit
from sre_env.kube.quantity import CPU_MS_PER_REQUEST_MS, cpu_millicores
from sre_env.rewards.base import Check, Mechanism

from .base import RootCause, SimScenario
from .blind import rollback_repairs
from .service_fault import ServiceFault

if TYPE_CHECKING:
    from sre_env.sim.model import ModelBackend

__all__ = ["CfsThrottling"]


class CfsThrottling(ServiceFault, SimScenario):
    family = "CfsThrottling"
    app = HOTEL_RESERVATION
    layer = "os"
    intermittent = True
    #: the repair restores the CPU limit and request the Deployment had
    repaired_kind = None
    difficulty = "medium"
    summary = "One hotel-reservation feature became slow and times out since a resource clean-up."
    description = (
        "Since a cost-saving clean-up of resource settings yesterday evening, one hotel-reservation feature "
        "is very slow at peak and often times out. Pods are Running and nothing restarts; the clean-up "
        "was reviewed and approved."
    )
    accepted_blind = rollback_repairs("yesterday's clean-up that cut the CPU limit")
    mechanism = Mechanism(
        "cfs_throttling",
        "os",
        "a CPU limit far below the work: the CFS quota throttles the container",
        (
            r"\b(?:cpu|cfs)\b[^.;\n]{0,20}?\bthrottl\w*\b",
            r"\bthrottl\w*\b[^.;\n]{0,30}?\bcpu\b",
            r"\bcpu (?:limit|quota)s? (?:is |are |was |were )?(?:too )?(?:low|small|tight)\b",
            r"\b(?:low|small|tight|tiny) cpu (?:limit|quota)s?\b",
            r"\bcfs quota\b",
        ),
        detail_keys=("limit", "container"),
        compatible=("resource_exhaustion",),
    )

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        candidates = []
        for comp in self.app.components:
            if comp.role not in ("service", "frontend") or comp.kind != "Deployment":
                continue
            load = backend.model.load(comp.name)
            if load >= 90.0:
                candidates.append((comp, load))
        comp, load = candidates[int(rng.integers(0, len(candidates)))]
        need = 1.0 + load * comp.latency_ms * CPU_MS_PER_REQUEST_MS
        share = float(rng.choice((0.25, 0.35, 0.45)))
        limit_m = max(10, int(round(need * share / 5.0)) * 5)
        dep = backend.api.get("Deployment", comp.name, self.namespace)
        ctr = next(c for c in dep["spec"]["template"]["spec"]["containers"] if c["name"] == comp.container)
        res = ctr.get("resources") or {}
        return {
            "service": comp.name,
            "container": comp.container,
            "limit": f"{limit_m}m",
            "need_m": int(need),
            "previous_limit": str((res.get("limits") or {}).get("cpu", "1")),
            "previous_request": str((res.get("requests") or {}).get("cpu", "100m")),
        }

    def inject(self, backend: "ModelBackend") -> None:
        v = self.variant
        CpuLimit(self.namespace, v["service"], v["container"], v["limit"], v["previous_limit"], v["previous_request"]).inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        return self.service_cause(
            "CPU throttling: the CFS quota (CPU limit) is far below the work",
            f"deployment/{v['service']} (container {v['container']}) has a CPU limit of {v['limit']} (limit {v['limit']}), about a third of the "
            f"~{v['need_m']}m its traffic needs, so the CFS quota throttles it: requests queue, latency climbs and calls time out. ",
            {"limit": v["limit"], "container": v["container"], "resource": "cpu"},
        )

    def reference_solution(self) -> list[str]:
        v = self.variant
        ns = self.namespace
        return [
            f"kubectl top pods -n {ns}",
            f"kubectl describe deployment {v['service']} -n {ns}",
            f"kubectl set resources deployment/{v['service']} -n {ns} -c {v['container']} --limits=cpu={v['previous_limit']} --requests=cpu={v['previous_request']}",
            "sleep 30",
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        ns = self.namespace
        return {
            **self.blind_fixes(v["service"]),
            # more throttled replicas: still short of CPU, and left above the baseline
            "scale_out": [f"kubectl scale deployment/{v['service']} -n {ns} --replicas=2"],
            "raise_requests_only": [f"kubectl set resources deployment/{v['service']} -n {ns} -c {v['container']} --requests=cpu={v['limit']}"],
        }

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        v = self.variant
        pods = [p for p in backend.api.list("Pod", self.namespace, f"{self.app.label_key}={v['service']}") if not p["metadata"].get("deletionTimestamp")]
        bad = []
        for pod in pods:
            for ctr in pod["spec"].get("containers") or ():
                if ctr.get("name") != v["container"]:
                    continue
                limit = cpu_millicores(((ctr.get("resources") or {}).get("limits") or {}).get("cpu", 0))
                if 0 < limit < 2 * v["need_m"]:
                    bad.append(f"{pod['metadata']['name']}: cpu limit {limit}m")
        return [Check("cpu_limit_fits_the_work", bool(pods) and not bad, "; ".join(bad) if bad else f"every {v['service']} pod may use at least twice the ~{v['need_m']}m it needs")]
