"""Compiles promql_parser's AST into small immutable tuples the evaluator walks.

Why: the Rust parser's Python objects rebuild their children on every attribute
access, so walking them repeatedly (alert rules are evaluated on every scrape) is
slow, and they cannot key caches. A compiled tree is parsed once per expression
string and reused; it also fixes the value type of every node up front.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Union

import promql_parser as pp

__all__ = ["Node", "compile_expr", "PromQLError", "value_type", "ARITHMETIC", "COMPARISON", "SET_OPS"]


class PromQLError(Exception):
    """An error with Prometheus' API error type ("bad_data", "execution") and message."""

    def __init__(self, error_type: str, message: str) -> None:
        super().__init__(message)
        self.error_type = error_type
        self.message = message

    def __str__(self) -> str:
        return f"{self.error_type}: {self.message}"


ARITHMETIC = frozenset({"+", "-", "*", "/", "%", "^", "atan2"})
COMPARISON = frozenset({"==", "!=", ">", "<", ">=", "<="})
SET_OPS = frozenset({"and", "or", "unless"})

_MATCH_OPS = {"MatchOp.Equal": "=", "MatchOp.NotEqual": "!=", "MatchOp.Re": "=~", "MatchOp.NotRe": "!~"}


@dataclass(frozen=True)
class Num:
    value: float


@dataclass(frozen=True)
class Str:
    value: str


@dataclass(frozen=True)
class At:
    """``@`` modifier: kind is "t" (unix time ``t``), "start" or "end"."""

    kind: str
    t: float = 0.0


@dataclass(frozen=True)
class Selector:
    #: alternatives of matcher sets (more than one with ``{a="x" or b="y"}``)
    matchers: tuple[tuple[tuple[str, str, str], ...], ...]
    offset: float
    at: At | None


@dataclass(frozen=True)
class MatrixSel:
    selector: Selector
    range_s: float


@dataclass(frozen=True)
class Subquery:
    expr: "Node"
    range_s: float
    step_s: float | None
    offset: float
    at: At | None


@dataclass(frozen=True)
class Call:
    func: str
    args: tuple["Node", ...]


@dataclass(frozen=True)
class Aggregate:
    op: str
    expr: "Node"
    param: "Node | None"
    #: True: ``by``; False: ``without``
    by: bool
    labels: tuple[str, ...]


@dataclass(frozen=True)
class Binary:
    op: str
    lhs: "Node"
    rhs: "Node"
    bool_: bool
    #: "one-to-one", "many-to-one", "one-to-many", "many-to-many"
    card: str
    #: True: ``on(...)``; False: ``ignoring(...)`` (or no clause)
    on: bool
    match_labels: tuple[str, ...]
    include: tuple[str, ...]


@dataclass(frozen=True)
class Neg:
    expr: "Node"


@dataclass(frozen=True)
class Paren:
    expr: "Node"


Node = Union[Num, Str, Selector, MatrixSel, Subquery, Call, Aggregate, Binary, Neg, Paren]


def _seconds(td: Any) -> float:
    return 0.0 if td is None else float(td.total_seconds())


def _at(at: Any) -> At | None:
    if at is None:
        return None
    kind = str(at.type)
    if kind.endswith("Start"):
        return At("start")
    if kind.endswith("End"):
        return At("end")
    return At("t", float(at.at.timestamp()))


def _matchers(ms: Any) -> tuple[tuple[str, str, str], ...]:
    return tuple((m.name, _MATCH_OPS[str(m.op)], m.value) for m in ms)


def _selector(vs: Any) -> Selector:
    ms = vs.matchers
    alternatives = [_matchers(group) for group in (ms.or_matchers or ())] or [_matchers(ms.matchers)]
    name = vs.name
    if name:
        alternatives = [(("__name__", "=", name),) + alt for alt in alternatives]
    return Selector(tuple(alternatives), _seconds(vs.offset), _at(vs.at))


def _convert(e: Any) -> Node:
    kind = type(e).__name__
    if kind == "NumberLiteral":
        return Num(float(e.val))
    if kind == "StringLiteral":
        return Str(e.val)
    if kind == "VectorSelector":
        return _selector(e)
    if kind == "MatrixSelector":
        return MatrixSel(_selector(e.vector_selector), _seconds(e.range))
    if kind == "SubqueryExpr":
        return Subquery(_convert(e.expr), _seconds(e.range), _seconds(e.step) if e.step is not None else None, _seconds(e.offset), _at(e.at))
    if kind == "Call":
        return Call(e.func.name, tuple(_convert(a) for a in e.args))
    if kind == "ParenExpr":
        return Paren(_convert(e.expr))
    if kind == "UnaryExpr":
        return Neg(_convert(e.expr))
    if kind == "AggregateExpr":
        mod = e.modifier
        by, labels = True, ()
        if mod is not None:
            by = str(mod.type).endswith("By")
            labels = tuple(mod.labels)
        param = _convert(e.param) if e.param is not None else None
        return Aggregate(str(e.op), _convert(e.expr), param, by, labels)
    if kind == "BinaryExpr":
        op = str(e.op)
        mod = e.modifier
        bool_, card, on, labels, include = False, "one-to-one", False, (), ()
        if mod is not None:
            bool_ = bool(mod.return_bool)
            card = {"OneToOne": "one-to-one", "ManyToOne": "many-to-one", "OneToMany": "one-to-many", "ManyToMany": "many-to-many"}[str(mod.card).rsplit(".", 1)[-1]]
            if mod.matching is not None:
                on = str(mod.matching.type).endswith("Include")
                labels = tuple(mod.matching.labels)
            include = tuple(mod.group_labels or ())
        if op in SET_OPS:
            card = "many-to-many"
        return Binary(op, _convert(e.lhs), _convert(e.rhs), bool_, card, on, labels, include)
    raise PromQLError("bad_data", f"unsupported expression type {kind}")


@lru_cache(maxsize=512)
@functools.lru_cache(maxsize=1024)
def compile_expr(expr: str) -> Node:
    """Parse and compile; parse errors become Prometheus' ``bad_data`` errors.

    Cached: nodes are frozen, and alert rules are compiled again in every restored world.
    """
    if _nesting_bound(expr) > MAX_NESTING:
        # the parser's time grows with the square of the nesting, and the tree is walked recursively:
        # refuse before parsing (Prometheus itself has no such limit; no real query comes near it)
        raise PromQLError("bad_data", f"parse error: query too deeply nested: more than {MAX_NESTING} operators and parentheses")
    try:
        tree = pp.parse(expr)
    except (ValueError, TypeError) as exc:
        raise PromQLError("bad_data", f"parse error: {exc}") from None
    try:
        return _convert(tree)
    except RecursionError:
        raise PromQLError("bad_data", "parse error: query too deeply nested") from None


#: at most this many operators and parentheses in one query (an upper bound of its nesting)
MAX_NESTING = 500
_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'|`[^`]*`')
_NESTING = re.compile(r"[-+*/%^(<>]|[=!]=|\b(?:and|or|unless|atan2)\b")


def _nesting_bound(expr: str) -> int:
    """Operators and opening parentheses outside string literals: what the parse tree can nest."""
    return len(_NESTING.findall(_STRINGS.sub('""', expr)))


_FUNC_RETURNS_SCALAR = frozenset({"time", "scalar", "pi"})


def value_type(node: Node) -> str:
    """Static type of a node: "scalar", "vector", "matrix" or "string"."""
    if isinstance(node, Num):
        return "scalar"
    if isinstance(node, Str):
        return "string"
    if isinstance(node, Selector):
        return "vector"
    if isinstance(node, (MatrixSel, Subquery)):
        return "matrix"
    if isinstance(node, (Paren, Neg)):
        return value_type(node.expr)
    if isinstance(node, Call):
        return "scalar" if node.func in _FUNC_RETURNS_SCALAR else "vector"
    if isinstance(node, Aggregate):
        return "vector"
    if isinstance(node, Binary):
        return "scalar" if value_type(node.lhs) == "scalar" and value_type(node.rhs) == "scalar" else "vector"
    return "vector"
