"""API objects in the shape the API server stores them, for whoever creates one."""

from __future__ import annotations

from typing import Any

__all__ = ["namespace_object"]


def namespace_object(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "kind": "Namespace",
        "apiVersion": "v1",
        "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name, **(labels or {})}},
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }
