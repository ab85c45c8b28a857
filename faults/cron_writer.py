"""A cron job on a node that writes files nobody cleans up.

Installed the way configuration management or a hurried engineer installs one:
a file in ``/etc/cron.d`` written on the host. The job has been running for a
while before the incident (``history_s``); the node's cron model replays those
runs, so the disk holds what that many runs would have left.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sre_env.sim.model import ModelBackend

from .base import Fault

if TYPE_CHECKING:
    from sre_env.backend import Backend

__all__ = ["CronWriter"]


@dataclass(frozen=True)
class CronWriter(Fault):
    node: str
    #: file name under /etc/cron.d
    name: str
    #: the file's lines (comments, variables, job lines)
    lines: tuple[str, ...]
    #: directory the job writes into (removed on recover)
    directory: str
    #: how long the job has been installed before the incident
    history_s: float

    @property
    def path(self) -> str:
        return f"/etc/cron.d/{self.name}"

    def inject(self, backend: "Backend") -> None:
        script = " && ".join(f"echo {shlex.quote(line)} {'>' if i == 0 else '>>'} {self.path}" for i, line in enumerate(self.lines))
        res = backend.nodes.exec(self.node, ["bash", "-c", script])
        if res.exit_code != 0:
            raise RuntimeError(f"installing {self.path} on {self.node} failed: {res.output.strip()}")
        if isinstance(backend, ModelBackend):
            # a real node's disk already holds what the job wrote; the model replays those runs
            backend.model.replay_cron(self.node, self.history_s)

    def recover(self, backend: "Backend") -> None:
        backend.nodes.exec(self.node, ["bash", "-c", f"rm -f {self.path} && rm -rf {self.directory}"])
