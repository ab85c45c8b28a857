"""PodCIDRExhaustion: a node's pod CIDR is full of leaked IPAM reservations.

host-local IPAM keeps one file per address it handed out in
``/var/lib/cni/networks/kindnet``. After container-runtime crashes, reservations
of sandboxes that no longer exist are left behind; on one worker they now fill
the whole /24. Nothing shows while the pods there keep running — until a
routine drain of another worker for maintenance moves pods onto it: their
sandboxes fail with host-local's "no IP addresses available in range set" and
they stay in ContainerCreating, so the services they serve are down.

The repair frees the range: remove the reservations whose sandbox is gone
(compare the files' container IDs with ``crictl pods``). Deleting the stuck
pods, restarting the kubelet or rebooting changes nothing on that node (the
files are on disk); moving the pods elsewhere (cordon) leaves the node broken
for the next pod.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Any

import numpy as np

from sre_env.apps.hotel_reservation import HOTEL_RESERVATION
from sre_env.faults.network import LeakedPodIPs
from sre_env.rewards.base import AllowedChange, Check, Mechanism
from sre_env.sim.network import nodenet

from .base import RootCause, SimScenario
from .briefs import user_report

if TYPE_CHECKING:
    from sre_env.backend import Backend
    from sre_env.sim.model import ModelBackend

__all__ = ["PodCIDRExhaustion"]


def _stateless_on(backend: "Backend", namespace: str, node: str) -> list[str]:
    out = []
    for pod in backend.api.list("Pod", namespace):
        owner = next((r for r in pod["metadata"].get("ownerReferences") or () if r.get("kind") == "ReplicaSet"), None)
        vols = [v for v in pod["spec"].get("volumes") or () if "persistentVolumeClaim" in v]
        if pod["spec"].get("nodeName") == node and owner and not vols:
            out.append((pod["metadata"].get("labels") or {}).get("io.kompose.service", ""))
    return sorted(c for c in out if c)


class PodCIDRExhaustion(SimScenario):
    family = "PodCIDRExhaustion"
    app = HOTEL_RESERVATION
    layer = "network"
    difficulty = "hard"
    summary = "After a node maintenance drain, some hotel-reservation pods never start."
    description = (
        "A worker node was drained for kernel maintenance and put back into service. Since then part of the "
        "hotel-reservation site fails: some of the rescheduled pods have been stuck in ContainerCreating for "
        "minutes while others started normally. The node that was drained is healthy."
    )
    mechanism = Mechanism(
        "pod_cidr_exhaustion",
        "network",
        "a node's pod CIDR has no free address (leaked IPAM reservations)",
        (
            r"\bno ip addresses available\b",
            r"\b(?:pod ?cidr|ip (?:address )?range|ip ?pool|ipam)\b[^.;\n]{0,60}?\b(?:exhaust\w*|full|depleted|used up|ran out)\b",
            r"\b(?:exhaust\w*|full)\b[^.;\n]{0,40}?\b(?:pod ?cidr|ip (?:address )?range|ipam)\b",
            r"\bleak\w* (?:ip|ipam|address\w*|reservations?)\b",
            r"\b(?:ip|ipam|address) (?:leak\w*|reservations?)\b",
            r"\bhost-local\b",
        ),
        detail_keys=("node", "pod_cidr"),
        compatible=("network_fault",),
    )

    def repair_paths(self) -> tuple[str, ...]:
        # the leaked host-local IPAM reservations are the fault
        return ("/var/lib/cni/networks",)

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        hosts = backend.model.hosts()
        workers = sorted(h for h in hosts if hosts[h].index > 0)
        pairs = []
        for node in workers:
            for drained in workers:
                movers = _stateless_on(backend, self.namespace, drained)
                if node != drained and len(movers) >= 3:
                    pairs.append((node, drained, tuple(movers)))
        node, drained, movers = pairs[int(rng.integers(0, len(pairs)))]
        cidr = backend.api.get("Node", node)["spec"]["podCIDR"]
        _, _, usable = nodenet.ipam_range(cidr)
        live = set(backend.model.pod_ips_in_use(node))
        leaked = tuple(ip for ip in usable if ip not in live)
        return {"node": node, "drained": drained, "pod_cidr": cidr, "movers": movers, "leaked": leaked, "nodes": (node,)}

    def inject(self, backend: "ModelBackend") -> None:
        v = self.variant
        files = tuple((ip, hashlib.blake2b(f"stale/{v['node']}/{ip}".encode(), digest_size=32).hexdigest()) for ip in v["leaked"])
        LeakedPodIPs(v["node"], files).inject(backend)
        # routine maintenance on another worker: drain (every pod but daemons), then back into service
        api = backend.api
        api.patch("Node", v["drained"], None, {"spec": {"unschedulable": True}}, "merge")
        for pod in api.list("Pod"):
            owners = pod["metadata"].get("ownerReferences") or ()
            if pod["spec"].get("nodeName") == v["drained"] and not any(o.get("kind") == "DaemonSet" for o in owners):
                api.delete("Pod", pod["metadata"]["name"], pod["metadata"]["namespace"])
        backend.advance(45.0)
        api.patch("Node", v["drained"], None, {"spec": {"unschedulable": None}}, "merge")

    def root_cause(self) -> RootCause:
        v = self.variant
        return RootCause(
            component=f"node/{v['node']}",
            namespace=self.namespace,
            layer="network",
            mechanism="pod CIDR exhausted: leaked IPAM address files take every free address",
            summary=(
                f"The pod CIDR {v['pod_cidr']} of {v['node']} is exhausted: {len(v['leaked'])} leaked host-local IPAM reservations "
                f"(files in {nodenet.CNI_DIR} whose sandboxes no longer exist) take every free address. Pods moved there by a maintenance drain "
                f"of another worker fail to create their sandbox ('no IP addresses available in range set') and stay in ContainerCreating, "
                f"so some of {', '.join(v['movers'])} are down and requests through them fail with HTTP 500."
            ),
            details={"node": v["node"], "pod_cidr": v["pod_cidr"], "leaked": len(v["leaked"]), "drained": v["drained"]},
            affected=tuple(f"deployment/{c}" for c in v["movers"]),
        )

    def brief(self) -> str:
        return user_report(self.app, self.variant["movers"][0], intermittent=False)

    def reference_solution(self) -> list[str]:
        v = self.variant
        ns = self.namespace
        return [
            f"kubectl get pods -n {ns} -o wide",
            f"kubectl get events -n {ns} --field-selector reason=FailedCreatePodSandBox",
            f"ssh {v['node']} ls {nodenet.CNI_DIR}",
            f"ssh {v['node']} crictl pods",
            f"ssh {v['node']} rm " + " ".join(f"{nodenet.CNI_DIR}/{ip}" for ip in v["leaked"]),
            # the stuck sandboxes are retried; services that need consul at start-up follow it
            "sleep 120",
            f"kubectl get pods -n {ns} -o wide",
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        ns = self.namespace
        return {
            "delete_stuck_pods": [f"kubectl delete pod -n {ns} --field-selector spec.nodeName={v['node']},status.phase=Pending"],
            "restart_kubelet": [f"ssh {v['node']} systemctl restart kubelet"],
            "restart_movers": [f"kubectl rollout restart deployment/{c} -n {ns}" for c in v["movers"]],
            "scale_movers_to_zero": [f"kubectl scale deployment/{c} -n {ns} --replicas=0" for c in v["movers"]],
        }

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        v = self.variant
        live = set(backend.model.pod_ips_in_use(v["node"]))
        stale = [ip for ip in nodenet.leaked_reservations(backend.model.host(v["node"])) if ip not in live]
        _, _, usable = nodenet.ipam_range(v["pod_cidr"])
        free = len(usable) - len(live) - len(stale)
        return [Check("pod_cidr_has_room", not stale, f"{v['node']}: {len(stale)} stale reservations, {free} free addresses in {v['pod_cidr']}")]

    def allowed_changes(self) -> list[AllowedChange]:
        return []



