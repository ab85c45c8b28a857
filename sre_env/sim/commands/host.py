"""Commands run on a node's host (``ssh worker-2 CMD``, ``kubectl debug node/worker-2 -- CMD``).

:func:`run_host_command` renders what a Debian 12 node would print, from a
:class:`~sre_env.sim.commands.views.HostView`. Every program it can run is one
:class:`~sre_env.sim.commands.spec.Binary` of :data:`HOST_BINARIES`; the
dispatcher unwraps ``sudo``/``env``/``nice``/``chroot /host`` the way the
shell would find the program, looks it up, and runs it. The binaries are pure
functions of the view and argv, except where real admins change the node:
``sysctl -w``, ``systemctl restart`` (``view.restart_unit``), writes into the
file overlay, ``iptables``. It never raises: unknown commands get bash's
``command not found`` (127) and bad flags the tool's own usage error.
"""

from __future__ import annotations

from typing import Callable

from sre_env.backend import ExecResult
from sre_env.sim.commands import host_files as fs
from sre_env.sim.commands.common import date_cmd, strftime
from sre_env.sim.commands.disk import df, iostat, lsblk, mount_lines
from sre_env.sim.commands.du import du
from sre_env.sim.commands.find import find
from sre_env.sim.commands.hostnet import iptables, iptables_save, netfilter_persistent
from sre_env.sim.commands.journal import dmesg, journalctl
from sre_env.sim.commands.smart import smartctl
from sre_env.sim.commands.spec import Binary, binary_table
from sre_env.sim.commands.system import (
    chronyc,
    crictl,
    free,
    host_processes,
    ip,
    ps,
    sysctl,
    systemctl,
    timedatectl,
    uptime,
    uptime_line,
)
from sre_env.sim.commands.views import HostView
from sre_env.sim.node import files as hostfiles
from sre_env.sim.node.wallclock import wall

__all__ = ["run_host_command", "HOST_BINARIES"]

#: what a node's bash puts in a script's environment
_SCRIPT_ENV = {"HOME": "/root", "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "USER": "root", "SHELL": "/bin/bash"}


# --------------------------------------------------------------------------- small tools

def _date(view: HostView, argv: list[str], stdin: str | None) -> ExecResult:
    dt = wall(view.node, view.now)
    for a in argv[1:]:
        if a in ("-u", "--utc", "--universal"):
            continue
        if a.startswith("+"):
            return ExecResult(strftime(dt, a[1:]) + "\n", 0)
        if a in ("-R", "--rfc-email"):
            return ExecResult(f"{dt:%a, %d %b %Y %H:%M:%S} +0000\n", 0)
        if a in ("-I", "--iso-8601", "--iso-8601=date"):
            return ExecResult(f"{dt:%Y-%m-%d}\n", 0)
        if a in ("-Iseconds", "--iso-8601=seconds"):
            return ExecResult(f"{dt:%Y-%m-%dT%H:%M:%S}+00:00\n", 0)
        if a.startswith("--rfc-3339"):
            return ExecResult(f"{dt:%Y-%m-%d %H:%M:%S}+00:00\n", 0)
        if a.startswith("-d") or a.startswith("--date"):
            return ExecResult(f"date: invalid date '{a.split('=', 1)[-1] if '=' in a else ''}'\n", 1)
        if a.startswith("--"):
            return ExecResult(f"date: unrecognized option '{a}'\nTry 'date --help' for more information.\n", 1)
        if a.startswith("-"):
            return ExecResult(f"date: invalid option -- '{a[1:2]}'\nTry 'date --help' for more information.\n", 1)
        return ExecResult(f"date: invalid date '{a}'\n", 1)
    return ExecResult(date_cmd(dt) + "\n", 0)


def _uname(view: HostView, argv: list[str], stdin: str | None) -> ExecResult:
    node = view.node
    fields = {"s": "Linux", "n": node.name, "r": node.kernel, "v": fs.kernel_version(node), "m": "x86_64", "p": "unknown", "i": "unknown", "o": "GNU/Linux"}
    longs = {"--kernel-name": "s", "--nodename": "n", "--kernel-release": "r", "--kernel-version": "v", "--machine": "m", "--processor": "p", "--hardware-platform": "i", "--operating-system": "o", "--all": "a"}
    want: list[str] = []
    for a in argv[1:]:
        if a in longs:
            want.append(longs[a])
        elif a.startswith("-") and not a.startswith("--") and len(a) > 1:
            for c in a[1:]:
                if c not in "snrvmpioa":
                    return ExecResult(f"uname: invalid option -- '{c}'\nTry 'uname --help' for more information.\n", 1)
                want.append(c)
        else:
            return ExecResult(f"uname: extra operand '{a}'\nTry 'uname --help' for more information.\n" if not a.startswith("-") else f"uname: unrecognized option '{a}'\nTry 'uname --help' for more information.\n", 1)
    if not want:
        want = ["s"]
    if "a" in want:
        return ExecResult(" ".join(fields[k] for k in "snrvmo") + "\n", 0)
    return ExecResult(" ".join(fields[k] for k in "snrvmpio" if k in want) + "\n", 0)


def _hostname(view: HostView, argv: list[str], stdin: str | None) -> ExecResult:
    node = view.node
    a = argv[1] if len(argv) > 1 else ""
    if a in ("", "-s", "--short", "-f", "--fqdn", "--long"):
        return ExecResult(node.name + "\n", 0)
    if a in ("-I", "--all-ip-addresses"):
        pods = [p for p in view.pods if not (p.get("spec") or {}).get("hostNetwork")]
        cidr = next((".".join(str((p.get("status") or {}).get("podIP", "")).split(".")[:3]) for p in pods if (p.get("status") or {}).get("podIP")), f"10.244.{node.index + 1}")
        return ExecResult(f"{node.internal_ip or '10.0.0.' + str(10 + node.index)} {cidr}.1 \n", 0)
    if a in ("-i", "--ip-address"):
        return ExecResult(f"{node.internal_ip or '10.0.0.' + str(10 + node.index)}\n", 0)
    if a.startswith("-"):
        return ExecResult(f"hostname: invalid option -- '{a[1:2]}'\nUsage: hostname [-b] {{hostname|-F file}}         set host name (from file)\n", 1)
    return ExecResult("hostname: you must be root to change the host name\n", 1)


def _mount(view: HostView, argv: list[str], stdin: str | None) -> ExecResult:
    if len(argv) > 1 and argv[1] not in ("-l", "-v"):
        if argv[1] == "-t" and len(argv) > 2:
            want = argv[2].split(",")
            return ExecResult("".join(f"{s} on {m} type {t} ({o})\n" for s, m, t, o in mount_lines(view.node, view.pods) if t in want), 0)
        return ExecResult("mount: only root can use \"--options\" option (effective UID is 0)\n" if argv[1].startswith("-o") else f"mount: {argv[1]}: can't find in /etc/fstab.\n", 1 if argv[1].startswith("-o") else 32)
    return ExecResult("".join(f"{s} on {m} type {t} ({o})\n" for s, m, t, o in mount_lines(view.node, view.pods)), 0)


def _findmnt(view: HostView, argv: list[str], stdin: str | None) -> ExecResult:
    rows = [("TARGET", "SOURCE", "FSTYPE", "OPTIONS")] + [(m, s, t, o) for s, m, t, o in mount_lines(view.node, view.pods)]
    if len(argv) > 1 and not argv[-1].startswith("-"):
        rows = [rows[0]] + [r for r in rows[1:] if r[0] == argv[-1]]
        if len(rows) == 1:
            return ExecResult("", 1)
    w = [max(len(r[k]) for r in rows) for k in range(3)]
    return ExecResult("".join(f"{r[0]:<{w[0]}} {r[1]:<{w[1]}} {r[2]:<{w[2]}} {r[3]}\n" for r in rows), 0)


def _nproc(view: HostView, argv: list[str], stdin: str | None) -> ExecResult:
    return ExecResult(f"{view.node.cpu_cores}\n", 0)


def _top(view: HostView, argv: list[str], stdin: str | None) -> ExecResult:
    if "-b" not in argv and not any(a.startswith("-b") for a in argv[1:]):
        return ExecResult("top: failed tty get\n", 1)
    node, now = view.node, view.now
    procs = host_processes(node, now, view.pods, "top -b -n 1")
    mem_k = node.memory_bytes / 1024
    running = sum(1 for p in procs if p[8].startswith("R"))
    dstate = sum(1 for p in procs if p[8].startswith("D"))
    head = uptime_line(node, now, users=1).replace(" up ", " up ", 1).lstrip()
    out = [
        f"top - {head}",
        f"Tasks: {len(procs) + 150} total,   {running} running, {len(procs) + 149 - running - dstate} sleeping,   0 stopped,   0 zombie",
        "%Cpu(s):  3.1 us,  1.2 sy,  0.0 ni, 95.1 id,  0.6 wa,  0.0 hi,  0.0 si,  0.0 st",
        f"MiB Mem : {mem_k / 1024:8.1f} total, {mem_k / 1024 * 0.6:8.1f} free, {max(node.memory_used_bytes, 0) / 1048576 + 1100:8.1f} used, {mem_k / 1024 * 0.22:8.1f} buff/cache",
        f"MiB Swap:      0.0 total,      0.0 free,      0.0 used. {mem_k / 1024 * 0.75:8.1f} avail Mem",
        "",
        "    PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND",
    ]
    for u, pid, _pp, cpu, mem, vsz, rss, _tty, stat, _st, cs, cmd, _w in sorted(procs, key=lambda p: -p[3])[:25]:
        comm = cmd.split()[0].rsplit("/", 1)[-1].rstrip(":") if not cmd.startswith("[") else cmd.strip("[]")
        out.append(f"{pid:>7} {u[:8]:<8}  20   0 {vsz:>7} {rss:>6} {rss // 3:>6} {stat[0]} {cpu:5.1f} {mem:5.1f} {int(cs) // 60:>6}:{int(cs) % 60:02d}.{int(cs * 100) % 100:02d} {comm[:15]}")
    return ExecResult("\n".join(out) + "\n", 0)


def _which(view: HostView, argv: list[str], stdin: str | None) -> ExecResult:
    out, code = [], 0
    for a in argv[1:]:
        binary = HOST_BINARIES.get(a)
        if binary is None:
            code = 1
        else:
            out.append(f"{binary.directory}/{a}\n")
    return ExecResult("".join(out), code)


def _echo(view: HostView, argv: list[str], stdin: str | None) -> ExecResult:
    args = argv[1:]
    nl = True
    if args and args[0] == "-n":
        nl = False
        args = args[1:]
    return ExecResult(" ".join(args) + ("\n" if nl else ""), 0)


def _id(view: HostView, argv: list[str], stdin: str | None) -> ExecResult:
    if len(argv) > 1 and argv[1] in ("-u", "-g"):
        return ExecResult("0\n", 0)
    if len(argv) > 1 and argv[1] in ("-un", "-gn", "-nu", "-ng"):
        return ExecResult("root\n", 0)
    return ExecResult("uid=0(root) gid=0(root) groups=0(root)\n", 0)


def _kubelet(view: HostView, argv: list[str], stdin: str | None) -> ExecResult:
    if len(argv) > 1 and argv[1] in ("--version", "version"):
        return ExecResult(f"Kubernetes {view.node.kubelet_version}\n", 0)
    return ExecResult('E0302 09:00:00.000000   99999 run.go:72] "command failed" err="failed to run Kubelet: failed to listen on 0.0.0.0:10250: listen tcp 0.0.0.0:10250: bind: address already in use"\n' if view.node.kubelet_running else "", 1)


def _shell(view: HostView, argv: list[str], stdin: str | None) -> ExecResult:
    """``bash -c SCRIPT`` (and sh, dash): the script runs in the shell's language, its commands here."""
    name = argv[0]
    if len(argv) >= 3 and argv[1] in ("-c", "-lc", "-ec", "-xc"):
        return view.shell.run_script(
            argv[2],
            dialect="sh" if name in ("sh", "dash") else "bash",
            env={**_SCRIPT_ENV, "HOSTNAME": view.node.name},
            run=lambda av, sin: _dispatch(view, av, sin, nested=True),
            write_file=lambda path, text, append: hostfiles.write(view.node, fs.host_path(path), text, append=append),
        )
    if len(argv) == 2 and argv[1] == "-c":
        return ExecResult(f"{name}: -c: option requires an argument\n", 2)
    return ExecResult("", 0)


def _constant(text: str, code: int = 0) -> Callable[[HostView, list[str], str | None], ExecResult]:
    """A program whose answer never changes (``true``, ``whoami`` as root)."""
    return lambda view, argv, stdin: ExecResult(text, code)


HOST_BINARIES: dict[str, Binary[HostView]] = binary_table([
    # storage
    Binary("df", "host", "file system disk space usage", df),
    Binary("du", "host", "disk usage of directories (where the space and inodes went)", du),
    Binary("lsblk", "host", "block devices and their mount points", lsblk),
    Binary("iostat", "host", "CPU and per-device I/O statistics", iostat, directory="/usr/sbin"),
    Binary("smartctl", "host", "a disk's SMART health, attributes and error log", smartctl, directory="/usr/sbin"),
    Binary("mount", "host", "mounted file systems", _mount),
    Binary("findmnt", "host", "mounted file systems as a table", _findmnt),
    # kernel, processes, services
    Binary("dmesg", "host", "the kernel ring buffer", dmesg),
    Binary("journalctl", "host", "the systemd journal (units, kernel, time ranges)", journalctl),
    Binary("systemctl", "host", "systemd units: status, start/stop/restart, enable/disable", systemctl),
    Binary("sysctl", "host", "read or write kernel parameters", sysctl, directory="/usr/sbin"),
    Binary("ps", "host", "the process table", ps),
    Binary("top", "host", "processes by CPU (batch mode)", _top),
    Binary("free", "host", "memory usage", free),
    Binary("uptime", "host", "time since boot and load averages", uptime),
    Binary("nproc", "host", "number of CPUs", _nproc),
    Binary("crictl", "host", "containerd's pods, containers, images and logs", crictl),
    Binary("kubelet", "host", "the kubelet binary (--version)", _kubelet),
    # clock
    Binary("date", "host", "the node's wall clock", _date),
    Binary("chronyc", "host", "chrony's NTP tracking and sources", chronyc),
    Binary("timedatectl", "host", "clock, time zone and NTP synchronisation", timedatectl),
    # network
    Binary("ip", "host", "network interfaces, addresses and routes", ip, directory="/usr/sbin"),
    Binary("iptables", "host", "the host firewall's filter table", iptables, aliases=("iptables-legacy", "iptables-nft"), directory="/usr/sbin"),
    Binary("iptables-save", "host", "dump the firewall rules", iptables_save, directory="/usr/sbin"),
    Binary("netfilter-persistent", "host", "save or reload the firewall rules kept across reboots", netfilter_persistent, directory="/usr/sbin"),
    Binary("hostname", "host", "the node's name and addresses", _hostname),
    # files
    Binary("ls", "host", "list directories", fs.ls),
    Binary("cat", "host", "print files", fs.cat),
    Binary("stat", "host", "file status", fs.stat),
    Binary("find", "host", "walk directories; -delete what matches", find),
    Binary("rm", "host", "remove files", fs.rm),
    Binary("tee", "host", "copy stdin to files", fs.tee),
    Binary("sed", "host", "edit files (s///, /re/d; -i in place)", fs.sed),
    Binary("grep", "host", "search files or stdin for a pattern", fs.grep, aliases=("egrep",)),
    Binary("head", "host", "the first lines of files or stdin", fs.text_tool),
    Binary("tail", "host", "the last lines of files or stdin", fs.text_tool),
    Binary("wc", "host", "count lines, words, bytes", fs.text_tool),
    Binary("sort", "host", "sort lines", fs.text_tool),
    Binary("uniq", "host", "drop (or count) repeated lines", fs.text_tool),
    Binary("cut", "host", "select fields or characters of lines", fs.text_tool),
    Binary("awk", "host", "print fields of lines ('{print $N}')", fs.text_tool),
    # the shell and its small companions
    Binary("bash", "host", "run a script (-c)", _shell, aliases=("sh", "dash")),
    Binary("echo", "host", "print its arguments", _echo),
    Binary("true", "host", "exit 0", _constant("")),
    Binary("false", "host", "exit 1", _constant("", 1)),
    Binary("pwd", "host", "the working directory", _constant("/root\n")),
    Binary("id", "host", "user and group ids", _id),
    Binary("whoami", "host", "the user name", _constant("root\n")),
    Binary("uname", "host", "kernel name, release and machine", _uname),
    Binary("which", "host", "where a program is", _which),
])

#: programs that run the rest of the line (as the shell finds the program they name)
_WRAPPERS = ("sudo", "command", "exec", "nice", "ionice", "env")


def _dispatch(view: HostView, argv: list[str], stdin: str | None, nested: bool = False) -> ExecResult:
    while argv and argv[0] in _WRAPPERS and len(argv) > 1:
        if argv[0] == "sudo":
            argv = [a for a in argv[1:]]
            while argv and argv[0].startswith("-"):
                argv = argv[1:]
            continue
        if argv[0] == "env" and "=" not in argv[1] and not argv[1].startswith("-"):
            argv = argv[1:]
            continue
        if argv[0] == "env":
            break
        argv = argv[1:]
    if not argv:
        return ExecResult("", 0)
    name = argv[0]
    base = name.rsplit("/", 1)[-1] if name.startswith("/") else name
    binary = HOST_BINARIES.get(base)
    if name.startswith("/") and binary is None:
        return ExecResult(f"bash: {name}: No such file or directory\n", 127)
    if base == "chroot" and len(argv) >= 2 and argv[1] in ("/host", "/host/"):
        # ``kubectl debug node/...`` mounts the host at /host; agents chroot into it
        return _dispatch(view, argv[2:] or ["bash"], stdin, nested)
    if binary is None:
        return ExecResult(f"bash: line 1: {base}: command not found\n" if nested else f"bash: {base}: command not found\n", 127)
    return binary.run(view, [base, *argv[1:]], stdin)


def run_host_command(view: HostView, argv: list[str], stdin: str | None = None) -> ExecResult:
    """Run ``argv`` on the node described by ``view``; never raises."""
    try:
        argv = [str(a) for a in argv]
        if len(argv) == 1 and (" " in argv[0] or "|" in argv[0] or ";" in argv[0]):
            # ``ssh node 'cmd | grep x'`` arrives as one string: the remote shell parses it
            return _shell(view, ["bash", "-c", argv[0]], stdin)
        return _dispatch(view, argv, stdin)
    except Exception as e:  # noqa: BLE001 - an interpreter bug must never crash an episode
        name = argv[0] if argv else "bash"
        return ExecResult(f"{name}: internal error: {type(e).__name__}\n", 1)
