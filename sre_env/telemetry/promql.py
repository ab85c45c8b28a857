"""PromQL over the simulated cluster's TSDB: instant and range queries, Prometheus' outputs.

``query``/``query_range`` never raise: a bad expression or an evaluation error
comes back as a :class:`QueryResult` with Prometheus' error type and message
(``bad_data: parse error: ...``), so the shell can print it like the real API.
The grammar is promql_parser's (Prometheus' own grammar, in Rust); evaluation is
ours (promql_engine, promql_functions), vectorised over steps and series.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import promql_ast as A
from .promql_ast import PromQLError, compile_expr, value_type
from .promql_engine import Context, Evaluator, format_labels
from .promql_format import format_time, format_value, json_time
from .promql_values import Matrix, Scalar, String, Vector
from .tsdb import TSDB

__all__ = ["QueryResult", "Series", "query", "query_range", "PromQLError", "MAX_POINTS"]

MAX_POINTS = 11000


@dataclass
class Series:
    labels: dict[str, str]
    #: unix timestamps and values of the points, oldest first
    times: list[float]
    values: list[float]


@dataclass
class QueryResult:
    """A query's outcome: ``result_type`` in vector/matrix/scalar/string, or an error."""

    result_type: str = ""
    series: list[Series] = field(default_factory=list)
    #: for scalar and string results: (unix time, value)
    scalar: tuple[float, Any] | None = None
    error_type: str = ""
    error: str = ""

    @property
    def ok(self) -> bool:
        return not self.error_type

    def to_json(self) -> dict[str, Any]:
        """The body of Prometheus' /api/v1/query and /api/v1/query_range responses."""
        if not self.ok:
            return {"status": "error", "errorType": self.error_type, "error": self.error}
        if self.result_type in ("scalar", "string"):
            assert self.scalar is not None
            t, v = self.scalar
            result: Any = [json_time(t), format_value(v) if self.result_type == "scalar" else v]
        elif self.result_type == "vector":
            result = [{"metric": s.labels, "value": [json_time(s.times[0]), format_value(s.values[0])]} for s in self.series]
        else:
            result = [{"metric": s.labels, "values": [[json_time(t), format_value(v)] for t, v in zip(s.times, s.values)]} for s in self.series]
        return {"status": "success", "data": {"resultType": self.result_type, "result": result}}

    def to_table(self) -> str:
        """promtool's human-readable output (``metric{labels} => value @[unix time]``)."""
        if not self.ok:
            return f"{self.error_type}: {self.error}\n"
        lines: list[str] = []
        if self.result_type in ("scalar", "string"):
            assert self.scalar is not None
            t, v = self.scalar
            shown = format_value(v) if self.result_type == "scalar" else v
            lines.append(f"{self.result_type}: {shown} @[{format_time(t)}]")
        elif self.result_type == "vector":
            for s in self.series:
                lines.append(f"{format_labels(s.labels)} => {format_value(s.values[0])} @[{format_time(s.times[0])}]")
        else:
            for s in self.series:
                lines.append(f"{format_labels(s.labels)} =>")
                lines.extend(f"{format_value(v)} @[{format_time(t)}]" for t, v in zip(s.times, s.values))
        return "".join(line + "\n" for line in lines)


def _failure(exc: PromQLError) -> QueryResult:
    return QueryResult(error_type=exc.error_type, error=exc.message)


def _order_hint(node: A.Node) -> str:
    while isinstance(node, A.Paren):
        node = node.expr
    if isinstance(node, A.Call) and node.func in ("sort", "sort_desc"):
        return node.func
    if isinstance(node, A.Aggregate) and node.op in ("topk", "bottomk"):
        return "sort_desc" if node.op == "topk" else "sort"
    return "labels"


def query(tsdb: TSDB, expr: str, time: float | None = None, *, evaluator: Evaluator | None = None) -> QueryResult:
    """Instant query at ``time`` (stored time, i.e. simulated seconds; default: the last scrape)."""
    try:
        node = compile_expr(expr)
        t = float(time) if time is not None else _latest(tsdb)
        ev = evaluator or Evaluator(tsdb)
        ctx = Context(np.array([t]), t, t)
        val = ev.evaluate(node, ctx)
        unix = t + tsdb.epoch
        if isinstance(val, Scalar):
            return QueryResult("scalar", scalar=(unix, float(val.v[0])))
        if isinstance(val, String):
            return QueryResult("string", scalar=(unix, val.value))
        if isinstance(val, Matrix):
            return QueryResult("matrix", series=_matrix_series(val, tsdb.epoch))
        out = []
        for i in np.flatnonzero(val.p[0]):
            out.append(Series(dict(val.labels[i]), [unix], [float(val.v[0, i])]))
        hint = _order_hint(node)
        if hint == "labels":
            out.sort(key=lambda s: _sort_key(s.labels))
        else:
            out.sort(key=lambda s: (_value_key(s.values[0], hint == "sort_desc"), _sort_key(s.labels)))
        return QueryResult("vector", series=out)
    except PromQLError as exc:
        return _failure(exc)


def query_range(tsdb: TSDB, expr: str, start: float, end: float, step: float, *, evaluator: Evaluator | None = None) -> QueryResult:
    """Range query over [start, end] (stored times) every ``step`` seconds."""
    try:
        if step <= 0:
            raise PromQLError("bad_data", "zero or negative query resolution step widths are not accepted. Try a positive integer")
        if end < start:
            raise PromQLError("bad_data", "end timestamp must not be before start time")
        n = int(np.floor((end - start) / step + 1e-9)) + 1
        if n > MAX_POINTS:
            raise PromQLError("bad_data", "exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query resolution (?step=XX)")
        node = compile_expr(expr)
        kind = value_type(node)
        if kind not in ("vector", "scalar"):
            shown = "range vector" if kind == "matrix" else kind
            raise PromQLError("bad_data", f'invalid expression type "{shown}" for range query, must be Scalar or instant Vector')
        ts = start + np.arange(n) * step
        ev = evaluator or Evaluator(tsdb)
        val = ev.evaluate(node, Context(ts, start, end))
        unix = ts + tsdb.epoch
        if isinstance(val, Scalar):
            return QueryResult("matrix", series=[Series({}, unix.tolist(), val.v.tolist())])
        assert isinstance(val, Vector)
        out = []
        for i in range(val.n):
            mask = val.p[:, i]
            if mask.any():
                out.append(Series(dict(val.labels[i]), unix[mask].tolist(), val.v[mask, i].tolist()))
        out.sort(key=lambda s: _sort_key(s.labels))
        return QueryResult("matrix", series=out)
    except PromQLError as exc:
        return _failure(exc)


def _matrix_series(m: Matrix, epoch: float) -> list[Series]:
    out = []
    lo, hi = int(m.lo[0]), int(m.hi[0])
    for i, lab in enumerate(m.labels):
        col = m.v[lo:hi, i]
        ok = ~np.isnan(col)
        if ok.any():
            out.append(Series(dict(lab), (m.times[lo:hi][ok] + epoch).tolist(), col[ok].tolist()))
    out.sort(key=lambda s: _sort_key(s.labels))
    return out


def _latest(tsdb: TSDB) -> float:
    times = tsdb.times()
    return float(times[-1]) if len(times) else 0.0


def _sort_key(labels: dict[str, str]) -> tuple:
    return (labels.get("__name__", ""), sorted((k, v) for k, v in labels.items() if k != "__name__"))


def _value_key(v: float, desc: bool) -> float:
    if v != v:
        return float("inf")
    return -v if desc else v
