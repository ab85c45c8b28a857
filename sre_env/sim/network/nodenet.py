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

import hashlib
import ipaddress
import shlex
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from sre_env.backend import ExecResult
from sre_env.sim.commands.common import wall
from sre_env.sim.commands.disk import sandbox_id as live_sandbox_id

if TYPE_CHECKING:
    from sre_env.sim.kernel.hosts import HostNode, NodeNet
    from sre_env.sim.commands.views import HostView
    from sre_env.sim.kernel.world import World

__all__ = [
    "FwRule",
    "NodeNet",
    "node_net",
    "packet_verdict",
    "firewall_revision",
    "on_reboot",
    "CNI_DIR",
    "ipam_range",
    "allocate_ip",
    "sandbox_id",
    "HOST_COMMANDS",
    "extra_files",
    "extra_dirs",
]

CNI_NETWORK = "kindnet"
CNI_DIR = f"/var/lib/cni/networks/{CNI_NETWORK}"
RULES_FILE = "/etc/iptables/rules.v4"
_CHAINS = ("INPUT", "FORWARD", "OUTPUT")
_KUBE_JUMPS = {
    "INPUT": (("KUBE-PROXY-FIREWALL", "all", "ctstate NEW /* kubernetes load balancer firewall */"), ("KUBE-NODEPORTS", "all", "/* kubernetes health check service ports */"), ("KUBE-EXTERNAL-SERVICES", "all", "ctstate NEW /* kubernetes externally-visible service portals */"), ("KUBE-FIREWALL", "all", "")),
    "FORWARD": (("KUBE-PROXY-FIREWALL", "all", "ctstate NEW /* kubernetes load balancer firewall */"), ("KUBE-FORWARD", "all", "/* kubernetes forwarding rules */"), ("KUBE-SERVICES", "all", "ctstate NEW /* kubernetes service portals */"), ("KUBE-EXTERNAL-SERVICES", "all", "ctstate NEW /* kubernetes externally-visible service portals */")),
    "OUTPUT": (("KUBE-PROXY-FIREWALL", "all", "ctstate NEW /* kubernetes load balancer firewall */"), ("KUBE-SERVICES", "all", "ctstate NEW /* kubernetes service portals */"), ("KUBE-FIREWALL", "all", "")),
}


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
            out.append(_parse_rule(words[1].upper(), words[2:]))
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


# --------------------------------------------------------------------------- iptables CLI
_IPT_VERSION = "iptables v1.8.9 (nf_tables)"


def _cidr(value: str) -> str:
    value = value.strip()
    if value in ("anywhere", "0/0"):
        return "0.0.0.0/0"
    net = ipaddress.ip_network(value if "/" in value else value + "/32", strict=False)
    return str(net)


def _parse_rule(chain: str, args: list[str]) -> FwRule:
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


def _list(net: NodeNet, chains: list[str], numeric: bool, line_numbers: bool) -> str:
    out = []
    for chain in chains:
        out.append(f"Chain {chain} (policy ACCEPT)")
        head = ("num   " if line_numbers else "") + "target     prot opt source               destination         "
        out.append(head)
        n = 0
        rows = [(t, p, "0.0.0.0/0", "0.0.0.0/0", c) for t, p, c in _KUBE_JUMPS[chain]]
        rows += [(r.target, r.protocol, r.source, r.destination, (f"{r.protocol} dpt:{r.dport}" if r.dport else "") + (f" /* {r.comment} */" if r.comment else "")) for r in net.rules if r.chain == chain]
        for target, proto, src, dst, extra in rows:
            n += 1
            if not numeric:
                src = "anywhere" if src == "0.0.0.0/0" else src.removesuffix("/32")
                dst = "anywhere" if dst == "0.0.0.0/0" else dst.removesuffix("/32")
            else:
                src, dst = src.removesuffix("/32"), dst.removesuffix("/32")
            num = f"{n:<6}" if line_numbers else ""
            out.append(f"{num}{target:<10} {proto:<4} --  {src:<20} {dst:<20} {extra}".rstrip())
        out.append("")
    return "\n".join(out)


def _save_text(view_now: float, node: "HostNode", rules: list[FwRule]) -> str:
    stamp = f"{wall(node, view_now):%a %b %d %H:%M:%S %Y}"
    lines = [f"# Generated by iptables-save v1.8.9 (nf_tables) on {stamp}", "*filter", ":INPUT ACCEPT [0:0]", ":FORWARD ACCEPT [0:0]", ":OUTPUT ACCEPT [0:0]"]
    lines += [f"-A {r.chain} {r.spec()}" for r in rules]
    lines += ["COMMIT", f"# Completed on {stamp}"]
    return "\n".join(lines) + "\n"


def iptables(view: "HostView", argv: list[str]) -> ExecResult:
    net = node_net(view.node)
    args = list(argv[1:])
    table = "filter"
    if "-t" in args:
        i = args.index("-t")
        table = args[i + 1] if i + 1 < len(args) else ""
        del args[i : i + 2]
    if table != "filter":
        if table in ("nat", "mangle", "raw"):
            return ExecResult("", 0) if not args or args[0] in ("-L", "-S", "-nL", "-Ln") else ExecResult(f"{_IPT_VERSION}: changing the {table} table is managed by kube-proxy on this node\n", 1)
        return ExecResult(f"{_IPT_VERSION}: can't initialize iptables table `{table}': Table does not exist (do you need to insmod?)\nPerhaps iptables or your kernel needs to be upgraded.\n", 3)
    if not args or args[0] in ("-h", "--help"):
        return ExecResult(f"{_IPT_VERSION}\n\nUsage: iptables -[ACD] chain rule-specification [options]\n       iptables -I chain [rulenum] rule-specification [options]\n       iptables -D chain rulenum [options]\n       iptables -[LS] [chain [rulenum]] [options]\n       iptables -[FZ] [chain] [options]\n", 0 if args else 2)
    # options may come before the command (``iptables -n -L INPUT``)
    for _ in range(len(args)):  # bounded: a line of options only must not spin forever
        if args[0] not in ("-n", "-v", "-nv", "-vn", "-x", "--numeric", "--verbose", "--line-numbers", "-w", "--wait"):
            break
        args.append(args.pop(0))
    if not args:
        return ExecResult(f"{_IPT_VERSION}: no command specified\nTry `iptables -h' or 'iptables --help' for more information.\n", 2)
    flags = [a for a in args if a.startswith("-") and not a.startswith("--")]
    numeric = any("n" in f[1:] and "L" in f or f == "-n" for f in flags)
    line_numbers = "--line-numbers" in args
    op = args[0]
    try:
        if op in ("-L", "--list", "-nL", "-Ln", "-vnL", "-nvL", "-vL", "-Lv"):
            rest = [a for a in args[1:] if not a.startswith("-")]
            chains = [rest[0].upper()] if rest else list(_CHAINS)
            if any(c not in _CHAINS for c in chains):
                return ExecResult(f"iptables: Chain '{rest[0]}' does not exist.\n", 1)
            return ExecResult(_list(net, chains, numeric or "n" in op[1:], line_numbers) + "\n", 0)
        if op in ("-S", "--list-rules"):
            rest = [a for a in args[1:] if not a.startswith("-")]
            chains = [rest[0].upper()] if rest else list(_CHAINS)
            lines = [f"-P {c} ACCEPT" for c in chains] + [f"-A {r.chain} {r.spec()}" for r in net.rules if r.chain in chains]
            return ExecResult("\n".join(lines) + "\n", 0)
        if op in ("-F", "--flush"):
            rest = [a for a in args[1:] if not a.startswith("-")]
            chain = rest[0].upper() if rest else None
            net.rules = [r for r in net.rules if chain is not None and r.chain != chain]
            net.rev += 1
            return ExecResult("", 0)
        if op in ("-A", "--append", "-I", "--insert", "-D", "--delete", "-C", "--check"):
            if len(args) < 2:
                return ExecResult(f"{_IPT_VERSION}: option \"{op}\" requires an argument\nTry `iptables -h' or 'iptables --help' for more information.\n", 2)
            chain = args[1].upper()
            if chain not in _CHAINS:
                return ExecResult("iptables: No chain/target/match by that name.\n", 1)
            rest = args[2:]
            pos = None
            if op in ("-I", "--insert", "-D", "--delete") and rest and rest[0].isdigit():
                pos = int(rest[0])
                rest = rest[1:]
            if op in ("-D", "--delete") and pos is not None and not rest:
                mine = [i for i, r in enumerate(net.rules) if r.chain == chain]
                idx = pos - len(_KUBE_JUMPS[chain]) - 1
                if idx < 0 or idx >= len(mine):
                    return ExecResult("iptables: Index of deletion too big.\n", 1)
                del net.rules[mine[idx]]
                net.rev += 1
                return ExecResult("", 0)
            rule = _parse_rule(chain, rest)
            if op in ("-C", "--check"):
                return ExecResult("", 0) if rule in net.rules else ExecResult("iptables: Bad rule (does a matching rule exist in that chain?).\n", 1)
            if op in ("-D", "--delete"):
                if rule not in net.rules:
                    return ExecResult("iptables: Bad rule (does a matching rule exist in that chain?).\n", 1)
                net.rules.remove(rule)
            elif op in ("-I", "--insert"):
                mine = [i for i, r in enumerate(net.rules) if r.chain == chain]
                at = mine[0] if mine else len(net.rules)
                net.rules.insert(at, rule)
            else:
                net.rules.append(rule)
            net.rev += 1
            return ExecResult("", 0)
    except ValueError as exc:
        return ExecResult(f"{_IPT_VERSION}: {exc}\nTry `iptables -h' or 'iptables --help' for more information.\n", 2)
    return ExecResult(f"{_IPT_VERSION}: unknown option \"{op}\"\nTry `iptables -h' or 'iptables --help' for more information.\n", 2)


def iptables_save(view: "HostView", argv: list[str]) -> ExecResult:
    return ExecResult(_save_text(view.now, view.node, node_net(view.node).rules), 0)


def netfilter_persistent(view: "HostView", argv: list[str]) -> ExecResult:
    net = node_net(view.node)
    action = argv[1] if len(argv) > 1 else ""
    if action == "save":
        view.node.files[RULES_FILE] = _save_text(view.now, view.node, net.rules)
        return ExecResult("run-parts: executing /usr/share/netfilter-persistent/plugins.d/15-ip4tables save\nrun-parts: executing /usr/share/netfilter-persistent/plugins.d/25-ip6tables save\n", 0)
    if action in ("start", "reload"):
        net.rules = saved_rules(view.node)
        net.rev += 1
        return ExecResult("run-parts: executing /usr/share/netfilter-persistent/plugins.d/15-ip4tables start\nrun-parts: executing /usr/share/netfilter-persistent/plugins.d/25-ip6tables start\n", 0)
    if action == "flush":
        net.rules = []
        net.rev += 1
        return ExecResult("", 0)
    return ExecResult("Usage: /usr/sbin/netfilter-persistent (start|stop|restart|reload|flush|save)\n", 1)


# --------------------------------------------------------------------------- IPAM
@lru_cache(maxsize=64)
def ipam_range(pod_cidr: str) -> tuple[str, str, tuple[str, ...]]:
    """(first, last, usable addresses) of host-local's range for a node's podCIDR (gateway .1 excluded)."""
    net = ipaddress.ip_network(pod_cidr, strict=False)
    base = int(net.network_address)
    hosts = [str(ipaddress.IPv4Address(base + i)) for i in range(1, net.num_addresses - 1)]
    return hosts[0], hosts[-1], tuple(hosts[1:])


def sandbox_id(uid: str, attempt: int = 0) -> str:
    """The id of a sandbox the runtime tried to create for pod ``uid`` (a failed attempt; live ones: crictl's)."""
    return hashlib.blake2b(f"sandbox/{uid}/{attempt}".encode(), digest_size=32).hexdigest()


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
            out[rt.ip] = live_sandbox_id(pod)
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
        f'Failed to create pod sandbox: rpc error: code = Unknown desc = failed to setup network for sandbox "{sandbox_id(uid)}": '
        f'plugin type="ptp" failed (add): failed to allocate for range 0: no IP addresses available in range set: {first}-{last}'
    )


# --------------------------------------------------------------------------- host files and commands
def extra_dirs(view: "HostView") -> dict[str, list[str]]:
    """Generated directories: the CNI config and the reservations of live sandboxes (leaks are files in ``node.files``)."""
    node = view.node
    live = [str((p.get("status") or {}).get("podIP")) for p in view.pods if (p.get("status") or {}).get("podIP") and not p["spec"].get("hostNetwork")]
    return {
        "/var/lib/cni": ["networks/", "results/"],
        "/var/lib/cni/networks": [f"{CNI_NETWORK}/"],
        CNI_DIR: sorted(live, key=_ip_key) + ["last_reserved_ip.0", "lock"],
        "/etc/cni": ["net.d/"],
        "/etc/cni/net.d": ["10-kindnet.conflist"],
        "/etc/iptables": [],
    } if node is not None else {}


def _ip_key(ip: str) -> tuple[int, ...]:
    try:
        return tuple(int(x) for x in ip.split("."))
    except ValueError:
        return (999,)


def extra_files(view: "HostView", path: str) -> str | None:
    node = view.node
    if path == "/etc/cni/net.d/10-kindnet.conflist":
        cidr = f"10.244.{node.index}.0/24"
        return (
            '{\n\t"cniVersion": "0.3.1",\n\t"name": "kindnet",\n\t"plugins": [\n\t{\n\t\t"type": "ptp",\n\t\t"ipMasq": false,\n\t\t"ipam": {\n\t\t\t"type": "host-local",\n'
            f'\t\t\t"routes": [\n\t\t\t\t{{ "dst": "0.0.0.0/0" }}\n\t\t\t],\n\t\t\t"ranges": [\n\t\t\t[ {{ "subnet": "{cidr}" }} ]\n\t\t\t]\n\t\t}}\n\t\t,\n\t\t"mtu": 1500\n\t\t\n\t}},\n'
            '\t{\n\t\t"type": "portmap",\n\t\t"capabilities": {\n\t\t\t"portMappings": true\n\t\t}\n\t}\n\t]\n}\n'
        )
    if path.startswith(CNI_DIR + "/"):
        leaf = path[len(CNI_DIR) + 1 :]
        if leaf == "lock":
            return ""
        if leaf == "last_reserved_ip.0":
            _, _, usable = ipam_range(f"10.244.{node.index}.0/24")
            return usable[(node_net(node).last_reserved - 1) % len(usable)]
        for p in view.pods:
            if str((p.get("status") or {}).get("podIP")) == leaf and not p["spec"].get("hostNetwork"):
                return f"{live_sandbox_id(p)}\neth0"
    return None


HOST_COMMANDS: dict[str, Any] = {
    "iptables": iptables,
    "iptables-legacy": iptables,
    "iptables-nft": iptables,
    "iptables-save": iptables_save,
    "netfilter-persistent": netfilter_persistent,
}
