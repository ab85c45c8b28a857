"""KubeletEvictionMisconfig: a kubelet config push sets an eviction threshold healthy nodes always cross.

``nodefs.available: 90%`` reads like "evict at 90 % full" but means "evict
while less than 90 % is free": a node whose disk is 14 % used is under
DiskPressure forever. The kubelet evicts its pods one by one and the node is
tainted; stateless pods land elsewhere, but the databases whose local volumes
live on that node cannot, and stay Pending. Deleting pods, removing the taint
or restarting the kubelet changes nothing while the config file says 90 %.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from sre_env.apps.hotel_reservation import HOTEL_RESERVATION
from sre_env.faults.node_config import KubeletConfigEdit
from sre_env.rewards.base import AllowedChange, Check, Mechanism
from sre_env.sim.kubelet.eviction import (
    DEFAULT_EVICTION_HARD,
    KUBELET_CONFIG,
    _threshold_value,
    eviction_thresholds,
)

from .base import RootCause, SimScenario
from .briefs import impact, user_report

if TYPE_CHECKING:
    from sre_env.sim.model import ModelBackend

__all__ = ["KubeletEvictionMisconfig"]

_DATABASES = ("mongodb-profile", "mongodb-rate", "mongodb-reservation")


class KubeletEvictionMisconfig(SimScenario):
    family = "KubeletEvictionMisconfig"
    app = HOTEL_RESERVATION
    layer = "kubernetes"
    difficulty = "hard"
    develop_s = 180.0
    summary = "Healthy hotel-reservation pods keep getting evicted from one node and a database will not come back."
    description = (
        "Pods of hotel-reservation were evicted from one worker a few minutes ago although nothing on it looks short "
        "of resources, and some features now fail for every user. The infrastructure team pushed a routine node "
        "configuration update to the workers this morning."
    )
    mechanism = Mechanism(
        "kubelet_eviction_thresholds",
        "kubernetes",
        "kubelet eviction thresholds set so that a healthy node is always under pressure",
        (
            r"\beviction ?(?:hard|soft)\b",
            r"\beviction (?:threshold|setting|config\w*)s?\b",
            r"\b(?:nodefs|imagefs|memory)\.available\b",
            r"\bkubelet (?:config|configuration)\b[^.;\n]{0,80}\b(?:evict\w*|thresholds?)\b",
            r"\bthresholds?\b[^.;\n]{0,40}\b(?:too high|wrong|misconfigured|inverted)\b",
        ),
        detail_keys=("signal", "value", "node"),
        # the taint and the pressure are what the threshold causes, not rival diagnoses
        compatible=("resource_exhaustion", "untolerated_taint"),
    )

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        db = str(rng.choice(_DATABASES))
        ns = self.namespace
        comp = self.app.component(db)
        pvc = backend.api.get("PersistentVolumeClaim", comp.volume_claim, ns)
        pv = backend.api.get("PersistentVolume", pvc["spec"]["volumeName"])
        node = pv["metadata"]["annotations"]["local.path.provisioner/selected-node"]
        pinned = []
        for other in self.app.components:
            if not other.volume_claim:
                continue
            claim = backend.api.get("PersistentVolumeClaim", other.volume_claim, ns)
            other_pv = backend.api.get("PersistentVolume", claim["spec"]["volumeName"])
            if other_pv["metadata"]["annotations"]["local.path.provisioner/selected-node"] == node:
                pinned.append(other.name)
        signal = str(rng.choice(("nodefs.available", "imagefs.available")))
        value = str(rng.choice(("90%", "95%")))
        callers = sorted({c.name for c in self.app.components for d in c.dependencies if d.service in pinned})
        return {"database": db, "node": node, "pinned": tuple(sorted(pinned)), "callers": tuple(callers), "signal": signal, "value": value, "default": DEFAULT_EVICTION_HARD[signal]}

    def inject(self, backend: "ModelBackend") -> None:
        v = self.variant
        KubeletConfigEdit(v["node"], f"{v['signal']}: {v['default']}", f"{v['signal']}: {v['value']}").inject(backend)

    def _affected(self) -> tuple[str, ...]:
        v = self.variant
        return (*(f"deployment/{d}" for d in v["pinned"]), *(f"deployment/{c}" for c in v["callers"]))

    def root_cause(self) -> RootCause:
        v = self.variant
        return RootCause(
            component=f"node/{v['node']}",
            namespace=self.namespace,
            layer="kubernetes",
            mechanism="kubelet eviction threshold misconfigured (evictionHard)",
            summary=(
                f"The kubelet config on {v['node']} ({KUBELET_CONFIG}) sets evictionHard {v['signal']}: {v['value']} (default {v['default']}): "
                f"the node's disk is only about 14% used, so the eviction threshold is always crossed. The node reports DiskPressure, is tainted "
                f"node.kubernetes.io/disk-pressure and the kubelet evicts its pods; deployment/{', deployment/'.join(v['pinned'])} cannot move off "
                f"the node (local volumes) and stay Pending, so {', '.join(v['callers'])} fail. " + impact(self.app, v["database"])
            ),
            details={"node": v["node"], "signal": v["signal"], "value": v["value"], "expected_value": v["default"], "file": KUBELET_CONFIG},
            affected=self._affected(),
        )

    def brief(self) -> str:
        return user_report(self.app, self.variant["database"], intermittent=False)

    def reference_solution(self) -> list[str]:
        v, ns = self.variant, self.namespace
        return [
            f"kubectl get pods -n {ns} -o wide",
            f"kubectl describe node {v['node']}",
            f"ssh {v['node']} cat {KUBELET_CONFIG}",
            f"ssh {v['node']} \"sed -i 's/{v['signal']}: {v['value']}/{v['signal']}: {v['default']}/' {KUBELET_CONFIG} && systemctl restart kubelet\"",
            # the kubelet keeps the pressure condition for evictionPressureTransitionPeriod (5m)
            "sleep 330",
            # evicted pods stay behind as Failed records (and keep KubePodNotReady firing) until removed
            f"kubectl delete pods -n {ns} --field-selector=status.phase==Failed",
            f"kubectl get pods -n {ns} -o wide",
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v, ns = self.variant, self.namespace
        return {
            "remove_taint": [f"kubectl taint nodes {v['node']} node.kubernetes.io/disk-pressure:NoSchedule-", "sleep 60"],
            "restart_kubelet": [f"ssh {v['node']} systemctl restart kubelet", "sleep 330"],
            "delete_pending_pods": [f"kubectl delete pod -n {ns} -l io.kompose.service={v['database']}", "sleep 60"],
            "rollout_restart": [f"kubectl rollout restart deployment/{v['database']} -n {ns}", "sleep 60"],
        }

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        host = backend.model.host(self.variant["node"])
        effective = backend.model.eviction_thresholds(host.name)
        sig = backend.model.eviction_signals(host.name)
        crossed = []
        for signal, value in sorted(effective.items()):
            if signal in sig:
                avail, cap = sig[signal]
                thr = _threshold_value(value, cap)
                if thr is not None and avail < thr:
                    crossed.append(f"{signal}<{value}")
        checks = [Check("eviction_thresholds_sane", not crossed, f"the kubelet on {host.name} evicts a healthy node: {', '.join(crossed)}" if crossed else f"no eviction threshold is crossed on {host.name}")]
        try:
            on_disk = eviction_thresholds(host)
        except ValueError as exc:
            on_disk = {}
            checks.append(Check("kubelet_config_valid", False, f"{KUBELET_CONFIG} does not load: {exc}"))
        if on_disk and on_disk != effective:
            checks.append(Check("kubelet_config_applied", False, f"{KUBELET_CONFIG} on {host.name} differs from what the running kubelet loaded (restart the kubelet)"))
        return checks

    def allowed_changes(self) -> list[AllowedChange]:
        return [AllowedChange("Deployment", self.namespace, "*", "modified")]
