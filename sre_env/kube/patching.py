"""The three patch types of the Kubernetes API: strategic merge, JSON merge, JSON patch.

JSON patch uses the ``jsonpatch`` library (RFC 6902). Strategic merge follows the
merge keys of the core types that agents actually patch (containers and env by
``name``, container ports by ``containerPort``, service ports by ``port``); lists
without a merge key are replaced, ``null`` deletes a key, and
``$patch: delete`` / ``$patch: replace`` directives are honoured.
"""

from __future__ import annotations

import copy
from typing import Any

import jsonpatch

__all__ = ["strategic_merge", "json_merge", "json_patch", "PatchError"]

# field name -> merge key, for list fields of the core types.
_MERGE_KEYS = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "env": "name",
    "volumes": "name",
    "volumeMounts": "mountPath",
    "imagePullSecrets": "name",
    "conditions": "type",
    "hostAliases": "ip",
    "envFrom": None,
}


class PatchError(ValueError):
    """A patch that cannot be applied; the message is what the API server reports."""


def json_merge(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = json_merge(out.get(key), value)
    return out


def _merge_key(field: str, items: list[Any]) -> str | None:
    if field == "ports":
        sample = next((i for i in items if isinstance(i, dict)), {})
        return "containerPort" if "containerPort" in sample else "port"
    return _MERGE_KEYS.get(field)


def strategic_merge(target: Any, patch: Any, field: str = "") -> Any:
    if not isinstance(patch, dict):
        if isinstance(patch, list) and isinstance(target, list):
            return _merge_list(target, patch, field)
        return copy.deepcopy(patch)
    if patch.get("$patch") == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
    out = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if key.startswith("$"):
            continue
        if value is None:
            out.pop(key, None)
        elif isinstance(value, list) and isinstance(out.get(key), list):
            out[key] = _merge_list(out[key], value, key)
        else:
            out[key] = strategic_merge(out.get(key), value, key)
    retain = patch.get("$retainKeys")
    if isinstance(retain, list):
        # kubectl apply's union-type directive (a Deployment strategy switched to Recreate drops rollingUpdate)
        out = {k: v for k, v in out.items() if k in retain}
    return out


def _merge_list(target: list[Any], patch: list[Any], field: str) -> list[Any]:
    key = _merge_key(field, target + patch)
    if key is None or not all(isinstance(i, dict) for i in target + patch):
        return copy.deepcopy(patch)
    out = [copy.deepcopy(i) for i in target]
    for item in patch:
        if key not in item:
            raise PatchError(f"map: {item} does not contain declared merge key: {key}")
        idx = next((n for n, cur in enumerate(out) if cur.get(key) == item[key]), None)
        directive = item.get("$patch")
        if directive == "delete":
            if idx is not None:
                out.pop(idx)
            continue
        if idx is None:
            out.append({k: copy.deepcopy(v) for k, v in item.items() if k != "$patch"})
        else:
            out[idx] = strategic_merge(out[idx], item, field)
    return out


def json_patch(target: dict[str, Any], ops: Any) -> dict[str, Any]:
    if not isinstance(ops, list):
        raise PatchError("json: cannot unmarshal object into Go value of type jsonpatch.Patch")
    try:
        return jsonpatch.apply_patch(target, ops, in_place=False)
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, TypeError, KeyError) as exc:
        raise PatchError(str(exc)) from None
