"""Cron jobs on a node and the files they leave behind: how a root disk or its inodes fill up.

``/etc/cron.d/*`` files live in the node's writable overlay (``hostfiles``), so
configuration management installs them and agents edit or remove them with the
usual tools. Once per simulated minute the node's cron daemon runs the lines
whose schedule matches the node's wall clock. The programs a line runs are
modelled by what they write: ``tcpdump -G S -W 1 -w PATTERN`` leaves one
capture of ``S`` seconds of the node's traffic per run, ``... | split -l N -
PREFIX`` leaves one small file per ``N`` input lines; ``mkdir -p`` makes their
directory. What they write is charged to the root disk (bytes in 4 KiB blocks,
one inode per file), so ``df``, ``df -i`` and the kubelet's eviction signals
see it, and ``du``/``ls``/``rm`` reach it through :func:`listing`,
:func:`usage` and :func:`remove`.

Files are kept per directory as runs (one entry per file the program wrote, or
a group of identical small files), so millions of files cost a few entries.
Nodes without cron files cost one dictionary scan per simulated minute.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import TYPE_CHECKING

from sre_env.sim.kernel.hashing import stable_hash
from sre_env.sim.kernel.hosts import BLOCK, FileRun, FillDir
from sre_env.sim.node.wallclock import wall

if TYPE_CHECKING:
    from sre_env.sim.kernel.hosts import HostNode
    from sre_env.sim.kernel.world import World

__all__ = ["CRON_DIR", "cron_lines", "cron_tick", "run_cron_history", "fill_dirs", "listing", "usage", "remove", "writers_into", "file_size"]

CRON_DIR = "/etc/cron.d/"
#: about how many path arguments fit in ARG_MAX (2 MiB) for names this long
ARG_MAX_FILES = 40_000
#: journal lines per minute on a busy worker (kubelet, containerd, kernel)
_JOURNAL_LINES_PER_MIN = 2400
_JOURNAL_LINE_BYTES = 420


def fill_dirs(host: "HostNode") -> dict[str, FillDir]:
    """Directories cron programs wrote on this node (kept on the host object, so snapshots copy it)."""
    return host.fill_dirs


# ----------------------------------------------------------------------------- cron
def cron_lines(host: "HostNode") -> list[tuple[str, str, str]]:
    """(file, schedule, command) for every job line in ``/etc/cron.d`` (name order, as cron reads them; the user field dropped)."""
    out = []
    for path in sorted(p for p in host.files if p.startswith(CRON_DIR)):
        name = path[len(CRON_DIR):]
        # cron ignores files whose names contain dots (editor backups, dpkg leftovers)
        if "/" in name or "." in name or name.endswith("~"):
            continue
        for raw in host.files[path].splitlines():
            line = raw.strip()
            if not line or line.startswith("#") or re.match(r"^[A-Za-z_][A-Za-z0-9_]*\s*=", line):
                continue
            parts = line.split(None, 6)
            if len(parts) < 7:
                continue
            out.append((path, " ".join(parts[:5]), parts[6]))
    return out


def _field_matches(expr: str, value: int, lo: int, hi: int) -> bool:
    for item in expr.split(","):
        step = 1
        if "/" in item:
            item, s = item.split("/", 1)
            if not s.isdigit() or int(s) == 0:
                return False
            step = int(s)
        if item == "*":
            a, b = lo, hi
        elif "-" in item:
            x, _, y = item.partition("-")
            if not (x.isdigit() and y.isdigit()):
                return False
            a, b = int(x), int(y)
        elif item.isdigit():
            a = b = int(item)
            if step != 1:
                b = hi
        else:
            return False
        if a <= value <= b and (value - a) % step == 0:
            return True
    return False


def schedule_matches(schedule: str, t: datetime) -> bool:
    f = schedule.split()
    if len(f) != 5:
        return False
    dow = (t.weekday() + 1) % 7
    return (
        _field_matches(f[0], t.minute, 0, 59)
        and _field_matches(f[1], t.hour, 0, 23)
        and _field_matches(f[2], t.day, 1, 31)
        and _field_matches(f[3], t.month, 1, 12)
        and (_field_matches(f[4], dow, 0, 7) or (dow == 0 and _field_matches(f[4], 7, 0, 7)))
    )


def _expand(word: str, t: datetime) -> str:
    """Fill in the ``$(date +FMT)`` substitutions :func:`_parse` marked."""
    return re.sub(r"@@DATE:([^@]*)@@", lambda m: _strftime(t, m.group(1).strip("'\"")), word)


def _strftime(t: datetime, fmt: str) -> str:
    return t.strftime(fmt.replace("%s", str(int(t.timestamp()))))


def _capture_rate(host: "HostNode") -> int:
    """Bytes per second ``tcpdump -i any -s 0`` records on this node (pod, probe and loopback traffic)."""
    return (38 + stable_hash(host.name, "capture") % 18) * 1024 * 1024


@lru_cache(maxsize=256)
def _parse(command: str) -> tuple[tuple[tuple[str, ...], ...], ...] | None:
    """Stages (``&&``/``;``) of pipelines of argv words; None when the shell could not parse it."""
    # cron turns an unescaped % into a newline; jobs escape it as \%
    command = re.sub(r"\$\(date \+([^)\s]*)\)", r"@@DATE:\1@@", command.replace("\\%", "%"))
    stages = []
    for stage in re.split(r"\s*(?:&&|;)\s*", command):
        try:
            argvs = [shlex.split(p.strip()) for p in stage.split("|")]
        except ValueError:
            return None
        stages.append(tuple(tuple(a for a in av if not a.startswith(("2>", ">/dev/null", "&>"))) for av in argvs if av))
    return tuple(stages)


def _run_command(host: "HostNode", command: str, t: datetime) -> None:
    for stage in _parse(command) or ():
        argvs = [[_expand(a, t) if "@@DATE:" in a else a for a in av] for av in stage]
        if not argvs:
            continue
        last = argvs[-1]
        name = last[0].rsplit("/", 1)[-1]
        if name == "mkdir":
            for d in (a for a in last[1:] if not a.startswith("-")):
                fill_dirs(host).setdefault(d.rstrip("/"), FillDir())
        elif name == "tcpdump":
            if not _tcpdump(host, last, t):
                return
        elif name == "split" and len(argvs) > 1 and argvs[0][0].rsplit("/", 1)[-1] == "journalctl":
            if not _split(host, last, t):
                return


def _opt(argv: list[str], flag: str) -> str | None:
    for i, a in enumerate(argv[:-1]):
        if a == flag:
            return argv[i + 1]
    return None


def _write(host: "HostNode", path: str, count: int, bytes_each: int, names: tuple[str, ...]) -> bool:
    """Charge ``count`` files to the root disk; False when their directory does not exist (ENOENT)."""
    directory = path.rsplit("/", 1)[0] or "/"
    dirs = fill_dirs(host)
    if directory not in dirs:
        return False
    root = host.disks[0]
    per_file = max(BLOCK, -(-bytes_each // BLOCK) * BLOCK)
    # a full file system or inode table stops the writer (ENOSPC)
    room_bytes = max(int(root.size_bytes * 0.95 * 0.984) - int(root.used_bytes), 0)
    count = min(count, max(root.inodes_total - root.inodes_used, 0), room_bytes // per_file if count > 1 else count)
    if count <= 0:
        return True
    if count == 1:
        bytes_each = min(bytes_each, room_bytes)
        per_file = max(BLOCK, -(-bytes_each // BLOCK) * BLOCK)
    runs = dirs[directory].runs
    if count > 1 and runs and runs[-1].count > 1 and runs[-1].bytes_each == bytes_each and len(runs[-1].names) < 400:
        # many small files of one size: one group (keeps snapshots small)
        runs[-1].count += count
        runs[-1].names = runs[-1].names + names
    else:
        runs.append(FileRun(names, count, bytes_each))
    root.used_bytes += count * per_file
    root.inodes_used += count
    return True


def _tcpdump(host: "HostNode", argv: list[str], t: datetime) -> bool:
    target = _opt(argv, "-w")
    if not target:
        return True
    try:
        seconds = int(_opt(argv, "-G") or 60) * int(_opt(argv, "-W") or 1)
    except ValueError:
        return True
    path = _strftime(t, target)
    return _write(host, path, 1, seconds * _capture_rate(host), (path.rsplit("/", 1)[1],))


def _split(host: "HostNode", argv: list[str], t: datetime) -> bool:
    words = [a for a in argv[1:] if a == "-" or not a.startswith("-")]
    lines_per_file = _opt(argv, "-l")
    try:
        n = max(int(lines_per_file or 1000), 1)
    except ValueError:
        return True
    values = [v for v in words if v != lines_per_file]
    if len(values) < 2:
        return True
    prefix = values[1]
    count = -(-_JOURNAL_LINES_PER_MIN // n)
    base = prefix.rsplit("/", 1)[1]
    sample = tuple(base + _suffix(i) for i in range(min(count, 3)))
    return _write(host, prefix, count, n * _JOURNAL_LINE_BYTES, sample)


def _suffix(i: int) -> str:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return letters[(i // 26) % 26] + letters[i % 26]


def _run_minute(host: "HostNode", t: datetime, lines: list[tuple[str, str, str]] | None = None) -> None:
    for _path, schedule, command in cron_lines(host) if lines is None else lines:
        if schedule_matches(schedule, t):
            _run_command(host, command, t)


@dataclass
class _CronState:
    #: the simulated minute cron last ran (None: cron has not looked yet)
    minute: int | None = None


def cron_tick(world: "World") -> None:
    """Run the cron jobs due this minute on every node (once per simulated minute)."""
    now = world.clock.now
    minute = int(now // 60)
    state = world.slot(_CronState)
    last = state.minute
    if last == minute:
        return
    state.minute = minute
    if last is None:
        return
    for name in sorted(world.hosts):
        host = world.hosts[name]
        if not any(p.startswith(CRON_DIR) for p in host.files):
            continue
        _run_minute(host, wall(host, minute * 60.0))
        _watch_pressure(world, host)


def run_cron_history(world: "World", node: str, seconds: float) -> None:
    """The jobs in this node's cron files have been running for ``seconds`` before now."""
    host = world.hosts[node]
    end = int(world.clock.now // 60)
    lines = cron_lines(host)
    for minute in range(end - int(seconds // 60), end):
        _run_minute(host, wall(host, minute * 60.0), lines)
    _watch_pressure(world, host)


def _watch_pressure(world: "World", host: "HostNode") -> None:
    """A kubelet always watches its signals: once the root disk nears a threshold, its eviction manager looks."""
    root = host.disks[0]
    if root.size_bytes - root.used_bytes < 0.2 * root.size_bytes or root.inodes_total - root.inodes_used < 0.1 * root.inodes_total:
        host.eviction_check = True


def writers_into(host: "HostNode", directory: str) -> list[str]:
    """Cron files with a job writing under ``directory`` (for graders and ``grep``-free checks)."""
    d = directory.rstrip("/") + "/"
    return sorted({path for path, _s, cmd in cron_lines(host) if d in cmd.replace("\\%", "%")})


# ----------------------------------------------------------------------------- file system views
def listing(host: "HostNode") -> dict[str, list[str]]:
    """Directory -> entries (files, ``name/`` for directories) the cron programs created."""
    out: dict[str, list[str]] = {}
    for d, fd in fill_dirs(host).items():
        names: list[str] = []
        for run in fd.runs:
            names.extend(run.names)
            if len(names) >= 400:
                break
        out[d] = sorted(set(names))
        parent, _, leaf = d.rpartition("/")
        out.setdefault(parent or "/", [])
        out[parent or "/"].append(leaf + "/")
    if any(p.startswith(CRON_DIR) for p in host.files):
        out.setdefault("/etc", []).append("cron.d/")
    return out


def usage(host: "HostNode", path: str) -> tuple[int, int]:
    """(bytes, files) the cron programs wrote at or under ``path``."""
    path = path.rstrip("/") or "/"
    b = f = 0
    for d, fd in fill_dirs(host).items():
        if d == path or d.startswith(path.rstrip("/") + "/") or path == "/":
            b += fd.bytes
            f += fd.files
    return b, f


def file_size(host: "HostNode", directory: str, name: str) -> int | None:
    fd = fill_dirs(host).get(directory.rstrip("/"))
    if fd is None:
        return None
    for run in fd.runs:
        if name in run.names:
            return run.bytes_each
    return None


def remove(host: "HostNode", path: str, recursive: bool) -> bool | str | None:
    """``rm`` of a cron program's file or directory: frees its blocks and inodes.

    Returns None when ``path`` is none of ours, False for a directory without ``-r``
    (``rm`` refuses), True when something was removed. ``DIR/*`` (unexpanded by
    the model's shell) removes every file in ``DIR``, unless there are so many that
    the expanded command line would exceed ARG_MAX ("E2BIG").
    """
    dirs = fill_dirs(host)
    root = host.disks[0]

    def free(runs: list[FileRun]) -> None:
        for run in runs:
            root.used_bytes = max(int(root.used_bytes) - run.blocks_bytes, 0)
            root.inodes_used = max(int(root.inodes_used) - run.count, 0)

    path = path.rstrip("/")
    if path.endswith("/*") and path[:-2] in dirs:
        fd = dirs[path[:-2]]
        if fd.files > ARG_MAX_FILES:
            # the shell expands the glob into more arguments than execve accepts
            return "E2BIG"
        free(fd.runs)
        fd.runs = []
        return True
    under = [d for d in dirs if d == path or d.startswith(path + "/")]
    if under:
        if not recursive:
            return False
        for d in under:
            free(dirs.pop(d).runs)
        return True
    directory, _, name = path.rpartition("/")
    fd = dirs.get(directory)
    if fd is None:
        return None
    for run in fd.runs:
        if name in run.names:
            if run.count == 1:
                free([run])
                fd.runs.remove(run)
            else:
                free([FileRun((name,), 1, run.bytes_each)])
                run.count -= 1
                run.names = tuple(n for n in run.names if n != name)
            return True
    return None
