"""InternalTrafficPolicyLocal on social-network: a Service keeps traffic on the client's node, where it has no endpoint.

``spec.internalTrafficPolicy: Local`` tells kube-proxy to send a client's
connections only to endpoints on the client's own node; on a node without one
it drops them ("has no local endpoints"). With one replica per service, callers
that happen to run on the same node as the service keep working and the others
time out, so some features fail completely while others are fine and every pod
is healthy. Restarting pods reshuffles who is local without fixing anything;
the repair is the Service's policy (``Cluster``). The hotel-reservation variant
of this family (``envs/network_paths.py``) shares this module's vocabulary.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from sre_env.apps.social_network import SOCIAL_NETWORK
from sre_env.faults.traffic_policy import InternalTrafficPolicy
from sre_env.rewards.base import AllowedChange, Check, Mechanism

from .app_common import find
from .base import RootCause, Scenario

if TYPE_CHECKING:
    from sre_env.backend import Backend

__all__ = ["InternalTrafficPolicyLocal"]


def _feature(rt: Any) -> str:
    return rt.feature or rt.name.replace("_", " ")


def _listed(items: list[str]) -> str:
    return ", ".join(items[:-1]) + " and " + items[-1] if len(items) > 1 else items[0]


class InternalTrafficPolicyLocal(Scenario):
    family = "InternalTrafficPolicyLocal"
    app = SOCIAL_NETWORK
    layer = "network"
    difficulty = "hard"
    summary = "Some social-network features time out while others work; every pod is healthy."
    description = (
        "Part of the social network hangs: some actions time out for every user while others work normally. "
        "All pods are Running and Ready, endpoints are populated and nothing restarts. A networking change "
        "was rolled out to some Services earlier today."
    )
    mechanism = Mechanism(
        "internal_traffic_policy_local",
        "network",
        "a Service's internalTrafficPolicy is Local and callers on other nodes have no local endpoint",
        (
            r"\binternal ?traffic ?policy\b",
            r"\binternal[_-]traffic[_-]policy\b",
            r"\btraffic ?policy(?::| is| set to)? ?local\b",
            r"\bno local endpoints?\b",
            r"\bnode-?local (?:traffic|routing|endpoints?)\b",
        ),
        detail_keys=("service", "policy", "nodes_without_endpoint"),
        compatible=("network_fault",),
    )

    def draw_variant(self, backend: "Backend", rng: np.random.Generator) -> dict[str, Any]:
        ns = self.namespace
        node_of: dict[str, str] = {}
        for pod in backend.api.list("Pod", ns):
            name = (pod["metadata"].get("labels") or {}).get(self.app.label_key)
            if name and pod["spec"].get("nodeName"):
                node_of[name] = pod["spec"]["nodeName"]
        candidates = []
        for comp in self.app.components:
            if comp.name == self.app.entrypoint or not comp.service_ports or comp.name not in node_of:
                continue
            callers = sorted({c.caller for rt in self.app.requests for c in rt.calls if c.callee == comp.name})
            nodes = {node_of[c] for c in callers if c in node_of}
            remote = [c for c in callers if c in node_of and node_of[c] != node_of[comp.name]]
            # callers on two or more nodes: no single placement of the one replica serves them all
            if remote and len(nodes) >= 2:
                candidates.append((comp.name, tuple(remote), tuple(callers)))
        service, remote, callers = candidates[int(rng.integers(0, len(candidates)))]
        return {
            "service": service,
            "node": node_of[service],
            "remote_callers": remote,
            "callers": callers,
            "nodes_without_endpoint": tuple(sorted({node_of[c] for c in remote})),
            "policy": "Local",
        }

    def inject(self, backend: "Backend") -> None:
        InternalTrafficPolicy(self.namespace, self.variant["service"], "Local", "Cluster").inject(backend)

    def _failing_features(self) -> list[str]:
        v = self.variant
        return [_feature(rt) for rt in self.app.requests if any(c.callee == v["service"] and c.caller in v["remote_callers"] for c in rt.calls)]

    def root_cause(self) -> RootCause:
        v = self.variant
        return RootCause(
            component=f"service/{v['service']}",
            namespace=self.namespace,
            layer="network",
            mechanism="Service internalTrafficPolicy Local drops traffic from nodes without a local endpoint",
            summary=(
                f"service/{v['service']} has internalTrafficPolicy: Local, so kube-proxy only routes a client to endpoints on "
                f"its own node; its only endpoint runs on {v['node']}, so {', '.join(v['remote_callers'])} on "
                f"{', '.join(v['nodes_without_endpoint'])} have no local endpoint and their connections are dropped (i/o timeout). "
                f"Impact: {_listed(self._failing_features())} time out for users of {self.app.name}."
            ),
            details={"service": v["service"], "policy": "Local", "expected_policy": "Cluster", "nodes_without_endpoint": list(v["nodes_without_endpoint"])},
            affected=tuple([f"service/{v['service']}"] + [f"deployment/{c}" for c in v["remote_callers"]] + [f"deployment/{self.app.entrypoint}"]),
        )

    def brief(self) -> str:
        return (
            f"PAGE: users of the {self.app.name} site (namespace {self.namespace}) report that requests for "
            f"{_listed(self._failing_features())} hang and time out for everyone, while the rest of the site works. "
            "The problem started a few minutes ago. Find the root cause, repair it durably, and submit your diagnosis."
        )

    def reference_solution(self) -> list[str]:
        v = self.variant
        ns = self.namespace
        return [
            f"kubectl get pods -n {ns} -o wide",
            f"kubectl describe service {v['service']} -n {ns}",
            f"kubectl patch service {v['service']} -n {ns} -p '{{\"spec\":{{\"internalTrafficPolicy\":\"Cluster\"}}}}'",
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        ns = self.namespace
        return {
            "rollout_restart_service": [f"kubectl rollout restart deployment/{v['service']} -n {ns}"],
            "delete_service_pod": [f"kubectl delete pod -n {ns} -l {self.app.label_key}={v['service']}"],
            "restart_callers": [f"kubectl rollout restart deployment/{c} -n {ns}" for c in v["remote_callers"]],
            "delete_service": [f"kubectl delete service {v['service']} -n {ns}"],
        }

    def allowed_changes(self) -> list[AllowedChange]:
        # removing the field (defaults to Cluster) or setting Cluster explicitly both differ textually
        return [AllowedChange("Service", self.namespace, self.variant["service"], "modified")]

    def cause_checks(self, backend: "Backend") -> list[Check]:
        v = self.variant
        svc = find(backend, "Service", v["service"], self.namespace)
        policy = ((svc or {}).get("spec") or {}).get("internalTrafficPolicy") or "Cluster"
        ok = svc is not None and policy == "Cluster"
        return [Check("cluster_traffic_policy", ok, f"service/{v['service']} internalTrafficPolicy: {policy}" if svc is not None else f"service/{v['service']} is gone")]
