"""Kubernetes resource quantities (``100m``, ``1.5``, ``64Mi``, ``1e3``): their value and kubectl's form.

One grammar and one suffix table (apimachinery's ``resource.Quantity``): an
optional sign, a decimal number, then either a decimal exponent (``e3``) or a
suffix -- decimal SI ``n u m k M G T P E`` or binary SI ``Ki Mi Gi Ti Pi Ei``.
Values are exact fractions, so ``cpu_millicores`` and ``memory_bytes`` round
the true value (half to even) and :func:`canonical` prints what the API server
stores and kubectl shows: a manifest's ``cpu: 1000m`` reads back as ``1`` and a
node's ``memory: 16777216Ki`` as ``16Gi``.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from functools import lru_cache
from typing import Any

__all__ = [
    "CPU_MS_PER_REQUEST_MS",
    "canonical",
    "cpu_millicores",
    "format_bytes",
    "format_memory",
    "format_millicores",
    "memory_bytes",
    "parse_int_or_percent",
    "parse_quantity",
    "requests_within_limits",
]

_QTY = re.compile(r"^([+-]?)([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:([eE])([+-]?[0-9]+))?([a-zA-Z]*)$")
#: suffix -> power of ten (decimal SI) and power of 1024 (binary SI)
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DEC_SUFFIX = {v: k for k, v in _DECIMAL.items()}
_BIN_SUFFIX = {v: k for k, v in _BINARY.items()}
_GRAMMAR_ERROR = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"


def _text(q: object) -> str:
    if isinstance(q, bool):
        return str(int(q))
    return str(q).strip()


@lru_cache(maxsize=4096)
def _parse(text: str) -> tuple[Fraction, str]:
    """(exact value, suffix) of a quantity's text; ValueError with the API's wording."""
    m = _QTY.match(text)
    if not m:
        raise ValueError(_GRAMMAR_ERROR)
    sign, digits, exp_mark, exp, suffix = m.groups()
    if exp_mark and suffix:
        raise ValueError(_GRAMMAR_ERROR)
    value = Fraction(digits)
    if exp_mark:
        value *= Fraction(10) ** int(exp)
    if suffix in _BINARY:
        value *= 1024 ** _BINARY[suffix]
    elif suffix in _DECIMAL:
        value *= Fraction(10) ** _DECIMAL[suffix]
    else:
        raise ValueError("unable to parse quantity's suffix")
    return (-value if sign == "-" else value), suffix


def parse_quantity(q: object) -> Fraction:
    """The exact value of a quantity (a string, or a plain number as YAML gives it)."""
    return _parse(_text(q))[0]


@lru_cache(maxsize=4096)
def _millicores(text: str) -> int:
    return round(_parse(text)[0] * 1000)


@lru_cache(maxsize=4096)
def _bytes(text: str) -> int:
    return round(_parse(text)[0])


def cpu_millicores(q: object) -> int:
    """A CPU quantity in millicores, rounded half to even (``250m`` -> 250, ``0.5`` -> 500)."""
    return _millicores(_text(q))


def memory_bytes(q: object) -> int:
    """A memory quantity in bytes, rounded half to even (``64Mi`` -> 67108864)."""
    return _bytes(_text(q))


def canonical(q: Any) -> str:
    """``q`` as kubectl prints it; anything that is not a quantity comes back unchanged.

    A binary-SI value keeps the largest power-of-1024 suffix that divides it
    exactly, unless it is below 1024 or fractional, when it is written in
    decimal SI; a decimal-SI value takes the largest power-of-1000 suffix (``n``
    to ``E``) that leaves an integer (``Quantity.CanonicalizeBytes``).
    """
    if isinstance(q, bool) or not isinstance(q, (int, float, str)):
        return str(q)
    try:
        value, suffix = _parse(str(q).strip())
    except ValueError:
        return str(q)
    if value == 0:
        return "0"
    neg = "-" if value < 0 else ""
    value = abs(value)
    # the API keeps nano precision at most, rounding up
    nanos = value * 10**9
    if nanos.denominator != 1:
        nanos = Fraction(-((-nanos.numerator) // nanos.denominator))
    value = nanos / 10**9
    if suffix in _BINARY and value >= 1024 and value.denominator == 1:
        n, power = int(value), 0
        while power < 6 and n % 1024 == 0:
            n //= 1024
            power += 1
        return f"{neg}{n}{_BIN_SUFFIX.get(power, '')}"
    # decimal SI (also an exponent form, which kubectl would print as e.g. 1e3: rare in practice)
    n, power = int(nanos), -9
    while power < 18 and n % 1000 == 0:
        n //= 1000
        power += 3
    return f"{neg}{n}{_DEC_SUFFIX[power]}"


def format_memory(n: float) -> str:
    """``kubectl top`` style: whole Mi."""
    return f"{int(n // (1024 * 1024))}Mi"


def format_millicores(millicores: int) -> str:
    """A CPU amount as the API prints a sum of requests: whole cores (``2``) or millicores (``1900m``)."""
    return str(millicores // 1000) if millicores % 1000 == 0 else f"{millicores}m"


def format_bytes(size: int) -> str:
    """A memory amount as the API prints a sum of binary-SI requests: the largest of Gi, Mi, Ki that divides it, else bytes."""
    if size == 0:
        return "0"
    for unit, scale in (("Gi", 1024**3), ("Mi", 1024**2), ("Ki", 1024)):
        if size % scale == 0:
            return f"{size // scale}{unit}"
    return str(size)


def parse_int_or_percent(value: object, total: int, round_up: bool) -> int:
    """maxSurge / maxUnavailable: an int or "25%" of ``total`` (surge rounds up, unavailable down)."""
    if isinstance(value, int):
        return value
    s = str(value)
    if s.endswith("%"):
        frac = float(s[:-1]) / 100.0 * total
        return int(math.ceil(frac - 1e-9)) if round_up else int(math.floor(frac + 1e-9))
    return int(s)


def requests_within_limits(resources: dict[str, Any]) -> dict[str, Any]:
    """``resources`` with every request above its limit lowered to the limit (the API server refuses the rest).

    What an operator must do when they lower a limit below a container's request:
    ``kubectl set resources --limits=cpu=50m`` alone is refused (``must be less
    than or equal to cpu limit of 50m``), so the request goes down with it.
    """
    limits = resources.get("limits") or {}
    requests = dict(resources.get("requests") or {})
    for name, limit in limits.items():
        if name in requests and parse_quantity(requests[name]) > parse_quantity(limit):
            requests[name] = limit
    return {**resources, "requests": requests} if requests else dict(resources)


#: millicores of CPU that one request per second costs per millisecond of service time
#: (the simulator's CPU model: kubectl top, cAdvisor and CFS quotas all use it)
CPU_MS_PER_REQUEST_MS = 0.35
