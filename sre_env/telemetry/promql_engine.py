"""The PromQL evaluator: selectors, operators and aggregations over a :class:`TSDB`.

Semantics follow Prometheus 3: instant selectors look back 5 minutes (left-open)
and honour staleness markers, range selectors cover ``(t - range, t]``, ``offset``
and ``@`` shift the evaluation time, binary operators match vectors on/ignoring
labels with group_left/group_right, and the error texts are Prometheus'. Every
value covers all steps of a range query at once (see promql_values).

Times inside the evaluator are the TSDB's stored times (simulated seconds);
``tsdb.epoch`` converts them to the unix times users see (``time()``, ``@``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

from sre_env.kube.regexp import RegexError

from . import promql_ast as A
from .promql_ast import ARITHMETIC, COMPARISON, PromQLError
from .promql_values import (
    Labels,
    Matrix,
    Scalar,
    String,
    Vector,
    assemble,
    drop_name,
    empty_vector,
    label_key,
)
from .tsdb import TSDB, is_stale, parse_key

__all__ = ["Evaluator", "LOOKBACK_S"]

LOOKBACK_S = 300.0


@dataclass
class Context:
    ts: np.ndarray  # evaluation times [steps], stored time
    start: float
    end: float


def ffill_index(valid: np.ndarray) -> np.ndarray:
    """For each row, the index of the last valid row at or before it (-1 if none), per column."""
    rows = valid.shape[0]
    idx = np.where(valid, np.arange(rows)[:, None], -1)
    np.maximum.accumulate(idx, axis=0, out=idx)
    return idx


def bfill_index(valid: np.ndarray) -> np.ndarray:
    """[rows + 1, cols]: the index of the first valid row at or after each row (rows if none)."""
    rows, cols = valid.shape
    idx = np.full((rows + 1, cols), rows, dtype=np.int64)
    idx[:rows] = np.where(valid, np.arange(rows)[:, None], rows)
    idx[:rows] = np.minimum.accumulate(idx[:rows][::-1], axis=0)[::-1]
    return idx


def _arith(op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "/":
        return a / b
    if op == "%":
        return np.fmod(a, b)
    if op == "^":
        return np.power(a, b)
    if op == "atan2":
        return np.arctan2(a, b)
    raise PromQLError("bad_data", f"operator {op!r} not allowed for scalar operations")


def _compare(op: str, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if op == "==":
        return a == b
    if op == "!=":
        return a != b
    if op == ">":
        return a > b
    if op == "<":
        return a < b
    if op == ">=":
        return a >= b
    return a <= b


def format_labels(labels: Labels) -> str:
    """Prometheus' labels.String(): ``name{a="x", b="y"}``."""
    name = labels.get("__name__", "")
    inner = ", ".join(f'{k}="{_escape(v)}"' for k, v in sorted(labels.items()) if k != "__name__")
    if not inner:
        return name if name else "{}"
    return f"{name}{{{inner}}}"


def _escape(v: str) -> str:
    return v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


#: lo index of a single-step range selection (read-only)
_ZERO_INDEX = np.zeros(1, dtype=np.int64)
_ZERO_INDEX.flags.writeable = False


class LabelCache:
    """Memoised label-set operations, keyed by the identity of the input dicts.

    Why: alert rules evaluate the same expressions every scrape over the same
    series; the label work (dropping the name, grouping keys, matching
    signatures, result labels) is a pure function of the input label sets, so it
    is computed once. Label dicts are treated as immutable everywhere, and each
    memo entry pins its inputs so an ``id`` is never reused while cached.
    """

    #: memo entries kept before starting over (label sets churn with pods)
    max_entries = 50_000

    def __init__(self, shared: LabelCache | None = None) -> None:
        self._drop: dict[int, tuple[Labels, Labels]] = {}
        self._drop_lists: dict[int, tuple[list[Labels], list[Labels]]] = {}
        self._memo: dict[tuple, tuple[object, object]] = {}
        #: per label dict: (dict, grouping or matching key) by (id, what was asked)
        self._keys: dict[tuple, tuple[Labels, tuple]] = {}
        self._interned: dict[tuple, Labels] = {}
        #: where single label dicts' names are dropped (see SharedLabelCache)
        self._shared = shared

    def group_labels(self, key: tuple) -> Labels:
        """The label dict of a group key, one object per key, so later stages' memos hit across evaluations."""
        lab = self._interned.get(key)
        if lab is None:
            if len(self._interned) > 100_000:
                self._interned.clear()
            lab = self._interned[key] = dict(key)
        return lab

    def label_key_of(self, lab: Labels, what: tuple, fn) -> tuple:  # noqa: ANN001 - small internal helper
        """``fn(lab)`` (a grouping key or matching signature) memoised per label dict, so a rule over
        many series recomputes only the keys of the series that are new since its last evaluation."""
        k = (id(lab), what)
        hit = self._keys.get(k)
        if hit is not None and hit[0] is lab:
            return hit[1]
        val = fn(lab)
        if len(self._keys) > 200_000:
            self._keys.clear()
        self._keys[k] = (lab, val)
        return val

    def drop_name(self, lab: Labels) -> Labels:
        if self._shared is not None:
            return self._shared.drop_name(lab)
        hit = self._drop.get(id(lab))
        if hit is not None and hit[0] is lab:
            return hit[1]
        out = drop_name(lab)
        self._drop[id(lab)] = (lab, out)
        return out

    def drop_names(self, labels: list[Labels]) -> list[Labels]:
        # the same selection's label list comes back every evaluation: drop its names once
        hit = self._drop_lists.get(id(labels))
        if hit is not None and hit[0] is labels:
            return hit[1]
        out = [self.drop_name(lab) for lab in labels]
        if len(self._drop_lists) > 4096:  # lists built per evaluation churn: keep the cache bounded
            self._drop_lists.clear()
        self._drop_lists[id(labels)] = (labels, out)
        return out

    def memo(self, key: tuple, pin: object, fn):  # noqa: ANN001 - small internal helper
        """``fn()`` cached under ``key``, whose ids name objects ``pin`` keeps alive (so no id is reused)."""
        hit = self._memo.get(key)
        if hit is not None:
            return hit[1]
        val = fn()
        if len(self._memo) > self.max_entries:
            self._memo.clear()
        self._memo[key] = (pin, val)
        return val


class SharedLabelCache(LabelCache):
    """The label work on interned label dicts, shared by every Evaluator of the process.

    Why: a restored or forked world (every reset, every grading gate) builds a new
    TSDB and a new Evaluator, and its first rule evaluation would redo all the
    label work. Label dicts of series are interned process-wide by series key
    (:func:`interned_labels`), so a fork's series come with the very dicts its
    parent's memos are keyed on. Entries keyed on per-evaluator objects (a TSDB's
    column arrays, label lists) stay in the Evaluator's own cache.
    """

    max_entries = 5_000

    def drop_name(self, lab: Labels) -> Labels:
        if len(self._drop) > 20_000:  # entries pin their dicts: bound what the process keeps
            self._drop.clear()
        return super().drop_name(lab)


_SHARED = SharedLabelCache()
_INTERNED: dict[str, Labels] = {}


def interned_labels(tsdb: TSDB, col: int) -> Labels:
    """The label dict of a TSDB column, one object per series key in the whole process (read-only)."""
    key = tsdb.keys[col]
    lab = _INTERNED.get(key)
    if lab is None:
        if len(_INTERNED) > 50_000:  # keys churn with containers; dropping them only costs re-parsing
            _INTERNED.clear()
        lab = _INTERNED[key] = parse_key(key)
    return lab


class Evaluator:
    """Evaluates compiled expressions against one TSDB."""

    def __init__(self, tsdb: TSDB, lookback_s: float = LOOKBACK_S, default_subquery_step_s: float | None = None) -> None:
        self.tsdb = tsdb
        self.lookback_s = lookback_s
        self.subquery_step_s = default_subquery_step_s or tsdb.interval_s
        #: memos keyed on this evaluator's own objects (column arrays, label lists)
        self.labels = LabelCache(shared=_SHARED)
        #: memos keyed on interned label dicts, shared with every other evaluator
        self.shared = _SHARED
        from . import promql_functions

        self._functions = promql_functions.FUNCTIONS
        #: per selector node (by identity): (the node, TSDB width when selected, its columns)
        self._selected: dict[int, tuple[A.Selector, int, np.ndarray]] = {}

    # ------------------------------------------------------------------ entry
    def evaluate(self, node: A.Node, ctx: Context) -> Vector | Matrix | Scalar | String:
        with np.errstate(all="ignore"):
            return self.ev(node, ctx)

    def ev(self, node: A.Node, ctx: Context):
        t = type(node)
        if t is A.Selector:
            return self.vector_selector(node, ctx)
        if t is A.Num:
            return Scalar(np.full(len(ctx.ts), node.value))
        if t is A.Str:
            return String(node.value)
        if t is A.Paren:
            return self.ev(node.expr, ctx)
        if t is A.Call:
            fn = self._functions.get(node.func)
            if fn is None:
                raise PromQLError("bad_data", f"parse error: function {node.func!r} is not supported by sre-env's PromQL engine")
            return fn(self, node, ctx)
        if t is A.Binary:
            return self.binary(node, ctx)
        if t is A.Aggregate:
            return self.aggregate(node, ctx)
        if t is A.Neg:
            val = self.ev(node.expr, ctx)
            if isinstance(val, Scalar):
                return Scalar(-val.v)
            return Vector(self.labels.drop_names(val.labels), -val.v, val.p)
        if t is A.MatrixSel:
            return self.matrix_selector(node, ctx)
        if t is A.Subquery:
            return self.subquery(node, ctx)
        raise PromQLError("bad_data", f"unsupported expression {node!r}")

    # ------------------------------------------------------------------ selectors
    def _eval_times(self, at: A.At | None, offset: float, ctx: Context) -> np.ndarray:
        if at is None:
            base = ctx.ts
        elif at.kind == "start":
            base = np.full(len(ctx.ts), ctx.start)
        elif at.kind == "end":
            base = np.full(len(ctx.ts), ctx.end)
        else:
            base = np.full(len(ctx.ts), at.t - self.tsdb.epoch)
        return base - offset if offset else base

    def select(self, sel: A.Selector) -> np.ndarray:
        """Columns of the selector's series, as the same array object while they stay the same.

        Why: the label memos (:class:`LabelCache`) key on the identity of the
        selection; the TSDB builds a new array whenever any new series appears
        (a restarted container's cAdvisor series, say), which would make every
        rule's label work start over although its own series did not change.
        """
        width = self.tsdb.width
        hit = self._selected.get(id(sel))
        if hit is not None and hit[0] is sel and hit[1] == width:
            return hit[2]  # no series was added since: the same selection (a rule's selectors are long-lived nodes)
        try:
            if len(sel.matchers) == 1:
                cols = self.tsdb.select(sel.matchers[0])
            else:
                cols = np.asarray(sorted(set().union(*(self.tsdb.select(m).tolist() for m in sel.matchers))), dtype=np.int64)
        except RegexError as exc:
            raise PromQLError("bad_data", f"parse error: error parsing regexp: {exc.msg}") from None
        if hit is not None and hit[0] is sel and np.array_equal(hit[2], cols):
            cols = hit[2]
        if len(self._selected) > 4096:  # ad-hoc queries compile new nodes: keep the cache bounded
            self._selected.clear()
        self._selected[id(sel)] = (sel, width, cols)
        return cols

    def _col_labels(self, cols: np.ndarray) -> list[Labels]:
        """Label dicts of TSDB columns (the same list object for the same selection)."""
        return self.labels.memo(("cols", id(cols)), cols, lambda: [interned_labels(self.tsdb, int(c)) for c in cols])

    def vector_selector(self, sel: A.Selector, ctx: Context) -> Vector:
        steps = len(ctx.ts)
        cols = self.select(sel)
        if len(cols) == 0:
            return empty_vector(steps)
        teff = self._eval_times(sel.at, sel.offset, ctx)
        if steps == 1:
            t = float(teff[0])
            row, t_row = self.tsdb.row_at(t)
            if row is not None and t_row > t - self.lookback_s:
                vals = row[cols]
                if not np.isnan(vals).any():
                    # every selected series has a sample in the newest row at or before t
                    return Vector(self._col_labels(cols), vals[None, :], np.ones((1, len(cols)), dtype=bool), np.full((1, len(cols)), t_row))
                if t_row == float(self.tsdb.times()[-1]):
                    # at or after the newest row: each series' newest sample, unless stale or too old
                    vals, times, ok = self.tsdb.latest_samples(cols, t - self.lookback_s)
                    if ok.all():
                        return Vector(self._col_labels(cols), vals[None, :], ok[None, :], times[None, :])
                    idx = np.flatnonzero(ok)
                    if len(idx) == 0:
                        return empty_vector(steps)
                    labels_all = self._col_labels(cols)
                    return Vector([labels_all[i] for i in idx], vals[idx][None, :], np.ones((1, len(idx)), dtype=bool), times[idx][None, :])
        times, block = self.tsdb.window(cols, float(teff.min()) - self.lookback_s, float(teff.max()))
        if len(times) == 0:
            return empty_vector(steps)
        real = ~np.isnan(block)
        marked = real | is_stale(block)
        ff = ffill_index(marked)
        hi = np.searchsorted(times, teff, side="right") - 1
        j = np.where(hi[:, None] >= 0, ff[np.maximum(hi, 0)], -1)
        jj = np.maximum(j, 0)
        ci = np.arange(len(cols))[None, :]
        sample_t = times[jj]
        ok = (j >= 0) & real[jj, ci] & (sample_t > (teff - self.lookback_s)[:, None])
        keep = ok.any(axis=0)
        if not keep.any():
            return empty_vector(steps)
        if keep.all():
            return Vector(self._col_labels(cols), block[jj, ci], ok, sample_t)
        idx = np.flatnonzero(keep)
        labels = [interned_labels(self.tsdb, int(c)) for c in cols[idx]]
        return Vector(labels, block[jj[:, idx], idx[None, :]], ok[:, idx], sample_t[:, idx])

    def matrix_selector(self, node: A.MatrixSel, ctx: Context) -> Matrix:
        sel = node.selector
        cols = self.select(sel)
        teff = self._eval_times(sel.at, sel.offset, ctx)
        rng = node.range_s
        times, block = self.tsdb.window(cols, float(teff.min()) - rng, float(teff.max()))
        if len(teff) == 1:
            # the window is exactly this step's range: every row is inside it
            lo, hi = _ZERO_INDEX, np.array([len(times)])
        else:
            lo = np.searchsorted(times, teff - rng, side="right")
            hi = np.searchsorted(times, teff, side="right")
        if len(cols) and len(times):
            total = block.sum()
            if total == total:  # no NaN anywhere (the common case): every series has samples
                return Matrix(self._col_labels(cols), times, block, lo, hi, teff - rng, teff, rng)
            keep = ~np.isnan(block).all(axis=0)
            if keep.all():
                return Matrix(self._col_labels(cols), times, block, lo, hi, teff - rng, teff, rng)
            idx = np.flatnonzero(keep)
            block = block[:, idx]
            cols = cols[idx]
        else:
            block = np.empty((len(times), 0))
            cols = cols[:0]
        labels = [interned_labels(self.tsdb, int(c)) for c in cols]
        return Matrix(labels, times, block, lo, hi, teff - rng, teff, rng)

    def subquery(self, node: A.Subquery, ctx: Context) -> Matrix:
        step = node.step_s or self.subquery_step_s
        if step <= 0:
            raise PromQLError("bad_data", "parse error: zero or negative subquery step")
        teff = self._eval_times(node.at, node.offset, ctx)
        epoch = self.tsdb.epoch
        first = float(teff.min()) - node.range_s + epoch
        k0 = math.floor(first / step)
        if k0 * step <= first:
            k0 += 1
        k1 = math.floor((float(teff.max()) + epoch) / step)
        grid = np.arange(k0, k1 + 1, dtype=np.float64) * step - epoch
        if len(grid) > 11000:
            raise PromQLError("execution", "exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query resolution (?step=XX)")
        if len(grid) == 0:
            inner = empty_vector(0)
        else:
            inner = self.ev(node.expr, Context(grid, ctx.start, ctx.end))
            if isinstance(inner, Scalar):
                raise PromQLError("bad_data", "parse error: subquery is only allowed on instant vector")
        values = np.where(inner.p, inner.v, np.nan) if inner.n else np.empty((len(grid), 0))
        lo = np.searchsorted(grid, teff - node.range_s, side="right")
        hi = np.searchsorted(grid, teff, side="right")
        return Matrix(list(inner.labels), grid, values, lo, hi, teff - node.range_s, teff, node.range_s)

    # ------------------------------------------------------------------ aggregation
    def aggregate(self, node: A.Aggregate, ctx: Context) -> Vector:
        steps = len(ctx.ts)
        x = self.ev(node.expr, ctx)
        if not isinstance(x, Vector):
            raise PromQLError("bad_data", f"parse error: expected type instant vector in aggregation expression, got {type(x).__name__.lower()}")
        op = node.op
        param = self.ev(node.param, ctx) if node.param is not None else None
        if op == "count_values":
            assert isinstance(param, String)
            return self._count_values(param.value, x, node, steps)
        if x.n == 0:
            return empty_vector(steps)
        keys, group_labels = self._groups(x.labels, node.by, node.labels)
        if op in ("topk", "bottomk", "limitk"):
            assert isinstance(param, Scalar)
            return self._topk(op, param.v, x, keys)
        if op == "quantile":
            assert isinstance(param, Scalar)
            return self._quantile(param.v, x, keys, group_labels)
        order, starts, out_labels, identity = self.shared.memo(("agg-order", id(keys)), keys, lambda: _group_order(keys, group_labels))
        if identity:  # every series its own group, already in order
            v, p = x.v, x.p
        else:
            v = x.v[:, order]
            p = x.p[:, order]
        count = np.add.reduceat(p.astype(np.float64), starts, axis=1)
        present = count > 0
        if op == "sum":
            val = np.add.reduceat(np.where(p, v, 0.0), starts, axis=1)
        elif op == "count":
            val = count
        elif op == "group":
            val = np.ones_like(count)
        elif op == "avg":
            val = np.add.reduceat(np.where(p, v, 0.0), starts, axis=1) / count
        elif op in ("min", "max"):
            fill = np.inf if op == "min" else -np.inf
            ufunc = np.fmin if op == "min" else np.fmax
            val = ufunc.reduceat(np.where(p, v, fill), starts, axis=1)
            nonnan = np.add.reduceat((p & ~np.isnan(v)).astype(np.float64), starts, axis=1)
            val = np.where(present & (nonnan == 0), np.nan, val)
        elif op in ("stddev", "stdvar"):
            mean = np.add.reduceat(np.where(p, v, 0.0), starts, axis=1) / count
            dev = np.where(p, v - np.repeat(mean, np.diff(np.r_[starts, len(order)]), axis=1), 0.0)
            var = np.add.reduceat(dev * dev, starts, axis=1) / count
            val = np.sqrt(var) if op == "stddev" else var
        else:
            raise PromQLError("bad_data", f"parse error: aggregation {op!r} is not supported")
        return Vector(out_labels, val, present).compact()

    def _groups(self, labels: list[Labels], by: bool, names: tuple[str, ...]) -> tuple[np.ndarray, list[Labels]]:
        # a cached selection's label list comes back as the same object: key on it first
        def by_members() -> tuple[np.ndarray, list[Labels]]:
            ids = tuple(map(id, labels))
            return self.shared.memo(("groups", ids, by, names), tuple(labels), lambda: self._compute_groups(labels, by, names))

        return self.labels.memo(("groups-list", id(labels), by, names), labels, by_members)

    def _compute_groups(self, labels: list[Labels], by: bool, names: tuple[str, ...]) -> tuple[np.ndarray, list[Labels]]:
        index: dict[tuple, int] = {}
        group_labels: list[Labels] = []
        keys = np.empty(len(labels), dtype=np.int64)
        wanted = tuple(sorted(set(names)))
        drop = set(names) | {"__name__"}
        if by:
            def group_key(lab: Labels) -> tuple:
                return tuple((k, lab[k]) for k in wanted if lab.get(k, "") != "")
        else:
            def group_key(lab: Labels) -> tuple:
                return tuple(sorted((k, v) for k, v in lab.items() if k not in drop))
        what = ("group", by, wanted)
        key_of = self.shared.label_key_of
        interned = self.shared.group_labels
        for i, lab in enumerate(labels):
            key = key_of(lab, what, group_key)
            g = index.get(key)
            if g is None:
                g = index[key] = len(group_labels)
                group_labels.append(interned(key))
            keys[i] = g
        return keys, group_labels

    def _topk(self, op: str, k: np.ndarray, x: Vector, keys: np.ndarray) -> Vector:
        """Per step and group, keep the k largest (smallest, first) samples; NaN ranks last."""
        steps, n = x.v.shape
        kk = np.where(np.isnan(k), 0, np.clip(k, -1, 1e9)).astype(np.int64)
        if op == "topk":
            score = np.where(x.p, np.where(np.isnan(x.v), np.inf, -x.v), np.inf)
        elif op == "bottomk":
            score = np.where(x.p, np.where(np.isnan(x.v), np.inf, x.v), np.inf)
        else:
            score = np.where(x.p, 0.0, np.inf)
        order_keys = np.argsort(keys, kind="stable")
        sk = keys[order_keys]
        starts = np.r_[True, sk[1:] != sk[:-1]]
        first_of_group = np.maximum.accumulate(np.where(starts, np.arange(n), 0))
        keep = np.zeros_like(x.p)
        for s in range(steps):
            # sort by (group, score) keeping the original order among ties
            order = np.lexsort((score[s, order_keys], sk))
            ranked = order_keys[order]
            rank = np.arange(n) - first_of_group
            sel = ranked[rank < kk[s]]
            keep[s, sel] = True
        return Vector(x.labels, x.v, keep & x.p).compact()

    def _quantile(self, q: np.ndarray, x: Vector, keys: np.ndarray, group_labels: list[Labels]) -> Vector:
        steps = x.v.shape[0]
        groups = np.unique(keys)
        out_v = np.full((steps, len(groups)), np.nan)
        out_p = np.zeros((steps, len(groups)), dtype=bool)
        for gi, g in enumerate(groups):
            idx = np.flatnonzero(keys == g)
            vals = np.where(x.p[:, idx], x.v[:, idx], np.nan)
            out_v[:, gi] = quantile_rows(vals, q)
            out_p[:, gi] = x.p[:, idx].any(axis=1)
        return Vector([group_labels[int(g)] for g in groups], out_v, out_p).compact()

    def _count_values(self, label: str, x: Vector, node: A.Aggregate, steps: int) -> Vector:
        if not re.fullmatch(r"[a-zA-Z_][a-zA-Z0-9_]*", label):
            raise PromQLError("execution", f"invalid label name {label!r}")
        if x.n == 0:
            return empty_vector(steps)
        keys, group_labels = self._groups(x.labels, node.by, node.labels)
        from .promql_format import format_value

        counts: dict[tuple, np.ndarray] = {}
        out_labels: dict[tuple, Labels] = {}
        for s in range(steps):
            for i in np.flatnonzero(x.p[s]):
                lab = dict(group_labels[int(keys[i])])
                lab[label] = format_value(float(x.v[s, i]))
                key = label_key(lab)
                if key not in counts:
                    counts[key] = np.zeros(steps)
                    out_labels[key] = lab
                counts[key][s] += 1
        if not counts:
            return empty_vector(steps)
        ks = list(counts)
        v = np.stack([counts[k] for k in ks], axis=1)
        return Vector([out_labels[k] for k in ks], v, v > 0)

    # ------------------------------------------------------------------ binary operators
    def binary(self, node: A.Binary, ctx: Context):
        lhs = self.ev(node.lhs, ctx)
        rhs = self.ev(node.rhs, ctx)
        op = node.op
        if isinstance(lhs, Scalar) and isinstance(rhs, Scalar):
            if op in COMPARISON:
                return Scalar(_compare(op, lhs.v, rhs.v).astype(np.float64))
            return Scalar(_arith(op, lhs.v, rhs.v))
        if isinstance(lhs, Vector) and isinstance(rhs, Scalar):
            return self._vector_scalar(op, lhs, rhs.v, node.bool_, swapped=False)
        if isinstance(lhs, Scalar) and isinstance(rhs, Vector):
            return self._vector_scalar(op, rhs, lhs.v, node.bool_, swapped=True)
        if not isinstance(lhs, Vector) or not isinstance(rhs, Vector):
            raise PromQLError("bad_data", "parse error: binary expression must contain only scalar and instant vector types")
        if op == "and" or op == "unless":
            return self._and_unless(op, lhs, rhs, node)
        if op == "or":
            return self._or(lhs, rhs, node)
        return self._vector_vector(op, lhs, rhs, node)

    def _vector_scalar(self, op: str, vec: Vector, s: np.ndarray, bool_: bool, swapped: bool) -> Vector:
        sv = s[:, None]
        if op in COMPARISON:
            cond = _compare(op, sv, vec.v) if swapped else _compare(op, vec.v, sv)
            if bool_:
                return Vector(self.labels.drop_names(vec.labels), cond.astype(np.float64), vec.p)
            return Vector(vec.labels, vec.v, vec.p & cond).compact()
        val = _arith(op, sv, vec.v) if swapped else _arith(op, vec.v, sv)
        return Vector(self.labels.drop_names(vec.labels), val, vec.p)

    def _signature(self, lab: Labels, on: bool, names: tuple[str, ...]) -> tuple:
        return self.shared.memo(("sig", id(lab), on, names), lab, lambda: self._compute_signature(lab, on, names))

    @staticmethod
    def _compute_signature(lab: Labels, on: bool, names: tuple[str, ...]) -> tuple:
        if on:
            return tuple((k, lab.get(k, "")) for k in sorted(names))
        drop = set(names)
        drop.add("__name__")
        return tuple(sorted((k, v) for k, v in lab.items() if k not in drop))

    def _plan(self, many: list[Labels], one: list[Labels], on: bool, names: tuple[str, ...], card: str, include: tuple[str, ...], drop: bool):  # noqa: ANN202
        """How two vectors match (static for given label lists): pairs, result labels, the checks to run.

        Returns (one-side duplicate groups, many indices, one indices, result labels,
        pair groups that need a per-step cardinality check, whether result labels repeat).
        """
        one_sigs: dict[tuple, list[int]] = {}
        what = ("sig", on, names)
        key_of = self.shared.label_key_of

        def signature(lab: Labels) -> tuple:
            return self._compute_signature(lab, on, names)

        for j, lab in enumerate(one):
            one_sigs.setdefault(key_of(lab, what, signature), []).append(j)
        pi, pj, psig = [], [], []
        for i, lab in enumerate(many):
            sig = key_of(lab, what, signature)
            for j in one_sigs.get(sig, ()):
                pi.append(i)
                pj.append(j)
                psig.append(sig)
        out_labels = [_result_metric(many[i], one[j], drop, card, on, names, include) for i, j in zip(pi, pj)]
        by_sig: dict[tuple, list[int]] = {}
        for c, sig in enumerate(psig):
            by_sig.setdefault(sig, []).append(c)
        checks: list[list[int]] = []
        for cs in by_sig.values():
            if len(cs) < 2:
                continue
            if card == "one-to-one":
                checks.append(cs)
            else:
                seen: dict[tuple, list[int]] = {}
                for c in cs:
                    seen.setdefault(label_key(out_labels[c]), []).append(c)
                checks.extend(g for g in seen.values() if len(g) > 1)
        keys = [label_key(lab) for lab in out_labels]
        merged = len(set(keys)) != len(keys)
        dups = [(sig, js) for sig, js in one_sigs.items() if len(js) > 1]
        return dups, np.asarray(pi, dtype=np.int64), np.asarray(pj, dtype=np.int64), out_labels, checks, merged

    def _and_unless(self, op: str, lhs: Vector, rhs: Vector, node: A.Binary) -> Vector:
        steps = lhs.v.shape[0]
        if lhs.n == 0:
            return lhs
        rsig: dict[tuple, np.ndarray] = {}
        for j, lab in enumerate(rhs.labels):
            sig = self._signature(lab, node.on, node.match_labels)
            have = rsig.get(sig)
            rsig[sig] = rhs.p[:, j] if have is None else (have | rhs.p[:, j])
        none = np.zeros(steps, dtype=bool)
        match = np.stack([rsig.get(self._signature(lab, node.on, node.match_labels), none) for lab in lhs.labels], axis=1)
        keep = lhs.p & (match if op == "and" else ~match)
        return Vector(lhs.labels, lhs.v, keep, lhs.t).compact()

    def _or(self, lhs: Vector, rhs: Vector, node: A.Binary) -> Vector:
        steps = lhs.v.shape[0]
        lsig: dict[tuple, np.ndarray] = {}
        for i, lab in enumerate(lhs.labels):
            sig = self._signature(lab, node.on, node.match_labels)
            have = lsig.get(sig)
            lsig[sig] = lhs.p[:, i] if have is None else (have | lhs.p[:, i])
        none = np.zeros(steps, dtype=bool)
        if rhs.n:
            covered = np.stack([lsig.get(self._signature(lab, node.on, node.match_labels), none) for lab in rhs.labels], axis=1)
            rp = rhs.p & ~covered
        else:
            rp = rhs.p
        labels = list(lhs.labels) + list(rhs.labels)
        return assemble(labels, np.concatenate([lhs.v, rhs.v], axis=1), np.concatenate([lhs.p, rp], axis=1))

    def _vector_vector(self, op: str, lhs: Vector, rhs: Vector, node: A.Binary) -> Vector:
        steps = lhs.v.shape[0]
        if lhs.n == 0 or rhs.n == 0:
            return empty_vector(steps)
        swapped = node.card == "one-to-many"
        many, one = (rhs, lhs) if swapped else (lhs, rhs)
        on, names = node.on, node.match_labels
        side = "left" if swapped else "right"
        drop = op in ARITHMETIC or node.bool_
        plan = self.shared.memo(
            ("vv", tuple(map(id, many.labels)), tuple(map(id, one.labels)), on, names, node.card, node.include, drop),
            (tuple(many.labels), tuple(one.labels)),
            lambda: self._plan(many.labels, one.labels, on, names, node.card, node.include, drop),
        )
        one_dups, I, J, out_labels, checks, merged = plan
        for sig, js in one_dups:
            if (one.p[:, js].sum(axis=1) > 1).any():
                a, b = js[0], js[1]
                matched = "{" + ", ".join(f'{k}="{v}"' for k, v in sig) + "}"
                raise PromQLError(
                    "execution",
                    f"found duplicate series for the match group {matched} on the {side} hand-side of the operation: "
                    f"[{format_labels(one.labels[b])}, {format_labels(one.labels[a])}];"
                    "many-to-many matching not allowed: matching labels must be unique on one side",
                )
        if len(I) == 0:
            return empty_vector(steps)
        present = many.p[:, I] & one.p[:, J]
        mv, ov = many.v[:, I], one.v[:, J]
        fl, fr = (ov, mv) if swapped else (mv, ov)
        if op in COMPARISON:
            cond = _compare(op, fl, fr)
            if node.bool_:
                value, keep = cond.astype(np.float64), present
            else:
                value, keep = fl, present & cond
        else:
            value, keep = _arith(op, fl, fr), present
        # cardinality checks, per step, as Prometheus does while it builds the result
        for cs in checks:
            if (keep[:, cs].sum(axis=1) > 1).any():
                if node.card == "one-to-one":
                    raise PromQLError("execution", "multiple matches for labels: many-to-one matching must be explicit (group_left/group_right)")
                raise PromQLError("execution", "multiple matches for labels: grouping labels must ensure unique matches")
        if not merged:
            return Vector(out_labels, value, keep).compact()
        return assemble(out_labels, value, keep)


def _group_order(keys: np.ndarray, group_labels: list[Labels]) -> tuple[np.ndarray, np.ndarray, list[Labels], bool]:
    """Column order that makes groups contiguous, each group's first position, and its labels."""
    order = np.argsort(keys, kind="stable")
    sk = keys[order]
    starts = np.flatnonzero(np.r_[True, sk[1:] != sk[:-1]])
    identity = len(starts) == len(keys) and bool((order == np.arange(len(keys))).all())
    return order, starts, [group_labels[int(sk[s])] for s in starts], identity


def _result_metric(many: Labels, one: Labels, drop: bool, card: str, on: bool, names: tuple[str, ...], include: tuple[str, ...]) -> Labels:
    """Prometheus' resultMetric: the labels of one binary-operation output series."""
    lab = dict(many)
    if drop:
        lab.pop("__name__", None)
    if card == "one-to-one":
        if on:
            lab = {k: v for k, v in lab.items() if k in names}
        else:
            for k in names:
                lab.pop(k, None)
    for k in include:
        v = one.get(k, "")
        if v:
            lab[k] = v
        else:
            lab.pop(k, None)
    return lab


def quantile_rows(vals: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Prometheus' quantile (linear interpolation at rank q*(n-1)) over each row's non-NaN values."""
    steps = vals.shape[0]
    srt = np.sort(vals, axis=1)  # NaN last
    n = (~np.isnan(vals)).sum(axis=1)
    out = np.full(steps, np.nan)
    qq = np.broadcast_to(q, (steps,))
    ok = n > 0
    rank = np.clip(qq, 0.0, 1.0) * (n - 1)
    lo = np.floor(rank).astype(np.int64)
    hi = np.minimum(lo + 1, np.maximum(n - 1, 0))
    lo = np.clip(lo, 0, max(vals.shape[1] - 1, 0))
    hi = np.clip(hi, 0, max(vals.shape[1] - 1, 0))
    if vals.shape[1]:
        rows = np.arange(steps)
        a, b = srt[rows, lo], srt[rows, hi]
        w = rank - np.floor(rank)
        out = np.where(ok, a + (b - a) * w, np.nan)
    out = np.where(ok & (qq < 0), -np.inf, out)
    out = np.where(ok & (qq > 1), np.inf, out)
    out = np.where(ok & np.isnan(qq), np.nan, out)
    return out
