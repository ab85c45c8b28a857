"""Packet-path incidents: a NetworkPolicy, a Service's internal traffic policy, a node firewall partition.

*NetworkPolicyBlock*: a policy meant to lock something down cuts a legitimate
dependency — an ingress allow-list that selects callers by a label the pods do
not carry, or a namespace egress lockdown that forgot DNS. The fix scopes the
policy; deleting it removes the protection it exists for and fails.

*InternalTrafficPolicyLocal*: a Service set to ``internalTrafficPolicy: Local``
only serves clients on nodes that host one of its endpoints; kube-proxy drops
everyone else's packets ("has no local endpoints").

*NetworkPartition*: host firewall rules on one worker drop everything from and
to another worker (its address and pod CIDR), saved so they return at boot.
Pods on the two nodes time out talking to each other; the rules must be
removed and the saved rule set updated.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from sre_env.apps.hotel_reservation import HOTEL_RESERVATION
from sre_env.faults.network import (
    CreateNetworkPolicy,
    NodeFirewallPartition,
    ServiceTrafficPolicy,
)
from sre_env.kube.selectors import label_selector_matches
from sre_env.rewards.base import AllowedChange, Check, Mechanism
from sre_env.sim.network import netpol, nodenet

from .app_common import find
from .base import RootCause, SimScenario
from .briefs import impact, user_report
from .net_common import (
    caller_routes_check,
    callers_of,
    component_nodes,
    request_path_callees,
)
from .traffic_policy import (
    InternalTrafficPolicyLocal as SocialInternalTrafficPolicyLocal,
)

if TYPE_CHECKING:
    from sre_env.backend import Backend
    from sre_env.sim.model import ModelBackend

__all__ = ["NetworkPolicyBlock", "InternalTrafficPolicyLocal", "NetworkPartition"]

_GO = ("frontend", "search", "geo", "rate", "profile", "recommendation", "user", "reservation")
_DB_CLIENTS = (("mongodb-profile", "profile"), ("mongodb-rate", "rate"), ("mongodb-reservation", "reservation"))


class NetworkPolicyBlock(SimScenario):
    family = "NetworkPolicyBlock"
    app = HOTEL_RESERVATION
    layer = "network"
    difficulty = "medium"
    summary = "Requests on the hotel-reservation site hang and time out after a security hardening change."
    description = (
        "After the security team rolled out network hardening for the hotel-reservation namespace this "
        "morning, requests on the site hang and fail with timeouts. Pods are Running and Ready and nothing "
        "was deployed. The hardening is a compliance requirement and has to stay in place."
    )
    mechanism = Mechanism(
        "network_policy_block",
        "network",
        "a NetworkPolicy denies traffic a dependency needs",
        (
            r"\bnetwork ?polic(?:y|ies)\b",
            r"\bnetpol\b",
            r"\b(?:ingress|egress) (?:rule|polic\w*|allow-?list)\b",
            r"\bpolicy (?:blocks?|denies|drops)\b",
        ),
        detail_keys=("policy", "selector", "port"),
        compatible=("network_fault",),
    )

    def extra_components(self) -> tuple[str, ...]:
        return (self.variant.get("policy", ""),)

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        kind = str(rng.choice(("ingress_label", "egress_dns")))
        if kind == "ingress_label":
            db, client = _DB_CLIENTS[int(rng.integers(0, len(_DB_CLIENTS)))]
            return {"kind": kind, "policy": "database-allow-clients", "target": db, "client": client, "selector": f"app={client}", "port": 27017, "callers": (client,)}
        return {"kind": kind, "policy": "namespace-egress-lockdown", "target": "kube-dns", "client": "", "selector": "<all pods>", "port": 53, "callers": _GO}

    def _policy(self) -> dict[str, Any]:
        v = self.variant
        meta = {"name": v["policy"], "namespace": self.namespace, "labels": {"team": "security", "compliance": "pci"}}
        if v["kind"] == "ingress_label":
            spec = {
                "podSelector": {"matchLabels": {"io.kompose.service": v["target"]}},
                "policyTypes": ["Ingress"],
                "ingress": [{"from": [{"podSelector": {"matchLabels": {"app": v["client"]}}}], "ports": [{"protocol": "TCP", "port": 27017}]}],
            }
        else:
            spec = {"podSelector": {}, "policyTypes": ["Egress"], "egress": [{"to": [{"podSelector": {}}]}]}
        return {"kind": "NetworkPolicy", "apiVersion": "networking.k8s.io/v1", "metadata": meta, "spec": spec}

    def inject(self, backend: "ModelBackend") -> None:
        CreateNetworkPolicy(self._policy()).inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        if v["kind"] == "ingress_label":
            summary = (
                f"NetworkPolicy {v['policy']} isolates {v['target']} for ingress and only allows pods labelled app={v['client']} on port 27017, "
                f"but the {v['client']} pods carry io.kompose.service={v['client']} and no app label; the policy drops {v['client']}'s connections "
                f"to {v['target']}, which time out. " + impact(self.app, v["target"])
            )
            affected = (f"deployment/{v['target']}", f"deployment/{v['client']}")
        else:
            summary = (
                f"NetworkPolicy {v['policy']} isolates every pod of {self.namespace} for egress and only allows traffic to pods of the same "
                f"namespace; DNS queries to kube-dns (UDP/TCP port 53 in kube-system) are dropped, so every service's lookups time out "
                f"and calls between services fail. " + impact(self.app, "frontend")
            )
            affected = tuple(f"deployment/{c}" for c in _GO)
        return RootCause(
            component=f"networkpolicy/{v['policy']}",
            namespace=self.namespace,
            layer="network",
            mechanism="NetworkPolicy denies a needed dependency",
            summary=summary,
            details={"policy": v["policy"], "selector": v["selector"], "port": v["port"], "variant": v["kind"]},
            affected=affected,
        )

    def brief(self) -> str:
        v = self.variant
        return user_report(self.app, v["target"] if v["kind"] == "ingress_label" else "frontend", intermittent=False)

    def reference_solution(self) -> list[str]:
        v = self.variant
        ns = self.namespace
        steps = [f"kubectl get networkpolicy -n {ns}", f"kubectl describe networkpolicy {v['policy']} -n {ns}"]
        if v["kind"] == "ingress_label":
            steps.append(
                f"kubectl patch networkpolicy {v['policy']} -n {ns} --type=json -p "
                f"'[{{\"op\": \"replace\", \"path\": \"/spec/ingress/0/from/0/podSelector\", \"value\": {{\"matchLabels\": {{\"io.kompose.service\": \"{v['client']}\"}}}}}}]'"
            )
        else:
            steps.append(
                f"kubectl patch networkpolicy {v['policy']} -n {ns} --type=json -p "
                "'[{\"op\": \"add\", \"path\": \"/spec/egress/-\", \"value\": {\"to\": [{\"namespaceSelector\": {\"matchLabels\": {\"kubernetes.io/metadata.name\": \"kube-system\"}}, "
                "\"podSelector\": {\"matchLabels\": {\"k8s-app\": \"kube-dns\"}}}], \"ports\": [{\"protocol\": \"UDP\", \"port\": 53}, {\"protocol\": \"TCP\", \"port\": 53}]}}]'"
            )
        return steps

    def wrong_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        ns = self.namespace
        fixes = {
            "delete_policy": [f"kubectl delete networkpolicy {v['policy']} -n {ns}"],
            "allow_everything": [f"kubectl patch networkpolicy {v['policy']} -n {ns} --type=merge -p '{{\"spec\":{{\"ingress\":[{{}}],\"egress\":[{{}}],\"policyTypes\":[\"Ingress\",\"Egress\"]}}}}'"],
            "restart_callers": [f"kubectl rollout restart deployment/{c} -n {ns}" for c in v["callers"]],
        }
        if v["kind"] == "ingress_label":
            fixes["restart_database"] = [f"kubectl rollout restart deployment/{v['target']} -n {ns}"]
        else:
            fixes["restart_coredns"] = ["kubectl rollout restart deployment/coredns -n kube-system"]
        return fixes

    def _probe_peer(self, backend: "ModelBackend", component: str) -> netpol.Peer:
        for pod in backend.api.list("Pod", self.namespace):
            if (pod["metadata"].get("labels") or {}).get("io.kompose.service") == component:
                return backend.model.policy_peer(pod)
        return netpol.Peer(ip="10.244.9.9", namespace=self.namespace, labels=(("io.kompose.service", component),))

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        v = self.variant
        model = backend.model
        if v["kind"] == "ingress_label":
            reach = caller_routes_check(backend, self.app, v["target"], [v["client"]])
            db = self._probe_peer(backend, v["target"])
            other = self._probe_peer(backend, "frontend")
            kept = not model.policy_allows(other, db, 27017)
            guard = Check("policy_still_protects", kept, f"frontend -> {v['target']}:27017 is {'denied' if kept else 'allowed'} (the policy must keep other pods out)")
        else:
            reach = caller_routes_check(backend, self.app, "search", ["frontend"], name="services_reach_each_other")
            inside = self._probe_peer(backend, "frontend")
            kept = not model.policy_allows(inside, netpol.Peer(ip="93.184.216.34"), 443)
            guard = Check("policy_still_protects", kept, f"egress from the namespace to the internet is {'denied' if kept else 'allowed'} (the lockdown must stay)")
        return [reach, guard]

    def allowed_changes(self) -> list[AllowedChange]:
        return [AllowedChange("NetworkPolicy", self.namespace, self.variant["policy"], "*")]


# --------------------------------------------------------------------------- internalTrafficPolicy
_ITP_TARGETS = ("search", "geo", "rate", "profile", "reservation", "recommendation", "user", "memcached-rate", "memcached-profile", "memcached-reserve", "mongodb-profile", "mongodb-rate", "mongodb-reservation")


class InternalTrafficPolicyLocal(SimScenario):
    family = "InternalTrafficPolicyLocal"
    app = HOTEL_RESERVATION
    layer = "network"
    difficulty = "hard"
    summary = "Calls to one hotel-reservation backend time out from some pods but work from others."
    description = (
        "Some pages of the hotel-reservation site hang and then fail. The backend they need is Running, "
        "Ready and answers instantly when tested from some pods, yet times out from others. An optimisation "
        "to keep traffic node-local was discussed in this week's platform meeting."
    )
    # one vocabulary per mechanism: the family's, declared with its social-network variant
    mechanism = SocialInternalTrafficPolicyLocal.mechanism

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        nodes = component_nodes(backend, self.namespace)
        options = []
        for svc in _ITP_TARGETS:
            callers = callers_of(self.app, svc)
            where = set(nodes.get(svc, ()))
            remote = sorted({n for c in callers for n in nodes.get(c, ()) if n not in where})
            if remote and where:
                options.append((svc, tuple(callers), tuple(remote)))
        svc, callers, remote = options[int(rng.integers(0, len(options)))]
        return {"service": svc, "callers": callers, "nodes_without_endpoint": remote, "policy": "Local"}

    def inject(self, backend: "ModelBackend") -> None:
        ServiceTrafficPolicy(self.namespace, self.variant["service"], "Local").inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        return RootCause(
            component=f"service/{v['service']}",
            namespace=self.namespace,
            layer="network",
            mechanism="Service internalTrafficPolicy Local drops traffic from nodes without a local endpoint",
            summary=(
                f"service/{v['service']} has internalTrafficPolicy: Local, so kube-proxy only sends its traffic to endpoints on the client's own node; "
                f"{', '.join(v['callers'])} run on {', '.join(v['nodes_without_endpoint'])} where {v['service']} has no local endpoint, and their "
                f"connections are dropped and time out. " + impact(self.app, v["service"])
            ),
            details={"service": v["service"], "policy": "Local", "expected_policy": "Cluster", "nodes_without_endpoint": list(v["nodes_without_endpoint"])},
            affected=tuple([f"service/{v['service']}"] + [f"deployment/{c}" for c in v["callers"]]),
        )

    def brief(self) -> str:
        return user_report(self.app, self.variant["service"], intermittent=False)

    def reference_solution(self) -> list[str]:
        s = self.variant["service"]
        ns = self.namespace
        return [
            f"kubectl get pods -n {ns} -o wide",
            f"kubectl get service {s} -n {ns} -o yaml",
            f"kubectl patch service {s} -n {ns} -p '{{\"spec\":{{\"internalTrafficPolicy\":\"Cluster\"}}}}'",
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        ns = self.namespace
        return {
            "restart_service_pods": [f"kubectl rollout restart deployment/{v['service']} -n {ns}"],
            "delete_service_pods": [f"kubectl delete pod -n {ns} -l io.kompose.service={v['service']}"],
            "restart_kube_proxy": ["kubectl rollout restart daemonset/kube-proxy -n kube-system"],
            "delete_service": [f"kubectl delete service {v['service']} -n {ns}"],
        }

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        v = self.variant
        svc = find(backend, "Service", v["service"], self.namespace)
        if svc is None:
            return [Check("traffic_policy_served", False, f"service/{v['service']} is gone")]
        policy = svc["spec"].get("internalTrafficPolicy") or "Cluster"
        # Local is fine only where placement guarantees a local endpoint; pods that landed together by chance do not
        designed = policy == "Cluster" or all(_colocated_by_design(backend, self.namespace, v["service"], c) for c in v["callers"])
        return [
            Check("traffic_policy_served", designed, f"service/{v['service']} internalTrafficPolicy {policy}" + ("" if designed else ": no placement rule keeps an endpoint on every caller's node")),
            caller_routes_check(backend, self.app, v["service"], list(v["callers"])),
        ]

    def allowed_changes(self) -> list[AllowedChange]:
        v = self.variant
        # a placement fix (pod affinity) changes the deployments involved
        return [AllowedChange("Service", self.namespace, v["service"], "modified"), *(AllowedChange("Deployment", self.namespace, d, "modified") for d in (v["service"], *v["callers"]))]


def _affinity_to(template_spec: dict[str, Any], target: str) -> bool:
    terms = ((template_spec.get("affinity") or {}).get("podAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or ()
    for term in terms:
        if term.get("topologyKey") == "kubernetes.io/hostname" and label_selector_matches(term.get("labelSelector") or {}, {"io.kompose.service": target}):
            return True
    return False


def _colocated_by_design(backend: "Backend", namespace: str, service: str, caller: str) -> bool:
    """A required pod affinity (either way) or a shared hostname nodeSelector keeps ``caller`` beside ``service``."""
    try:
        a = backend.api.get("Deployment", caller, namespace)["spec"]["template"]["spec"]
        b = backend.api.get("Deployment", service, namespace)["spec"]["template"]["spec"]
    except Exception:  # noqa: BLE001 - a missing deployment guarantees nothing
        return False
    if _affinity_to(a, service) or _affinity_to(b, caller):
        return True
    host_a = (a.get("nodeSelector") or {}).get("kubernetes.io/hostname")
    return host_a is not None and host_a == (b.get("nodeSelector") or {}).get("kubernetes.io/hostname")


# --------------------------------------------------------------------------- partition
class NetworkPartition(SimScenario):
    family = "NetworkPartition"
    app = HOTEL_RESERVATION
    layer = "network"
    difficulty = "hard"
    summary = "Some hotel-reservation requests time out while every pod reports Ready."
    description = (
        "Requests on the hotel-reservation site hang and time out for a large share of users. Every node is "
        "Ready, every pod is Running, and the failing services answer normally when called from some other "
        "pods. A node hardening playbook ran against the worker nodes overnight."
    )
    mechanism = Mechanism(
        "node_network_partition",
        "network",
        "host firewall rules partition two nodes",
        (
            r"\bnetwork partition\w*\b",
            r"\bpartition\w*\b",
            r"\biptables\b",
            r"\bfirewall\b",
            r"\bdrop rules?\b",
            r"\bnodes? (?:can(?:no|')t|cannot) (?:reach|talk to) each other\b",
        ),
        detail_keys=("node", "peer", "peer_cidr"),
        compatible=("network_fault",),
    )

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        nodes = component_nodes(backend, self.namespace, self.app.label_key)
        hosts = backend.model.hosts()
        workers = [h for h in sorted(hosts) if hosts[h].index > 0]
        pairs: dict[tuple[str, str], list[tuple[str, str]]] = {}
        for caller, callee in request_path_callees(self.app):
            for a in nodes.get(caller, ()):
                for b in nodes.get(callee, ()):
                    if a != b and a in workers and b in workers:
                        pairs.setdefault((a, b), []).append((caller, callee))
        keys = sorted(pairs)
        a, b = keys[int(rng.integers(0, len(keys)))]
        peer = hosts[b]
        node_obj = backend.api.get("Node", b)
        edges = tuple(sorted(pairs[(a, b)] + pairs.get((b, a), [])))
        return {"node": a, "peer": b, "nodes": (a, b), "peer_ip": peer.internal_ip, "peer_cidr": node_obj["spec"]["podCIDR"], "edges": edges}

    def _fault(self) -> NodeFirewallPartition:
        v = self.variant
        return NodeFirewallPartition(v["node"], v["peer_ip"], v["peer_cidr"])

    def inject(self, backend: "ModelBackend") -> None:
        self._fault().inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        comps = sorted({c for e in v["edges"] for c in e})
        return RootCause(
            component=f"node/{v['node']}",
            namespace=self.namespace,
            layer="network",
            mechanism="host firewall (iptables DROP) rules partition two nodes",
            summary=(
                f"iptables DROP rules on {v['node']} (INPUT from {v['peer_ip']}, FORWARD from and to {v['peer_cidr']}, saved in /etc/iptables/rules.v4) "
                f"partition {v['node']} from {v['peer']}: pod traffic between the two nodes is dropped and times out, so "
                + ", ".join(f"{a} -> {b}" for a, b in v["edges"])
                + " fail. " + impact(self.app, v["edges"][0][1])
            ),
            details={"node": v["node"], "peer": v["peer"], "peer_ip": v["peer_ip"], "peer_cidr": v["peer_cidr"]},
            affected=tuple(f"deployment/{c}" for c in comps),
        )

    def brief(self) -> str:
        return user_report(self.app, self.variant["edges"][0][1], intermittent=False)

    def reference_solution(self) -> list[str]:
        v = self.variant
        # fix the saved rule set, then load it: the kernel's rules and the boot configuration agree
        return [
            f"kubectl get pods -n {self.namespace} -o wide",
            f"ssh {v['node']} iptables -S",
            f"ssh {v['node']} cat /etc/iptables/rules.v4",
            f"ssh {v['node']} \"sed -i '/-j DROP/d' /etc/iptables/rules.v4\"",
            f"ssh {v['node']} netfilter-persistent reload",
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        ns = self.namespace
        comps = sorted({c for e in v["edges"] for c in e})
        return {
            "restart_affected": [f"kubectl rollout restart deployment/{c} -n {ns}" for c in comps],
            "delete_affected_pods": [f"kubectl delete pod -n {ns} -l {self.app.label_key}={c}" for c in comps],
            "restart_kube_proxy": ["kubectl rollout restart daemonset/kube-proxy -n kube-system"],
        }

    def non_durable_fixes(self) -> dict[str, list[str]]:
        # deleting the kernel's rules without fixing the saved set: the next boot brings them back
        v = self.variant
        return {"runtime_rules_only": [f"ssh {v['node']} iptables -D {' '.join(argv[2:])}" for argv in self._fault().rules()]}

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        v = self.variant
        a, b = backend.model.host(v["node"]), backend.model.host(v["peer"])
        a_cidr = f"10.244.{a.index}.0/24"
        a_pod = a_cidr.rsplit(".", 1)[0] + ".10"
        b_pod = v["peer_cidr"].rsplit(".", 1)[0] + ".10"
        probes = [
            nodenet.packet_verdict(a, a_pod, False, b, b_pod, False, "tcp", 8080),
            nodenet.packet_verdict(b, b_pod, False, a, a_pod, False, "tcp", 8080),
            nodenet.packet_verdict(b, b.internal_ip, True, a, a.internal_ip, True, "tcp", 10250),
        ]
        blocked = [p for p in probes if p]
        return [Check("nodes_reach_each_other", not blocked, f"{v['node']} <-> {v['peer']}: " + ("blocked (" + ", ".join(blocked) + ")" if blocked else "open"))]

    def allowed_changes(self) -> list[AllowedChange]:
        return []



