"""Service networking: DNS name -> Service -> port -> Endpoints -> a listening process.

A route is what a client in one pod gets when it dials ``host:port``: the share
of connections that reach a process listening on the target port, the error the
others see (the same strings Go's net package prints), and which server pods
take the traffic. Routes only change when objects change, so the world caches
them by store revision.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sre_env.sim.kernel.world import World

__all__ = ["Route", "resolve_route", "split_address", "CLUSTER_DOMAIN"]

CLUSTER_DOMAIN = "cluster.local"


@dataclass(frozen=True)
class Route:
    ok: float  # share of connection attempts that reach a listening server
    error: str | None  # error text for the others ("connection refused", ...)
    #: (pod uid, share of traffic) among reachable servers
    servers: tuple[tuple[str, float], ...] = ()
    target: str = ""  # "host:port" as dialled
    ip: str = ""  # cluster IP the name resolved to


def split_address(addr: str) -> tuple[str, int | None]:
    addr = addr.strip()
    for scheme in ("mongodb://", "http://", "https://", "redis://", "memcached://", "grpc://"):
        if addr.startswith(scheme):
            addr = addr[len(scheme):]
    addr = addr.split("/", 1)[0]
    if "@" in addr:
        addr = addr.rsplit("@", 1)[1]
    if ":" in addr:
        host, _, port = addr.rpartition(":")
        try:
            return host, int(port)
        except ValueError:
            return host, None
    return addr, None


def _service_for_host(world: "World", host: str, namespace: str) -> tuple[Any, str | None]:
    """Resolve a DNS name the way a pod with dnsPolicy ClusterFirst does."""
    host = host.rstrip(".").lower()
    parts = host.split(".")
    if host.replace(".", "").isdigit():
        svc = world.service_by_ip(host)
        return svc, None if svc else "ip"
    if len(parts) == 1:
        name, ns = parts[0], namespace
    elif len(parts) == 2 or (len(parts) >= 3 and parts[2] == "svc"):
        name, ns = parts[0], parts[1]
        if len(parts) > 3 and ".".join(parts[3:]) != CLUSTER_DOMAIN:
            return None, "nxdomain"
    else:
        return None, "nxdomain"
    svc = world.store.find("Service", name, ns)
    return (svc, None) if svc is not None else (None, "nxdomain")


def resolve_route(world: "World", namespace: str, address: str, default_port: int | None = None, client: str | None = None) -> Route:
    """The route to ``address``; with ``client`` (a pod uid), as that pod sees it (see sre_env.sim.network.netmodel)."""
    if client is not None:
        from sre_env.sim.network.netmodel import route_from

        seen = route_from(world, client, namespace, address, default_port)
        if seen is not None:
            return seen
    host, port = split_address(address)
    port = port if port is not None else default_port
    target = f"{host}:{port}"
    if port is None:
        return Route(0.0, f"dial tcp: address {host}: missing port in address", target=target)
    svc, err = _service_for_host(world, host, namespace)
    if svc is None:
        if err == "ip":
            pod_uid = world.pod_uid_by_ip(host)
            if pod_uid and world.pod_listens(pod_uid, port):
                return Route(1.0, None, ((pod_uid, 1.0),), target, host)
            return Route(0.0, f"dial tcp {target}: connect: connection refused", target=target)
        return Route(0.0, f"dial tcp: lookup {host} on 10.96.0.10:53: no such host", target=target)
    cluster_ip = svc["spec"].get("clusterIP", "")
    sport = next((p for p in svc["spec"].get("ports", []) if int(p.get("port", -1)) == port), None)
    if sport is None:
        return Route(0.0, f"dial tcp {cluster_ip}:{port}: i/o timeout", target=target, ip=cluster_ip)
    ep = world.store.find("Endpoints", svc["metadata"]["name"], svc["metadata"]["namespace"])
    backends: list[tuple[str, int]] = []
    for subset in (ep or {}).get("subsets") or ():
        ports = subset.get("ports") or []
        match = next((p for p in ports if p.get("name", "") == sport.get("name", "")), None)
        if match is None and len(ports) == 1 and not sport.get("name"):
            match = ports[0]
        if match is None:
            continue
        for addr in subset.get("addresses") or ():
            uid = (addr.get("targetRef") or {}).get("uid")
            if uid:
                backends.append((uid, int(match["port"])))
    if not backends:
        return Route(0.0, f"dial tcp {cluster_ip}:{port}: connect: connection refused", target=target, ip=cluster_ip)
    share = 1.0 / len(backends)
    good = tuple((uid, share) for uid, tport in backends if world.pod_listens(uid, tport))
    ok = share * len(good)
    if not good:
        return Route(0.0, f"dial tcp {cluster_ip}:{port}: connect: connection refused", target=target, ip=cluster_ip)
    norm = tuple((uid, s / ok) for uid, s in good)
    return Route(ok, None if ok >= 0.999 else f"dial tcp {cluster_ip}:{port}: connect: connection refused", norm, target, cluster_ip)
