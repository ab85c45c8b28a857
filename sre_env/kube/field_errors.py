"""Field errors as the API server words them, and the ``Invalid`` Status they make.

A refused write names each bad field (apimachinery's ``field.Error``): the path
(``spec.template.spec.containers[0].image``), the kind of problem and, for some
kinds, the bad value as Go prints it and a detail::

    spec.selector: Required value
    spec.replicas: Invalid value: -1: must be greater than or equal to 0
    spec.type: Unsupported value: "Cluster": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"

The Status of a refused write (``NewInvalid``) says ``Deployment.apps "web" is
invalid: <errors>`` -- one error as is, several as ``[a, b]``, repeats dropped --
and carries each error as a cause with the kind and name in ``details``; kubectl
prints it from the details (``The Deployment "web" is invalid: ...``, one cause
per ``* `` line when there are several). :func:`invalid` builds that error.

Go's formatting of a bad value: a string is quoted (``%q``), a number or bool
printed plainly, ``null`` for nil; structs and maps the validation code prints
with ``%#v`` or their ``String()`` are passed already rendered as :class:`GoText`
(:func:`go_string_map`, :func:`go_label_selector`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from sre_env.errors import ApiError

__all__ = [
    "FieldError", "GoText", "aggregate", "duplicate", "forbidden", "go_label_selector", "go_quote",
    "go_string_map", "invalid", "invalid_value", "not_found", "not_supported", "required", "too_long", "too_many",
]

#: the ``field.ErrorType`` values (the Status causes' ``reason``) and how each message begins
_TYPES = {
    "FieldValueNotFound": "Not found",
    "FieldValueRequired": "Required value",
    "FieldValueDuplicate": "Duplicate value",
    "FieldValueInvalid": "Invalid value",
    "FieldValueNotSupported": "Unsupported value",
    "FieldValueForbidden": "Forbidden",
    "FieldValueTooLong": "Too long",
    "FieldValueTooMany": "Too many",
}
#: the types whose message never shows the value
_NO_VALUE = {"FieldValueRequired", "FieldValueForbidden", "FieldValueTooLong"}


@dataclass(frozen=True)
class GoText:
    """A value already printed the way the Go validation code prints it (a struct, a map)."""

    text: str


def go_quote(text: str) -> str:
    """Go's ``%q`` of a string (close enough: JSON's escapes, non-ASCII kept)."""
    return json.dumps(text, ensure_ascii=False)


def _go_value(value: Any) -> str:
    if isinstance(value, GoText):
        return value.text
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value) if isinstance(value, float) and not value.is_integer() else str(int(value))
    if isinstance(value, str):
        return go_quote(value)
    return go_quote(json.dumps(value, sort_keys=True, separators=(",", ":")))


def go_string_map(labels: Any) -> GoText:
    """A ``map[string]string`` as ``%#v`` prints it: ``map[string]string{"app":"web"}`` (nil: ``map[string]string(nil)``)."""
    if labels is None:
        return GoText("map[string]string(nil)")
    items = ", ".join(f"{go_quote(str(k))}:{go_quote(str(v))}" for k, v in sorted(labels.items()))
    return GoText("map[string]string{" + items + "}")


def go_label_selector(selector: Any) -> GoText:
    """A ``*metav1.LabelSelector`` as a field error prints it: dereferenced, with ``%#v``; nil is ``"null"``.

    ``v1.LabelSelector{MatchLabels:map[string]string{"app":"web"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}``
    """
    if selector is None:
        return GoText('"null"')
    exprs = selector.get("matchExpressions")
    if exprs is None:
        rendered = "[]v1.LabelSelectorRequirement(nil)"
    else:
        items = []
        for req in exprs:
            values = req.get("values")
            vals = "[]string(nil)" if values is None else "[]string{" + ", ".join(go_quote(str(v)) for v in values) + "}"
            items.append(f"v1.LabelSelectorRequirement{{Key:{go_quote(str(req.get('key', '')))}, Operator:{go_quote(str(req.get('operator', '')))}, Values:{vals}}}")
        rendered = "[]v1.LabelSelectorRequirement{" + ", ".join(items) + "}"
    return GoText(f"v1.LabelSelector{{MatchLabels:{go_string_map(selector.get('matchLabels')).text}, MatchExpressions:{rendered}}}")


_OMIT = object()


@dataclass(frozen=True)
class FieldError:
    """One bad field: ``type`` is the cause's reason (``FieldValueRequired``), ``field`` its path."""

    type: str
    field: str
    value: Any = _OMIT
    detail: str = ""

    def body(self) -> str:
        """The message without the field (``ErrorBody``): what a Status cause's ``message`` holds."""
        head = _TYPES[self.type]
        text = head if self.type in _NO_VALUE or self.value is _OMIT else f"{head}: {_go_value(self.value)}"
        return f"{text}: {self.detail}" if self.detail else text

    def __str__(self) -> str:
        return f"{self.field}: {self.body()}"

    def cause(self) -> dict[str, str]:
        return {"reason": self.type, "message": self.body(), "field": self.field}


def required(path: str, detail: str = "") -> FieldError:
    return FieldError("FieldValueRequired", path, detail=detail)


def invalid_value(path: str, value: Any, detail: str) -> FieldError:
    return FieldError("FieldValueInvalid", path, value, detail)


def not_supported(path: str, value: Any, supported: tuple[str, ...] | list[str]) -> FieldError:
    detail = "supported values: " + ", ".join(go_quote(v) for v in supported) if supported else ""
    return FieldError("FieldValueNotSupported", path, value, detail)


def forbidden(path: str, detail: str) -> FieldError:
    return FieldError("FieldValueForbidden", path, detail=detail)


def duplicate(path: str, value: Any) -> FieldError:
    return FieldError("FieldValueDuplicate", path, value)


def not_found(path: str, value: Any) -> FieldError:
    return FieldError("FieldValueNotFound", path, value)


def too_long(path: str, limit: int) -> FieldError:
    return FieldError("FieldValueTooLong", path, detail=f"may not be more than {limit} bytes")  # apimachinery 1.32


def too_many(path: str, count: int, limit: int) -> FieldError:
    return FieldError("FieldValueTooMany", path, count, f"must have at most {limit} items")


def aggregate(errors: list[FieldError]) -> str:
    """``utilerrors.NewAggregate(...).Error()``: one message as is, several as ``[a, b]``, repeats dropped."""
    seen: list[str] = []
    for e in errors:
        if str(e) not in seen:
            seen.append(str(e))
    return seen[0] if len(seen) == 1 else "[" + ", ".join(seen) + "]"


def invalid(kind: str, group: str, name: str, errors: list[FieldError]) -> ApiError:
    """The 422 ``Invalid`` error for ``errors`` on the object (``NewInvalid``), with its details and causes."""
    qualified = f"{kind}.{group}" if group else kind
    details: dict[str, Any] = {"name": name, **({"group": group} if group else {}), "kind": kind, "causes": [e.cause() for e in errors]}
    return ApiError(422, "Invalid", f"{qualified} {go_quote(name)} is invalid: {aggregate(errors)}", details=details)
