"""A Kubernetes API subset over HTTP, answered from a backend's objects.

Enough of the real API for the real ``kubectl``: discovery (``/api``, ``/apis``
and the resource lists), get and list with label and field selectors, the
server-side ``Table`` that ``kubectl get`` asks for (columns from the same
printers the built-in shell uses, so both print the same), create, replace,
the three patch types, delete, the ``scale`` subresource, eviction, and pod
logs; the read-only kinds a cluster always serves and the simulator derives
(Leases, EndpointSlices, LimitRanges: ``kube_virtual``). Errors are ``Status``
objects with the real reasons, codes and wording (malformed bodies, per-kind
field labels, unknown subresources). Streaming requests live in their own
modules: ``pods/exec`` over WebSocket (``kube_exec``), ``?watch=true``
(``kube_watch``) and ``logs -f`` (``kube_logs``).

The handlers are plain functions of (backend, request parts) so they can be
tested without a socket; ``sre_env.serve.server`` mounts them on aiohttp.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

from sre_env.errors import ApiError
from sre_env.kube.decoding import json_kind
from sre_env.kube.kinds import KINDS, KindInfo
from sre_env.kube.limits import json_too_deep
from sre_env.shell.printers import COLUMNS, format_labels

from . import kube_apply, kube_protobuf
from .kube_openapi import gv_document, openapi_v2, openapi_v3
from .kube_virtual import (
    VirtualKind,
    find_virtual,
    serve_virtual,
    virtual_groups,
    virtual_resources,
)
from .timeshift import shift_json_text, shift_log_text, since_time_seconds

if TYPE_CHECKING:
    from sre_env.sim.backend import SimBackend

__all__ = ["KubeResponse", "handle", "status_response", "decode_body", "decode_object", "SERVER_VERSION"]

Obj = dict[str, Any]

SERVER_VERSION = {
    "major": "1",
    "minor": "32",
    "gitVersion": "v1.32.2",
    "gitCommit": "67a30c0adcf52bd3f56ff0893ce19966be12991f",
    "gitTreeState": "clean",
    "buildDate": "2025-02-12T21:19:47Z",
    "goVersion": "go1.23.6",
    "compiler": "gc",
    "platform": "linux/amd64",
}
_VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
_PATCH_TYPES = {
    "application/strategic-merge-patch+json": "strategic",
    "application/merge-patch+json": "merge",
    "application/json-patch+json": "json",
    "application/apply-patch+yaml": "apply",
}
_BY_PLURAL: dict[tuple[str, str], KindInfo] = {(k.group, k.plural): k for k in KINDS}
_SCALABLE = {"Deployment", "StatefulSet", "ReplicaSet"}
_METRICS_GV = {"groupVersion": "metrics.k8s.io/v1beta1", "version": "v1beta1"}
#: the kinds in the "all" category (``kubectl get all``), as the API server's discovery lists them
_CATEGORY_ALL = {"Pod", "Service", "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronJob", "HorizontalPodAutoscaler", "ReplicationController"}


@dataclass(frozen=True)
class KubeResponse:
    status: int
    body: Any
    content_type: str = "application/json"
    #: ``Warning`` headers (dropped unknown fields: ``kube_fields``)
    warnings: tuple[str, ...] = ()

    def text(self) -> str:
        return self.body if isinstance(self.body, str) else json.dumps(self.body)


#: ``pods "geo-1" not found``, ``deployments.apps "geo" already exists``: the object an error is about
_ABOUT = re.compile(r'^([a-z0-9.-]+) "([^"]+)" (?:not found|already exists|is invalid)')


def status_response(err: ApiError, kind: str = "", name: str = "") -> KubeResponse:
    """A failure ``Status``; ``details`` names the object as the API server does (resource, group, name)."""
    if err.details is not None:  # the error names its object and causes itself (field validation)
        body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": err.message, "reason": err.reason, "details": err.details, "code": err.code}
        return KubeResponse(err.code, body)
    details: Obj = {}
    m = _ABOUT.match(err.message)
    if m and not (kind or name):
        resource, _, group = m.group(1).partition(".")
        name, kind = m.group(2), resource
        if group:
            details["group"] = group
    if name:
        details = {"name": name, **details}
    if kind:
        details["kind"] = kind
    body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": err.message}
    if err.reason:  # an unclassified failure (reason Unknown) has none
        body["reason"] = err.reason
    if details:
        body["details"] = details
    body["code"] = err.code
    return KubeResponse(err.code, body)


_status = status_response


def _not_found_path(path: str) -> KubeResponse:
    return _status(ApiError(404, "NotFound", "the server could not find the requested resource"))


# ---------------------------------------------------------------- discovery
def _groups() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for k in KINDS:
        version = k.api_version.rsplit("/", 1)[-1]
        versions = out.setdefault(k.group, [])
        if version not in versions:
            versions.append(version)
    return out


def _api_versions(host: str) -> Obj:
    return {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": host}]}


def _api_groups() -> Obj:
    groups = [{"name": "metrics.k8s.io", "versions": [_METRICS_GV], "preferredVersion": _METRICS_GV}]
    merged = _groups()
    for group, versions in virtual_groups().items():
        merged.setdefault(group, []).extend(v for v in versions if v not in merged[group])
    for group, versions in sorted(merged.items()):
        if not group:
            continue
        gv = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
        groups.append({"name": group, "versions": gv, "preferredVersion": gv[0]})
    groups.sort(key=lambda g: g["name"])
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def _resource_list(group: str, version: str) -> Obj | None:
    gv = f"{group}/{version}" if group else version
    if gv == _METRICS_GV["groupVersion"]:
        return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": [
            {"name": "nodes", "singularName": "", "namespaced": False, "kind": "NodeMetrics", "verbs": ["get", "list"]},
            {"name": "pods", "singularName": "", "namespaced": True, "kind": "PodMetrics", "verbs": ["get", "list"]},
        ]}
    kinds = [k for k in KINDS if k.api_version == gv]
    extra = virtual_resources(group, version)
    if not kinds and not extra:
        return None
    resources: list[Obj] = list(extra)
    for k in kinds:
        cats = {"categories": ["all"]} if k.kind in _CATEGORY_ALL else {}
        resources.append({"name": k.plural, "singularName": k.singular, "namespaced": k.namespaced, "kind": k.kind, "verbs": _VERBS, **({"shortNames": list(k.short_names)} if k.short_names else {}), **cats})
        if k.kind in _SCALABLE:
            resources.append({"name": f"{k.plural}/scale", "singularName": "", "namespaced": True, "group": "autoscaling", "version": "v1", "kind": "Scale", "verbs": ["get", "patch", "update"]})
        if k.kind == "Pod":
            resources.append({"name": "pods/log", "singularName": "", "namespaced": True, "kind": "Pod", "verbs": ["get"]})
            resources.append({"name": "pods/eviction", "singularName": "", "namespaced": True, "group": "policy", "version": "v1", "kind": "Eviction", "verbs": ["create"]})
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": resources}


# ---------------------------------------------------------------- tables
def wants_table(accept: str) -> bool:
    return "as=Table" in accept


def table_of(info: KindInfo, objs: list[Obj], now: float, list_meta: Obj) -> Obj:
    """``meta.k8s.io/v1`` Table: NAME, the printer's columns (wide ones at priority 1), one row per object."""
    from sre_env.shell.printers import (  # the event printer has no NAME column
        _EVENT_WIDE,
        _event,
    )

    if info.kind == "Event":
        heads, extra, fn = _EVENT_WIDE[:1] + _EVENT_WIDE[1:], [], _event
        names = [(h, 0 if h in ("LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE") else 1) for h in heads]
        cells_of = lambda o: fn(o, now, True)  # noqa: E731
    elif info.kind in COLUMNS:
        base, extra, fn = COLUMNS[info.kind]
        names = [("NAME", 0), *((h, 0) for h in base), *((h, 1) for h in extra)]
        cells_of = lambda o: [o["metadata"].get("name", ""), *fn(o, now, True)]  # noqa: E731
    else:
        names = [("NAME", 0), ("AGE", 0)]
        from sre_env.shell.printers import age

        cells_of = lambda o: [o["metadata"].get("name", ""), age(o["metadata"].get("creationTimestamp"), now)]  # noqa: E731
    return _columns_table(names, cells_of, objs, list_meta)


def _columns_table(names: list[tuple[str, int]], cells_of: Any, objs: list[Obj], list_meta: Obj) -> Obj:
    columns = [{"name": _title(h), "type": "string", "format": "name" if h == "NAME" else "", "description": "", "priority": p} for h, p in names]
    rows = []
    for o in objs:
        meta = o.get("metadata") or {}
        partial = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp", "labels", "annotations") if k in meta}}
        rows.append({"cells": cells_of(o), "object": partial})
    return {"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": list_meta, "columnDefinitions": columns, "rows": rows}


def _title(header: str) -> str:
    """kubectl upper-cases column names; the API sends them in title case (``Nominated Node``)."""
    return " ".join(w.capitalize() if w.isupper() else w for w in header.split(" "))


# ---------------------------------------------------------------- requests
def list_resource_version(backend: "SimBackend", objs: list[Obj]) -> str:
    """A list's resourceVersion: the newest one the store has issued, so a watch from it sees every later write."""
    store = getattr(getattr(backend, "world", None), "store", None)
    issued = getattr(store, "_counter", None)  # the store's resourceVersion counter (sre_env.sim.kernel.store)
    if isinstance(issued, int):
        return str(issued)
    return str(max((int(v) for o in objs if str(v := o["metadata"].get("resourceVersion", "")).isdigit()), default=1))


def parse_path(path: str) -> tuple[KindInfo, str | None, str | None, str | None] | None:
    """(kind, namespace, name, subresource) for a resource path, or None."""
    parts = [p for p in path.split("/") if p]
    if not parts:
        return None
    if parts[0] == "api" and len(parts) >= 3:
        group, rest = "", parts[2:]
    elif parts[0] == "apis" and len(parts) >= 4:
        group, rest = parts[1], parts[3:]
    else:
        return None
    ns = None
    if len(rest) >= 2 and rest[0] == "namespaces" and (len(rest) > 2):
        ns, rest = rest[1], rest[2:]
    if not rest:
        return None
    info = _BY_PLURAL.get((group, rest[0]))
    if info is None:
        return None
    name = rest[1] if len(rest) > 1 else None
    sub = rest[2] if len(rest) > 2 else None
    return info, ns, name, sub


def handle(backend: "SimBackend", method: str, path: str, query: str, headers: dict[str, str], body: bytes, host: str = "127.0.0.1", offset: int = 0) -> KubeResponse:
    """Answer one API request; never raises.

    ``offset``: seconds between the simulator's times and the wall-clock times the
    client sees (``sre_env.serve.timeshift``): timestamps in the request body are
    moved back by it, those in the response forward.
    """
    if offset and body and method.upper() in ("POST", "PUT", "PATCH") and not body.startswith(kube_protobuf.MAGIC):
        try:
            body = shift_json_text(body.decode("utf-8"), -offset).encode("utf-8")
        except UnicodeDecodeError:
            pass  # refused as malformed by decode_body
    try:
        resp = _handle(backend, method.upper(), path, parse_qs(query), {k.lower(): v for k, v in headers.items()}, body, host, offset)
    except ApiError as err:
        return _status(err)
    except (ValueError, KeyError, TypeError) as exc:
        return _status(ApiError(400, "BadRequest", str(exc)))
    if offset and resp.content_type == "application/json":
        return KubeResponse(resp.status, shift_json_text(resp.text(), offset), resp.content_type, resp.warnings)
    return resp


def _handle(backend: "SimBackend", method: str, path: str, q: dict[str, list[str]], headers: dict[str, str], body: bytes, host: str, offset: int = 0) -> KubeResponse:
    path = path.rstrip("/") or "/"
    if path == "/version":
        return KubeResponse(200, SERVER_VERSION)
    if path == "/api":
        return KubeResponse(200, _api_versions(host))
    if path == "/apis":
        return KubeResponse(200, _api_groups())
    if path.startswith("/openapi/v3"):  # kubectl's validation and explain (sre_env.serve.kube_openapi)
        doc = openapi_v3() if path == "/openapi/v3" else gv_document(path[len("/openapi/v3/"):])
        return KubeResponse(200, doc) if doc is not None else _not_found_path(path)
    if path == "/openapi/v2":
        text, ctype = openapi_v2(headers.get("accept", ""))
        return KubeResponse(200, text, ctype)
    parts = [p for p in path.split("/") if p]
    if parts[:1] == ["api"] and len(parts) == 2 or parts[:1] == ["apis"] and len(parts) == 3:
        group, version = ("", parts[1]) if parts[0] == "api" else (parts[1], parts[2])
        listing = _resource_list(group, version)
        return KubeResponse(200, listing) if listing is not None else _not_found_path(path)
    if path.startswith("/apis/metrics.k8s.io/v1beta1/"):
        return _metrics(backend, path)
    virtual = find_virtual(path)
    if virtual is not None:
        return _virtual(backend, virtual, method, q, headers)
    parsed = parse_path(path)
    if parsed is None:
        return _not_found_path(path)
    info, ns, name, sub = parsed
    arg = lambda key, default="": (q.get(key) or [default])[0]  # noqa: E731
    now = backend.now
    if name is None:
        if method == "GET":
            objs = backend.api.list(info.kind, ns if info.namespaced else None, arg("labelSelector") or None, arg("fieldSelector") or None)
            meta = {"resourceVersion": list_resource_version(backend, objs)}
            if arg("watch") in ("true", "1"):
                # without a socket (a direct call): the opening events of a watch; the server streams the rest (kube_watch)
                events = "".join(json.dumps({"type": "ADDED", "object": o}) + "\n" for o in objs)
                return KubeResponse(200, events)
            if wants_table(headers.get("accept", "")):
                return KubeResponse(200, table_of(info, objs, now, meta))
            return KubeResponse(200, {"kind": f"{info.kind}List", "apiVersion": info.api_version, "metadata": meta, "items": objs})
        if method == "POST":
            obj = decode_object(body, info.kind)
            if ns and info.namespaced:
                obj.setdefault("metadata", {}).setdefault("namespace", ns)
            created, warned = kube_apply.create(backend, info, obj, q)
            return KubeResponse(201, kube_protobuf.as_requested(created, path), warnings=tuple(warned))
        return _status(ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource"))
    if sub == "log" and info.kind == "Pod":
        stamps = arg("timestamps") == "true"
        text = backend.api.logs(
            name,
            ns or "default",
            arg("container") or None,
            previous=arg("previous") == "true",
            tail=int(arg("tailLines")) if arg("tailLines") else None,
            since_seconds=log_since(arg("sinceSeconds"), arg("sinceTime"), now, offset),
            timestamps=stamps,
        )
        return KubeResponse(200, shift_log_text(text, offset, prefixed=stamps), "text/plain")
    if sub == "scale" and info.kind in _SCALABLE:
        if method in ("PATCH", "PUT"):
            scale = decode_body(body)
            if not isinstance(scale, dict) or not isinstance(scale.get("spec") or {}, dict):
                raise ApiError(400, "BadRequest", f"json: cannot unmarshal {json_kind(scale)} into Go value of type v1.Scale")
            spec = scale.get("spec") or {}
            if spec.get("replicas") is not None:  # the API server checks its type (SimApi.scale)
                backend.api.scale(info.kind, name, ns or "default", spec["replicas"])
        obj = backend.api.get(info.kind, name, ns)
        return KubeResponse(200, _scale(obj))
    if sub == "eviction" and info.kind == "Pod" and method == "POST":
        backend.api.evict(name, ns or "default")
        return KubeResponse(201, {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201})
    if sub is not None:
        return _not_found_path(path)
    namespace = ns if info.namespaced else None
    if method == "GET":
        obj = backend.api.get(info.kind, name, namespace)
        if wants_table(headers.get("accept", "")):
            return KubeResponse(200, table_of(info, [obj], now, {"resourceVersion": obj["metadata"].get("resourceVersion", "")}))
        return KubeResponse(200, obj)
    if method == "DELETE":
        opts = decode_body(body) if body else {}
        if opts is None:
            opts = {}
        if not isinstance(opts, dict):
            raise ApiError(400, "BadRequest", f"json: cannot unmarshal {json_kind(opts)} into Go value of type v1.DeleteOptions")
        force = opts.get("gracePeriodSeconds") == 0 or arg("gracePeriodSeconds") == "0"
        return KubeResponse(200, backend.api.delete(info.kind, name, namespace, force=force))
    if method == "PATCH":
        ptype = _PATCH_TYPES.get(headers.get("content-type", "").split(";")[0].strip())
        if ptype is None:
            raise ApiError(415, "UnsupportedMediaType", f"the body of the request was in an unknown format - accepted media types include: {', '.join(_PATCH_TYPES)}")
        if ptype == "apply":  # server-side apply (sre_env.serve.kube_apply)
            code, applied = kube_apply.server_side_apply(backend, info, name, namespace, body, q)
            return KubeResponse(code, applied)
        patch = decode_body(body, "error decoding patch: " if ptype != "json" else "")
        if ptype == "json" and not isinstance(patch, list):
            raise ApiError(400, "BadRequest", f"json: cannot unmarshal {json_kind(patch)} into Go value of type jsonpatch.Patch")
        if ptype != "json":
            patch = _patch_object(patch)
        patched, warned = kube_apply.patch(backend, info, name, namespace, patch, ptype, q)
        return KubeResponse(200, patched, warnings=tuple(warned))
    if method == "PUT":
        replaced, warned = kube_apply.replace(backend, info, decode_body(body), q)
        return KubeResponse(200, replaced, warnings=tuple(warned))
    return _status(ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource"))


def log_since(since_seconds: str, since_time: str, now: float, offset: int) -> float | None:
    """``sinceSeconds``, or ``sinceTime`` (a wall-clock RFC 3339 time) as seconds before the simulated ``now``."""
    if since_seconds:
        return float(since_seconds)
    if since_time:
        try:
            return since_time_seconds(since_time, now, offset)
        except ValueError:
            raise ApiError(400, "BadRequest", f'parsing time "{since_time}" as "2006-01-02T15:04:05Z07:00": cannot parse "{since_time}" as "2006"') from None
    return None


def _patch_object(patch: Any) -> Obj:
    """A merge or strategic patch must be a JSON object (Go decodes it into a map)."""
    if not isinstance(patch, dict):
        raise ApiError(400, "BadRequest", f"error decoding patch: json: cannot unmarshal {json_kind(patch)} into Go value of type map[string]interface {{}}")
    return patch


#: the struct the apiserver's JSON serializer reads apiVersion and kind into first (runtime/serializer/json/meta.go)
_FIND_KIND = 'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }'


def decode_object(body: bytes, kind: str) -> Obj:
    """A create's body: a JSON object (``null`` decodes to an empty one, as in Go); any other value is refused as the
    apiserver refuses it (``transformDecodeError`` around the serializer's apiVersion/kind probe)."""
    obj = decode_body(body)
    if obj is None:
        return {}
    if not isinstance(obj, dict):
        summary = body[:30].hex() + (" ..." if len(body) > 30 else "")
        raise ApiError(400, "BadRequest", f"the object provided is unrecognized (must be of type {kind}): couldn't get version/kind; json parse error: json: cannot unmarshal {json_kind(obj)} into Go value of type {_FIND_KIND} ({summary})")
    return obj


def decode_body(body: bytes, prefix: str = "") -> Any:
    """A request's JSON body; malformed JSON is a BadRequest worded as Go's encoding/json words it.

    Nesting past ``SIM_MAX_DEPTH`` is refused before decoding (``sre_env.kube.limits``).
    """
    if not body:
        return {}
    if body.startswith(kube_protobuf.MAGIC):  # typed clients (kubectl create, autoscale) send protobuf
        return kube_protobuf.decode(body)
    deep = json_too_deep(body.decode("utf-8", errors="replace"))
    if deep is not None:  # refused before parsing: no object of a served kind nests this deep (sre_env.kube.limits)
        raise ApiError(400, "BadRequest", prefix + deep)
    try:
        return json.loads(body)
    except UnicodeDecodeError:
        raise ApiError(400, "BadRequest", f"{prefix}invalid character looking for beginning of value") from None
    except json.JSONDecodeError as exc:
        text = exc.doc
        at = text[exc.pos] if exc.pos < len(text) else ""
        if not at.strip():
            msg = "unexpected end of JSON input"
        elif exc.msg.startswith("Expecting property name"):
            msg = f"invalid character {at!r} looking for beginning of object key string"
        elif exc.msg.startswith("Expecting ':'"):
            msg = f"invalid character {at!r} after object key"
        elif exc.msg.startswith("Expecting ',' delimiter") or exc.msg.startswith("Extra data"):
            msg = f"invalid character {at!r} after top-level value" if exc.msg.startswith("Extra") else f"invalid character {at!r} after object key:value pair"
        else:
            msg = f"invalid character {at!r} looking for beginning of value"
        raise ApiError(400, "BadRequest", prefix + msg.replace('"', "'")) from None


def _virtual(backend: "SimBackend", virtual: tuple[VirtualKind, str | None, str | None], method: str, q: dict[str, list[str]], headers: dict[str, str]) -> KubeResponse:
    """Leases, EndpointSlices, LimitRanges: derived read-only kinds (sre_env.serve.kube_virtual)."""
    v, ns, name = virtual
    arg = lambda key: (q.get(key) or [""])[0]  # noqa: E731
    what, result = serve_virtual(backend, v, ns, name, method, arg("labelSelector") or None, arg("fieldSelector") or None)
    objs = [result] if what == "get" else result
    meta = {"resourceVersion": list_resource_version(backend, objs)}
    if wants_table(headers.get("accept", "")):
        names = [("NAME", 0), *((h, 0) for h, _ in v.columns)]
        now = backend.now
        cells_of = lambda o: [o["metadata"]["name"], *(fn(o, now) for _, fn in v.columns)]  # noqa: E731
        return KubeResponse(200, _columns_table(names, cells_of, objs, meta))
    return KubeResponse(200, result if what == "get" else {"kind": f"{v.kind}List", "apiVersion": v.api_version, "metadata": meta, "items": objs})


def _metrics(backend: "SimBackend", path: str) -> KubeResponse:
    """``metrics.k8s.io``: what metrics-server reports, for ``kubectl top``."""
    from sre_env.kube.timefmt import iso

    parts = [p for p in path.split("/") if p][3:]
    stamp = iso(backend.now)
    if parts[:1] == ["nodes"]:
        items = [
            {"metadata": {"name": name, "creationTimestamp": stamp}, "timestamp": stamp, "window": "20s", "usage": {"cpu": f"{cpu * 1_000_000}n", "memory": f"{mem // 1024}Ki"}}
            for name, cpu, _, mem, _ in backend.api.top_nodes()
        ]
        if len(parts) > 1:
            items = [i for i in items if i["metadata"]["name"] == parts[1]]
            return KubeResponse(200, {"kind": "NodeMetrics", "apiVersion": "metrics.k8s.io/v1beta1", **items[0]}) if items else _status(ApiError(404, "NotFound", f'nodemetrics.metrics.k8s.io "{parts[1]}" not found'))
        return KubeResponse(200, {"kind": "NodeMetricsList", "apiVersion": "metrics.k8s.io/v1beta1", "metadata": {}, "items": items})
    ns = None
    if parts[:1] == ["namespaces"] and len(parts) >= 3:
        ns, parts = parts[1], parts[2:]
    if parts[:1] != ["pods"]:
        return _not_found_path(path)
    items = []
    for pns, name, cpu, mem in backend.api.top_pods(ns):
        pod = backend.api.get("Pod", name, pns)
        first = (pod["spec"].get("containers") or [{"name": name}])[0]["name"]
        items.append({"metadata": {"name": name, "namespace": pns, "creationTimestamp": stamp, "labels": pod["metadata"].get("labels") or {}}, "timestamp": stamp, "window": "20s", "containers": [{"name": first, "usage": {"cpu": f"{cpu * 1_000_000}n", "memory": f"{mem // 1024}Ki"}}]})
    if len(parts) > 1:
        items = [i for i in items if i["metadata"]["name"] == parts[1]]
        return KubeResponse(200, {"kind": "PodMetrics", "apiVersion": "metrics.k8s.io/v1beta1", **items[0]}) if items else _status(ApiError(404, "NotFound", f'podmetrics.metrics.k8s.io "{parts[1]}" not found'))
    return KubeResponse(200, {"kind": "PodMetricsList", "apiVersion": "metrics.k8s.io/v1beta1", "metadata": {}, "items": items})


def _scale(obj: Obj) -> Obj:
    meta = obj["metadata"]
    status = obj.get("status") or {}
    sel = (obj["spec"].get("selector") or {}).get("matchLabels") or {}
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp") if k in meta},
        "spec": {"replicas": int(obj["spec"].get("replicas", 1))},
        "status": {"replicas": int(status.get("replicas", 0)), "selector": format_labels(sel).replace("<none>", "")},
    }
