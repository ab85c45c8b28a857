"""Server-side field validation: unknown fields and wrong JSON types, as the API server decodes.

The API server decodes a request body into the kind's Go struct: a value of the
wrong JSON type fails the request whatever the client asked (``json: cannot
unmarshal string into Go struct field DeploymentSpec.spec.replicas of type
int32``); a field the struct lacks is, by the ``fieldValidation`` query
parameter, refused (``Strict``: ``strict decoding error: unknown field
"spec.foo"``), dropped with a warning (``Warn``, the default) or dropped silently
(``Ignore``). The kinds' fields come from ``kube_types`` (the built-in types);
custom resources and kinds without a table keep every field, as a CRD with
``x-kubernetes-preserve-unknown-fields`` does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sre_env.errors import ApiError

from .kube_types import ROOTS, TYPES

__all__ = ["Decoded", "PatchInvalid", "check_object", "directive", "go_format", "short_name", "validate_body", "validate_patched", "warnings_for"]

Obj = dict[str, Any]

#: int64 fields of the built-in types (every other integer is an int32 in the Go structs)
_INT64 = frozenset({
    "activeDeadlineSeconds", "terminationGracePeriodSeconds", "deletionGracePeriodSeconds", "generation", "observedGeneration",
    "runAsUser", "runAsGroup", "fsGroup", "tolerationSeconds", "startingDeadlineSeconds", "expirationSeconds",
    "ttlSecondsAfterFinished", "value", "count", "supplementalGroups",
})
_GO_SCALAR = {"string": "string", "boolean": "bool", "number": "float64", "date-time": "v1.Time", "date": "string", "quantity": "resource.Quantity", "int-or-string": "intstr.IntOrString"}


@dataclass
class Decoded:
    """What decoding found: unknown field paths (the object is pruned of them unless kept)."""

    unknown: list[str] = field(default_factory=list)


def directive(value: str) -> str:
    """The ``fieldValidation`` directive; an unknown value is refused as the API server refuses it."""
    if value in ("", "Warn"):
        return "Warn"
    if value in ("Strict", "Ignore"):
        return value
    raise ApiError(400, "BadRequest", f'fieldValidation parameter unsupported: {value!r}. Valid values: "Ignore", "Warn", "Strict"'.replace("'", '"'))


def short_name(definition: str) -> str:
    return definition.rsplit(".", 1)[-1]


def _json_kind(value: Any) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return f"number {value}" if isinstance(value, float) and not value.is_integer() else "number"
    return {str: "string", list: "array", dict: "object"}.get(type(value), "null")


def _go_type(t: str, name: str) -> str:
    if t.startswith("["):
        return "[]" + _go_type(t[1:-1], name)
    if t.startswith("{"):
        return "map[string]" + _go_type(t[1:-1], name)
    if t == "integer":
        return "int64" if name in _INT64 else "int32"
    if t in _GO_SCALAR:
        return _GO_SCALAR[t]
    if t == "any":
        return "interface {}"
    parts = t.split(".")
    return f"{parts[-2]}.{parts[-1]}"


def _fits(t: str, value: Any) -> bool:
    if value is None or t == "any":
        return True
    if t.startswith("["):
        return isinstance(value, list)
    if t.startswith("{") or t in TYPES:
        return isinstance(value, dict)
    if t == "integer":
        return isinstance(value, int) and not isinstance(value, bool) or isinstance(value, float) and value.is_integer()
    if t == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if t == "boolean":
        return isinstance(value, bool)
    if t in ("quantity", "int-or-string"):
        return isinstance(value, (str, int, float)) and not isinstance(value, bool)
    return isinstance(value, str)


def check_object(obj: Obj, *, prune: bool = True) -> Decoded:
    """Walk ``obj`` against its kind's fields: raise on a wrong type, collect (and prune) unknown fields."""
    root = ROOTS.get(str(obj.get("kind", "")))
    found = Decoded()
    if root is not None:
        _walk(obj, root, "", [], found, prune, short_name(root))
    return found


def _walk(value: Any, t: str, path: str, go_path: list[str], found: Decoded, prune: bool, owner: str) -> None:
    name = go_path[-1] if go_path else ""
    if not _fits(t, value):
        where = ".".join(go_path)
        raise _TypeMismatch(f"json: cannot unmarshal {_json_kind(value)} into Go struct field {owner}.{where} of type {_go_type(t, name)}", path, t, value)
    if value is None or t == "any":
        return
    if t.startswith("["):
        inner = t[1:-1]
        for i, item in enumerate(value):
            _walk(item, inner, f"{path}[{i}]", go_path, found, prune, owner)
        return
    if t.startswith("{"):
        inner = t[1:-1]
        for k, item in value.items():
            _walk(item, inner, f"{path}.{k}" if path else k, go_path, found, prune, owner)
        return
    fields = TYPES.get(t)
    if fields is None:
        return
    for key in list(value):
        sub = f"{path}.{key}" if path else key
        if key not in fields:
            found.unknown.append(sub)
            if prune:
                del value[key]
            continue
        _walk(value[key], fields[key], sub, [*go_path, key], found, prune, short_name(t))


class _TypeMismatch(ValueError):
    """A JSON value the Go struct cannot hold (``path``: where, ``expected``: the field's type)."""

    def __init__(self, message: str, path: str, expected: str, value: Any) -> None:
        super().__init__(message)
        self.path, self.expected, self.value = path, expected, value


def decode_error(kind: str, api_version: str, message: str) -> ApiError:
    """The BadRequest a create or update gets when its body does not decode into the kind."""
    version = api_version.rsplit("/", 1)[-1]
    return ApiError(400, "BadRequest", f'{kind} in version "{version}" cannot be handled as a {kind}: {message}')


def strict_message(unknown: list[str]) -> str:
    return "strict decoding error: " + ", ".join(f'unknown field "{p}"' for p in unknown)


def warnings_for(unknown: list[str], mode: str) -> list[str]:
    """The ``Warning`` headers for the dropped fields (``Warn`` only)."""
    return [f'unknown field "{p}"' for p in unknown] if mode == "Warn" else []


def validate_body(obj: Obj, mode: str) -> list[str]:
    """Check a create/update body in place (pruned unless refused); the unknown fields it dropped.

    Raises the API server's BadRequest for a wrong type, and for unknown fields under ``Strict``.
    """
    kind, api_version = str(obj.get("kind", "")), str(obj.get("apiVersion", ""))
    try:
        found = check_object(obj, prune=mode != "Strict")
    except _TypeMismatch as exc:
        raise decode_error(kind, api_version, str(exc)) from None
    if found.unknown and mode == "Strict":
        raise decode_error(kind, api_version, strict_message(found.unknown))
    return found.unknown


def validate_patched(obj: Obj, patch: Any, mode: str) -> list[str]:
    """Check the result of a patch in place (pruned unless refused); the unknown fields it dropped.

    Refusals are worded as the patch handler words them (422 on the ``patch`` field).
    """
    try:
        found = check_object(obj, prune=mode != "Strict")
    except _TypeMismatch as exc:
        raise _invalid_patch(patch, str(exc)) from None
    if found.unknown and mode == "Strict":
        raise _invalid_patch(patch, strict_message(found.unknown))
    return found.unknown


class PatchInvalid(ApiError):
    """A patch refused by decoding: the Status carries the ``patch`` field as its cause."""

    def __init__(self, value: str, message: str) -> None:
        super().__init__(422, "Invalid", f' "" is invalid: patch: Invalid value: "{value}": {message}')
        self.cause = {"reason": "FieldValueInvalid", "message": f'Invalid value: "{value}": {message}', "field": "patch"}


def _invalid_patch(patch: Any, message: str) -> PatchInvalid:
    return PatchInvalid(go_format(patch).replace('"', '\\"'), message)


def go_format(value: Any) -> str:
    """A decoded JSON value as Go's ``%+v`` prints it (``map[spec:map[replicas:2]]``)."""
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_format(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_format(v) for v in value) + "]"
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def warning_header(text: str) -> str:
    """An RFC 7234 ``Warning`` value as the API server sends it (kubectl prints ``Warning: <text>``)."""
    return '299 - "' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
