"""What ``sre-env serve`` refuses before it decodes a request body, and what it answers when a handler fails.

* **Size**: a body over the apiserver's ``MaxRequestBodyBytes`` (3 MiB) is
  refused with its 413 ``Status`` (``Request entity too large: limit is
  3145728``) before it is read further.
* **Depth**: nesting and YAML aliases are bounded by ``sre_env.kube.limits``
  (the same limits the built-in shell applies), with the decoders' wording.
* **Media types**: a create or update (POST, PUT) body must be JSON, YAML or
  Kubernetes protobuf, as the apiserver's input negotiation says
  (``NegotiateInputSerializer``: no ``Content-Type`` means JSON; anything else is
  its 415 ``UnsupportedMediaType``). YAML goes through ``kube.limits.load_yaml`` and on
  as JSON, as the apiserver's YAML serializer converts it.
* **Failures**: a handler that raises is a bug, answered with the apiserver's
  500 ``InternalError`` Status (``Internal error occurred: ...``) instead of
  aiohttp's HTML page, so clients still parse the answer; hostile bodies are
  refused above with a 4xx and never get there.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from sre_env.errors import ApiError
from sre_env.kube.limits import MAX_REQUEST_BODY_BYTES, load_yaml

__all__ = ["INPUT_MEDIA_TYPES", "input_body", "internal_error_status", "too_large_status"]

#: what the apiserver decodes a create or update from, in its order (the first is assumed without a Content-Type)
INPUT_MEDIA_TYPES = ("application/json", "application/yaml", "application/vnd.kubernetes.protobuf")

def too_large_status(limit: int = MAX_REQUEST_BODY_BYTES) -> dict[str, Any]:
    """The apiserver's ``NewRequestEntityTooLargeError`` for a body over ``limit`` (sent with code 413)."""
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": f"Request entity too large: limit is {limit}", "reason": "RequestEntityTooLarge", "code": 413}


def internal_error_status(cause: str) -> dict[str, Any]:
    """The apiserver's ``NewInternalError`` for an error reading ``cause`` (sent with code 500)."""
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": f"Internal error occurred: {cause}", "reason": "InternalError", "details": {"causes": [{"message": cause}]}, "code": 500}


def input_body(content_type: str | None, body: bytes) -> bytes:
    """A POST or PUT body as the handlers take it (JSON or protobuf bytes), or the apiserver's refusal: 415 for a
    media type it does not decode, 400 for YAML it cannot read (past the limits above, too)."""
    media = (content_type or "").split(";")[0].strip().lower() or INPUT_MEDIA_TYPES[0]
    if media not in INPUT_MEDIA_TYPES:
        raise ApiError(415, "UnsupportedMediaType", f"the body of the request was in an unknown format - accepted media types include: {', '.join(INPUT_MEDIA_TYPES)}")
    if media != "application/yaml" or not body:
        return body
    try:
        return json.dumps(load_yaml(body.decode("utf-8"))).encode()
    except (yaml.YAMLError, UnicodeDecodeError) as exc:
        raise ApiError(400, "BadRequest", f"error converting YAML to JSON: {str(exc).splitlines()[0]}") from None
