"""Bearer-token authentication, as the apiserver's front door does it.

``sre-env serve`` and the namespace guard in front of it (``sre_env.k8s.guard``)
answer only requests that carry their token (``Authorization: Bearer <token>``,
what ``kubectl`` sends for a kubeconfig user with ``token:``, and what
``prometheus-api-client`` sends with ``headers=``). A request without it, or with
another one, gets what a real apiserver answers an unauthenticated request: 401
and the ``Status`` its authentication filter writes (``NewUnauthorized
("Unauthorized")``; no ``WWW-Authenticate`` header since basic auth was
removed). The observability APIs answer 401 as Prometheus' exporter-toolkit
does (``Unauthorized`` as plain text), with ``WWW-Authenticate: Bearer``
(RFC 6750) since the credential asked for is a bearer token.

Tokens come from the operating system's random source (``secrets``), never from
an episode seed: a seed is shared, printed and replayed.
"""

from __future__ import annotations

import hmac
import secrets
from typing import Any

__all__ = ["UNAUTHORIZED_TEXT", "authenticated", "bearer_header", "bearer_token", "new_token", "unauthorized_status"]

#: the body Prometheus (exporter-toolkit) answers a request it cannot authenticate with
UNAUTHORIZED_TEXT = "Unauthorized\n"


def new_token() -> str:
    """A fresh 256-bit token (URL-safe text), from ``os.urandom``."""
    return secrets.token_urlsafe(32)


def bearer_token(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header (the scheme is case-insensitive), else None."""
    if not authorization:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    token = token.strip()
    return token if scheme.lower() == "bearer" and token else None


def authenticated(authorization: str | None, token: str | None) -> bool:
    """Whether a request with this ``Authorization`` header may pass (``token`` None: no authentication)."""
    if token is None:
        return True
    given = bearer_token(authorization)
    return given is not None and hmac.compare_digest(given.encode(), token.encode())


def bearer_header(token: str | None) -> dict[str, str]:
    """The header a client sends (empty without a token)."""
    return {"Authorization": f"Bearer {token}"} if token else {}


def unauthorized_status() -> dict[str, Any]:
    """The apiserver's answer to an unauthenticated request (sent with code 401)."""
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": "Unauthorized", "reason": "Unauthorized", "code": 401}
