"""The protobuf wire format, read: what Kubernetes' ``application/vnd.kubernetes.protobuf`` bodies are made of.

A minimal proto2 reader (varints, length-delimited fields, fixed32/64), shared
by serve's body decoder (``sre_env.serve.kube_protobuf``: the message tables)
and the namespace guard's access reviews (``sre_env.kube.access_review``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["MAGIC", "Unsupported", "fields"]

#: the prefix of every Kubernetes protobuf body
MAGIC = b"k8s\x00"
# wire types
_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5


class Unsupported(ValueError):
    """A body this decoder cannot name every field of."""


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= len(buf) or shift > 63:
            raise Unsupported("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return result, pos
        shift += 7


def fields(buf: bytes) -> list[tuple[int, int, Any]]:
    """``(field number, wire type, value)`` in order: an int for varint/fixed, bytes for length-delimited."""
    out: list[tuple[int, int, Any]] = []
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos)
        num, wt = key >> 3, key & 7
        if num == 0:
            raise Unsupported("field number 0")
        if wt == _VARINT:
            val, pos = _varint(buf, pos)
        elif wt == _LEN:
            size, pos = _varint(buf, pos)
            if pos + size > len(buf):
                raise Unsupported("truncated field")
            val, pos = buf[pos : pos + size], pos + size
        elif wt == _I64:
            if pos + 8 > len(buf):
                raise Unsupported("truncated fixed64")
            val, pos = int.from_bytes(buf[pos : pos + 8], "little"), pos + 8
        elif wt == _I32:
            if pos + 4 > len(buf):
                raise Unsupported("truncated fixed32")
            val, pos = int.from_bytes(buf[pos : pos + 4], "little"), pos + 4
        else:
            raise Unsupported(f"wire type {wt}")
        out.append((num, wt, val))
    return out
