"""Placement incidents: NonExistentNode, TaintNoToleration, AntiAffinityDeadlock.

Each makes a workload's pods unschedulable; ``describe pod`` shows the
scheduler's FailedScheduling message with the per-node reasons. Restarting or
deleting the pods only makes new pods that the scheduler refuses the same way.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import yaml

from sre_env.apps.hotel_reservation import HOTEL_RESERVATION
from sre_env.faults.scheduling import RedeployDeployment, TaintNode, manifest_of
from sre_env.rewards.base import Check, Mechanism

from .app_common import find
from .base import RootCause, Scenario
from .briefs import impact, user_report
from .sched_common import (
    STATELESS,
    UnreachableService,
    callers_of,
    gone,
    json_patch_cmd,
    label_of,
    pods_running_check,
)
from .sched_common import and_list as _and

if TYPE_CHECKING:
    from sre_env.backend import Backend

__all__ = ["AntiAffinityDeadlock", "NonExistentNode", "TaintNoToleration"]

_UNSCHEDULABLE = r"\b(?:unschedulable|cannot be scheduled|can't be scheduled|failed ?scheduling|stuck (?:in )?pending|pending)\b"


def _original(backend: "Backend", namespace: str, name: str) -> str:
    return yaml.safe_dump(manifest_of(backend.api.get("Deployment", name, namespace)), sort_keys=True)


class NonExistentNode(UnreachableService):
    family = "NonExistentNode"
    app = HOTEL_RESERVATION
    targets: ClassVar[tuple[str, ...]] = STATELESS
    layer = "kubernetes"
    difficulty = "easy"
    summary = "Part of hotel-reservation is down after a service was redeployed."
    description = (
        "A platform engineer re-applied one hotel-reservation service from an updated manifest to move it "
        "onto dedicated hardware. Since then one feature of the site fails for every user; nothing is "
        "crash-looping."
    )
    mechanism = Mechanism(
        "node_selector_no_match",
        "kubernetes",
        "a nodeSelector/node affinity that no node satisfies",
        (
            r"\bnode ?selector\b",
            r"\brequired node affinity\b",
            r"\bnode affinity/selector\b",
            r"\b(?:non-?existent|missing|unknown|nonexisting|no such|absent|decommissioned) node\b",
            r"\bno node (?:has|carries|matches|with)\b",
            r"\bdidn't match pod's node affinity\b",
        ),
        detail_keys=("label", "value"),
    )

    def draw_variant(self, backend: "Backend", rng: np.random.Generator) -> dict[str, Any]:
        service = str(rng.choice(self.targets))
        choices = (("kubernetes.io/hostname", "worker-4"), ("kubernetes.io/hostname", "node-4"), ("node.kubernetes.io/instance-type", "m5.2xlarge"), ("disktype", "ssd"))
        label, value = choices[int(rng.integers(0, len(choices)))]
        return {"service": service, "label": label, "value": value, "original": _original(backend, self.namespace, service)}

    def inject(self, backend: "Backend") -> None:
        v = self.variant
        RedeployDeployment(self.namespace, v["service"], (("nodeSelector", {v["label"]: v["value"]}),), original=yaml.safe_load(v["original"])).inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        return self.unreachable_cause(
            "nodeSelector matches no node",
            f"deployment/{v['service']} was re-created with nodeSelector {v['label']}={v['value']}, which no node has; its pod is unschedulable "
            f"(FailedScheduling: didn't match Pod's node affinity/selector) and stays Pending, so {_and(self.callers())} cannot reach it. ",
            {"label": v["label"], "value": v["value"], "node_selector": f"{v['label']}={v['value']}"},
        )

    def reference_solution(self) -> list[str]:
        remove = [{"op": "remove", "path": "/spec/template/spec/nodeSelector"}]
        return [*self.inspect_pods(), "kubectl get nodes --show-labels", json_patch_cmd("deployment", self.variant["service"], self.namespace, remove)]

    def wrong_fixes(self) -> dict[str, list[str]]:
        return self.service_wrong_fixes(
            rollout_undo=[f"kubectl rollout undo deployment/{self.variant['service']} -n {self.namespace}"],
            uncordon_all=["kubectl uncordon worker-1 worker-2 worker-3"],
        )

    def cause_checks(self, backend: "Backend") -> list[Check]:
        v = self.variant
        dep = find(backend, "Deployment", v["service"], self.namespace)
        if dep is None:
            return [gone("Deployment", v["service"])]
        sel = (dep["spec"]["template"]["spec"].get("nodeSelector") or {})
        still = sel.get(v["label"]) == v["value"]
        return [
            Check("selector_corrected", not still, f"pod template still selects {v['label']}={v['value']}" if still else "the pod template no longer asks for the missing node"),
            pods_running_check(backend, self.app, v["service"]),
        ]

    # allowed_changes: removing the selector leaves the template without the key the original never had,
    # same as before; replacing it with a correct one is a legitimate edit (the Deployment stays modified)


class TaintNoToleration(Scenario):
    family = "TaintNoToleration"
    app = HOTEL_RESERVATION
    layer = "kubernetes"
    difficulty = "medium"
    summary = "Several hotel-reservation features fail after node maintenance."
    description = (
        "After last night's node maintenance window, hotel-reservation pages that read data fail for every "
        "user. Some pods were moved around during the window; the maintenance ticket was closed as done."
    )
    mechanism = Mechanism(
        "untolerated_taint",
        "kubernetes",
        "a node taint the workload does not tolerate",
        (
            r"\btaint(?:s|ed)?\b",
            r"\b(?:no|missing|without (?:a |any )?)tolerations?\b",
            r"\bdoes(?:n't| not) tolerate\b",
            r"\bnoexecute\b",
            r"\buntolerated\b",
        ),
        detail_keys=("node", "taint"),
        compatible=("node_failure",),
    )

    def draw_variant(self, backend: "Backend", rng: np.random.Generator) -> dict[str, Any]:
        ns = self.namespace
        db = str(rng.choice(("mongodb-profile", "mongodb-rate", "mongodb-reservation")))
        claim = backend.api.get("PersistentVolumeClaim", self.app.component(db).volume_claim, ns)
        pv = backend.api.get("PersistentVolume", claim["spec"]["volumeName"])
        node = pv["metadata"]["annotations"]["local.path.provisioner/selected-node"]
        pinned = []
        for comp in self.app.components:
            if not comp.volume_claim:
                continue
            c = backend.api.get("PersistentVolumeClaim", comp.volume_claim, ns)
            p = backend.api.get("PersistentVolume", c["spec"]["volumeName"])
            if p["metadata"]["annotations"]["local.path.provisioner/selected-node"] == node:
                pinned.append(comp.name)
        key, value = (("maintenance", "true"), ("node.example.com/disk-replacement", "scheduled"), ("upgrade", "in-progress"))[int(rng.integers(0, 3))]
        return {"node": node, "key": key, "value": value, "database": db, "pinned": tuple(sorted(pinned))}

    def inject(self, backend: "Backend") -> None:
        v = self.variant
        TaintNode(v["node"], v["key"], v["value"], "NoExecute").inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        pinned = list(v["pinned"])
        callers = sorted({c for db in pinned for c in callers_of(self.app, db)})
        return RootCause(
            component=f"node/{v['node']}",
            namespace=self.namespace,
            layer="kubernetes",
            mechanism="NoExecute taint left on a node; pods do not tolerate it",
            summary=(
                f"The NoExecute taint {v['key']}={v['value']} left on {v['node']} after maintenance evicted every pod without a toleration. "
                f"{_and(pinned)} keep their data on local volumes on {v['node']}, so their new pods can only run there, do not tolerate the taint "
                f"and stay Pending; {_and(callers)} fail on them. "
                + impact(self.app, v["database"])
            ),
            details={"node": v["node"], "taint": f"{v['key']}={v['value']}:NoExecute", "key": v["key"]},
            affected=tuple([f"deployment/{d}" for d in pinned] + [f"deployment/{c}" for c in callers]),
        )

    def brief(self) -> str:
        return user_report(self.app, self.variant["database"], intermittent=False)

    def reference_solution(self) -> list[str]:
        v = self.variant
        ns = self.namespace
        return [
            f"kubectl get pods -n {ns} -o wide",
            f"kubectl describe pod -n {ns} -l {label_of(self.app, v['database'])}",
            f"kubectl describe node {v['node']}",
            f"kubectl taint nodes {v['node']} {v['key']}:NoExecute-",
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        ns = self.namespace
        fixes = self.blind_fixes(v["database"])
        fixes["cordon_node"] = [f"kubectl cordon {v['node']}"]
        # a toleration puts the database back on a node still marked for maintenance and drifts its spec
        tol = [{"key": v["key"], "operator": "Exists", "effect": "NoExecute"}]
        fixes["tolerate_maintenance"] = [json_patch_cmd("deployment", db, ns, [{"op": "add", "path": "/spec/template/spec/tolerations", "value": tol}]) for db in v["pinned"]]
        return fixes

    def cause_checks(self, backend: "Backend") -> list[Check]:
        v = self.variant
        node = find(backend, "Node", v["node"])
        if node is None:
            return [gone("Node", v["node"])]
        left = [t for t in node["spec"].get("taints") or () if t.get("key") == v["key"]]
        checks = [Check("taint_removed", not left, f"{v['node']} still carries {v['key']}" if left else f"{v['node']} no longer carries {v['key']}")]
        checks += [pods_running_check(backend, self.app, db, f"{db}_running") for db in v["pinned"]]
        return checks


class AntiAffinityDeadlock(UnreachableService):
    family = "AntiAffinityDeadlock"
    app = HOTEL_RESERVATION
    targets: ClassVar[tuple[str, ...]] = STATELESS
    layer = "kubernetes"
    difficulty = "hard"
    summary = "One hotel-reservation feature is down after a placement policy change."
    description = (
        "To keep a latency-sensitive hotel-reservation service away from noisy neighbours, the platform "
        "team re-applied it with a new placement policy. Since then one feature of the site fails for "
        "every user and the service's pod never starts."
    )
    mechanism = Mechanism(
        "unsatisfiable_anti_affinity",
        "kubernetes",
        "a required pod anti-affinity rule no node can satisfy",
        (
            r"\banti-?affinity\b",
            r"\b(?:pod )?affinity rules?\b",
            r"\bdidn't match pod anti-affinity\b",
            r"\bunsatisfiable (?:placement|scheduling) (?:rule|constraint)s?\b",
        ),
        detail_keys=("topology_key", "selector"),
    )

    def draw_variant(self, backend: "Backend", rng: np.random.Generator) -> dict[str, Any]:
        ns = self.namespace
        service = str(rng.choice(self.targets))
        # "stay away from the data tier": databases and caches, which together sit on every worker
        workers = {n["metadata"]["name"] for n in backend.api.list("Node") if not any(t.get("effect") == "NoSchedule" for t in n["spec"].get("taints") or ())}
        tier = sorted(c.name for c in self.app.components if c.role in ("database", "cache"))
        key = self.app.label_key
        covered = {p["spec"].get("nodeName") for p in backend.api.list("Pod", ns) if (p["metadata"].get("labels") or {}).get(key) in tier}
        if not workers <= covered:
            tier = sorted(c.name for c in self.app.components if c.name != service)
        return {"service": service, "tier": tuple(tier), "topology_key": "kubernetes.io/hostname", "original": _original(backend, ns, service)}

    def _affinity(self) -> dict[str, Any]:
        v = self.variant
        term = {"labelSelector": {"matchExpressions": [{"key": self.app.label_key, "operator": "In", "values": list(v["tier"])}]}, "topologyKey": v["topology_key"]}
        return {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}

    def inject(self, backend: "Backend") -> None:
        v = self.variant
        RedeployDeployment(self.namespace, v["service"], (("affinity", self._affinity()),), original=yaml.safe_load(v["original"])).inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        return self.unreachable_cause(
            "unsatisfiable required pod anti-affinity",
            f"deployment/{v['service']} was re-created with an unsatisfiable required pod anti-affinity rule (topologyKey {v['topology_key']}) against the data tier "
            f"(its databases and caches); those pods run on every worker, so no node satisfies it "
            f"and the pod stays Pending; {_and(self.callers())} cannot reach {v['service']}. ",
            {"topology_key": v["topology_key"], "selector": f"{self.app.label_key} in (" + ",".join(v["tier"]) + ")"},
        )

    def reference_solution(self) -> list[str]:
        v = self.variant
        ns = self.namespace
        preferred = {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "podAffinityTerm": self._affinity()["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]}]}}
        return [
            *self.inspect_pods(),
            # relax the rule: keep the intent as a preference the scheduler may break
            json_patch_cmd("deployment", v["service"], ns, [{"op": "replace", "path": "/spec/template/spec/affinity", "value": preferred}]),
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        ns = self.namespace
        return self.service_wrong_fixes(
            scale_up=[f"kubectl scale deployment/{v['service']} -n {ns} --replicas=3"],
            rollout_undo=[f"kubectl rollout undo deployment/{v['service']} -n {ns}"],
        )

    def cause_checks(self, backend: "Backend") -> list[Check]:
        v = self.variant
        dep = find(backend, "Deployment", v["service"], self.namespace)
        if dep is None:
            return [gone("Deployment", v["service"])]
        req = (((dep["spec"]["template"]["spec"].get("affinity") or {}).get("podAntiAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")) or []
        return [
            Check("rule_relaxed", not req, "the pod template still requires the anti-affinity" if req else "no required anti-affinity left"),
            pods_running_check(backend, self.app, v["service"]),
        ]
