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
from typing import Any

import yaml as pyyaml

__all__ = [
    "MAX_ANNOTATIONS_BYTES", "MAX_DATA_BYTES", "MAX_DEPTH", "MAX_REQUEST_BODY_BYTES", "MAX_STORED_BYTES", "SIM_MAX_DEPTH",
    "body_too_large", "json_too_deep", "load_yaml", "load_yaml_all", "nesting_depth",
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
    if text.count("[") + text.count("{") <= limit:
        return None  # too few brackets to nest that deep: the common case, without a scan
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


class _BoundedLoader(pyyaml.SafeLoader):
    """SafeLoader that refuses deep nesting and excessive aliasing while it composes (before anything recurses)."""

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._sizes: dict[int, int] = {}
        self._decoded = 0
        self._aliased = 0

    # the scanner keeps a list per open flow collection and indentation level and walks it per token: deep
    # nesting is quadratic there, before anything is composed, so it is refused as the scanner meets it
    def fetch_flow_collection_start(self, TokenClass: Any) -> None:
        if self.flow_level >= SIM_MAX_DEPTH:
            raise pyyaml.YAMLError(f"yaml: exceeded max depth of {SIM_MAX_DEPTH}")
        super().fetch_flow_collection_start(TokenClass)

    def add_indent(self, column: int) -> bool:
        if len(self.indents) >= SIM_MAX_DEPTH:
            raise pyyaml.YAMLError(f"yaml: exceeded max depth of {SIM_MAX_DEPTH}")
        return bool(super().add_indent(column))

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(pyyaml.AliasEvent):
            anchored = self.anchors.get(self.peek_event().anchor)
            size = self._sizes.get(id(anchored), 1)
            self._decoded += size
            self._aliased += size
            if self._aliased > 100 and self._decoded > 1000 and self._aliased / self._decoded > _allowed_alias_ratio(self._decoded):
                raise pyyaml.YAMLError("yaml: document contains excessive aliasing")
            return super().compose_node(parent, index)
        self._depth += 1
        if self._depth > SIM_MAX_DEPTH:
            raise pyyaml.YAMLError(f"yaml: exceeded max depth of {SIM_MAX_DEPTH}")
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        self._decoded += 1
        if isinstance(node, pyyaml.SequenceNode):
            children = node.value
        elif isinstance(node, pyyaml.MappingNode):
            children = [n for pair in node.value for n in pair]
        else:
            children = []
        self._sizes[id(node)] = 1 + sum(self._sizes.get(id(c), 1) for c in children)
        return node


def _allowed_alias_ratio(decoded: int) -> float:
    """go-yaml's allowed share of alias-decoded nodes: 99% up to 400,000 nodes, falling to 10% at 4,000,000."""
    low, high = 400_000, 4_000_000
    if decoded <= low:
        return 0.99
    if decoded >= high:
        return 0.10
    return 0.99 - 0.89 * (decoded - low) / (high - low)


def load_yaml(text: str) -> Any:
    """``yaml.safe_load`` that refuses nesting past :data:`SIM_MAX_DEPTH` and go-yaml's excessive aliasing
    (the "billion laughs"), as a ``yaml.YAMLError`` worded as go-yaml's, before anything recurses."""
    loader = _BoundedLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def load_yaml_all(text: str) -> list[Any]:
    """Every document of a YAML stream, with :func:`load_yaml`'s limits over the whole stream."""
    loader = _BoundedLoader(text)
    try:
        docs = []
        while loader.check_data():
            docs.append(loader.get_data())
        return docs
    finally:
        loader.dispose()
