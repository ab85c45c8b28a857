"""PromQL functions, each vectorised over [steps, series] like the rest of the evaluator.

rate/increase/delta follow Prometheus' ``extrapolatedRate`` exactly: the counter
is corrected for resets (each drop adds the value before it), then the result is
extrapolated to the range boundaries unless the first/last sample is further
from the boundary than 1.1x the average sample interval (then only by half an
interval), and a counter is never extrapolated below zero.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from typing import TYPE_CHECKING, Callable

import numpy as np

from sre_env.kube.regexp import RegexError, compile_re2

from . import promql_ast as A
from .promql_ast import PromQLError
from .promql_engine import Context, bfill_index, ffill_index, quantile_rows
from .promql_values import (
    Labels,
    Matrix,
    Scalar,
    Vector,
    assemble,
    drop_name,
    empty_vector,
)

if TYPE_CHECKING:
    from .promql_engine import Evaluator

__all__ = ["FUNCTIONS"]

Fn = Callable[["Evaluator", A.Call, Context], object]
FUNCTIONS: dict[str, Fn] = {}


def _register(*names: str) -> Callable[[Fn], Fn]:
    def deco(fn: Fn) -> Fn:
        for n in names:
            FUNCTIONS[n] = fn
        return fn

    return deco


def _vector_arg(ev: "Evaluator", node: A.Node, ctx: Context) -> Vector:
    val = ev.ev(node, ctx)
    if not isinstance(val, Vector):
        raise PromQLError("bad_data", "parse error: expected type instant vector in call to function")
    return val


def _matrix_arg(ev: "Evaluator", node: A.Node, ctx: Context) -> Matrix:
    val = ev.ev(node, ctx)
    if not isinstance(val, Matrix):
        raise PromQLError("bad_data", "parse error: expected type range vector in call to function")
    return val


def _scalar_arg(ev: "Evaluator", node: A.Node, ctx: Context) -> np.ndarray:
    val = ev.ev(node, ctx)
    if not isinstance(val, Scalar):
        raise PromQLError("bad_data", "parse error: expected type scalar in call to function")
    return val.v


def _string_arg(node: A.Node) -> str:
    while isinstance(node, A.Paren):
        node = node.expr
    if not isinstance(node, A.Str):
        raise PromQLError("bad_data", "parse error: expected type string in call to function")
    return node.value


def _dropped(m: Matrix | Vector, ev: "Evaluator | None" = None) -> list[Labels]:
    if ev is not None:
        return ev.labels.drop_names(m.labels)
    return [drop_name(lab) for lab in m.labels]


# ---------------------------------------------------------------------- window helpers
class _Windows:
    """First/last sample indices and counts of every (step, series) window of a Matrix."""

    def __init__(self, m: Matrix) -> None:
        rows, n = m.v.shape
        self.m = m
        self.valid = ~np.isnan(m.v)
        cum = np.zeros((rows + 1, n), dtype=np.int64)
        np.cumsum(self.valid, axis=0, out=cum[1:])
        self.count = cum[m.hi] - cum[m.lo]
        self.ff = ffill_index(self.valid)
        bf = bfill_index(self.valid)
        self.first = bf[m.lo]
        last_row = m.hi - 1
        self.last = np.where(last_row[:, None] >= 0, self.ff[np.maximum(last_row, 0)], -1)
        self.ci = np.arange(n)[None, :]

    def value(self, idx: np.ndarray) -> np.ndarray:
        rows = self.m.v.shape[0]
        return self.m.v[np.clip(idx, 0, max(rows - 1, 0)), self.ci] if rows else np.zeros(idx.shape)

    def time(self, idx: np.ndarray) -> np.ndarray:
        rows = len(self.m.times)
        return self.m.times[np.clip(idx, 0, max(rows - 1, 0))] if rows else np.zeros(idx.shape)

    def prev_index(self) -> np.ndarray:
        """For each row, the last valid row strictly before it (-1 if none)."""
        rows, n = self.valid.shape
        prev = np.full((rows, n), -1, dtype=np.int64)
        if rows > 1:
            prev[1:] = self.ff[:-1]
        return prev


# ---------------------------------------------------------------------- rate family
def _extrapolated(ev: "Evaluator", node: A.Call, ctx: Context, counter: bool, rate: bool) -> Vector:
    m = _matrix_arg(ev, node.args[0], ctx)
    steps = len(ctx.ts)
    if not m.labels:
        return empty_vector(steps)
    if steps == 1:
        lo, hi = int(m.lo[0]), int(m.hi[0])
        blk = m.v[lo:hi]
        if hi - lo >= 2:
            gaps = np.isnan(blk).any(axis=0)
            if not gaps.any():
                return _extrapolated_dense(ev, m, blk, m.times[lo:hi], counter, rate)
            if not gaps.all():
                # series with every sample take the dense path, the rest the general one
                full, part = np.flatnonzero(~gaps), np.flatnonzero(gaps)
                dense = _extrapolated_dense(ev, _subset(m, full), blk[:, full], m.times[lo:hi], counter, rate)
                rest = _extrapolated_general(ev, _subset(m, part), steps, counter, rate)
                return Vector(dense.labels + rest.labels, np.concatenate([dense.v, rest.v], axis=1), np.concatenate([dense.p, rest.p], axis=1))
    return _extrapolated_general(ev, m, steps, counter, rate)


def _subset(m: Matrix, idx: np.ndarray) -> Matrix:
    return Matrix([m.labels[i] for i in idx], m.times, m.v[:, idx], m.lo, m.hi, m.start, m.end, m.range_s)


def _extrapolated_general(ev: "Evaluator", m: Matrix, steps: int, counter: bool, rate: bool) -> Vector:
    w = _Windows(m)
    ok = w.count >= 2
    first_v, last_v = w.value(w.first), w.value(w.last)
    first_t, last_t = w.time(w.first), w.time(w.last)
    result = last_v - first_v
    if counter:
        prev = w.prev_index()
        pv = m.v[np.maximum(prev, 0), np.arange(m.v.shape[1])[None, :]] if m.v.shape[0] else m.v
        drop = w.valid & (prev >= 0) & (m.v < pv)
        corr = np.cumsum(np.where(drop, pv, 0.0), axis=0)
        result = result + _take(corr, w.last, w.ci) - _take(corr, w.first, w.ci)
    range_start = m.start[:, None]
    range_end = m.end[:, None]
    duration_to_start = first_t - range_start
    duration_to_end = range_end - last_t
    sampled = last_t - first_t
    avg = sampled / np.maximum(w.count - 1, 1)
    threshold = avg * 1.1
    duration_to_start = np.where(duration_to_start >= threshold, avg / 2, duration_to_start)
    if counter:
        zero = np.where(result > 0, sampled * (first_v / np.where(result > 0, result, 1.0)), np.inf)
        use_zero = (result > 0) & (first_v >= 0) & (zero < duration_to_start)
        duration_to_start = np.where(use_zero, zero, duration_to_start)
    duration_to_end = np.where(duration_to_end >= threshold, avg / 2, duration_to_end)
    factor = (sampled + duration_to_start + duration_to_end) / np.where(sampled > 0, sampled, np.nan)
    if rate:
        factor = factor / m.range_s
    return Vector(_dropped(m, ev), result * factor, ok).compact()


def _extrapolated_dense(ev: "Evaluator", m: Matrix, blk: np.ndarray, times: np.ndarray, counter: bool, rate: bool) -> Vector:
    """extrapolatedRate for one step when every series has every sample of the window (the common case)."""
    first, last = blk[0], blk[-1]
    result = last - first
    if counter:
        prev = blk[:-1]
        resets = blk[1:] < prev
        if resets.any():
            result = result + np.where(resets, prev, 0.0).sum(axis=0)
    n = blk.shape[0]
    sampled = float(times[-1] - times[0])
    avg = sampled / (n - 1)
    to_start = float(times[0] - m.start[0])
    to_end = float(m.end[0] - times[-1])
    if to_start >= avg * 1.1:
        to_start = avg / 2
    if to_end >= avg * 1.1:
        to_end = avg / 2
    start = np.full(blk.shape[1], to_start)
    if counter:
        zero = sampled * (first / result)  # the Evaluator ignores floating-point warnings
        start = np.where((result > 0) & (first >= 0) & (zero < to_start), zero, start)
    factor = (sampled + start + to_end) / sampled
    if rate:
        factor = factor / m.range_s
    return Vector(_dropped(m, ev), (result * factor)[None, :], np.ones((1, blk.shape[1]), dtype=bool))


def _take(arr: np.ndarray, idx: np.ndarray, ci: np.ndarray) -> np.ndarray:
    rows = arr.shape[0]
    if rows == 0:
        return np.zeros(idx.shape)
    return arr[np.clip(idx, 0, rows - 1), ci]


@_register("rate")
def _rate(ev, node, ctx):
    return _extrapolated(ev, node, ctx, counter=True, rate=True)


@_register("increase")
def _increase(ev, node, ctx):
    return _extrapolated(ev, node, ctx, counter=True, rate=False)


@_register("delta")
def _delta(ev, node, ctx):
    return _extrapolated(ev, node, ctx, counter=False, rate=False)


def _instant(ev: "Evaluator", node: A.Call, ctx: Context, is_rate: bool) -> Vector:
    m = _matrix_arg(ev, node.args[0], ctx)
    steps = len(ctx.ts)
    if not m.labels:
        return empty_vector(steps)
    w = _Windows(m)
    prev_all = w.prev_index()
    last = w.last
    prev = np.where(last >= 0, _take(prev_all, last, w.ci), -1)
    lo = m.lo[:, None]
    ok = (last >= lo) & (prev >= lo) & (last >= 0) & (prev >= 0)
    lv, pv = w.value(last), w.value(prev)
    dt = w.time(last) - w.time(prev)
    if is_rate:
        dv = np.where(lv < pv, lv, lv - pv)
        val = dv / np.where(dt > 0, dt, np.nan)
        ok = ok & (dt > 0)
    else:
        val = lv - pv
    return Vector(_dropped(m, ev), val, ok).compact()


@_register("irate")
def _irate(ev, node, ctx):
    return _instant(ev, node, ctx, True)


@_register("idelta")
def _idelta(ev, node, ctx):
    return _instant(ev, node, ctx, False)


# ---------------------------------------------------------------------- *_over_time
def _over_time(kind: str) -> Fn:
    def fn(ev: "Evaluator", node: A.Call, ctx: Context) -> Vector:
        args = node.args
        q = None
        if kind == "quantile":
            q = _scalar_arg(ev, args[0], ctx)
            args = args[1:]
        m = _matrix_arg(ev, args[0], ctx)
        steps = len(ctx.ts)
        if not m.labels:
            return empty_vector(steps)
        w = _Windows(m)
        present = w.count > 0
        labels = m.labels if kind in ("last", "first") else _dropped(m, ev)
        if kind == "count":
            return Vector(labels, w.count.astype(np.float64), present).compact()
        if kind == "present":
            return Vector(labels, np.ones(present.shape), present).compact()
        if kind == "last":
            return Vector(labels, w.value(w.last), present).compact()
        if kind == "first":
            return Vector(labels, w.value(w.first), present).compact()
        n = m.v.shape[1]
        out = np.full((steps, n), np.nan)
        for s in range(steps):
            lo, hi = int(m.lo[s]), int(m.hi[s])
            if hi <= lo:
                continue
            blk = m.v[lo:hi]
            valid = w.valid[lo:hi]
            cnt = w.count[s]
            if kind == "sum":
                out[s] = np.where(valid, blk, 0.0).sum(axis=0)
            elif kind == "avg":
                out[s] = np.where(valid, blk, 0.0).sum(axis=0) / cnt
            elif kind == "min":
                out[s] = np.where(valid, blk, np.inf).min(axis=0)
            elif kind == "max":
                out[s] = np.where(valid, blk, -np.inf).max(axis=0)
            elif kind in ("stddev", "stdvar"):
                mean = np.where(valid, blk, 0.0).sum(axis=0) / cnt
                var = np.where(valid, (blk - mean) ** 2, 0.0).sum(axis=0) / cnt
                out[s] = np.sqrt(var) if kind == "stddev" else var
            elif kind == "quantile":
                assert q is not None
                out[s] = quantile_rows(np.where(valid, blk, np.nan).T, np.full(n, q[s]))
            elif kind in ("changes", "resets"):
                ff = ffill_index(valid)
                prev = np.full_like(ff, -1)
                prev[1:] = ff[:-1]
                pv = blk[np.maximum(prev, 0), np.arange(n)[None, :]]
                hit = valid & (prev >= 0) & ((blk != pv) & ~(np.isnan(blk) & np.isnan(pv)) if kind == "changes" else (blk < pv))
                out[s] = hit.sum(axis=0)
            elif kind == "mad":
                vals = np.where(valid, blk, np.nan).T
                med = quantile_rows(vals, np.full(n, 0.5))
                out[s] = quantile_rows(np.abs(vals - med[:, None]), np.full(n, 0.5))
        return Vector(labels, out, present).compact()

    return fn


for _kind in ("sum", "avg", "min", "max", "count", "last", "first", "present", "stddev", "stdvar", "quantile", "mad"):
    FUNCTIONS[f"{_kind}_over_time"] = _over_time(_kind)
FUNCTIONS["changes"] = _over_time("changes")
FUNCTIONS["resets"] = _over_time("resets")


def _regression(ev: "Evaluator", node: A.Call, ctx: Context, predict: bool) -> Vector:
    m = _matrix_arg(ev, node.args[0], ctx)
    steps = len(ctx.ts)
    horizon = _scalar_arg(ev, node.args[1], ctx) if predict else None
    if not m.labels:
        return empty_vector(steps)
    w = _Windows(m)
    n = m.v.shape[1]
    out = np.full((steps, n), np.nan)
    for s in range(steps):
        lo, hi = int(m.lo[s]), int(m.hi[s])
        if hi - lo < 2:
            continue
        valid = w.valid[lo:hi]
        y = np.where(valid, m.v[lo:hi], 0.0)
        first_t = w.time(w.first[s : s + 1])[0]
        intercept_t = ctx.ts[s] if predict else first_t
        x = (m.times[lo:hi, None] - intercept_t) * valid
        cnt = valid.sum(axis=0).astype(np.float64)
        sx, sy = x.sum(axis=0), y.sum(axis=0)
        sxy, sxx = (x * y).sum(axis=0), (x * x).sum(axis=0)
        cov = sxy - sx * sy / cnt
        var = sxx - sx * sx / cnt
        slope = cov / var
        intercept = sy / cnt - slope * sx / cnt
        first_y = w.value(w.first[s : s + 1])[0]
        const = (np.where(valid, m.v[lo:hi], first_y[None, :]) == first_y[None, :]).all(axis=0)
        slope = np.where(const, 0.0, slope)
        intercept = np.where(const, first_y, intercept)
        if predict:
            assert horizon is not None
            out[s] = slope * horizon[s] + intercept
        else:
            out[s] = slope
    return Vector(_dropped(m, ev), out, w.count >= 2).compact()


@_register("deriv")
def _deriv(ev, node, ctx):
    return _regression(ev, node, ctx, predict=False)


@_register("predict_linear")
def _predict_linear(ev, node, ctx):
    return _regression(ev, node, ctx, predict=True)


# ---------------------------------------------------------------------- elementwise math
def _math(f: Callable[[np.ndarray], np.ndarray]) -> Fn:
    def fn(ev: "Evaluator", node: A.Call, ctx: Context) -> Vector:
        x = _vector_arg(ev, node.args[0], ctx)
        return Vector(_dropped(x, ev), f(x.v), x.p)

    return fn


for _name, _f in {
    "abs": np.abs,
    "ceil": np.ceil,
    "floor": np.floor,
    "exp": np.exp,
    "sqrt": np.sqrt,
    "ln": np.log,
    "log2": np.log2,
    "log10": np.log10,
    "sgn": np.sign,
    "deg": np.degrees,
    "rad": np.radians,
    "sin": np.sin,
    "cos": np.cos,
    "tan": np.tan,
    "asin": np.arcsin,
    "acos": np.arccos,
    "atan": np.arctan,
    "sinh": np.sinh,
    "cosh": np.cosh,
    "tanh": np.tanh,
    "asinh": np.arcsinh,
    "acosh": np.arccosh,
    "atanh": np.arctanh,
}.items():
    FUNCTIONS[_name] = _math(_f)


@_register("round")
def _round(ev, node, ctx):
    x = _vector_arg(ev, node.args[0], ctx)
    to = _scalar_arg(ev, node.args[1], ctx) if len(node.args) > 1 else np.ones(len(ctx.ts))
    inv = 1.0 / to[:, None]
    return Vector(_dropped(x, ev), np.floor(x.v * inv + 0.5) / inv, x.p)


@_register("clamp")
def _clamp(ev, node, ctx):
    x = _vector_arg(ev, node.args[0], ctx)
    lo = _scalar_arg(ev, node.args[1], ctx)[:, None]
    hi = _scalar_arg(ev, node.args[2], ctx)[:, None]
    ok = x.p & (hi >= lo)
    return Vector(_dropped(x, ev), np.fmax(lo, np.fmin(hi, x.v)), ok).compact()


@_register("clamp_min")
def _clamp_min(ev, node, ctx):
    x = _vector_arg(ev, node.args[0], ctx)
    lo = _scalar_arg(ev, node.args[1], ctx)[:, None]
    return Vector(_dropped(x, ev), np.fmax(lo, x.v), x.p)


@_register("clamp_max")
def _clamp_max(ev, node, ctx):
    x = _vector_arg(ev, node.args[0], ctx)
    hi = _scalar_arg(ev, node.args[1], ctx)[:, None]
    return Vector(_dropped(x, ev), np.fmin(hi, x.v), x.p)


# ---------------------------------------------------------------------- histograms
@_register("histogram_quantile")
def _histogram_quantile(ev, node, ctx):
    q = _scalar_arg(ev, node.args[0], ctx)
    x = _vector_arg(ev, node.args[1], ctx)
    steps = len(ctx.ts)
    if x.n == 0:
        return empty_vector(steps)
    groups = ev.shared.memo(("hq", tuple(map(id, x.labels))), tuple(x.labels), lambda: _bucket_groups(x.labels))
    labels: list[Labels] = []
    vals, pres = [], []
    # groups with the same bucket bounds are computed together: [steps * groups, buckets]
    by_bounds: dict[tuple, list[int]] = {}
    for g, (_rest, bounds, _idx) in enumerate(groups):
        by_bounds.setdefault(tuple(bounds), []).append(g)
    for bounds_t, gs in by_bounds.items():
        bounds = np.asarray(bounds_t)
        idx = np.asarray([groups[g][2] for g in gs])  # [G, B]
        counts = x.v[:, idx]  # [S, G, B]
        p = x.p[:, idx]
        out = bucket_quantiles(np.repeat(q, len(gs)), bounds, counts.reshape(-1, len(bounds))).reshape(steps, len(gs))
        full = p.all(axis=2)
        anyp = p.any(axis=2)
        for s, gi in zip(*np.nonzero(anyp & ~full)):  # some buckets missing at a step: use those present
            have = p[s, gi]
            out[s, gi] = bucket_quantile(float(q[s]), bounds[have], counts[s, gi, have])
        labels.extend(groups[g][0] for g in gs)
        vals.append(out)
        pres.append(anyp)
    return Vector(labels, np.concatenate(vals, axis=1), np.concatenate(pres, axis=1)).compact()


def _bucket_groups(labels: list[Labels]) -> list[tuple[Labels, np.ndarray, list[int]]]:
    groups: dict[tuple, list[tuple[float, int]]] = {}
    rests: dict[tuple, Labels] = {}
    for i, lab in enumerate(labels):
        le = lab.get("le")
        if le is None:
            continue
        try:
            bound = float(le)
        except ValueError:
            continue
        rest = {k: v for k, v in lab.items() if k not in ("le", "__name__")}
        key = tuple(sorted(rest.items()))
        groups.setdefault(key, []).append((bound, i))
        rests[key] = rest
    out = []
    for key, buckets in groups.items():
        buckets.sort()
        out.append((rests[key], np.array([b for b, _ in buckets]), [i for _, i in buckets]))
    return out


def bucket_quantiles(q: np.ndarray, bounds: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """bucket_quantile for every step at once (all buckets present): counts is [steps, buckets]."""
    steps, nb = counts.shape
    out = np.full(steps, np.nan)
    if nb < 2 or bounds[-1] != np.inf:
        return _q_edges(q, out)
    c = np.maximum.accumulate(counts, axis=1)
    obs = c[:, -1]
    rank = np.clip(q, 0.0, 1.0) * obs
    b = (c < rank[:, None]).sum(axis=1)  # first bucket with count >= rank
    rows = np.arange(steps)
    bc = np.clip(b, 0, nb - 1)
    prev = np.where(bc > 0, c[rows, np.maximum(bc - 1, 0)], 0.0)
    start = np.where(bc > 0, bounds[np.maximum(bc - 1, 0)], 0.0)
    end = bounds[bc]
    count = c[rows, bc] - prev
    val = start + (end - start) * ((rank - prev) / count)
    val = np.where(bc >= nb - 1, bounds[nb - 2], val)
    val = np.where((bc == 0) & (bounds[0] <= 0), bounds[0], val)
    out = np.where(obs > 0, val, np.nan)
    return _q_edges(q, out)


def _q_edges(q: np.ndarray, out: np.ndarray) -> np.ndarray:
    out = np.where(q < 0, -np.inf, out)
    out = np.where(q > 1, np.inf, out)
    return np.where(np.isnan(q), np.nan, out)


def bucket_quantile(q: float, bounds: np.ndarray, counts: np.ndarray) -> float:
    """Prometheus' bucketQuantile for classic histograms (buckets sorted by upper bound)."""
    if q != q:
        return float("nan")
    if q < 0:
        return float("-inf")
    if q > 1:
        return float("inf")
    if len(bounds) == 0 or bounds[-1] != np.inf:
        return float("nan")
    counts = np.maximum.accumulate(counts)
    if len(bounds) < 2:
        return float("nan")
    observations = counts[-1]
    if observations == 0:
        return float("nan")
    rank = q * observations
    b = int(np.searchsorted(counts, rank, side="left"))
    if b >= len(bounds) - 1:
        return float(bounds[-2])
    if b == 0 and bounds[0] <= 0:
        return float(bounds[0])
    start, end, count = 0.0, float(bounds[b]), float(counts[b])
    if b > 0:
        start = float(bounds[b - 1])
        count -= float(counts[b - 1])
        rank -= float(counts[b - 1])
    return start + (end - start) * (rank / count)


# ---------------------------------------------------------------------- absence
def _absent_labels(node: A.Node) -> Labels:
    while isinstance(node, A.Paren):
        node = node.expr
    sel = node.selector if isinstance(node, A.MatrixSel) else node
    if not isinstance(sel, A.Selector) or len(sel.matchers) != 1:
        return {}
    out: Labels = {}
    seen: set[str] = set()
    for name, op, value in sel.matchers[0]:
        if name == "__name__":
            continue
        if op == "=" and name not in seen:
            out[name] = value
        elif name in out:
            del out[name]
        seen.add(name)
    return out


@_register("absent")
def _absent(ev, node, ctx):
    x = _vector_arg(ev, node.args[0], ctx)
    any_p = x.p.any(axis=1) if x.n else np.zeros(len(ctx.ts), dtype=bool)
    return Vector([_absent_labels(node.args[0])], np.ones((len(ctx.ts), 1)), (~any_p)[:, None]).compact()


@_register("absent_over_time")
def _absent_over_time(ev, node, ctx):
    m = _matrix_arg(ev, node.args[0], ctx)
    steps = len(ctx.ts)
    if m.labels:
        w = _Windows(m)
        any_p = (w.count > 0).any(axis=1)
    else:
        any_p = np.zeros(steps, dtype=bool)
    return Vector([_absent_labels(node.args[0])], np.ones((steps, 1)), (~any_p)[:, None]).compact()


# ---------------------------------------------------------------------- labels
_LABEL_NAME = re.compile(r"[a-zA-Z_][a-zA-Z0-9_]*")
_EXPAND = re.compile(r"\$(?:(\$)|\{([A-Za-z0-9_]+)\}|([A-Za-z0-9_]+))")


def _expand(template: str, m: re.Match) -> str:
    """Go's regexp.Expand: $1, ${1}, $name, ${name}, $$; unknown groups expand to ''."""

    def sub(mm: re.Match) -> str:
        if mm.group(1):
            return "$"
        name = mm.group(2) or mm.group(3)
        try:
            val = m.group(int(name)) if name.isdigit() else m.group(name)
        except IndexError:
            return ""
        return val or ""

    return _EXPAND.sub(sub, template)


@_register("label_replace")
def _label_replace(ev, node, ctx):
    x = _vector_arg(ev, node.args[0], ctx)
    dst, repl, src, regex = (_string_arg(a) for a in node.args[1:5])
    try:
        rx = compile_re2(regex, dot_all=True)
    except RegexError as exc:
        raise PromQLError("execution", f"invalid regular expression in label_replace(): {regex}: {exc.msg}") from None
    if not _LABEL_NAME.fullmatch(dst):
        raise PromQLError("execution", f"invalid destination label name in label_replace(): {dst}")
    out = []
    for lab in x.labels:
        m = rx.fullmatch(lab.get(src, ""))
        if m is None:
            out.append(lab)
            continue
        new = dict(lab)
        res = _expand(repl, m)
        if res:
            new[dst] = res
        else:
            new.pop(dst, None)
        out.append(new)
    return assemble(out, x.v, x.p)


@_register("label_join")
def _label_join(ev, node, ctx):
    x = _vector_arg(ev, node.args[0], ctx)
    dst = _string_arg(node.args[1])
    sep = _string_arg(node.args[2])
    srcs = [_string_arg(a) for a in node.args[3:]]
    if not _LABEL_NAME.fullmatch(dst):
        raise PromQLError("execution", f"invalid destination label name in label_join(): {dst}")
    out = []
    for lab in x.labels:
        new = dict(lab)
        val = sep.join(lab.get(s, "") for s in srcs)
        if val:
            new[dst] = val
        else:
            new.pop(dst, None)
        out.append(new)
    return assemble(out, x.v, x.p)


# ---------------------------------------------------------------------- time and types
@_register("time")
def _time(ev, node, ctx):
    return Scalar(ctx.ts + ev.tsdb.epoch)


@_register("pi")
def _pi(ev, node, ctx):
    return Scalar(np.full(len(ctx.ts), np.pi))


@_register("timestamp")
def _timestamp(ev, node, ctx):
    x = _vector_arg(ev, node.args[0], ctx)
    t = x.t if x.t is not None else np.broadcast_to(ctx.ts[:, None], x.v.shape)
    return Vector(_dropped(x, ev), t + ev.tsdb.epoch, x.p)


@_register("vector")
def _vector(ev, node, ctx):
    s = _scalar_arg(ev, node.args[0], ctx)
    return Vector([{}], s[:, None].copy(), np.ones((len(s), 1), dtype=bool))


@_register("scalar")
def _scalar(ev, node, ctx):
    x = _vector_arg(ev, node.args[0], ctx)
    if x.n == 0:
        return Scalar(np.full(len(ctx.ts), np.nan))
    one = x.p.sum(axis=1) == 1
    which = np.argmax(x.p, axis=1)
    vals = x.v[np.arange(x.v.shape[0]), which]
    return Scalar(np.where(one, vals, np.nan))


@_register("sort", "sort_desc")
def _sort(ev, node, ctx):
    # ordering only matters for an instant query's output; the formatter applies it
    return _vector_arg(ev, node.args[0], ctx)


def _calendar(part: str) -> Fn:
    def fn(ev: "Evaluator", node: A.Call, ctx: Context) -> Vector:
        if node.args:
            x = _vector_arg(ev, node.args[0], ctx)
            labels, vals, p = _dropped(x, ev), x.v, x.p
        else:
            labels, vals, p = [{}], (ctx.ts + ev.tsdb.epoch)[:, None], np.ones((len(ctx.ts), 1), dtype=bool)
        out = np.full(vals.shape, np.nan)
        for idx in zip(*np.nonzero(p & np.isfinite(vals))):
            d = datetime.fromtimestamp(float(vals[idx]), tz=timezone.utc)
            if part == "days_in_month":
                nxt = d.replace(day=28) + timedelta(days=4)
                out[idx] = (nxt - timedelta(days=nxt.day)).day
            else:
                out[idx] = {
                    "minute": d.minute,
                    "hour": d.hour,
                    "day_of_month": d.day,
                    "day_of_week": (d.weekday() + 1) % 7,
                    "day_of_year": d.timetuple().tm_yday,
                    "month": d.month,
                    "year": d.year,
                }[part]
        return Vector(labels, out, p)

    return fn


for _part in ("minute", "hour", "day_of_month", "day_of_week", "day_of_year", "month", "year", "days_in_month"):
    FUNCTIONS[_part] = _calendar(_part)
