"""Commands run inside a container (``kubectl exec POD -- CMD``).

:func:`run_container_command` renders what the container's image would
print, from a :class:`~sre_env.sim.commands.views.ContainerView`: its environment and
files, its single process, its view of DNS and the network (through the
view's ``resolve``/``connect`` hooks), and database shells for MongoDB. Every
program is one :class:`~sre_env.sim.commands.spec.Binary` of
:data:`CONTAINER_BINARIES`: a builtin of the container's shell, or there when
the image ships it (:mod:`sre_env.sim.runtime.image_contents`); the app's own
tools (``view.app_tool``: psql, kafka scripts ...) come first. A missing one
gets the shell's ``not found`` with status 127. Pure and deterministic; never
raises.
"""

from __future__ import annotations

from typing import Callable

from sre_env.backend import ExecResult
from sre_env.sim.commands.common import (
    date_cmd,
    human_busybox,
    human_df,
    norm_path,
    strftime,
    text_operands,
)
from sre_env.sim.commands.mongo import data_disk, mongo_shell
from sre_env.sim.commands.net import (
    curl,
    getent,
    memcached_stats,
    nc,
    netstat,
    nslookup,
    ss,
    wget,
)
from sre_env.sim.commands.redis import redis_cli
from sre_env.sim.commands.spec import Binary, binary_table
from sre_env.sim.commands.system import free, meminfo, uptime_line
from sre_env.sim.commands.views import ContainerView
from sre_env.sim.kernel.hashing import stable_hash
from sre_env.sim.node.stats import load_average
from sre_env.sim.node.wallclock import wall
from sre_env.sim.runtime.image_contents import ImageInfo, image_info, process_cmdline
from sre_env.sim.runtime.oslimits import fd_entries, limits_text, os_file, shm_row

__all__ = ["run_container_command", "container_env", "CONTAINER_BINARIES"]

_K8S_ENV = (
    ("KUBERNETES_SERVICE_PORT", "443"),
    ("KUBERNETES_SERVICE_PORT_HTTPS", "443"),
    ("KUBERNETES_PORT", "tcp://10.96.0.1:443"),
    ("KUBERNETES_PORT_443_TCP", "tcp://10.96.0.1:443"),
    ("KUBERNETES_PORT_443_TCP_PROTO", "tcp"),
    ("KUBERNETES_PORT_443_TCP_PORT", "443"),
    ("KUBERNETES_PORT_443_TCP_ADDR", "10.96.0.1"),
    ("KUBERNETES_SERVICE_HOST", "10.96.0.1"),
)

_NOFILE = 1048576


def _not_found(name: str) -> ExecResult:
    return ExecResult(f"sh: 1: {name}: not found\n", 127)


def _pod_name(view: ContainerView) -> str:
    return str((view.pod.get("metadata") or {}).get("name", ""))


def _hostname(view: ContainerView) -> str:
    spec = view.pod.get("spec") or {}
    return str(spec.get("hostname") or _pod_name(view))[:63]


def _ns(view: ContainerView) -> str:
    return str((view.pod.get("metadata") or {}).get("namespace") or "default")


def container_env(view: ContainerView, info: ImageInfo) -> list[tuple[str, str]]:
    """The process environment in the order ``env`` prints it (runtime, spec, service links, image)."""
    out: list[tuple[str, str]] = [("PATH", info.path), ("HOSTNAME", _hostname(view))]
    seen = {"PATH", "HOSTNAME"}
    for k, v in (view.env or {}).items():
        if k == "PATH":
            out[0] = ("PATH", str(v))
            continue
        if k in seen:
            continue
        out.append((str(k), str(v)))
        seen.add(k)
    for k, v in _K8S_ENV:
        if k not in seen:
            out.append((k, v))
            seen.add(k)
    for k, v in info.image_env:
        if k not in seen:
            out.append((k, v))
            seen.add(k)
    if "HOME" not in seen:
        out.append(("HOME", info.home))
    return out


def _user(view: ContainerView, info: ImageInfo) -> tuple[int, str | None, int]:
    """(uid, name or None when the image has no passwd entry, gid) the exec runs as."""
    sc = view.container.get("securityContext") or {}
    psc = (view.pod.get("spec") or {}).get("securityContext") or {}
    uid = sc.get("runAsUser", psc.get("runAsUser"))
    gid = sc.get("runAsGroup", psc.get("runAsGroup"))
    if uid is None:
        return info.uid, info.user if not info.user.isdigit() else None, info.uid if info.uid else 0
    uid = int(uid) if str(uid).isdigit() else 0
    name = "root" if uid == 0 else (info.user if uid == info.uid and not info.user.isdigit() else None)
    return uid, name, int(gid) if gid is not None and str(gid).isdigit() else (uid if name and uid else 0)


# --------------------------------------------------------------------------- files

def _resolv_conf(view: ContainerView) -> str:
    spec = view.pod.get("spec") or {}
    policy = spec.get("dnsPolicy", "ClusterFirst")
    cfg = spec.get("dnsConfig") or {}
    if policy == "Default":
        servers, searches, opts = ["169.254.169.254"], ["c.internal"], []
    elif policy == "None":
        servers, searches, opts = [], [], []
    else:
        ns = _ns(view)
        servers, searches, opts = ["10.96.0.10"], [f"{ns}.svc.cluster.local", "svc.cluster.local", "cluster.local"], ["ndots:5"]
    servers += [str(s) for s in cfg.get("nameservers") or ()]
    searches += [str(s) for s in cfg.get("searches") or ()]
    for o in cfg.get("options") or ():
        if isinstance(o, dict) and o.get("name"):
            opts.append(f"{o['name']}:{o['value']}" if o.get("value") is not None else str(o["name"]))
    out = []
    if searches:
        out.append("search " + " ".join(searches))
    out += [f"nameserver {s}" for s in servers]
    if opts:
        out.append("options " + " ".join(opts))
    return "\n".join(out) + "\n"


def _hosts(view: ContainerView) -> str:
    ip = str((view.pod.get("status") or {}).get("podIP") or "")
    out = "# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\nfe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n"
    if ip:
        out += f"{ip}\t{_hostname(view)}\n"
    for ha in (view.pod.get("spec") or {}).get("hostAliases") or ():
        if isinstance(ha, dict):
            out += f"\n# Entries added by HostAliases.\n{ha.get('ip', '')}\t" + "\t".join(ha.get("hostnames") or ()) + "\n"
    return out


def _os_release(info: ImageInfo) -> str | None:
    if info.os_id == "alpine":
        return 'NAME="Alpine Linux"\nID=alpine\nVERSION_ID=3.19.1\nPRETTY_NAME="Alpine Linux v3.19"\nHOME_URL="https://alpinelinux.org/"\nBUG_REPORT_URL="https://gitlab.alpinelinux.org/alpine/aports/-/issues"\n'
    if info.os_id == "ubuntu":
        ver = info.pretty_name.split()[1]
        code = "focal" if ver.startswith("20") else "jammy"
        return f'NAME="Ubuntu"\nVERSION="{ver} LTS ({code.title()} {"Fossa" if code == "focal" else "Jellyfish"})"\nID=ubuntu\nID_LIKE=debian\nPRETTY_NAME="{info.pretty_name}"\nVERSION_ID="{ver[:5]}"\nVERSION_CODENAME={code}\nUBUNTU_CODENAME={code}\n'
    if info.os_id == "debian":
        return 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nNAME="Debian GNU/Linux"\nVERSION_ID="12"\nVERSION="12 (bookworm)"\nVERSION_CODENAME=bookworm\nID=debian\n'
    return None


def _puid(info: ImageInfo) -> int:
    """The uid PID 1 runs as (mongod drops to ``mongodb`` even though ``exec`` runs as root)."""
    return 999 if info.family == "mongo" else info.uid


def _proc_state(view: ContainerView) -> str:
    d = data_disk(view)
    if d is not None and d.bad_read_fraction > 0 and d.error_ticks and view.now - float(d.error_ticks[-1][0]) < 120:
        return "D (disk sleep)"
    return "S (sleeping)"


def _file(view: ContainerView, info: ImageInfo, path: str) -> str | None:
    files = view.files or {}
    if path in files:
        return str(files[path])
    kernel = os_file(view.os_state, path)
    if kernel is not None:
        return kernel
    node = view.node
    cmd = process_cmdline(view.container, info)
    gen: dict[str, Callable[[], str | None]] = {
        "/etc/hostname": lambda: _hostname(view) + "\n",
        "/etc/resolv.conf": lambda: _resolv_conf(view),
        "/etc/hosts": lambda: _hosts(view),
        "/etc/os-release": lambda: _os_release(info),
        "/proc/1/limits": lambda: limits_text(_NOFILE) if view.process_running else None,
        "/proc/self/limits": lambda: limits_text(_NOFILE),
        "/proc/1/cmdline": lambda: "\0".join(cmd) + "\0" if view.process_running else None,
        "/proc/1/status": lambda: f"Name:\t{cmd[0].rsplit('/', 1)[-1][:15] if cmd else 'sh'}\nUmask:\t0022\nState:\t{_proc_state(view)}\nTgid:\t1\nNgid:\t0\nPid:\t1\nPPid:\t0\nTracerPid:\t0\nUid:\t{_puid(info)}\t{_puid(info)}\t{_puid(info)}\t{_puid(info)}\nGid:\t{_puid(info)}\t{_puid(info)}\t{_puid(info)}\t{_puid(info)}\nFDSize:\t64\nThreads:\t{12 if info.family != 'memcached' else 6}\n" if view.process_running else None,
        "/proc/loadavg": lambda: "{:.2f} {:.2f} {:.2f} 1/{} {}\n".format(*load_average(node, view.now), 180, 40_000 + int(view.now) % 9000),
        "/proc/meminfo": lambda: meminfo(node),
        "/proc/uptime": lambda: f"{node.uptime(view.now):.2f} {node.uptime(view.now) * node.cpu_cores * 0.93:.2f}\n",
        "/proc/version": lambda: f"Linux version {node.kernel} (debian-kernel@lists.debian.org) (gcc-12 (Debian 12.2.0-14) 12.2.0, GNU ld (GNU Binutils for Debian) 2.40) #1 SMP PREEMPT_DYNAMIC Debian 6.1.115-1 (2024-11-01)\n",
        "/proc/sys/net/core/somaxconn": lambda: "4096\n",
        "/proc/sys/fs/file-max": lambda: (node.sysctls or {}).get("fs.file-max", "9223372036854775807") + "\n",
        "/var/run/secrets/kubernetes.io/serviceaccount/namespace": lambda: _ns(view),
        "/run/secrets/kubernetes.io/serviceaccount/namespace": lambda: _ns(view),
        "/var/run/secrets/kubernetes.io/serviceaccount/token": lambda: "eyJhbGciOiJSUzI1NiIsImtpZCI6" + f"{stable_hash(_pod_name(view)):08x}" * 6,
        "/etc/passwd": lambda: "root:x:0:0:root:/root:/bin/sh\n" + (f"{info.user}:x:{info.uid}:{info.uid}::{info.home}:/bin/false\n" if info.uid and not info.user.isdigit() else ""),
        "/etc/group": lambda: "root:x:0:\n" + (f"{info.group}:x:{info.uid}:\n" if info.uid and not info.group.isdigit() else ""),
    }
    f = gen.get(path)
    return f() if f is not None else None


def _dirs(view: ContainerView, info: ImageInfo) -> dict[str, list[str]]:
    root = "bin dev etc home lib media mnt opt proc root run sbin srv sys tmp usr var".split()
    if info.family == "mongo":
        root += ["data", "docker-entrypoint-initdb.d", "js-yaml.js"]
    if info.family == "go":
        root += ["go"]
    dirs: dict[str, list[str]] = {
        "/": sorted(root),
        "/etc": sorted({"hostname", "hosts", "resolv.conf", "passwd", "group", "os-release"} | {p[5:].split("/")[0] for p in view.files or {} if p.startswith("/etc/")}),
        "/proc": ["1", "cpuinfo", "loadavg", "meminfo", "mounts", "self", "sys", "uptime", "version"],
        "/proc/1": ["cmdline", "environ", "fd", "limits", "status"],
        "/tmp": [],
        "/root": [],
        "/var/run/secrets/kubernetes.io/serviceaccount": ["ca.crt", "namespace", "token"],
    }
    fds = fd_entries(view.os_state)
    if fds is not None:
        dirs["/proc/1/fd"] = fds
    if info.family == "go":
        dirs["/go"] = ["bin", "src"]
        dirs["/go/bin"] = [process_cmdline(view.container, info)[0]] if view.container.get("command") else []
    for p in view.files or {}:
        parent, _, leaf = str(p).rpartition("/")
        while parent:
            dirs.setdefault(parent, [])
            if leaf not in dirs[parent]:
                dirs[parent].append(leaf)
            parent, _, leaf = parent.rpartition("/")
        if leaf and leaf not in dirs["/"]:
            dirs["/"].append(leaf)
    for top in root:
        if "." not in top or top.endswith(".d"):
            dirs.setdefault("/" + top, [])
    comp = view.component
    if comp is not None and comp.volume_claim:
        dp = comp.data_path.rstrip("/") or "/data/db"
        files = "WiredTiger WiredTiger.lock WiredTiger.turtle WiredTiger.wt WiredTigerHS.wt _mdb_catalog.wt collection-0--4123771832473512941.wt collection-2--4123771832473512941.wt diagnostic.data index-1--4123771832473512941.wt index-3--4123771832473512941.wt journal mongod.lock sizeStorer.wt storage.bson".split()
        dirs[dp] = files if info.family == "mongo" else []
        parent, _, leaf = dp.rpartition("/")
        while parent:
            dirs.setdefault(parent, [])
            if leaf not in dirs[parent]:
                dirs[parent].append(leaf)
            parent, _, leaf = parent.rpartition("/")
        if leaf and leaf not in dirs["/"]:
            dirs["/"].append(leaf)
    return dirs


def _cwd(info: ImageInfo) -> str:
    return {"go": "/go/src/github.com/harlow/go-micro-services", "jaeger": "/"}.get(info.family, "/")


def _abs(info: ImageInfo, p: str) -> str:
    return norm_path(p if p.startswith("/") else _cwd(info).rstrip("/") + "/" + p)


def _cat(view: ContainerView, argv: list[str], stdin: str | None) -> ExecResult:
    if stdin is not None and len(argv) == 1:
        return ExecResult(stdin, 0)
    info = view.image
    out, code = [], 0
    dirs = _dirs(view, info)
    for f in argv[1:]:
        if f.startswith("-") and f != "-":
            continue
        p = _abs(info, f)
        text = _file(view, info, p)
        if text is None:
            code = 1
            if p in dirs:
                out.append("cat: read error: Is a directory\n" if info.busybox else f"cat: {f}: Is a directory\n")
            else:
                out.append(f"cat: can't open '{f}': No such file or directory\n" if info.busybox else f"cat: {f}: No such file or directory\n")
            continue
        out.append(text)
    return ExecResult("".join(out), code)


def _ls(view: ContainerView, argv: list[str], stdin: str | None) -> ExecResult:
    info = view.image
    long = show_all = False
    paths = []
    for a in argv[1:]:
        if a.startswith("-") and len(a) > 1:
            for c in a.lstrip("-"):
                if c == "l":
                    long = True
                elif c in "aA":
                    show_all = True
                elif c not in "1hdtrSFRin":
                    return ExecResult(f"ls: unrecognized option: {c}\nBusyBox v1.36.1 (2023-07-27 17:12:24 UTC) multi-call binary.\n\nUsage: ls [-1AaCxdLHRFplinshrSXvctu] [-w WIDTH] [FILE]...\n" if info.busybox else f"ls: invalid option -- '{c}'\nTry 'ls --help' for more information.\n", 1 if info.busybox else 2)
        else:
            paths.append(a)
    paths = paths or ["."]
    dirs = _dirs(view, info)
    out, code = [], 0
    dt = wall(view.node, view.now - view.uptime_s)
    stamp = f"{dt:%b} {dt.day:2d} {dt:%H:%M}"
    uid_name = info.user if info.family in ("mongo",) else "root"
    for p in paths:
        ap = _abs(info, p)
        if ap in dirs:
            comp = view.component
            if comp is not None and comp.volume_claim and ap == norm_path(comp.data_path):
                d = data_disk(view)
                if d is not None and d.bad_read_fraction > 0 and (stable_hash(ap, int(view.now // 10), view.variant) % 10_000) / 10_000 < min(d.bad_read_fraction * 3, 0.9):
                    out.append(f"ls: {p}: Input/output error\n" if info.busybox else f"ls: reading directory '{p}': Input/output error\n")
                    code = 1 if info.busybox else 2
                    continue
            entries = sorted(dirs[ap])
            if show_all:
                entries = [".", ".."] + entries
            if len(paths) > 1:
                out.append(f"{p}:\n")
            if long:
                out.append(f"total {4 * len(entries)}\n")
                for e in entries:
                    isdir = e in (".", "..") or (ap.rstrip("/") + "/" + e) in dirs
                    owner = uid_name if ap.startswith("/data") else "root"
                    size = 4096 if isdir else len(_file(view, info, ap.rstrip("/") + "/" + e) or "") or 16384 + stable_hash(ap, e) % 90_000
                    out.append(f"{'drwxr-xr-x' if isdir else '-rw-r--r--'} {2 if isdir else 1} {owner:<8} {owner:<8} {size:>8} {stamp} {e}\n")
            else:
                out.append("".join(e + "\n" for e in entries))
        elif _file(view, info, ap) is not None:
            out.append(f"-rw-r--r-- 1 root root {len(_file(view, info, ap) or ''):>8} {stamp} {p}\n" if long else p + "\n")
        else:
            out.append(f"ls: {p}: No such file or directory\n" if info.busybox else f"ls: cannot access '{p}': No such file or directory\n")
            code = 1 if info.busybox else 2
    return ExecResult("".join(out), code)


# --------------------------------------------------------------------------- processes and identity

def _ps(view: ContainerView, argv: list[str], stdin: str | None) -> ExecResult:
    info = view.image
    cmd = " ".join(process_cmdline(view.container, info))
    uid, name, _ = _user(view, info)
    main_user = "mongodb" if info.family == "mongo" else (name or str(uid))
    me = name or str(uid)
    started = view.now - view.uptime_s
    self_cmd = " ".join(argv)
    self_pid = 7 + stable_hash(view.now, self_cmd) % 400
    state = "D" if _proc_state(view).startswith("D") else "S"
    cpu_s = view.uptime_s * (0.02 if info.family != "mongo" else 0.05)
    if info.busybox:
        rows = ["PID   USER     TIME  COMMAND"]
        if view.process_running:
            rows.append(f"{1:>5} {main_user[:8]:<8} {int(cpu_s) // 60}:{int(cpu_s) % 60:02d} {cmd}")
        rows.append(f"{self_pid:>5} {me[:8]:<8} 0:00 {self_cmd}")
        return ExecResult("\n".join(rows) + "\n", 0)
    args = argv[1:]
    dt = wall(view.node, started)
    start = f"{dt:%H:%M}" if view.uptime_s < 86_400 else f"{dt:%b%d}"
    now_s = f"{wall(view.node, view.now):%H:%M}"
    rss = 160_000 + stable_hash(_pod_name(view)) % 40_000 if info.family == "mongo" else 8_000 + stable_hash(_pod_name(view)) % 9_000
    mem_pct = rss * 100.0 / max(view.node.memory_bytes / 1024, 1)
    if args and args[0].lstrip("-").startswith("ef") or args and args[0] in ("-e", "-A"):
        rows = ["UID          PID    PPID  C STIME TTY          TIME CMD"]
        if view.process_running:
            t = int(cpu_s)
            rows.append(f"{main_user[:8]:<8} {1:>7} {0:>7} {1:>2} {start:<5} ?        {t // 3600:02d}:{t % 3600 // 60:02d}:{t % 60:02d} {cmd}")
        rows.append(f"{me[:8]:<8} {self_pid:>7} {0:>7} {0:>2} {now_s:<5} ?        00:00:00 {self_cmd}")
        return ExecResult("\n".join(rows) + "\n", 0)
    if args and args[0].lstrip("-") not in ("aux", "ax", "auxww", "auxf", "axu"):
        return ExecResult("error: unsupported option (BSD syntax)\n\nUsage:\n ps [options]\n\n Try 'ps --help <simple|list|output|threads|misc|all>'\n  or 'ps --help <s|l|o|t|m|a>'\n for additional help text.\n\nFor more details see ps(1).\n", 1)
    if not args:
        return ExecResult(f"    PID TTY          TIME CMD\n{self_pid:>7} ?        00:00:00 ps\n", 0)
    rows = ["USER         PID %CPU %MEM    VSZ   RSS TTY      STAT START   TIME COMMAND"]
    if view.process_running:
        t = int(cpu_s)
        rows.append(f"{main_user[:8]:<8} {1:>7} {1.2 if info.family == 'mongo' else 0.4:>4.1f} {mem_pct:>4.1f} {rss * 6 + 400_000:>6} {rss:>5} ?        {state}sl  {start:>5} {t // 60:>3}:{t % 60:02d} {cmd}")
    rows.append(f"{me[:8]:<8} {self_pid:>7} {0.0:>4.1f} {0.0:>4.1f} {7060:>6} {1584:>5} ?        Rs   {now_s:>5}   0:00 {self_cmd}")
    return ExecResult("\n".join(rows) + "\n", 0)


def _id(view: ContainerView, argv: list[str], stdin: str | None) -> ExecResult:
    info = view.image
    uid, name, gid = _user(view, info)
    gname = "root" if gid == 0 else (info.group if name and not info.group.isdigit() else None)
    if len(argv) > 1:
        a = argv[1]
        if a == "-u":
            return ExecResult(f"{uid}\n", 0)
        if a == "-g":
            return ExecResult(f"{gid}\n", 0)
        if a in ("-un", "-nu"):
            return ExecResult(f"{name}\n", 0) if name else ExecResult(f"id: cannot find name for user ID {uid}\n", 1)
        return ExecResult(f"id: invalid option -- '{a.lstrip('-')[:1]}'\n" if a.startswith("-") else f"id: '{a}': no such user\n", 1)
    u = f"{uid}({name})" if name else str(uid)
    g = f"{gid}({gname})" if gname else str(gid)
    return ExecResult(f"uid={u} gid={g} groups={g}\n", 0)


def _whoami(view: ContainerView, argv: list[str], stdin: str | None) -> ExecResult:
    info = view.image
    uid, name, _ = _user(view, info)
    if name:
        return ExecResult(name + "\n", 0)
    return ExecResult(f"whoami: unknown uid {uid}\n" if info.busybox else f"whoami: cannot find name for user ID {uid}\n", 1)


def _df(view: ContainerView, argv: list[str], stdin: str | None) -> ExecResult:
    info = view.image
    human = any(a in ("-h", "--human-readable") or (a.startswith("-") and "h" in a and not a.startswith("--")) for a in argv[1:])
    for a in argv[1:]:
        if a.startswith("-") and any(c not in "hTPkami" for c in a.lstrip("-")) and not a.startswith("--human"):
            return ExecResult(f"df: invalid option -- '{next(c for c in a.lstrip('-') if c not in 'hTPkami')}'\n" + ("Try 'df --help' for more information.\n" if not info.busybox else ""), 1)
    node = view.node
    root_disk = node.disks[0] if node.disks else None
    rows: list[tuple[str, int, int, int, str]] = []
    if root_disk is not None:
        size = int(root_disk.size_bytes * 0.984 * 0.999)
        used = min(int(root_disk.used_bytes), size)
        avail = max(int(size * 0.95) - used, 0)
        rows.append(("overlay", size, used, avail, "/"))
    mem = int(node.memory_bytes)
    rows.append(("tmpfs", 64 * 1024 * 1024, 0, 64 * 1024 * 1024, "/dev"))
    d = data_disk(view)
    if d is not None and view.component is not None:
        size = int(d.size_bytes * 0.983)
        used = min(int(d.used_bytes), size)
        rows.append((f"/dev/{d.device}1", size, used, max(int(size * 0.95) - used, 0), view.component.data_path))
    if root_disk is not None:
        rows.append((f"/dev/{root_disk.device}1", rows[0][1], rows[0][2], rows[0][3], "/etc/hosts"))
        rows.append((f"/dev/{root_disk.device}1", rows[0][1], rows[0][2], rows[0][3], "/dev/termination-log"))
    rows += [
        shm_row(view.os_state),
        ("tmpfs", 170 * 1024 * 1024, 12 * 1024, 170 * 1024 * 1024 - 12 * 1024, "/run/secrets/kubernetes.io/serviceaccount"),
        ("tmpfs", mem // 2, 0, mem // 2, "/proc/acpi"),
        ("tmpfs", mem // 2, 0, mem // 2, "/proc/scsi"),
        ("tmpfs", mem // 2, 0, mem // 2, "/sys/firmware"),
    ]
    paths = [a for a in argv[1:] if not a.startswith("-")]
    if paths:
        # ``df PATH``: only the file system each path is on (the longest mount point above it)
        picked = []
        for p in paths:
            p = "/" + p.strip("/")
            best = max((r for r in rows if p == r[4] or p.startswith(r[4].rstrip("/") + "/")), key=lambda r: len(r[4]), default=None)
            if best is not None and best not in picked:
                picked.append(best)
        rows = picked
    if info.busybox:
        fmt = human_busybox if human else (lambda n: str(-(-n // 1024)))
        head = f"{'Filesystem':<20}{'Size' if human else '1K-blocks':>10}{'Used':>10}{'Available':>10} Use% Mounted on\n"
        body = "".join(
            f"{src:<20}{fmt(s):>10}{fmt(u):>10}{fmt(a):>10}{(-(-u * 100 // (u + a)) if u + a else 0):>4}% {m}\n" if len(src) <= 20 else f"{src}\n{'':<20}{fmt(s):>10}{fmt(u):>10}{fmt(a):>10}{(-(-u * 100 // (u + a)) if u + a else 0):>4}% {m}\n"
            for src, s, u, a, m in rows
        )
        return ExecResult(head + body, 0)
    fmt2 = human_df if human else (lambda n: str(-(-n // 1024)))
    cells = [[src, fmt2(s), fmt2(u), fmt2(a), f"{-(-u * 100 // (u + a)) if u + a else 0}%", m] for src, s, u, a, m in rows]
    head = ["Filesystem", "Size" if human else "1K-blocks", "Used", "Avail" if human else "Available", "Use%", "Mounted on"]
    w = [max(14, len(head[0]), *(len(c[0]) for c in cells))] + [max(5 if k < 4 else 4, len(head[k]), *(len(c[k]) for c in cells)) for k in range(1, 5)]
    lines = [f"{r[0]:<{w[0]}} {r[1]:>{w[1]}} {r[2]:>{w[2]}} {r[3]:>{w[3]}} {r[4]:>{w[4]}} {r[5]}" for r in [head] + cells]
    return ExecResult("\n".join(lines) + "\n", 0)


def _uptime(view: ContainerView, argv: list[str], stdin: str | None) -> ExecResult:
    line = uptime_line(view.node, view.now, users=0)
    return ExecResult(line + "\n", 0)


def _date(view: ContainerView, argv: list[str], stdin: str | None) -> ExecResult:
    info = view.image
    dt = wall(view.node, view.now)
    for a in argv[1:]:
        if a.startswith("+"):
            return ExecResult(strftime(dt, a[1:]) + "\n", 0)
        if a in ("-u", "--utc", "-R", "-I", "-Iseconds"):
            if a == "-R":
                return ExecResult(f"{dt:%a, %d %b %Y %H:%M:%S} +0000\n", 0)
            if a.startswith("-I"):
                return ExecResult(f"{dt:%Y-%m-%dT%H:%M:%S}+00:00\n" if a == "-Iseconds" else f"{dt:%Y-%m-%d}\n", 0)
            continue
        return ExecResult(f"date: invalid date '{a}'\n" if not a.startswith("-") else (f"date: unrecognized option: {a.lstrip('-')}\n" if info.busybox else f"date: invalid option -- '{a[1:2]}'\nTry 'date --help' for more information.\n"), 1)
    return ExecResult(date_cmd(dt) + "\n", 0)


def _printenv(view: ContainerView, argv: list[str], stdin: str | None) -> ExecResult:
    env = container_env(view, view.image)
    if len(argv) == 1:
        return ExecResult("".join(f"{k}={v}\n" for k, v in env), 0)
    d = dict(env)
    out, code = [], 0
    for k in argv[1:]:
        if k in d:
            out.append(d[k] + "\n")
        else:
            code = 1
    return ExecResult("".join(out), code)


def _env(view: ContainerView, argv: list[str], stdin: str | None) -> ExecResult:
    info = view.image
    if len(argv) == 1:
        return _printenv(view, argv, stdin)
    rest = list(argv[1:])
    extra = []
    while rest and ("=" in rest[0] and not rest[0].startswith("=")):
        extra.append(rest.pop(0))
    if rest and rest[0].startswith("-") and rest[0] not in ("-i", "-"):
        return ExecResult(f"env: unrecognized option: {rest[0].lstrip('-')}\n" if info.busybox else f"env: invalid option -- '{rest[0][1:2]}'\nTry 'env --help' for more information.\n", 125 if not info.busybox else 1)
    if not rest:
        base = _printenv(view, ["env"], None).output
        return ExecResult(base + "".join(e + "\n" for e in extra), 0)
    return _dispatch(view, rest, stdin)


def _ulimit(view: ContainerView, argv: list[str], stdin: str | None) -> ExecResult:
    if len(argv) == 1 or argv[1] in ("-f",):
        return ExecResult("unlimited\n", 0)
    a = argv[1]
    if a in ("-n", "-Sn", "-Hn"):
        return ExecResult(f"{_NOFILE}\n", 0)
    if a == "-a":
        return ExecResult(
            f"time(seconds)        unlimited\nfile(blocks)         unlimited\ndata(kbytes)         unlimited\nstack(kbytes)        8192\ncoredump(blocks)     unlimited\nmemory(kbytes)       unlimited\nlocked memory(kbytes) 8192\nprocess              unlimited\nnofiles              {_NOFILE}\nvmemory(kbytes)      unlimited\nlocks                unlimited\nrtprio               0\n",
            0,
        )
    if a == "-u":
        return ExecResult("unlimited\n", 0)
    return ExecResult(f"sh: 1: ulimit: Illegal option {a}\n", 2)


def _sh(view: ContainerView, argv: list[str], stdin: str | None) -> ExecResult:
    """``sh -c SCRIPT`` (or a script on stdin, ``exec -i``): the script runs in the shell's language, its commands here."""
    info = view.image
    script = argv[2] if len(argv) >= 3 and argv[1] in ("-c", "-ec", "-xc", "-lc", "-euc") else None
    if script is None and len(argv) == 2 and argv[1] == "-c":
        return ExecResult("sh: 1: -c: requires an argument\n" if not info.busybox else "sh: -c requires an argument\n", 2)
    if script is None and stdin:
        script = stdin
    if script is None:
        return ExecResult("", 0)
    return view.shell.run_script(script, dialect="sh", env=dict(container_env(view, info)), run=lambda av, sin: _dispatch(view, av, sin))


def _echo(view: ContainerView, argv: list[str], stdin: str | None) -> ExecResult:
    args = argv[1:]
    nl = True
    if args and args[0] == "-n":
        nl = False
        args = args[1:]
    if args and args[0] == "-e":
        args = args[1:]
        return ExecResult(" ".join(args).replace("\\n", "\n").replace("\\r", "\r").replace("\\t", "\t") + ("\n" if nl else ""), 0)
    return ExecResult(" ".join(args) + ("\n" if nl else ""), 0)


def _memcached_tool(view: ContainerView, argv: list[str], stdin: str | None) -> ExecResult:
    if len(argv) < 2:
        return ExecResult("Usage: memcached-tool <host[:port] | /path/to/socket> [mode]\n", 1)
    target = argv[1]
    host, _, port = target.partition(":")
    res = nc(view, ["nc", host, port or "11211"], "stats\n", info=image_info("busybox"))
    if res.exit_code:
        return ExecResult(f"Couldn't connect to {target}\n", 1)
    stats = memcached_stats(view, host)
    lines = [ln.split() for ln in stats.splitlines() if ln.startswith("STAT")]
    return ExecResult("#" + f"{target:>40}" + "\n" + "".join(f"{k[1]:>30} {k[2]:>12}\n" for k in lines), 0)


# --------------------------------------------------------------------------- the shell's builtins

def _exit(view: ContainerView, argv: list[str], stdin: str | None) -> ExecResult:
    code = argv[1] if len(argv) > 1 and argv[1].isdigit() else "0"
    return ExecResult("", int(code) % 256)


def _test(view: ContainerView, argv: list[str], stdin: str | None) -> ExecResult:
    return ExecResult("", 0 if len(argv) > 1 else 1)


def _sleep(view: ContainerView, argv: list[str], stdin: str | None) -> ExecResult:
    return ExecResult("", 0) if len(argv) > 1 else ExecResult("sleep: missing operand\n", 1)


def _printf(view: ContainerView, argv: list[str], stdin: str | None) -> ExecResult:
    fmt = argv[1] if len(argv) > 1 else ""
    try:
        text = fmt.replace("\\n", "\n").replace("%s", "{}").format(*argv[2:]) if "%s" in fmt else fmt.replace("\\n", "\n")
    except (IndexError, ValueError):
        text = fmt.replace("\\n", "\n")
    return ExecResult(text, 0)


#: the shells themselves: programs, not builtins, though every image's shell answers to them
_SHELLS = ("sh", "ash", "bash", "dash")


def _which(view: ContainerView, argv: list[str], stdin: str | None) -> ExecResult:
    """``which``, ``command -v`` and ``type``: the image's binaries and the shell's builtins."""
    args = [a for a in argv[1:] if not a.startswith("-")]

    def builtin(a: str) -> bool:
        b = CONTAINER_BINARIES.get(a)
        return b is not None and b.where == "shell" and a not in _SHELLS

    found = [a for a in args if a in view.image.bins or builtin(a)]
    if argv[0].rsplit("/", 1)[-1] == "type":
        return ExecResult("".join(f"{a} is /usr/bin/{a}\n" if a in found else f"{a}: not found\n" for a in args), 0 if len(found) == len(args) else 127)
    return ExecResult("".join((a if builtin(a) else f"/usr/bin/{a}") + "\n" for a in found), 0 if found and len(found) == len(args) else 1)


def _kill(view: ContainerView, argv: list[str], stdin: str | None) -> ExecResult:
    if len(argv) >= 3 and argv[1] == "-0":
        return ExecResult("", 0 if argv[2] == "1" and view.process_running else 1)
    return ExecResult("sh: 1: kill: Operation not permitted\n", 1)


def _status(code: int) -> Callable[[ContainerView, list[str], str | None], ExecResult]:
    """A builtin that only sets the exit status (``true``, ``cd``, ``export`` outside a script)."""
    return lambda view, argv, stdin: ExecResult("", code)


# --------------------------------------------------------------------------- the image's small tools

def _text_tool(view: ContainerView, argv: list[str], stdin: str | None) -> ExecResult:
    """grep, head, tail, wc, sort, uniq, cut, awk: over the files named, else over stdin (the shell's filters)."""
    base = argv[0].rsplit("/", 1)[-1]
    opts, operands = text_operands([base, *argv[1:]])
    lead = 1 if base in ("grep", "egrep", "awk") and not ("-e" in opts or "-f" in opts) else 0  # the pattern or program
    files = operands[lead:]
    if not files:
        if stdin is not None:
            return view.shell.text_filter([base, *argv[1:]], stdin)
        if base in ("grep", "egrep"):
            return ExecResult("", 1) if operands or lead == 0 else ExecResult("Usage: grep [OPTION]... PATTERNS [FILE]...\nTry 'grep --help' for more information.\n", 2)
        return ExecResult("", 0)
    res = _cat(view, ["cat", *files], None)
    if res.exit_code:
        if base in ("grep", "egrep"):
            return ExecResult(res.output.replace("cat: can't open", "grep:").replace("cat:", "grep:"), 2)
        return ExecResult(res.output.replace("cat:", f"{base}:"), 1)
    return view.shell.text_filter([base, *opts, *operands[:lead]], res.output)


def _hostname_cmd(view: ContainerView, argv: list[str], stdin: str | None) -> ExecResult:
    return ExecResult(_hostname(view) + "\n", 0)


def _uname(view: ContainerView, argv: list[str], stdin: str | None) -> ExecResult:
    full = "Linux " + _hostname(view) + f" {view.node.kernel} #1 SMP PREEMPT_DYNAMIC Debian 6.1.115-1 (2024-11-01) x86_64 " + ("Linux" if view.image.busybox else "GNU/Linux")
    return ExecResult((full if "-a" in argv else "Linux" if len(argv) == 1 else view.node.kernel if "-r" in argv else "Linux") + "\n", 0)


def _pwd(view: ContainerView, argv: list[str], stdin: str | None) -> ExecResult:
    return ExecResult(_cwd(view.image) + "\n", 0)


def _mount(view: ContainerView, argv: list[str], stdin: str | None) -> ExecResult:
    return ExecResult(f"overlay on / type overlay (rw,relatime,lowerdir=/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs/snapshots/{stable_hash(_pod_name(view)) % 900 + 100}/fs)\nproc on /proc type proc (rw,nosuid,nodev,noexec,relatime)\ntmpfs on /dev type tmpfs (rw,nosuid,size=65536k,mode=755,inode64)\n", 0)


def _daemon_cli(view: ContainerView, argv: list[str], stdin: str | None) -> ExecResult:
    """A server binary run by hand: its version, or the error of a second instance next to PID 1."""
    base = argv[0].rsplit("/", 1)[-1]
    if "--version" in argv or "-V" in argv or "version" in argv[1:2]:
        ver = {"mongod": "db version v" + str(view.container.get("image", ":4.4.6")).rsplit(":", 1)[-1], "memcached": "memcached 1.6.29", "consul": "Consul v1.19.1\nRevision 9f62fb41\nBuild Date 2024-07-11T14:41:28Z", "nginx": "nginx version: nginx/1.25.5"}.get(base, base)
        return ExecResult(ver + "\n", 0)
    if base == "consul" and len(argv) > 1 and argv[1] == "members":
        return ExecResult(f"Node                          Address          Status  Type    Build   Protocol  DC   Partition  Segment\n{_pod_name(view):<29} 127.0.0.1:8301   alive   server  1.19.1  2         dc1  default    <all>\n", 0)
    if base == "mongod" and view.process_running:
        return ExecResult('{"t":{"$date":"2026-03-02T09:00:00.000+00:00"},"s":"E",  "c":"STORAGE",  "id":20557,   "ctx":"initandlisten","msg":"DBException in initAndListen, terminating","attr":{"error":"DBPathInUse: Unable to lock the lock file: /data/db/mongod.lock (Resource temporarily unavailable). Another mongod instance is already running on the /data/db directory"}}\n', 100)
    if base == "memcached" and view.process_running:
        return ExecResult("failed to listen on TCP port 11211: Address in use\n", 71)
    return ExecResult("", 1)


CONTAINER_BINARIES: dict[str, Binary[ContainerView]] = binary_table([
    # the shell and its builtins: in every image
    Binary("sh", "shell", "the container's shell: run a script (-c, or stdin)", _sh, aliases=("ash", "dash")),
    Binary("bash", "image", "bash, where the image ships it: run a script (-c, or stdin)", _sh),
    Binary("echo", "shell", "print its arguments", _echo),
    Binary("printf", "shell", "print formatted text", _printf),
    Binary("true", "shell", "exit 0", _status(0), aliases=("cd", "export", "set", "unset", "read", "wait")),
    Binary("false", "shell", "exit 1", _status(1)),
    Binary("exit", "shell", "exit with a status", _exit),
    Binary("test", "shell", "evaluate a condition", _test, aliases=("[",)),
    Binary("sleep", "shell", "wait (commands take no simulated time here)", _sleep),
    Binary("ulimit", "shell", "the shell's resource limits", _ulimit),
    Binary("which", "shell", "where a program is (also command -v, type)", _which, aliases=("command", "type")),
    Binary("kill", "shell", "signal a process (-0: is it alive)", _kill),
    # files, environment, identity
    Binary("cat", "image", "print files (or stdin)", _cat),
    Binary("ls", "image", "list directories", _ls),
    Binary("env", "image", "the environment, or run a command in it", _env),
    Binary("printenv", "image", "environment variables", _printenv),
    Binary("id", "image", "user and group ids", _id),
    Binary("whoami", "image", "the user name", _whoami),
    Binary("hostname", "image", "the pod's host name", _hostname_cmd),
    Binary("uname", "image", "kernel name and release", _uname),
    Binary("pwd", "image", "the working directory", _pwd),
    # processes and resources
    Binary("ps", "image", "the container's processes", _ps),
    Binary("date", "image", "the node's wall clock", _date),
    Binary("uptime", "image", "the node's uptime and load", _uptime),
    Binary("df", "image", "the container's file systems", _df),
    Binary("free", "image", "the node's memory", free),
    Binary("mount", "image", "the container's mounts", _mount),
    # text tools: the shell's filters over files or stdin
    Binary("grep", "image", "search files or stdin for a pattern", _text_tool, aliases=("egrep",)),
    Binary("head", "image", "the first lines of files or stdin", _text_tool),
    Binary("tail", "image", "the last lines of files or stdin", _text_tool),
    Binary("wc", "image", "count lines, words, bytes", _text_tool),
    Binary("sort", "image", "sort lines", _text_tool),
    Binary("uniq", "image", "drop (or count) repeated lines", _text_tool),
    Binary("cut", "image", "select fields or characters of lines", _text_tool),
    Binary("awk", "image", "print fields of lines ('{print $N}')", _text_tool),
    # network probes from the pod
    Binary("nslookup", "image", "resolve a name through the pod's resolver", nslookup),
    Binary("getent", "image", "look a host up (hosts, ahosts)", getent),
    Binary("nc", "image", "open a TCP connection (-z: just probe it)", nc),
    Binary("wget", "image", "fetch a URL", wget),
    Binary("curl", "image", "fetch a URL", curl),
    Binary("netstat", "image", "the pod's sockets", netstat),
    Binary("ss", "image", "the pod's sockets", ss),
    # datastore clients
    Binary("mongo", "image", "MongoDB's legacy shell (--eval)", mongo_shell),
    Binary("mongosh", "image", "MongoDB's shell (--eval)", mongo_shell),
    Binary("redis-cli", "image", "talk to a redis server", redis_cli),
    Binary("memcached-tool", "image", "a memcached server's stats", _memcached_tool),
    # the servers' own binaries, run by hand
    Binary("mongod", "image", "the MongoDB server", _daemon_cli),
    Binary("memcached", "image", "the memcached server", _daemon_cli),
    Binary("consul", "image", "the consul agent (version, members)", _daemon_cli),
    Binary("nginx", "image", "the nginx server", _daemon_cli),
    Binary("redis-server", "image", "the redis server", _daemon_cli),
    Binary("all-in-one-linux", "image", "jaeger's all-in-one server", _daemon_cli),
])


def _dispatch(view: ContainerView, argv: list[str], stdin: str | None) -> ExecResult:
    if not argv:
        return ExecResult("", 0)
    name = argv[0]
    base = name.rsplit("/", 1)[-1] if "/" in name else name
    if view.app_tool is not None:
        out = view.app_tool(argv, stdin)
        if out is not None:
            return out
    binary = CONTAINER_BINARIES.get(base)
    if binary is None or binary.where != "shell":
        if base not in view.image.bins:
            return _not_found(name)
        if binary is None:
            return ExecResult(f"{base}: applet not supported in this environment\n" if view.image.busybox else f"{base}: unsupported in this environment\n", 1)
    return binary.run(view, argv, stdin)


def run_container_command(view: ContainerView, argv: list[str], stdin: str | None = None) -> ExecResult:
    """Run ``argv`` in the container described by ``view`` (``stdin``: what ``exec -i`` piped in); never raises."""
    try:
        return _dispatch(view, [str(a) for a in argv], stdin)
    except Exception as e:  # noqa: BLE001 - an interpreter bug must never crash an episode
        name = str(argv[0]) if argv else "sh"
        return ExecResult(f"{name}: internal error: {type(e).__name__}\n", 1)
