"""Edge-proxy configuration faults: a filter rule added to the gateway's nginx.conf."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .base import Fault

if TYPE_CHECKING:
    from sre_env.backend import Backend

__all__ = ["NginxFilterRule"]

_RESTARTED_AT = "kubectl.kubernetes.io/restartedAt"


@dataclass(frozen=True)
class NginxFilterRule(Fault):
    """A config push inserts ``rule`` into nginx.conf (a ConfigMap key) after ``anchor``, then rolls the gateway.

    The gateway mounts the file with ``subPath``, so the push includes the
    rollout that makes new workers load it.
    """

    namespace: str
    configmap: str
    key: str
    deployment: str
    anchor: str
    rule: str
    #: a timestamp for the rollout annotation (the push's own clock, not the wall clock)
    stamp: str = "2026-03-02T09:10:00Z"

    def inject(self, backend: Backend) -> None:
        cm = backend.api.get("ConfigMap", self.configmap, self.namespace)
        text = cm["data"][self.key]
        at = text.index(self.anchor) + len(self.anchor)
        patched = text[:at] + self.rule + text[at:]
        backend.api.patch("ConfigMap", self.configmap, self.namespace, {"data": {self.key: patched}}, "merge")
        self._roll(backend)

    def recover(self, backend: Backend) -> None:
        cm = backend.api.get("ConfigMap", self.configmap, self.namespace)
        text = cm["data"][self.key].replace(self.rule, "", 1)
        backend.api.patch("ConfigMap", self.configmap, self.namespace, {"data": {self.key: text}}, "merge")
        self._roll(backend)

    def _roll(self, backend: Backend) -> None:
        patch = {"spec": {"template": {"metadata": {"annotations": {_RESTARTED_AT: self.stamp}}}}}
        backend.api.patch("Deployment", self.deployment, self.namespace, patch, "strategic")
