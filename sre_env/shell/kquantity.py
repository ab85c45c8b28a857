"""Quantities as kubectl prints them: the canonical form of ``resource.Quantity``.

The API server stores and kubectl prints quantities canonically, so a manifest's
``cpu: 1000m`` reads back as ``1`` and a node's ``memory: 16777216Ki`` as
``16Gi``. The rules (apimachinery ``Quantity.CanonicalizeBytes``): a binary-SI
value (``Ki``, ``Mi``...) keeps the largest power-of-1024 suffix that divides it
exactly, unless it is below 1024 or fractional, when it is written in decimal
SI; a decimal-SI value takes the largest power-of-1000 suffix (``n`` to ``E``)
that leaves an integer.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any

__all__ = ["canonical"]

_QTY = re.compile(r"^([+-]?)([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:([eE])([+-]?[0-9]+))?([a-zA-Z]*)$")
_BINARY = {"Ki": 1, "Mi": 2, "Gi": 3, "Ti": 4, "Pi": 5, "Ei": 6}
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_DEC_SUFFIX = {v: k for k, v in _DECIMAL.items()}
_BIN_SUFFIX = {v: k for k, v in _BINARY.items()}


def canonical(q: Any) -> str:
    """``q`` as kubectl prints it; anything that is not a quantity comes back unchanged."""
    if isinstance(q, bool) or not isinstance(q, (int, float, str)):
        return str(q)
    m = _QTY.match(str(q).strip())
    if not m:
        return str(q)
    sign, digits, exp_mark, exp, suffix = m.groups()
    if exp_mark and suffix:
        return str(q)
    value = Fraction(digits)
    if exp_mark:
        value *= Fraction(10) ** int(exp)
    if suffix in _BINARY:
        value *= 1024 ** _BINARY[suffix]
    elif suffix in _DECIMAL:
        value *= Fraction(10) ** _DECIMAL[suffix]
    else:
        return str(q)
    if value == 0:
        return "0"
    neg = "-" if sign == "-" else ""
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
