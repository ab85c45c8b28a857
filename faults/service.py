"""Kubernetes object faults on Services."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .base import Fault

if TYPE_CHECKING:
    from sre_env.backend import Backend

__all__ = ["ServiceTargetPort"]


@dataclass(frozen=True)
class ServiceTargetPort(Fault):
    """A Service's targetPort no longer matches the port the process listens on."""

    namespace: str
    service: str
    port: int
    wrong_target: int
    right_target: int

    def _set(self, backend: "Backend", target: int) -> None:
        svc = backend.api.get("Service", self.service, self.namespace)
        ports = svc["spec"]["ports"]
        idx = next(i for i, p in enumerate(ports) if int(p["port"]) == self.port)
        backend.api.patch("Service", self.service, self.namespace, [{"op": "replace", "path": f"/spec/ports/{idx}/targetPort", "value": target}], "json")

    def inject(self, backend: "Backend") -> None:
        self._set(backend, self.wrong_target)

    def recover(self, backend: "Backend") -> None:
        self._set(backend, self.right_target)
