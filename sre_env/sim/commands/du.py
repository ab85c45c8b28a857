"""``du`` on a node: where the root disk's space (and inodes) went.

The installed system's share of the root disk is spread over the usual
directories in fixed proportions (container images under
``/var/lib/containerd`` dominate a Kubernetes worker); files that cron programs
wrote (:mod:`sre_env.sim.node.diskfill`) are added on top, so the totals match
``df`` and the culprit stands out in ``du -sh /var/*``.
"""

from __future__ import annotations

from sre_env.backend import ExecResult
from sre_env.sim.commands.common import human_df
from sre_env.sim.commands.host_files import fs_dirs, host_path
from sre_env.sim.commands.views import HostView
from sre_env.sim.node import diskfill

__all__ = ["du"]

#: share of the installed system's bytes, and inodes, per directory (children included)
_SHARE: dict[str, tuple[float, float]] = {
    "/usr": (0.088, 0.52),
    "/usr/lib": (0.061, 0.31),
    "/usr/share": (0.019, 0.17),
    "/usr/bin": (0.006, 0.02),
    "/var": (0.862, 0.43),
    "/var/lib": (0.786, 0.40),
    "/var/lib/containerd": (0.741, 0.37),
    "/var/lib/kubelet": (0.021, 0.01),
    "/var/lib/apt": (0.012, 0.004),
    "/var/log": (0.061, 0.002),
    "/var/log/journal": (0.054, 0.0005),
    "/var/log/pods": (0.006, 0.001),
    "/var/cache": (0.013, 0.02),
    "/boot": (0.004, 0.0001),
    "/opt": (0.021, 0.01),
    "/etc": (0.0003, 0.03),
    "/root": (0.00002, 0.0001),
    "/home": (0.00003, 0.0001),
    "/tmp": (0.000001, 0.00001),
}
#: directories du does not descend into from / without -x (other file systems)
_VIRTUAL = ("/proc", "/sys", "/dev", "/run")


def _base(view: HostView) -> tuple[int, int]:
    root = view.node.disks[0]
    fill_b, fill_f = diskfill.usage(view.node, "/")
    return max(int(root.used_bytes) - fill_b, 0), max(int(root.inodes_used) - fill_f, 0)


def _size(view: HostView, path: str, base: tuple[int, int]) -> tuple[int, int]:
    if path in _VIRTUAL or path.startswith(tuple(p + "/" for p in _VIRTUAL)):
        return 0, 1
    if path == "/":
        b, f = 1.0, 1.0
    else:
        b, f = _SHARE.get(path, (0.0, 0.0))
    extra_b, extra_f = diskfill.usage(view.node, path) if path != "/" else (0, 0)
    fill = diskfill.usage(view.node, "/") if path == "/" else (0, 0)
    return int(base[0] * b) + extra_b + fill[0] + 4096, int(base[1] * f) + extra_f + fill[1] + 1


def _human(n: int) -> str:
    return human_df(n)


def du(view: HostView, argv: list[str], stdin: str | None = None) -> ExecResult:
    summary = human = inodes = total = False
    depth: int | None = None
    paths: list[str] = []
    args = argv[1:]
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--inodes":
            inodes = True
        elif a in ("--summarize",):
            summary = True
        elif a in ("--human-readable",):
            human = True
        elif a in ("--total",):
            total = True
        elif a.startswith("--max-depth="):
            depth = int(a.split("=", 1)[1]) if a.split("=", 1)[1].isdigit() else 0
        elif a in ("-d", "--max-depth") and i + 1 < len(args):
            depth = int(args[i + 1]) if args[i + 1].isdigit() else 0
            i += 1
        elif a.startswith("--"):
            if a not in ("--one-file-system", "--apparent-size", "--all", "--si"):
                return ExecResult(f"du: unrecognized option '{a}'\nTry 'du --help' for more information.\n", 1)
        elif a.startswith("-") and len(a) > 1:
            for c in a[1:]:
                if c == "s":
                    summary = True
                elif c == "h":
                    human = True
                elif c == "c":
                    total = True
                elif c in "xakmLPb":
                    continue
                elif c == "d" and a.endswith("d") and i + 1 < len(args):
                    depth = int(args[i + 1]) if args[i + 1].isdigit() else 0
                    i += 1
                    break
                else:
                    return ExecResult(f"du: invalid option -- '{c}'\nTry 'du --help' for more information.\n", 1)
        else:
            paths.append(a)
        i += 1
    if summary and depth is not None and depth > 0:
        return ExecResult("du: cannot both summarize and show all entries\nTry 'du --help' for more information.\n", 1)
    dirs = fs_dirs(view)
    base = _base(view)
    expanded: list[str] = []
    for p in paths or ["/root"]:
        np = host_path(p)
        if np.endswith("/*") and np[:-2] in dirs or np == "/*":
            parent = np[:-2] or "/"
            expanded += [f"{parent.rstrip('/')}/{e.rstrip('/')}" for e in dirs[parent]]
        else:
            expanded.append(np)
    out: list[str] = []
    err: list[str] = []
    grand = 0

    def fmt(n: tuple[int, int]) -> str:
        if inodes:
            return str(n[1])
        return _human(n[0]) if human else str(-(-n[0] // 1024))

    for p in expanded:
        known = p in dirs or p == "/" or diskfill.file_size(view.node, p.rsplit("/", 1)[0] or "/", p.rsplit("/", 1)[1]) is not None
        if not known:
            parent, _, leaf = p.rpartition("/")
            if leaf not in (dirs.get(parent or "/") or []) and leaf + "/" not in (dirs.get(parent or "/") or []):
                err.append(f"du: cannot access '{p}': No such file or directory\n")
                continue
        if p not in dirs and (leaf_dir := (p.rpartition("/")[2] + "/") in (dirs.get(p.rpartition("/")[0] or "/") or [])):
            del leaf_dir
            n = _size(view, p, base)
            grand += n[inodes]
            out.append(f"{fmt(n)}\t{p}\n")
            continue
        if p not in dirs:
            fs = diskfill.file_size(view.node, p.rsplit("/", 1)[0] or "/", p.rsplit("/", 1)[1])
            n = (max(fs or 4096, 4096), 1)
            grand += n[inodes]
            out.append(f"{fmt(n)}\t{p}\n")
            continue
        n = _size(view, p, base)
        grand += n[inodes]
        if not summary:
            limit = 1 if depth is None else depth
            if limit > 0:
                for e in dirs.get(p, []):
                    if e.endswith("/"):
                        child = f"{p.rstrip('/')}/{e.rstrip('/')}"
                        out.append(f"{fmt(_size(view, child, base))}\t{child}\n")
        out.append(f"{fmt(n)}\t{p}\n")
    if total:
        out.append(f"{fmt((grand, grand))}\ttotal\n")
    return ExecResult("".join(out) + "".join(err), 1 if err else 0)
