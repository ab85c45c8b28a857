"""Application misconfiguration applied to a workload's pod template."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .base import Fault

if TYPE_CHECKING:
    from sre_env.backend import Backend

__all__ = ["RemoveEnvVar"]


@dataclass(frozen=True)
class RemoveEnvVar(Fault):
    """A config push drops one env var from a Deployment (a new rollout follows)."""

    namespace: str
    deployment: str
    container: str
    var: str
    #: the value it had, for recover()
    value: str = ""

    def inject(self, backend: "Backend") -> None:
        dep = backend.api.get("Deployment", self.deployment, self.namespace)
        containers = dep["spec"]["template"]["spec"]["containers"]
        ci = next(i for i, c in enumerate(containers) if c["name"] == self.container)
        env = containers[ci].get("env") or []
        ei = next(i for i, e in enumerate(env) if e.get("name") == self.var)
        backend.api.patch(
            "Deployment",
            self.deployment,
            self.namespace,
            [
                {"op": "test", "path": f"/spec/template/spec/containers/{ci}/env/{ei}/name", "value": self.var},
                {"op": "remove", "path": f"/spec/template/spec/containers/{ci}/env/{ei}"},
            ],
            "json",
        )

    def recover(self, backend: "Backend") -> None:
        backend.api.patch(
            "Deployment",
            self.deployment,
            self.namespace,
            {"spec": {"template": {"spec": {"containers": [{"name": self.container, "env": [{"name": self.var, "value": self.value}]}]}}}},
            "strategic",
        )
