"""A node's file system as its tools see it: the tree, the files, and the binaries that read and write them.

The tree is generated from the node (disks, mounts, pods, the CNI's files)
and overlaid with what operators and faults wrote (:mod:`sre_env.sim.node.files`)
and what cron programs filled (:mod:`sre_env.sim.node.diskfill`). Only the
overlay is writable; ``/proc`` and ``/sys`` are rendered from the node's state.
Text tools (grep, head, wc ...) read files here and filter them with the
shell's own filters (``view.shell``).
"""

from __future__ import annotations

from typing import Any, Callable

from sre_env.backend import ExecResult
from sre_env.sim.commands.common import (
    human_df,
    norm_path,
    running_containers,
    text_operands,
)
from sre_env.sim.commands.disk import diskstats, mount_lines
from sre_env.sim.commands.hostnet import cni_dirs, cni_file
from sre_env.sim.commands.system import all_sysctls, loadavg, meminfo
from sre_env.sim.commands.views import HostView
from sre_env.sim.kernel.hashing import stable_hash
from sre_env.sim.kernel.hosts import HostNode
from sre_env.sim.node import diskfill
from sre_env.sim.node import files as hostfiles
from sre_env.sim.node.containerd import container_id
from sre_env.sim.node.wallclock import wall

__all__ = ["fs_dirs", "read_file", "host_path", "kernel_version", "cat", "ls", "stat", "rm", "tee", "sed", "grep", "text_tool"]

_ROOT_DIRS = "bin boot dev etc home lib lib64 lost+found media mnt opt proc root run sbin srv sys tmp usr var".split()


def host_path(p: str) -> str:
    """An absolute, normalised path; relative ones are under root's home, where ``ssh`` lands."""
    return norm_path(p if p.startswith("/") else "/root/" + p)


def _pod_meta(pod: dict[str, Any]) -> tuple[str, str, str]:
    meta = pod.get("metadata") or {}
    name = str(meta.get("name", ""))
    ns = str(meta.get("namespace", "default"))
    uid = str(meta.get("uid") or f"{stable_hash(ns, name):08x}-{stable_hash(name) % 0xFFFF:04x}-4{stable_hash(ns) % 0xFFF:03x}-8{stable_hash(name, 1) % 0xFFF:03x}-{stable_hash(ns, name, 2):08x}{stable_hash(name, 3) % 0xFFFF:04x}")
    return name, ns, uid


def fs_dirs(view: HostView) -> dict[str, list[str]]:
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


def kernel_version(node: HostNode) -> str:
    """The kernel's build string (``uname -v``, ``/proc/version``)."""
    deb = "6.1.115-1 (2024-11-01)" if node.kernel == "6.1.0-27-amd64" else "6.1.119-1 (2024-11-22)"
    return f"#1 SMP PREEMPT_DYNAMIC Debian {deb}"


def read_file(view: HostView, path: str) -> str | None:
    """What ``path`` holds on the node (None: no such file): the overlay first, then the generated files."""
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
        "/proc/version": lambda: f"Linux version {node.kernel} (debian-kernel@lists.debian.org) (gcc-12 (Debian 12.2.0-14) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40) {kernel_version(node)}\n",
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


def _disk_io_error(view: HostView, path: str) -> bool:
    """Reading directories on a failing disk sometimes hits a bad sector (EIO)."""
    d = view.node.disk_for_path(path) if view.node.disks else None
    if d is None or d.bad_read_fraction <= 0 or not path.startswith(d.mountpoint) or d.mountpoint == "/":
        return False
    return (stable_hash(path, int(view.now // 10), view.variant) % 10_000) / 10_000.0 < min(d.bad_read_fraction * 3, 0.9)


def cat(view: HostView, argv: list[str], stdin: str | None) -> ExecResult:
    files = [a for a in argv[1:] if not a.startswith("-") or a == "-"]
    if not files:
        return ExecResult(stdin or "", 0)
    dirs = fs_dirs(view)
    out, code = [], 0
    for f in files:
        p = host_path(f)
        text = read_file(view, p)
        if text is None:
            if p in dirs:
                out.append(f"cat: {f}: Is a directory\n")
            else:
                out.append(f"cat: {f}: No such file or directory\n")
            code = 1
            continue
        out.append(text)
    return ExecResult("".join(out), code)


def ls(view: HostView, argv: list[str], stdin: str | None) -> ExecResult:
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
    dirs = fs_dirs(view)
    out: list[str] = []
    code = 0
    multi = len(paths) > 1
    dt = wall(view.node, view.now - 3600)
    stamp = f"{dt:%b} {dt.day:2d} {dt:%H:%M}"
    for p in paths:
        np = host_path(p)
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
        elif read_file(view, np) is not None or any(np == k.rstrip("/") + "/" + e.rstrip("/") for k, v in dirs.items() for e in v if not e.endswith("/")):
            out.append((f"-rw-r--r-- 1 root root {len(read_file(view, np) or '') or 4096:>6} {stamp} {p}\n") if long else p + "\n")
        else:
            out.append(f"ls: cannot access '{p}': No such file or directory\n")
            code = 2
    return ExecResult("".join(out), code)


def tee(view: HostView, argv: list[str], stdin: str | None) -> ExecResult:
    stdin = stdin or ""
    append = any(a in ("-a", "--append") for a in argv[1:])
    for f in (a for a in argv[1:] if not a.startswith("-")):
        err = hostfiles.write(view.node, host_path(f), stdin, append=append)
        if err:
            return ExecResult(stdin + f"tee: {err}\n", 1)
    return ExecResult(stdin, 0)


def rm(view: HostView, argv: list[str], stdin: str | None) -> ExecResult:
    force = any(a.startswith("-") and "f" in a for a in argv[1:])
    code, out = 0, []
    recursive = any(a.startswith("-") and not a.startswith("--") and ("r" in a or "R" in a) for a in argv[1:]) or "--recursive" in argv
    for f in (a for a in argv[1:] if not a.startswith("-")):
        path = host_path(f)
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
        if read_file(view, path) is not None:
            out.append(f"rm: cannot remove '{f}': Read-only file system\n")
            code = 1
        elif not force:
            out.append(f"rm: cannot remove '{f}': No such file or directory\n")
            code = 1
    return ExecResult("".join(out), code)


def sed(view: HostView, argv: list[str], stdin: str | None) -> ExecResult:
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
        path = host_path(f)
        text = read_file(view, path)
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


def grep(view: HostView, argv: list[str], stdin: str | None) -> ExecResult:
    """grep over files (``-r``: a tree, naming the file on each match), else over stdin."""
    opts, operands = text_operands(argv)
    given = "-e" in opts or "-f" in opts  # the patterns came with -e: every operand is a file
    pattern, names = ([], operands) if given else (operands[:1], operands[1:])
    if not names:
        if stdin is not None:
            return view.shell.text_filter(argv, stdin)
        return ExecResult("", 1) if given or operands else ExecResult("Usage: grep [OPTION]... PATTERNS [FILE]...\nTry 'grep --help' for more information.\n", 2)
    recursive = any(a in ("-r", "-R", "--recursive") or (not a.startswith("--") and ("r" in a[1:] or "R" in a[1:])) for a in opts)
    dirs = fs_dirs(view)
    targets = [host_path(p) for p in names]
    pattern = [argv[0], *(a for a in opts if a not in ("-r", "-R", "--recursive")), *pattern]
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
            text = read_file(view, f)
            if text is None:
                continue
            res = view.shell.text_filter(pattern, text)
            if res.exit_code == 0 and res.output:
                found = True
                out += [f"{f}:{line}\n" for line in res.output.splitlines()]
        return ExecResult("".join(out), 0 if found else 1)
    res = cat(view, ["cat", *names], None)
    if res.exit_code:
        return ExecResult(res.output.replace("cat:", "grep:"), 2)
    return view.shell.text_filter(pattern, res.output)


def text_tool(view: HostView, argv: list[str], stdin: str | None) -> ExecResult:
    """head, tail, wc, sort, uniq, cut, awk over the files named, else over stdin."""
    opts, files = text_operands(argv)
    name = argv[0]
    if name == "awk" and files:
        opts, files = opts + files[:1], files[1:]  # the program
    if not files:
        return view.shell.text_filter(argv, stdin) if stdin is not None else ExecResult("", 0)
    res = cat(view, ["cat", *files], None)
    if res.exit_code:
        if name in ("head", "tail"):
            return ExecResult(res.output.replace("cat: ", f"{name}: cannot open '").replace(": No such file", "' for reading: No such file"), 1)
        return ExecResult(res.output.replace("cat:", f"{name}:"), 2 if name == "sort" else 1)
    return view.shell.text_filter([name, *opts], res.output)


def stat(view: HostView, argv: list[str], stdin: str | None) -> ExecResult:
    paths = [a for a in argv[1:] if not a.startswith("-")]
    if not paths:
        return ExecResult("stat: missing operand\nTry 'stat --help' for more information.\n", 1)
    dirs = fs_dirs(view)
    p = norm_path(paths[0])
    if p not in dirs and read_file(view, p) is None:
        return ExecResult(f"stat: cannot statx '{paths[0]}': No such file or directory\n", 1)
    dt = wall(view.node, view.now - 3600)
    kind = "directory" if p in dirs else "regular file"
    return ExecResult(
        f"  File: {paths[0]}\n  Size: 4096      \tBlocks: 8          IO Block: 4096   {kind}\nDevice: 8,1\tInode: {stable_hash(p) % 2_000_000}     Links: 2\n"
        f"Access: (0755/{'d' if p in dirs else '-'}rwxr-xr-x)  Uid: (    0/    root)   Gid: (    0/    root)\nAccess: {dt:%Y-%m-%d %H:%M:%S}.000000000 +0000\n"
        f"Modify: {dt:%Y-%m-%d %H:%M:%S}.000000000 +0000\nChange: {dt:%Y-%m-%d %H:%M:%S}.000000000 +0000\n Birth: -\n",
        0,
    )
