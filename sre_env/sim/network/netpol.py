"""NetworkPolicy evaluation (networking.k8s.io/v1), as a CNI that enforces it would.

A pod is *isolated* for ingress (egress) when some policy in its namespace
selects it and lists ``Ingress`` (``Egress``) in its policy types (or, without
``policyTypes``, has ``ingress`` rules / is ingress-only by default). Traffic to
an isolated pod is allowed only when some rule of some selecting policy admits
the peer and the port; both the sender's egress and the receiver's ingress
must allow a connection. Denied packets are dropped, so clients see a dial
timeout, never a refusal.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sre_env.kube.selectors import label_selector_matches

if TYPE_CHECKING:
    from sre_env.sim.kernel.world import World

__all__ = ["Peer", "policies_selecting", "allowed", "connection_allowed"]

Obj = dict[str, Any]


@dataclass(frozen=True)
class Peer:
    """One end of a connection: a pod (labels, namespace) or an address outside the pod network."""

    ip: str
    namespace: str | None = None
    labels: tuple[tuple[str, str], ...] = ()
    pod: Obj | None = None
    host_network: bool = False


def _policy_types(pol: Obj) -> tuple[str, ...]:
    spec = pol.get("spec") or {}
    types = spec.get("policyTypes")
    if types:
        return tuple(types)
    return ("Ingress", "Egress") if spec.get("egress") else ("Ingress",)


@dataclass
class _PolicyIndex:
    """NetworkPolicies by namespace (name order), rebuilt when any policy changes."""

    rev: int = -1
    by_ns: dict[str, list[Obj]] = field(default_factory=dict)


def _index(world: "World") -> _PolicyIndex:
    cache = world.slot(_PolicyIndex)
    rev = world.store.kind_revision.get("NetworkPolicy", 0)
    if cache.rev != rev:
        cache.rev = rev
        by_ns: dict[str, list[Obj]] = {}
        for pol in world.store.iter("NetworkPolicy"):
            by_ns.setdefault(pol["metadata"]["namespace"], []).append(pol)
        for ns in by_ns:
            by_ns[ns].sort(key=lambda p: p["metadata"]["name"])
        cache.by_ns = by_ns
    return cache


def _policies(world: "World", namespace: str) -> list[Obj]:
    return _index(world).by_ns.get(namespace, [])


def any_policies(world: "World") -> bool:
    return bool(_index(world).by_ns)


def policies_selecting(world: "World", peer: Peer, direction: str) -> list[Obj]:
    """Policies that isolate ``peer`` for ``direction`` ("Ingress" or "Egress")."""
    if peer.namespace is None or peer.host_network:
        return []
    labels = dict(peer.labels)
    return [p for p in _policies(world, peer.namespace) if direction in _policy_types(p) and label_selector_matches((p.get("spec") or {}).get("podSelector") or {}, labels)]


def _ns_labels(world: "World", namespace: str) -> dict[str, str]:
    ns = world.store.find("Namespace", namespace)
    labels = dict(((ns or {}).get("metadata") or {}).get("labels") or {})
    labels.setdefault("kubernetes.io/metadata.name", namespace)
    return labels


def _peer_matches(world: "World", rule_peer: Obj, policy_ns: str, other: Peer) -> bool:
    block = rule_peer.get("ipBlock")
    if block:
        try:
            ip = ipaddress.ip_address(other.ip)
            if ip not in ipaddress.ip_network(block.get("cidr", ""), strict=False):
                return False
            return not any(ip in ipaddress.ip_network(e, strict=False) for e in block.get("except") or ())
        except ValueError:
            return False
    if other.namespace is None or other.host_network:
        return False  # pod and namespace selectors only ever match pods
    pod_sel = rule_peer.get("podSelector")
    ns_sel = rule_peer.get("namespaceSelector")
    if ns_sel is not None:
        if not label_selector_matches(ns_sel, _ns_labels(world, other.namespace)):
            return False
    elif other.namespace != policy_ns:
        return False
    if pod_sel is not None:
        return label_selector_matches(pod_sel, dict(other.labels))
    return True


def _port_matches(rule_ports: list[Obj] | None, port: int, protocol: str, named: dict[str, int]) -> bool:
    if not rule_ports:
        return True
    for rp in rule_ports:
        if (rp.get("protocol") or "TCP").upper() != protocol.upper():
            continue
        want = rp.get("port")
        if want is None:
            return True
        if isinstance(want, str) and not want.isdigit():
            if named.get(want) == port:
                return True
            continue
        lo = int(want)
        hi = int(rp.get("endPort") or lo)
        if lo <= port <= hi:
            return True
    return False


def _named_ports(pod: Obj | None) -> dict[str, int]:
    out: dict[str, int] = {}
    for ctr in ((pod or {}).get("spec") or {}).get("containers") or ():
        for p in ctr.get("ports") or ():
            if p.get("name"):
                out[p["name"]] = int(p.get("containerPort", 0))
    return out


def allowed(world: "World", src: Peer, dst: Peer, port: int, protocol: str = "TCP") -> bool:
    """Both the sender's egress policies and the receiver's ingress policies admit the connection."""
    egress = policies_selecting(world, src, "Egress")
    if egress:
        named = _named_ports(dst.pod)
        ok = False
        for pol in egress:
            for rule in (pol.get("spec") or {}).get("egress") or ():
                peers = rule.get("to")
                if (not peers or any(_peer_matches(world, p, pol["metadata"]["namespace"], dst) for p in peers)) and _port_matches(rule.get("ports"), port, protocol, named):
                    ok = True
                    break
            if ok:
                break
        if not ok:
            return False
    ingress = policies_selecting(world, dst, "Ingress")
    if ingress:
        named = _named_ports(dst.pod)
        for pol in ingress:
            for rule in (pol.get("spec") or {}).get("ingress") or ():
                peers = rule.get("from")
                if (not peers or any(_peer_matches(world, p, pol["metadata"]["namespace"], src) for p in peers)) and _port_matches(rule.get("ports"), port, protocol, named):
                    return True
        return False
    return True


def peer_for_pod(world: "World", pod: Obj, ip: str | None = None) -> Peer:
    meta = pod["metadata"]
    rt = world.runtimes.get(meta.get("uid", ""))
    return Peer(
        ip=ip or (rt.ip if rt else (pod.get("status") or {}).get("podIP", "")),
        namespace=meta["namespace"],
        labels=tuple(sorted((meta.get("labels") or {}).items())),
        pod=pod,
        host_network=bool(pod["spec"].get("hostNetwork")),
    )


def connection_allowed(world: "World", src_pod: Obj | None, dst_pod: Obj, port: int, protocol: str = "TCP", src_ip: str = "") -> bool:
    """Convenience: a pod (or an outside address) connecting to a pod."""
    if not any_policies(world):
        return True
    src = peer_for_pod(world, src_pod) if src_pod is not None else Peer(ip=src_ip or "172.18.0.1")
    return allowed(world, src, peer_for_pod(world, dst_pod), port, protocol)
