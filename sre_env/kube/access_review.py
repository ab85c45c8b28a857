"""SelfSubjectAccessReview: "may I?", as ``kubectl auth can-i`` asks it and the apiserver answers it.

``kubectl auth can-i VERB RESOURCE[/NAME] [-n NS] [--subresource S]`` POSTs a
``SelfSubjectAccessReview`` (authorization.k8s.io/v1) to
``/apis/authorization.k8s.io/v1/selfsubjectaccessreviews`` -- as protobuf,
since kubectl's typed clients prefer it, or JSON -- and prints ``yes`` or
``no`` from ``status.allowed``. Every authenticated user may ask (the
``system:basic-user`` ClusterRole). The namespace guard answers these for the
agent from the agent's own Role (``sre_env.k8s.guard``); this module reads the
question and writes the answer.

Protobuf fields (k8s.io/api/authorization/v1/generated.proto): the review is
1 metadata, 2 spec; the spec 1 resourceAttributes, 2 nonResourceAttributes;
ResourceAttributes 1 namespace, 2 verb, 3 group, 4 version, 5 resource,
6 subresource, 7 name; NonResourceAttributes 1 path, 2 verb.
"""

from __future__ import annotations

import json
from typing import Any

from sre_env.errors import ApiError

from .protowire import _LEN, MAGIC, Unsupported, fields

__all__ = ["SSAR_PATH", "review_answer", "review_spec"]

Obj = dict[str, Any]

#: where SelfSubjectAccessReviews are created
SSAR_PATH = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
_RESOURCE = {1: "namespace", 2: "verb", 3: "group", 4: "version", 5: "resource", 6: "subresource", 7: "name"}
_NON_RESOURCE = {1: "path", 2: "verb"}


def _strings(buf: bytes, names: dict[int, str]) -> Obj:
    out: Obj = {}
    for num, wt, val in fields(buf):
        if num in names and wt == _LEN:
            text = val.decode("utf-8")
            if text:
                out[names[num]] = text
    return out


def _message(buf: bytes, num: int) -> bytes | None:
    """The last length-delimited field ``num`` of ``buf`` (protobuf merges repeated singular fields so)."""
    found = [val for n, wt, val in fields(buf) if n == num and wt == _LEN]
    return found[-1] if found else None


def _from_protobuf(body: bytes) -> Obj:
    unknown = body[len(MAGIC) :]
    raw = _message(unknown, 2)
    type_meta = _strings(_message(unknown, 1) or b"", {1: "apiVersion", 2: "kind"})
    if raw is None or type_meta.get("kind") != "SelfSubjectAccessReview":
        raise Unsupported("not a SelfSubjectAccessReview")
    spec_raw = _message(raw, 2) or b""
    spec: Obj = {}
    resource = _message(spec_raw, 1)
    if resource is not None:
        spec["resourceAttributes"] = _strings(resource, _RESOURCE)
    non_resource = _message(spec_raw, 2)
    if non_resource is not None:
        spec["nonResourceAttributes"] = _strings(non_resource, _NON_RESOURCE)
    return spec


def review_spec(body: bytes) -> Obj:
    """The review's ``spec`` (``resourceAttributes`` or ``nonResourceAttributes``), or the apiserver's 400/415."""
    try:
        if body.startswith(MAGIC):
            spec = _from_protobuf(body)
        else:
            review = json.loads(body or b"{}")
            spec = review.get("spec") if isinstance(review, dict) else None
            if not isinstance(spec, dict):
                spec = {}
    except (Unsupported, UnicodeDecodeError):
        raise ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf") from None
    except ValueError as exc:
        raise ApiError(400, "BadRequest", f"error decoding SelfSubjectAccessReview: {exc}") from None
    resource, non_resource = spec.get("resourceAttributes"), spec.get("nonResourceAttributes")
    if isinstance(resource, dict) == isinstance(non_resource, dict):  # ValidateSelfSubjectAccessReviewSpec
        field, why = ("nonResourceAttributes", "cannot be specified in combination with resourceAttributes") if resource else ("resourceAttributes", "exactly one of nonResourceAttributes or resourceAttributes must be specified")
        raise ApiError(422, "Invalid", f'SelfSubjectAccessReview.authorization.k8s.io "" is invalid: spec.{field}: Invalid value: "null": {why}')
    return spec


def review_answer(spec: Obj, allowed: bool) -> Obj:
    """The created review, as the apiserver returns it (RBAC gives no reason for a denial it has no rule for)."""
    return {"kind": "SelfSubjectAccessReview", "apiVersion": "authorization.k8s.io/v1", "metadata": {"creationTimestamp": None}, "spec": spec, "status": {"allowed": allowed}}
