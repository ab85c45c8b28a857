"""A LogQL subset over the simulated cluster's logs, printed like ``logcli query``.

No maintained Python LogQL parser exists (PyPI has Loki clients and handlers,
not a grammar), so this is a small hand-written lexer and recursive-descent
parser for the part of LogQL an on-call engineer types:

* stream selectors ``{namespace="hotel-reservation", app=~"geo.*"}`` over the
  labels ``namespace``, ``pod``, ``container``, ``app`` (``io.kompose.service``),
  ``node`` and ``stream="stdout"``;
* line filters ``|= != |~ !~`` (chained, ``or`` alternatives);
* parsers ``| json`` (with optional ``name="path"`` params), ``| logfmt``,
  ``| pattern "<ts> <level> <caller> > <msg>"`` and ``| regexp``;
* label filters with ``= != =~ !~ > >= < <= ==`` on strings, numbers and
  durations, joined by ``and``/``or``/``,``; ``| line_format "{{.msg}}"``,
  ``| drop``/``| keep``, ``| unwrap``;
* range aggregations ``count_over_time rate bytes_over_time bytes_rate`` and,
  over an unwrapped label, ``sum/avg/min/max_over_time`` and
  ``quantile_over_time``; vector aggregations ``sum avg min max count topk
  bottomk`` with ``by``/``without``; arithmetic and comparisons with scalars or
  between vectors with identical labels.

Syntax errors read like Loki's (``parse error at line 1, col 12: syntax error:
unexpected IDENTIFIER, expecting STRING``). Nothing here raises: every entry
point returns text and an exit code.

Lines come from :mod:`sre_env.telemetry.lazylogs`; each carries a weight (the
requests a representative line stands for), so ``count_over_time`` and
``rate`` agree with the request metrics while log queries show a bounded set
of representative lines.
"""

from __future__ import annotations

import bisect
import functools
import json
import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Union

from sre_env.kube.timefmt import EPOCH, iso

from sre_env.kube.regexp import RegexError, compile_re2

from .lazylogs import LogEntry, ServiceSampler, container_entries

if TYPE_CHECKING:
    from sre_env.sim.kernel.world import World

__all__ = ["LogQLError", "parse", "run_query", "parse_duration", "StreamLabels", "stream_labels"]

_EPOCH_S = EPOCH.timestamp()


class LogQLError(Exception):
    """A query Loki would reject with HTTP 400; ``str()`` is Loki's message."""


# =========================================================================== lexer

_PUNCT = ("|=", "|~", "!=", "!~", "=~", "==", ">=", "<=", "{", "}", "(", ")", ",", "=", "|", ">", "<", "+", "-", "*", "/", "%", "^")
_DUR_RE = re.compile(r"(?:\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h|d|w|y))+")
_NUM_RE = re.compile(r"\d+(?:\.\d+)?(?:[eE][+-]?\d+)?")
_IDENT_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_.]*")
_BYTES_RE = re.compile(r"\d+(?:\.\d+)?(?:[KMGTPE]i?B|B|[kmgtpe]i?b|b)\b")


@dataclass(frozen=True)
class Token:
    kind: str  # STRING NUMBER DURATION BYTES IDENTIFIER RANGE $end, or the punctuation itself
    value: str
    col: int


def _lex(src: str) -> list[Token]:
    out: list[Token] = []
    i, n = 0, len(src)
    while i < n:
        ch = src[i]
        if ch in " \t\r\n":
            i += 1
            continue
        col = i + 1
        if ch == '"':
            j, buf = i + 1, []
            while j < n and src[j] != '"':
                if src[j] == "\\" and j + 1 < n:
                    nxt = src[j + 1]
                    buf.append({"n": "\n", "t": "\t", "r": "\r", '"': '"', "\\": "\\"}.get(nxt, "\\" + nxt))
                    j += 2
                    continue
                buf.append(src[j])
                j += 1
            if j >= n:
                raise LogQLError(f"parse error at line 1, col {col}: literal not terminated")
            out.append(Token("STRING", "".join(buf), col))
            i = j + 1
            continue
        if ch == "`":
            j = src.find("`", i + 1)
            if j < 0:
                raise LogQLError(f"parse error at line 1, col {col}: literal not terminated")
            out.append(Token("STRING", src[i + 1 : j], col))
            i = j + 1
            continue
        if ch == "[":
            j = src.find("]", i)
            body = src[i + 1 : j].strip() if j > 0 else ""
            if j < 0 or not _DUR_RE.fullmatch(body):
                raise LogQLError(f"parse error at line 1, col {col}: syntax error: unexpected [")
            out.append(Token("RANGE", body, col))
            i = j + 1
            continue
        if ch.isdigit():
            m = _BYTES_RE.match(src, i)
            d = _DUR_RE.match(src, i)
            if d and (not m or d.end() >= m.end()):
                out.append(Token("DURATION", d.group(0), col))
                i = d.end()
                continue
            if m:
                out.append(Token("BYTES", m.group(0), col))
                i = m.end()
                continue
            m = _NUM_RE.match(src, i)
            out.append(Token("NUMBER", m.group(0), col))  # type: ignore[union-attr]
            i = m.end()  # type: ignore[union-attr]
            continue
        m = _IDENT_RE.match(src, i)
        if m:
            out.append(Token("IDENTIFIER", m.group(0), col))
            i = m.end()
            continue
        for p in _PUNCT:
            if src.startswith(p, i):
                out.append(Token(p, p, col))
                i += len(p)
                break
        else:
            raise LogQLError(f"parse error at line 1, col {col}: syntax error: unexpected {ch}")
    out.append(Token("$end", "", n + 1))
    return out


def parse_duration(text: str) -> float | None:
    """Seconds of a Go/Prometheus duration (``1h30m``, ``500ms``, ``5m``); None if malformed."""
    m = re.fullmatch(r"((?:\d+(?:\.\d+)?(?:ns|us|µs|ms|s|m|h|d|w|y))+)", text.strip())
    if not m:
        return None
    unit = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0, "y": 31536000.0}
    return sum(float(v) * unit[u] for v, u in re.findall(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h|d|w|y)", text))


def _parse_bytes(text: str) -> float | None:
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([KMGTPEkmgtpe]?)(i?)([Bb])", text.strip())
    if not m:
        return None
    power = "KMGTPE".find(m.group(2).upper()) + 1 if m.group(2) else 0
    return float(m.group(1)) * ((1024 if m.group(3) else 1000) ** power)


# =========================================================================== AST


@dataclass(frozen=True)
class Matcher:
    name: str
    op: str  # = != =~ !~
    value: str

    def matches(self, labels: dict[str, str]) -> bool:
        v = labels.get(self.name, "")
        if self.op == "=":
            return v == self.value
        if self.op == "!=":
            return v != self.value
        hit = _regex(self.value).fullmatch(v) is not None
        return hit if self.op == "=~" else not hit


@dataclass(frozen=True)
class LineFilter:
    op: str  # |= != |~ !~
    values: tuple[str, ...]


@dataclass(frozen=True)
class ParserStage:
    kind: str  # json logfmt pattern regexp
    arg: str = ""
    params: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Cmp:
    name: str
    op: str
    value: str
    kind: str  # STRING NUMBER DURATION BYTES


@dataclass(frozen=True)
class BoolExpr:
    op: str  # and | or
    left: "LabelExpr"
    right: "LabelExpr"


LabelExpr = Union[Cmp, BoolExpr]


@dataclass(frozen=True)
class LabelFilterStage:
    expr: LabelExpr


@dataclass(frozen=True)
class LineFormat:
    template: str


@dataclass(frozen=True)
class LabelSet:
    kind: str  # drop | keep
    names: tuple[str, ...]


@dataclass(frozen=True)
class Unwrap:
    label: str
    conv: str = ""  # "" | duration | duration_seconds | bytes


Stage = Union[LineFilter, ParserStage, LabelFilterStage, LineFormat, LabelSet, Unwrap]


@dataclass(frozen=True)
class LogQuery:
    matchers: tuple[Matcher, ...]
    stages: tuple[Stage, ...] = ()


@dataclass(frozen=True)
class RangeAgg:
    fn: str
    query: LogQuery
    range_s: float
    param: float | None = None
    offset_s: float = 0.0


@dataclass(frozen=True)
class VectorAgg:
    op: str
    inner: "MetricExpr"
    grouping: tuple[str, tuple[str, ...]] | None = None  # ("by"|"without", labels)
    param: float | None = None


@dataclass(frozen=True)
class Scalar:
    value: float


@dataclass(frozen=True)
class BinOp:
    op: str
    left: "MetricExpr"
    right: "MetricExpr"
    bool_mod: bool = False


MetricExpr = Union[RangeAgg, VectorAgg, Scalar, BinOp]
Expr = Union[LogQuery, MetricExpr]

_RANGE_FNS = frozenset({"count_over_time", "rate", "bytes_over_time", "bytes_rate", "sum_over_time", "avg_over_time", "min_over_time", "max_over_time", "quantile_over_time", "first_over_time", "last_over_time", "stddev_over_time", "absent_over_time", "rate_counter"})
_UNWRAP_FNS = frozenset({"sum_over_time", "avg_over_time", "min_over_time", "max_over_time", "quantile_over_time", "first_over_time", "last_over_time", "stddev_over_time", "rate_counter"})
_SUPPORTED_RANGE = frozenset({"count_over_time", "rate", "bytes_over_time", "bytes_rate", "sum_over_time", "avg_over_time", "min_over_time", "max_over_time", "quantile_over_time", "first_over_time", "last_over_time", "absent_over_time"})
_VECTOR_OPS = frozenset({"sum", "avg", "min", "max", "count", "topk", "bottomk", "stddev", "stdvar"})
_PARSERS = frozenset({"json", "logfmt", "pattern", "regexp"})
_BIN_PREC = {"or": 1, "and": 2, "unless": 2, "==": 3, "!=": 3, ">": 3, "<": 3, ">=": 3, "<=": 3, "+": 4, "-": 4, "*": 5, "/": 5, "%": 5, "^": 6}


# =========================================================================== parser


class _Parser:
    def __init__(self, src: str) -> None:
        self.toks = _lex(src)
        self.i = 0

    # -- helpers
    @property
    def tok(self) -> Token:
        return self.toks[self.i]

    def _next(self) -> Token:
        t = self.toks[self.i]
        self.i = min(self.i + 1, len(self.toks) - 1)
        return t

    def _err(self, expecting: str = "") -> LogQLError:
        t = self.tok
        what = t.kind if t.kind in ("STRING", "NUMBER", "DURATION", "BYTES", "IDENTIFIER", "RANGE", "$end") else t.kind
        msg = f"parse error at line 1, col {t.col}: syntax error: unexpected {what}"
        if expecting:
            msg += f", expecting {expecting}"
        return LogQLError(msg)

    def _expect(self, kind: str, expecting: str | None = None) -> Token:
        if self.tok.kind != kind:
            raise self._err(expecting or kind)
        return self._next()

    def _is_ident(self, *names: str) -> bool:
        return self.tok.kind == "IDENTIFIER" and (not names or self.tok.value in names)

    # -- grammar
    def parse(self) -> Expr:
        if self.tok.kind == "$end":
            raise LogQLError("parse error : syntax error: unexpected $end")
        if self.tok.kind == "{":
            q = self.log_query()
            if self.tok.kind != "$end":
                raise self._err("!= or !~ or |~ or |=")
            return q
        e = self.metric()
        if self.tok.kind != "$end":
            raise self._err()
        return e

    def metric(self, min_prec: int = 1) -> MetricExpr:
        """Precedence climbing over binary operators (``^`` is right-associative)."""
        left = self.metric_primary()
        while True:
            op = self.tok.value if self.tok.kind == "IDENTIFIER" and self.tok.value in ("and", "or", "unless") else self.tok.kind
            prec = _BIN_PREC.get(op)
            if prec is None or prec < min_prec:
                return left
            self._next()
            bool_mod = False
            if self._is_ident("bool"):
                self._next()
                bool_mod = True
            right = self.metric(prec if op == "^" else prec + 1)
            left = BinOp(op, left, right, bool_mod)

    def metric_primary(self) -> MetricExpr:
        t = self.tok
        if t.kind == "NUMBER":
            self._next()
            return Scalar(float(t.value))
        if t.kind == "-" and self.toks[self.i + 1].kind == "NUMBER":
            self._next()
            return Scalar(-float(self._next().value))
        if t.kind == "(":
            self._next()
            e = self.metric()
            self._expect(")")
            return e
        if t.kind == "{":
            # a log query where a metric is needed: Loki rejects it at the selector's end
            self.log_query()
            raise self._err("RANGE")
        if t.kind == "IDENTIFIER" and t.value in _RANGE_FNS:
            return self.range_agg()
        if t.kind == "IDENTIFIER" and t.value in _VECTOR_OPS:
            return self.vector_agg()
        if t.kind == "IDENTIFIER" and t.value == "vector":
            self._next()
            self._expect("(")
            v = self._expect("NUMBER")
            self._expect(")")
            return Scalar(float(v.value))
        raise self._err()

    def range_agg(self) -> RangeAgg:
        fn_tok = self._next()
        fn = fn_tok.value
        if fn not in _SUPPORTED_RANGE:
            raise LogQLError(f"parse error at line 1, col {fn_tok.col}: {fn} is not supported by this LogQL subset")
        self._expect("(", "(")
        param = None
        if fn == "quantile_over_time":
            param = float(self._expect("NUMBER").value)
            self._expect(",")
        if self.tok.kind == "(":
            self._next()
            q = self.log_query()
            self._expect(")")
        else:
            q = self.log_query()
        rng = self._expect("RANGE")
        offset = 0.0
        if self._is_ident("offset"):
            self._next()
            offset = parse_duration(self._expect("DURATION").value) or 0.0
        self._expect(")")
        has_unwrap = any(isinstance(s, Unwrap) for s in q.stages)
        if fn in _UNWRAP_FNS and not has_unwrap:
            raise LogQLError(f"parse error : invalid aggregation {fn} without unwrap")
        if fn not in _UNWRAP_FNS and has_unwrap:
            raise LogQLError(f"parse error : invalid aggregation {fn} with unwrap")
        return RangeAgg(fn, q, parse_duration(rng.value) or 0.0, param, offset)

    def _grouping(self) -> tuple[str, tuple[str, ...]]:
        kind = self._next().value
        self._expect("(", "(")
        names: list[str] = []
        while self.tok.kind != ")":
            names.append(self._expect("IDENTIFIER").value)
            if self.tok.kind == ",":
                self._next()
            elif self.tok.kind != ")":
                raise self._err(", or )")
        self._next()
        return kind, tuple(names)

    def vector_agg(self) -> VectorAgg:
        op = self._next().value
        grouping = self._grouping() if self._is_ident("by", "without") else None
        self._expect("(", "(")
        param = None
        if op in ("topk", "bottomk"):
            param = float(self._expect("NUMBER").value)
            self._expect(",")
        inner = self.metric()
        self._expect(")")
        if grouping is None and self._is_ident("by", "without"):
            grouping = self._grouping()
        return VectorAgg(op, inner, grouping, param)

    def log_query(self) -> LogQuery:
        self._expect("{", "{")
        matchers: list[Matcher] = []
        while True:
            name = self._expect("IDENTIFIER").value
            if self.tok.kind not in ("=", "!=", "=~", "!~"):
                raise self._err("= or != or =~ or !~")
            op = self._next().kind
            val = self._expect("STRING")
            if op in ("=~", "!~"):
                _check_regex(val.value, val.col)
            matchers.append(Matcher(name, op, val.value))
            if self.tok.kind == ",":
                self._next()
                continue
            if self.tok.kind == "}":
                self._next()
                break
            raise self._err(", or }")
        stages: list[Stage] = []
        while True:
            k = self.tok.kind
            if k in ("|=", "!=", "|~", "!~"):
                self._next()
                vals = [self._expect("STRING").value]
                while self._is_ident("or"):
                    self._next()
                    vals.append(self._expect("STRING").value)
                if k in ("|~", "!~"):
                    for v in vals:
                        _check_regex(v, self.toks[self.i - 1].col)
                stages.append(LineFilter(k, tuple(vals)))
            elif k == "|":
                self._next()
                stages.append(self.stage())
            else:
                break
        return LogQuery(tuple(matchers), tuple(stages))

    def stage(self) -> Stage:
        t = self.tok
        if t.kind == "(":
            return LabelFilterStage(self.label_expr())
        if t.kind != "IDENTIFIER":
            raise self._err("IDENTIFIER")
        nxt = self.toks[self.i + 1].kind
        if t.value in _PARSERS and nxt not in ("=", "!=", "=~", "!~", ">", ">=", "<", "<=", "=="):
            self._next()
            if t.value == "json":
                return ParserStage("json", params=self._json_params())
            if t.value == "logfmt":
                while self.tok.kind == "-" or (self.tok.kind == "IDENTIFIER" and self.tok.value.startswith("--")):
                    self._next()
                    if self._is_ident("strict", "keep_empty"):
                        self._next()
                return ParserStage("logfmt", params=self._json_params())
            arg = self._expect("STRING").value
            if t.value == "regexp":
                _check_regex(arg, t.col)
            return ParserStage(t.value, arg)
        if t.value == "line_format" and nxt == "STRING":
            self._next()
            return LineFormat(self._next().value)
        if t.value in ("drop", "keep") and nxt not in ("=", "!=", "=~", "!~", ">", ">=", "<", "<=", "=="):
            self._next()
            names = [self._expect("IDENTIFIER").value]
            while self.tok.kind == ",":
                self._next()
                names.append(self._expect("IDENTIFIER").value)
            return LabelSet(t.value, tuple(names))
        if t.value == "decolorize":
            self._next()
            return LabelSet("keep_all", ())
        if t.value == "unwrap":
            self._next()
            if self._is_ident("duration", "duration_seconds", "bytes") and self.toks[self.i + 1].kind == "(":
                conv = self._next().value
                self._next()
                label = self._expect("IDENTIFIER").value
                self._expect(")")
                return Unwrap(label, conv)
            return Unwrap(self._expect("IDENTIFIER").value)
        if t.value == "label_format":
            raise LogQLError(f"parse error at line 1, col {t.col}: label_format is not supported by this LogQL subset")
        if t.value == "line_format":
            self._next()
            raise self._err("STRING")
        return LabelFilterStage(self.label_expr())

    def _json_params(self) -> tuple[tuple[str, str], ...]:
        params: list[tuple[str, str]] = []
        while self.tok.kind == "IDENTIFIER" and self.toks[self.i + 1].kind in ("=", ",", "|", "$end", ")", "RANGE"):
            name = self._next().value
            path = name
            if self.tok.kind == "=":
                self._next()
                path = self._expect("STRING").value
            params.append((name, path))
            if self.tok.kind == ",":
                self._next()
            else:
                break
        return tuple(params)

    def label_expr(self) -> LabelExpr:
        left = self._label_and()
        while self._is_ident("or"):
            self._next()
            left = BoolExpr("or", left, self._label_and())
        return left

    def _label_and(self) -> LabelExpr:
        left = self._label_atom()
        while self._is_ident("and") or self.tok.kind == ",":
            self._next()
            left = BoolExpr("and", left, self._label_atom())
        return left

    def _label_atom(self) -> LabelExpr:
        if self.tok.kind == "(":
            self._next()
            e = self.label_expr()
            self._expect(")")
            return e
        name = self._expect("IDENTIFIER").value
        if self.tok.kind not in ("=", "!=", "=~", "!~", ">", ">=", "<", "<=", "=="):
            raise self._err("= or != or =~ or !~ or > or >= or < or <= or ==")
        op = self._next().kind
        neg = False
        if self.tok.kind == "-":
            self._next()
            neg = True
        v = self.tok
        if v.kind not in ("STRING", "NUMBER", "DURATION", "BYTES"):
            raise self._err("STRING or NUMBER or DURATION or BYTES")
        self._next()
        if op in ("=~", "!~"):
            if v.kind != "STRING":
                raise LogQLError(f"parse error at line 1, col {v.col}: syntax error: unexpected {v.kind}, expecting STRING")
            _check_regex(v.value, v.col)
        if v.kind == "STRING" and op in (">", ">=", "<", "<="):
            raise LogQLError(f"parse error at line 1, col {v.col}: syntax error: unexpected STRING, expecting NUMBER or DURATION or BYTES")
        return Cmp(name, op, ("-" if neg else "") + v.value, v.kind)


def _regex(pattern: str) -> Any:
    # Loki matches with Go's regexp (RE2): same syntax, linear time (sre_env.kube.regexp)
    return compile_re2(pattern)


def _check_regex(pattern: str, col: int) -> None:
    try:
        _regex(pattern)
    except RegexError as exc:
        raise LogQLError(f"parse error at line 1, col {col}: error parsing regexp: {exc.msg}") from None


def parse(query: str) -> Expr:
    """The AST of ``query``; raises :class:`LogQLError` with Loki's message."""
    expr = _Parser(query).parse()
    for q in _log_queries(expr):
        if not any(m.op in ("=", "=~") and not m.matches({}) for m in q.matchers):
            raise LogQLError(
                'parse error : queries require at least one regexp or equality matcher that does not have an empty-compatible value. '
                'For instance, app=~".*" does not meet this requirement, but app=~".+" will'
            )
    return expr


def _log_queries(expr: Expr) -> list[LogQuery]:
    if isinstance(expr, LogQuery):
        return [expr]
    if isinstance(expr, RangeAgg):
        return [expr.query]
    if isinstance(expr, VectorAgg):
        return _log_queries(expr.inner)
    if isinstance(expr, BinOp):
        return _log_queries(expr.left) + _log_queries(expr.right)
    return []


# =========================================================================== streams and pipeline

StreamLabels = dict[str, str]


def stream_labels(pod: dict[str, Any], container: str) -> StreamLabels:
    """The labels promtail's kubernetes config attaches to a container's stream."""
    meta = pod["metadata"]
    labels = meta.get("labels") or {}
    out = {"namespace": meta["namespace"], "pod": meta["name"], "container": container, "stream": "stdout"}
    app = labels.get("io.kompose.service") or labels.get("app") or labels.get("app.kubernetes.io/name") or labels.get("k8s-app")
    if app:
        out["app"] = app
    node = pod.get("spec", {}).get("nodeName")
    if node:
        out["node"] = node
    return out


def _select(world: "World", matchers: tuple[Matcher, ...]) -> list[tuple[StreamLabels, dict[str, Any], str]]:
    out = []
    for pod in world.store.iter("Pod"):
        rt = world.runtimes.get(pod["metadata"]["uid"])
        if rt is None:
            continue
        for spec in pod["spec"].get("containers") or ():
            name = spec.get("name", "")
            if name not in rt.containers:
                continue
            labels = stream_labels(pod, name)
            if all(m.matches(labels) for m in matchers):
                out.append((labels, pod, name))
    out.sort(key=lambda x: _label_key(x[0]))
    return out


def _label_key(labels: StreamLabels) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(labels.items()))


def _sanitize(name: str) -> str:
    s = re.sub(r"[^A-Za-z0-9_]", "_", name)
    if s and s[0].isdigit():
        s = "_" + s
    return s


def _flatten(prefix: str, value: Any, out: dict[str, str]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(f"{prefix}_{_sanitize(k)}" if prefix else _sanitize(k), v, out)
    elif isinstance(value, list):
        return  # Loki's json parser skips arrays unless a param addresses them
    elif value is None:
        out[prefix] = ""
    elif isinstance(value, bool):
        out[prefix] = "true" if value else "false"
    elif isinstance(value, float) and value.is_integer():
        out[prefix] = repr(value) if abs(value) >= 1e21 else str(int(value))
    else:
        out[prefix] = str(value)


def _json_path(obj: Any, path: str) -> Any:
    for part in re.findall(r'[^.\[\]"]+|\[\d+\]|\["[^"]*"\]', path):
        if part.startswith("[") and part[1:-1].isdigit():
            if not isinstance(obj, list) or int(part[1:-1]) >= len(obj):
                return None
            obj = obj[int(part[1:-1])]
        else:
            key = part[2:-2] if part.startswith('["') else part
            if not isinstance(obj, dict) or key not in obj:
                return None
            obj = obj[key]
    return obj


_LOGFMT_RE = re.compile(r'([^\s=]+)=("(?:[^"\\]|\\.)*"|\S*)')


@functools.lru_cache(maxsize=256)
def _pattern_regex(pattern: str) -> Any:
    parts = re.split(r"(<[A-Za-z_][A-Za-z0-9_]*>|<_>)", pattern)
    buf, seen = ["^"], set()
    for i, part in enumerate(parts):
        if part.startswith("<") and part.endswith(">") and len(part) > 2:
            name = part[1:-1]
            last = i == len(parts) - 1 or (i == len(parts) - 2 and parts[-1] == "")
            body = ".*" if last else ".*?"
            if name == "_" or name in seen:
                buf.append(f"(?:{body})")
            else:
                seen.add(name)
                buf.append(f"(?P<{name}>{body})")
        else:
            buf.append(re.escape(part))
    return compile_re2("".join(buf), dot_all=True)


def _add_extracted(labels: dict[str, str], base: StreamLabels, name: str, value: str) -> None:
    if not name:
        return
    if name in base:
        name += "_extracted"
    labels[name] = value


def _to_number(value: str, kind: str) -> float | None:
    try:
        if kind == "DURATION":
            d = parse_duration(value.lstrip("-"))
            if d is None:
                return None
            return -d if value.startswith("-") else d
        if kind == "BYTES":
            return _parse_bytes(value)
        return float(value)
    except ValueError:
        return None


def _cmp_label(cmp: Cmp, labels: dict[str, str]) -> bool:
    v = labels.get(cmp.name)
    if cmp.kind == "STRING":
        s = v or ""
        if cmp.op in ("=", "=="):
            return s == cmp.value
        if cmp.op == "!=":
            return s != cmp.value
        hit = _regex(cmp.value).fullmatch(s) is not None
        return hit if cmp.op == "=~" else not hit
    if v is None:
        return False
    lhs = _to_number(v, cmp.kind)
    rhs = _to_number(cmp.value, cmp.kind)
    if lhs is None or rhs is None:
        return False
    return {"=": lhs == rhs, "==": lhs == rhs, "!=": lhs != rhs, ">": lhs > rhs, ">=": lhs >= rhs, "<": lhs < rhs, "<=": lhs <= rhs}.get(cmp.op, False)


def _eval_label_expr(expr: LabelExpr, labels: dict[str, str]) -> bool:
    if isinstance(expr, Cmp):
        return _cmp_label(expr, labels)
    if expr.op == "and":
        return _eval_label_expr(expr.left, labels) and _eval_label_expr(expr.right, labels)
    return _eval_label_expr(expr.left, labels) or _eval_label_expr(expr.right, labels)


_TEMPLATE_RE = re.compile(r"\{\{-?\s*(\.[A-Za-z_][A-Za-z0-9_]*|__line__|__timestamp__)\s*-?\}\}")


@dataclass
class Sample:
    t: float
    labels: dict[str, str]
    line: str
    weight: int
    value: float = 0.0


def _run_pipeline(stages: tuple[Stage, ...], base: StreamLabels, entry: LogEntry) -> Sample | None:
    labels = dict(base)
    line = entry.line
    value = 0.0
    for st in stages:
        if isinstance(st, LineFilter):
            if st.op == "|=":
                ok = any(v in line for v in st.values)
            elif st.op == "!=":
                ok = not any(v in line for v in st.values)
            elif st.op == "|~":
                ok = any(_regex(v).search(line) for v in st.values)
            else:
                ok = not any(_regex(v).search(line) for v in st.values)
            if not ok:
                return None
        elif isinstance(st, ParserStage):
            _parse_into(st, line, labels, base)
        elif isinstance(st, LabelFilterStage):
            if not _eval_label_expr(st.expr, labels):
                return None
        elif isinstance(st, LineFormat):
            line = _TEMPLATE_RE.sub(lambda m: _template_value(m.group(1), labels, line, entry.t), st.template)
        elif isinstance(st, LabelSet):
            if st.kind == "drop":
                for n in st.names:
                    labels.pop(n, None)
            elif st.kind == "keep":
                labels = {k: v for k, v in labels.items() if k in st.names}
        elif isinstance(st, Unwrap):
            raw = labels.get(st.label)
            if raw is None:
                return None
            num = _unwrap_value(raw, st.conv)
            if num is None:
                return None
            value = num
            labels.pop(st.label, None)
    return Sample(entry.t, labels, line, entry.weight, value)


def _unwrap_value(raw: str, conv: str) -> float | None:
    if conv in ("duration", "duration_seconds"):
        return parse_duration(raw)
    if conv == "bytes":
        return _parse_bytes(raw)
    try:
        return float(raw)
    except ValueError:
        return None


def _template_value(key: str, labels: dict[str, str], line: str, t: float) -> str:
    if key == "__line__":
        return line
    if key == "__timestamp__":
        return iso(t)
    return labels.get(key[1:], "")


def _parse_into(st: ParserStage, line: str, labels: dict[str, str], base: StreamLabels) -> None:
    if st.kind == "json":
        try:
            obj = json.loads(line)
        except ValueError:
            labels["__error__"] = "JSONParserErr"
            labels["__error_details__"] = "Value looks like object, but can't find closing '}' symbol" if line.lstrip().startswith("{") else "Value is not a JSON object"
            return
        if not isinstance(obj, dict):
            labels["__error__"] = "JSONParserErr"
            return
        if st.params:
            for name, path in st.params:
                v = _json_path(obj, path)
                if v is not None:
                    flat: dict[str, str] = {}
                    _flatten("x", v, flat)
                    _add_extracted(labels, base, _sanitize(name), flat.get("x", json.dumps(v, separators=(",", ":"))))
            return
        flat = {}
        _flatten("", obj, flat)
        for k, v in flat.items():
            _add_extracted(labels, base, k, v)
    elif st.kind == "logfmt":
        wanted = dict(st.params) if st.params else None
        for m in _LOGFMT_RE.finditer(line):
            k, v = m.group(1), m.group(2)
            if v.startswith('"') and v.endswith('"') and len(v) >= 2:
                v = v[1:-1].replace('\\"', '"').replace("\\\\", "\\")
            name = _sanitize(k)
            if wanted is not None:
                hits = [n for n, p in wanted.items() if p == k]
                for n in hits:
                    _add_extracted(labels, base, _sanitize(n), v)
                continue
            _add_extracted(labels, base, name, v)
    elif st.kind in ("pattern", "regexp"):
        rx = _pattern_regex(st.arg) if st.kind == "pattern" else _regex(st.arg)
        m = rx.match(line) if st.kind == "pattern" else rx.search(line)
        if m:
            for k, v in m.groupdict().items():
                if v is not None:
                    _add_extracted(labels, base, k, v)


def _samples(world: "World", q: LogQuery, start: float, end: float) -> list[Sample]:
    out: list[Sample] = []
    sampler = ServiceSampler(world)
    for labels, pod, container in _select(world, q.matchers):
        for entry in container_entries(world, pod, container, start, end, sampler=sampler):
            s = _run_pipeline(q.stages, labels, entry)
            if s is not None:
                out.append(s)
    return out


# =========================================================================== metric evaluation

Series = dict[tuple[tuple[str, str], ...], float]


def _range_value(fn: str, samples: list[Sample], range_s: float, param: float | None) -> float:
    if fn == "count_over_time":
        return float(sum(s.weight for s in samples))
    if fn == "rate":
        return sum(s.weight for s in samples) / range_s
    if fn == "bytes_over_time":
        return float(sum(len(s.line.encode()) * s.weight for s in samples))
    if fn == "bytes_rate":
        return sum(len(s.line.encode()) * s.weight for s in samples) / range_s
    if fn == "absent_over_time":
        return 1.0
    vals = [s.value for s in samples]
    if fn == "sum_over_time":
        return sum(s.value * s.weight for s in samples)
    if fn == "avg_over_time":
        w = sum(s.weight for s in samples)
        return sum(s.value * s.weight for s in samples) / w if w else math.nan
    if fn == "min_over_time":
        return min(vals)
    if fn == "max_over_time":
        return max(vals)
    if fn == "first_over_time":
        return vals[0]
    if fn == "last_over_time":
        return vals[-1]
    if fn == "quantile_over_time":
        q = 0.5 if param is None else param
        vs = sorted(vals)
        if q < 0:
            return -math.inf
        if q > 1:
            return math.inf
        rank = q * (len(vs) - 1)
        lo, hi = int(math.floor(rank)), int(math.ceil(rank))
        return vs[lo] + (vs[hi] - vs[lo]) * (rank - lo)
    return math.nan


class _Evaluator:
    """Evaluates a metric expression at a list of step times; log lines are fetched once."""

    def __init__(self, world: "World", times: list[float]) -> None:
        self.world = world
        self.times = times

    def eval(self, expr: MetricExpr) -> list[Series] | float:
        if isinstance(expr, Scalar):
            return expr.value
        if isinstance(expr, RangeAgg):
            return self._range(expr)
        if isinstance(expr, VectorAgg):
            inner = self.eval(expr.inner)
            if isinstance(inner, float):
                raise LogQLError(f"parse error : unexpected scalar in {expr.op}()")
            return [_aggregate(expr, s) for s in inner]
        return self._binop(expr)

    def _range(self, expr: RangeAgg) -> list[Series]:
        lo = min(self.times) - expr.range_s - expr.offset_s
        hi = max(self.times) - expr.offset_s
        samples = _samples(self.world, expr.query, lo, hi)
        by_series: dict[tuple[tuple[str, str], ...], list[Sample]] = {}
        for s in samples:
            if "__error__" in s.labels and expr.fn not in ("count_over_time", "rate", "bytes_over_time", "bytes_rate"):
                continue
            by_series.setdefault(_label_key(s.labels), []).append(s)
        out: list[Series] = []
        for t in self.times:
            series: Series = {}
            end = t - expr.offset_s
            for key, ss in by_series.items():
                ts = [x.t for x in ss]
                a, b = bisect.bisect_right(ts, end - expr.range_s), bisect.bisect_right(ts, end)
                if b > a:
                    series[key] = _range_value(expr.fn, ss[a:b], expr.range_s, expr.param)
            if expr.fn == "absent_over_time":
                series = {} if series else {tuple(sorted((m.name, m.value) for m in expr.query.matchers if m.op == "=")): 1.0}
            out.append(series)
        return out

    def _binop(self, expr: BinOp) -> list[Series] | float:
        left, right = self.eval(expr.left), self.eval(expr.right)
        op = expr.op
        if isinstance(left, float) and isinstance(right, float):
            v = _arith(op, left, right)
            return v if v is not None else math.nan
        out: list[Series] = []
        for i in range(len(self.times)):
            lser = left if isinstance(left, float) else left[i]
            rser = right if isinstance(right, float) else right[i]
            series: Series = {}
            if op in ("and", "or", "unless"):
                assert isinstance(lser, dict) and isinstance(rser, dict)
                if op == "and":
                    series = {k: v for k, v in lser.items() if k in rser}
                elif op == "unless":
                    series = {k: v for k, v in lser.items() if k not in rser}
                else:
                    series = dict(rser)
                    series.update(lser)
                out.append(series)
                continue
            keys = (lser.keys() & rser.keys()) if isinstance(lser, dict) and isinstance(rser, dict) else (lser.keys() if isinstance(lser, dict) else rser.keys())  # type: ignore[union-attr]
            for k in sorted(keys):
                lv = lser[k] if isinstance(lser, dict) else lser
                rv = rser[k] if isinstance(rser, dict) else rser
                v = _arith(op, lv, rv)
                if op in ("==", "!=", ">", "<", ">=", "<="):
                    if expr.bool_mod:
                        series[_drop_name(k)] = 1.0 if v else 0.0
                    elif v:
                        series[k] = lv if isinstance(lser, dict) else rv
                elif v is not None:
                    series[k] = v
            out.append(series)
        return out


def _drop_name(key: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    return tuple((k, v) for k, v in key if k != "__name__")


def _arith(op: str, a: float, b: float) -> Any:
    try:
        if op == "+":
            return a + b
        if op == "-":
            return a - b
        if op == "*":
            return a * b
        if op == "/":
            return a / b if b else (math.nan if a == 0 else math.copysign(math.inf, a))
        if op == "%":
            return math.fmod(a, b) if b else math.nan
        if op == "^":
            return a**b
        return {"==": a == b, "!=": a != b, ">": a > b, "<": a < b, ">=": a >= b, "<=": a <= b}.get(op)
    except (OverflowError, ValueError):
        return math.nan


def _aggregate(expr: VectorAgg, series: Series) -> Series:
    groups: dict[tuple[tuple[str, str], ...], list[tuple[tuple[tuple[str, str], ...], float]]] = {}
    for key, v in series.items():
        if expr.grouping is None:
            gk: tuple[tuple[str, str], ...] = ()
        elif expr.grouping[0] == "by":
            gk = tuple((k, val) for k, val in key if k in expr.grouping[1])
        else:
            gk = tuple((k, val) for k, val in key if k not in expr.grouping[1])
        groups.setdefault(gk, []).append((key, v))
    out: Series = {}
    for gk, items in groups.items():
        vals = [v for _, v in items]
        if expr.op in ("topk", "bottomk"):
            n = int(expr.param or 0)
            ranked = sorted(items, key=lambda kv: (-kv[1] if expr.op == "topk" else kv[1], kv[0]))
            for key, v in ranked[:n]:
                out[key] = v
            continue
        if expr.op == "sum":
            out[gk] = sum(vals)
        elif expr.op == "avg":
            out[gk] = sum(vals) / len(vals)
        elif expr.op == "min":
            out[gk] = min(vals)
        elif expr.op == "max":
            out[gk] = max(vals)
        elif expr.op == "count":
            out[gk] = float(len(vals))
        elif expr.op in ("stddev", "stdvar"):
            mean = sum(vals) / len(vals)
            var = sum((v - mean) ** 2 for v in vals) / len(vals)
            out[gk] = math.sqrt(var) if expr.op == "stddev" else var
    return out


# =========================================================================== output


@dataclass
class QueryOptions:
    since_s: float = 3600.0
    limit: int = 30
    forward: bool = False
    output: str = "default"  # default | raw | jsonl | json | table
    step_s: float | None = None
    quiet: bool = False


def _fmt_value(v: float) -> str:
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "+Inf" if v > 0 else "-Inf"
    if v == int(v) and abs(v) < 1e15:
        return str(int(v))
    return f"{v:.6f}".rstrip("0").rstrip(".")


def _labels_str(labels: dict[str, str] | tuple[tuple[str, str], ...]) -> str:
    items = sorted(labels.items()) if isinstance(labels, dict) else list(labels)
    return "{" + ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in items) + "}"


def _ns(t: float) -> str:
    return str(int(_EPOCH_S) * 1_000_000_000 + int(round(t * 1e9)))


def _unix(t: float) -> float | int:
    v = _EPOCH_S + t
    return int(v) if v == int(v) else round(v, 3)


def run_query(world: "World", query: str, opts: QueryOptions | None = None) -> tuple[str, int]:
    """Run ``query`` over the world's logs; (text, exit code) as ``logcli query`` prints them."""
    opts = opts or QueryOptions()
    try:
        expr = parse(query)
    except LogQLError as exc:
        return f"Query failed: Error response from server: {exc}\n", 1
    except RecursionError:
        return "Query failed: Error response from server: parse error : query too deeply nested\n", 1
    now = world.clock.now
    start = now - max(opts.since_s, 0.0)
    try:
        if isinstance(expr, LogQuery):
            return _log_output(world, expr, start, now, opts), 0
        return _metric_output(world, expr, start, now, opts), 0
    except LogQLError as exc:
        return f"Query failed: Error response from server: {exc}\n", 1


def _log_output(world: "World", q: LogQuery, start: float, end: float, opts: QueryOptions) -> str:
    samples = _samples(world, q, start, end)
    keyed = [(s.t, _label_key(s.labels), i, s) for i, s in enumerate(samples)]
    keyed.sort(key=lambda x: (x[0], x[1], x[2]), reverse=not opts.forward)
    chosen = [s for _, _, _, s in keyed[: max(opts.limit, 0)]]
    if opts.output == "json":
        streams: dict[tuple[tuple[str, str], ...], list[list[str]]] = {}
        for s in chosen:
            streams.setdefault(_label_key(s.labels), []).append([_ns(s.t), s.line])
        result = [{"stream": dict(k), "values": v} for k, v in streams.items()]
        return json.dumps({"status": "success", "data": {"resultType": "streams", "result": result, "stats": {"summary": {"totalEntriesReturned": len(chosen)}}}}, ensure_ascii=False) + "\n"
    if opts.output == "raw":
        return "".join(s.line + "\n" for s in chosen)
    if opts.output == "jsonl":
        return "".join(json.dumps({"labels": dict(sorted(s.labels.items())), "line": s.line, "timestamp": _rfc3339(s.t)}, ensure_ascii=False) + "\n" for s in chosen)
    if not chosen:
        return ""
    common = dict(chosen[0].labels)
    for s in chosen[1:]:
        common = {k: v for k, v in common.items() if s.labels.get(k) == v}
    head = "" if opts.quiet or not common else f"Common labels: {_labels_str(common)}\n"
    shown = [_labels_str({k: v for k, v in s.labels.items() if k not in common}) for s in chosen]
    width = max(len(x) for x in shown)
    # logcli prints time.RFC3339 (whole seconds) in its default output
    return head + "".join(f"{iso(s.t)} {lab.ljust(width)} {s.line}\n" for s, lab in zip(chosen, shown))


def _rfc3339(t: float) -> str:
    stamp = iso(t)
    frac = t - math.floor(t)
    if frac > 1e-9:
        return f"{stamp[:-1]}.{int(round(frac * 1000)) % 1000:03d}Z"
    return stamp


def _metric_output(world: "World", expr: MetricExpr, start: float, end: float, opts: QueryOptions) -> str:
    if opts.step_s:
        n = int(math.floor((end - start) / opts.step_s + 1e-9)) + 1
        n = min(n, 11000)
        times = [start + i * opts.step_s for i in range(n)]
    else:
        times = [end]
    result = _Evaluator(world, times).eval(expr)
    if isinstance(result, float):
        if opts.output == "json":
            return json.dumps({"status": "success", "data": {"resultType": "scalar", "result": [_unix(end), _fmt_value(result)]}}) + "\n"
        return _fmt_value(result) + "\n"
    if opts.step_s is None:
        vec = result[0]
        keys = sorted(vec)
        if opts.output == "json":
            items = [{"metric": dict(k), "value": [_unix(end), _fmt_value(vec[k])]} for k in keys]
            return json.dumps({"status": "success", "data": {"resultType": "vector", "result": items}}, ensure_ascii=False) + "\n"
        if not keys:
            return ""
        labels = [_labels_str(k) for k in keys]
        width = max(len(x) for x in labels)
        return "".join(f"{lab.ljust(width)}  {_fmt_value(vec[k])}\n" for lab, k in zip(labels, keys))
    all_keys = sorted({k for s in result for k in s})
    if opts.output == "json":
        items = [{"metric": dict(k), "values": [[_unix(t), _fmt_value(s[k])] for t, s in zip(times, result) if k in s]} for k in all_keys]
        return json.dumps({"status": "success", "data": {"resultType": "matrix", "result": items}}, ensure_ascii=False) + "\n"
    out = []
    for k in all_keys:
        out.append(_labels_str(k) + "\n")
        for t, s in zip(times, result):
            if k in s:
                out.append(f"  {_rfc3339(t)}  {_fmt_value(s[k])}\n")
    return "".join(out)


def label_names(world: "World", since_s: float = 3600.0) -> list[str]:
    """Label names of the streams present (``logcli labels``)."""
    names: set[str] = set()
    for labels, _, _ in _select(world, (Matcher("namespace", "=~", ".+"),)):
        names.update(labels)
    return sorted(names)


def label_values(world: "World", name: str) -> list[str]:
    """Values of one stream label (``logcli labels <name>``)."""
    return sorted({labels[name] for labels, _, _ in _select(world, (Matcher("namespace", "=~", ".+"),)) if name in labels})

