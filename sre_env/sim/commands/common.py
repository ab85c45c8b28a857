"""Helpers shared by the host and in-container command interpreters.

Everything here is a pure function of its arguments: no wall clock, no global
RNG. Pseudo-random choices (PIDs, serial-looking hex, jitter) come from
:func:`~sre_env.sim.kernel.hashing.stable_hash` of values that do not change
between runs, so the same view always renders the same text.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sre_env.kube.timefmt import EPOCH

__all__ = [
    "date_cmd",
    "human_df",
    "human_lsblk",
    "human_free",
    "human_busybox",
    "running_containers",
    "go_human_duration",
    "norm_path",
    "strftime",
    "text_operands",
]


def date_cmd(dt: datetime) -> str:
    """``date`` with the C locale: ``Mon Mar  2 09:15:23 UTC 2026``."""
    return f"{dt:%a %b} {dt.day:2d} {dt:%H:%M:%S} UTC {dt.year}"


def strftime(dt: datetime, fmt: str) -> str:
    """``date +FORMAT``: strftime with GNU's ``%s`` (epoch seconds) and ``%N`` (nanoseconds)."""
    epoch_s = int((dt - EPOCH).total_seconds() + EPOCH.timestamp())
    fmt = fmt.replace("%s", str(epoch_s)).replace("%N", "000000000").replace("%3N", "000")
    try:
        return dt.strftime(fmt)
    except ValueError:
        return fmt


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


def norm_path(p: str) -> str:
    """``p`` made absolute and normalised the way the kernel resolves it (``.``, ``..``, repeated ``/``)."""
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


#: options of the text tools whose value is the next word (``head -n 5``, ``cut -d , -f 2``)
_VALUED = {
    "grep": ("-e", "-f", "-m", "-A", "-B", "-C"),
    "egrep": ("-e", "-f", "-m", "-A", "-B", "-C"),
    "head": ("-n", "-c"),
    "tail": ("-n", "-c"),
    "sort": ("-k", "-t"),
    "cut": ("-d", "-f", "-c"),
    "awk": ("-F", "-v"),
}


def text_operands(argv: list[str]) -> tuple[list[str], list[str]]:
    """(options with their values, operands) of a text tool's ``argv`` (operands: pattern or program, then files)."""
    valued = _VALUED.get(argv[0], ()) if argv else ()
    opts: list[str] = []
    operands: list[str] = []
    words = iter(argv[1:])
    for a in words:
        if a.startswith("-") and a != "-":
            opts.append(a)
            if a in valued:
                value = next(words, None)
                if value is not None:
                    opts.append(value)
        else:
            operands.append(a)
    return opts, operands
