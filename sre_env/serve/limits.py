"""What ``sre-env serve`` refuses before it decodes a request body, and what it answers when a handler fails.

* **Size**: a body over the apiserver's ``MaxRequestBodyBytes`` (3 MiB) is
  refused with its 413 ``Status`` (``Request entity too large: limit is
  3145728``) before it is read further.
* **Depth**: Go's JSON decoder refuses nesting over 10,000 levels (``invalid
  character '[' exceeded max depth``), go-yaml the same depth and documents whose
  aliases expand out of proportion (``document contains excessive aliasing``,
  the "billion laughs"). Python's decoders and every function that walks a
  decoded object recurse, so this server refuses nesting over
  :data:`MAX_DEPTH` (far deeper than any Kubernetes object) with the same
  wording, before the body reaches a decoder; YAML aliases follow go-yaml's
  ratio rule.
* **Media types**: a create or update (POST, PUT) body must be JSON, YAML or
  Kubernetes protobuf, as the apiserver's input negotiation says
  (``NegotiateInputSerializer``: no ``Content-Type`` means JSON; anything else is
  its 415 ``UnsupportedMediaType``). YAML goes through :func:`load_yaml` and on
  as JSON, as the apiserver's YAML serializer converts it.
* **Failures**: a handler that raises is a bug, answered with the apiserver's
  500 ``InternalError`` Status (``Internal error occurred: ...``) instead of
  aiohttp's HTML page, so clients still parse the answer; hostile bodies are
  refused above with a 4xx and never get there.
"""

from __future__ import annotations

import json
import re
from typing import Any

import numpy as np
import yaml

from sre_env.errors import ApiError

__all__ = ["INPUT_MEDIA_TYPES", "MAX_DEPTH", "MAX_REQUEST_BODY_BYTES", "input_body", "internal_error_status", "json_too_deep", "load_yaml", "too_large_status"]

#: the apiserver's ``MaxRequestBodyBytes`` (k8s.io/apiserver/pkg/server/config.go)
MAX_REQUEST_BODY_BYTES = 3 * 1024 * 1024
#: nesting refused in JSON and YAML bodies (the apiserver's decoders allow 10,000; see the module docstring)
MAX_DEPTH = 100

#: what the apiserver decodes a create or update from, in its order (the first is assumed without a Content-Type)
INPUT_MEDIA_TYPES = ("application/json", "application/yaml", "application/vnd.kubernetes.protobuf")

_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"')
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_STEPS = bytes.maketrans(b"[{]}", b"\x01\x01\xff\xff")


def too_large_status(limit: int = MAX_REQUEST_BODY_BYTES) -> dict[str, Any]:
    """The apiserver's ``NewRequestEntityTooLargeError`` for a body over ``limit`` (sent with code 413)."""
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": f"Request entity too large: limit is {limit}", "reason": "RequestEntityTooLarge", "code": 413}


def internal_error_status(cause: str) -> dict[str, Any]:
    """The apiserver's ``NewInternalError`` for an error reading ``cause`` (sent with code 500)."""
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": f"Internal error occurred: {cause}", "reason": "InternalError", "details": {"causes": [{"message": cause}]}, "code": 500}


def json_too_deep(body: bytes, limit: int = MAX_DEPTH) -> str | None:
    """The bracket that takes a JSON text past ``limit`` levels, or None.

    Linear in the body and without recursion: strings are cut out (brackets inside
    them do not nest), the remaining brackets become +1/-1 steps, and the running
    sum is the depth.
    """
    if body.count(b"[") + body.count(b"{") <= limit:
        return None
    brackets = _STRING.sub(b"", body).translate(None, _NOT_BRACKETS)
    depth = np.cumsum(np.frombuffer(brackets.translate(_STEPS), dtype=np.int8), dtype=np.int64)
    over = np.flatnonzero(depth > limit)
    return chr(brackets[int(over[0])]) if over.size else None


class _BoundedLoader(yaml.SafeLoader):
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
        if self.flow_level >= MAX_DEPTH:
            raise yaml.YAMLError(f"yaml: exceeded max depth of {MAX_DEPTH}")
        super().fetch_flow_collection_start(TokenClass)

    def add_indent(self, column: int) -> bool:
        if len(self.indents) >= MAX_DEPTH:
            raise yaml.YAMLError(f"yaml: exceeded max depth of {MAX_DEPTH}")
        return bool(super().add_indent(column))

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            anchored = self.anchors.get(self.peek_event().anchor)
            size = self._sizes.get(id(anchored), 1)
            self._decoded += size
            self._aliased += size
            if self._aliased > 100 and self._decoded > 1000 and self._aliased / self._decoded > _allowed_alias_ratio(self._decoded):
                raise yaml.YAMLError("yaml: document contains excessive aliasing")
            return super().compose_node(parent, index)
        self._depth += 1
        if self._depth > MAX_DEPTH:
            raise yaml.YAMLError(f"yaml: exceeded max depth of {MAX_DEPTH}")
        try:
            node = super().compose_node(parent, index)
        finally:
            self._depth -= 1
        self._decoded += 1
        if isinstance(node, yaml.SequenceNode):
            children = node.value
        elif isinstance(node, yaml.MappingNode):
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
    """``yaml.safe_load`` with the depth and alias limits above (a ``yaml.YAMLError`` when they are exceeded)."""
    loader = _BoundedLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()


def input_body(content_type: str | None, body: bytes) -> bytes:
    """A POST or PUT body as the handlers take it (JSON or protobuf bytes), or the apiserver's refusal: 415 for a
    media type it does not decode, 400 for YAML it cannot read (past the limits above, too)."""
    media = (content_type or "").split(";")[0].strip().lower() or INPUT_MEDIA_TYPES[0]
    if media not in INPUT_MEDIA_TYPES:
        raise ApiError(415, "UnsupportedMediaType", f"the body of the request was in an unknown format - accepted media types include: {', '.join(INPUT_MEDIA_TYPES)}")
    if media != "application/yaml" or not body:
        return body
    try:
        return json.dumps(load_yaml(body.decode("utf-8"))).encode()
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ApiError(400, "BadRequest", f"error converting YAML to JSON: {str(exc).splitlines()[0]}") from None
