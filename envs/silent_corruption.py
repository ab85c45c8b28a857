"""SilentDataCorruption: a storage device returns wrong data without reporting an error.

Unlike latent sector errors there is nothing in ``dmesg`` and SMART is clean:
reads succeed and hand back corrupted blocks. WiredTiger's block checksums
catch them ("read checksum error ... doesn't match expected checksum"), panic,
and mongod aborts; on restart it reads the same device again. The data on that
device cannot be trusted: the database moves to a healthy disk (restored from a
replica or backup), and the device is taken out of service.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from sre_env.apps.hotel_reservation import HOTEL_RESERVATION
from sre_env.faults.disk import SilentCorruption
from sre_env.rewards.base import AllowedChange, Check, Mechanism

from .app_common import callers_fail, callers_of
from .base import RootCause, SimScenario
from .briefs import impact, user_report
from .node_isolation import (
    LocalVolume,
    evacuation_commands,
    isolation_allowed_changes,
    local_volumes_on,
    node_cause,
)

if TYPE_CHECKING:
    from sre_env.sim.model import ModelBackend

__all__ = ["SilentDataCorruption"]


class SilentDataCorruption(SimScenario):
    family = "SilentDataCorruption"
    app = HOTEL_RESERVATION
    layer = "hardware"
    difficulty = "hard"
    summary = "A hotel-reservation database keeps crashing although its disk looks healthy."
    description = (
        "Some hotel-reservation requests fail with HTTP 500 and a database pod keeps restarting. The storage "
        "team checked the node: no disk errors in the kernel log, SMART passes. Nothing was deployed."
    )
    mechanism = Mechanism(
        "silent_data_corruption",
        "hardware",
        "silent data corruption: the device returns wrong data (checksum mismatches) without I/O errors",
        (
            r"\bsilent(?:ly)? (?:data )?corrupt\w*\b",
            r"\bdata corruption\b",
            r"\bchecksum (?:errors?|mismatch\w*|failures?)\b",
            r"\bcorrupt(?:ed)? (?:blocks?|data|reads?|pages?)\b",
            r"\b(?:disk|device|drive|storage|ssd)\b[^.;\n]{0,40}?\bcorrupt\w*\b",
            r"\bbit ?rot\b",
        ),
        detail_keys=("device", "database", "pvc", "node"),
        compatible=("latent_sector_errors",),
    )

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        # a database nobody reads from would never notice: only those serving reads
        dbs = [c for c in self.app.components if c.volume_claim and backend.model.load(c.name) >= 5.0]
        comp = dbs[int(rng.integers(0, len(dbs)))]
        ns = self.namespace
        pvc = backend.api.get("PersistentVolumeClaim", comp.volume_claim, ns)
        pv = backend.api.get("PersistentVolume", pvc["spec"]["volumeName"])
        node = pv["metadata"]["annotations"]["local.path.provisioner/selected-node"]
        path = pv["spec"]["hostPath"]["path"]
        volumes = local_volumes_on(backend, self.app, node)
        return {
            "database": comp.name,
            "pvc": comp.volume_claim,
            "node": node,
            "device": backend.nodes.device_for_path(node, path),
            "path": path,
            "fraction": float(rng.choice((0.02, 0.05))),
            "volumes": tuple((v.workload, v.claim, v.selector, v.storage, v.storage_class) for v in volumes),
            "callers": tuple(callers_of(self.app, comp.name)),
        }

    def _volumes(self) -> tuple[LocalVolume, ...]:
        return tuple(LocalVolume(*v) for v in self.variant["volumes"])

    def inject(self, backend: "ModelBackend") -> None:
        v = self.variant
        # the whole device is suspect; the database reads from it constantly
        SilentCorruption(v["node"], v["device"], v["fraction"], ()).inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        return node_cause(
            self,
            "silent data corruption: the device returns corrupted blocks without I/O errors",
            f"/dev/{v['device']} on {v['node']} silently returns corrupted data (no EIO, clean dmesg and SMART). {v['database']} keeps its data there "
            f"(pvc {v['pvc']}); WiredTiger hits read checksum errors (checksum mismatch), panics and mongod aborts in a loop, so "
            + callers_fail(v["callers"]) + " " + impact(self.app, v["database"]),
            {"device": f"/dev/{v['device']}", "database": v["database"], "pvc": v["pvc"]},
            (f"deployment/{v['database']}", *(f"deployment/{c}" for c in v["callers"])),
        )

    def brief(self) -> str:
        return user_report(self.app, self.variant["database"], intermittent=True)

    def reference_solution(self) -> list[str]:
        v = self.variant
        ns = self.namespace
        return [f"kubectl logs deployment/{v['database']} -n {ns} --previous --tail=8", f"ssh {v['node']} smartctl -a /dev/{v['device']}", *evacuation_commands(ns, v["node"], self._volumes())]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        ns = self.namespace
        return {
            "restart_db": [f"kubectl delete pod -n {ns} -l io.kompose.service={v['database']}"],
            "rollout_restart_callers": [f"kubectl rollout restart deployment/{c} -n {ns}" for c in v["callers"]],
            "cordon_only": [f"kubectl cordon {v['node']}"],
            "scale_db_to_zero": [f"kubectl scale deployment/{v['database']} -n {ns} --replicas=0"],
        }

    def allowed_changes(self) -> list[AllowedChange]:
        return isolation_allowed_changes(self.namespace, self.variant["node"], self._volumes())

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        bad = []
        for pod in backend.api.list("Pod", self.namespace):
            for node, disk, path in backend.model.pod_volume_paths(pod):
                if disk.corruption_fraction(path) > 0:
                    bad.append(f"{pod['metadata']['name']} on {node}:/dev/{disk.device}")
        return [Check("off_corrupting_device", not bad, ("still on the corrupting device: " + ", ".join(bad)) if bad else "no workload keeps data on the corrupting device")]
