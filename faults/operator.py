"""Operator faults: a misconfigured custom resource, applied through the API as a user would.

The operator does the rest: it renders the bad setting into the workloads it owns.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

from .base import Fault

if TYPE_CHECKING:
    from sre_env.backend import Backend

__all__ = ["PatchCustomResource"]


class PatchCustomResource(Fault):
    """``kubectl patch <kind> <name> --type=merge -p <patch>``; ``recover`` puts the old spec back."""

    def __init__(self, kind: str, name: str, namespace: str, patch: dict[str, Any]) -> None:
        self.kind, self.name, self.namespace, self.patch = kind, name, namespace, patch
        self._spec: dict[str, Any] | None = None

    def inject(self, backend: "Backend") -> None:
        self._spec = copy.deepcopy(backend.api.get(self.kind, self.name, self.namespace).get("spec"))
        backend.api.patch(self.kind, self.name, self.namespace, copy.deepcopy(self.patch), "merge")

    def recover(self, backend: "Backend") -> None:
        if self._spec is None:
            return
        obj = copy.deepcopy(backend.api.get(self.kind, self.name, self.namespace))
        obj["spec"] = copy.deepcopy(self._spec)
        backend.api.replace(obj)
