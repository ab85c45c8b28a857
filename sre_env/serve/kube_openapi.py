"""The OpenAPI v3 documents the API server publishes, for the served kinds.

kubectl reads them before it writes: ``kubectl apply``/``create``/``replace``
validate by default, and kubectl 1.32 first fetches ``/openapi/v3`` and the
group-version's document to see whether the server validates fields itself (a
PATCH operation for the kind that takes the ``fieldValidation`` query
parameter). When it does, kubectl sends ``fieldValidation=Strict`` and leaves
validation to the server (``kube_fields``); otherwise it falls back to the
protobuf ``/openapi/v2`` this server does not publish and fails. ``kubectl
explain`` reads the same documents.

The documents are built from the kind table (``sre_env.kube.kinds``) and the
built-in types' fields (``sre_env.kube.api_types``): each kind's paths with their operations
(``x-kubernetes-action``, ``x-kubernetes-group-version-kind``), and
``components.schemas`` with one object schema per type. Custom resources get a
schema that keeps unknown fields. The PATCH operations list the JSON, merge and
apply patch types but not strategic merge: kubectl then computes ``apply``'s
strategic merge patch from its own compiled-in types rather than from these
schemas (which carry no patch merge keys).
"""

from __future__ import annotations

import hashlib
import json
from functools import cache, lru_cache
from typing import Any

from sre_env.kube.api_types import ROOTS, TYPES
from sre_env.kube.kinds import CUSTOM_KINDS, KINDS, KindInfo

from .kube_virtual import VIRTUAL

__all__ = ["gv_document", "gv_keys", "openapi_v3"]

Obj = dict[str, Any]

_REF = "#/components/schemas/"
_QUERY = {
    "dryRun": "When present, indicates that modifications should not be persisted. Valid value: All.",
    "fieldManager": "A name associated with the actor or entity making these changes.",
    "fieldValidation": "How the server handles unknown fields in the request body: Ignore, Warn (the default) or Strict.",
    "force": "Force an apply request to take fields owned by other managers (apply requests only).",
    "pretty": "If 'true', the output is pretty printed.",
}
#: short descriptions (ours) of the fields people ask ``kubectl explain`` about
_DESCRIBE = {
    "apiVersion": "The versioned schema of this representation of an object.",
    "kind": "The REST resource this object represents.",
    "metadata": "Standard object metadata: name, namespace, labels, annotations.",
    "spec": "The desired state of the object.",
    "status": "The most recently observed state of the object; read-only, written by the system.",
    "replicas": "The number of desired pods.",
    "selector": "Label selector for the pods this object manages; must match the template's labels.",
    "template": "The pod template: pods are created from it.",
    "containers": "The containers of the pod (at least one).",
    "image": "The container image name.",
    "env": "Environment variables to set in the container.",
    "ports": "The ports exposed (containers) or served (services).",
    "targetPort": "The port on the pods the service sends traffic to: a number or a named container port.",
    "resources": "Compute resources (requests and limits) of the container.",
    "command": "The entrypoint array; the image's ENTRYPOINT when not given.",
    "args": "Arguments to the entrypoint; the image's CMD when not given.",
    "data": "Key-value data.",
    "labels": "Map of string keys and values used to organize and select objects.",
    "annotations": "Unstructured key-value data stored with the object.",
}
#: scalar types with their own definitions, as the API's documents name them
_SHARED = {
    "int-or-string": ("io.k8s.apimachinery.pkg.util.intstr.IntOrString", {"description": "An int32 or a string.", "type": "string", "format": "int-or-string"}),
    "quantity": ("io.k8s.apimachinery.pkg.api.resource.Quantity", {"description": "A fixed-point number with an optional suffix (100m, 1Gi).", "type": "string"}),
}
_KIND_DESCRIPTION = "{kind} ({api_version}) as served by the simulated cluster."


#: the stored kinds and the derived read-only ones (``kube_virtual``)
_SERVED: tuple[KindInfo, ...] = (*KINDS, *(KindInfo(v.kind, v.plural, v.singular, v.short_names, True, v.api_version) for v in VIRTUAL))


def _gv(info: KindInfo) -> tuple[str, str]:
    return info.group, info.api_version.rsplit("/", 1)[-1]


def gv_keys() -> list[str]:
    """The index keys: ``api/v1``, ``apis/apps/v1`` ... one per served group-version."""
    keys: list[str] = []
    for info in _SERVED:
        group, version = _gv(info)
        key = f"apis/{group}/{version}" if group else f"api/{version}"
        if key not in keys:
            keys.append(key)
    return sorted(keys)


def _field_schema(t: str, name: str = "") -> Obj:
    out: Obj
    if t.startswith("["):
        out = {"type": "array", "items": _field_schema(t[1:-1])}
    elif t.startswith("{"):
        out = {"type": "object", "additionalProperties": _field_schema(t[1:-1])}
    elif t in TYPES:
        out = {"allOf": [{"$ref": _REF + t}], "default": {}}
    elif t == "integer":
        out = {"type": "integer", "format": "int32"}
    elif t == "date-time":
        out = {"type": "string", "format": "date-time"}
    elif t in _SHARED:
        out = {"allOf": [{"$ref": _REF + _SHARED[t][0]}]}
    elif t == "any":
        out = {"type": "object"}
    else:
        out = {"type": t}
    if name in _DESCRIBE:
        out = {"description": _DESCRIBE[name], **out}
    return out


def _type_schema(definition: str) -> Obj:
    fields = TYPES[definition]
    return {"type": "object", "properties": {k: _field_schema(t, k) for k, t in sorted(fields.items())}}


def _custom_schema() -> Obj:
    return {
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": True,
        "properties": {
            "apiVersion": _field_schema("string", "apiVersion"),
            "kind": _field_schema("string", "kind"),
            "metadata": _field_schema("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta", "metadata"),
        },
    }


def _reachable(root: str, seen: set[str]) -> None:
    if root in seen or root not in TYPES:
        return
    seen.add(root)
    for t in TYPES[root].values():
        _reachable(t.strip("[]{}"), seen)


def _param(name: str) -> Obj:
    return {"name": name, "in": "query", "description": _QUERY[name], "schema": {"type": "boolean" if name == "force" else "string", "uniqueItems": True}}


def _operation(action: str, info: KindInfo, schema_ref: str, *, namespaced_path: bool) -> Obj:
    group, version = _gv(info)
    gvk = {"group": group, "kind": info.kind, "version": version}
    ok = {"description": "OK", "content": {"application/json": {"schema": {"$ref": schema_ref}}}}
    op: Obj = {"description": f"{action} {info.kind}", "x-kubernetes-action": action, "x-kubernetes-group-version-kind": gvk, "responses": {"200": ok}}
    if action in ("post", "put"):
        op["parameters"] = [_param("dryRun"), _param("fieldManager"), _param("fieldValidation")]
        op["requestBody"] = {"content": {"*/*": {"schema": {"$ref": schema_ref}}}, "required": True}
    elif action == "patch":
        patch = {"schema": {"$ref": _REF + "io.k8s.apimachinery.pkg.apis.meta.v1.Patch"}}
        kinds = ("application/apply-patch+yaml", "application/json-patch+json", "application/merge-patch+json")
        op["parameters"] = [_param("dryRun"), _param("fieldManager"), _param("fieldValidation"), _param("force")]
        op["requestBody"] = {"content": {k: patch for k in kinds}, "required": True}
    elif action == "delete":
        op["parameters"] = [_param("dryRun")]
    return op


def _paths(info: KindInfo, schema_ref: str) -> Obj:
    group, version = _gv(info)
    base = f"/apis/{group}/{version}" if group else f"/api/{version}"
    coll = f"{base}/namespaces/{{namespace}}/{info.plural}" if info.namespaced else f"{base}/{info.plural}"
    path_params = [{"name": "namespace", "in": "path", "required": True, "schema": {"type": "string", "uniqueItems": True}}] if info.namespaced else []
    name_param = {"name": "name", "in": "path", "required": True, "schema": {"type": "string", "uniqueItems": True}}
    one = {a: _operation(a, info, schema_ref, namespaced_path=info.namespaced) for a in ("get", "put", "patch", "delete")}
    many = {a if a != "list" else "get": _operation(a, info, schema_ref, namespaced_path=info.namespaced) for a in ("list", "post")}
    return {
        coll: {**many, "parameters": [*path_params, _param("pretty")]},
        f"{coll}/{{name}}": {**one, "parameters": [name_param, *path_params, _param("pretty")]},
    }


@cache
def _document(key: str) -> str:
    kinds = [k for k in _SERVED if (f"apis/{k.group}/{_gv(k)[1]}" if k.group else f"api/{_gv(k)[1]}") == key]
    schemas: Obj = {}
    paths: Obj = {}
    needed: set[str] = set()
    for info in kinds:
        group, version = _gv(info)
        gvk = [{"group": group, "kind": info.kind, "version": version}]
        root = ROOTS.get(info.kind)
        if root is None or info.kind in CUSTOM_KINDS:
            root = f"{'.'.join(reversed(group.split('.')))}.{version}.{info.kind}"
            schemas[root] = _custom_schema()
            needed.add("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
        else:
            _reachable(root, needed)
        paths.update(_paths(info, _REF + root))
        schemas.setdefault(root, _type_schema(root) if root in TYPES else schemas.get(root))
        schemas[root] = {"description": _KIND_DESCRIPTION.format(kind=info.kind, api_version=info.api_version), **schemas[root], "x-kubernetes-group-version-kind": gvk}
    for definition in sorted(needed):
        if definition in TYPES:
            _reachable(definition, needed)
    for definition in sorted(needed):
        schemas.setdefault(definition, _type_schema(definition))
    schemas.update(dict(_SHARED.values()))
    schemas["io.k8s.apimachinery.pkg.apis.meta.v1.Patch"] = {"description": "A patch in one of the supported patch types.", "type": "object"}
    doc = {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": "v1.32.2"}, "paths": paths, "components": {"schemas": dict(sorted(schemas.items()))}}
    return json.dumps(doc, separators=(",", ":"))


def gv_document(key: str) -> str | None:
    """The document for ``api/v1`` or ``apis/<group>/<version>``, as JSON text; None when not served."""
    return _document(key) if key in gv_keys() else None


@lru_cache(maxsize=1)
def openapi_v3() -> Obj:
    """The index: each group-version's document with a content hash (clients cache by it)."""
    paths = {}
    for key in gv_keys():
        digest = hashlib.sha512(_document(key).encode()).hexdigest().upper()[:128]
        paths[key] = {"serverRelativeURL": f"/openapi/v3/{key}?hash={digest}"}
    return {"paths": paths}


#: the protobuf media type kubectl asks ``/openapi/v2`` in
OPENAPI_V2_PROTOBUF = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"


def openapi_v2(accept: str) -> tuple[str, str]:
    """A definition-less OpenAPI v2 document, as (body, content type).

    kubectl falls back to v2 only for what the v3 documents do not cover (``kind:
    List`` manifests, kinds no served group has): its client-side validation then
    finds no definition and leaves the kind to the server, which answers as a real
    one does for a kind it lacks (``no matches for kind``). kubectl asks for the
    gnostic protobuf encoding: ``swagger`` (field 1) and ``info`` (field 2:
    ``title`` 1, ``version`` 2), every length under 128 so one byte each.
    """
    title, version = "Kubernetes", "v1.32.2"
    if "protobuf" in accept:
        info = b"\x0a" + bytes([len(title)]) + title.encode() + b"\x12" + bytes([len(version)]) + version.encode()
        doc = b"\x0a\x032.0" + b"\x12" + bytes([len(info)]) + info
        return doc.decode("ascii"), "application/octet-stream"  # what the API server labels the protobuf with
    return json.dumps({"swagger": "2.0", "info": {"title": title, "version": version}, "paths": {}, "definitions": {}}), "application/json"
