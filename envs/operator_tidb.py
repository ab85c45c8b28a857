"""OperatorMisoperation: a TidbCluster custom resource is misconfigured; TiDB Operator applies it.

The cause is one field of the ``basic`` TidbCluster, set through the API. The
modelled operator (``sre_env.sim.control.operator_tidb``) renders it into the
component's StatefulSet and the rolling update replaces the healthy pod with
one that cannot run. The repair is to correct the custom resource: edits to
the StatefulSet are reverted by the operator on its next sync, deleted pods
come back from the same bad template, and restarting the operator only makes
it apply the same wrong spec again.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Callable, ClassVar

import numpy as np

from sre_env.apps.tidb import (
    CLUSTER,
    NAMESPACE,
    OPERATOR_NAME,
    OPERATOR_NAMESPACE,
    TIDB,
    VERSION,
)
from sre_env.faults.operator import PatchCustomResource
from sre_env.kube.tolerations import tolerates
from sre_env.rewards.base import AllowedChange, Check, Mechanism

from .app_common import find
from .base import RootCause, Scenario

if TYPE_CHECKING:
    from sre_env.backend import Backend

__all__ = ["TidbBadSecurityContext", "TidbInvalidAffinity", "TidbInvalidToleration", "TidbWrongVersion"]

_LABEL = "app.kubernetes.io/component"
#: what users of the database see when a component is down
_SYMPTOM = {
    "pd": "every statement fails (ERROR 9001 (HY000): PD server timeout)",
    "tikv": "every statement fails (ERROR 9005 (HY000): Region is unavailable)",
    "tidb": "clients cannot connect to the SQL endpoint basic-tidb:4000 at all",
}


def _pods_ready(backend: "Backend", component: str) -> Check:
    pods = [p for p in backend.api.list("Pod", NAMESPACE, f"{_LABEL}={component}") if not p["metadata"].get("deletionTimestamp")]
    bad = []
    for p in pods:
        conds = {c["type"]: c.get("status") for c in p.get("status", {}).get("conditions") or ()}
        if conds.get("Ready") != "True":
            bad.append(p["metadata"]["name"])
    ok = bool(pods) and not bad
    return Check(f"{component}_ready", ok, f"every {component} pod is ready" if ok else f"not ready: {', '.join(bad) or 'no ' + component + ' pod'}")


def _cr_patch_cmd(ops: list[dict[str, Any]]) -> str:
    return f"kubectl patch tidbcluster {CLUSTER} -n {NAMESPACE} --type=json -p '{json.dumps(ops, separators=(',', ':'))}'"


_CR = r"(?:custom resource|tidb ?cluster(?: cr| object| resource)?|\btc\b|\bcr\b)"
_BAD = r"(?:misconfigur\w*|wrong|bad|invalid|incorrect|non-?existent|typo\w*|does not exist|doesn't exist|no node|unsatisfiable|mistak\w*)"

#: one vocabulary for the family: a custom resource asks its operator for something that cannot run
MECHANISM = Mechanism(
    "operator_cr_misconfig",
    "operator",
    "a misconfigured custom resource that its operator applies to the workloads",
    (
        rf"\b{_CR}[^.;\n]{{0,140}}\b{_BAD}",
        rf"\b{_BAD}[^.;\n]{{0,60}}\b{_CR}",
        r"\bspec\.(?:version|(?:pd|tikv|tidb)\.(?:affinity|podsecuritycontext|tolerations?))\b",
        r"\brunasnonroot\b",
        r"\boperator\b[^.;\n]{0,60}\b(?:rendered|applied|propagated|reconciled|renders|applies)\b",
    ),
    detail_keys=("value", "label"),
    compatible=("node_selector_no_match", "untolerated_taint", "image_error", "incorrect_image"),
)


class _TidbCrScenario(Scenario):
    """Shared shape: one bad field in the TidbCluster, one component taken down by it."""

    family = "OperatorMisoperation"
    app = TIDB
    layer = "operator"
    mechanism = MECHANISM
    develop_s: ClassVar[float] = 180.0

    def extra_components(self) -> tuple[str, ...]:
        """The custom resource and the operator are named in diagnoses beside the app's components."""
        return (CLUSTER, OPERATOR_NAME, *(f"{CLUSTER}-{c}" for c in ("pd", "tikv", "tidb")))

    def brief(self) -> str:
        comp = self.variant["component"]
        return (
            f"PAGE: the services that use the TiDB cluster in namespace {NAMESPACE} report that {_SYMPTOM[comp]}. "
            "It started a few minutes ago, shortly after a change to the cluster's configuration was rolled out. "
            "Find the root cause, repair it durably, and submit your diagnosis."
        )

    def _bad_sts_ops(self) -> list[dict[str, Any]]:
        """A direct StatefulSet edit that would undo the bad setting (the operator reverts it)."""
        raise NotImplementedError

    def wrong_fixes(self) -> dict[str, list[str]]:
        comp = self.variant["component"]
        sts = f"{CLUSTER}-{comp}"
        ops = json.dumps(self._bad_sts_ops(), separators=(",", ":"))
        return {
            "edit_statefulset": [f"kubectl patch statefulset {sts} -n {NAMESPACE} --type=json -p '{ops}'", f"kubectl delete pod {sts}-0 -n {NAMESPACE}"],
            "delete_pods": [f"kubectl delete pod -n {NAMESPACE} -l {_LABEL}={comp}"],
            "scale_to_zero": [f"kubectl scale statefulset {sts} -n {NAMESPACE} --replicas=0"],
            "restart_operator": [f"kubectl rollout restart deployment/{OPERATOR_NAME} -n {OPERATOR_NAMESPACE}"],
        }

    def cr_cause(self, mechanism: str, summary: str, details: dict[str, Any], affected: tuple[str, ...]) -> RootCause:
        """The ground truth: the TidbCluster carries the cause, ``summary`` says how, then what users lose."""
        return RootCause(
            component=f"tidbcluster/{CLUSTER}",
            namespace=NAMESPACE,
            layer="operator",
            mechanism=mechanism,
            summary=summary + f"Impact: reads and writes fail for users of {self.app.name}.",
            details=details,
            affected=affected,
        )

    def cr_checks(self, backend: "Backend", judge: Callable[[dict[str, Any]], tuple[bool, str]], components: tuple[str, ...]) -> list[Check]:
        """``cr_corrected`` as ``judge`` finds the TidbCluster's spec, then each component's pods Ready."""
        tc = find(backend, "TidbCluster", CLUSTER, NAMESPACE)
        if tc is None:
            return [Check("tidbcluster_exists", False, f"tidbcluster/{CLUSTER} was deleted")]
        ok, detail = judge(tc.get("spec") or {})
        return [Check("cr_corrected", ok, detail), *(_pods_ready(backend, c) for c in components)]

    def component_repair(self, field: str) -> list[str]:
        """Look, remove ``spec.<component>.<field>`` from the TidbCluster, and replace the stuck pod."""
        comp = self.variant["component"]
        return [
            f"kubectl get pods -n {NAMESPACE}",
            f"kubectl describe pod {CLUSTER}-{comp}-0 -n {NAMESPACE}",
            f"kubectl get tidbcluster {CLUSTER} -n {NAMESPACE} -o yaml",
            _cr_patch_cmd([{"op": "remove", "path": f"/spec/{comp}/{field}"}]),
            f"kubectl get statefulset {CLUSTER}-{comp} -n {NAMESPACE} -o yaml",
            # a rollout never replaces a pod that did not become ready (the StatefulSet "forced rollback")
            f"kubectl delete pod {CLUSTER}-{comp}-0 -n {NAMESPACE}",
        ]

    def allowed_changes(self) -> list[AllowedChange]:
        # the rolling update replaced the component's pod (twice: onto the bad template and back)
        # the repair restores the custom resource (and so the StatefulSet the operator renders) exactly;
        # only the component's pod is new
        return [AllowedChange("Pod", NAMESPACE, f"{CLUSTER}-{self.variant['component']}-*", "*")]


class TidbInvalidAffinity(_TidbCrScenario):
    """``spec.<component>.affinity`` requires a node label no node carries."""

    difficulty = "medium"
    summary = "The TiDB cluster stopped serving SQL after a configuration change."
    description = (
        "The database team rolled out a change to the TiDB cluster's configuration to move one of its "
        "components onto dedicated machines. Minutes later every application using the database reports "
        "failing queries; one database pod never came back, and restarting things has not helped."
    )
    _LABELS: ClassVar[tuple[tuple[str, str], ...]] = (
        ("node-role.kubernetes.io/tidb", "true"),
        ("topology.kubernetes.io/zone", "us-west-2a"),
        ("dedicated", "tikv"),
        ("node.kubernetes.io/instance-type", "i3.2xlarge"),
    )

    def draw_variant(self, backend: "Backend", rng: np.random.Generator) -> dict[str, Any]:
        comp = str(rng.choice(("pd", "tikv", "tidb")))
        label, value = self._LABELS[int(rng.integers(0, len(self._LABELS)))]
        return {"component": comp, "label": label, "value": value}

    def split_key(self, variant: Any) -> str:
        return f"{variant['component']}/{variant['label']}"

    def _affinity(self) -> dict[str, Any]:
        v = self.variant
        return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [{"key": v["label"], "operator": "In", "values": [v["value"]]}]}]}}}

    def inject(self, backend: "Backend") -> None:
        PatchCustomResource("TidbCluster", CLUSTER, NAMESPACE, {"spec": {self.variant["component"]: {"affinity": self._affinity()}}}).inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        comp = v["component"]
        return self.cr_cause(
            "custom resource sets a required node affinity that no node satisfies",
            f"TidbCluster {CLUSTER} was changed to give {comp} a required node affinity on {v['label']}={v['value']}, a label no node carries. "
            f"The operator (tidb-controller-manager) rendered it into statefulset/{CLUSTER}-{comp}; the rolling update replaced {CLUSTER}-{comp}-0 with a pod the scheduler "
            f"cannot place (FailedScheduling: didn't match Pod's node affinity/selector), so it stays Pending and {_SYMPTOM[comp]}. "
            "The fix is to remove the affinity from the TidbCluster (then delete the stuck pod, as a StatefulSet rollout does not replace a pod that never became ready); "
            "edits to the StatefulSet are reverted by the operator. ",
            {"label": v["label"], "value": v["value"], "field": f"spec.{comp}.affinity"},
            (f"statefulset/{CLUSTER}-{comp}",),
        )

    def reference_solution(self) -> list[str]:
        return self.component_repair("affinity")

    def _bad_sts_ops(self) -> list[dict[str, Any]]:
        return [{"op": "remove", "path": "/spec/template/spec/affinity"}]

    def cause_checks(self, backend: "Backend") -> list[Check]:
        comp, label = self.variant["component"], self.variant["label"]

        def judge(spec: dict[str, Any]) -> tuple[bool, str]:
            terms = (((spec.get(comp) or {}).get("affinity") or {}).get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution")
            still = label in json.dumps(terms or {})
            return not still, f"spec.{comp}.affinity still requires {label}" if still else f"spec.{comp}.affinity no longer requires a missing label"

        return self.cr_checks(backend, judge, (comp,))


class TidbWrongVersion(_TidbCrScenario):
    """``spec.version`` names a release tag that does not exist, so every component's image cannot be pulled."""

    difficulty = "easy"
    summary = "The TiDB cluster went down during a routine version change."
    description = (
        "A routine change to the TiDB cluster's version was applied this morning. Since then the database "
        "answers no queries; its pods were replaced and the new ones never started."
    )
    _VALUES: ClassVar[tuple[str, ...]] = ("8.5.2", "v8.5.20", "v8.52", "v8.5.2-lts")

    def draw_variant(self, backend: "Backend", rng: np.random.Generator) -> dict[str, Any]:
        return {"component": "tidb", "value": str(self._VALUES[int(rng.integers(0, len(self._VALUES)))])}

    def split_key(self, variant: Any) -> str:
        return str(variant["value"])

    def inject(self, backend: "Backend") -> None:
        PatchCustomResource("TidbCluster", CLUSTER, NAMESPACE, {"spec": {"version": self.variant["value"]}}).inject(backend)

    def brief(self) -> str:
        return (
            f"PAGE: the services that use the TiDB cluster in namespace {NAMESPACE} report that every query fails and "
            f"clients cannot connect to basic-tidb:4000. It started a few minutes ago. "
            "Find the root cause, repair it durably, and submit your diagnosis."
        )

    def root_cause(self) -> RootCause:
        v = self.variant["value"]
        return self.cr_cause(
            "custom resource spec.version names an image tag that does not exist",
            f"TidbCluster {CLUSTER} has spec.version {v}, a tag that does not exist (the release is {VERSION}). The operator (tidb-controller-manager) rendered it into the "
            f"images of statefulset/{CLUSTER}-pd, {CLUSTER}-tikv and {CLUSTER}-tidb (pingcap/pd:{v} ...); the rolling update replaced their pods "
            "with ones stuck in ErrImagePull/ImagePullBackOff (manifest not found), so the database serves nothing. "
            f"The fix is to set spec.version back to {VERSION} in the TidbCluster and delete the stuck pods; image edits on the StatefulSets are reverted by the operator. ",
            {"value": v, "field": "spec.version", "good": VERSION},
            (f"statefulset/{CLUSTER}-pd", f"statefulset/{CLUSTER}-tikv", f"statefulset/{CLUSTER}-tidb"),
        )

    def reference_solution(self) -> list[str]:
        return [
            f"kubectl get pods -n {NAMESPACE}",
            f"kubectl describe pod {CLUSTER}-tidb-0 -n {NAMESPACE}",
            f"kubectl get tc {CLUSTER} -n {NAMESPACE} -o yaml",
            f"kubectl patch tc {CLUSTER} -n {NAMESPACE} --type=merge -p '{{\"spec\":{{\"version\":\"{VERSION}\"}}}}'",
            f"kubectl get statefulsets -n {NAMESPACE} -o wide",
            f"kubectl delete pod {CLUSTER}-pd-0 {CLUSTER}-tikv-0 {CLUSTER}-tidb-0 -n {NAMESPACE}",
        ]

    def _bad_sts_ops(self) -> list[dict[str, Any]]:
        return [{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": f"pingcap/tidb:{VERSION}"}]

    def wrong_fixes(self) -> dict[str, list[str]]:
        fixes = super().wrong_fixes()
        fixes["set_image_on_statefulsets"] = [
            f"kubectl set image statefulset/{CLUSTER}-{c} {c}=pingcap/{c}:{VERSION} -n {NAMESPACE}" for c in ("pd", "tikv", "tidb")
        ]
        return fixes

    def cause_checks(self, backend: "Backend") -> list[Check]:
        value = self.variant["value"]

        def judge(spec: dict[str, Any]) -> tuple[bool, str]:
            bad = spec.get("version") == value
            return not bad, f"spec.version is still {value}" if bad else "spec.version names a released tag"

        return self.cr_checks(backend, judge, ("pd", "tikv", "tidb"))

    def allowed_changes(self) -> list[AllowedChange]:
        return [AllowedChange("Pod", NAMESPACE, f"{CLUSTER}-*", "*")]


class TidbBadSecurityContext(_TidbCrScenario):
    """``spec.<component>.podSecurityContext`` demands a non-root user from an image that runs as root."""

    difficulty = "medium"
    summary = "The TiDB cluster stopped serving SQL after a hardening change."
    description = (
        "A security review asked the database team to tighten the TiDB cluster's configuration, and the change "
        "was rolled out this morning. Since then every application using the database reports failing queries; "
        "one database pod was replaced and its container never started."
    )
    _CONTEXTS: ClassVar[tuple[tuple[str, str], ...]] = (
        ("runAsNonRoot", '{"runAsNonRoot": true}'),
        ("runAsNonRoot+fsGroup", '{"runAsNonRoot": true, "fsGroup": 1000}'),
        ("runAsUser0", '{"runAsNonRoot": true, "runAsUser": 0}'),
    )

    def draw_variant(self, backend: "Backend", rng: np.random.Generator) -> dict[str, Any]:
        comp = str(rng.choice(("pd", "tikv", "tidb")))
        name, ctx = self._CONTEXTS[int(rng.integers(0, len(self._CONTEXTS)))]
        return {"component": comp, "context": ctx, "value": name}

    def split_key(self, variant: Any) -> str:
        return f"{variant['component']}/{variant['value']}"

    def inject(self, backend: "Backend") -> None:
        v = self.variant
        PatchCustomResource("TidbCluster", CLUSTER, NAMESPACE, {"spec": {v["component"]: {"podSecurityContext": json.loads(v["context"])}}}).inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        comp = v["component"]
        ctx = json.loads(v["context"])
        why = "runAsUser 0 breaks the non-root policy" if ctx.get("runAsUser") == 0 else f"the pingcap/{comp} image runs as root"
        kubelet_msg = "container's runAsUser breaks non-root policy" if ctx.get("runAsUser") == 0 else "container has runAsNonRoot and image will run as root"
        return self.cr_cause(
            "custom resource sets a pod security context (runAsNonRoot) the image does not satisfy",
            f"TidbCluster {CLUSTER} was changed to set spec.{comp}.podSecurityContext {v['context']}: runAsNonRoot is true but {why}. "
            f"The operator (tidb-controller-manager) rendered it into statefulset/{CLUSTER}-{comp}; the rolling update replaced {CLUSTER}-{comp}-0 with a pod whose container "
            f"the kubelet refuses to create ({kubelet_msg}), so the component is down. "
            "The fix is to remove the bad podSecurityContext from the TidbCluster and delete the stuck pod; edits to the StatefulSet are reverted by the operator. ",
            {"value": "runAsNonRoot", "field": f"spec.{comp}.podSecurityContext", "context": v["context"]},
            (f"statefulset/{CLUSTER}-{comp}",),
        )

    def reference_solution(self) -> list[str]:
        return self.component_repair("podSecurityContext")

    def _bad_sts_ops(self) -> list[dict[str, Any]]:
        return [{"op": "remove", "path": "/spec/template/spec/securityContext"}]

    def cause_checks(self, backend: "Backend") -> list[Check]:
        comp = self.variant["component"]

        def judge(spec: dict[str, Any]) -> tuple[bool, str]:
            ctx = (spec.get(comp) or {}).get("podSecurityContext") or {}
            still = ctx.get("runAsNonRoot") is True and not ctx.get("runAsUser")
            return not still, (f"spec.{comp}.podSecurityContext still demands a non-root user the image does not have" if still else f"spec.{comp}.podSecurityContext no longer blocks the container")

        return self.cr_checks(backend, judge, (comp,))


#: the dedicated-node taint of the TiKV node (sre_env.apps.tidb) and the toleration the CR carries for it
_TAINT = {"key": "dedicated", "value": "tikv", "effect": "NoSchedule"}
_GOOD_TOLERATION = {"key": "dedicated", "operator": "Equal", "value": "tikv", "effect": "NoSchedule"}


class TidbInvalidToleration(_TidbCrScenario):
    """``spec.tikv.tolerations`` no longer tolerates the taint of TiKV's dedicated node."""

    difficulty = "hard"
    summary = "The TiDB cluster stopped serving SQL after a configuration change."
    description = (
        "The database team tidied up the TiDB cluster's scheduling settings this morning. Minutes later "
        "every application using the database reports failing queries; one database pod was replaced "
        "and has not started since, and no node looks unhealthy."
    )
    _BAD: ClassVar[tuple[tuple[str, str], ...]] = (
        ("value", '{"key": "dedicated", "operator": "Equal", "value": "TiKV", "effect": "NoSchedule"}'),
        ("key", '{"key": "dedicate", "operator": "Equal", "value": "tikv", "effect": "NoSchedule"}'),
        ("effect", '{"key": "dedicated", "operator": "Equal", "value": "tikv", "effect": "NoExecute"}'),
        ("value", '{"key": "dedicated", "operator": "Equal", "value": "tikv-node", "effect": "NoSchedule"}'),
    )

    def draw_variant(self, backend: "Backend", rng: np.random.Generator) -> dict[str, Any]:
        which, tol = self._BAD[int(rng.integers(0, len(self._BAD)))]
        node = next(n["metadata"]["name"] for n in backend.api.list("Node") if (n["metadata"].get("labels") or {}).get("dedicated") == "tikv")
        return {"component": "tikv", "toleration": tol, "value": which, "dedicated_node": node}

    def split_key(self, variant: Any) -> str:
        return str(variant["toleration"])

    def inject(self, backend: "Backend") -> None:
        PatchCustomResource("TidbCluster", CLUSTER, NAMESPACE, {"spec": {"tikv": {"tolerations": [json.loads(self.variant["toleration"])]}}}).inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        tol = json.loads(v["toleration"])
        return self.cr_cause(
            "custom resource tolerations no longer match the dedicated node's taint",
            f"TidbCluster {CLUSTER} was changed to give the tikv component the toleration {tol['key']}={tol['value']}:{tol['effect']} (wrong {v['value']}) in spec.tikv.tolerations. "
            f"It does not match the taint dedicated=tikv:NoSchedule on {v['dedicated_node']}, the dedicated node its nodeSelector dedicated=tikv pins the pods to. The operator rendered it into "
            f"statefulset/{CLUSTER}-tikv; the rolling update replaced {CLUSTER}-tikv-0 with a pod the scheduler cannot place (untolerated taint {{dedicated: tikv}}), "
            "so it stays Pending and every statement fails. The fix is to restore the toleration dedicated=tikv:NoSchedule in the TidbCluster and delete the stuck pod; "
            "edits to the StatefulSet are reverted by the operator. ",
            {"value": f"{tol['key']}={tol['value']}:{tol['effect']}", "taint": "dedicated=tikv:NoSchedule", "field": "spec.tikv.tolerations", "dedicated_node": v["dedicated_node"]},
            (f"statefulset/{CLUSTER}-tikv",),
        )

    def reference_solution(self) -> list[str]:
        v = self.variant
        return [
            f"kubectl get pods -n {NAMESPACE} -o wide",
            f"kubectl describe pod {CLUSTER}-tikv-0 -n {NAMESPACE}",
            f"kubectl describe node {v['dedicated_node']}",
            f"kubectl get tc {CLUSTER} -n {NAMESPACE} -o yaml",
            _cr_patch_cmd([{"op": "replace", "path": "/spec/tikv/tolerations", "value": [_GOOD_TOLERATION]}]),
            f"kubectl get statefulset {CLUSTER}-tikv -n {NAMESPACE} -o yaml",
            f"kubectl delete pod {CLUSTER}-tikv-0 -n {NAMESPACE}",
        ]

    def _bad_sts_ops(self) -> list[dict[str, Any]]:
        return [{"op": "replace", "path": "/spec/template/spec/tolerations", "value": [_GOOD_TOLERATION]}]

    def wrong_fixes(self) -> dict[str, list[str]]:
        fixes = super().wrong_fixes()
        # lets the pod schedule, but the custom resource stays wrong and the dedicated node is open to everything
        fixes["untaint_node"] = [f"kubectl taint node {self.variant['dedicated_node']} dedicated=tikv:NoSchedule-", f"kubectl delete pod {CLUSTER}-tikv-0 -n {NAMESPACE}"]
        return fixes

    def cause_checks(self, backend: "Backend") -> list[Check]:
        tc = find(backend, "TidbCluster", CLUSTER, NAMESPACE)
        if tc is None:
            return [Check("tidbcluster_exists", False, f"tidbcluster/{CLUSTER} was deleted")]
        ok = tolerates((tc["spec"].get("tikv") or {}).get("tolerations") or [], _TAINT)
        node = find(backend, "Node", self.variant["dedicated_node"], None) or {}
        tainted = any(t.get("key") == "dedicated" and t.get("effect") == "NoSchedule" for t in (node.get("spec") or {}).get("taints") or ())
        return [
            Check("cr_corrected", ok, "spec.tikv.tolerations tolerates dedicated=tikv:NoSchedule" if ok else "spec.tikv.tolerations still does not tolerate dedicated=tikv:NoSchedule"),
            Check("dedicated_node_kept", tainted, f"{self.variant['dedicated_node']} keeps its dedicated=tikv taint" if tainted else f"the dedicated=tikv taint was removed from {self.variant['dedicated_node']}"),
            _pods_ready(backend, "tikv"),
        ]

    def allowed_changes(self) -> list[AllowedChange]:
        return [AllowedChange("Pod", NAMESPACE, f"{CLUSTER}-tikv-*", "*")]
