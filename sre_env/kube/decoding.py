"""Decoding a request body into a kind, as the API server's JSON decoder does.

Before it validates anything the API server decodes the body into the kind's Go
struct. That step refuses a value of the wrong JSON type (``json: cannot
unmarshal string into Go struct field DeploymentSpec.spec.replicas of type
int32``), a number too big for its integer, a quantity that does not parse; it
finds the fields the struct lacks (which the request's ``fieldValidation``
refuses, drops with a warning, or drops); and it turns ``null`` into Go's zero
value, so ``spec: null`` is an empty spec and ``replicas: null`` an unset one
that defaulting fills in. :func:`decode` does all of that on a dict, in place.

The kinds' fields come from :mod:`sre_env.kube.api_types`; custom resources and
kinds without a table keep every field, as a CRD with
``x-kubernetes-preserve-unknown-fields`` does (their ``null`` fields are
dropped, as the API server prunes them).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sre_env.errors import ApiError
from sre_env.kube.quantity import parse_quantity
from sre_env.kube.timefmt import parse_iso_safe

from .api_types import ROOTS, TYPES

__all__ = ["Decoded", "DecodeError", "decode", "decode_error", "go_format", "json_kind", "patch_invalid", "short_name", "strict_message"]

Obj = dict[str, Any]

#: int64 fields of the built-in types (every other integer is an int32 in the Go structs)
_INT64 = frozenset({
    "activeDeadlineSeconds", "terminationGracePeriodSeconds", "deletionGracePeriodSeconds", "generation", "observedGeneration",
    "runAsUser", "runAsGroup", "fsGroup", "tolerationSeconds", "startingDeadlineSeconds", "expirationSeconds",
    "ttlSecondsAfterFinished", "value", "count", "supplementalGroups",
})
_GO_SCALAR = {"string": "string", "boolean": "bool", "number": "float64", "date-time": "v1.Time", "date": "string", "quantity": "resource.Quantity", "int-or-string": "intstr.IntOrString"}
_INT_RANGE = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}


@dataclass
class Decoded:
    """What decoding found: unknown field paths (the object is pruned of them unless kept)."""

    unknown: list[str] = field(default_factory=list)


class DecodeError(ValueError):
    """A JSON value the Go struct cannot hold (``path``: where, ``expected``: the field's type)."""

    def __init__(self, message: str, path: str, expected: str, value: Any) -> None:
        super().__init__(message)
        self.path, self.expected, self.value = path, expected, value


def short_name(definition: str) -> str:
    return definition.rsplit(".", 1)[-1]


def json_kind(value: Any) -> str:
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


def _fits(t: str, value: Any, name: str) -> bool:
    if value is None or t == "any":
        return True
    if t.startswith("["):
        return isinstance(value, list)
    if t.startswith("{") or t in TYPES:
        return isinstance(value, dict)
    if t == "integer":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or isinstance(value, float) and not value.is_integer():
            return False
        lo, hi = _INT_RANGE[_go_type(t, name)]
        return lo <= value <= hi
    if t == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if t == "boolean":
        return isinstance(value, bool)
    if t in ("quantity", "int-or-string"):
        return isinstance(value, (str, int, float)) and not isinstance(value, bool)
    return isinstance(value, str)


def _zero(t: str) -> Any:
    """Go's zero value of a list item or map value of type ``t`` (what a ``null`` there decodes to)."""
    if t in TYPES or t.startswith("{") or t == "any":
        return {} if t != "any" else None
    if t.startswith("["):
        return []
    return {"string": "", "integer": 0, "number": 0, "boolean": False}.get(t, "")


def decode(obj: Obj, *, prune: bool = True) -> Decoded:
    """Decode ``obj`` into its kind in place: raise DecodeError, drop nulls, collect (and prune) unknown fields."""
    root = ROOTS.get(str(obj.get("kind", "")))
    found = Decoded()
    if root is not None:
        _walk(obj, root, "", [], found, prune, short_name(root))
    else:
        _drop_nulls(obj)
    return found


def _drop_nulls(value: Any) -> None:
    """Custom resources: ``null`` fields are pruned (lists keep their items)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            for k in [k for k, x in v.items() if x is None]:
                del v[k]
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)


def _walk(value: Any, t: str, path: str, go_path: list[str], found: Decoded, prune: bool, owner: str) -> None:
    name = go_path[-1] if go_path else ""
    if not _fits(t, value, name):
        where = ".".join(go_path)
        if t == "int-or-string":  # intstr's own UnmarshalJSON decodes a non-string into an int32
            message = f"json: cannot unmarshal {json_kind(value)} into Go value of type int32"
        else:
            message = f"json: cannot unmarshal {json_kind(value)} into Go struct field {owner}.{where} of type {_go_type(t, name)}"
        raise DecodeError(message, path, t, value)
    if value is None or t == "any":
        return
    if t == "quantity":
        try:
            parse_quantity(value)
        except ValueError as exc:
            raise DecodeError(str(exc), path, t, value) from None
        return
    if t == "int-or-string" and isinstance(value, float):
        if not value.is_integer():
            raise DecodeError(f"json: cannot unmarshal {json_kind(value)} into Go value of type int32", path, t, value)
        return
    if t == "date-time":
        if parse_iso_safe(value) is None:
            raise DecodeError(f'parsing time "{value}" as "2006-01-02T15:04:05Z07:00": cannot parse "{value}" as "2006"', path, t, value)
        return
    if t.startswith("["):
        inner = t[1:-1]
        for i, item in enumerate(value):
            if item is None:
                value[i] = item = _zero(inner)
            _walk(item, inner, f"{path}[{i}]", go_path, found, prune, owner)
        return
    if t.startswith("{"):
        inner = t[1:-1]
        for k in list(value):
            if value[k] is None:
                value[k] = _zero(inner)
            _walk(value[k], inner, f"{path}.{k}" if path else k, go_path, found, prune, owner)
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
        if value[key] is None:
            del value[key]  # null is Go's zero value: an unset pointer, an empty struct
            continue
        _walk(value[key], fields[key], sub, [*go_path, key], found, prune, short_name(t))


def decode_error(kind: str, api_version: str, message: str) -> ApiError:
    """The BadRequest a create or update gets when its body does not decode into the kind."""
    version = api_version.rsplit("/", 1)[-1]
    return ApiError(400, "BadRequest", f'{kind} in version "{version}" cannot be handled as a {kind}: {message}')


def patch_invalid(patch: Any, message: str) -> ApiError:
    """A patch whose result does not decode into the kind: the patch handler's 422 on the ``patch`` field.

    The Status names no kind or object (``NewInvalid(schema.GroupKind{}, "", ...)``),
    so kubectl prints ``The request is invalid: patch: Invalid value: "map[...]": ...``.
    """
    value = go_format(patch).replace('"', '\\"')
    cause = {"reason": "FieldValueInvalid", "message": f'Invalid value: "{value}": {message}', "field": "patch"}
    return ApiError(422, "Invalid", f' "" is invalid: patch: Invalid value: "{value}": {message}', details={"causes": [cause]})


def strict_message(unknown: list[str]) -> str:
    return "strict decoding error: " + ", ".join(f'unknown field "{p}"' for p in unknown)


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
