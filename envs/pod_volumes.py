"""Volume wiring incidents on hotel-reservation's MongoDB deployments.

The databases keep their data on local-path volumes, each pinned to the node
its directory lives on. A Deployment that names a claim that does not exist
stays Pending; one that names another database's claim lands on that node and
its mongod cannot lock a data directory another mongod already holds
(``DBPathInUse``); one pinned to a node its volume is not on cannot be
scheduled anywhere ("volume node affinity conflict"). All three use the
Recreate strategy, so the old pod is gone before the new one fails. The repair
is the wiring: recreating the claim or the volume would start the database
empty (its data stays on the old volume), which the checks catch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from sre_env.apps.hotel_reservation import HOTEL_RESERVATION
from sre_env.faults.pods import PatchWorkload
from sre_env.rewards.base import Check, Mechanism

from .app_common import callers_fail, callers_of, find
from .base import RootCause, SimScenario
from .blind import rollback_repairs
from .pods_common import (
    REQUEST_DBS,
    json_patch,
    live_pods,
    pods_ready_check,
    replicaset_after,
    replicaset_only_fix,
)
from .service_fault import ServiceFault

if TYPE_CHECKING:
    from sre_env.backend import Backend
    from sre_env.sim.model import ModelBackend

__all__ = ["PVCMismatch", "DuplicatePVCMounts", "PVAffinityViolation"]

_ALL_DBS = ("mongodb-geo", "mongodb-rate", "mongodb-profile", "mongodb-recommendation", "mongodb-reservation", "mongodb-user")
_CLAIM_PATH = "/spec/template/spec/volumes/0/persistentVolumeClaim/claimName"


def _volume_facts(backend: "Backend", namespace: str, db: str) -> dict[str, Any]:
    comp = HOTEL_RESERVATION.component(db)
    pvc = backend.api.get("PersistentVolumeClaim", comp.volume_claim, namespace)
    pv = backend.api.get("PersistentVolume", pvc["spec"]["volumeName"])
    node = pv["metadata"]["annotations"]["local.path.provisioner/selected-node"]
    callers = tuple(callers_of(HOTEL_RESERVATION, db))
    return {"service": db, "container": comp.container, "claim": comp.volume_claim, "pv": pv["metadata"]["name"], "pv_node": node, "callers": callers}


def _data_check(backend: "Backend", namespace: str, db: str, claim: str, pv: str) -> Check:
    """The database's pods mount its own claim, still bound to the volume that holds its data."""
    bad = []
    pods = live_pods(backend, namespace, db)
    for pod in pods:
        claims = [(v.get("persistentVolumeClaim") or {}).get("claimName") for v in pod["spec"].get("volumes") or () if v.get("persistentVolumeClaim")]
        if claims != [claim]:
            bad.append(f"{pod['metadata']['name']} mounts {', '.join(c or '?' for c in claims) or 'no claim'} instead of {claim}")
    pvc = find(backend, "PersistentVolumeClaim", claim, namespace)
    if pvc is None:
        bad.append(f"claim {claim} is gone")
    elif pvc["spec"].get("volumeName") != pv:
        bad.append(f"claim {claim} is bound to {pvc['spec'].get('volumeName') or 'nothing'}, not to {pv} where the data is")
    if not pods:
        bad.append(f"no pod of {db} exists")
    return Check("data_volume_mounted", not bad, "; ".join(bad) if bad else f"{db} runs on {claim} ({pv}), its own data")


class _DataVolumeFault(ServiceFault, SimScenario):
    """A database Deployment wired to the wrong volume: its callers fail while it is down."""

    app = HOTEL_RESERVATION
    layer = "kubernetes"
    intermittent = True

    def volume_cause(self, mechanism: str, summary: str, details: dict[str, Any], epilogue: str = "") -> RootCause:
        """The ground truth: ``summary``, then that the database's callers fail on it and what users lose."""
        callers = self.variant["callers"]
        return self.service_cause(mechanism, summary + callers_fail(callers) + " ", details, affected=self.with_callers(callers), epilogue=epilogue)

    #: the repair restores the database's own claim: its template is as it was
    repaired_kind = None

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        v = self.variant
        return [_data_check(backend, self.namespace, v["service"], v["claim"], v["pv"]), pods_ready_check(backend, self.namespace, v["service"])]


# --------------------------------------------------------------------------- wrong claim
class PVCMismatch(_DataVolumeFault):
    family = "PVCMismatch"
    difficulty = "easy"
    summary = "A hotel-reservation database did not come back after a configuration change."
    description = (
        "After a change to one of hotel-reservation's database deployments, some pages fail intermittently. The database's "
        "new pod has been Pending for minutes and the old one is gone."
    )
    accepted_blind = rollback_repairs("the change of the database's claim name")
    mechanism = Mechanism(
        "pvc_mismatch",
        "kubernetes",
        "a workload references a PersistentVolumeClaim that does not exist (wrong claim name)",
        (
            r"\b(?:wrong|incorrect|misspelled|mistyped|bad|non-?existent|missing|unknown) (?:persistent ?volume ?claim|pvc|claim|claimname|claim name|volume claim)\b",
            r"\b(?:persistent ?volume ?claim|pvc|claim)s? \"?{bad_claim}\"?\b[^.;\n]{0,40}?\b(?:not found|does ?n[o']t exist|missing)\b",
            r"\bclaim ?name\b[^.;\n]{0,60}?\b(?:wrong|typo|incorrect|mismatch\w*|points?|changed|refers?)\b",
            r"\b{bad_claim}\b",
        ),
        detail_keys=("bad_claim", "claim"),
    )

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        db = str(rng.choice(REQUEST_DBS))
        facts = _volume_facts(backend, self.namespace, db)
        short = db.removeprefix("mongodb-")
        bad = str(rng.choice((f"{short}-data", f"{short}-pvc-0", f"{db}-pvc", f"{short}-volume")))
        rs = replicaset_after(backend, self.namespace, db, [{"op": "replace", "path": _CLAIM_PATH, "value": bad}], "json")
        return {**facts, "bad_claim": bad, "rs": rs}

    def inject(self, backend: "ModelBackend") -> None:
        v = self.variant
        PatchWorkload(self.namespace, v["service"], [{"op": "replace", "path": _CLAIM_PATH, "value": v["bad_claim"]}], "json").inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        return self.volume_cause(
            "wrong PersistentVolumeClaim name in the pod template",
            f"deployment/{v['service']} mounts claim {v['bad_claim']}, which does not exist (its data is on claim {v['claim']}). The scheduler reports "
            f'persistentvolumeclaim "{v["bad_claim"]}" not found, so the new pod stays Pending and the Recreate rollout already removed the old one; ',
            {"mechanism_id": "pvc_mismatch", "bad_claim": v["bad_claim"], "claim": v["claim"], "container": v["container"]},
        )

    def reference_solution(self) -> list[str]:
        v = self.variant
        ns = self.namespace
        return [
            f"kubectl get pods -n {ns}",
            f"kubectl describe pod -n {ns} -l io.kompose.service={v['service']}",
            f"kubectl get pvc -n {ns}",
            json_patch("deployment", v["service"], ns, [{"op": "replace", "path": _CLAIM_PATH, "value": v["claim"]}]),
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        ns = self.namespace
        manifest = (
            "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n"
            f"  name: {v['bad_claim']}\n  namespace: {ns}\nspec:\n  accessModes: [ReadWriteOnce]\n  storageClassName: local-path\n"
            "  resources:\n    requests:\n      storage: 1Gi\n"
        )
        # an empty new volume: the database starts without its data
        return {"create_missing_claim": [f"kubectl apply -f - <<'EOF'\n{manifest}EOF", "sleep 30"], **self.blind_fixes(v["service"])}

    def non_durable_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        # the claim fixed in the ReplicaSet only: the next rollout brings the wrong one back
        return {"replicaset_only": replicaset_only_fix(self.namespace, v["rs"], v["service"], [{"op": "replace", "path": _CLAIM_PATH, "value": v["claim"]}])}


# --------------------------------------------------------------------------- a claim shared by two databases
class DuplicatePVCMounts(_DataVolumeFault):
    family = "DuplicatePVCMounts"
    difficulty = "hard"
    summary = "A hotel-reservation database crash-loops right after a deployment change."
    description = (
        "Since a change to one of hotel-reservation's database deployments, that database restarts in a loop and some "
        "pages fail. The other databases look healthy and the node it runs on has plenty of resources."
    )
    accepted_blind = rollback_repairs("the change that mounts another database's claim")
    mechanism = Mechanism(
        "shared_rwo_claim",
        "kubernetes",
        "one ReadWriteOnce claim mounted by two workloads (Multi-Attach, or a data directory two processes lock)",
        (
            r"\bmulti-?attach\b",
            r"\bdbpathinuse\b",
            r"\bmongod\.lock\b",
            r"\b(?:same|shared?|one|another (?:database|db|deployment)'s|the other (?:database|db)'s) (?:persistent ?volume ?claim|pvc|claim|volume|data directory|dbpath)\b",
            r"\b(?:persistent ?volume ?claim|pvc|claim|volume)\b[^.;\n]{0,60}?\b(?:shared|mounted|used) by (?:both|two|another|two different)\b",
            r"\b{other_claim}\b[^.;\n]{0,80}?\b(?:also|both|shared|already|another|instead)\b",
            r"\b(?:also|both|shared|already|instead of its own)\b[^.;\n]{0,80}?\b{other_claim}\b",
        ),
        detail_keys=("other_claim", "claim", "other"),
    )

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        db = str(rng.choice(REQUEST_DBS))
        other = str(rng.choice(sorted(set(_ALL_DBS) - {db})))
        facts = _volume_facts(backend, self.namespace, db)
        ofacts = _volume_facts(backend, self.namespace, other)
        return {**facts, "other": other, "other_claim": ofacts["claim"], "other_node": ofacts["pv_node"]}

    def inject(self, backend: "ModelBackend") -> None:
        v = self.variant
        PatchWorkload(self.namespace, v["service"], [{"op": "replace", "path": _CLAIM_PATH, "value": v["other_claim"]}], "json").inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        return self.volume_cause(
            "a ReadWriteOnce claim shared by two database deployments",
            f"deployment/{v['service']} mounts claim {v['other_claim']}, the ReadWriteOnce volume of {v['other']}, instead of its own claim {v['claim']}. "
            f"Its pod lands on {v['other_node']} beside {v['other']}, whose mongod already holds the data directory, so the new mongod exits with "
            f"DBPathInUse (cannot lock mongod.lock) and crash-loops; ",
            {"mechanism_id": "shared_rwo_claim", "other_claim": v["other_claim"], "claim": v["claim"], "other": v["other"], "container": v["container"]},
        )

    def reference_solution(self) -> list[str]:
        v = self.variant
        ns = self.namespace
        return [
            f"kubectl get pods -n {ns} -o wide",
            f"kubectl logs -n {ns} deployment/{v['service']} --previous --tail=5",
            json_patch("deployment", v["service"], ns, [{"op": "replace", "path": _CLAIM_PATH, "value": v["claim"]}]),
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        # frees the lock for the wrong database: it now serves the other one's data
        return self.service_wrong_fixes(scale_db_to_zero=[f"kubectl scale deployment/{self.variant['other']} -n {self.namespace} --replicas=0", "sleep 30"])


# --------------------------------------------------------------------------- node pin vs. volume node affinity
class PVAffinityViolation(_DataVolumeFault):
    family = "PVAffinityViolation"
    #: pinning the database to the node its volume is on is a legitimate repair too
    repaired_kind = "Deployment"
    difficulty = "medium"
    summary = "A hotel-reservation database cannot be scheduled after it was moved to another node."
    description = (
        "To spread load, someone pinned one of hotel-reservation's databases to a different worker node. Its pod has been "
        "Pending since and some pages fail; every node is Ready and has room."
    )
    accepted_blind = rollback_repairs("the node pin that conflicts with the volume's node affinity")
    mechanism = Mechanism(
        "pv_node_affinity_conflict",
        "kubernetes",
        "the pod is pinned to a node its local PersistentVolume's node affinity excludes",
        (
            r"\bvolume node affinity conflict\b",
            r"\b(?:pv|persistent ?volume|local volume|volume)\b[^.;\n]{0,60}?\bnode ?affinity\b",
            r"\bnode ?affinity\b[^.;\n]{0,60}?\b(?:pv|persistent ?volume|local volume|volume)\b",
            r"\b(?:node ?selector|pinned|pins?)\b[^.;\n]{0,80}?\b{pinned_node}\b",
            r"\b{pinned_node}\b[^.;\n]{0,80}?\b(?:node ?selector|pinned)\b",
        ),
        detail_keys=("pinned_node", "pv_node"),
        # the pin is a node selector: naming it is part of this story, not a rival one
        compatible=("node_selector_no_match",),
    )

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        db = str(rng.choice(REQUEST_DBS))
        facts = _volume_facts(backend, self.namespace, db)
        workers = sorted(n["metadata"]["name"] for n in backend.api.list("Node") if "node-role.kubernetes.io/control-plane" not in (n["metadata"].get("labels") or {}))
        pinned = str(rng.choice([w for w in workers if w != facts["pv_node"]]))
        rs = replicaset_after(backend, self.namespace, db, {"spec": {"template": {"spec": {"nodeSelector": {"kubernetes.io/hostname": pinned}}}}})
        return {**facts, "pinned_node": pinned, "rs": rs}

    def inject(self, backend: "ModelBackend") -> None:
        v = self.variant
        PatchWorkload(self.namespace, v["service"], {"spec": {"template": {"spec": {"nodeSelector": {"kubernetes.io/hostname": v["pinned_node"]}}}}}).inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        return self.volume_cause(
            "node selector conflicts with the local PersistentVolume's node affinity",
            f"deployment/{v['service']} was pinned with nodeSelector kubernetes.io/hostname={v['pinned_node']}, but its data is on a local "
            f"PersistentVolume ({v['pv']}) whose node affinity requires {v['pv_node']}. No node satisfies both: the scheduler reports a volume node "
            f"affinity conflict, the pod stays Pending and the old one is gone; ",
            {"mechanism_id": "pv_node_affinity_conflict", "pinned_node": v["pinned_node"], "pv_node": v["pv_node"], "pv": v["pv"], "container": v["container"]},
            epilogue=f" The nodes themselves are healthy: {v['pv_node']} is fine and {v['pinned_node']} is fine.",
        )

    def reference_solution(self) -> list[str]:
        v = self.variant
        ns = self.namespace
        return [
            f"kubectl describe pod -n {ns} -l io.kompose.service={v['service']}",
            f"kubectl get pv {v['pv']} -o yaml",
            json_patch("deployment", v["service"], ns, [{"op": "remove", "path": "/spec/template/spec/nodeSelector"}]),
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        ns = self.namespace
        third = next(w for w in ("worker-1", "worker-2", "worker-3") if w not in (v["pv_node"], v["pinned_node"]))
        return {
            # any node but the volume's conflicts with its node affinity
            "pin_elsewhere": [json_patch("deployment", v["service"], ns, [{"op": "replace", "path": "/spec/template/spec/nodeSelector", "value": {"kubernetes.io/hostname": third}}])],
            **self.blind_fixes(v["service"]),
        }

    def non_durable_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        return {"replicaset_only": replicaset_only_fix(self.namespace, v["rs"], v["service"], [{"op": "remove", "path": "/spec/template/spec/nodeSelector"}])}
