"""Admission's validation step: which writes the API server refuses, and with which errors.

Every create and update the API server accepts has first passed its kind's
validation (``pkg/apis/*/validation``); the refused ones get a 422 whose causes
name each bad field (:mod:`sre_env.kube.field_errors`). This module holds the
*rules* as data -- a small vocabulary of checks (:class:`Required`,
:class:`OneOf`, :class:`Min`, :class:`Port`, :class:`Name`, :class:`Unique`,
selector and label checks, :class:`Immutable` ...) addressed by field paths
(``spec.template.spec.containers[*].image``) -- and the functions that run them:

- :func:`validate_create` -- an object about to be created (after defaulting);
- :func:`validate_update` -- an object about to replace ``old``: the same checks,
  the kind's immutable fields, and the ``metadata`` that may not change;
- :func:`invalid_error` -- the API server's error for what they found.

The rules per kind are in :mod:`sre_env.kube.validation_rules`, in the order the
API server reports them. Values the API server defaults before it validates
(a pod's ``restartPolicy``, a Service's ``type``) are read with their default.
The REQUIRED table of :mod:`sre_env.kube.api_types` (what the OpenAPI marks
required) adds ``Required value`` for required strings and lists anywhere in an
object that the kind's rules do not already cover.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from sre_env.errors import ApiError

from .api_types import REQUIRED, ROOTS, TYPES
from .field_errors import (
    FieldError,
    duplicate,
    forbidden,
    go_label_selector,
    go_string_map,
    invalid,
    invalid_value,
    not_supported,
    required,
    too_long,
)
from .kinds import kind_info
from .limits import MAX_ANNOTATIONS_BYTES
from .names import is_dns1123_label, is_label_value, is_qualified_name, name_problems

__all__ = [
    "Annotations", "Check", "Forbid", "Immutable", "KindRules", "LabelSelectorValid", "Labels", "Min", "Name", "OneOf",
    "Port", "Range", "Required", "Rule", "SelectorMatches", "SelectorNotEmpty", "SelectorRequired", "Unique", "UpdateRule",
    "invalid_error", "is_ip", "locations", "validate_create", "validate_update",
]

Obj = dict[str, Any]
_MISSING = object()
_TOKEN = re.compile(r"[^.\[\]]+|\[\*\]")


# ---------------------------------------------------------------- paths
def locations(obj: Any, path: str) -> Iterator[tuple[str, Any]]:
    """Each concrete (path, value) ``path`` names in ``obj``; ``[*]`` ranges over a list's items.

    A missing field yields the missing marker at its path, and so does a field
    under a missing parent -- a missing struct is Go's zero value, so a check of
    ``spec.template.spec.containers`` sees the field of an empty spec -- except
    below a ``[*]`` (an absent list has no items) or a name marked ``?`` (a
    pointer: ``envFrom[*].secretRef?.name`` is checked only where ``secretRef`` is set).
    """
    frontier: list[tuple[str, Any]] = [("", obj)]
    for tok in _TOKEN.findall(path):
        nxt: list[tuple[str, Any]] = []
        for where, value in frontier:
            if tok == "[*]":
                if isinstance(value, list):
                    nxt.extend((f"{where}[{i}]", item) for i, item in enumerate(value))
                continue
            name, pointer = (tok[:-1], True) if tok.endswith("?") else (tok, False)
            child = value.get(name, _MISSING) if isinstance(value, dict) else _MISSING
            if pointer and (child is _MISSING or child is None):
                continue
            nxt.append((f"{where}.{name}" if where else name, child))
        frontier = nxt
    yield from frontier


def _absent(value: Any) -> bool:
    return value is _MISSING or value is None or value == "" or value == [] or value == {}


def _present(value: Any) -> bool:
    return value is not _MISSING and value is not None


# ---------------------------------------------------------------- the checks
class Check:
    """One rule: ``errors(obj, old)`` is what it finds (``old``: the stored object, on an update)."""

    def errors(self, obj: Obj, old: Obj | None) -> list[FieldError]:  # pragma: no cover - interface
        raise NotImplementedError


@dataclass(frozen=True)
class Required(Check):
    """The field must be set and not empty (``detail`` after ``Required value:``)."""

    path: str
    detail: str = ""

    def errors(self, obj: Obj, old: Obj | None) -> list[FieldError]:
        return [required(p, self.detail) for p, v in locations(obj, self.path) if _absent(v)]


@dataclass(frozen=True)
class OneOf(Check):
    """An enumerated field: one of ``values`` (read with ``default`` when unset).

    ``required``: an unset one (with no default) is ``Required value``. ``detail``:
    the API words this one's refusal as an ``Invalid value`` with this detail
    instead of ``Unsupported value: ... supported values: ...``.
    """

    path: str
    values: tuple[str, ...]
    default: str | None = None
    required: bool = False
    detail: str = ""

    def errors(self, obj: Obj, old: Obj | None) -> list[FieldError]:
        out = []
        for p, v in locations(obj, self.path):
            if _absent(v):
                v = self.default
            if v is None or v == "":
                if self.required:
                    out.append(required(p))
                continue
            if v not in self.values:
                out.append(invalid_value(p, v, self.detail) if self.detail else not_supported(p, v, self.values))
        return out


@dataclass(frozen=True)
class Min(Check):
    """A number at least ``minimum`` when set (``must be greater than or equal to 0``)."""

    path: str
    minimum: int = 0
    detail: str = ""

    def errors(self, obj: Obj, old: Obj | None) -> list[FieldError]:
        detail = self.detail or f"must be greater than or equal to {self.minimum}"
        return [invalid_value(p, v, detail) for p, v in locations(obj, self.path) if _is_number(v) and v < self.minimum]


@dataclass(frozen=True)
class Range(Check):
    """A number in [lo, hi] when set (``must be between 1 and 2147483647, inclusive``)."""

    path: str
    lo: int
    hi: int

    def errors(self, obj: Obj, old: Obj | None) -> list[FieldError]:
        return [invalid_value(p, v, f"must be between {self.lo} and {self.hi}, inclusive") for p, v in locations(obj, self.path) if _is_number(v) and not self.lo <= v <= self.hi]


@dataclass(frozen=True)
class Port(Check):
    """A port number 1-65535 when set (0 is unset; ``required``: then ``Required value``); ``named``: or an IANA port name."""

    path: str
    required: bool = False
    named: bool = False

    def errors(self, obj: Obj, old: Obj | None) -> list[FieldError]:
        from .names import is_port_name

        out = []
        for p, v in locations(obj, self.path):
            if v is _MISSING or v is None or v == 0 or v == "":
                if self.required:
                    out.append(required(p))
            elif isinstance(v, str) and self.named and not v.isdigit():
                out += [invalid_value(p, v, m) for m in is_port_name(v)]
            elif _is_number(v) or isinstance(v, str) and v.isdigit():
                n = int(v)
                if not 1 <= n <= 65535:
                    out.append(invalid_value(p, n, "must be between 1 and 65535, inclusive"))
            elif not self.named:
                out.append(invalid_value(p, v, "must be between 1 and 65535, inclusive"))
        return out


@dataclass(frozen=True)
class Name(Check):
    """A name-like string checked by ``rule`` (a function giving the problems) when set."""

    path: str
    rule: Callable[[str], list[str]]
    required: bool = False

    def errors(self, obj: Obj, old: Obj | None) -> list[FieldError]:
        out = []
        for p, v in locations(obj, self.path):
            if _absent(v):
                if self.required:
                    out.append(required(p))
                continue
            out += [invalid_value(p, v, m) for m in self.rule(str(v))]
        return out


@dataclass(frozen=True)
class Unique(Check):
    """No two items of the lists at ``paths`` (together) share ``key`` (``Duplicate value``)."""

    paths: tuple[str, ...]
    key: str

    def errors(self, obj: Obj, old: Obj | None) -> list[FieldError]:
        seen: set[Any] = set()
        out = []
        for lp in self.paths:
            for p, item in locations(obj, lp + "[*]"):
                v = item.get(self.key) if isinstance(item, dict) else None
                if _absent(v):
                    continue
                if v in seen:
                    out.append(duplicate(f"{p}.{self.key}", v))
                seen.add(v)
        return out


@dataclass(frozen=True)
class Forbid(Check):
    """The field may not be set here (``Forbidden: <detail>``); ``unless`` another path has one of some values."""

    path: str
    detail: str
    unless: tuple[str, tuple[Any, ...]] | None = None

    def errors(self, obj: Obj, old: Obj | None) -> list[FieldError]:
        if self.unless is not None:
            other = next(iter(locations(obj, self.unless[0])), ("", _MISSING))[1]
            if other in self.unless[1]:
                return []
        return [forbidden(p, self.detail) for p, v in locations(obj, self.path) if _present(v) and v != 0]


def _label_map_errors(path: str, labels: Any) -> list[FieldError]:
    out: list[FieldError] = []
    if isinstance(labels, dict):
        for k, v in labels.items():
            out += [invalid_value(path, k, m) for m in is_qualified_name(str(k))]
            out += [invalid_value(path, v, m) for m in is_label_value(str(v))]
    return out


@dataclass(frozen=True)
class Labels(Check):
    """A label map: keys are qualified names, values label values (both reported on the map's path)."""

    path: str

    def errors(self, obj: Obj, old: Obj | None) -> list[FieldError]:
        return [e for p, labels in locations(obj, self.path) for e in _label_map_errors(p, labels)]


@dataclass(frozen=True)
class Annotations(Check):
    """Annotation keys are qualified names (case aside); together with the values at most 256 KiB."""

    path: str

    def errors(self, obj: Obj, old: Obj | None) -> list[FieldError]:
        out = []
        for p, ann in locations(obj, self.path):
            if not isinstance(ann, dict):
                continue
            for k in ann:
                out += [invalid_value(p, k, m) for m in is_qualified_name(str(k).lower())]
            if sum(len(str(k).encode()) + len(str(v).encode()) for k, v in ann.items()) > MAX_ANNOTATIONS_BYTES:
                out.append(too_long(p, MAX_ANNOTATIONS_BYTES))
        return out


_SELECTOR_OPS = ("In", "NotIn", "Exists", "DoesNotExist")


@dataclass(frozen=True)
class LabelSelectorValid(Check):
    """A ``metav1.LabelSelector``: its labels, and each requirement's operator and values."""

    path: str
    node: bool = False  # a node selector term: Gt and Lt too, keys checked the same way

    def errors(self, obj: Obj, old: Obj | None) -> list[FieldError]:
        out = []
        ops = (*_SELECTOR_OPS, "Gt", "Lt") if self.node else _SELECTOR_OPS
        for p, sel in locations(obj, self.path):
            if not isinstance(sel, dict):
                continue
            out += _label_map_errors(p + ".matchLabels", sel.get("matchLabels"))
            for i, req in enumerate(sel.get("matchExpressions") or ()):
                rp = f"{p}.matchExpressions[{i}]"
                if not isinstance(req, dict):
                    continue
                op, values = req.get("operator") or "", req.get("values") or []
                if op in ("In", "NotIn") and not values:
                    out.append(required(f"{rp}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
                elif op in ("Exists", "DoesNotExist") and values:
                    out.append(forbidden(f"{rp}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
                elif op not in ops:
                    out.append(invalid_value(f"{rp}.operator", op, "not a valid selector operator"))
                out += [invalid_value(f"{rp}.key", req.get("key", ""), m) for m in is_qualified_name(str(req.get("key") or ""))]
        return out


@dataclass(frozen=True)
class SelectorRequired(Check):
    """A workload's ``spec.selector``: a nil one is ``Required value``."""

    path: str

    def errors(self, obj: Obj, old: Obj | None) -> list[FieldError]:
        return [required(p) for p, v in locations(obj, self.path) if not _present(v)]


@dataclass(frozen=True)
class SelectorNotEmpty(Check):
    """A set selector must select something (``empty selector is invalid for deployment``)."""

    path: str
    what: str

    def errors(self, obj: Obj, old: Obj | None) -> list[FieldError]:
        return [
            invalid_value(p, go_label_selector(v), f"empty selector is invalid for {self.what}")
            for p, v in locations(obj, self.path)
            if isinstance(v, dict) and not (v.get("matchLabels") or v.get("matchExpressions"))
        ]


@dataclass(frozen=True)
class SelectorMatches(Check):
    """The selector must select the template's labels (a nil selector selects nothing)."""

    selector: str
    labels: str
    skip_empty: bool = True  # an empty (``{}``) selector is reported by SelectorNotEmpty instead

    def errors(self, obj: Obj, old: Obj | None) -> list[FieldError]:
        from .selectors import label_selector_matches

        sel = next(iter(locations(obj, self.selector)))[1]
        sel = sel if isinstance(sel, dict) else None
        if sel is not None and self.skip_empty and not (sel.get("matchLabels") or sel.get("matchExpressions")):
            return []
        out = []
        for p, labels in locations(obj, self.labels):
            labels = labels if isinstance(labels, dict) else None
            if not label_selector_matches(sel, labels or {}):
                out.append(invalid_value(p, go_string_map(labels), "`selector` does not match template `labels`"))
        return out


@dataclass(frozen=True)
class Rule(Check):
    """A check that needs more than a path (the function gets the object and returns its errors)."""

    fn: Callable[[Obj], list[FieldError]]

    def errors(self, obj: Obj, old: Obj | None) -> list[FieldError]:
        return self.fn(obj)


@dataclass(frozen=True)
class UpdateRule(Check):
    """A check of an update that needs the whole old object (``fn(obj, old)``; nothing on a create)."""

    fn: Callable[[Obj, Obj], list[FieldError]]

    def errors(self, obj: Obj, old: Obj | None) -> list[FieldError]:
        return [] if old is None else self.fn(obj, old)


@dataclass(frozen=True)
class Immutable(Check):
    """On an update the field may not change (``field is immutable``); ``when``: only if the old object says so."""

    path: str
    render: Callable[[Any], Any] = lambda v: v
    detail: str = "field is immutable"
    when: Callable[[Obj], bool] | None = None
    as_forbidden: bool = False

    def errors(self, obj: Obj, old: Obj | None) -> list[FieldError]:
        if old is None or (self.when is not None and not self.when(old)):
            return []
        new_at = dict(locations(obj, self.path))
        out = []
        for p, before in locations(old, self.path):
            after = new_at.get(p, _MISSING)
            if _norm(before) != _norm(after):
                if self.as_forbidden:
                    out.append(forbidden(p, self.detail))
                else:
                    out.append(invalid_value(p, self.render(None if after is _MISSING else after), self.detail))
        return out


def _norm(v: Any) -> Any:
    return None if v is _MISSING or v == {} or v == [] else v


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


# ---------------------------------------------------------------- metadata
def _meta_errors(obj: Obj, *, update: bool) -> list[FieldError]:
    """ObjectMeta: name (by the kind's rule) or generateName, namespace, labels, annotations, owners, finalizers."""
    kind = str(obj.get("kind", ""))
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    out: list[FieldError] = []
    name, gen = str(meta.get("name") or ""), str(meta.get("generateName") or "")
    if not update:
        if gen:
            out += [invalid_value("metadata.generateName", gen, m) for m in name_problems(kind, gen, prefix=True)]
        if not name and not gen:
            out.append(required("metadata.name", "name or generateName is required"))
        elif name:
            out += [invalid_value("metadata.name", name, m) for m in name_problems(kind, name)]
    try:
        namespaced = kind_info(kind).namespaced
    except KeyError:
        namespaced = False
    ns = meta.get("namespace")
    if namespaced and ns:
        out += [invalid_value("metadata.namespace", ns, m) for m in is_dns1123_label(str(ns))]
    out += Labels("metadata.labels").errors(obj, None)
    out += Annotations("metadata.annotations").errors(obj, None)
    for i, ref in enumerate(meta.get("ownerReferences") or ()):
        if not isinstance(ref, dict):
            continue
        version = str(ref.get("apiVersion") or "").rsplit("/", 1)[-1]
        for key, value, msg in (("apiVersion", version, "version must not be empty"), ("kind", ref.get("kind"), "must not be empty"), ("name", ref.get("name"), "must not be empty"), ("uid", ref.get("uid"), "must not be empty")):
            if not value:
                out.append(invalid_value(f"metadata.ownerReferences.{key}", ref.get(key) or "", msg))
    for f in meta.get("finalizers") or ():
        out += [invalid_value("metadata.finalizers", f, m) for m in is_qualified_name(str(f))]
    return out


def _meta_update_errors(obj: Obj, old: Obj) -> list[FieldError]:
    """What ``ValidateObjectMetaUpdate`` refuses: renames, moves, a new uid or creation time."""
    new_meta, old_meta = obj.get("metadata") or {}, old.get("metadata") or {}
    out = []
    for key in ("name", "namespace", "uid", "creationTimestamp"):
        before, after = old_meta.get(key), new_meta.get(key, old_meta.get(key))
        if before is not None and after != before:
            out.append(invalid_value(f"metadata.{key}", after, "field is immutable"))
    if old_meta.get("deletionTimestamp"):
        added = sorted(set(new_meta.get("finalizers") or ()) - set(old_meta.get("finalizers") or ()))
        if added:
            quoted = ", ".join(f'"{f}"' for f in added)
            out.append(forbidden("metadata.finalizers", f"no new finalizers can be added if the object is being deleted, found new finalizers []string{{{quoted}}}"))
    return out


# ---------------------------------------------------------------- required fields from the schema
def _schema_required(obj: Obj, skip: tuple[str, ...]) -> list[FieldError]:
    """``Required value`` for a required string or list the OpenAPI names, anywhere in ``obj``.

    Walks only what is present (a missing struct has no required fields of its
    own to report: the kind's rules say what its absence means); ``skip``: path
    prefixes the API server does not validate (a StatefulSet's pod template).
    """
    root = ROOTS.get(str(obj.get("kind", "")))
    if root is None:
        return []
    out: list[FieldError] = []
    stack: list[tuple[Any, str, str]] = [(obj, root, "")]
    while stack:
        value, t, path = stack.pop()
        if path == "status" or any(path == s or path.startswith(s + ".") or path.startswith(s + "[") for s in skip):
            continue  # a write to the main resource does not write status
        if t.startswith("[") and isinstance(value, list):
            stack.extend((item, t[1:-1], f"{path}[{i}]") for i, item in reversed(list(enumerate(value))))
            continue
        if t.startswith("{") and isinstance(value, dict):
            stack.extend((item, t[1:-1], f"{path}[{k}]") for k, item in value.items())
            continue
        fields = TYPES.get(t)
        if fields is None or not isinstance(value, dict):
            continue
        for key in REQUIRED.get(t, ()):
            ft = fields.get(key, "")
            if (ft == "string" or ft.startswith("[")) and _absent(value.get(key, _MISSING)):
                out.append(required(f"{path}.{key}" if path else key))
        for key, item in reversed(list(value.items())):
            if key in fields and isinstance(item, (dict, list)):
                stack.append((item, fields[key], f"{path}.{key}" if path else key))
    return out


# ---------------------------------------------------------------- entry points
@dataclass(frozen=True)
class KindRules:
    """A kind's validation: its checks in the API server's order, immutable fields, schema paths it skips."""

    checks: tuple[Check, ...] = ()
    immutable: tuple[Check, ...] = ()
    skip_schema: tuple[str, ...] = ()


def _rules(kind: str) -> KindRules:
    from .validation_rules import RULES

    return RULES.get(kind, KindRules())


def validate_create(obj: Obj) -> list[FieldError]:
    """Everything the API server would refuse in ``obj`` as a new object (empty: it is valid)."""
    rules = _rules(str(obj.get("kind", "")))
    out = _meta_errors(obj, update=False)
    for check in rules.checks:
        out += check.errors(obj, None)
    return out + _schema_required(obj, rules.skip_schema)


def validate_update(obj: Obj, old: Obj) -> list[FieldError]:
    """Everything the API server would refuse in ``obj`` replacing ``old`` (empty: the update is valid)."""
    rules = _rules(str(obj.get("kind", "")))
    out = _meta_update_errors(obj, old) + _meta_errors(obj, update=True)
    for check in rules.immutable:
        out += check.errors(obj, old)
    for check in rules.checks:
        out += check.errors(obj, old)
    return out + _schema_required(obj, rules.skip_schema)


def invalid_error(obj: Obj, errors: list[FieldError]) -> ApiError:
    """The 422 for ``errors`` on ``obj``: ``Deployment.apps "web" is invalid: ...`` with its causes."""
    kind = str(obj.get("kind", ""))
    try:
        group = kind_info(kind).group
    except KeyError:
        group = str(obj.get("apiVersion", "")).rpartition("/")[0]
    meta = obj.get("metadata") if isinstance(obj.get("metadata"), dict) else {}
    return invalid(kind, group, str(meta.get("name") or meta.get("generateName") or ""), errors)


def is_ip(value: str) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True

