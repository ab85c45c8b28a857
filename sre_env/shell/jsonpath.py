"""kubectl's JSONPath dialect: ``{.a.b}``, ``[*]``, ``[0]``, ``[?(@.x=="y")]``, ``..name``, ``{range}...{end}``.

Written here instead of pulling in a library because kubectl's dialect differs
from generic JSONPath (template text around expressions, ``range``/``end``,
missing keys printing nothing, results joined by spaces), and we need exactly
kubectl's output for ``-o jsonpath`` and ``--sort-by``.
"""

from __future__ import annotations

import json
import re
from typing import Any

from sre_env.kube.regexp import RegexError, compile_re2

__all__ = ["JSONPathError", "compile_template", "render", "evaluate_path", "format_value"]


class JSONPathError(ValueError):
    pass


_MISSING = object()


def format_value(v: Any) -> str:
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    if isinstance(v, (dict, list)):
        return json.dumps(v, separators=(",", ":"))
    return str(v)


# --------------------------------------------------------------------------- path parsing
#: a field name; ``\.`` escapes a dot inside one (``{.data.tls\.crt}``)
_IDENT = re.compile(r"(?:[A-Za-z0-9_\-/$]|\\\.)+|\*")


def _parse_path(expr: str) -> list[tuple]:
    s = expr.strip()
    if s.startswith("$"):
        s = s[1:]
    steps: list[tuple] = []
    i = 0
    while i < len(s):
        c = s[i]
        if c == ".":
            if s.startswith("..", i):
                m = _IDENT.match(s, i + 2)
                if not m:
                    raise JSONPathError(f"unrecognized identifier in {expr}")
                steps.append(("rec", m.group(0)))
                i = m.end()
                continue
            m = _IDENT.match(s, i + 1)
            if not m:
                if i + 1 == len(s):
                    i += 1
                    continue
                if s[i + 1] == "[":
                    i += 1
                    continue
                raise JSONPathError(f"unrecognized character in action: {s[i + 1]!r}")
            steps.append(("wild",) if m.group(0) == "*" else ("field", m.group(0).replace("\\.", ".")))
            i = m.end()
        elif c == "[":
            depth, j = 0, i
            while j < len(s):
                if s[j] == "[":
                    depth += 1
                elif s[j] == "]":
                    depth -= 1
                    if depth == 0:
                        break
                elif s[j] in "'\"":
                    k = s.find(s[j], j + 1)
                    j = k if k > 0 else len(s)
                j += 1
            if j >= len(s):
                raise JSONPathError("unterminated array")
            inner = s[i + 1 : j].strip()
            i = j + 1
            if inner == "*":
                steps.append(("wild",))
            elif inner.startswith("?(") and inner.endswith(")"):
                steps.append(("filter", _parse_filter(inner[2:-1])))
            elif inner[:1] in "'\"" and inner[-1:] == inner[:1]:
                steps.append(("field", inner[1:-1]))
            elif ":" in inner:
                parts = inner.split(":")
                try:
                    nums = [int(p) if p.strip() else None for p in parts[:2]]
                except ValueError:
                    raise JSONPathError(f"invalid array index {inner}") from None
                steps.append(("slice", nums[0], nums[1] if len(nums) > 1 else None))
            else:
                try:
                    steps.append(("index", int(inner)))
                except ValueError:
                    raise JSONPathError(f"invalid array index {inner}") from None
        elif c in " \t":
            i += 1
        else:
            m = _IDENT.match(s, i)
            if m and not steps:
                steps.append(("field", m.group(0).replace("\\.", ".")))
                i = m.end()
            else:
                raise JSONPathError(f"unrecognized character in action: U+{ord(c):04X} {c!r}")
    return steps


_FILTER = re.compile(r"^\s*(@[^=!<>\s]*)\s*(?:(==|!=|<=|>=|<|>|=~)\s*(.+?))?\s*$")


def _parse_filter(text: str) -> tuple:
    m = _FILTER.match(text)
    if not m:
        raise JSONPathError(f"unrecognized filter {text}")
    lhs, op, rhs = m.groups()
    lpath = _parse_path(lhs[1:])
    rval: Any = None
    if op:
        rhs = rhs.strip()
        if rhs[:1] in "'\"" and rhs[-1:] == rhs[:1]:
            rval = rhs[1:-1]
        elif rhs.startswith("@"):
            rval = ("path", _parse_path(rhs[1:]))
        else:
            try:
                rval = float(rhs) if "." in rhs else int(rhs)
            except ValueError:
                rval = {"true": True, "false": False}.get(rhs, rhs)
    return (lpath, op, rval)


def _walk(values: list[Any], steps: list[tuple]) -> list[Any]:
    for st in steps:
        out: list[Any] = []
        kind = st[0]
        for v in values:
            if kind == "field":
                if isinstance(v, dict) and st[1] in v:
                    out.append(v[st[1]])
            elif kind == "wild":
                if isinstance(v, list):
                    out.extend(v)
                elif isinstance(v, dict):
                    out.extend(v[k] for k in sorted(v))
            elif kind == "index":
                if isinstance(v, list):
                    idx = st[1]
                    if -len(v) <= idx < len(v):
                        out.append(v[idx])
                    else:
                        raise JSONPathError(f"array index out of bounds: index {idx}, length {len(v)}")
            elif kind == "slice":
                if isinstance(v, list):
                    out.extend(v[st[1] : st[2]])
            elif kind == "rec":
                _recurse(v, st[1], out)
            elif kind == "filter":
                if isinstance(v, list):
                    out.extend(x for x in v if _test(x, st[1]))
        values = out
    return values


def _recurse(v: Any, name: str, out: list[Any]) -> None:
    if isinstance(v, dict):
        if name == "*":
            out.extend(v.values())
        elif name in v:
            out.append(v[name])
        for x in v.values():
            _recurse(x, name, out)
    elif isinstance(v, list):
        for x in v:
            _recurse(x, name, out)


def _test(item: Any, flt: tuple) -> bool:
    lpath, op, rval = flt
    got = _walk([item], lpath)
    if op is None:
        return bool(got) and got[0] not in (None, False, "")
    if not got:
        return False
    left = got[0]
    if isinstance(rval, tuple):
        r = _walk([item], rval[1])
        if not r:
            return False
        rval = r[0]
    if op == "=~":
        if not isinstance(left, str):
            return False
        try:
            return compile_re2(str(rval)).search(left) is not None  # kubectl's filters are Go regexps
        except RegexError as exc:
            raise JSONPathError(f"error parsing regexp: {exc.msg}") from None
    if isinstance(rval, (int, float)) and not isinstance(rval, bool) and isinstance(left, str):
        try:
            left = float(left)
        except ValueError:
            return False
    try:
        if op == "==":
            return left == rval
        if op == "!=":
            return left != rval
        if op == "<":
            return left < rval
        if op == ">":
            return left > rval
        if op == "<=":
            return left <= rval
        return left >= rval
    except TypeError:
        return False


def evaluate_path(obj: Any, expr: str) -> list[Any]:
    """Values at a kubectl-style path (``.metadata.name`` or ``{.metadata.name}``)."""
    e = expr.strip()
    if e.startswith("{") and e.endswith("}"):
        e = e[1:-1]
    return _walk([obj], _parse_path(e))


# --------------------------------------------------------------------------- templates
def compile_template(template: str) -> list[tuple]:
    """Parse into nodes: ("text", s) | ("expr", steps) | ("range", steps, body)."""
    nodes: list[tuple] = []
    stack: list[tuple[list[tuple], list[tuple]]] = []
    cur = nodes
    i = 0
    while i < len(template):
        j = template.find("{", i)
        if j < 0:
            cur.append(("text", template[i:]))
            break
        if j > i:
            cur.append(("text", template[i:j]))
        k, depth, q = j + 1, 1, ""
        while k < len(template):
            ch = template[k]
            if q:
                if ch == "\\":
                    k += 1
                elif ch == q:
                    q = ""
            elif ch in "'\"":
                q = ch
            elif ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
                if depth == 0:
                    break
            k += 1
        if k >= len(template):
            raise JSONPathError("unclosed action")
        inner = template[j + 1 : k].strip()
        i = k + 1
        if inner.startswith('"') and inner.endswith('"') and len(inner) >= 2:
            cur.append(("text", inner[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape")))
        elif inner.startswith("range "):
            body: list[tuple] = []
            node = ("range", _parse_path(inner[6:]), body)
            cur.append(node)
            stack.append((cur, body))
            cur = body
        elif inner == "end":
            if not stack:
                raise JSONPathError("not in range, nothing to end")
            cur = stack.pop()[0]
        else:
            cur.append(("expr", _parse_path(inner)))
    if stack:
        raise JSONPathError("unclosed range")
    return nodes


def render(nodes: list[tuple], obj: Any) -> str:
    out: list[str] = []
    _render(nodes, obj, out)
    return "".join(out)


def _render(nodes: list[tuple], obj: Any, out: list[str]) -> None:
    for node in nodes:
        if node[0] == "text":
            out.append(node[1])
        elif node[0] == "expr":
            vals = _walk([obj], node[1])
            out.append(" ".join(format_value(v) for v in vals))
        else:
            for item in _walk([obj], node[1]):
                if isinstance(item, list) and len(node[1]) and node[1][-1][0] != "wild":
                    for sub in item:
                        _render(node[2], sub, out)
                else:
                    _render(node[2], item, out)
