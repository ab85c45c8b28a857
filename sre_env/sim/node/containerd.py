"""containerd's identifiers on a node: pod sandboxes and their containers.

The same ids show in several places on a real node: ``crictl``, the mounts
under ``/run/containerd``, the log file names in ``/var/log/containers`` and
the CNI's reservation files (which name the sandbox holding each address).
They are derived from the pod, so every reader agrees without storing them.
"""

from __future__ import annotations

import hashlib
from typing import Any

__all__ = ["container_id", "sandbox_id", "failed_sandbox_id"]


def container_id(pod: dict[str, Any], status: dict[str, Any]) -> str:
    """The 64-hex container ID: from the status when the model set one, else a stable hash."""
    cid = str(status.get("containerID") or "")
    if "://" in cid:
        tail = cid.split("://", 1)[1]
        if tail:
            return (tail + "0" * 64)[:64]
    meta = pod.get("metadata") or {}
    seed = f"{meta.get('uid', '')}/{meta.get('name', '')}/{status.get('name', '')}/{status.get('restartCount', 0)}"
    return hashlib.sha256(seed.encode()).hexdigest()


def sandbox_id(pod: dict[str, Any]) -> str:
    """The id of the pod's live sandbox (``crictl pods``)."""
    meta = pod.get("metadata") or {}
    return hashlib.sha256(f"sandbox/{meta.get('uid', '')}/{meta.get('name', '')}".encode()).hexdigest()


def failed_sandbox_id(uid: str, attempt: int = 0) -> str:
    """The id of a sandbox the runtime tried to create for pod ``uid`` and could not (a failed attempt)."""
    return hashlib.blake2b(f"sandbox/{uid}/{attempt}".encode(), digest_size=32).hexdigest()
