"""Rendering query results the way Prometheus does: HTTP API JSON and promtool's text.

Numbers use Go's ``strconv.FormatFloat(v, 'f', -1, 64)`` (shortest round-trip,
never an exponent), so ``1e-05`` prints as ``0.00001`` and ``3.0`` as ``3``.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

__all__ = ["format_value", "format_time", "json_time"]


def format_value(v: float) -> str:
    if v != v:
        return "NaN"
    if v == float("inf"):
        return "+Inf"
    if v == float("-inf"):
        return "-Inf"
    r = repr(float(v))
    if "e" in r or "E" in r:
        r = format(Decimal(r), "f")
    if r.endswith(".0"):
        r = r[:-2]
    return r


def json_time(t: float) -> Any:
    """A unix timestamp as the API writes it: a JSON number with millisecond precision."""
    t = round(t, 3)
    return int(t) if t == int(t) else t


def format_time(t: float) -> str:
    return format_value(round(t, 3))
