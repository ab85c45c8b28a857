"""Commands run on a node's host (``ssh worker-2 CMD``, ``kubectl debug node/worker-2 -- CMD``).

:func:`run_host_command` renders what a Debian 12 node would print, from a
:class:`~sre_env.sim.commands.views.HostView`. It is a pure function of the view and
argv, with two exceptions that real admins rely on: ``sysctl -w`` writes
``node.sysctls`` and ``systemctl restart|start`` calls ``view.restart_unit``.
It never raises: unknown commands get bash's ``command not found`` (127) and
bad flags the tool's own usage error.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Callable

from sre_env.backend import ExecResult
from sre_env.sim.commands.common import date_cmd, human_df, running_containers
from sre_env.sim.commands.disk import df, diskstats, iostat, lsblk, mount_lines
from sre_env.sim.kernel.hashing import stable_hash
from sre_env.sim.node.containerd import container_id
from sre_env.sim.commands.journal import dmesg, journalctl
from sre_env.sim.node import files as hostfiles
from sre_env.sim.node import diskfill
from sre_env.sim.commands.du import du
from sre_env.sim.commands.find import find
from sre_env.sim.commands.sh import run_script
from sre_env.sim.commands.smart import smartctl
from sre_env.sim.commands.system import (
    all_sysctls,
    chronyc,
    crictl,
    free,
    ip_cmd,
    loadavg,
    meminfo,
    ps_host,
    sysctl,
    systemctl,
    timedatectl,
    uptime,
)
from sre_env.sim.commands.hostnet import cni_dirs, cni_file, iptables, iptables_save, netfilter_persistent
from sre_env.sim.node.host import HostNode, wall
from sre_env.sim.commands.views import HostView

__all__ = ["run_host_command", "HOST_COMMANDS"]

_ROOT_DIRS = "bin boot dev etc home lib lib64 lost+found media mnt opt proc root run sbin srv sys tmp usr var".split()


def _not_found(name: str) -> ExecResult:
    return ExecResult(f"bash: {name}: command not found\n", 127)


def _pod_meta(pod: dict[str, Any]) -> tuple[str, str, str]:
    meta = pod.get("metadata") or {}
    name = str(meta.get("name", ""))
    ns = str(meta.get("namespace", "default"))
    uid = str(meta.get("uid") or f"{stable_hash(ns, name):08x}-{stable_hash(name) % 0xFFFF:04x}-4{stable_hash(ns) % 0xFFF:03x}-8{stable_hash(name, 1) % 0xFFF:03x}-{stable_hash(ns, name, 2):08x}{stable_hash(name, 3) % 0xFFFF:04x}")
    return name, ns, uid


# --------------------------------------------------------------------------- file system

def _fs_dirs(view: HostView) -> dict[str, list[str]]:
    """Directory -> entries; directories end with ``/`` in the listing."""
    node = view.node
    dirs: dict[str, list[str]] = {
        "/": [d + "/" for d in _ROOT_DIRS],
        "/mnt": ["disks/"],
        "/etc": "containerd/ cni/ default/ fstab hostname hosts kubernetes/ os-release passwd resolv.conf sysctl.conf sysctl.d/ systemd/".split(),
        "/etc/kubernetes": ["kubelet.conf", "manifests/", "pki/"],
        "/etc/sysctl.d": ["99-sysctl.conf", "README.sysctl"],
        "/etc/kubernetes/manifests": [],
        "/var": "backups/ cache/ lib/ local/ lock/ log/ mail/ opt/ run/ spool/ tmp/".split(),
        "/var/lib": "apt/ cni/ containerd/ dbus/ dpkg/ kubelet/ misc/ systemd/".split(),
        "/var/lib/kubelet": "checkpoints/ config.yaml cpu_manager_state device-plugins/ kubeadm-flags.env memory_manager_state pki/ plugins/ plugins_registry/ pod-resources/ pods/".split(),
        "/var/log": "README alternatives.log apt/ btmp containers/ dpkg.log journal/ lastlog pods/ private/ wtmp".split(),
        "/root": [],
        "/tmp": [],
        "/home": ["debian/"],
        "/proc": "1/ cmdline cpuinfo diskstats loadavg meminfo mounts net/ self/ stat sys/ uptime version".split(),
        "/proc/sys": "abi/ debug/ dev/ fs/ kernel/ net/ user/ vm/".split(),
        "/dev": [],
        "/sys": "block/ bus/ class/ dev/ devices/ firmware/ fs/ hypervisor/ kernel/ module/ power/".split(),
        "/sys/block": [d.device + "/" for d in node.disks],
    }
    devs = ["console", "null", "zero", "random", "urandom", "tty", "ttyS0", "kmsg", "shm/", "pts/"]
    for i, d in enumerate(node.disks):
        devs.append(d.device)
        devs += [f"{d.device}1"] + ([f"{d.device}14", f"{d.device}15"] if i == 0 else [])
    dirs["/dev"] = sorted(devs)
    disks_dir: set[str] = set()
    for d in node.disks:
        mp = d.mountpoint.rstrip("/")
        if mp.startswith("/mnt/disks/"):
            rel = mp[len("/mnt/disks/"):].split("/")[0]
            disks_dir.add(rel + "/")
            dirs.setdefault(mp, ["lost+found/"])
    for mp in view.local_volumes or {}:
        mp = str(mp).rstrip("/")
        parent, _, leaf = mp.rpartition("/")
        if not parent or not leaf:
            continue
        if parent == "/mnt/disks":
            disks_dir.add(leaf + "/")
        else:
            dirs.setdefault(parent, ["lost+found/"])
            if leaf + "/" not in dirs[parent]:
                dirs[parent].append(leaf + "/")
            if parent.startswith("/mnt/disks/"):
                disks_dir.add(parent[len("/mnt/disks/"):].split("/")[0] + "/")
        dirs[mp] = "WiredTiger WiredTiger.lock WiredTiger.turtle WiredTiger.wt WiredTigerHS.wt _mdb_catalog.wt collection-0--4123771832473512941.wt collection-2--4123771832473512941.wt diagnostic.data/ index-1--4123771832473512941.wt index-3--4123771832473512941.wt journal/ mongod.lock sizeStorer.wt storage.bson".split()
    dirs["/mnt/disks"] = sorted(disks_dir)
    pods_dir, logs_pods, logs_ctr = [], [], []
    for pod in view.pods:
        name, ns, uid = _pod_meta(pod)
        pods_dir.append(uid + "/")
        logs_pods.append(f"{ns}_{name}_{uid}/")
        dirs[f"/var/lib/kubelet/pods/{uid}"] = ["containers/", "etc-hosts", "plugins/", "volumes/"]
    for pod, _spec, st in running_containers(view.pods):
        name, ns, _uid = _pod_meta(pod)
        logs_ctr.append(f"{name}_{ns}_{st.get('name', '')}-{container_id(pod, st)}.log")
    dirs["/var/lib/kubelet/pods"] = sorted(pods_dir)
    dirs["/var/log/pods"] = sorted(logs_pods)
    dirs["/var/log/containers"] = sorted(logs_ctr)
    dirs.update(cni_dirs(view))
    # directories cron programs filled (sre_env.sim.node.diskfill)
    for d, names in diskfill.listing(node).items():
        listing = dirs.setdefault(d, [])
        listing.extend(n for n in names if n not in listing)
        listing.sort()
    for path in sorted(node.files):
        parent, name = path.rsplit("/", 1)
        listing = dirs.setdefault(parent or "/", [])
        if name not in listing:
            listing.append(name)
            listing.sort()
    return dirs


def _os_release() -> str:
    return (
        'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nNAME="Debian GNU/Linux"\nVERSION_ID="12"\nVERSION="12 (bookworm)"\n'
        "VERSION_CODENAME=bookworm\nID=debian\nHOME_URL=\"https://www.debian.org/\"\nSUPPORT_URL=\"https://www.debian.org/support\"\n"
        'BUG_REPORT_URL="https://bugs.debian.org/"\n'
    )


def _version(node: HostNode) -> str:
    deb = "6.1.115-1 (2024-11-01)" if node.kernel == "6.1.0-27-amd64" else "6.1.119-1 (2024-11-22)"
    return f"#1 SMP PREEMPT_DYNAMIC Debian {deb}"


def _file(view: HostView, path: str) -> str | None:
    node, now = view.node, view.now
    written = hostfiles.read(node, path)
    if written is not None:
        return written
    if path.startswith("/proc/sys/"):
        key = path[len("/proc/sys/"):].replace("/", ".")
        vals = all_sysctls(node, now, view.pods)
        return vals[key] + "\n" if key in vals else None
    simple: dict[str, Callable[[], str]] = {
        "/etc/hostname": lambda: node.name + "\n",
        "/sys/devices/system/clocksource/clocksource0/current_clocksource": lambda: node.clocksource + "\n",
        "/sys/devices/system/clocksource/clocksource0/available_clocksource": lambda: ("tsc hpet acpi_pm \n" if node.clocksource == "tsc" else "hpet acpi_pm \n"),
        "/proc/sys/kernel/hostname": lambda: node.name + "\n",
        "/etc/os-release": _os_release,
        "/usr/lib/os-release": _os_release,
        "/etc/debian_version": lambda: "12.8\n",
        "/proc/loadavg": lambda: loadavg(node, now, view.pods),
        "/proc/meminfo": lambda: meminfo(node),
        "/proc/diskstats": lambda: diskstats(node),
        "/proc/uptime": lambda: f"{node.uptime(now):.2f} {node.uptime(now) * node.cpu_cores * 0.93:.2f}\n",
        "/proc/version": lambda: f"Linux version {node.kernel} (debian-kernel@lists.debian.org) (gcc-12 (Debian 12.2.0-14) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40) {_version(node)}\n",
        "/proc/cmdline": lambda: f"BOOT_IMAGE=/boot/vmlinuz-{node.kernel} root=UUID={stable_hash(node.name):08x}-3f2c-4b8e-9a41-{stable_hash(node.name) * 7 % 16**12:012x} ro console=tty0 console=ttyS0,115200 earlyprintk=ttyS0,115200 consoleblank=0\n",
        "/proc/mounts": lambda: "".join(f"{s} {m} {t} {o} 0 0\n" for s, m, t, o in mount_lines(node, view.pods)),
        "/proc/self/mounts": lambda: "".join(f"{s} {m} {t} {o} 0 0\n" for s, m, t, o in mount_lines(node, view.pods)),
        "/etc/fstab": lambda: _fstab(node),
        "/etc/resolv.conf": lambda: "domain c.internal\nsearch c.internal\nnameserver 169.254.169.254\n",
        "/etc/hosts": lambda: f"127.0.0.1\tlocalhost\n::1\t\tlocalhost ip6-localhost ip6-loopback\nff02::1\t\tip6-allnodes\nff02::2\t\tip6-allrouters\n\n{node.internal_ip or '10.0.0.' + str(10 + node.index)}\t{node.name}\n",
        "/var/lib/kubelet/kubeadm-flags.env": lambda: 'KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=unix:///run/containerd/containerd.sock --pod-infra-container-image=registry.k8s.io/pause:3.10"\n',
        "/var/lib/kubelet/config.yaml": lambda: hostfiles.DEFAULT_KUBELET_CONFIG,
        "/var/log/README": lambda: "You are looking for the traditional text log files in /var/log, and they are\ngone?\n\nHere's an explanation on what's going on:\n\nYou are running a systemd-based OS where traditional syslog has been replaced\nwith the Journal. The journal stores the same (and more) information as classic\nsyslog. To make use of the journal and access the collected log data simply\ninvoke \"journalctl\", which will output the logs in the identical text-based\nformat the syslog files in /var/log used to be. For further details, please\nrefer to journalctl(1).\n",
        "/proc/cpuinfo": lambda: "".join(
            f"processor\t: {i}\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 85\nmodel name\t: Intel Xeon Processor (Cascadelake)\nstepping\t: 6\ncpu MHz\t\t: 2799.998\ncache size\t: 16384 KB\nphysical id\t: 0\nsiblings\t: {node.cpu_cores}\ncore id\t\t: {i}\ncpu cores\t: {node.cpu_cores}\n\n"
            for i in range(node.cpu_cores)
        ),
    }
    f = simple.get(path)
    if f is not None:
        return f()
    extra = cni_file(view, path)
    if extra is not None:
        return extra
    for i, d in enumerate(node.disks):
        if path == f"/sys/block/{d.device}/stat":
            line = diskstats(node).splitlines()
            for ln in line:
                parts = ln.split()
                if parts[2] == d.device:
                    return " ".join(f"{int(x):8d}" for x in parts[3:]) + "\n"
        if path == f"/sys/block/{d.device}/queue/rotational":
            return f"{1 if d.rotational else 0}\n"
        if path == f"/sys/block/{d.device}/device/model":
            return f"{d.model[:16]:<16}\n"
        if path == f"/sys/block/{d.device}/size":
            return f"{int(d.size_bytes) // 512}\n"
    return None


def _fstab(node: HostNode) -> str:
    lines = ["# /etc/fstab: static file system information.", "#", "# <file system> <mount point>   <type>  <options>       <dump>  <pass>"]
    for i, d in enumerate(node.disks):
        u = f"{stable_hash(d.serial or d.device):08x}-{stable_hash(d.device) % 0xFFFF:04x}-4a1c-9e2b-{stable_hash(d.model) * 13 % 16**12:012x}"
        if i == 0:
            lines.append(f"UUID={u} / ext4 rw,discard,errors=remount-ro,x-systemd.growfs 0 1")
            lines.append("UUID=B1C4-2E7A /boot/efi vfat defaults 0 0")
        elif d.mountpoint:
            lines.append(f"UUID={u} {d.mountpoint} ext4 defaults,nofail 0 2")
    return "\n".join(lines) + "\n"


def _norm_path(p: str) -> str:
    parts: list[str] = []
    for seg in p.split("/"):
        if seg in ("", "."):
            continue
        if seg == "..":
            if parts:
                parts.pop()
            continue
        parts.append(seg)
    return "/" + "/".join(parts)


def _disk_io_error(view: HostView, path: str) -> bool:
    """Reading directories on a failing disk sometimes hits a bad sector (EIO)."""
    d = view.node.disk_for_path(path) if view.node.disks else None
    if d is None or d.bad_read_fraction <= 0 or not path.startswith(d.mountpoint) or d.mountpoint == "/":
        return False
    return (stable_hash(path, int(view.now // 10), view.variant) % 10_000) / 10_000.0 < min(d.bad_read_fraction * 3, 0.9)


def _cat(view: HostView, argv: list[str]) -> ExecResult:
    files = [a for a in argv[1:] if not a.startswith("-") or a == "-"]
    if not files:
        return ExecResult("", 0)
    dirs = _fs_dirs(view)
    out, code = [], 0
    for f in files:
        p = _norm_path(f if f.startswith("/") else "/root/" + f)
        text = _file(view, p)
        if text is None:
            if p in dirs:
                out.append(f"cat: {f}: Is a directory\n")
            else:
                out.append(f"cat: {f}: No such file or directory\n")
            code = 1
            continue
        out.append(text)
    return ExecResult("".join(out), code)


def _ls(view: HostView, argv: list[str]) -> ExecResult:
    long = show_all = human = False
    paths: list[str] = []
    for a in argv[1:]:
        if a.startswith("--"):
            if a in ("--all",):
                show_all = True
            elif a in ("--human-readable",):
                human = True
            elif a not in ("--color", "--color=auto", "--color=never", "--full-time"):
                return ExecResult(f"ls: unrecognized option '{a}'\nTry 'ls --help' for more information.\n", 2)
        elif a.startswith("-") and len(a) > 1:
            for c in a[1:]:
                if c == "l":
                    long = True
                elif c in "aA":
                    show_all = True
                elif c == "h":
                    human = True
                elif c in "1dtrSFRiGn":
                    continue
                else:
                    return ExecResult(f"ls: invalid option -- '{c}'\nTry 'ls --help' for more information.\n", 2)
        else:
            paths.append(a)
    if not paths:
        paths = ["/root"]
    dirs = _fs_dirs(view)
    out: list[str] = []
    code = 0
    multi = len(paths) > 1
    dt = wall(view.node, view.now - 3600)
    stamp = f"{dt:%b} {dt.day:2d} {dt:%H:%M}"
    for p in paths:
        np = _norm_path(p if p.startswith("/") else "/root/" + p)
        if np in dirs:
            if _disk_io_error(view, np):
                out.append(f"ls: reading directory '{p}': Input/output error\n")
                code = 2
                continue
            entries = list(dirs[np])
            if show_all:
                entries = ["./", "../"] + entries
            if multi:
                out.append(f"{p}:\n")
            if long:
                out.append(f"total {4 * len(entries)}\n")
                for e in entries:
                    isdir = e.endswith("/")
                    name = e.rstrip("/") if e not in ("./", "../") else e[:-1]
                    filled = None if isdir else diskfill.file_size(view.node, np, name)
                    size = 4096 if isdir else (filled if filled is not None else 20480 + stable_hash(np, name) % 200_000)
                    sz = human_df(size) if human else str(size)
                    out.append(f"{'drwxr-xr-x' if isdir else '-rw-r--r--'} {2 if isdir else 1} root root {sz:>6} {stamp} {name}\n")
            else:
                out.append("".join(e.rstrip("/") + "\n" if e not in ("./", "../") else e[:-1] + "\n" for e in entries))
            if multi:
                out.append("\n")
        elif _file(view, np) is not None or any(np == k.rstrip("/") + "/" + e.rstrip("/") for k, v in dirs.items() for e in v if not e.endswith("/")):
            out.append((f"-rw-r--r-- 1 root root {len(_file(view, np) or '') or 4096:>6} {stamp} {p}\n") if long else p + "\n")
        else:
            out.append(f"ls: cannot access '{p}': No such file or directory\n")
            code = 2
    return ExecResult("".join(out), code)


# --------------------------------------------------------------------------- small tools

def _date(view: HostView, argv: list[str]) -> ExecResult:
    dt = wall(view.node, view.now)
    for a in argv[1:]:
        if a in ("-u", "--utc", "--universal"):
            continue
        if a.startswith("+"):
            return ExecResult(_strftime(dt, a[1:]) + "\n", 0)
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


def _strftime(dt: datetime, fmt: str) -> str:
    from sre_env.kube.timefmt import EPOCH

    epoch_s = int((dt - EPOCH).total_seconds() + EPOCH.timestamp())
    fmt = fmt.replace("%s", str(epoch_s)).replace("%N", "000000000").replace("%3N", "000")
    try:
        return dt.strftime(fmt)
    except ValueError:
        return fmt


def _uname(node: HostNode, argv: list[str]) -> ExecResult:
    fields = {"s": "Linux", "n": node.name, "r": node.kernel, "v": _version(node), "m": "x86_64", "p": "unknown", "i": "unknown", "o": "GNU/Linux"}
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


def _hostname(view: HostView, argv: list[str]) -> ExecResult:
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


def _mount(view: HostView, argv: list[str]) -> ExecResult:
    if len(argv) > 1 and argv[1] not in ("-l", "-v"):
        if argv[1] == "-t" and len(argv) > 2:
            want = argv[2].split(",")
            return ExecResult("".join(f"{s} on {m} type {t} ({o})\n" for s, m, t, o in mount_lines(view.node, view.pods) if t in want), 0)
        return ExecResult("mount: only root can use \"--options\" option (effective UID is 0)\n" if argv[1].startswith("-o") else f"mount: {argv[1]}: can't find in /etc/fstab.\n", 1 if argv[1].startswith("-o") else 32)
    return ExecResult("".join(f"{s} on {m} type {t} ({o})\n" for s, m, t, o in mount_lines(view.node, view.pods)), 0)


def _findmnt(view: HostView, argv: list[str]) -> ExecResult:
    rows = [("TARGET", "SOURCE", "FSTYPE", "OPTIONS")] + [(m, s, t, o) for s, m, t, o in mount_lines(view.node, view.pods)]
    if len(argv) > 1 and not argv[-1].startswith("-"):
        rows = [rows[0]] + [r for r in rows[1:] if r[0] == argv[-1]]
        if len(rows) == 1:
            return ExecResult("", 1)
    w = [max(len(r[k]) for r in rows) for k in range(3)]
    return ExecResult("".join(f"{r[0]:<{w[0]}} {r[1]:<{w[1]}} {r[2]:<{w[2]}} {r[3]}\n" for r in rows), 0)


def _nproc(node: HostNode, argv: list[str]) -> ExecResult:
    return ExecResult(f"{node.cpu_cores}\n", 0)


def _top(view: HostView, argv: list[str]) -> ExecResult:
    from sre_env.sim.commands.system import host_processes, uptime_line

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


def _which(argv: list[str]) -> ExecResult:
    out, code = [], 0
    for a in argv[1:]:
        if a in _COMMANDS:
            prefix = "/usr/sbin/" if a in ("smartctl", "sysctl", "iostat", "chronyd", "ip") else "/usr/bin/"
            out.append(prefix + a)
        else:
            code = 1
    return ExecResult("".join(x + "\n" for x in out), code)


def _echo(argv: list[str]) -> ExecResult:
    args = argv[1:]
    nl = True
    if args and args[0] == "-n":
        nl = False
        args = args[1:]
    return ExecResult(" ".join(args) + ("\n" if nl else ""), 0)


def _id(argv: list[str]) -> ExecResult:
    if len(argv) > 1 and argv[1] in ("-u", "-g"):
        return ExecResult("0\n", 0)
    if len(argv) > 1 and argv[1] in ("-un", "-gn", "-nu", "-ng"):
        return ExecResult("root\n", 0)
    return ExecResult("uid=0(root) gid=0(root) groups=0(root)\n", 0)


def _sh(view: HostView, argv: list[str]) -> ExecResult:
    name = argv[0].rsplit("/", 1)[-1]
    if len(argv) >= 3 and argv[1] in ("-c", "-lc", "-ec", "-xc"):
        env = {"HOME": "/root", "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOSTNAME": view.node.name, "USER": "root", "SHELL": "/bin/bash"}

        def run(av: list[str], stdin: str | None) -> ExecResult:
            if av and av[0] in ("tee", "sudo") and "tee" in av[:2]:
                return _tee(view, av[av.index("tee") :], stdin or "")
            return _dispatch(view, av, nested=True)

        def write_file(path: str, text: str, append: bool) -> str | None:
            return hostfiles.write(view.node, _norm_path(path if path.startswith("/") else "/root/" + path), text, append=append)

        return run_script(argv[2], env, run, shell_name="sh" if name in ("sh", "dash") else name, write_file=write_file)
    if len(argv) == 2 and argv[1] == "-c":
        return ExecResult(f"{name}: -c: option requires an argument\n", 2)
    return ExecResult("", 0)


def _tee(view: HostView, argv: list[str], stdin: str) -> ExecResult:
    append = any(a in ("-a", "--append") for a in argv[1:])
    for f in (a for a in argv[1:] if not a.startswith("-")):
        err = hostfiles.write(view.node, _norm_path(f if f.startswith("/") else "/root/" + f), stdin, append=append)
        if err:
            return ExecResult(stdin + f"tee: {err}\n", 1)
    return ExecResult(stdin, 0)


def _rm(view: HostView, argv: list[str]) -> ExecResult:
    force = any(a.startswith("-") and "f" in a for a in argv[1:])
    code, out = 0, []
    recursive = any(a.startswith("-") and not a.startswith("--") and ("r" in a or "R" in a) for a in argv[1:]) or "--recursive" in argv
    for f in (a for a in argv[1:] if not a.startswith("-")):
        path = _norm_path(f if f.startswith("/") else "/root/" + f)
        gone = diskfill.remove(view.node, path, recursive)
        if gone == "E2BIG":
            return ExecResult("bash: /usr/bin/rm: Argument list too long\n", 126)
        if gone is not None:
            if not gone:
                out.append(f"rm: cannot remove '{f}': Is a directory\n")
                code = 1
            continue
        if hostfiles.remove(view.node, path):
            continue
        if _file(view, path) is not None:
            out.append(f"rm: cannot remove '{f}': Read-only file system\n")
            code = 1
        elif not force:
            out.append(f"rm: cannot remove '{f}': No such file or directory\n")
            code = 1
    return ExecResult("".join(out), code)


def _sed(view: HostView, argv: list[str]) -> ExecResult:
    args = argv[1:]
    in_place = any(a == "-i" or a.startswith("-i") and not a.startswith("--") for a in args) or "--in-place" in args
    words = [a for a in args if not a.startswith("-")]
    scripts = [args[i + 1] for i, a in enumerate(args[:-1]) if a == "-e"]
    if scripts:
        words = [w for w in words if w not in scripts]
    elif words:
        scripts, words = [words[0]], words[1:]
    if not scripts or not words:
        return ExecResult("Usage: sed [OPTION]... {script-only-if-no-other-script} [input-file]...\n", 1)
    out = []
    for f in words:
        path = _norm_path(f if f.startswith("/") else "/root/" + f)
        text = _file(view, path)
        if text is None:
            return ExecResult(f"sed: can't read {f}: No such file or directory\n", 2)
        for script in scripts:
            text, err = hostfiles.sed_apply(script, text)
            if err:
                return ExecResult(err + "\n", 1)
        if not in_place:
            out.append(text)
            continue
        err = hostfiles.write(view.node, path, text)
        if err:
            return ExecResult(f"sed: couldn't open temporary file {path.rsplit('/', 1)[0]}/sedAbC123: Read-only file system\n", 4)
    return ExecResult("".join(out), 0)


def _grep_file(view: HostView, argv: list[str]) -> ExecResult:
    from sre_env.sim.commands.sh import FILTERS

    args = argv[1:]
    pats = [a for a in args if not a.startswith("-")]
    if len(pats) < 2:
        return ExecResult("", 1) if pats else ExecResult("Usage: grep [OPTION]... PATTERNS [FILE]...\nTry 'grep --help' for more information.\n", 2)
    flags = [a for a in args if a.startswith("-")]
    recursive = any(a in ("-r", "-R", "--recursive") or (not a.startswith("--") and ("r" in a[1:] or "R" in a[1:])) for a in flags)
    dirs = _fs_dirs(view)
    targets = [_norm_path(p if p.startswith("/") else "/root/" + p) for p in pats[1:]]
    if recursive or len(targets) > 1 or any(t in dirs for t in targets):
        # grep names the file on each match when it reads several (or a tree)
        files: list[str] = []
        for t in targets:
            if t in dirs:
                if not recursive:
                    return ExecResult(f"grep: {t}: Is a directory\n", 2)
                files += [f"{t.rstrip('/')}/{e}" for e in dirs[t] if not e.endswith("/")]
            else:
                files.append(t)
        out, found = [], False
        for f in files:
            text = _file(view, f)
            if text is None:
                continue
            res = FILTERS["grep"]([a for a in flags if a not in ("-r", "-R", "--recursive")] + [pats[0]], text)
            if res.exit_code == 0 and res.output:
                found = True
                out += [f"{f}:{line}\n" for line in res.output.splitlines()]
        return ExecResult("".join(out), 0 if found else 1)
    res = _cat(view, ["cat", *pats[1:]])
    if res.exit_code:
        return ExecResult(res.output.replace("cat:", "grep:"), 2)
    return FILTERS["grep"](flags + [pats[0]], res.output)


def _head_tail_file(view: HostView, argv: list[str]) -> ExecResult:
    from sre_env.sim.commands.sh import FILTERS

    files = [a for a in argv[1:] if not a.startswith("-") and not a.isdigit()]
    opts = [a for a in argv[1:] if a not in files]
    if not files:
        return ExecResult("", 0)
    res = _cat(view, ["cat", *files])
    if res.exit_code:
        name = argv[0]
        return ExecResult(res.output.replace("cat: ", f"{name}: cannot open '").replace(": No such file", "' for reading: No such file"), 1)
    return FILTERS[argv[0]](opts, res.output)


def _stat_cmd(view: HostView, argv: list[str]) -> ExecResult:
    paths = [a for a in argv[1:] if not a.startswith("-")]
    if not paths:
        return ExecResult("stat: missing operand\nTry 'stat --help' for more information.\n", 1)
    dirs = _fs_dirs(view)
    p = _norm_path(paths[0])
    if p not in dirs and _file(view, p) is None:
        return ExecResult(f"stat: cannot statx '{paths[0]}': No such file or directory\n", 1)
    dt = wall(view.node, view.now - 3600)
    kind = "directory" if p in dirs else "regular file"
    return ExecResult(
        f"  File: {paths[0]}\n  Size: 4096      \tBlocks: 8          IO Block: 4096   {kind}\nDevice: 8,1\tInode: {stable_hash(p) % 2_000_000}     Links: 2\n"
        f"Access: (0755/{'d' if p in dirs else '-'}rwxr-xr-x)  Uid: (    0/    root)   Gid: (    0/    root)\nAccess: {dt:%Y-%m-%d %H:%M:%S}.000000000 +0000\n"
        f"Modify: {dt:%Y-%m-%d %H:%M:%S}.000000000 +0000\nChange: {dt:%Y-%m-%d %H:%M:%S}.000000000 +0000\n Birth: -\n",
        0,
    )


def _kubelet_cli(view: HostView, argv: list[str]) -> ExecResult:
    if len(argv) > 1 and argv[1] in ("--version", "version"):
        return ExecResult(f"Kubernetes {view.node.kubelet_version}\n", 0)
    return ExecResult('E0302 09:00:00.000000   99999 run.go:72] "command failed" err="failed to run Kubelet: failed to listen on 0.0.0.0:10250: listen tcp 0.0.0.0:10250: bind: address already in use"\n' if view.node.kubelet_running else "", 1)


_COMMANDS: dict[str, Callable[[HostView, list[str]], ExecResult]] = {
    "dmesg": lambda v, a: dmesg(v.node, v.now, v.pods, a, v.variant),
    "smartctl": lambda v, a: smartctl(v.node, v.now, a),
    "df": lambda v, a: df(v.node, v.pods, a),
    "lsblk": lambda v, a: lsblk(v.node, a),
    "iostat": lambda v, a: iostat(v.node, v.now, a),
    "free": lambda v, a: free(v.node, a),
    "uptime": lambda v, a: uptime(v.node, v.now, a),
    "hostname": _hostname,
    "date": _date,
    "uname": lambda v, a: _uname(v.node, a),
    "ps": lambda v, a: ps_host(v.node, v.now, v.pods, a),
    "top": _top,
    "systemctl": lambda v, a: systemctl(v.node, v.now, v.pods, a, v.restart_unit, v.variant),
    "journalctl": lambda v, a: journalctl(v.node, v.now, v.pods, a, v.variant),
    "sysctl": lambda v, a: sysctl(v.node, v.now, a, v.pods),
    "cat": _cat,
    "rm": lambda v, a: _rm(v, a),
    "tee": lambda v, a: _tee(v, a, ""),
    "sed": lambda v, a: _sed(v, a),
    "ls": _ls,
    "mount": _mount,
    "findmnt": _findmnt,
    "ip": lambda v, a: ip_cmd(v.node, v.pods, a, v.now),
    "chronyc": lambda v, a: chronyc(v.node, v.now, a),
    "timedatectl": lambda v, a: timedatectl(v.node, v.now),
    "crictl": lambda v, a: crictl(v.node, v.now, v.pods, a),
    "nproc": lambda v, a: _nproc(v.node, a),
    "which": lambda v, a: _which(a),
    "echo": lambda v, a: _echo(a),
    "true": lambda v, a: ExecResult("", 0),
    "false": lambda v, a: ExecResult("", 1),
    "id": lambda v, a: _id(a),
    "whoami": lambda v, a: ExecResult("root\n", 0),
    "sh": _sh,
    "bash": _sh,
    "dash": _sh,
    "grep": _grep_file,
    "head": _head_tail_file,
    "tail": _head_tail_file,
    "stat": _stat_cmd,
    "kubelet": _kubelet_cli,
    "pwd": lambda v, a: ExecResult("/root\n", 0),
}

# where the disk went (sre_env.sim.node.diskfill)
_COMMANDS.setdefault("du", du)
_COMMANDS.setdefault("find", find)

# host firewall (iptables, netfilter-persistent) (sre_env.sim.network.nodenet)
for _name, _fn in {"iptables": iptables, "iptables-legacy": iptables, "iptables-nft": iptables, "iptables-save": iptables_save, "netfilter-persistent": netfilter_persistent}.items():
    _COMMANDS.setdefault(_name, _fn)

HOST_COMMANDS = frozenset(_COMMANDS)


def _dispatch(view: HostView, argv: list[str], nested: bool = False) -> ExecResult:
    while argv and argv[0] in ("sudo", "command", "exec", "nice", "ionice", "env") and len(argv) > 1:
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
    if name.startswith("/") and base not in _COMMANDS:
        return ExecResult(f"bash: {name}: No such file or directory\n", 127)
    if base == "chroot" and len(argv) >= 2 and argv[1] in ("/host", "/host/"):
        # ``kubectl debug node/...`` mounts the host at /host; agents chroot into it
        return _dispatch(view, argv[2:] or ["bash"], nested)
    fn = _COMMANDS.get(base)
    if fn is None:
        if nested:
            return ExecResult(f"bash: line 1: {base}: command not found\n", 127)
        return _not_found(base)
    return fn(view, [base] + list(argv[1:]))


def run_host_command(view: HostView, argv: list[str]) -> ExecResult:
    """Run ``argv`` on the node described by ``view``; never raises."""
    try:
        argv = [str(a) for a in argv]
        if len(argv) == 1 and (" " in argv[0] or "|" in argv[0] or ";" in argv[0]):
            # ``ssh node 'cmd | grep x'`` arrives as one string: the remote shell parses it
            return _sh(view, ["bash", "-c", argv[0]])
        return _dispatch(view, argv)
    except Exception as e:  # noqa: BLE001 - an interpreter bug must never crash an episode
        name = argv[0] if argv else "bash"
        return ExecResult(f"{name}: internal error: {type(e).__name__}\n", 1)
