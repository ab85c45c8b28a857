"""A node's own networking state: its host firewall (iptables filter table) and its pod IPAM.

*Firewall.* Rules an admin (or a fault) adds with ``iptables`` live in the
kernel until the next boot; ``netfilter-persistent save`` writes them to
``/etc/iptables/rules.v4``, which is loaded again at boot. A packet between two
pods on different nodes crosses the sender's FORWARD chain (OUTPUT for
host-network senders) and the receiver's FORWARD chain (INPUT for the host):
a DROP there is a dial timeout, a REJECT a refused connection.

*IPAM.* kindnet's CNI (``ptp`` + ``host-local``) hands each pod sandbox an
address of the node's pod CIDR and records it as a file named after the
address in ``/var/lib/cni/networks/kindnet``. A reservation whose sandbox is
gone (a runtime crash, a failed CNI DEL) is *leaked*: the address stays taken
until someone removes the file. When every address is taken, new sandboxes
fail with host-local's "no IP addresses available in range set".
"""

from __future__ import annotations

import ipaddress
import shlex
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

from sre_env.sim.node.containerd import failed_sandbox_id, sandbox_id
from sre_env.sim.node.wallclock import wall

if TYPE_CHECKING:
    from sre_env.sim.kernel.hosts import HostNode, NodeNet
    from sre_env.sim.kernel.world import World

__all__ = [
    "FwRule",
    "NodeNet",
    "node_net",
    "packet_verdict",
    "firewall_revision",
    "any_rules",
    "on_reboot",
    "CHAINS",
    "RULES_FILE",
    "parse_rule",
    "saved_rules",
    "save_text",
    "leaked_reservations",
    "CNI_NETWORK",
    "CNI_DIR",
    "ipam_range",
    "in_use",
    "allocate_ip",
    "exhausted_message",
]

CNI_NETWORK = "kindnet"
CNI_DIR = f"/var/lib/cni/networks/{CNI_NETWORK}"
RULES_FILE = "/etc/iptables/rules.v4"
#: the filter table's built-in chains
CHAINS = ("INPUT", "FORWARD", "OUTPUT")


@dataclass(frozen=True)
class FwRule:
    chain: str
    target: str  # ACCEPT | DROP | REJECT
    source: str = "0.0.0.0/0"
    destination: str = "0.0.0.0/0"
    protocol: str = "all"
    dport: int | None = None
    comment: str = ""

    def spec(self) -> str:
        parts = []
        if self.source != "0.0.0.0/0":
            parts.append(f"-s {self.source}")
        if self.destination != "0.0.0.0/0":
            parts.append(f"-d {self.destination}")
        if self.protocol != "all":
            parts.append(f"-p {self.protocol}")
            if self.dport is not None:
                parts.append(f"-m {self.protocol} --dport {self.dport}")
        if self.comment:
            parts.append(f'-m comment --comment "{self.comment}"' if " " in self.comment else f"-m comment --comment {self.comment}")
        parts.append(f"-j {self.target}")
        return " ".join(parts)

    def matches(self, src: str, dst: str, protocol: str, dport: int) -> bool:
        if self.protocol != "all" and self.protocol != protocol.lower():
            return False
        if self.dport is not None and self.dport != dport:
            return False
        try:
            return ipaddress.ip_address(src) in ipaddress.ip_network(self.source, strict=False) and ipaddress.ip_address(dst) in ipaddress.ip_network(self.destination, strict=False)
        except ValueError:
            return False


def node_net(node: "HostNode") -> "NodeNet":
    return node.net


def firewall_revision(world: "World") -> int:
    return sum(h.net.rev for h in world.hosts.values())


def any_rules(world: "World") -> bool:
    """Whether any node has host firewall rules at all (the common case: none, nothing to evaluate)."""
    return any(h.net.rules for h in world.hosts.values())


def saved_rules(node: "HostNode") -> list[FwRule]:
    """The rules in /etc/iptables/rules.v4 (what netfilter-persistent loads at boot)."""
    text = node.files.get(RULES_FILE)
    if not text:
        return []
    return parse_save(text)


def parse_save(text: str) -> list[FwRule]:
    """The filter table's ``-A`` lines of an iptables-save dump (bad lines are skipped, as a partial restore)."""
    out: list[FwRule] = []
    table = "filter"
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("*"):
            table = line[1:]
            continue
        if table != "filter" or not line.startswith("-A "):
            continue
        try:
            words = shlex.split(line)
            out.append(parse_rule(words[1].upper(), words[2:]))
        except (ValueError, IndexError):
            continue
    return out


def leaked_reservations(node: "HostNode") -> dict[str, str]:
    """IPAM reservation files on disk (address -> content) that no live sandbox owns are leaks; all files here."""
    prefix = CNI_DIR + "/"
    return {p[len(prefix):]: c for p, c in node.files.items() if p.startswith(prefix) and p.count("/") == prefix.count("/")}


def on_reboot(node: "HostNode") -> None:
    """Boot: the kernel's rules are gone; netfilter-persistent loads the saved file."""
    net = node_net(node)
    net.rules = saved_rules(node)
    net.rev += 1


def _verdict(node: "HostNode", chain: str, src: str, dst: str, protocol: str, dport: int) -> str | None:
    for rule in node_net(node).rules:
        if rule.chain == chain and rule.matches(src, dst, protocol, dport):
            return None if rule.target == "ACCEPT" else rule.target
    return None


def packet_verdict(src_node: "HostNode | None", src_ip: str, src_host: bool, dst_node: "HostNode | None", dst_ip: str, dst_host: bool, protocol: str, dport: int) -> str | None:
    """None when the packet gets through the hosts' firewalls, else "DROP" or "REJECT"."""
    if src_node is not None:
        v = _verdict(src_node, "OUTPUT" if src_host else "FORWARD", src_ip, dst_ip, protocol, dport)
        if v:
            return v
    if dst_node is not None and (dst_node is not src_node or dst_host):
        v = _verdict(dst_node, "INPUT" if dst_host else "FORWARD", src_ip, dst_ip, protocol, dport)
        if v:
            return v
    return None


# --------------------------------------------------------------------------- rule specs and the saved file
def _cidr(value: str) -> str:
    value = value.strip()
    if value in ("anywhere", "0/0"):
        return "0.0.0.0/0"
    net = ipaddress.ip_network(value if "/" in value else value + "/32", strict=False)
    return str(net)


def parse_rule(chain: str, args: list[str]) -> FwRule:
    """A rule from iptables' rule-specification words (``-s ADDR -p tcp --dport N -j DROP``); ValueError in iptables' words."""
    src = dst = "0.0.0.0/0"
    proto, dport, target, comment = "all", None, "", ""
    i = 0
    while i < len(args):
        a = args[i]
        nxt = args[i + 1] if i + 1 < len(args) else None
        if a in ("-s", "--source", "--src") and nxt:
            src, i = _cidr(nxt), i + 2
        elif a in ("-d", "--destination", "--dst") and nxt:
            dst, i = _cidr(nxt), i + 2
        elif a in ("-p", "--protocol") and nxt:
            proto, i = nxt.lower(), i + 2
        elif a in ("--dport", "--destination-port") and nxt:
            dport, i = int(nxt), i + 2
        elif a in ("-j", "--jump") and nxt:
            target, i = nxt.upper(), i + 2
        elif a == "-m" and nxt:
            i += 2
        elif a == "--comment" and nxt:
            comment, i = nxt, i + 2
        elif a in ("-i", "-o", "--in-interface", "--out-interface", "--reject-with") and nxt:
            i += 2
        else:
            raise ValueError(f"Bad argument `{a}'")
    if target not in ("ACCEPT", "DROP", "REJECT"):
        raise ValueError(f"Couldn't load target `{target}':No such file or directory" if target else "no target given")
    return FwRule(chain, target, src, dst, proto, dport, comment)


def save_text(now: float, node: "HostNode", rules: list[FwRule]) -> str:
    """An iptables-save dump of the filter table (what ``netfilter-persistent save`` writes to RULES_FILE)."""
    stamp = f"{wall(node, now):%a %b %d %H:%M:%S %Y}"
    lines = [f"# Generated by iptables-save v1.8.9 (nf_tables) on {stamp}", "*filter", ":INPUT ACCEPT [0:0]", ":FORWARD ACCEPT [0:0]", ":OUTPUT ACCEPT [0:0]"]
    lines += [f"-A {r.chain} {r.spec()}" for r in rules]
    lines += ["COMMIT", f"# Completed on {stamp}"]
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- IPAM
@lru_cache(maxsize=64)
def ipam_range(pod_cidr: str) -> tuple[str, str, tuple[str, ...]]:
    """(first, last, usable addresses) of host-local's range for a node's podCIDR (gateway .1 excluded)."""
    net = ipaddress.ip_network(pod_cidr, strict=False)
    base = int(net.network_address)
    hosts = [str(ipaddress.IPv4Address(base + i)) for i in range(1, net.num_addresses - 1)]
    return hosts[0], hosts[-1], tuple(hosts[1:])


def _node_cidr(world: "World", node: str) -> str:
    obj = world.store.find("Node", node)
    cidr = ((obj or {}).get("spec") or {}).get("podCIDR")
    return cidr or f"{world.layout.pod_cidr_prefix}.{world.hosts[node].index}.0/24"


def in_use(world: "World", node: str) -> dict[str, str]:
    """Addresses held by live pod sandboxes on ``node`` -> sandbox id."""
    out: dict[str, str] = {}
    for uid, rt in world.runtimes.items():
        pod = world.pod_by_uid(uid)
        if pod is not None and pod["spec"].get("nodeName") == node and not pod["spec"].get("hostNetwork") and rt.ip:
            out[rt.ip] = sandbox_id(pod)
    return out


def allocate_ip(world: "World", node: str) -> str | None:
    """host-local's next free address after the last reserved one, or None when the range is full."""
    net = node_net(world.hosts[node])
    _, _, usable = ipam_range(_node_cidr(world, node))
    taken = set(in_use(world, node)) | set(leaked_reservations(world.hosts[node]))
    n = len(usable)
    start = net.last_reserved % n if n else 0
    for k in range(n):
        ip = usable[(start + k) % n]
        if ip not in taken:
            net.last_reserved = (start + k) % n + 1
            return ip
    return None


def exhausted_message(world: "World", node: str, uid: str) -> str:
    first, last, _ = ipam_range(_node_cidr(world, node))
    return (
        f'Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "{failed_sandbox_id(uid)}": '
        f'plugin type="ptp" failed (add): failed to allocate for range 0: no IP addresses available in range set: {first}-{last}'
    )
