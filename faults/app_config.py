"""Application configuration faults: env values, images, commands, ConfigMaps, database users.

Each one changes what an operator or a pipeline would change -- a Deployment's
pod template, a ConfigMap, a Secret, or a database's users through the mongo
shell inside its pod -- and nothing else. Crash loops, refused sessions and 5xx
responses follow from the model.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .base import Fault

if TYPE_CHECKING:
    from sre_env.backend import Backend

__all__ = [
    "DeleteConfigMap",
    "MongoShell",
    "SetConfigMapKey",
    "SetContainerCommand",
    "SetContainerEnv",
    "SetContainerImage",
    "SetSecretKey",
    "delete_pods",
    "restart_deployment",
]


def _container_index(backend: "Backend", namespace: str, deployment: str, container: str) -> tuple[dict[str, Any], int]:
    dep = backend.api.get("Deployment", deployment, namespace)
    containers = dep["spec"]["template"]["spec"]["containers"]
    return dep, next(i for i, c in enumerate(containers) if c["name"] == container)


@dataclass(frozen=True)
class SetContainerEnv(Fault):
    """A config push sets one env var of a Deployment's container (a new rollout follows).

    ``previous`` is the value it had (None: the entry did not exist and is removed on recover).
    """

    namespace: str
    deployment: str
    container: str
    var: str
    value: str
    previous: str | None = None

    def _apply(self, backend: "Backend", value: str | None) -> None:
        dep, ci = _container_index(backend, self.namespace, self.deployment, self.container)
        env = list(dep["spec"]["template"]["spec"]["containers"][ci].get("env") or [])
        idx = next((i for i, e in enumerate(env) if e.get("name") == self.var), None)
        if value is None:
            if idx is not None:
                env.pop(idx)
        elif idx is None:
            env.append({"name": self.var, "value": value})
        else:
            env[idx] = {"name": self.var, "value": value}
        backend.api.patch("Deployment", self.deployment, self.namespace, [{"op": "replace" if "env" in dep["spec"]["template"]["spec"]["containers"][ci] else "add", "path": f"/spec/template/spec/containers/{ci}/env", "value": env}], "json")

    def inject(self, backend: "Backend") -> None:
        self._apply(backend, self.value)

    def recover(self, backend: "Backend") -> None:
        self._apply(backend, self.previous)


@dataclass(frozen=True)
class SetContainerImage(Fault):
    """``kubectl set image``: a release pipeline moves a container to another image reference."""

    namespace: str
    deployment: str
    container: str
    image: str
    previous: str

    def _apply(self, backend: "Backend", image: str) -> None:
        _, ci = _container_index(backend, self.namespace, self.deployment, self.container)
        backend.api.patch("Deployment", self.deployment, self.namespace, [{"op": "replace", "path": f"/spec/template/spec/containers/{ci}/image", "value": image}], "json")

    def inject(self, backend: "Backend") -> None:
        self._apply(backend, self.image)

    def recover(self, backend: "Backend") -> None:
        self._apply(backend, self.previous)


@dataclass(frozen=True)
class SetContainerCommand(Fault):
    """A manifest change gives the container another command (the image still ships that binary)."""

    namespace: str
    deployment: str
    container: str
    command: tuple[str, ...]
    previous: tuple[str, ...]

    def _apply(self, backend: "Backend", command: tuple[str, ...]) -> None:
        _, ci = _container_index(backend, self.namespace, self.deployment, self.container)
        backend.api.patch("Deployment", self.deployment, self.namespace, [{"op": "replace", "path": f"/spec/template/spec/containers/{ci}/command", "value": list(command)}], "json")

    def inject(self, backend: "Backend") -> None:
        self._apply(backend, self.command)

    def recover(self, backend: "Backend") -> None:
        self._apply(backend, self.previous)


@dataclass(frozen=True)
class SetConfigMapKey(Fault):
    """One key of a ConfigMap takes another value."""

    namespace: str
    name: str
    key: str
    value: str
    previous: str

    def inject(self, backend: "Backend") -> None:
        backend.api.patch("ConfigMap", self.name, self.namespace, {"data": {self.key: self.value}}, "merge")

    def recover(self, backend: "Backend") -> None:
        backend.api.patch("ConfigMap", self.name, self.namespace, {"data": {self.key: self.previous}}, "merge")


@dataclass(frozen=True)
class DeleteConfigMap(Fault):
    """A ConfigMap is deleted (a cleanup job, a wrong ``kubectl delete``); ``data`` restores it."""

    namespace: str
    name: str
    data: tuple[tuple[str, str], ...] = field(default_factory=tuple)

    def inject(self, backend: "Backend") -> None:
        backend.api.delete("ConfigMap", self.name, self.namespace)

    def recover(self, backend: "Backend") -> None:
        backend.api.create({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": self.name, "namespace": self.namespace}, "data": dict(self.data)})


@dataclass(frozen=True)
class SetSecretKey(Fault):
    """One key of an Opaque Secret takes another (plain-text) value."""

    namespace: str
    name: str
    key: str
    value: str
    previous: str

    def _apply(self, backend: "Backend", value: str) -> None:
        backend.api.patch("Secret", self.name, self.namespace, {"data": {self.key: base64.b64encode(value.encode()).decode()}}, "merge")

    def inject(self, backend: "Backend") -> None:
        self._apply(backend, self.value)

    def recover(self, backend: "Backend") -> None:
        self._apply(backend, self.previous)


@dataclass(frozen=True)
class MongoShell(Fault):
    """A statement run with the mongo shell inside a database's pod, as its admin user.

    ``undo`` is the statement that reverses it (for recover()).
    """

    namespace: str
    deployment: str
    user: str
    password: str
    statement: str
    undo: str = ""

    def _run(self, backend: "Backend", statement: str) -> None:
        pods = [p for p in backend.api.list("Pod", self.namespace, f"io.kompose.service={self.deployment}") if not p["metadata"].get("deletionTimestamp")]
        if not pods:
            raise RuntimeError(f"no running pod of {self.deployment} to run the mongo shell in")
        argv = ["mongo", "admin", "-u", self.user, "-p", self.password, "--quiet", "--eval", statement]
        result = backend.api.exec(pods[0]["metadata"]["name"], self.namespace, None, argv)
        if result.exit_code != 0:
            raise RuntimeError(f"mongo shell failed in {pods[0]['metadata']['name']}: {result.output}")

    def inject(self, backend: "Backend") -> None:
        self._run(backend, self.statement)

    def recover(self, backend: "Backend") -> None:
        if self.undo:
            self._run(backend, self.undo)


def restart_deployment(backend: "Backend", namespace: str, deployment: str, stamp: str) -> None:
    """What ``kubectl rollout restart`` writes: a new pod-template annotation."""
    backend.api.patch("Deployment", deployment, namespace, {"spec": {"template": {"metadata": {"annotations": {"kubectl.kubernetes.io/restartedAt": stamp}}}}}, "strategic")


def delete_pods(backend: "Backend", namespace: str, selector: str) -> None:
    """Pods go away (a node drain, an eviction); their controllers create new ones."""
    for pod in backend.api.list("Pod", namespace, selector):
        backend.api.delete("Pod", pod["metadata"]["name"], namespace)
