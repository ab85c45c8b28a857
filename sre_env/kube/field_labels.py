"""Which field selectors each kind supports, with the API server's refusal text.

The API server converts field labels per kind: Pods, Nodes, Events, Namespaces,
Secrets, Services, ReplicaSets and Jobs register their own label sets and refuse
others with ``field label not supported: <label>``; every other kind accepts only
``metadata.name`` and ``metadata.namespace`` and refuses with
``"<label>" is not a known field selector: only "metadata.name", "metadata.namespace"``.
The simulator's store evaluates the labels it knows; this check runs first so an
unsupported label fails the way the real API fails, for the shell and the served API.
"""

from __future__ import annotations

import re

__all__ = ["check_field_selector"]

_META = ("metadata.name", "metadata.namespace")
_INVOLVED = tuple(f"involvedObject.{f}" for f in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath"))
#: kinds with their own conversion functions (pkg/apis/*/v1/conversion.go)
SUPPORTED: dict[str, tuple[str, ...]] = {
    "Pod": (*_META, "spec.nodeName", "spec.restartPolicy", "spec.schedulerName", "spec.serviceAccountName", "spec.hostNetwork", "status.phase", "status.podIP", "status.podIPs", "status.nominatedNodeName"),
    "Node": ("metadata.name", "spec.unschedulable"),
    "Event": (*_META, *_INVOLVED, "reason", "reportingComponent", "source", "type"),
    "Namespace": ("metadata.name", "status.phase"),
    "Secret": (*_META, "type"),
    "Service": (*_META, "spec.clusterIP", "spec.type"),
    "ReplicaSet": (*_META, "status.replicas"),
    "Job": (*_META, "status.successful"),
}
_TERM = re.compile(r"^\s*([^=!\s]+)\s*(?:==|=|!=)")


def check_field_selector(kind: str, selector: str | None) -> None:
    """Raise ValueError with the API server's message when ``selector`` uses a label ``kind`` does not support."""
    if not selector:
        return
    allowed = SUPPORTED.get(kind)
    for term in selector.split(","):
        if not term.strip():
            continue
        m = _TERM.match(term)
        if not m:
            continue  # malformed terms are the store's selector parser's to report
        label = m.group(1)
        if allowed is None:
            if label not in _META:
                raise ValueError(f'"{label}" is not a known field selector: only "metadata.name", "metadata.namespace"')
        elif label not in allowed:
            raise ValueError(f"field label not supported: {label}")
