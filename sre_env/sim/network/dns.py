"""Cluster DNS: a pod's resolv.conf, its resolver's search walk, and CoreDNS's Corefile.

A lookup is computed the way it happens on a node: the pod's ``dnsPolicy`` (and
``dnsConfig``) gives its nameservers, search domains and ``ndots``; the Go/glibc
resolver tries the candidate names in order; each query goes to a nameserver.
``10.96.0.10`` is the ``kube-dns`` Service, answered by the CoreDNS pods with
the server blocks of the ``coredns`` ConfigMap in ``kube-system`` — parsed for
the plugins that decide an answer (``rewrite name``, ``template``, ``hosts``,
``kubernetes``, ``forward``), in CoreDNS's own plugin order, not the file's.
Any other nameserver is the node's upstream resolver, which knows nothing of
``cluster.local``. Whether a query reaches a server at all (kube-proxy,
NetworkPolicy, a partition) is the caller's business: :func:`lookup` takes a
``reach`` callback.

The error texts are Go's ``net.DNSError`` strings (``lookup X on S:53: no such
host``, ``... server misbehaving``, ``... read udp A->S:53: i/o timeout``).
"""

from __future__ import annotations

import re
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable

if TYPE_CHECKING:
    from sre_env.sim.kernel.world import World

__all__ = [
    "KUBE_DNS_IP",
    "NODE_NAMESERVER",
    "DEFAULT_COREFILE",
    "Corefile",
    "parse_corefile",
    "corefile",
    "resolv_conf",
    "Answer",
    "lookup",
    "coredns_objects",
]

KUBE_DNS_IP = "10.96.0.10"
#: the nodes' upstream resolver (their /etc/resolv.conf); it does not know cluster names
NODE_NAMESERVER = "169.254.169.254"
NODE_SEARCH = ("c.internal",)
CLUSTER_DOMAIN = "cluster.local"
COREDNS_IMAGE = "registry.k8s.io/coredns/coredns:v1.11.3"

#: the Corefile kubeadm (and kind) install
DEFAULT_COREFILE = """.:53 {
    errors
    health {
       lameduck 5s
    }
    ready
    kubernetes cluster.local in-addr.arpa ip6.arpa {
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }
    prometheus :9153
    forward . /etc/resolv.conf {
       max_concurrent 1000
    }
    cache 30
    loop
    reload
    loadbalance
}
"""


# --------------------------------------------------------------------------- Corefile
@dataclass(frozen=True)
class Directive:
    name: str
    args: tuple[str, ...]
    block: tuple[tuple[str, ...], ...] = ()


@dataclass(frozen=True)
class ServerBlock:
    zones: tuple[str, ...]  # FQDNs with trailing dot ("." for the root)
    port: int
    directives: tuple[Directive, ...]

    def plugin(self, name: str) -> list[Directive]:
        return [d for d in self.directives if d.name == name]


@dataclass(frozen=True)
class Corefile:
    blocks: tuple[ServerBlock, ...]
    error: str | None = None  # a parse error: CoreDNS refuses to (re)load it


def _tokens(text: str) -> list[str]:
    out: list[str] = []
    for raw in text.splitlines():
        line = raw.split("#", 1)[0] if '"' not in raw else raw
        i = 0
        while i < len(line):
            ch = line[i]
            if ch.isspace():
                i += 1
            elif ch in "{}":
                out.append(ch)
                i += 1
            elif ch == '"':
                j = line.find('"', i + 1)
                j = len(line) if j < 0 else j
                out.append(line[i + 1 : j])
                i = j + 1
            else:
                j = i
                while j < len(line) and not line[j].isspace() and line[j] not in "{}":
                    j += 1
                out.append(line[i:j])
                i = j
        out.append("\n")
    return out


def _fqdn(zone: str) -> str:
    zone = zone.strip().lower()
    return zone if zone.endswith(".") else zone + "."


def parse_corefile(text: str) -> Corefile:
    """Server blocks and their directives; a syntax error leaves ``error`` set, as ``coredns`` would log."""
    toks = _tokens(text)
    blocks: list[ServerBlock] = []
    i, n = 0, len(toks)

    def line(j: int) -> tuple[list[str], int]:
        words = []
        while j < n and toks[j] not in ("\n", "{", "}"):
            words.append(toks[j])
            j += 1
        return words, j

    try:
        while i < n:
            if toks[i] == "\n":
                i += 1
                continue
            keys, i = line(i)
            if i >= n or toks[i] != "{":
                raise ValueError(f"Corefile:{len(blocks) + 1} - Error during parsing: Unexpected token '{' '.join(keys)}', expecting '{{'")
            i += 1
            directives: list[Directive] = []
            while i < n and toks[i] != "}":
                if toks[i] == "\n":
                    i += 1
                    continue
                words, i = line(i)
                sub: list[tuple[str, ...]] = []
                if i < n and toks[i] == "{":
                    i += 1
                    while i < n and toks[i] != "}":
                        if toks[i] == "\n":
                            i += 1
                            continue
                        inner, i = line(i)
                        if inner:
                            sub.append(tuple(inner))
                        if i < n and toks[i] == "{":
                            raise ValueError("Corefile - Error during parsing: Unexpected '{' in a plugin block")
                    if i >= n:
                        raise ValueError("Corefile - Error during parsing: Unexpected EOF")
                    i += 1
                if words:
                    directives.append(Directive(words[0].lower(), tuple(words[1:]), tuple(sub)))
            if i >= n:
                raise ValueError("Corefile - Error during parsing: Unexpected EOF")
            i += 1
            zones, port = [], 53
            for key in keys:
                key = key.removeprefix("dns://")
                host, _, p = key.rpartition(":") if ":" in key else (key, "", "")
                if p:
                    port = int(p)
                zones.append(_fqdn(host or "."))
            blocks.append(ServerBlock(tuple(zones), port, tuple(directives)))
    except ValueError as exc:
        return Corefile((), str(exc))
    return Corefile(tuple(blocks))


@dataclass
class _CorefileCache:
    """The Corefile CoreDNS runs with: the text it last parsed, and the last one that loaded."""

    parsed: tuple[str, Corefile] | None = None
    good: Corefile | None = None


def corefile(world: "World") -> Corefile | None:
    """The Corefile the CoreDNS pods run with (None: no ``coredns`` ConfigMap, an older world)."""
    cm = world.store.find("ConfigMap", "coredns", "kube-system")
    cache = world.slot(_CorefileCache)
    if cm is None:
        # running CoreDNS pods keep the configuration they loaded last
        return cache.parsed[1] if cache.parsed is not None else None
    text = (cm.get("data") or {}).get("Corefile", "")
    hit = cache.parsed
    if hit is not None and hit[0] == text:
        return hit[1]
    parsed = parse_corefile(text)
    if parsed.error is None:
        cache.good = parsed
    elif cache.good is not None:
        # CoreDNS's reload keeps serving the last configuration that loaded
        parsed = cache.good
    cache.parsed = (text, parsed)
    return parsed


# --------------------------------------------------------------------------- resolv.conf
@dataclass(frozen=True)
class ResolvConf:
    nameservers: tuple[str, ...]
    searches: tuple[str, ...]
    ndots: int


def resolv_conf(pod: dict[str, Any]) -> ResolvConf:
    """What the kubelet writes into a pod's /etc/resolv.conf for its dnsPolicy and dnsConfig."""
    spec = pod.get("spec") or {}
    policy = spec.get("dnsPolicy") or "ClusterFirst"
    ns = (pod.get("metadata") or {}).get("namespace") or "default"
    host_net = bool(spec.get("hostNetwork"))
    if policy == "ClusterFirstWithHostNet" or (policy == "ClusterFirst" and not host_net):
        servers = [KUBE_DNS_IP]
        searches = [f"{ns}.svc.{CLUSTER_DOMAIN}", f"svc.{CLUSTER_DOMAIN}", CLUSTER_DOMAIN]
        ndots = 5
    elif policy == "None":
        servers, searches, ndots = [], [], 1
    else:  # Default, or ClusterFirst on the host network: the node's own resolver
        servers, searches, ndots = [NODE_NAMESERVER], list(NODE_SEARCH), 1
    cfg = spec.get("dnsConfig") or {}
    servers += [str(s) for s in cfg.get("nameservers") or ()]
    searches += [str(s) for s in cfg.get("searches") or ()]
    for opt in cfg.get("options") or ():
        if isinstance(opt, dict) and opt.get("name") == "ndots":
            try:
                ndots = int(opt.get("value"))
            except (TypeError, ValueError):
                pass
    return ResolvConf(tuple(servers[:3]), tuple(searches[:32]), ndots)


def candidate_names(name: str, conf: ResolvConf) -> list[str]:
    """The absolute names the resolver tries, in order (Go's ``dnsConfig.nameList``)."""
    name = name.lower()
    if name.endswith("."):
        return [name]
    with_search = [f"{name}.{s.rstrip('.')}." for s in conf.searches]
    if name.count(".") >= conf.ndots:
        return [name + "."] + with_search
    return with_search + [name + "."]


# --------------------------------------------------------------------------- answering
@dataclass(frozen=True)
class Answer:
    ip: str | None
    error: str | None = None  # Go's DNSError text when ip is None
    #: the absolute name that answered (after the search walk)
    name: str = ""
    #: the server that gave the final answer or error
    server: str = ""
    rcode: str = "NOERROR"


@dataclass
class _Reply:
    rcode: str  # NOERROR | NXDOMAIN | SERVFAIL | REFUSED | TIMEOUT
    ip: str | None = None


_RCODES = {"NOERROR", "NXDOMAIN", "SERVFAIL", "REFUSED", "FORMERR", "NOTIMP"}


def _match_name(kind: str, pattern: str, name: str) -> bool:
    if kind == "exact":
        return name == _fqdn(pattern)
    if kind == "prefix":
        return name.startswith(pattern.lower())
    if kind == "suffix":
        return name.endswith(pattern.lower()) or name.endswith(_fqdn(pattern))
    if kind == "substring":
        return pattern.lower() in name
    if kind == "regex":
        try:
            return re.search(pattern, name) is not None
        except re.error:
            return False
    return False


def _apply_rewrite(d: Directive, name: str) -> tuple[bool, str]:
    """One ``rewrite [continue|stop] name [TYPE] FROM TO`` rule: (matched, new name)."""
    args = list(d.args)
    if args and args[0] in ("continue", "stop"):
        args = args[1:]
    if not args or args[0] != "name":
        return False, name
    args = args[1:]
    kind = "exact"
    if args and args[0] in ("exact", "prefix", "suffix", "substring", "regex"):
        kind, args = args[0], args[1:]
    if len(args) < 2:
        return False, name
    src, dst = args[0], args[1]
    if not _match_name(kind, src, name):
        return False, name
    if kind == "exact":
        return True, _fqdn(dst)
    if kind == "prefix":
        return True, _fqdn(dst.lower() + name[len(src):])
    if kind == "suffix":
        s = src.lower().rstrip(".")
        base = name.rstrip(".")
        return True, _fqdn(base[: len(base) - len(s)] + dst.lower().rstrip("."))
    if kind == "substring":
        return True, _fqdn(name.replace(src.lower(), dst.lower(), 1))
    try:
        new = re.sub(src, dst.replace("{", "\\g<").replace("}", ">"), name, count=1)
    except (re.error, IndexError):
        return True, name
    return True, _fqdn(new)


def _template(d: Directive, name: str) -> _Reply | None:
    """``template CLASS TYPE [ZONE...] { match ...; answer ...; rcode ... }`` for an A query."""
    args = [a.upper() for a in d.args[:2]]
    cls = args[0] if args else "ANY"
    qtype = args[1] if len(args) > 1 else "ANY"
    if cls not in ("IN", "ANY") or qtype not in ("A", "ANY"):
        return None
    zones = [_fqdn(z) for z in d.args[2:]] or ["."]
    if not any(z == "." or name.endswith(z) for z in zones):
        return None
    matches = [line[1] for line in d.block if line[0] == "match" and len(line) > 1]
    if matches:
        try:
            if not any(re.search(m, name) for m in matches):
                return None
        except re.error:
            return None
    rcode = "NOERROR"
    ip = None
    for line in d.block:
        if line[0] == "rcode" and len(line) > 1 and line[1].upper() in _RCODES:
            rcode = line[1].upper()
        elif line[0] == "answer" and len(line) > 1:
            rr = " ".join(line[1:]).split()
            if len(rr) >= 2 and rr[-2].upper() == "A":
                ip = rr[-1]
    return _Reply(rcode, ip if rcode == "NOERROR" else None)


def _hosts(d: Directive, name: str) -> _Reply | None:
    zones = [_fqdn(a) for a in d.args if not a.startswith("/")] or ["."]
    if not any(z == "." or name.endswith(z) for z in zones):
        return None
    for line in d.block:
        if line[0] in ("fallthrough", "ttl", "reload", "no_reverse"):
            continue
        if len(line) >= 2 and re.match(r"^\d+\.\d+\.\d+\.\d+$", line[0]) and any(_fqdn(h) == name for h in line[1:]):
            return _Reply("NOERROR", line[0])
    fall = any(line[0] == "fallthrough" for line in d.block)
    return None if fall else _Reply("NXDOMAIN")


def kubernetes_answer(world: "World", name: str, zone: str) -> _Reply:
    """The ``kubernetes`` plugin: ``svc.ns.svc.<zone>`` -> ClusterIP (or ready pod IPs), pod A records."""
    labels = name[: -len(zone)].rstrip(".").split(".") if name != zone else []
    if len(labels) == 3 and labels[2] == "svc":
        svc = world.store.find("Service", labels[0], labels[1])
        if svc is None:
            return _Reply("NXDOMAIN")
        spec = svc.get("spec") or {}
        if spec.get("type") == "ExternalName":
            return _Reply("NOERROR", None)
        ip = spec.get("clusterIP")
        if ip and ip != "None":
            return _Reply("NOERROR", ip)
        ep = world.store.find("Endpoints", labels[0], labels[1])
        for sub in (ep or {}).get("subsets") or ():
            for addr in sub.get("addresses") or ():
                return _Reply("NOERROR", addr.get("ip"))
        return _Reply("NXDOMAIN")
    if len(labels) == 3 and labels[2] == "pod":
        ip = labels[0].replace("-", ".")
        return _Reply("NOERROR", ip) if re.match(r"^\d+\.\d+\.\d+\.\d+$", ip) else _Reply("NXDOMAIN")
    if len(labels) == 4 and labels[3] == "svc":  # hostname.subdomain.ns.svc: StatefulSet pods
        ep = world.store.find("Endpoints", labels[1], labels[2])
        for sub in (ep or {}).get("subsets") or ():
            for addr in sub.get("addresses") or ():
                if addr.get("hostname") == labels[0] or (addr.get("targetRef") or {}).get("name") == labels[0]:
                    return _Reply("NOERROR", addr.get("ip"))
        return _Reply("NXDOMAIN")
    return _Reply("NXDOMAIN")


def upstream_answer(name: str) -> _Reply:
    """The node's resolver: public names resolve; cluster and search-domain names do not."""
    base = name.rstrip(".")
    if base.endswith("." + CLUSTER_DOMAIN) or base == CLUSTER_DOMAIN or "." not in base or base.endswith(".internal") or base.endswith(".local"):
        return _Reply("NXDOMAIN")
    h = zlib.crc32(base.encode())
    return _Reply("NOERROR", f"{34 + h % 180}.{(h >> 8) % 250 + 1}.{(h >> 16) % 250 + 1}.{(h >> 24) % 250 + 1}")


def coredns_answer(world: "World", core: Corefile, name: str) -> _Reply:
    """What the CoreDNS server gives for an A query of ``name`` (an FQDN)."""
    blocks = [b for b in core.blocks if b.port == 53]
    best: ServerBlock | None = None
    best_len = -1
    for b in blocks:
        for z in b.zones:
            if (z == "." or name == z or name.endswith("." + z) or name.endswith(z)) and len(z) > best_len:
                best, best_len = b, len(z)
    if best is None:
        return _Reply("REFUSED")
    # plugin.cfg order: rewrite, template, hosts, kubernetes, forward
    for d in best.plugin("rewrite"):
        hit, new = _apply_rewrite(d, name)
        if hit:
            name = new
            if d.args and d.args[0] == "continue":
                continue
            break
    for d in best.plugin("template"):
        r = _template(d, name)
        if r is not None:
            return r
    for d in best.plugin("hosts"):
        r = _hosts(d, name)
        if r is not None:
            return r
    for d in best.plugin("kubernetes"):
        zones = [_fqdn(z) for z in d.args] or list(best.zones)
        zone = next((z for z in zones if name == z or name.endswith("." + z)), None)
        if zone is None:
            continue
        r = kubernetes_answer(world, name, zone)
        fall = next((line for line in d.block if line[0] == "fallthrough"), None)
        if r.rcode == "NXDOMAIN" and fall is not None and (len(fall) == 1 or any(name.endswith(_fqdn(z)) for z in fall[1:])):
            break
        return r
    for d in best.plugin("forward"):
        if not d.args:
            continue
        frm = _fqdn(d.args[0])
        if frm != "." and not name.endswith(frm):
            continue
        return upstream_answer(name)
    return _Reply("SERVFAIL")


def _go_error(query: str, server: str, reply: str, client_ip: str) -> str:
    if reply == "TIMEOUT":
        port = 32768 + zlib.crc32(f"{client_ip}/{query}".encode()) % 28000
        return f"lookup {query} on {server}:53: read udp {client_ip}:{port}->{server}:53: i/o timeout"
    if reply in ("SERVFAIL", "REFUSED"):
        return f"lookup {query} on {server}:53: server misbehaving"
    return f"lookup {query} on {server}:53: no such host"


def lookup(
    world: "World",
    pod: dict[str, Any] | None,
    namespace: str,
    host: str,
    reach: Callable[[str], bool],
    client_ip: str = "",
) -> Answer:
    """Resolve ``host`` (an A query) from ``pod`` (or a plain ClusterFirst pod in ``namespace``).

    ``reach(server)`` says whether a UDP query to that nameserver gets through.
    """
    conf = resolv_conf(pod if pod is not None else {"metadata": {"namespace": namespace}, "spec": {}})
    if not conf.nameservers:
        return Answer(None, f"lookup {host} on [::1]:53: read udp [::1]:53: connect: connection refused", rcode="TIMEOUT")
    core = corefile(world)
    last_server = conf.nameservers[0]
    last_rcode = "NXDOMAIN"
    for name in candidate_names(host, conf):
        for server in conf.nameservers:
            last_server = server
            if not reach(server):
                last_rcode = "TIMEOUT"
                continue
            if server == KUBE_DNS_IP and core is not None:
                reply = coredns_answer(world, core, name)
            elif server == KUBE_DNS_IP:  # a world without the ConfigMap: the stock configuration
                reply = kubernetes_answer(world, name, CLUSTER_DOMAIN + ".") if name.endswith("." + CLUSTER_DOMAIN + ".") else upstream_answer(name)
            else:
                reply = upstream_answer(name)
            if reply.rcode == "NOERROR" and reply.ip:
                return Answer(reply.ip, None, name, server)
            last_rcode = reply.rcode if reply.rcode != "NOERROR" else "NXDOMAIN"
            if reply.rcode in ("NXDOMAIN", "NOERROR"):
                break  # an authoritative "no": the next candidate name, not the next server
    return Answer(None, _go_error(host, last_server, last_rcode, client_ip or "10.244.0.1"), "", last_server, last_rcode)


# --------------------------------------------------------------------------- objects
def coredns_objects() -> list[dict[str, Any]]:
    """The ``coredns`` ConfigMap and Deployment as kubeadm installs them (Corefile mounted at /etc/coredns)."""
    labels = {"k8s-app": "kube-dns"}
    cm = {
        "kind": "ConfigMap",
        "apiVersion": "v1",
        "metadata": {"name": "coredns", "namespace": "kube-system"},
        "data": {"Corefile": DEFAULT_COREFILE},
    }
    dep = {
        "kind": "Deployment",
        "apiVersion": "apps/v1",
        "metadata": {"name": "coredns", "namespace": "kube-system", "labels": dict(labels)},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": dict(labels)},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}},
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {
                    "containers": [
                        {
                            "name": "coredns",
                            "image": COREDNS_IMAGE,
                            "args": ["-conf", "/etc/coredns/Corefile"],
                            "ports": [
                                {"name": "dns", "containerPort": 53, "protocol": "UDP"},
                                {"name": "dns-tcp", "containerPort": 53, "protocol": "TCP"},
                                {"name": "metrics", "containerPort": 9153, "protocol": "TCP"},
                            ],
                            "resources": {"limits": {"memory": "170Mi"}, "requests": {"cpu": "100m", "memory": "70Mi"}},
                            "volumeMounts": [{"name": "config-volume", "mountPath": "/etc/coredns", "readOnly": True}],
                        }
                    ],
                    "dnsPolicy": "Default",
                    "priorityClassName": "system-cluster-critical",
                    "serviceAccountName": "coredns",
                    "nodeSelector": {"kubernetes.io/os": "linux"},
                    "tolerations": [
                        {"key": "CriticalAddonsOnly", "operator": "Exists"},
                        {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"},
                    ],
                    "volumes": [{"name": "config-volume", "configMap": {"name": "coredns", "items": [{"key": "Corefile", "path": "Corefile"}], "defaultMode": 420}}],
                },
            },
        },
    }
    return [cm, dep]

