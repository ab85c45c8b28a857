"""Taints and tolerations: whether a pod may go to, or stay on, a tainted node.

One rule for the scheduler's TaintToleration filter, the DaemonSet controller's
eligible nodes and the taint-eviction controller (``Toleration.ToleratesTaint``
in k8s.io/api core/v1):

* a toleration with an ``effect`` only tolerates taints of that effect; an empty
  effect tolerates every effect;
* ``operator: Exists`` tolerates any value of its ``key``, and with an empty key
  every taint (the API accepts an empty key only with ``Exists``);
* ``operator: Equal`` (the default when the operator is absent) needs the key and
  the value to be equal; an absent value is ``""``.

The API server refuses any other operator; this module reads one as ``Equal``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["SCHEDULING_EFFECTS", "toleration_matches", "tolerates", "untolerated_taint"]

Obj = Mapping[str, Any]

#: the effects that keep a pod off a node (``PreferNoSchedule`` only scores)
SCHEDULING_EFFECTS = ("NoSchedule", "NoExecute")


def toleration_matches(toleration: Obj, taint: Obj) -> bool:
    """Whether this one toleration tolerates ``taint``."""
    effect = toleration.get("effect")
    if effect and effect != taint.get("effect"):
        return False
    if toleration.get("operator") == "Exists":
        return not toleration.get("key") or toleration.get("key") == taint.get("key")
    return toleration.get("key") == taint.get("key") and toleration.get("value", "") == taint.get("value", "")


def tolerates(tolerations: Iterable[Obj] | None, taint: Obj) -> bool:
    """Whether any of ``tolerations`` (a pod spec's list; ``None`` is none) tolerates ``taint``."""
    return any(toleration_matches(t, taint) for t in tolerations or ())


def untolerated_taint(taints: Iterable[Obj] | None, tolerations: Iterable[Obj] | None, effects: tuple[str, ...] = SCHEDULING_EFFECTS) -> Obj | None:
    """The first of ``taints`` with one of ``effects`` that ``tolerations`` do not tolerate, or None."""
    tols = list(tolerations or ())
    return next((t for t in taints or () if t.get("effect") in effects and not tolerates(tols, t)), None)
