"""A node's networking as its own tools and files show it: ``iptables``, ``netfilter-persistent``, the CNI's files.

The state (the kernel's rules, the saved file, IPAM reservations) lives in
:mod:`sre_env.sim.network.nodenet`; these binaries read and change it the way
an admin on the node would, and render it in the real tools' layout.
"""

from __future__ import annotations

from sre_env.backend import ExecResult
from sre_env.sim.commands.views import HostView
from sre_env.sim.kernel.hosts import NodeNet
from sre_env.sim.network.nodenet import (
    CHAINS,
    CNI_DIR,
    CNI_NETWORK,
    RULES_FILE,
    ipam_range,
    node_net,
    parse_rule,
    save_text,
    saved_rules,
)
from sre_env.sim.node.containerd import sandbox_id

__all__ = ["iptables", "iptables_save", "netfilter_persistent", "cni_dirs", "cni_file", "IPT_VERSION"]

IPT_VERSION = "iptables v1.8.9 (nf_tables)"
#: kube-proxy's jumps at the head of each chain (listed before an admin's rules, counted by ``-D CHAIN N``)
KUBE_JUMPS = {
    "INPUT": (("KUBE-PROXY-FIREWALL", "all", "ctstate NEW /* kubernetes load balancer firewall */"), ("KUBE-NODEPORTS", "all", "/* kubernetes health check service ports */"), ("KUBE-EXTERNAL-SERVICES", "all", "ctstate NEW /* kubernetes externally-visible service portals */"), ("KUBE-FIREWALL", "all", "")),
    "FORWARD": (("KUBE-PROXY-FIREWALL", "all", "ctstate NEW /* kubernetes load balancer firewall */"), ("KUBE-FORWARD", "all", "/* kubernetes forwarding rules */"), ("KUBE-SERVICES", "all", "ctstate NEW /* kubernetes service portals */"), ("KUBE-EXTERNAL-SERVICES", "all", "ctstate NEW /* kubernetes externally-visible service portals */")),
    "OUTPUT": (("KUBE-PROXY-FIREWALL", "all", "ctstate NEW /* kubernetes load balancer firewall */"), ("KUBE-SERVICES", "all", "ctstate NEW /* kubernetes service portals */"), ("KUBE-FIREWALL", "all", "")),
}


def _list(net: NodeNet, chains: list[str], numeric: bool, line_numbers: bool) -> str:
    out = []
    for chain in chains:
        out.append(f"Chain {chain} (policy ACCEPT)")
        head = ("num   " if line_numbers else "") + "target     prot opt source               destination         "
        out.append(head)
        n = 0
        rows = [(t, p, "0.0.0.0/0", "0.0.0.0/0", c) for t, p, c in KUBE_JUMPS[chain]]
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


def iptables(view: HostView, argv: list[str], stdin: str | None = None) -> ExecResult:
    net = node_net(view.node)
    args = list(argv[1:])
    table = "filter"
    if "-t" in args:
        i = args.index("-t")
        table = args[i + 1] if i + 1 < len(args) else ""
        del args[i : i + 2]
    if table != "filter":
        if table in ("nat", "mangle", "raw"):
            return ExecResult("", 0) if not args or args[0] in ("-L", "-S", "-nL", "-Ln") else ExecResult(f"{IPT_VERSION}: changing the {table} table is managed by kube-proxy on this node\n", 1)
        return ExecResult(f"{IPT_VERSION}: can't initialize iptables table `{table}': Table does not exist (do you need to insmod?)\nPerhaps iptables or your kernel needs to be upgraded.\n", 3)
    if not args or args[0] in ("-h", "--help"):
        return ExecResult(f"{IPT_VERSION}\n\nUsage: iptables -[ACD] chain rule-specification [options]\n       iptables -I chain [rulenum] rule-specification [options]\n       iptables -D chain rulenum [options]\n       iptables -[LS] [chain [rulenum]] [options]\n       iptables -[FZ] [chain] [options]\n", 0 if args else 2)
    # options may come before the command (``iptables -n -L INPUT``)
    for _ in range(len(args)):  # bounded: a line of options only must not spin forever
        if args[0] not in ("-n", "-v", "-nv", "-vn", "-x", "--numeric", "--verbose", "--line-numbers", "-w", "--wait"):
            break
        args.append(args.pop(0))
    if not args:
        return ExecResult(f"{IPT_VERSION}: no command specified\nTry `iptables -h' or 'iptables --help' for more information.\n", 2)
    flags = [a for a in args if a.startswith("-") and not a.startswith("--")]
    numeric = any("n" in f[1:] and "L" in f or f == "-n" for f in flags)
    line_numbers = "--line-numbers" in args
    op = args[0]
    try:
        if op in ("-L", "--list", "-nL", "-Ln", "-vnL", "-nvL", "-vL", "-Lv"):
            rest = [a for a in args[1:] if not a.startswith("-")]
            chains = [rest[0].upper()] if rest else list(CHAINS)
            if any(c not in CHAINS for c in chains):
                return ExecResult(f"iptables: Chain '{rest[0]}' does not exist.\n", 1)
            return ExecResult(_list(net, chains, numeric or "n" in op[1:], line_numbers) + "\n", 0)
        if op in ("-S", "--list-rules"):
            rest = [a for a in args[1:] if not a.startswith("-")]
            chains = [rest[0].upper()] if rest else list(CHAINS)
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
                return ExecResult(f"{IPT_VERSION}: option \"{op}\" requires an argument\nTry `iptables -h' or 'iptables --help' for more information.\n", 2)
            chain = args[1].upper()
            if chain not in CHAINS:
                return ExecResult("iptables: No chain/target/match by that name.\n", 1)
            rest = args[2:]
            pos = None
            if op in ("-I", "--insert", "-D", "--delete") and rest and rest[0].isdigit():
                pos = int(rest[0])
                rest = rest[1:]
            if op in ("-D", "--delete") and pos is not None and not rest:
                mine = [i for i, r in enumerate(net.rules) if r.chain == chain]
                idx = pos - len(KUBE_JUMPS[chain]) - 1
                if idx < 0 or idx >= len(mine):
                    return ExecResult("iptables: Index of deletion too big.\n", 1)
                del net.rules[mine[idx]]
                net.rev += 1
                return ExecResult("", 0)
            rule = parse_rule(chain, rest)
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
        return ExecResult(f"{IPT_VERSION}: {exc}\nTry `iptables -h' or 'iptables --help' for more information.\n", 2)
    return ExecResult(f"{IPT_VERSION}: unknown option \"{op}\"\nTry `iptables -h' or 'iptables --help' for more information.\n", 2)


def iptables_save(view: HostView, argv: list[str], stdin: str | None = None) -> ExecResult:
    return ExecResult(save_text(view.now, view.node, node_net(view.node).rules), 0)


def netfilter_persistent(view: HostView, argv: list[str], stdin: str | None = None) -> ExecResult:
    net = node_net(view.node)
    action = argv[1] if len(argv) > 1 else ""
    if action == "save":
        view.node.files[RULES_FILE] = save_text(view.now, view.node, net.rules)
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


def cni_dirs(view: HostView) -> dict[str, list[str]]:
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


def cni_file(view: HostView, path: str) -> str | None:
    """The CNI's config and reservation files of live sandboxes (None: not one of them)."""
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
                return f"{sandbox_id(p)}\neth0"
    return None
