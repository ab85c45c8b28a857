"""Workload faults on pod templates and their surroundings: probes, init containers, sidecars, volumes.

Each is one change an engineer could push through the API — a probe added with
the wrong port, a sidecar configured onto the app's port, a claim name
mistyped, a node pin — applied as a JSON patch to the workload (and its
inverse for ``recover``). What follows (restarts, endpoints, Init:0/1, Multi-
Attach, FailedScheduling) is the simulator's doing.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .base import Fault

if TYPE_CHECKING:
    from sre_env.backend import Backend

__all__ = ["PatchWorkload", "DeleteObject"]


@dataclass(frozen=True)
class PatchWorkload(Fault):
    """A strategic-merge or JSON patch to a Deployment/StatefulSet; ``undo`` is its inverse."""

    namespace: str
    name: str
    patch: Any
    patch_type: str = "strategic"
    undo: Any = None
    undo_type: str = "json"
    kind: str = "Deployment"

    def inject(self, backend: "Backend") -> None:
        backend.api.patch(self.kind, self.name, self.namespace, copy.deepcopy(self.patch), self.patch_type)

    def recover(self, backend: "Backend") -> None:
        if self.undo is not None:
            backend.api.patch(self.kind, self.name, self.namespace, copy.deepcopy(self.undo), self.undo_type)


@dataclass(frozen=True)
class DeleteObject(Fault):
    """An object removed (a "cleanup" that took something still in use); ``recover`` recreates the copy."""

    kind: str
    namespace: str
    name: str
    saved: dict = field(default_factory=dict, compare=False)

    def inject(self, backend: "Backend") -> None:
        backend.api.delete(self.kind, self.name, self.namespace)

    def recover(self, backend: "Backend") -> None:
        if self.saved:
            backend.api.create(copy.deepcopy(self.saved))
