"""The API server's write paths: decoding, defaulting, validation, admission and generated fields.

Everything the simulator creates goes through :func:`create`, as a real API
server's writes go through its handlers: cluster IPs for Services, the PVC
protection finalizer, the Pod and workload defaults, then the admission chain
(namespace lifecycle, mutating and validating webhooks, PodSecurity, quota,
priority). Controllers create their pods with :func:`new_pod_from_template`.

A write from a client (the API the shell, the faults and ``sre-env serve`` use)
is *admitted* first, as the real API server admits every request: :func:`create`
with ``admit=True``, :func:`update`, :func:`patch` and :func:`scale` decode the
object into its kind (wrong JSON types refused, ``null`` made Go's zero value:
``sre_env.kube.decoding``) and validate it (required fields, enumerations,
names, sizes, immutable fields: ``sre_env.kube.validation``), refusing with the
API server's Status. Whatever passes is an object the controllers were written
for. The controllers' own writes are trusted and skip that step.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

from sre_env.errors import ApiError
from sre_env.kube.api_types import ROOTS, TYPES
from sre_env.kube.decoding import DecodeError, decode, decode_error, json_kind, patch_invalid
from sre_env.kube.kinds import CUSTOM_KINDS, kind_info
from sre_env.kube.limits import MAX_STORED_BYTES
from sre_env.kube.patching import PatchError, json_merge, json_patch, strategic_merge
from sre_env.kube.validation import invalid_error, validate_create, validate_update
from sre_env.sim.control.admission import admit_pod as admission_chain
from sre_env.sim.control.sched_hooks import admit_pod
from sre_env.sim.kernel.store import prepare_update
from sre_env.sim.kernel.world import World

__all__ = ["ApiServerState", "check_create_allowed", "create", "decoded", "new_pod_from_template", "patch", "scale", "update"]

Obj = dict[str, Any]


@dataclass
class ApiServerState:
    """The API server's own counters (the Service IP allocator)."""

    service_ip_counter: int = 10


def decoded(obj: Obj) -> Obj:
    """``obj`` decoded into its kind, in place: a BadRequest for a value of the wrong JSON type.

    ``null`` becomes Go's zero value (``spec: null`` an empty spec, ``replicas:
    null`` unset, so defaulting fills it in); fields the kind lacks are dropped, as
    the API server drops them when the client asks for no stricter field validation.
    """
    try:
        decode(obj)
    except DecodeError as exc:
        raise decode_error(str(obj.get("kind", "")), str(obj.get("apiVersion", "")), str(exc)) from None
    if not isinstance(obj.get("metadata", {}), dict):
        raise decode_error(str(obj.get("kind", "")), str(obj.get("apiVersion", "")), f"json: cannot unmarshal {type(obj['metadata']).__name__} into Go struct field {obj.get('kind')}.metadata of type v1.ObjectMeta")
    root = ROOTS.get(str(obj.get("kind", "")))
    if root is not None and "spec" in TYPES[root] and "spec" not in obj:
        obj["spec"] = {}  # the spec is a struct, never omitted: the API server stores (and returns) `spec: {}`
    return obj


def create(world: World, obj: Obj, *, copy_in: bool = True, admit: bool = False) -> Obj:
    """Create through the API's admission path (cluster IPs, finalizers, defaults).

    ``copy_in=False``: ``obj`` was built for this call and nothing else holds it, so
    the store takes it as is (a pod from a template is already a deep copy).
    ``admit``: a client's write -- decoded and validated after defaulting, as the
    API server does before any admission webhook sees it.
    """
    obj = copy.deepcopy(obj) if copy_in else obj
    if admit:
        decoded(obj)
    kind = obj.get("kind")
    check_create_allowed(world, obj)
    if kind == "Service":
        spec = obj.setdefault("spec", {})
        spec.setdefault("type", "ClusterIP")
        if spec["type"] != "ExternalName":  # an ExternalName Service is a DNS alias: no cluster IP
            if not spec.get("clusterIP"):
                spec["clusterIP"] = _allocate_service_ip(world)
            spec.setdefault("clusterIPs", [spec["clusterIP"]])
        for p in spec.get("ports") or ():
            p.setdefault("protocol", "TCP")
            p.setdefault("targetPort", p.get("port"))
        spec.setdefault("sessionAffinity", "None")
        # the API server's dual-stack and traffic-policy defaults (what `kubectl describe svc` prints)
        spec.setdefault("ipFamilies", ["IPv4"])
        spec.setdefault("ipFamilyPolicy", "SingleStack")
        spec.setdefault("internalTrafficPolicy", "Cluster")
    elif kind == "PersistentVolumeClaim":
        obj.setdefault("metadata", {}).setdefault("finalizers", ["kubernetes.io/pvc-protection"])
        obj.setdefault("status", {"phase": "Pending"})
    elif kind == "Pod":
        spec = obj.setdefault("spec", {})
        spec.setdefault("restartPolicy", "Always")
        spec.setdefault("dnsPolicy", "ClusterFirst")
        spec.setdefault("schedulerName", "default-scheduler")
        spec.setdefault("terminationGracePeriodSeconds", 30)
        spec.setdefault("tolerations", [
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
        ])
        obj.setdefault("status", {"phase": "Pending", "qosClass": "BestEffort"})
        if admit:
            _validate(obj)
        obj = admission_chain(world, obj)
        admit_pod(world, obj)
    elif kind in ("Deployment", "StatefulSet"):
        spec = obj.setdefault("spec", {})
        spec.setdefault("replicas", 1)
        spec.setdefault("revisionHistoryLimit", 10)
        if kind == "Deployment":
            spec.setdefault("strategy", {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}})
            spec.setdefault("progressDeadlineSeconds", 600)
    if admit and kind != "Pod":
        _validate(obj)
    return world.store.create(obj, copy_in=False)


def _validate(obj: Obj) -> None:
    errors = validate_create(obj)
    if errors:
        raise invalid_error(obj, errors)
    _check_stored_size(obj)


def _check_stored_size(obj: Obj) -> None:
    """etcd refuses a value over 1.5 MiB; the API server passes that on unclassified.

    Measured as compact JSON (etcd holds the smaller protobuf, so this refuses a
    little early): what decides is that no admitted object is unboundedly large.
    """
    if len(json.dumps(obj, separators=(",", ":"))) > MAX_STORED_BYTES:
        raise ApiError(500, "", "etcdserver: request is too large")


def update(world: World, obj: Obj) -> Obj:
    """A client's replace (PUT): decoded, the kind's carry-overs applied, validated against the stored object, stored."""
    new = decoded(copy.deepcopy(obj))
    kind = str(new.get("kind") or "")
    meta = new.get("metadata") or {}
    if not meta.get("name"):
        raise ApiError.bad_request("resource name may not be empty")
    old = world.store.get(kind, str(meta["name"]), meta.get("namespace"))
    root = ROOTS.get(kind)
    if root is not None and "status" in TYPES[root]:
        # the main resource does not write status (the status subresource does): the stored one stays
        new.pop("status", None)
        if "status" in old:
            new["status"] = copy.deepcopy(old["status"])
    prepare_update(kind, old, new)
    errors = validate_update(new, old)
    if errors:
        raise invalid_error(new, errors)
    _check_stored_size(new)
    return world.store.replace(new)


#: the API server's cap on the operations of one JSON patch
MAX_JSON_PATCH_OPERATIONS = 10000


def patch(world: World, kind: str, name: str, namespace: str | None, body: Any, patch_type: str = "strategic") -> Obj:
    """A client's patch (JSON, merge or strategic merge): applied to the stored object, then admitted as an update."""
    info = kind_info(kind)
    if patch_type == "json" and isinstance(body, list) and len(body) > MAX_JSON_PATCH_OPERATIONS:
        raise ApiError(413, "RequestEntityTooLarge", f"Request entity too large: The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {len(body)}")
    if patch_type == "strategic" and kind in CUSTOM_KINDS:
        # custom resources have no strategic-merge schema: the server refuses the media type
        raise ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml")
    old = world.store.get(kind, name, namespace)
    try:
        if patch_type == "json":
            new = json_patch(old, body)
        elif patch_type == "merge":
            new = json_merge(old, body)
        elif patch_type == "strategic":
            new = strategic_merge(old, body)
        else:
            raise ApiError.bad_request(f"unknown patch type {patch_type!r}")
    except PatchError as exc:
        raise ApiError(422, "Invalid", f'{info.resource} "{name}" is invalid: {exc}') from None
    if not isinstance(new, dict) or new.get("kind") != kind or not isinstance(new.get("metadata"), dict) or new["metadata"].get("name") != name:
        raise ApiError.invalid(info.resource, name, "metadata.name: Invalid value: field is immutable")
    try:  # the patched object must decode into the kind: the patch handler refuses it on the ``patch`` field
        decode(copy.deepcopy(new))
    except DecodeError as exc:
        raise patch_invalid(body, str(exc)) from None
    return update(world, new)


def scale(world: World, kind: str, name: str, namespace: str, replicas: int) -> Obj:
    """The ``scale`` subresource: ``spec.replicas`` of a workload (an update like any other)."""
    if isinstance(replicas, bool) or not isinstance(replicas, int):
        raise decode_error("Scale", "autoscaling/v1", f"json: cannot unmarshal {json_kind(replicas)} into Go struct field ScaleSpec.spec.replicas of type int32")
    if replicas < 0:
        raise ApiError.invalid(kind_info(kind).resource, name, f"spec.replicas: Invalid value: {replicas}: must be greater than or equal to 0")
    return patch(world, kind, name, namespace, {"spec": {"replicas": replicas}}, "merge")


def _allocate_service_ip(world: World) -> str:
    state = world.slot(ApiServerState)
    while True:
        state.service_ip_counter += 1
        n = (state.service_ip_counter * 7919) % 65000 + 20
        block = n // 250  # past 10.96.255.x the next addresses of the 10.96.0.0/12 service range are 10.97.x.x
        ip = f"10.{96 + block // 256}.{block % 256}.{n % 250 + 2}"
        if not any(s["spec"].get("clusterIP") == ip for s in world.store.iter("Service")):
            return ip


def new_pod_from_template(world: World, owner: Obj, template: Obj, prefix: str) -> Obj | None:
    meta = copy.deepcopy(template.get("metadata") or {})
    spec = copy.deepcopy(template.get("spec") or {})
    for _ in range(5):
        name = prefix + world.name_suffix()
        if world.store.find("Pod", name, owner["metadata"]["namespace"]) is None:
            break
    meta["name"] = name
    meta["namespace"] = owner["metadata"]["namespace"]
    meta["ownerReferences"] = [
        {"apiVersion": owner.get("apiVersion", "apps/v1"), "kind": owner["kind"], "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}
    ]
    meta.pop("generateName", None)
    return create(world, {"kind": "Pod", "apiVersion": "v1", "metadata": meta, "spec": spec}, copy_in=False)


def check_create_allowed(world: World, obj: Obj) -> None:
    """The NamespaceLifecycle admission plugin: nothing new in (or named like) a terminating namespace.

    New namespaces get the API's defaults (the ``kubernetes`` finalizer, phase Active).
    """
    kind = obj.get("kind", "")
    meta = obj.get("metadata") or {}
    if kind == "Namespace":
        existing = world.store.find("Namespace", meta.get("name", ""))
        if existing is not None and existing["metadata"].get("deletionTimestamp"):
            raise ApiError(409, "AlreadyExists", f'object is being deleted: namespaces "{meta.get("name", "")}" already exists')
        # the API's defaults for a new namespace
        obj.setdefault("spec", {}).setdefault("finalizers", ["kubernetes"])
        obj.setdefault("status", {}).setdefault("phase", "Active")
        meta.setdefault("labels", {}).setdefault("kubernetes.io/metadata.name", meta.get("name", ""))
        return
    if kind == "Event":
        return
    try:
        namespaced = kind_info(kind).namespaced
    except KeyError:
        return
    if not namespaced:
        return
    ns = world.store.find("Namespace", meta.get("namespace") or "default")
    if ns is not None and ns["metadata"].get("deletionTimestamp"):
        resource = kind_info(kind).resource
        raise ApiError.forbidden(f'{resource} "{meta.get("name") or meta.get("generateName", "")}" is forbidden: unable to create new content in namespace {ns["metadata"]["name"]} because it is being terminated')
