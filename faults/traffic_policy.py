"""Service traffic-policy faults."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .base import Fault

if TYPE_CHECKING:
    from sre_env.backend import Backend

__all__ = ["InternalTrafficPolicy"]


@dataclass(frozen=True)
class InternalTrafficPolicy(Fault):
    """A Service's ``spec.internalTrafficPolicy`` set to ``policy`` (``Local``: node-local endpoints only)."""

    namespace: str
    service: str
    policy: str = "Local"
    #: the value before, for recover()
    original: str = "Cluster"

    def _set(self, backend: Backend, value: str) -> None:
        backend.api.patch("Service", self.service, self.namespace, {"spec": {"internalTrafficPolicy": value}}, "merge")

    def inject(self, backend: Backend) -> None:
        self._set(backend, self.policy)

    def recover(self, backend: Backend) -> None:
        self._set(backend, self.original)
