"""Application configuration faults on redis servers."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .base import Fault

if TYPE_CHECKING:
    from sre_env.backend import Backend

__all__ = ["RedisServerArgs"]


@dataclass(frozen=True)
class RedisServerArgs(Fault):
    """A config push appends ``--directive value`` pairs to a redis Deployment's args (a rollout follows).

    redis-server lets command-line directives override its config file, so the
    running server takes them on the next start.
    """

    namespace: str
    deployment: str
    container: str
    extra: tuple[str, ...]
    #: the args before the change, for recover()
    original: tuple[str, ...] = ()

    def _set(self, backend: Backend, args: list[str]) -> None:
        dep = backend.api.get("Deployment", self.deployment, self.namespace)
        containers = dep["spec"]["template"]["spec"]["containers"]
        ci = next(i for i, c in enumerate(containers) if c["name"] == self.container)
        op = "replace" if "args" in containers[ci] else "add"
        backend.api.patch("Deployment", self.deployment, self.namespace, [{"op": op, "path": f"/spec/template/spec/containers/{ci}/args", "value": args}], "json")

    def inject(self, backend: Backend) -> None:
        self._set(backend, [*self.original, *self.extra])

    def recover(self, backend: Backend) -> None:
        self._set(backend, list(self.original))
