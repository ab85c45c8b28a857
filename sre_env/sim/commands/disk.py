"""Storage views of a node: ``df``, ``lsblk``, ``iostat``, ``/proc/diskstats``, ``mount``.

All numbers come from the :class:`~sre_env.sim.kernel.hosts.Disk` counters and the
node's kernel statistics (:mod:`sre_env.sim.node.stats`); this module only lays
them out the way each tool prints them.
"""

from __future__ import annotations

from typing import Any

from sre_env.backend import ExecResult
from sre_env.sim.commands.common import human_df, human_lsblk, running_containers
from sre_env.sim.commands.views import HostView
from sre_env.sim.kernel.hashing import stable_hash
from sre_env.sim.kernel.hosts import HostNode
from sre_env.sim.node.containerd import container_id, sandbox_id
from sre_env.sim.node.stats import DiskStats, fs_numbers, iowait_percent, partitions
from sre_env.sim.node.wallclock import wall

__all__ = ["df", "lsblk", "iostat", "diskstats", "mount_lines"]


def _mem_tmpfs(node: HostNode) -> int:
    return int(node.memory_bytes) // 10


def _container_mounts(pods: list[dict[str, Any]]) -> list[tuple[str, str, str, int, int]]:
    """(source, fstype, mountpoint, size, used) for the runtime's per-container mounts."""
    out = []
    seen = set()
    for pod, _spec, st in running_containers(pods):
        meta = pod.get("metadata") or {}
        uid = str(meta.get("uid") or stable_hash(meta.get("name", "")))
        if uid not in seen:
            seen.add(uid)
            sid = sandbox_id(pod)
            out.append(("shm", "tmpfs", f"/run/containerd/io.containerd.grpc.v1.cri/sandboxes/{sid}/shm", 64 * 1024 * 1024, 0))
            out.append(("overlay", "overlay", f"/run/containerd/io.containerd.runtime.v2.task/k8s.io/{sid}/rootfs", -1, -1))
            suffix = "".join("bcdfghjklmnpqrstvwxz2456789"[(stable_hash(uid, k) % 27)] for k in range(5))
            out.append(("tmpfs", "tmpfs", f"/var/lib/kubelet/pods/{uid}/volumes/kubernetes.io~projected/kube-api-access-{suffix}", 170 * 1024 * 1024, 12 * 1024))
        out.append(("overlay", "overlay", f"/run/containerd/io.containerd.runtime.v2.task/k8s.io/{container_id(pod, st)}/rootfs", -1, -1))
    return out


def _df_rows(node: HostNode, pods: list[dict[str, Any]]) -> list[tuple[str, str, int, int, int, int, int, str]]:
    """(source, type, size, used, avail, inodes, iused, mountpoint)."""
    mem = int(node.memory_bytes)
    rows: list[tuple[str, str, int, int, int, int, int, str]] = [
        ("udev", "devtmpfs", mem // 2, 0, mem // 2, mem // 8192, 412, "/dev"),
        ("tmpfs", "tmpfs", _mem_tmpfs(node), 1_245_184, _mem_tmpfs(node) - 1_245_184, mem // 40960, 1021, "/run"),
    ]
    root = None
    for d, i, part, _m, mnt, size in partitions(node):
        if not mnt:
            continue
        if mnt == "/boot/efi":
            continue
        s, u, a = fs_numbers(d, size)
        row = (f"/dev/{part}", "ext4", s, u, a, int(d.inodes_total), int(d.inodes_used), mnt)
        rows.append(row)
        if mnt == "/":
            root = row
            rows.append(("tmpfs", "tmpfs", mem // 2, 0, mem // 2, mem // 8192, 1, "/dev/shm"))
            rows.append(("tmpfs", "tmpfs", 5 * 1024 * 1024, 0, 5 * 1024 * 1024, mem // 8192, 3, "/run/lock"))
    if node.disks:
        rows.append((f"/dev/{node.disks[0].device}15", "vfat", 124 * 1024 * 1024, 12_374_016, 117 * 1024 * 1024, 0, 0, "/boot/efi"))
    for src, typ, mnt, size, used in _container_mounts(pods):
        if size < 0 and root is not None:
            rows.append((src, typ, root[2], root[3], root[4], root[5], root[6], mnt))
        elif size >= 0:
            rows.append((src, typ, size, used, size - used, mem // 8192, 9 if used else 1, mnt))
    return rows


def _pct(used: int, avail: int) -> str:
    if used + avail <= 0:
        return "-"
    return f"{-(-used * 100 // (used + avail))}%"


def df(view: HostView, argv: list[str], stdin: str | None = None) -> ExecResult:
    node, pods = view.node, view.pods
    human = inodes = types = False
    paths: list[str] = []
    it = iter(argv[1:])
    for a in it:
        if a in ("-h", "--human-readable", "-H", "--si"):
            human = True
        elif a in ("-i", "--inodes"):
            inodes = True
        elif a in ("-T", "--print-type"):
            types = True
        elif a in ("-l", "--local", "-a", "--all", "-P", "--portability", "-k"):
            continue
        elif a in ("-x", "-t") or a.startswith(("--exclude-type", "--type")):
            if "=" not in a and next(it, None) is None:
                return ExecResult(f"df: option requires an argument -- '{a[1]}'\nTry 'df --help' for more information.\n", 1)
        elif a.startswith("-") and not a.startswith("--") and len(a) > 1:
            bad = next((c for c in a[1:] if c not in "hiTHlakP"), None)
            if bad is not None:
                return ExecResult(f"df: invalid option -- '{bad}'\nTry 'df --help' for more information.\n", 1)
            human |= "h" in a or "H" in a
            inodes |= "i" in a
            types |= "T" in a
        elif a.startswith("--"):
            return ExecResult(f"df: unrecognized option '{a}'\nTry 'df --help' for more information.\n", 1)
        else:
            paths.append(a)
    rows = _df_rows(node, pods)
    errs: list[str] = []
    if paths:
        sel = []
        mounts = sorted({r[7] for r in rows}, key=len, reverse=True)
        for p in paths:
            if not p.startswith("/") or not _host_path_exists(node, p):
                errs.append(f"df: {p}: No such file or directory")
                continue
            best = next(m for m in mounts if p == m or p.startswith(m.rstrip("/") + "/") or m == "/")
            sel.append(next(r for r in rows if r[7] == best))
        if not sel:
            return ExecResult("\n".join(errs) + "\n", 1)
        rows = sel
    if inodes:
        head = ["Filesystem", "Type", "Inodes", "IUsed", "IFree", "IUse%", "Mounted on"]
        body = [
            [r[0], r[1], _num(r[5], human, True), _num(r[6], human, True), _num(max(r[5] - r[6], 0), human, True), _pct(r[6], max(r[5] - r[6], 0)) if r[5] else "-", r[7]]
            for r in rows
        ]
    else:
        head = ["Filesystem", "Type", "Size" if human else "1K-blocks", "Used", "Avail" if human else "Available", "Use%", "Mounted on"]
        body = [[r[0], r[1], _num(r[2], human), _num(r[3], human), _num(r[4], human), _pct(r[3], r[4]), r[7]] for r in rows]
    if not types:
        head.pop(1)
        for b in body:
            b.pop(1)
    return ExecResult(_align(head, body, types) + ("\n".join(errs) + "\n" if errs else ""), 1 if errs else 0)


def _host_path_exists(node: HostNode, p: str) -> bool:
    top = p.split("/")[1] if p.count("/") >= 1 else ""
    return top in {"", "bin", "boot", "dev", "etc", "home", "lib", "lib64", "mnt", "opt", "proc", "root", "run", "sbin", "srv", "sys", "tmp", "usr", "var"}


def _num(n: int, human: bool, count: bool = False) -> str:
    if human:
        if count:
            if n < 1000:
                return str(n)
            v = float(n)
            for u in "KMGT":
                v /= 1024.0
                if v < 1024:
                    return f"{-(-int(v * 10) // 10) / 10:.1f}{u}" if v < 10 else f"{-(-int(v) // 1)}{u}"
        return human_df(n)
    return str(n if count else -(-n // 1024))


def _align(head: list[str], body: list[list[str]], types: bool) -> str:
    """coreutils df alignment: source left (min 14), type left, numbers right (min 5), mountpoint free."""
    cols = len(head)
    left = {0, cols - 1} | ({1} if types else set())
    widths = []
    for c in range(cols):
        w = max(len(head[c]), *(len(b[c]) for b in body)) if body else len(head[c])
        if c == 0:
            w = max(w, 14)
        elif c not in left and head[c] != "Use%" and head[c] != "IUse%":
            w = max(w, 5)
        widths.append(w)
    out = []
    for row in [head] + body:
        cells = []
        for c, v in enumerate(row):
            if c == cols - 1:
                cells.append(v)
            elif c in left:
                cells.append(v.ljust(widths[c]))
            else:
                cells.append(v.rjust(widths[c]))
        out.append(" ".join(cells))
    return "\n".join(out) + "\n"


def lsblk(view: HostView, argv: list[str], stdin: str | None = None) -> ExecResult:
    node = view.node
    for a in argv[1:]:
        if a.startswith("-") and a not in ("-a", "--all", "-p", "--paths", "-f", "--fs", "-l", "--list", "-d", "--nodeps", "-b", "--bytes"):
            return ExecResult(f"lsblk: unrecognized option '{a}'\nTry 'lsblk --help' for more information.\n" if a.startswith("--") else f"lsblk: invalid option -- '{a[1:2]}'\nTry 'lsblk --help' for more information.\n", 1)
    nodeps = "-d" in argv or "--nodeps" in argv
    byts = "-b" in argv or "--bytes" in argv
    rows: list[tuple[str, str, str, str, str, str]] = []
    parts = partitions(node)
    for i, d in enumerate(node.disks):
        size = str(int(d.size_bytes)) if byts else human_lsblk(d.size_bytes)
        rows.append((d.device, f"{8 + (i // 16) * 57:>3}:{(i % 16) * 16}", "0", size, "disk", ""))
        if nodeps:
            continue
        mine = [p for p in parts if p[1] == i]
        for k, (_d, _i, pname, moff, mnt, psize) in enumerate(mine):
            branch = "└─" if k == len(mine) - 1 else "├─"
            rows.append((branch + pname, f"{8 + (i // 16) * 57:>3}:{(i % 16) * 16 + moff}", "0", str(psize) if byts else human_lsblk(psize), "part", mnt))
    nw = max(4, *(len(r[0]) for r in rows)) if rows else 4
    mw = max(7, *(len(r[1]) for r in rows)) if rows else 7
    sw = max(4, *(len(r[3]) for r in rows)) if rows else 4
    out = [f"{'NAME':<{nw}} {'MAJ:MIN':<{mw}} RM {'SIZE':>{sw}} RO TYPE MOUNTPOINTS"]
    for name, mm, _rm, size, typ, mnt in rows:
        out.append(f"{name:<{nw}} {mm:<{mw}}  0 {size:>{sw}}  0 {typ:<4} {mnt}".rstrip())
    return ExecResult("\n".join(out) + "\n", 0)


def _cpu_split(node: HostNode, now: float) -> tuple[float, float, float, float, float, float]:
    cores = max(int(node.cpu_cores), 1)
    busy = min(max(node.cpu_used_millicores, 0.0) / (cores * 10.0), 95.0)
    iow = iowait_percent(node)
    user = busy * 0.7
    system = busy * 0.3
    idle = max(100.0 - user - system - iow, 0.0)
    return (user, 0.0, system, iow, 0.0, idle)


def _header(node: HostNode, now: float) -> str:
    dt = wall(node, now)
    return f"Linux {node.kernel} ({node.name}) \t{dt:%m/%d/%Y} \t_x86_64_\t({node.cpu_cores} CPU)\n\n"


def _cpu_block(vals: tuple[float, ...]) -> str:
    return "avg-cpu:  %user   %nice %system %iowait  %steal   %idle\n" + " " * 7 + "".join(f"  {v:6.2f}" for v in vals) + "\n"


_IOSTAT_USAGE = "Usage: iostat [ options ] [ <interval> [ <count> ] ]\nOptions are:\n[ -c ] [ -d ] [ -h ] [ -k | -m ] [ -N ] [ -s ] [ -t ] [ -V ] [ -x ] [ -y ] [ -z ]\n[ { -f | +f } <directory> ] [ -j { ID | LABEL | PATH | UUID | ... } ]\n[ --dec={ 0 | 1 | 2 } ] [ --human ] [ --pretty ] [ -o JSON ]\n[ [ -H ] -g <group_name> ] [ -p [ <device> [,...] | ALL ] ]\n[ <device> [...] | ALL ] [ --debug ]\n"


def iostat(view: HostView, argv: list[str], stdin: str | None = None) -> ExecResult:
    node, now = view.node, view.now
    ext = cpu_only = dev_only = False
    kb = True
    nums: list[int] = []
    devs: list[str] = []
    for a in argv[1:]:
        if a.startswith("-") and len(a) > 1 and not a[1:].isdigit():
            if a.startswith("--"):
                if a in ("--human", "--pretty"):
                    continue
                return ExecResult(_IOSTAT_USAGE, 1)
            for c in a[1:]:
                if c == "x":
                    ext = True
                elif c == "d":
                    dev_only = True
                elif c == "c":
                    cpu_only = True
                elif c == "m":
                    kb = False
                elif c in "kthyzNs":
                    continue
                else:
                    return ExecResult(_IOSTAT_USAGE, 1)
        elif a.isdigit():
            nums.append(int(a))
        else:
            devs.append(a.removeprefix("/dev/"))
    disks = [(i, d) for i, d in enumerate(node.disks) if not devs or d.device in devs or "ALL" in devs]
    reports = 1
    if nums:
        reports = nums[1] if len(nums) > 1 else 2
        reports = max(1, min(reports, 2))
    up = max(node.uptime(now), 1.0)
    out = [_header(node, now)]
    for r in range(reports):
        recent = r > 0
        if not dev_only:
            vals = _cpu_split(node, now)
            if not recent:
                # since boot: the episode's load is diluted by days of quiet uptime
                vals = (2.1, 0.0, 0.9, 0.12 + (vals[3] - 0.15) * (max(now, 0) / up), 0.0, 0.0)
                vals = vals[:5] + (100.0 - sum(vals[:5]),)
            out.append(_cpu_block(vals) + "\n")
        if cpu_only:
            continue
        if ext:
            out.append(
                "Device            r/s     rkB/s   rrqm/s  %rrqm r_await rareq-sz     w/s     wkB/s   wrqm/s  %wrqm w_await wareq-sz     d/s     dkB/s   drqm/s  %drqm d_await dareq-sz     f/s f_await  aqu-sz  %util\n"
            )
        else:
            unit = "kB" if kb else "MB"
            out.append(f"Device             tps    {unit}_read/s    {unit}_wrtn/s    {unit}_dscd/s    {unit}_read    {unit}_wrtn    {unit}_dscd\n")
        for i, d in disks:
            s = DiskStats(d, i)
            if recent:
                rps = max(d.last_reads_per_s, 0.0) + (0.2 if i == 0 else 0.0)
                wps = max(d.last_writes_per_s, 0.0) + (5.1 if i == 0 else 0.0)
                svc = 5.8 if d.rotational else 0.31
                retry = 7400.0 if d.rotational else 1800.0
                r_await = svc + min(max(d.bad_read_fraction, 0.0), 1.0) * retry if rps > 0 else 0.0
                w_await = svc * 1.9 if wps > 0 else 0.0
                rkb = rps * (s.rsect / max(s.reads, 1)) / 2
                wkb = wps * 24.0
            else:
                rps, wps = s.reads / up, s.writes / up
                r_await, w_await = s.r_await, s.w_await
                rkb, wkb = s.rsect / 2 / up, s.wsect / 2 / up
            busy_ms = rps * r_await + wps * w_await
            util = min(busy_ms / 10.0, 100.0)
            if ext:
                rrqm, wrqm = rps / 9, wps / 3
                out.append(
                    f"{d.device:<13} {rps:7.2f} {rkb:9.2f} {rrqm:8.2f} {100 * rrqm / (rps + rrqm) if rps else 0:6.2f} {r_await:7.2f} {rkb / rps if rps else 0:8.2f}"
                    f" {wps:7.2f} {wkb:9.2f} {wrqm:8.2f} {100 * wrqm / (wps + wrqm) if wps else 0:6.2f} {w_await:7.2f} {wkb / wps if wps else 0:8.2f}"
                    f" {0:7.2f} {0:9.2f} {0:8.2f} {0:6.2f} {0:7.2f} {0:8.2f} {wps / 20:7.2f} {0.4 if wps else 0:7.2f} {busy_ms / 1000:7.2f} {util:6.2f}\n"
                )
            else:
                div = 1 if kb else 1024
                tot_r = s.rsect // 2 // div
                tot_w = s.wsect // 2 // div
                out.append(f"{d.device:<13} {rps + wps:8.2f} {rkb / div:12.2f} {wkb / div:12.2f} {0:12.2f} {tot_r:>10} {tot_w:>10} {0:>10}\n")
        out.append("\n")
    return ExecResult("".join(out), 0)


def diskstats(node: HostNode) -> str:
    lines = []
    parts = partitions(node)
    for i, d in enumerate(node.disks):
        s = DiskStats(d, i)
        major = 8 + (i // 16) * 57
        minor = (i % 16) * 16
        inflight = 1 if d.bad_read_fraction > 0 and d.error_ticks else 0
        lines.append(
            f"{major:4d} {minor:7d} {d.device} {s.reads} {s.merged_r} {s.rsect} {s.rms} {s.writes} {s.merged_w} {s.wsect} {s.wms} {inflight} {s.io_ms} {s.rms + s.wms} 0 0 0 0 {s.writes // 20} {s.writes // 40}"
        )
        for _d, di, pname, moff, _m, _sz in parts:
            if di != i:
                continue
            share = 0.999 if moff == 1 else 0.0004
            lines.append(
                f"{major:4d} {minor + moff:7d} {pname} {int(s.reads * share)} {int(s.merged_r * share)} {int(s.rsect * share)} {int(s.rms * share)} {int(s.writes * share)} {int(s.merged_w * share)} {int(s.wsect * share)} {int(s.wms * share)} 0 {int(s.io_ms * share)} {int((s.rms + s.wms) * share)} 0 0 0 0 0 0"
            )
    return "\n".join(lines) + "\n"


def mount_lines(node: HostNode, pods: list[dict[str, Any]]) -> list[tuple[str, str, str, str]]:
    """(source, mountpoint, fstype, options) in /proc/mounts order."""
    mem_k = int(node.memory_bytes) // 1024
    out = [
        ("sysfs", "/sys", "sysfs", "rw,nosuid,nodev,noexec,relatime"),
        ("proc", "/proc", "proc", "rw,nosuid,nodev,noexec,relatime"),
        ("udev", "/dev", "devtmpfs", f"rw,nosuid,relatime,size={mem_k // 2}k,nr_inodes={mem_k // 8},mode=755,inode64"),
        ("devpts", "/dev/pts", "devpts", "rw,nosuid,noexec,relatime,gid=5,mode=620,ptmxmode=000"),
        ("tmpfs", "/run", "tmpfs", f"rw,nosuid,nodev,noexec,relatime,size={mem_k // 10}k,mode=755,inode64"),
    ]
    for d, _i, part, _m, mnt, _s in partitions(node):
        if mnt == "/":
            out.append((f"/dev/{part}", "/", "ext4", "rw,relatime,discard,errors=remount-ro"))
    out += [
        ("securityfs", "/sys/kernel/security", "securityfs", "rw,nosuid,nodev,noexec,relatime"),
        ("tmpfs", "/dev/shm", "tmpfs", "rw,nosuid,nodev,inode64"),
        ("tmpfs", "/run/lock", "tmpfs", "rw,nosuid,nodev,noexec,relatime,size=5120k,inode64"),
        ("cgroup2", "/sys/fs/cgroup", "cgroup2", "rw,nosuid,nodev,noexec,relatime,nsdelegate,memory_recursiveprot"),
        ("bpf", "/sys/fs/bpf", "bpf", "rw,nosuid,nodev,noexec,relatime,mode=700"),
    ]
    for d, _i, part, _m, mnt, _s in partitions(node):
        if mnt == "/boot/efi":
            out.append((f"/dev/{part}", mnt, "vfat", "rw,relatime,fmask=0022,dmask=0022,codepage=437,iocharset=ascii,shortname=mixed,utf8,errors=remount-ro"))
        elif mnt and mnt != "/":
            out.append((f"/dev/{part}", mnt, "ext4", "rw,relatime"))
    for src, typ, mnt, size, _u in _container_mounts(pods):
        if typ == "overlay":
            cid = mnt.rsplit("/", 2)[-2]
            snap = stable_hash(cid) % 900 + 100
            out.append((src, mnt, typ, f"rw,relatime,lowerdir=/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs/snapshots/{snap}/fs,upperdir=/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs/snapshots/{snap + 1}/fs,workdir=/var/lib/containerd/io.containerd.snapshotter.v1.overlayfs/snapshots/{snap + 1}/work"))
        else:
            out.append((src, mnt, typ, f"rw,nosuid,nodev,noexec,relatime,size={size // 1024}k,inode64" if src == "shm" else f"rw,relatime,size={size // 1024}k,inode64"))
    return out
