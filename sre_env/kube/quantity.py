"""Kubernetes resource quantities ("100m", "1.5", "64Mi", "1G") as numbers."""

from __future__ import annotations

import re

__all__ = ["cpu_millicores", "memory_bytes", "format_memory", "parse_int_or_percent", "CPU_MS_PER_REQUEST_MS"]

_MEM_SUFFIX = {
    "": 1, "k": 1000, "M": 1000**2, "G": 1000**3, "T": 1000**4, "P": 1000**5, "E": 1000**6,
    "Ki": 1024, "Mi": 1024**2, "Gi": 1024**3, "Ti": 1024**4, "Pi": 1024**5, "Ei": 1024**6,
    "m": 0.001,
}
_QTY = re.compile(r"^\s*([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE]([+-]?[0-9]+))?\s*([a-zA-Z]*)\s*$")


def _parse(q: object) -> tuple[float, str]:
    if isinstance(q, (int, float)):
        return float(q), ""
    m = _QTY.match(str(q))
    if not m:
        raise ValueError("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
    num = float(m.group(1))
    if m.group(2):
        num *= 10 ** int(m.group(2))
    suffix = m.group(3)
    if suffix not in _MEM_SUFFIX:
        raise ValueError("unable to parse quantity's suffix")
    return num, suffix


def cpu_millicores(q: object) -> int:
    num, suffix = _parse(q)
    if suffix == "m":
        return int(round(num))
    return int(round(num * _MEM_SUFFIX[suffix] * 1000))


def memory_bytes(q: object) -> int:
    num, suffix = _parse(q)
    return int(round(num * _MEM_SUFFIX[suffix]))


def format_memory(n: float) -> str:
    """``kubectl top`` style: whole Mi."""
    return f"{int(n // (1024 * 1024))}Mi"


def parse_int_or_percent(value: object, total: int, round_up: bool) -> int:
    """maxSurge / maxUnavailable: an int or "25%" of ``total`` (surge rounds up, unavailable down)."""
    if isinstance(value, int):
        return value
    s = str(value)
    if s.endswith("%"):
        frac = float(s[:-1]) / 100.0 * total
        import math

        return int(math.ceil(frac - 1e-9)) if round_up else int(math.floor(frac + 1e-9))
    return int(s)


#: millicores of CPU that one request per second costs per millisecond of service time
#: (the simulator's CPU model: kubectl top, cAdvisor and CFS quotas all use it)
CPU_MS_PER_REQUEST_MS = 0.35
