"""DiskSector: latent sector errors on the disk under one MongoDB's volume.

The variant picks a MongoDB that sits on a request path; the bad disk is the
data disk of the node its local volume lives on. Reads of a few sectors fail
with EIO; WiredTiger panics and mongod aborts, so the database crash-loops and
its callers fail. Restarting or deleting the pod brings it back on the same
node (the local PV pins it there), so only moving the data off the disk helps.
"""

from __future__ import annotations

import zlib
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from sre_env.apps.hotel_reservation import HOTEL_RESERVATION
from sre_env.faults.disk import LatentSectorErrors
from sre_env.rewards.base import AllowedChange, Check, Mechanism

from .app_common import callers_fail, callers_of
from .base import RootCause, SimScenario
from .briefs import affected_requests, user_report
from .node_isolation import node_cause

if TYPE_CHECKING:
    from sre_env.sim.model import ModelBackend

__all__ = ["DiskSector"]

#: databases read on a request path (geo/recommendation/user load theirs at start only)
_TARGETS = ("mongodb-profile", "mongodb-rate", "mongodb-reservation")


class DiskSector(SimScenario):
    family = "DiskSector"
    app = HOTEL_RESERVATION
    #: databases with a local volume on a request path; ``for_app(app, targets=...)`` sets another app's
    targets: ClassVar[tuple[str, ...]] = _TARGETS
    layer = "hardware"
    difficulty = "hard"
    summary = "A database of hotel-reservation keeps failing; users see intermittent errors."
    description = (
        "Since a few minutes ago some hotel searches, recommendations and reservations fail with HTTP 500 "
        "or hang, while most requests still work. One database pod has restarted several times and the "
        "on-call dashboard shows error spikes that come and go. Nobody deployed anything today."
    )
    mechanism = Mechanism(
        "latent_sector_errors",
        "hardware",
        "latent sector errors (disk reads fail with EIO)",
        (
            r"\blatent sector errors?\b",
            r"\bsector (?:read )?errors?\b",
            r"\bbad (?:disk )?(?:sectors?|blocks?)\b",
            r"\bunreadable (?:sectors?|blocks?)\b",
            r"\bmedi(?:um|a) errors?\b",
            r"\b(?:disk|drive|block device|device|storage) (?:read |i/?o )?errors?\b",
            r"\bread errors?\b",
            r"\bi/?o errors?\b",
            r"\binput/output errors?\b",
            r"\beio\b",
            r"\b(?:failing|faulty|failed|bad|broken|dying|defective|degraded) (?:data )?(?:disk|drive|hdd|ssd)s?\b",
            r"\b(?:disk|drive)s? (?:is |are )?(?:failing|faulty|dying|defective)\b",
            r"\b(?:disk|drive) failures?\b",
            r"\b(?:uncorrectable|unrecovered|unrecoverable) (?:read )?errors?\b",
            r"\b(?:pending|reallocated|uncorrectable) sectors?\b",
            r"\bsmart (?:errors?|failures?)\b",
        ),
        # which volume sits on the bad disk is part of the fault, as the device is
        detail_keys=("device", "sectors", "database", "pvc"),
    )

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        db = str(rng.choice(self.targets))
        ns = self.namespace
        comp = self.app.component(db)
        pvc = backend.api.get("PersistentVolumeClaim", comp.volume_claim, ns)
        pv = backend.api.get("PersistentVolume", pvc["spec"]["volumeName"])
        node = pv["metadata"]["annotations"]["local.path.provisioner/selected-node"]
        device = backend.nodes.device_for_path(node, pv["spec"]["hostPath"]["path"])
        # a few discrete variants per database keep developed incidents cacheable
        pattern = int(rng.integers(0, 4))
        base = 2048 + (zlib.crc32(f"{node}/{device}/{pattern}".encode()) % 3_000_000_000)
        sectors = tuple(base + k * (7919 + 104_729 * pattern) for k in range(4))
        # every database whose local volume sits on that disk must leave it: the disk is failing
        on_disk = []
        for other in self.app.components:
            if not other.volume_claim:
                continue
            claim = backend.api.get("PersistentVolumeClaim", other.volume_claim, ns)
            other_pv = backend.api.get("PersistentVolume", claim["spec"]["volumeName"])
            if other_pv["metadata"]["annotations"]["local.path.provisioner/selected-node"] == node:
                on_disk.append((other.name, other.volume_claim))
        return {
            "evacuate": tuple(sorted(on_disk)),
            "path": pv["spec"]["hostPath"]["path"],
            "database": db,
            "pvc": comp.volume_claim,
            "node": node,
            "device": device,
            "sectors": sectors,
            "fraction": float(rng.choice((0.02, 0.04, 0.08))),
            "callers": tuple(callers_of(self.app, db)),
        }

    def inject(self, backend: "ModelBackend") -> None:
        v = self.variant
        LatentSectorErrors(v["node"], v["device"], v["sectors"], v["fraction"], (v["path"],)).inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        return node_cause(
            self,
            "latent sector errors: disk reads fail with I/O errors (EIO)",
            f"Latent sector errors on /dev/{v['device']} of {v['node']}: reads of a few sectors fail with EIO. "
            f"{v['database']} keeps its data there (local volume), so WiredTiger hits read errors and mongod aborts "
            f"in a loop; " + callers_fail(v["callers"]),
            {"device": f"/dev/{v['device']}", "sectors": list(v["sectors"]), "database": v["database"], "pvc": v["pvc"]},
            (f"deployment/{v['database']}", *(f"deployment/{c}" for c in v["callers"])),
        )

    def brief(self) -> str:
        return user_report(self.app, self.variant["database"], intermittent=True)

    def reference_solution(self) -> list[str]:
        v = self.variant
        ns = self.namespace
        steps = [
            f"kubectl get pods -n {ns} -o wide",
            f"kubectl debug node/{v['node']} --image=busybox -- dmesg",
            f"kubectl cordon {v['node']}",
        ]
        # move every database off the failing disk: a cordoned node can no longer
        # host pods pinned to it by a local volume
        for db, pvc in v["evacuate"]:
            steps += [f"kubectl delete pvc {pvc} -n {ns} --wait=false", f"kubectl delete pod -n {ns} -l {self.app.label_key}={db}"]
        steps.append("sleep 15")
        manifests = "".join(
            "---\n"
            "apiVersion: v1\n"
            "kind: PersistentVolumeClaim\n"
            "metadata:\n"
            f"  name: {pvc}\n"
            "  labels:\n"
            f"    {self.app.label_key}: {db}\n"
            "spec:\n"
            "  accessModes: [ReadWriteOnce]\n"
            "  storageClassName: local-path\n"
            "  resources:\n"
            "    requests:\n"
            "      storage: 1Gi\n"
            for db, pvc in v["evacuate"]
        )
        steps += [
            f"kubectl apply -n {ns} -f - <<'EOF'\n{manifests}EOF",
            "sleep 30",
            f"kubectl get pods -n {ns} -o wide",
            # kubectl debug leaves its (completed) pod behind: clean it up
            "kubectl delete pods -n default --field-selector=status.phase==Succeeded",
        ]
        return steps

    def wrong_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        ns = self.namespace
        return {
            "delete_db_pod": [f"kubectl delete pod -n {ns} -l {self.app.label_key}={v['database']}"],
            "restart_db_and_callers": [f"kubectl rollout restart deployment/{d} -n {ns}" for d in (v["database"], *v["callers"])],
            "cordon_without_moving": [f"kubectl cordon {v['node']}"],
            "scale_db_to_zero": [f"kubectl scale deployment/{v['database']} -n {ns} --replicas=0"],
        }

    def allowed_changes(self) -> list[AllowedChange]:
        v = self.variant
        return [
            # the failing node stays out of scheduling until the disk is replaced
            AllowedChange("Node", "", v["node"], "cordoned"),
            AllowedChange("Node", "", v["node"], "tainted"),
            # the databases' claims are recreated on healthy disks
            *(AllowedChange("PersistentVolumeClaim", self.namespace, pvc, "*") for _, pvc in v["evacuate"]),
        ]

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        bad = []
        for pod in backend.api.list("Pod", self.namespace):
            for node, disk, path in backend.model.pod_volume_paths(pod):
                if disk.read_error_fraction(path) > 0:
                    bad.append(f"{pod['metadata']['name']} on {node}:/dev/{disk.device}")
        return [Check("off_failing_disk", not bad, ("still on the failing disk: " + ", ".join(bad)) if bad else "no workload keeps data on the failing disk")]

    def affected_features(self) -> list[str]:
        return affected_requests(self.app, self.variant["database"])
