"""Control-plane faults: namespace labels, webhook configurations and back ends, mutators, restarts.

Each is a change an operator or a pipeline makes through the Kubernetes API;
what follows (rejected pod creates, OOM-killed containers) is the model's doing.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sre_env.kube.timefmt import iso

from .base import Fault

if TYPE_CHECKING:
    from sre_env.backend import Backend

__all__ = ["CreateObject", "LabelNamespace", "PatchObject", "LaterRollout", "RestartWorkload", "ScaleWorkload"]

RESTARTED_AT = "kubectl.kubernetes.io/restartedAt"
#: how long a later rollout waits for the deployment controller to record the change it follows
_OBSERVE_S = 60


@dataclass(frozen=True)
class LabelNamespace(Fault):
    """Set (or, with ``None``, remove) labels on a namespace."""

    namespace: str
    labels: tuple[tuple[str, str | None], ...]
    previous: tuple[tuple[str, str | None], ...] = ()

    def inject(self, backend: Backend) -> None:
        backend.api.patch("Namespace", self.namespace, None, {"metadata": {"labels": dict(self.labels)}}, "merge")

    def recover(self, backend: Backend) -> None:
        backend.api.patch("Namespace", self.namespace, None, {"metadata": {"labels": dict(self.previous) or {k: None for k, _ in self.labels}}}, "merge")


@dataclass(frozen=True)
class RestartWorkload(Fault):
    """``kubectl rollout restart``: a routine maintenance restart that makes the controller create pods."""

    namespace: str
    kind: str
    name: str
    stamp: str

    def inject(self, backend: Backend) -> None:
        backend.api.patch(self.kind, self.name, self.namespace, {"spec": {"template": {"metadata": {"annotations": {RESTARTED_AT: self.stamp}}}}}, "strategic")

    def recover(self, backend: Backend) -> None:
        pass  # a restart has nothing to undo


@dataclass(frozen=True)
class LaterRollout(Fault):
    """A routine restart of a Deployment some time after a latent change to it.

    A latent condition that only a trigger exposes (client retries, a tight CPU
    limit, a soft memory limit) has been in place through normal operation and the
    rollouts since: it is in the running template but not in the latest revision
    alone, so ``kubectl rollout undo`` returns to a revision that still has it. The
    fault waits until the deployment controller has recorded the change as a
    revision of its own, then restarts the Deployment (:class:`RestartWorkload`).
    """

    namespace: str
    name: str

    def inject(self, backend: Backend) -> None:
        for _ in range(_OBSERVE_S):
            dep = backend.api.get("Deployment", self.name, self.namespace)
            if (dep.get("status") or {}).get("observedGeneration", 0) >= dep["metadata"].get("generation", 0):
                break
            backend.advance(1.0)
        # the annotation `kubectl rollout restart` writes: the time of the restart
        RestartWorkload(self.namespace, "Deployment", self.name, iso(backend.now)).inject(backend)

    def recover(self, backend: Backend) -> None:
        pass  # a restart has nothing to undo; recovering the latent change restores the template


@dataclass(frozen=True)
class PatchObject(Fault):
    """A JSON patch on any object (a re-applied manifest, a hand edit), with its inverse for recover."""

    kind: str
    name: str
    namespace: str | None
    patch: tuple[dict[str, Any], ...]
    inverse: tuple[dict[str, Any], ...] = ()

    def inject(self, backend: Backend) -> None:
        backend.api.patch(self.kind, self.name, self.namespace, [dict(op) for op in self.patch], "json")

    def recover(self, backend: Backend) -> None:
        if self.inverse:
            backend.api.patch(self.kind, self.name, self.namespace, [dict(op) for op in self.inverse], "json")


@dataclass(frozen=True)
class ScaleWorkload(Fault):
    namespace: str
    kind: str
    name: str
    replicas: int
    previous: int

    def inject(self, backend: Backend) -> None:
        backend.api.scale(self.kind, self.name, self.namespace, self.replicas)

    def recover(self, backend: Backend) -> None:
        backend.api.scale(self.kind, self.name, self.namespace, self.previous)


@dataclass(frozen=True)
class CreateObject(Fault):
    """An object someone applied (a policy, a mutator); recover deletes it."""

    obj: dict[str, Any] = field(default_factory=dict, hash=False)

    def inject(self, backend: Backend) -> None:
        backend.api.create(copy.deepcopy(self.obj))

    def recover(self, backend: Backend) -> None:
        meta = self.obj["metadata"]
        backend.api.delete(self.obj["kind"], meta["name"], meta.get("namespace"))
