"""Value types of the PromQL evaluator: every value covers all evaluation steps at once.

Why: a range query over an hour evaluates the same expression at many steps, and
all series of a TSDB share scrape timestamps, so the evaluator works on numpy
matrices of shape [steps, series] instead of looping over steps in Python (the
semantics stay Prometheus' per-step semantics). Absent samples are tracked with
an explicit presence mask, because a present sample may itself be NaN (``0/0``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .promql_ast import PromQLError

__all__ = ["Vector", "Matrix", "Scalar", "String", "Labels", "label_key", "drop_name", "assemble", "empty_vector"]

Labels = dict[str, str]


def label_key(labels: Labels) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(labels.items()))


def drop_name(labels: Labels) -> Labels:
    if "__name__" not in labels:
        return labels
    return {k: v for k, v in labels.items() if k != "__name__"}


@dataclass
class Vector:
    """An instant vector at every step: ``v``/``p`` are [steps, series]; ``p`` marks present samples."""

    labels: list[Labels]
    v: np.ndarray
    p: np.ndarray
    #: sample timestamps (stored time) for vectors straight from a selector, for timestamp()
    t: np.ndarray | None = None

    @property
    def n(self) -> int:
        return len(self.labels)

    def compact(self) -> "Vector":
        """Drop series that are absent at every step."""
        if self.p.all():
            return self
        keep = self.p.any(axis=0)
        if keep.all():
            return self
        idx = np.flatnonzero(keep)
        return Vector([self.labels[i] for i in idx], self.v[:, idx], self.p[:, idx], None if self.t is None else self.t[:, idx])


@dataclass
class Matrix:
    """A range vector argument: samples ``v`` [rows, series] at ``times``; step s sees rows lo[s]:hi[s]."""

    labels: list[Labels]
    times: np.ndarray
    v: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    #: range boundaries per step (for rate extrapolation)
    start: np.ndarray
    end: np.ndarray
    range_s: float
    _cache: dict = field(default_factory=dict, repr=False)


@dataclass
class Scalar:
    v: np.ndarray  # [steps]


@dataclass
class String:
    value: str


def empty_vector(steps: int) -> Vector:
    return Vector([], np.empty((steps, 0)), np.zeros((steps, 0), dtype=bool))


def assemble(labels: list[Labels], v: np.ndarray, p: np.ndarray) -> Vector:
    """A vector from columns whose labels may repeat: repeats merge when disjoint in time.

    Two present samples with the same labels at one step are Prometheus' "vector
    cannot contain metrics with the same labelset" error.
    """
    keys = [label_key(lab) for lab in labels]
    if len(set(keys)) == len(keys):
        return Vector(labels, v, p).compact()
    groups: dict[tuple, list[int]] = {}
    for i, k in enumerate(keys):
        groups.setdefault(k, []).append(i)
    out_labels, cols_v, cols_p = [], [], []
    for k, idx in groups.items():
        if len(idx) == 1:
            out_labels.append(labels[idx[0]])
            cols_v.append(v[:, idx[0]])
            cols_p.append(p[:, idx[0]])
            continue
        pp = p[:, idx]
        if (pp.sum(axis=1) > 1).any():
            raise PromQLError("execution", "vector cannot contain metrics with the same labelset")
        which = np.argmax(pp, axis=1)
        vv = v[:, idx][np.arange(v.shape[0]), which]
        out_labels.append(labels[idx[0]])
        cols_v.append(vv)
        cols_p.append(pp.any(axis=1))
    steps = v.shape[0]
    if not out_labels:
        return empty_vector(steps)
    return Vector(out_labels, np.stack(cols_v, axis=1), np.stack(cols_p, axis=1)).compact()
