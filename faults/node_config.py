"""Node configuration faults applied the way configuration management applies them: on the host."""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .base import Fault

if TYPE_CHECKING:
    from sre_env.backend import Backend

__all__ = ["KubeletConfigEdit"]


@dataclass(frozen=True)
class KubeletConfigEdit(Fault):
    """Rewrite one line of ``/var/lib/kubelet/config.yaml`` with ``sed -i`` and restart the kubelet."""

    node: str
    old: str
    new: str
    path: str = "/var/lib/kubelet/config.yaml"

    def inject(self, backend: Backend) -> None:
        script = f"sed -i {shlex.quote(f's/{self.old}/{self.new}/')} {self.path} && systemctl restart kubelet"
        out = backend.nodes.exec(self.node, ["bash", "-c", script])
        if out.exit_code != 0:
            raise RuntimeError(f"kubelet config edit failed on {self.node}: {out.output}")

    def recover(self, backend: Backend) -> None:
        script = f"sed -i {shlex.quote(f's/{self.new}/{self.old}/')} {self.path} && systemctl restart kubelet"
        backend.nodes.exec(self.node, ["bash", "-c", script])
