"""What the regex rules in an nginx configuration cost per request.

nginx evaluates ``if ($var ~ "re")`` and ``location ~ re`` with PCRE on every
request that reaches the block. A regex with a nested quantifier — a quantified
group that itself contains a quantifier, such as ``(\\w+\\s?)*`` or ``(.*=.*)*``
— backtracks exponentially on inputs that almost match, so each request burns
milliseconds of CPU in the worker instead of microseconds. The cost depends
only on the configuration text the worker loaded, never on a fault's label.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["CATASTROPHIC_MS", "REGEX_MS", "RegexRule", "is_catastrophic", "regex_rules", "request_cost_ms"]

#: CPU one request spends in a backtracking regex against typical wrk2 URIs and headers, ms
CATASTROPHIC_MS = 30.0
#: CPU one request spends in an ordinary regex match, ms
REGEX_MS = 0.01

_IF_RE = re.compile(r"""\bif\s*\(\s*\$(\w+)\s*!?~\*?\s*(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|([^\s)]+))\s*\)""")
_LOC_RE = re.compile(r"""\blocation\s+~\*?\s+(?:"((?:[^"\\]|\\.)*)"|'((?:[^'\\]|\\.)*)'|([^\s{]+))\s*\{""")


@dataclass(frozen=True)
class RegexRule:
    line: int
    subject: str  # the variable matched ($http_user_agent ...) or "location"
    pattern: str
    catastrophic: bool


def _strip_comments(text: str) -> list[str]:
    out = []
    for raw in text.splitlines():
        # a '#' outside quotes starts a comment
        quote = ""
        cut = len(raw)
        for i, ch in enumerate(raw):
            if quote:
                if ch == quote and raw[i - 1] != "\\":
                    quote = ""
            elif ch in "\"'":
                quote = ch
            elif ch == "#":
                cut = i
                break
        out.append(raw[:cut])
    return out


_UNBOUNDED = re.compile(r"\{\d*,\}")


def _quantifier_at(p: str, i: int) -> bool:
    """An unbounded repeat starts at ``p[i]``: ``*``, ``+`` or ``{n,}``."""
    if i >= len(p):
        return False
    return p[i] in "*+" or bool(_UNBOUNDED.match(p, i))


def is_catastrophic(pattern: str) -> bool:
    """A quantified group whose body can itself repeat: ``(a+)+``, ``(.*x)*``, ``(\\w+\\s?){2,}``."""
    stack: list[tuple[int, bool]] = []  # (group start, body has a quantifier)
    i = 0
    in_class = False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            if stack and _quantifier_at(pattern, i):
                stack[-1] = (stack[-1][0], True)
            continue
        if in_class:
            if ch == "]":
                in_class = False
                if stack and _quantifier_at(pattern, i + 1):
                    stack[-1] = (stack[-1][0], True)
            i += 1
            continue
        if ch == "[":
            in_class = True
        elif ch == "(":
            stack.append((i, False))
        elif ch == ")" and stack:
            _, inner = stack.pop()
            outer = _quantifier_at(pattern, i + 1)
            if inner and outer:
                return True
            if stack and (inner or outer):
                stack[-1] = (stack[-1][0], True)
        elif ch in "*+" and stack or ch == "{" and stack and _quantifier_at(pattern, i):
            stack[-1] = (stack[-1][0], True)
        i += 1
    return False


def regex_rules(conf: str) -> list[RegexRule]:
    """Every regex an nginx config evaluates per request, in file order."""
    rules: list[RegexRule] = []
    for n, line in enumerate(_strip_comments(conf), start=1):
        for m in _IF_RE.finditer(line):
            pat = next(g for g in m.groups()[1:] if g is not None)
            rules.append(RegexRule(n, "$" + m.group(1), pat, is_catastrophic(pat)))
        for m in _LOC_RE.finditer(line):
            pat = next(g for g in m.groups() if g is not None)
            rules.append(RegexRule(n, "location", pat, is_catastrophic(pat)))
    return rules


def request_cost_ms(conf: str | None) -> float:
    """Extra CPU per request the config's regex rules add, ms."""
    if not conf:
        return 0.0
    return sum(CATASTROPHIC_MS if r.catastrophic else REGEX_MS for r in regex_rules(conf))
