"""DNS incidents: CoreDNS configuration that breaks one Service's name, and pods with the wrong dnsPolicy.

*ServiceDNSFailure*: a ``template`` block in the Corefile answers NXDOMAIN for
one Service's name (a leftover of a "block this name" experiment); every pod
that dials it gets ``no such host``. *StaleCoreDNSConfig*: a ``rewrite name``
rule left from a namespace migration sends lookups of one Service to a
namespace that no longer exists. Both are repaired in the ``coredns``
ConfigMap (CoreDNS's ``reload`` plugin picks it up); restarting the app,
CoreDNS or deleting pods changes nothing.

*WrongDNSPolicy*: one Deployment's pods were given ``dnsPolicy: Default`` (the
node's resolver, which knows nothing of ``cluster.local``) and rolled out in
place; the new pod cannot resolve consul or its database and crash-loops.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from sre_env.apps.base import AppSpec
from sre_env.apps.hotel_reservation import HOTEL_RESERVATION
from sre_env.faults.network import CorefileEdit, PodDnsPolicy
from sre_env.rewards.base import AllowedChange, Check, Mechanism
from sre_env.sim.network import dns

from .app_common import find
from .base import RootCause, Scenario, SimScenario
from .blind import rollback_repairs
from .briefs import impact, user_report
from .net_common import caller_routes_check, callers_of, request_path_callees

if TYPE_CHECKING:
    from sre_env.backend import Backend
    from sre_env.sim.model import ModelBackend

__all__ = ["ServiceDNSFailure", "StaleCoreDNSConfig", "WrongDNSPolicy"]

#: Services dialled by name on a request path
_DNS_TARGETS = ("search", "geo", "rate", "profile", "reservation", "recommendation", "user", "mongodb-profile", "mongodb-rate", "mongodb-reservation")
_DNS_TERMS = (
    r"\bcore ?dns\b",
    r"\bcorefile\b",
    r"\bkube-dns\b",
    r"\bdns (?:config\w*|misconfig\w*|server config\w*)\b",
)


def _corefile_restore_yaml() -> str:
    body = "".join("    " + line + "\n" if line else "\n" for line in dns.DEFAULT_COREFILE.rstrip("\n").split("\n"))
    return "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: coredns\n  namespace: kube-system\ndata:\n  Corefile: |\n" + body


def _dns_targets(app: AppSpec) -> tuple[str, ...]:
    """Services dialled by name on a request path (hotel-reservation: the curated list)."""
    if app is HOTEL_RESERVATION:
        return _DNS_TARGETS
    def critical(caller: str, callee: str) -> bool:
        dep = next((d for d in app.component(caller).dependencies if d.service == callee), None)
        return dep is None or dep.critical

    # a failing cache only slows requests down; the page reports are about dependencies that fail them
    return tuple(sorted({callee for caller, callee in request_path_callees(app) if callee != app.entrypoint and critical(caller, callee)}))


def _names_resolve(backend: "ModelBackend", app: AppSpec, service: str, callers: list[str]) -> Check:
    bad, checked = [], 0
    for pod in backend.api.list("Pod", app.namespace):
        comp = (pod["metadata"].get("labels") or {}).get(app.label_key)
        if comp not in callers or pod["metadata"].get("deletionTimestamp"):
            continue
        ans = backend.model.resolve_name(pod["metadata"]["uid"], service)
        if ans is None:
            continue
        checked += 1
        if ans.ip is None:
            bad.append(f"{pod['metadata']['name']}: {ans.error}")
    if not checked:
        return Check("service_name_resolves", False, f"no running caller of {service} to resolve it from")
    return Check("service_name_resolves", not bad, "; ".join(bad[:3]) if bad else f"{service} resolves from {', '.join(callers)}")


class _CorefileScenario(SimScenario):
    app = HOTEL_RESERVATION
    layer = "network"
    difficulty = "medium"

    def extra_components(self) -> tuple[str, ...]:
        return ("coredns", "kube-dns")

    def extra_namespaces(self) -> tuple[str, ...]:
        return ("kube-system",)

    def snippet(self, service: str, fqdn: str) -> str:  # pragma: no cover - abstract
        raise NotImplementedError

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        service = str(rng.choice(_dns_targets(self.app)))
        return {"service": service, "fqdn": f"{service}.{self.namespace}.svc.cluster.local", "callers": tuple(callers_of(self.app, service))}

    def inject(self, backend: "ModelBackend") -> None:
        v = self.variant
        CorefileEdit(self.snippet(v["service"], v["fqdn"]), dns.DEFAULT_COREFILE).inject(backend)

    def brief(self) -> str:
        return user_report(self.app, self.variant["service"], intermittent=False)

    def reference_solution(self) -> list[str]:
        v = self.variant
        caller = v["callers"][0]
        return [
            f"kubectl logs deploy/{caller} -n {self.namespace} --tail=5",
            "kubectl get configmap coredns -n kube-system -o yaml",
            f"kubectl apply -f - <<'EOF'\n{_corefile_restore_yaml()}EOF",
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        ns = self.namespace
        return {
            "restart_coredns": ["kubectl rollout restart deployment/coredns -n kube-system"],
            "delete_coredns_pods": ["kubectl delete pod -n kube-system -l k8s-app=kube-dns"],
            "restart_callers": [f"kubectl rollout restart deployment/{c} -n {ns}" for c in v["callers"]],
            "restart_target": [f"kubectl rollout restart deployment/{v['service']} -n {ns}"],
            "scale_target_to_zero": [f"kubectl scale deployment/{v['service']} -n {ns} --replicas=0"],
        }

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        v = self.variant
        return [_names_resolve(backend, self.app, v["service"], list(v["callers"])), caller_routes_check(backend, self.app, v["service"], list(v["callers"]))]

    def allowed_changes(self) -> list[AllowedChange]:
        # a repaired Corefile may differ from the original in whitespace or comments
        return [AllowedChange("ConfigMap", "kube-system", "coredns", "modified")]

    def corefile_cause(self, mechanism: str, summary: str, details: dict[str, Any]) -> RootCause:
        """The ground truth: the coredns ConfigMap carries the cause; ``summary``, then what users lose."""
        v = self.variant
        return RootCause(
            component="configmap/coredns",
            namespace="kube-system",
            layer="network",
            mechanism=mechanism,
            summary=summary + impact(self.app, v["service"]),
            details={"service": v["service"], "fqdn": v["fqdn"], **details},
            affected=tuple([f"service/{v['service']}"] + [f"deployment/{c}" for c in v["callers"]]),
        )


class ServiceDNSFailure(_CorefileScenario):
    family = "ServiceDNSFailure"
    summary = "Part of the hotel-reservation site fails although every pod is running and ready."
    description = (
        "Since a few minutes ago some pages of the hotel-reservation site return HTTP 500 for every user, "
        "while other pages work. All pods are Running and Ready, nothing restarted and no application was "
        "deployed today; the platform team made some cluster-wide changes this morning."
    )
    mechanism = Mechanism(
        "coredns_nxdomain_template",
        "network",
        "a CoreDNS template answers NXDOMAIN for a Service's name",
        _DNS_TERMS + (r"\btemplate\b", r"\brcode\b", r"\bnxdomain\b"),
        detail_keys=("service", "fqdn"),
        compatible=("network_fault", "coredns_rewrite", "service_deleted"),
    )

    def snippet(self, service: str, fqdn: str) -> str:
        regex = "^" + fqdn.replace(".", "[.]") + "[.]$"
        return f"    template ANY ANY {self.namespace}.svc.cluster.local {{\n       match \"{regex}\"\n       rcode NXDOMAIN\n       fallthrough\n    }}\n"

    def root_cause(self) -> RootCause:
        v = self.variant
        return self.corefile_cause(
            "CoreDNS template answers NXDOMAIN for a Service name",
            f"The coredns ConfigMap (kube-system) has a template block that answers NXDOMAIN for {v['fqdn']}, so DNS resolution of "
            f"{v['service']} fails with 'no such host' and {', '.join(v['callers'])} cannot reach service {v['service']}. ",
            {"plugin": "template", "rcode": "NXDOMAIN"},
        )


class StaleCoreDNSConfig(_CorefileScenario):
    family = "StaleCoreDNSConfig"
    summary = "One dependency of the hotel-reservation site cannot be found by its callers."
    description = (
        "Users of the hotel-reservation site get HTTP 500 on some pages. Every pod is Running, the failing "
        "service itself looks healthy and answers when reached directly by IP, and nobody deployed the "
        "application today. The cluster's platform configuration was cleaned up after last week's migration."
    )
    mechanism = Mechanism(
        "coredns_rewrite",
        "network",
        "a stale CoreDNS rewrite rule sends a Service's name elsewhere",
        _DNS_TERMS + (r"\brewrit\w*\b", r"\bstale\b", r"\bold namespace\b"),
        detail_keys=("service", "fqdn", "rewritten_to"),
        compatible=("network_fault", "coredns_nxdomain_template", "service_deleted"),
    )

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        v = super().draw_variant(backend, rng)
        old_ns = str(rng.choice((f"{self.namespace}-v1", f"{self.namespace}-legacy", f"{self.namespace}-old")))
        v["rewritten_to"] = f"{v['service']}.{old_ns}.svc.cluster.local"
        return v

    def snippet(self, service: str, fqdn: str) -> str:
        return f"    rewrite name {fqdn} {self.variant['rewritten_to']}\n"

    def root_cause(self) -> RootCause:
        v = self.variant
        return self.corefile_cause(
            "stale CoreDNS rewrite rule sends lookups of a Service name to a removed domain",
            f"A stale rewrite rule in the coredns ConfigMap (kube-system) rewrites {v['fqdn']} to {v['rewritten_to']}, a namespace that "
            f"no longer exists, so DNS resolution of {v['service']} returns NXDOMAIN ('no such host') and {', '.join(v['callers'])} cannot reach service "
            f"{v['service']}. ",
            {"rewritten_to": v["rewritten_to"], "plugin": "rewrite"},
        )


_POLICY_TARGETS = ("search", "geo", "rate", "profile", "reservation", "recommendation", "user", "frontend")


class WrongDNSPolicy(Scenario):
    family = "WrongDNSPolicy"
    app = HOTEL_RESERVATION
    layer = "network"
    difficulty = "medium"
    summary = "A hotel-reservation service crash-loops after a routine configuration change."
    description = (
        "Part of the hotel-reservation site returns HTTP 500 since a configuration change was rolled out to "
        "one of its services. Its new pod keeps restarting; the databases, consul and every other service "
        "are healthy, and the same image ran fine before."
    )
    accepted_blind = rollback_repairs("the change of the pod's dnsPolicy")
    mechanism = Mechanism(
        "pod_dns_policy",
        "network",
        "a pod dnsPolicy that does not use the cluster DNS",
        (
            r"\bdns ?polic(?:y|ies)\b",
            r"\bdnsPolicy\b",
            r"\bClusterFirst\b",
            r"\b(?:node'?s?|host'?s?|upstream) (?:dns|resolver|resolv\.conf)\b",
            r"\bresolv\.conf\b",
        ),
        detail_keys=("deployment", "dnsPolicy"),
        compatible=("network_fault", "service_deleted"),
    )

    def draw_variant(self, backend: "Backend", rng: np.random.Generator) -> dict[str, Any]:
        target = str(rng.choice(_POLICY_TARGETS))
        return {"deployment": target, "dnsPolicy": "Default", "callers": tuple(callers_of(self.app, target))}

    def inject(self, backend: "Backend") -> None:
        PodDnsPolicy(self.namespace, self.variant["deployment"], "Default").inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        return RootCause(
            component=f"deployment/{v['deployment']}",
            namespace=self.namespace,
            layer="network",
            mechanism="pod dnsPolicy Default uses the node's resolver, which cannot resolve cluster names",
            summary=(
                f"deployment/{v['deployment']} was changed to dnsPolicy: Default, so its pods use the node's resolv.conf (nameserver "
                f"{dns.NODE_NAMESERVER}) instead of the cluster DNS (ClusterFirst); name lookups of its dependencies fail "
                f"at start-up, the {v['deployment']} pod crash-loops and {', '.join(v['callers']) or 'the load generator'} "
                f"cannot reach it. " + impact(self.app, v["deployment"])
            ),
            details={"deployment": v["deployment"], "dnsPolicy": "Default", "expected_dnsPolicy": "ClusterFirst"},
            affected=tuple([f"deployment/{v['deployment']}"] + [f"deployment/{c}" for c in v["callers"]]),
        )

    def brief(self) -> str:
        return user_report(self.app, self.variant["deployment"], intermittent=False)

    def reference_solution(self) -> list[str]:
        d = self.variant["deployment"]
        ns = self.namespace
        return [
            f"kubectl get pods -n {ns} -l io.kompose.service={d}",
            f"kubectl logs deploy/{d} -n {ns} --tail=5",
            f"kubectl get deployment {d} -n {ns} -o yaml",
            f"kubectl patch deployment {d} -n {ns} -p '{{\"spec\":{{\"template\":{{\"spec\":{{\"dnsPolicy\":\"ClusterFirst\"}}}}}}}}'",
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        return {**self.blind_fixes(self.variant["deployment"]), "restart_coredns": ["kubectl rollout restart deployment/coredns -n kube-system"]}

    def cause_checks(self, backend: "Backend") -> list[Check]:
        d = self.variant["deployment"]
        dep = find(backend, "Deployment", d, self.namespace)
        if dep is None:
            return [Check("pods_use_cluster_dns", False, f"deployment/{d} is gone")]
        spec = dep["spec"]["template"]["spec"]
        policy = spec.get("dnsPolicy", "ClusterFirst")
        servers = dns.resolv_conf({"metadata": {"namespace": self.namespace}, "spec": spec}).nameservers
        ok = dns.KUBE_DNS_IP in servers
        return [Check("pods_use_cluster_dns", ok, f"deployment/{d} dnsPolicy {policy}: nameservers {', '.join(servers) or 'none'}")]

    def allowed_changes(self) -> list[AllowedChange]:
        return [AllowedChange("Deployment", self.namespace, self.variant["deployment"], "modified")]
