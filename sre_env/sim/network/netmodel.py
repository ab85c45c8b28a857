"""Routes as seen from one client pod: its DNS, its node's kube-proxy, policies and firewalls.

:func:`route_from` is what ``resolve_route(..., client=uid)`` computes. The
client's ``/etc/resolv.conf`` (from its dnsPolicy) decides which nameserver it
asks and how names expand; CoreDNS's Corefile decides the answer; the client
node's kube-proxy decides where a ClusterIP goes (live rules, stale ones, or
none); ``internalTrafficPolicy: Local`` keeps traffic on the client's node;
NetworkPolicies and the nodes' host firewalls decide whether packets reach the
chosen pod. A dropped packet is a dial timeout, a rejected one a refusal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sre_env.kube.endpoints import service_port_backends
from sre_env.sim.network import dns, kubeproxy, netpol, nodenet
from sre_env.sim.network.routing import Route, split_address

if TYPE_CHECKING:
    from sre_env.sim.kernel.hosts import HostNode
    from sre_env.sim.kernel.world import World

__all__ = ["Client", "client_for", "route_from", "route_to_ip", "resolve_from", "connect_backends", "path_verdict", "service_for_ip", "network_revision", "routing_revision", "external_client"]

Obj = dict[str, Any]
_IP = re.compile(r"^\d{1,3}(?:\.\d{1,3}){3}$")
#: where traffic from outside the cluster (the load generator) comes from: the docker bridge gateway
EXTERNAL_IP = "172.18.0.1"


@dataclass(frozen=True)
class Client:
    pod: Obj | None
    namespace: str
    node: str | None
    ip: str
    host_network: bool
    peer: netpol.Peer


def client_for(world: "World", uid: str) -> Client | None:
    pod = world.pod_by_uid(uid)
    if pod is None:
        return None
    rt = world.runtimes.get(uid)
    node = pod["spec"].get("nodeName")
    host_net = bool(pod["spec"].get("hostNetwork"))
    ip = rt.ip if rt is not None and rt.ip else ((world.hosts[node].internal_ip if node in world.hosts and host_net else "") or "")
    return Client(pod, pod["metadata"]["namespace"], node, ip, host_net, netpol.peer_for_pod(world, pod, ip))


def external_client() -> Client:
    return Client(None, "", None, EXTERNAL_IP, True, netpol.Peer(ip=EXTERNAL_IP))


def network_revision(world: "World") -> tuple[int, ...]:
    """What, beyond Services/Endpoints/pods, changes routes: policies, ingresses, DNS config, firewalls, IPAM."""
    kr = world.store.kind_revision
    return (kr.get("NetworkPolicy", 0), kr.get("Ingress", 0), kr.get("ConfigMap", 0), kr.get("DaemonSet", 0), nodenet.firewall_revision(world))


def routing_revision(world: "World") -> tuple[int, ...]:
    """Changes whenever a route could: services, endpoints, pod set, volumes, runtimes, faults, the network."""
    kr = world.store.kind_revision
    return (kr.get("Service", 0), kr.get("Endpoints", 0), world.store.bound_pod_revision, kr.get("PersistentVolume", 0), kr.get("PersistentVolumeClaim", 0), world.runtime_epoch, world.fault_epoch, *network_revision(world))


@dataclass
class _ServiceIPs:
    """Services by cluster IP, rebuilt when any Service changes."""

    rev: int = -1
    by_ip: dict[str, Obj] = field(default_factory=dict)


def service_for_ip(world: "World", ip: str) -> Obj | None:
    cache = world.slot(_ServiceIPs)
    rev = world.store.kind_revision.get("Service", 0)
    if cache.rev != rev:
        cache.rev = rev
        cache.by_ip = {s["spec"].get("clusterIP"): s for s in world.store.iter("Service") if s["spec"].get("clusterIP") not in (None, "", "None")}
    return cache.by_ip.get(ip)


def _pod_by_ip(world: "World", ip: str) -> Obj | None:
    uid = world.pod_uid_by_ip(ip)
    return world.pod_by_uid(uid) if uid else None


def path_verdict(world: "World", src: Client, dst_pod: Obj | None, dst_ip: str, port: int, protocol: str = "TCP") -> str | None:
    """None when packets from ``src`` reach ``dst_ip:port``, else "DROP" or "REJECT"."""
    hosts = world.hosts
    if nodenet.any_rules(world):
        dst_node_name = dst_pod["spec"].get("nodeName") if dst_pod is not None else next((h.name for h in hosts.values() if h.internal_ip == dst_ip), None)
        dst_host = dst_pod is None or bool(dst_pod["spec"].get("hostNetwork"))
        src_node: "HostNode | None" = hosts.get(src.node) if src.node else None
        dst_node = hosts.get(dst_node_name) if dst_node_name else None
        v = nodenet.packet_verdict(src_node, src.ip, src.host_network, dst_node, dst_ip, dst_host, protocol, port)
        if v:
            return v
    if netpol.any_policies(world):
        dst_peer = netpol.peer_for_pod(world, dst_pod, dst_ip) if dst_pod is not None else netpol.Peer(ip=dst_ip)
        if not netpol.allowed(world, src.peer, dst_peer, port, protocol):
            return "DROP"
    return None


def _dns_reachable(world: "World", src: Client, server: str) -> bool:
    if server == dns.KUBE_DNS_IP:
        svc = service_for_ip(world, server)
        if svc is None:
            return False
        backends = _service_backends(world, src, svc, 53, "UDP")
        if not backends:
            return False
        now = world.clock.now
        for uid, ip, tport in backends:
            pod = world.pod_by_uid(uid)
            rt = world.runtimes.get(uid)
            if pod is None or rt is None or not any(c.serving(now) for c in rt.containers.values()):
                continue
            if path_verdict(world, src, pod, ip, tport, "UDP") is None:
                return True
        return False
    pod = _pod_by_ip(world, server)
    return path_verdict(world, src, pod, server, 53, "UDP") is None


def _service_backends(world: "World", src: Client, svc: Obj, port: int, protocol: str) -> list[tuple[str, str, int]] | None:
    """Where the client's node sends ``svc:port``: (pod uid, ip, target port) per endpoint; None: no rule."""
    ns, name = svc["metadata"]["namespace"], svc["metadata"]["name"]
    sport = next((p for p in svc["spec"].get("ports") or () if int(p.get("port", -1)) == port and (p.get("protocol") or "TCP") == protocol), None)
    if sport is None:
        return None
    rules = kubeproxy.service_rules(world, src.node) if src.node else None
    if rules is not None:
        got = rules.get((ns, name, port, protocol))
        return list(got) if got is not None else None
    return service_port_backends(world.store.find("Endpoints", name, ns), sport)


def connect_backends(world: "World", src: Client, backends: list[tuple[str, str, int]], protocol: str, target: str, shown: str) -> Route:
    """Connect to one of ``backends`` (kube-proxy picks uniformly); ``shown`` is the address in errors."""
    share = 1.0 / len(backends)
    good: list[tuple[str, float]] = []
    error = None
    filtered = nodenet.any_rules(world) or netpol.any_policies(world)
    for uid, ip, tport in backends:
        pod = world.pod_by_uid(uid)
        if pod is None:
            error = error or f"dial tcp {shown}: i/o timeout"
            continue
        verdict = path_verdict(world, src, pod, ip, tport, protocol) if filtered else None
        if verdict == "DROP":
            error = error or f"dial tcp {shown}: i/o timeout"
            continue
        if verdict == "REJECT" or not world.pod_listens(uid, tport):
            error = error or f"dial tcp {shown}: connect: connection refused"
            continue
        good.append((uid, share))
    ok = share * len(good)
    ip = shown.rsplit(":", 1)[0]
    if not good:
        return Route(0.0, error or f"dial tcp {shown}: connect: connection refused", target=target, ip=ip)
    norm = tuple((uid, s / ok) for uid, s in good)
    return Route(ok, None if ok >= 0.999 else error, norm, target, ip)


def route_to_ip(world: "World", src: Client, ip: str, port: int, target: str, protocol: str = "TCP") -> Route:
    svc = service_for_ip(world, ip)
    shown = f"{ip}:{port}"
    if svc is not None:
        backends = _service_backends(world, src, svc, port, protocol)
        if backends is None:
            return Route(0.0, f"dial tcp {shown}: i/o timeout", target=target, ip=ip)
        if not backends:
            return Route(0.0, f"dial tcp {shown}: connect: connection refused", target=target, ip=ip)
        if (svc["spec"].get("internalTrafficPolicy") or "Cluster") == "Local" and src.node:
            local = [b for b in backends if (world.pod_by_uid(b[0]) or {}).get("spec", {}).get("nodeName") == src.node]
            if not local:
                # kube-proxy: "has no local endpoints" -> DROP
                return Route(0.0, f"dial tcp {shown}: i/o timeout", target=target, ip=ip)
            backends = local
        return connect_backends(world, src, backends, protocol, target, shown)
    pod = _pod_by_ip(world, ip)
    if pod is not None:
        return connect_backends(world, src, [(pod["metadata"]["uid"], ip, port)], protocol, target, shown)
    return Route(0.0, f"dial tcp {shown}: i/o timeout", target=target, ip=ip)


def resolve_from(world: "World", src: Client, host: str) -> dns.Answer:
    host = host.strip()
    if _IP.match(host.rstrip(".")):
        return dns.Answer(host.rstrip("."), None, host)
    if host.rstrip(".") == "localhost":
        return dns.Answer("127.0.0.1", None, host)
    return dns.lookup(world, src.pod, src.namespace, host, lambda server: _dns_reachable(world, src, server), src.ip)


def route_from(world: "World", uid: str, namespace: str, address: str, default_port: int | None = None) -> Route | None:
    """The route ``address`` takes from pod ``uid``; None when the pod is unknown (the caller falls back)."""
    src = client_for(world, uid)
    if src is None:
        return None
    host, port = split_address(address)
    port = port if port is not None else default_port
    target = f"{host}:{port}"
    if port is None:
        return Route(0.0, f"dial tcp: address {host}: missing port in address", target=target)
    ans = resolve_from(world, src, host)
    if ans.ip is None:
        return Route(0.0, f"dial tcp: {ans.error}", target=target)
    if ans.ip.startswith("127."):
        rt = world.runtimes.get(uid)
        ok = rt is not None and any(c.listen_port == port and c.serving(world.clock.now) for c in rt.containers.values())
        return Route(1.0, None, ((uid, 1.0),), target, ans.ip) if ok else Route(0.0, f"dial tcp {ans.ip}:{port}: connect: connection refused", target=target, ip=ans.ip)
    return route_to_ip(world, src, ans.ip, port, target)
