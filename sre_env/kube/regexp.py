"""Regular expressions an agent types, matched as the Go tools match them: RE2, linear time.

Prometheus, Loki, Jaeger and kubectl are Go programs: their regular expressions
are Go's ``regexp``, the RE2 syntax, matched in time linear in the input. Python's
``re`` backtracks, so a pattern like ``(a*)*b`` against a line of ``a``s would hang
a step for ever; compiling agent patterns with RE2 keeps the real tools' syntax
(no backreferences, no lookaround: the real tools reject them too) and their cost.

A compiled pattern has the ``re`` methods the callers use (``search``, ``match``,
``fullmatch``, ``finditer``, ``sub``, ``groupdict`` on matches). Compilation is
memoised per pattern text, with a bound on what the cache keeps.
"""

from __future__ import annotations

import functools
from typing import Any

import re2

__all__ = ["RegexError", "compile_re2"]

#: RE2's memory budget for one compiled pattern (its default, 8 MiB): a huge pattern is refused
MAX_MEM = 8 << 20


#: RE2's (C++) error codes -> Go's regexp/syntax ErrorCode texts, which the real tools print
_GO_CODES = {
    "missing ]": "missing closing ]",
    "missing )": "missing closing )",
    "trailing \\": "trailing backslash at end of expression",
    "no argument for repetition operator": "missing argument to repetition operator",
    "invalid repetition size": "invalid repeat count",
    "bad repetition operator": "invalid nested repetition operator",
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "invalid named capture group": "invalid named capture",
}


class RegexError(ValueError):
    """A pattern RE2 (and so the Go tool) refuses; ``msg`` as Go's ``regexp/syntax.Error`` words it
    after its ``error parsing regexp: `` prefix, e.g. ``missing closing ): `(a```."""

    def __init__(self, msg: str, pattern: str) -> None:
        super().__init__(msg)
        self.msg = msg
        self.pattern = pattern


def compile_re2(pattern: str, *, ignore_case: bool = False, dot_all: bool = False) -> Any:
    """``pattern`` compiled by RE2 (Go's syntax); raises :class:`RegexError` when RE2 refuses it."""
    if len(pattern) <= 4096:
        return _compile(pattern, ignore_case, dot_all)
    return _compile.__wrapped__(pattern, ignore_case, dot_all)


@functools.lru_cache(maxsize=512)
def _compile(pattern: str, ignore_case: bool, dot_all: bool) -> Any:
    options = re2.Options()
    options.log_errors = False  # the error is the caller's to print, not RE2's to log
    options.max_mem = MAX_MEM
    options.case_sensitive = not ignore_case
    options.dot_nl = dot_all
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        reason = exc.args[0] if exc.args else str(exc)
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        code, _, frag = str(reason).partition(": ")
        raise RegexError(f"{_GO_CODES.get(code, code)}: `{frag or pattern}`", pattern) from None
