"""Helpers shared by the host and in-container command interpreters.

Everything here is a pure function of its arguments: no wall clock, no global
RNG. Pseudo-random choices (PIDs, serial-looking hex, jitter) come from
:func:`stable_hash` of values that do not change between runs, so the same
view always renders the same text.
"""

from __future__ import annotations

import zlib
from datetime import datetime, timedelta, timezone
from typing import Any

from sre_env.backend import ExecResult
from sre_env.kube.timefmt import EPOCH
from sre_env.sim.kernel.hosts import BOOT_OFFSET_S, Disk, HostNode

__all__ = [
    "ok",
    "fail",
    "stable_hash",
    "wall",
    "boot_wall",
    "date_cmd",
    "human_df",
    "human_lsblk",
    "human_free",
    "human_busybox",
    "parse_iso_safe",
    "running_containers",
    "partition",
    "load_average",
    "go_human_duration",
]


def ok(text: str = "") -> ExecResult:
    return ExecResult(text, 0)


def fail(text: str, code: int = 1) -> ExecResult:
    return ExecResult(text, code)


def stable_hash(*parts: Any) -> int:
    """A 32-bit hash of ``parts`` that is identical across processes (unlike ``hash``)."""
    return zlib.crc32("\x1f".join(map(str, parts)).encode())


def wall(node: HostNode, t: float) -> datetime:
    """The node's wall clock at simulated second ``t`` (including its clock skew)."""
    return EPOCH + timedelta(seconds=t + node.clock_offset_s)


def boot_wall(node: HostNode, now: float) -> datetime:
    """When the node booted, as its own clock reports it."""
    return wall(node, now - node.uptime(now))


def date_cmd(dt: datetime) -> str:
    """``date`` with the C locale: ``Mon Mar  2 09:15:23 UTC 2026``."""
    return f"{dt:%a %b} {dt.day:2d} {dt:%H:%M:%S} UTC {dt.year}"


_UNITS = "KMGTPE"


def human_df(n: float) -> str:
    """coreutils ``-h``: powers of 1024, rounded *up*, one decimal below 10."""
    if n < 1024:
        return str(int(n))
    v = float(n)
    for u in _UNITS:
        v /= 1024.0
        if v < 1024 or u == "E":
            if v < 10:
                tenths = -(-int(v * 10 * 1000) // 1000)  # ceil at one decimal, tolerant of float noise
                if tenths >= 100:
                    return f"{tenths // 10}{u}"
                return f"{tenths / 10:.1f}{u}"
            return f"{-(-int(v * 1000) // 1000)}{u}"
    return str(int(n))  # pragma: no cover


def human_lsblk(n: float) -> str:
    """util-linux size_to_human_string: powers of 1024, one decimal, ``.0`` dropped."""
    if n < 1024:
        return f"{int(n)}B"
    v = float(n)
    for u in _UNITS:
        v /= 1024.0
        if v < 1024 or u == "E":
            s = f"{v:.1f}"
            if s.endswith(".0"):
                s = s[:-2]
            return s + u
    return str(int(n))  # pragma: no cover


def human_free(n: float) -> str:
    """procps 4 ``free -h``: ``15Gi``, ``3.1Gi``, ``812Mi``, ``0B``."""
    if n < 1024:
        return f"{int(n)}B"
    v = float(n)
    for u in _UNITS:
        v /= 1024.0
        if v < 1024 or u == "E":
            return (f"{v:.1f}" if v < 10 else f"{v:.0f}") + u + "i"
    return str(int(n))  # pragma: no cover


def human_busybox(n: float) -> str:
    """busybox ``df -h``: always one decimal (``64.0M``), ``0`` for zero."""
    if n <= 0:
        return "0"
    v = float(n)
    u = "B"
    for u in _UNITS:
        v /= 1024.0
        if v < 1024:
            break
    return f"{v:.1f}{u}"


def parse_iso_safe(s: Any) -> float | None:
    """Simulated seconds of an RFC 3339 timestamp, or None for anything unparsable."""
    if not isinstance(s, str) or not s:
        return None
    try:
        dt = datetime.fromisoformat(s[:19])
    except ValueError:
        return None
    return (dt.replace(tzinfo=timezone.utc) - EPOCH).total_seconds()


def running_containers(pods: list[dict[str, Any]], include_exited: bool = False) -> list[tuple[dict, dict, dict]]:
    """(pod, container spec, container status) for each container the runtime has.

    A container counts as running when its status says ``state.running``; pods
    without statuses (not yet reported) contribute nothing, as on a real node
    before the sandbox exists.
    """
    out: list[tuple[dict, dict, dict]] = []
    for pod in pods:
        if not isinstance(pod, dict):
            continue
        spec = pod.get("spec") or {}
        specs = {c.get("name"): c for c in spec.get("containers") or () if isinstance(c, dict)}
        for st in (pod.get("status") or {}).get("containerStatuses") or ():
            if not isinstance(st, dict):
                continue
            state = st.get("state") or {}
            if "running" in state or (include_exited and state):
                out.append((pod, specs.get(st.get("name"), {}), st))
    return out


def partition(disk: Disk, index: int) -> str:
    """Device name of the mounted partition: the root disk's ``sda1``, data disks' ``sdb1``."""
    if disk.device.startswith("nvme"):
        return f"{disk.device}p1"
    return f"{disk.device}1"


def load_average(node: HostNode, now: float) -> tuple[float, float, float]:
    """1/5/15-minute load: runnable CPU demand plus tasks stuck in D state on failing disks.

    Processes blocked in uninterruptible reads count toward Linux load, which is
    why a sick disk raises the load average on an otherwise idle node.
    """
    cpu = max(node.cpu_used_millicores, 0.0) / 1000.0
    stuck = 0.0
    for d in node.disks:
        if d.error_ticks:
            last_t = d.error_ticks[-1][0]
            if now - last_t < 120:
                stuck += 1.0 + min(d.bad_read_fraction * 20.0, 3.0)
    base = cpu + stuck
    j = stable_hash(node.name, int(now // 60)) % 100 / 1000.0
    one = base * (0.95 + j)
    five = base * 0.9 + cpu * 0.05
    fifteen = base * 0.8 + cpu * 0.15
    if stuck:
        # load follows the disk trouble with the exponential averages' lag
        first = min((d.error_ticks[0][0] for d in node.disks if d.error_ticks), default=now)
        age = max(now - first, 0.0)
        five = cpu + stuck * min(age / 300.0, 1.0)
        fifteen = cpu + stuck * min(age / 900.0, 1.0)
    return round(one, 2), round(five, 2), round(fifteen, 2)


def go_human_duration(seconds: float) -> str:
    """docker/go-units HumanDuration, as ``crictl ps`` prints CREATED (``2 hours``)."""
    s = int(max(seconds, 0))
    if s < 1:
        return "Less than a second"
    if s == 1:
        return "1 second"
    if s < 60:
        return f"{s} seconds"
    m = s // 60
    if m == 1:
        return "About a minute"
    if m < 60:
        return f"{m} minutes"
    h = round(s / 3600)
    if h == 1:
        return "About an hour"
    if h < 48:
        return f"{h} hours"
    if h < 24 * 7 * 2:
        return f"{h // 24} days"
    if h < 24 * 30 * 2:
        return f"{h // 24 // 7} weeks"
    if h < 24 * 365 * 2:
        return f"{h // 24 // 30} months"
    return f"{h // 24 // 365} years"


def boot_offset() -> float:
    return BOOT_OFFSET_S
