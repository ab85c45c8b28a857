"""Server-side field validation: the ``fieldValidation`` directive over the API's decoding.

The API server decodes a request body into the kind's Go struct
(:mod:`sre_env.kube.decoding`): a value of the wrong JSON type fails the request
whatever the client asked (``json: cannot unmarshal string into Go struct field
DeploymentSpec.spec.replicas of type int32``); a field the struct lacks is, by
the ``fieldValidation`` query parameter, refused (``Strict``: ``strict decoding
error: unknown field "spec.foo"``), dropped with a warning (``Warn``, the
default) or dropped silently (``Ignore``). Custom resources and kinds without a
table keep every field, as a CRD with ``x-kubernetes-preserve-unknown-fields``
does.
"""

from __future__ import annotations

from typing import Any

from sre_env.errors import ApiError
from sre_env.kube.decoding import DecodeError, decode, decode_error, patch_invalid, strict_message

__all__ = ["directive", "validate_body", "validate_patched", "warning_header", "warnings_for"]

Obj = dict[str, Any]


def directive(value: str) -> str:
    """The ``fieldValidation`` directive; an unknown value is refused as the API server refuses it."""
    if value in ("", "Warn"):
        return "Warn"
    if value in ("Strict", "Ignore"):
        return value
    raise ApiError(400, "BadRequest", f'fieldValidation parameter unsupported: {value!r}. Valid values: "Ignore", "Warn", "Strict"'.replace("'", '"'))


def warnings_for(unknown: list[str], mode: str) -> list[str]:
    """The ``Warning`` headers for the dropped fields (``Warn`` only)."""
    return [f'unknown field "{p}"' for p in unknown] if mode == "Warn" else []


def validate_body(obj: Obj, mode: str) -> list[str]:
    """Decode a create/update body in place (pruned unless refused); the unknown fields it dropped.

    Raises the API server's BadRequest for a wrong type, and for unknown fields under ``Strict``.
    """
    kind, api_version = str(obj.get("kind", "")), str(obj.get("apiVersion", ""))
    try:
        found = decode(obj, prune=mode != "Strict")
    except DecodeError as exc:
        raise decode_error(kind, api_version, str(exc)) from None
    if found.unknown and mode == "Strict":
        raise decode_error(kind, api_version, strict_message(found.unknown))
    return found.unknown


def validate_patched(obj: Obj, patch: Any, mode: str) -> list[str]:
    """Decode the result of a patch in place (pruned unless refused); the unknown fields it dropped.

    Refusals are worded as the patch handler words them (422 on the ``patch`` field).
    """
    try:
        found = decode(obj, prune=mode != "Strict")
    except DecodeError as exc:
        raise patch_invalid(patch, str(exc)) from None
    if found.unknown and mode == "Strict":
        raise patch_invalid(patch, strict_message(found.unknown))
    return found.unknown


def warning_header(text: str) -> str:
    """An RFC 7234 ``Warning`` value as the API server sends it (kubectl prints ``Warning: <text>``)."""
    return '299 - "' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
