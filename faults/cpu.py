"""A CPU limit far below what a workload needs: the CFS quota throttles it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .base import Fault

if TYPE_CHECKING:
    from sre_env.backend import Backend

__all__ = ["CpuLimit"]


@dataclass(frozen=True)
class CpuLimit(Fault):
    """``resources.limits.cpu`` of one container set to ``limit`` (requests capped to match)."""

    namespace: str
    deployment: str
    container: str
    limit: str
    #: the values it had, for recover()
    previous_limit: str = ""
    previous_request: str = ""

    def inject(self, backend: "Backend") -> None:
        self._set(backend, self.limit, self.limit)

    def recover(self, backend: "Backend") -> None:
        self._set(backend, self.previous_limit, self.previous_request)

    def _set(self, backend: "Backend", limit: str, request: str) -> None:
        resources = {"limits": {"cpu": limit}, "requests": {"cpu": request}}
        backend.api.patch("Deployment", self.deployment, self.namespace, {"spec": {"template": {"spec": {"containers": [{"name": self.container, "resources": resources}]}}}}, "strategic")
