"""Writes with the API server's request options: field validation, dry run, server-side apply.

``kube_api`` decodes create (POST), replace (PUT) and patch (PATCH) requests
and hands them here:

- ``fieldValidation`` (``kube_fields``): unknown fields refused, dropped with a
  ``Warning`` header, or dropped; wrong JSON types always refused.
- ``dryRun=All`` (``kubectl diff``, ``--dry-run=server``): the write runs on a
  fork of the simulated cluster, so defaulting, admission and validation answer
  as they would, and nothing is persisted.
- ``application/apply-patch+yaml`` (``kubectl apply --server-side``): the
  applied configuration is merged into the live object (maps field by field,
  the keyed lists — containers, env, volumes, ports — item by item, other lists
  replaced), fields the same manager applied before and no longer applies are
  removed, and the manager's fields are recorded in ``metadata.managedFields``;
  an absent object is created. One field manager is modelled: applies never
  conflict.
"""

from __future__ import annotations

import copy
import json
import re
from typing import TYPE_CHECKING, Any

import yaml

from sre_env.errors import ApiError
from sre_env.kube.kinds import CUSTOM_KINDS, KindInfo
from sre_env.kube.patching import PatchError, json_merge, json_patch, strategic_merge
from sre_env.kube.timefmt import iso

from sre_env.kube.decoding import DecodeError, decode, json_kind
from sre_env.kube.limits import SIM_MAX_DEPTH, load_yaml, nesting_depth

from .kube_fields import directive, validate_body, validate_patched, warnings_for

if TYPE_CHECKING:
    from sre_env.sim.backend import SimBackend

__all__ = ["apply_fields", "create", "patch", "replace", "server_side_apply", "ssa_merge"]

Obj = dict[str, Any]
Query = dict[str, list[str]]

#: keyed lists (``x-kubernetes-list-type: map``) and their keys; with a default for a key the client may omit
_LIST_KEYS: dict[str, tuple[str, ...]] = {
    "containers": ("name",),
    "initContainers": ("name",),
    "ephemeralContainers": ("name",),
    "env": ("name",),
    "volumes": ("name",),
    "volumeMounts": ("mountPath",),
    "imagePullSecrets": ("name",),
    "conditions": ("type",),
}
_KEY_DEFAULTS = {"protocol": "TCP"}


def _arg(q: Query, key: str) -> str:
    return (q.get(key) or [""])[0]


def _target(backend: SimBackend, q: Query) -> SimBackend:
    """The cluster a write goes to: a throwaway fork for ``dryRun=All``."""
    dry = _arg(q, "dryRun")
    if not dry:
        return backend
    if dry != "All":
        raise ApiError(400, "BadRequest", f'dryRun: Unsupported value: "{dry}": supported values: "All"')
    return backend.fork()


def _status_of(obj: Obj, live: Obj | None, kind: str) -> Obj:
    """A write to the main resource does not write status (the ``status`` subresource does): the live one stays."""
    if kind in CUSTOM_KINDS:
        return obj
    if live is not None and "status" in live:
        obj["status"] = copy.deepcopy(live["status"])
    else:
        obj.pop("status", None)
    return obj


def _comparable(obj: Obj) -> Obj:
    out = copy.deepcopy(obj)
    meta = out.get("metadata") or {}
    for key in ("resourceVersion", "generation"):
        meta.pop(key, None)
    for entry in meta.get("managedFields") or ():
        if isinstance(entry, dict):
            entry.pop("time", None)
    return out


def _store(target: SimBackend, new: Obj, live: Obj) -> Obj:
    """Replace ``live`` with ``new``, unless nothing changes: the API server then writes nothing (same resourceVersion)."""
    if _comparable(new) == _comparable(live):
        return live
    return target.api.replace(new)


def _kept_version(result: Obj, live: Obj | None, q: Query) -> Obj:
    """A dry-run update is not stored: the object keeps the live resourceVersion."""
    if _arg(q, "dryRun") and live is not None:
        result = copy.deepcopy(result)
        result["metadata"]["resourceVersion"] = live["metadata"].get("resourceVersion", "")
    return result


def create(backend: SimBackend, info: KindInfo, obj: Any, q: Query) -> tuple[Obj, list[str]]:
    """POST: validated body, created (on a fork when dry run); the warnings for the client."""
    if not isinstance(obj, dict):
        raise ApiError(400, "BadRequest", f"json: cannot unmarshal {json_kind(obj)} into Go value of type struct")
    obj.setdefault("kind", info.kind)
    obj.setdefault("apiVersion", info.api_version)
    mode = directive(_arg(q, "fieldValidation"))
    dropped = validate_body(obj, mode)
    return _target(backend, q).api.create(_status_of(obj, None, info.kind)), warnings_for(dropped, mode)


def replace(backend: SimBackend, info: KindInfo, obj: Any, q: Query) -> tuple[Obj, list[str]]:
    """PUT: validated body replacing the stored object."""
    if not isinstance(obj, dict):
        raise ApiError(400, "BadRequest", f"json: cannot unmarshal {json_kind(obj)} into Go value of type struct")
    obj.setdefault("kind", info.kind)
    mode = directive(_arg(q, "fieldValidation"))
    warnings = warnings_for(validate_body(obj, mode), mode)
    target = _target(backend, q)
    meta = obj.get("metadata") or {}
    live = backend.world.store.find(info.kind, str(meta.get("name", "")), meta.get("namespace"))
    if live is None:
        return target.api.replace(obj), warnings  # the store reports the missing object
    return _kept_version(_store(target, _status_of(obj, live, info.kind), live), live, q), warnings


def patch(backend: SimBackend, info: KindInfo, name: str, namespace: str | None, body: Any, ptype: str, q: Query) -> tuple[Obj, list[str]]:
    """Strategic, merge or JSON patch: the patched object is decoded (validated) before it is stored."""
    mode = directive(_arg(q, "fieldValidation"))
    target = _target(backend, q)
    live = target.api.get(info.kind, name, namespace)
    try:
        preview = {"json": json_patch, "merge": json_merge, "strategic": strategic_merge}[ptype](copy.deepcopy(live), body)
    except (PatchError, KeyError):
        preview = None  # the store reports it, worded as the API server words it
    if preview is None or not isinstance(preview, dict) or (ptype == "strategic" and info.kind in CUSTOM_KINDS):
        return target.api.patch(info.kind, name, namespace, body, ptype), []
    dropped = validate_patched(preview, body, mode)
    if preview.get("kind") != info.kind or (preview.get("metadata") or {}).get("name") != name:
        return target.api.patch(info.kind, name, namespace, body, ptype), []  # refused as the store words it
    # stored as the store's patch stores it, less the dropped unknown fields and any status change
    result = _store(target, _status_of(preview, live, info.kind), live)
    return _kept_version(result, live, q), warnings_for(dropped, mode)


# ---------------------------------------------------------------- server-side apply
def server_side_apply(backend: SimBackend, info: KindInfo, name: str, namespace: str | None, body: bytes, q: Query) -> tuple[int, Obj]:
    """``application/apply-patch+yaml``: create or merge the applied configuration, as its field manager."""
    manager = _arg(q, "fieldManager")
    if not manager:
        raise ApiError(400, "BadRequest", "PATCH requests with apply content type must specify fieldManager")
    directive(_arg(q, "fieldValidation"))
    try:
        text = body.decode("utf-8") if body else ""
        depth, line = nesting_depth(text, yaml=True, limit=SIM_MAX_DEPTH)
        if depth > SIM_MAX_DEPTH:  # refused before parsing, as the YAML decoder refuses (sre_env.kube.limits)
            where = f"line {line}: " if line > 1 else ""
            raise ApiError(400, "BadRequest", f"error decoding YAML: yaml: {where}exceeded max depth of {SIM_MAX_DEPTH}")
        applied = load_yaml(text) if body else None  # aliases bounded too (sre_env.kube.limits)
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ApiError(400, "BadRequest", f"error decoding YAML: {str(exc).splitlines()[0]}") from None
    if not isinstance(applied, dict):
        raise ApiError(400, "BadRequest", "error decoding YAML: the applied configuration is not an object")
    meta = applied.setdefault("metadata", {})
    if not isinstance(meta, dict):
        raise ApiError(400, "BadRequest", "error decoding YAML: metadata is not an object")
    if meta.get("name") not in (None, name):
        raise ApiError(400, "BadRequest", f"the name of the object ({meta.get('name')}) does not match the name on the URL ({name})")
    meta["name"] = name
    if namespace:
        meta["namespace"] = namespace
    applied.setdefault("kind", info.kind)
    applied.setdefault("apiVersion", info.api_version)
    where = f"{namespace}/{name}" if namespace else name
    gv = info.api_version if "/" in info.api_version else "/" + info.api_version
    typed = f"failed to create typed patch object ({gv}, Kind={info.kind}) {where}"
    try:
        found = decode(copy.deepcopy(applied), prune=False)
    except DecodeError as exc:
        raise ApiError(400, "BadRequest", f"{typed}: .{_keyed_path(applied, exc.path)}: {_expected(exc.expected, exc.value)}") from None
    if found.unknown:
        errors = [f".{_keyed_path(applied, p)}: field not declared in schema" for p in found.unknown]
        raise ApiError(400, "BadRequest", f"{typed}: " + (errors[0] if len(errors) == 1 else "\n".join(["errors:", *("  " + e for e in errors)])))
    target = _target(backend, q)
    fields = apply_fields(applied)
    entry = {"manager": manager, "operation": "Apply", "apiVersion": info.api_version, "time": iso(backend.now), "fieldsType": "FieldsV1", "fieldsV1": fields}
    live = target.world.store.find(info.kind, name, namespace)
    if live is None:
        obj = copy.deepcopy(applied)
        obj["metadata"]["managedFields"] = [entry]
        return 201, target.api.create(_status_of(obj, None, info.kind))
    merged = ssa_merge(copy.deepcopy(live), applied)
    entries = [e for e in (live["metadata"].get("managedFields") or []) if isinstance(e, dict)]
    before = next((e.get("fieldsV1") or {} for e in entries if e.get("manager") == manager and e.get("operation") == "Apply"), {})
    _remove_dropped(merged, before, fields)
    merged["metadata"]["managedFields"] = [*(e for e in entries if not (e.get("manager") == manager and e.get("operation") == "Apply")), entry]
    merged["metadata"]["resourceVersion"] = live["metadata"].get("resourceVersion")
    return 200, _kept_version(_store(target, _status_of(merged, live, info.kind), live), live, q)


def _keyed_path(obj: Any, path: str) -> str:
    """``spec.containers[0].imagee`` as structured-merge-diff names it: ``spec.containers[name="c"].imagee``."""
    out: list[str] = []
    for part in re.findall(r"[^.\[\]]+|\[\d+\]", path):
        if part.startswith("[") and isinstance(obj, list):
            item = obj[int(part[1:-1])]
            key = _item_key(out[-1].lstrip(".") if out else "", item) if out else None
            out.append("[" + ",".join(f"{k}={json.dumps(v)}" for k, v in json.loads(key[2:]).items()) + "]" if key else part)
            obj = item
        else:
            out.append(("." if out else "") + part)
            obj = obj.get(part) if isinstance(obj, dict) else None
    return "".join(out)


def _expected(t: str, value: Any) -> str:
    want = "list" if t.startswith("[") else "map" if t.startswith("{") or "." in t else {"integer": "numeric (int or float)", "number": "numeric (int or float)", "boolean": "boolean"}.get(t, "string")
    got = {str: "string", bool: "bool", list: "list", dict: "map"}.get(type(value), "&value.valueUnstructured{Value:" + str(value) + "}")
    return f"expected {want}, got {got}"


def _item_key(field: str, item: Any) -> str | None:
    keys = _LIST_KEYS.get(field)
    if field == "ports" and isinstance(item, dict):
        keys = ("containerPort", "protocol") if "containerPort" in item else ("port", "protocol")
    if not keys or not isinstance(item, dict) or keys[0] not in item:
        return None
    return "k:" + json.dumps({k: item.get(k, _KEY_DEFAULTS.get(k)) for k in keys}, separators=(",", ":"), sort_keys=True)


def ssa_merge(live: Any, applied: Any, field: str = "") -> Any:
    """The applied configuration merged into the live object: maps by field, keyed lists by item."""
    if isinstance(live, dict) and isinstance(applied, dict):
        for key, value in applied.items():
            live[key] = ssa_merge(live.get(key), value, key) if key in live else copy.deepcopy(value)
        return live
    keyed = field in _LIST_KEYS or field == "ports"
    if isinstance(live, list) and isinstance(applied, list) and keyed and all(_item_key(field, i) for i in applied):
        out = list(live)
        index = {_item_key(field, item): n for n, item in enumerate(out)}
        for item in applied:
            k = _item_key(field, item)
            if k in index:
                out[index[k]] = ssa_merge(out[index[k]], item, field)
            else:
                out.append(copy.deepcopy(item))
        return out
    return copy.deepcopy(applied)


def apply_fields(obj: Any, field: str = "") -> Obj:
    """The FieldsV1 set of an applied configuration (``{"f:spec": {"f:replicas": {}}}``)."""
    if isinstance(obj, dict):
        out: Obj = {}
        for key, value in obj.items():
            if field == "" and key in ("apiVersion", "kind"):
                continue
            if field == "" and key == "metadata":
                value = {k: v for k, v in (value or {}).items() if k in ("labels", "annotations")}
                if not value:
                    continue
            out[f"f:{key}"] = apply_fields(value, key)
        return out
    if isinstance(obj, list) and obj and (field in _LIST_KEYS or field == "ports") and all(_item_key(field, i) for i in obj):
        return {str(_item_key(field, i)): {".": {}, **apply_fields(i, field)} for i in obj}
    return {}


def _remove_dropped(obj: Any, before: Obj, now: Obj) -> None:
    """Drop what the manager applied before and applies no more."""
    if isinstance(obj, dict):
        for key, sub in before.items():
            if not key.startswith("f:"):
                continue
            name = key[2:]
            if key not in now:
                obj.pop(name, None)
            elif sub and name in obj:
                _remove_dropped(obj[name], sub, now[key])
        return
    if isinstance(obj, list):
        field_keys = {k for k in before if k.startswith("k:")}
        for k in field_keys:
            idx = next((n for n, item in enumerate(obj) if _matches(item, k)), None)
            if idx is None:
                continue
            if k not in now:
                obj.pop(idx)
            else:
                _remove_dropped(obj[idx], before[k], now[k])


def _matches(item: Any, key: str) -> bool:
    want = json.loads(key[2:])
    return isinstance(item, dict) and all(item.get(k, _KEY_DEFAULTS.get(k)) == v for k, v in want.items())
