"""``dmesg`` and ``journalctl`` over the node's kernel log and journal.

The kernel log comes from :mod:`sre_env.sim.node.kernel_log`; the journal merges a few boot
entries (systemd starting containerd and the kubelet) with ``node.journal``,
the (t, unit, text) lines the model records. Timestamps use the node's own
clock, skew included, as the real tools would.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from typing import Any

from sre_env.backend import ExecResult
from sre_env.kube.timefmt import EPOCH
from sre_env.sim.commands.views import HostView
from sre_env.sim.kernel.hashing import stable_hash
from sre_env.sim.kernel.hosts import HostNode
from sre_env.sim.node.kernel_log import LEVELS, KLine, kernel_log
from sre_env.sim.node.wallclock import wall

__all__ = ["dmesg", "journalctl", "unit_pid", "journal_entries", "norm_unit"]

_DMESG_USAGE = "Try 'dmesg --help' for more information.\n"


def unit_pid(node: HostNode, unit: str) -> int:
    """Stable PIDs for the long-running daemons (they were started at boot)."""
    base = {"containerd": 612, "kubelet": 845, "chronyd": 488, "chrony": 488, "sshd": 701, "ssh": 701, "cron": 455, "systemd-journald": 231, "systemd": 1}
    b = base.get(unit, 900)
    if b == 1:
        return 1
    return b + stable_hash(node.name, unit) % 40


def norm_unit(u: str) -> str:
    return u[:-8] if u.endswith(".service") else u


def _fmt_dmesg(lines: list[KLine], node: HostNode, now: float, ctime: bool, notime: bool, decode: bool, raw: bool) -> str:
    out = []
    boot_sim = now - node.uptime(now)
    stamps: dict[float, str] = {}
    for up, lvl, text in lines:
        if notime:
            prefix = ""
        elif ctime:
            sec = int(boot_sim + up)
            prefix = stamps.get(-sec - 1)
            if prefix is None:
                dt = wall(node, sec)
                prefix = stamps[-sec - 1] = f"[{dt:%a %b} {dt.day:2d} {dt:%H:%M:%S %Y}] "
        else:
            prefix = stamps.get(up)
            if prefix is None:
                us = int(round(up * 1e6))
                prefix = stamps[up] = f"[{us // 1000000:5d}.{us % 1000000:06d}] "
        if raw:
            prefix = f"<{lvl}>" + prefix
        elif decode:
            prefix = f"kern  :{LEVELS[lvl] + ' ':<7}: " + prefix
        if "\n" in text:
            text = text.replace("\n", "\n" + " " * len(prefix))
        out.append(prefix + text)
    return "\n".join(out) + ("\n" if out else "")


def _parse_levels(spec: str) -> set[int] | str:
    levels: set[int] = set()
    for name in spec.split(","):
        name = name.strip()
        if name.endswith("+") or name.startswith("+"):
            base = name.strip("+")
            if base not in LEVELS:
                return name
            i = LEVELS.index(base)
            levels |= set(range(i, 8)) if name.endswith("+") else set(range(0, i + 1))
            continue
        if name not in LEVELS:
            return name
        levels.add(LEVELS.index(name))
    return levels


def dmesg(view: HostView, argv: list[str], stdin: str | None = None) -> ExecResult:
    node, now, pods, variant = view.node, view.now, view.pods, view.variant
    ctime = notime = decode = raw = clear = False
    levels: set[int] | None = None
    i = 1
    while i < len(argv):
        a = argv[i]
        i += 1
        if a.startswith("--"):
            name, eq, val = a.partition("=")
            if name in ("--ctime", "--human"):
                ctime = True
            elif name == "--notime":
                notime = True
            elif name == "--decode":
                decode = True
            elif name == "--raw":
                raw = True
            elif name in ("--kernel", "--follow", "--color", "--nopager", "--reltime", "--show-delta", "--userspace"):
                continue
            elif name == "--time-format":
                if not eq:
                    i += 1
                ctime = True
            elif name in ("--level",):
                if not eq:
                    if i >= len(argv):
                        return ExecResult(f"dmesg: option '--level' requires an argument\n{_DMESG_USAGE}", 1)
                    val = argv[i]
                    i += 1
                lv = _parse_levels(val)
                if isinstance(lv, str):
                    return ExecResult(f"dmesg: unknown level '{lv}'\n", 1)
                levels = lv
            elif name in ("--clear", "--read-clear"):
                clear = True
            elif name == "--help":
                return ExecResult("\nUsage:\n dmesg [options]\n\nDisplay or control the kernel ring buffer.\n\nOptions:\n -C, --clear                 clear the kernel ring buffer\n -c, --read-clear            read and clear all messages\n -H, --human                 human readable output\n -k, --kernel                display kernel messages\n -l, --level <list>          restrict output to defined levels\n -T, --ctime                 show human-readable timestamp (may be inaccurate!)\n -t, --notime                don't show any timestamp with messages\n -w, --follow                wait for new messages\n -x, --decode                decode facility and level to readable string\n\nFor more details see dmesg(1).\n", 0)
            else:
                return ExecResult(f"dmesg: unrecognized option '{a}'\n{_DMESG_USAGE}", 1)
            continue
        if a.startswith("-") and len(a) > 1:
            j = 1
            while j < len(a):
                c = a[j]
                j += 1
                if c in "TH":
                    ctime = True
                elif c == "t":
                    notime = True
                elif c == "x":
                    decode = True
                elif c == "r":
                    raw = True
                elif c in "kwLdeSu":
                    continue
                elif c in "Cc":
                    clear = c == "C"
                elif c in "lf":
                    val = a[j:]
                    if not val:
                        if i >= len(argv):
                            return ExecResult(f"dmesg: option requires an argument -- '{c}'\n{_DMESG_USAGE}", 1)
                        val = argv[i]
                        i += 1
                    if c == "l":
                        lv = _parse_levels(val)
                        if isinstance(lv, str):
                            return ExecResult(f"dmesg: unknown level '{lv}'\n", 1)
                        levels = lv
                    break
                else:
                    return ExecResult(f"dmesg: invalid option -- '{c}'\n{_DMESG_USAGE}", 1)
            continue
        return ExecResult(f"dmesg: bad usage\n{_DMESG_USAGE}", 1)
    if clear:
        return ExecResult("", 0)
    # The kernel log only grows when a disk error or a pod start is logged; the same
    # state prints the same text, so repeated looks at an idle node are free.
    key = (
        node.name,
        node.kernel,
        node.clock_offset_s,
        variant,
        tuple((len(d.error_ticks), d.error_ticks[-1] if d.error_ticks else None) for d in node.disks),
        (len(node.kmsg), node.kmsg[-1] if node.kmsg else None),
        tuple(p["metadata"].get("uid") for p in pods),
        ctime, notime, decode, raw,
        tuple(sorted(levels)) if levels is not None else None,
        int(node.uptime(now)) if ctime else 0,
    )
    settled = all(not d.error_ticks or d.error_ticks[-1][0] <= now for d in node.disks) and (not node.kmsg or node.kmsg[-1][0] <= now)
    text = _DMESG_CACHE.get(key) if settled else None
    if text is None:
        lines = kernel_log(node, now, pods, variant)
        if levels is not None:
            lines = [ln for ln in lines if ln[1] in levels]
        text = _fmt_dmesg(lines, node, now, ctime, notime, decode, raw)
        if settled:
            if len(_DMESG_CACHE) > 64:
                _DMESG_CACHE.clear()
            _DMESG_CACHE[key] = text
    return ExecResult(text, 0)


_DMESG_CACHE: dict[tuple, str] = {}


def _prio(unit: str, text: str) -> int:
    if unit == "kubelet" and len(text) > 1 and text[0] in "EWIF" and text[1].isdigit():
        return {"E": 3, "W": 4, "I": 6, "F": 2}[text[0]]
    if "level=error" in text or "level=fatal" in text:
        return 3
    if "level=warning" in text:
        return 4
    return 6


def journal_entries(node: HostNode, now: float, pods: list[dict[str, Any]], variant: int = 0, kernel: bool = True) -> list[tuple[float, str, int, str]]:
    """(sim time, unit, priority, text) merged from boot entries, the model's journal and the kernel log."""
    boot = now - node.uptime(now)
    kpid = unit_pid(node, "kubelet")
    cpid = unit_pid(node, "containerd")

    def klog(dt_s: float, where: str, msg: str) -> str:
        w = wall(node, boot + dt_s)
        return f"I{w:%m%d %H:%M:%S}.{int(dt_s * 1e6) % 1000000:06d} {kpid:>7} {where}] {msg}"

    def ctd(dt_s: float, msg: str) -> str:
        w = wall(node, boot + dt_s)
        return f'time="{w:%Y-%m-%dT%H:%M:%S}.{int(dt_s * 1e9) % 10**9:09d}Z" level=info msg="{msg}"'

    del cpid
    entries: list[tuple[float, str, int, str]] = [
        (boot + 3.2, "systemd", 6, "Starting containerd.service - containerd container runtime..."),
        (boot + 3.3, "containerd", 6, ctd(3.3, "starting containerd") + " revision=88bf19b2105c8b17560993bee28a01ddc2f97182 version=1.7.24"),
        (boot + 3.4, "containerd", 6, ctd(3.4, "containerd successfully booted in 0.061524s")),
        (boot + 3.4, "systemd", 6, "Started containerd.service - containerd container runtime."),
        (boot + 3.5, "systemd", 6, "Started kubelet.service - kubelet: The Kubernetes Node Agent."),
        (boot + 11.4, "kubelet", 6, klog(11.4, "server.go:484", f'"Kubelet version" kubeletVersion="{node.kubelet_version}"')),
        (boot + 11.5, "kubelet", 6, klog(11.5, "server.go:1256", '"Started kubelet"')),
        (boot + 11.9, "kubelet", 6, klog(11.9, "kubelet_node_status.go:76", f'"Attempting to register node" node="{node.name}"')),
        (boot + 12.0, "kubelet", 6, klog(12.0, "kubelet_node_status.go:79", f'"Successfully registered node" node="{node.name}"')),
    ]
    for item in list(node.journal):
        try:
            t, unit, text = item
        except (TypeError, ValueError):
            continue
        u = norm_unit(str(unit))
        entries.append((float(t), u, _prio(u, str(text)), str(text)))
    if kernel:
        for up, lvl, text in kernel_log(node, now, pods, variant):
            entries.append((boot + up, "kernel", lvl, text))
    entries = [e for e in entries if e[0] <= now]
    entries.sort(key=lambda e: e[0])
    return entries


_REL = re.compile(r"^-?(\d+)\s*(s|sec|secs|second|seconds|m|min|mins|minute|minutes|h|hour|hours|d|day|days)\s*(ago)?$")
_MULT = {"s": 1, "sec": 1, "secs": 1, "second": 1, "seconds": 1, "m": 60, "min": 60, "mins": 60, "minute": 60, "minutes": 60, "h": 3600, "hour": 3600, "hours": 3600, "d": 86400, "day": 86400, "days": 86400}


def _parse_since(node: HostNode, now: float, s: str) -> float | None:
    """A journalctl timestamp spec -> simulated seconds (None if unparsable)."""
    s = s.strip()
    off = node.clock_offset_s
    today = wall(node, now).replace(hour=0, minute=0, second=0, microsecond=0)

    def to_sim(dt: datetime) -> float:
        return (dt - EPOCH).total_seconds() - off

    if s == "now":
        return now
    if s == "today":
        return to_sim(today)
    if s == "yesterday":
        return to_sim(today - timedelta(days=1))
    if s == "tomorrow":
        return to_sim(today + timedelta(days=1))
    m = _REL.match(s)
    if m and (s.startswith("-") or m.group(3)):
        return now - int(m.group(1)) * _MULT[m.group(2)]
    for fmt in ("%Y-%m-%d %H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%d", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M:%SZ"):
        try:
            return to_sim(datetime.strptime(s, fmt).replace(tzinfo=timezone.utc))
        except ValueError:
            pass
    for fmt in ("%H:%M:%S", "%H:%M"):
        try:
            tm = datetime.strptime(s, fmt)
            return to_sim(today.replace(hour=tm.hour, minute=tm.minute, second=tm.second))
        except ValueError:
            pass
    return None


_PRIOS = ("emerg", "alert", "crit", "err", "warning", "notice", "info", "debug")


def journalctl(view: HostView, argv: list[str], stdin: str | None = None) -> ExecResult:
    node, now, pods, variant = view.node, view.now, view.pods, view.variant
    units: list[str] = []
    kernel_only = False
    lines_n: int | None = None
    since = until = None
    prio: int | None = None
    reverse = False
    fmt = "short"
    grep: str | None = None
    follow = False
    i = 1

    def need(opt: str) -> str | None:
        nonlocal i
        if i >= len(argv):
            return None
        v = argv[i]
        i += 1
        return v

    while i < len(argv):
        a = argv[i]
        i += 1
        name, eq, val = a.partition("=") if a.startswith("--") else (a, "", "")
        if name in ("-u", "--unit"):
            v = val if eq else need(name)
            if v is None:
                return ExecResult("journalctl: option requires an argument -- 'u'\n" if name == "-u" else "journalctl: option '--unit' requires an argument\n", 1)
            units.append(norm_unit(v))
        elif a.startswith("-u") and len(a) > 2 and not a.startswith("--"):
            units.append(norm_unit(a[2:]))
        elif name in ("-k", "--dmesg"):
            kernel_only = True
        elif name in ("-n", "--lines"):
            if eq:
                v = val
            elif i < len(argv) and (argv[i].lstrip("+").isdigit() or argv[i] == "all"):
                v = argv[i]
                i += 1
            else:
                v = "10"
            if v == "all":
                lines_n = None
                continue
            if not v.lstrip("+").isdigit():
                return ExecResult(f'Failed to parse lines \'{v}\'.\n', 1)
            lines_n = int(v.lstrip("+"))
        elif a.startswith("-n") and a[2:].isdigit():
            lines_n = int(a[2:])
        elif name in ("-S", "--since", "-U", "--until"):
            v = val if eq else need(name)
            if v is None:
                return ExecResult(f"journalctl: option '{name}' requires an argument\n", 1)
            t = _parse_since(node, now, v)
            if t is None:
                return ExecResult(f"Failed to parse timestamp: {v}\n", 1)
            if name in ("-S", "--since"):
                since = t
            else:
                until = t
        elif name in ("-p", "--priority"):
            v = val if eq else need(name)
            if v is None:
                return ExecResult("journalctl: option requires an argument -- 'p'\n", 1)
            v = v.split("..")[-1]
            if v.isdigit() and int(v) < 8:
                prio = int(v)
            elif v in _PRIOS or v in ("warn", "error", "panic"):
                prio = {"warn": 4, "error": 3, "panic": 0}.get(v, _PRIOS.index(v) if v in _PRIOS else 6)
            else:
                return ExecResult(f"Failed to parse priority value: {v}\n", 1)
        elif name in ("-o", "--output"):
            v = val if eq else need(name)
            if v not in ("short", "short-iso", "short-precise", "cat", "short-full", "short-monotonic", "with-unit"):
                return ExecResult(f"Unknown output format '{v}'.\n", 1)
            fmt = v
        elif name in ("-g", "--grep"):
            v = val if eq else need(name)
            if v is None:
                return ExecResult("journalctl: option requires an argument -- 'g'\n", 1)
            grep = v
        elif name in ("-r", "--reverse"):
            reverse = True
        elif name in ("-f", "--follow"):
            follow = True
        elif name in ("-e", "--pager-end"):
            if lines_n is None:
                lines_n = 1000
        elif name in ("--no-pager", "-q", "--quiet", "-x", "--catalog", "-l", "--full", "-a", "--all", "--utc", "--no-hostname", "--system", "--merge", "-m"):
            continue
        elif name in ("-b", "--boot"):
            if i < len(argv) and re.fullmatch(r"-?\d+|all", argv[i] or ""):
                v = argv[i]
                i += 1
                if v not in ("0", "all"):
                    return ExecResult(f"Data from the specified boot ({v}) is not available: No such boot ID in journal\n", 1)
        elif name == "-t" or name == "--identifier":
            v = val if eq else need(name)
            if v is None:
                return ExecResult("journalctl: option requires an argument -- 't'\n", 1)
            units.append(norm_unit(v))
        elif a.startswith("--"):
            return ExecResult(f"journalctl: unrecognized option '{a}'\n", 1)
        elif a.startswith("-") and len(a) > 1:
            bad = next((c for c in a[1:] if c not in "kfqxlaerm"), None)
            if bad is not None:
                return ExecResult(f"journalctl: invalid option -- '{bad}'\n", 1)
            kernel_only |= "k" in a
            follow |= "f" in a
            reverse |= "r" in a
            if "e" in a and lines_n is None:
                lines_n = 1000
        else:
            if a.startswith("_SYSTEMD_UNIT="):
                units.append(norm_unit(a.split("=", 1)[1]))
            elif "=" in a or a.startswith("/"):
                continue
            else:
                return ExecResult(f'"{a}" is not a valid match.\n' if "=" not in a else "", 1)
    entries = journal_entries(node, now, pods, variant, kernel=not units or kernel_only or "kernel" in units)
    if kernel_only:
        entries = [e for e in entries if e[1] == "kernel"]
    elif units:
        want = set(units)
        entries = [e for e in entries if e[1] in want or (e[1] == "systemd" and any(f"{u}.service" in e[3] for u in units))]
    if since is not None:
        entries = [e for e in entries if e[0] >= since]
    if until is not None:
        entries = [e for e in entries if e[0] <= until]
    if prio is not None:
        entries = [e for e in entries if e[2] <= prio]
    if grep is not None:
        try:
            rx = re.compile(grep, 0 if any(c.isupper() for c in grep) else re.IGNORECASE)
            entries = [e for e in entries if rx.search(e[3])]
        except re.error:
            return ExecResult(f'Failed to compile pattern "{grep}": invalid regular expression\n', 1)
    if follow and lines_n is None:
        lines_n = 10
    if lines_n is not None:
        entries = entries[-lines_n:] if lines_n else []
    if reverse:
        entries = entries[::-1]
    if not entries:
        return ExecResult("-- No entries --\n", 0)
    out = []
    host = node.name
    stamps: dict[int, datetime] = {}
    for t, unit, _p, text in entries:
        dt = stamps.get(int(t))
        if dt is None:
            dt = stamps[int(t)] = wall(node, int(t))
        if fmt == "cat":
            out.append(text)
            continue
        if fmt == "short-iso":
            stamp = f"{dt:%Y-%m-%dT%H:%M:%S}+00:00"
        elif fmt == "short-precise":
            stamp = f"{dt:%b %d %H:%M:%S}.{int(t * 1e6) % 1000000:06d}"
        elif fmt == "short-full":
            stamp = f"{dt:%a %Y-%m-%d %H:%M:%S} UTC"
        else:
            stamp = f"{dt:%b %d %H:%M:%S}"
        ident = "kernel" if unit == "kernel" else ("systemd[1]" if unit == "systemd" else f"{unit}[{unit_pid(node, unit)}]")
        prefix = f"{stamp} {host} {ident}: "
        if "\n" in text:
            text = text.replace("\n", "\n" + " " * len(prefix))
        out.append(prefix + text)
    return ExecResult("\n".join(out) + "\n", 0)
