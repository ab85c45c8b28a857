"""The API server's size and depth limits, and a nesting-depth scan that never recurses.

Facts of a default ``kube-apiserver`` (v1.32):

- a request body may be 3 MiB (``--max-request-body-bytes``, 3145728 bytes);
  a larger one is ``413 RequestEntityTooLarge: Request entity too large: limit is 3145728``;
- an object's annotations may total 256 KiB (keys and values);
- etcd stores a value of at most 1.5 MiB (``--max-request-bytes``): the API server
  passes its refusal on as an unclassified failure (500, ``etcdserver: request is
  too large``), which kubectl prints as ``Error from server: ...``;
- a ConfigMap's ``data`` and ``binaryData``, a Secret's decoded ``data``, may total 1 MiB;
- the decoders refuse documents nested deeper than 10000 levels: Go's
  ``encoding/json`` (``exceeded max depth``) and the YAML parser kubectl converts
  manifests with (``yaml: exceeded max depth of 10000``, for flow collections and
  for indentation alike).

Python's parsers and every walk over a parsed object recurse, so the simulator
cannot hold a document nested anywhere near 10000 levels: it refuses, with the
same messages, documents nested deeper than :data:`SIM_MAX_DEPTH`, which is
deeper than any built-in kind's schema reaches (a pod template's affinity terms,
the deepest, nest 14 levels). A real API server would refuse such a document
too -- the levels below the schema are unknown fields -- unless it sits in a
free-form field. :func:`nesting_depth` measures a text without parsing it.
"""

from __future__ import annotations

import re

__all__ = [
    "MAX_ANNOTATIONS_BYTES", "MAX_DATA_BYTES", "MAX_DEPTH", "MAX_REQUEST_BODY_BYTES", "MAX_STORED_BYTES", "SIM_MAX_DEPTH",
    "body_too_large", "json_too_deep", "nesting_depth",
]

MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024
MAX_ANNOTATIONS_BYTES = 256 * 1024
MAX_DATA_BYTES = 1024 * 1024
MAX_STORED_BYTES = 1536 * 1024
MAX_DEPTH = 10000
#: what the simulator parses (see the module docstring); refused above this with the decoders' messages
SIM_MAX_DEPTH = 100

_DOUBLE_QUOTED = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_SINGLE_QUOTED = re.compile(r"(?:(?<=[\s\[{,:])|^)'(?:[^'\n]|'')*'", re.M)
_BRACKETS = re.compile(r"[\[\]{}]")
_LINE = re.compile(r"^([ \t]*)((?:-[ \t]+)*)(\S?)", re.M)


def body_too_large() -> str:
    """The message of the 413 a request body over :data:`MAX_REQUEST_BODY_BYTES` gets."""
    return f"Request entity too large: limit is {MAX_REQUEST_BODY_BYTES}"


def json_too_deep(text: str, limit: int = SIM_MAX_DEPTH) -> str | None:
    """Go's ``encoding/json`` error for a JSON text nested deeper than ``limit``, or None.

    The scanner stops at the bracket that opens one level too many:
    ``invalid character '{' exceeded max depth``. Linear, never recursive.
    """
    depth = 0
    for m in _BRACKETS.finditer(_DOUBLE_QUOTED.sub('""', text)):
        if m.group() in "[{":
            depth += 1
            if depth > limit:
                return f"invalid character '{m.group()}' exceeded max depth"
        else:
            depth = max(depth - 1, 0)
    return None


def nesting_depth(text: str, *, yaml: bool = False, limit: int | None = None) -> tuple[int, int]:
    """(deepest nesting, 1-based line where it is first reached) of a JSON or YAML text.

    With ``limit``, the line is where the nesting first goes deeper than ``limit``
    (where a parser with that limit stops), when it does.

    Quoted strings are skipped; brackets count one level each. For YAML, block
    nesting counts too: every deeper indentation opens a level, and so does every
    ``- `` that starts an item on a line (``- - - x`` nests three sequences); a
    flow collection adds its levels to its line's. Comments and block scalars are
    not told apart from structure, so the YAML figure is an upper bound: it only
    decides whether a document is refused as too deep. Linear in the text.
    """
    scrubbed = _DOUBLE_QUOTED.sub('""', text)
    if yaml:
        scrubbed = _SINGLE_QUOTED.sub("''", scrubbed)
    best, at, at_limit = 0, 0, -1
    line_level: dict[int, int] = {}
    if yaml:
        stack: list[int] = []
        for m in _LINE.finditer(scrubbed):
            indent, dashes, first = len(m.group(1)), m.group(2), m.group(3)
            if not dashes and (not first or first == "#"):
                continue  # blank lines and comments close nothing
            while stack and stack[-1] >= indent:
                stack.pop()
            stack.append(indent)
            level = len(stack) + dashes.count("-")
            line_level[m.start()] = level
            if level > best:
                best, at = level, m.start()
            if limit is not None and level > limit and at_limit < 0:
                at_limit = m.start()
    base, depth = 0, 0
    starts = sorted(line_level) if yaml else []
    i = 0
    for m in _BRACKETS.finditer(scrubbed):
        if m.group() in "[{":
            if yaml and depth == 0:
                while i + 1 < len(starts) and starts[i + 1] <= m.start():
                    i += 1
                base = line_level[starts[i]] if starts and starts[i] <= m.start() else 0
            depth += 1
            if base + depth > best:
                best, at = base + depth, m.start()
            if limit is not None and base + depth > limit and (at_limit < 0 or m.start() < at_limit):
                at_limit = m.start()
        else:
            depth = max(depth - 1, 0)
    at = at_limit if at_limit >= 0 else at
    return best, scrubbed.count("\n", 0, at) + 1
