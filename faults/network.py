"""Network faults: DNS configuration, pod DNS policy, NetworkPolicies, Ingress routes, Service
traffic policy, kube-proxy, node firewalls and pod IPAM.

Each applies its cause through the API (ConfigMap, Deployment, NetworkPolicy,
Ingress, Service, DaemonSet) or through a node's shell (iptables, files), the
way an operator or configuration management would have; the network model
turns it into failed lookups, dropped packets and stuck sandboxes.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .base import Fault

if TYPE_CHECKING:
    from sre_env.backend import Backend

__all__ = [
    "CorefileEdit",
    "PodDnsPolicy",
    "CreateNetworkPolicy",
    "IngressEdit",
    "ServiceTrafficPolicy",
    "KubeProxyBadImage",
    "NodeFirewallPartition",
    "LeakedPodIPs",
]


@dataclass(frozen=True)
class CorefileEdit(Fault):
    """Insert ``snippet`` into the ``.:53`` server block of CoreDNS's Corefile (before ``kubernetes``)."""

    snippet: str
    original: str = ""

    def inject(self, backend: "Backend") -> None:
        cm = backend.api.get("ConfigMap", "coredns", "kube-system")
        text = cm["data"]["Corefile"]
        marker = "    kubernetes "
        idx = text.index(marker)
        new = text[:idx] + self.snippet + text[idx:]
        backend.api.patch("ConfigMap", "coredns", "kube-system", {"data": {"Corefile": new}}, "merge")

    def recover(self, backend: "Backend") -> None:
        backend.api.patch("ConfigMap", "coredns", "kube-system", {"data": {"Corefile": self.original}}, "merge")


@dataclass(frozen=True)
class PodDnsPolicy(Fault):
    """A Deployment's pods get a dnsPolicy that does not resolve cluster names, rolled out in place."""

    namespace: str
    deployment: str
    policy: str = "Default"

    def inject(self, backend: "Backend") -> None:
        backend.api.patch(
            "Deployment",
            self.deployment,
            self.namespace,
            {"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}, "template": {"spec": {"dnsPolicy": self.policy}}}},
            "strategic",
        )

    def recover(self, backend: "Backend") -> None:
        backend.api.patch("Deployment", self.deployment, self.namespace, {"spec": {"template": {"spec": {"dnsPolicy": "ClusterFirst"}}}}, "strategic")


@dataclass(frozen=True)
class CreateNetworkPolicy(Fault):
    policy: dict[str, Any] = field(default_factory=dict)

    def inject(self, backend: "Backend") -> None:
        backend.api.create(copy.deepcopy(self.policy))

    def recover(self, backend: "Backend") -> None:
        meta = self.policy["metadata"]
        backend.api.delete("NetworkPolicy", meta["name"], meta["namespace"])


@dataclass(frozen=True)
class IngressEdit(Fault):
    """Replace an Ingress's spec (a route edited to the wrong backend)."""

    namespace: str
    name: str
    spec: dict[str, Any] = field(default_factory=dict)
    original: dict[str, Any] = field(default_factory=dict)

    def _set(self, backend: "Backend", spec: dict[str, Any]) -> None:
        obj = copy.deepcopy(backend.api.get("Ingress", self.name, self.namespace))
        obj["spec"] = copy.deepcopy(spec)
        backend.api.replace(obj)

    def inject(self, backend: "Backend") -> None:
        self._set(backend, self.spec)

    def recover(self, backend: "Backend") -> None:
        self._set(backend, self.original)


@dataclass(frozen=True)
class ServiceTrafficPolicy(Fault):
    namespace: str
    service: str
    policy: str = "Local"

    def inject(self, backend: "Backend") -> None:
        backend.api.patch("Service", self.service, self.namespace, {"spec": {"internalTrafficPolicy": self.policy}}, "merge")

    def recover(self, backend: "Backend") -> None:
        backend.api.patch("Service", self.service, self.namespace, {"spec": {"internalTrafficPolicy": "Cluster"}}, "merge")


@dataclass(frozen=True)
class KubeProxyBadImage(Fault):
    """A kube-proxy canary: the DaemonSet switched to OnDelete with a new image, and one node's pod replaced.

    The image does not exist, so that node's kube-proxy never comes back; its
    Service rules stay as they were when the old pod stopped.
    """

    node: str
    image: str
    good_image: str

    def inject(self, backend: "Backend") -> None:
        backend.api.patch(
            "DaemonSet",
            "kube-proxy",
            "kube-system",
            {"spec": {"updateStrategy": {"type": "OnDelete", "rollingUpdate": None}, "template": {"spec": {"containers": [{"name": "kube-proxy", "image": self.image}]}}}},
            "strategic",
        )
        for pod in backend.api.list("Pod", "kube-system", label_selector="k8s-app=kube-proxy"):
            if pod["spec"].get("nodeName") == self.node:
                backend.api.delete("Pod", pod["metadata"]["name"], "kube-system")

    def recover(self, backend: "Backend") -> None:
        backend.api.patch(
            "DaemonSet",
            "kube-proxy",
            "kube-system",
            {"spec": {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}}, "template": {"spec": {"containers": [{"name": "kube-proxy", "image": self.good_image}]}}}},
            "strategic",
        )


@dataclass(frozen=True)
class NodeFirewallPartition(Fault):
    """Host firewall rules on ``node`` that drop everything from and to ``peer`` (its node IP and pod CIDR), saved for boot."""

    node: str
    peer_ip: str
    peer_cidr: str

    def rules(self) -> list[list[str]]:
        return [
            ["iptables", "-I", "INPUT", "-s", f"{self.peer_ip}/32", "-j", "DROP"],
            ["iptables", "-I", "FORWARD", "-s", self.peer_cidr, "-j", "DROP"],
            ["iptables", "-I", "FORWARD", "-d", self.peer_cidr, "-j", "DROP"],
        ]

    def inject(self, backend: "Backend") -> None:
        for argv in self.rules():
            backend.nodes.exec(self.node, argv)
        backend.nodes.exec(self.node, ["netfilter-persistent", "save"])

    def recover(self, backend: "Backend") -> None:
        for argv in self.rules():
            backend.nodes.exec(self.node, ["iptables", "-D", *argv[2:]])
        backend.nodes.exec(self.node, ["netfilter-persistent", "save"])


@dataclass(frozen=True)
class LeakedPodIPs(Fault):
    """Reservation files of sandboxes that no longer exist fill a node's host-local IPAM directory."""

    node: str
    files: tuple[tuple[str, str], ...]  # (address, stale sandbox id)

    def inject(self, backend: "Backend") -> None:
        script = "; ".join(f"echo {sid} > /var/lib/cni/networks/kindnet/{ip}" for ip, sid in self.files)
        backend.nodes.exec(self.node, ["bash", "-c", script])

    def recover(self, backend: "Backend") -> None:
        backend.nodes.exec(self.node, ["rm", "-f", *(f"/var/lib/cni/networks/kindnet/{ip}" for ip, _ in self.files)])
