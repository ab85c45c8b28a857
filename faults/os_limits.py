"""Kernel limits set too low for one workload, through the pod spec (the only place a change survives).

Kubernetes has no field for a container's open-files limit, so people set it
in the start command (``sh -c 'ulimit -n N && exec app'``); the ephemeral port
range is a namespaced, "safe" sysctl a pod may set in its security context.
Both faults are ordinary Deployment edits; the simulator derives what the
limits do to the process.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .base import Fault

if TYPE_CHECKING:
    from sre_env.backend import Backend
    from sre_env.sim.model import ModelBackend

__all__ = ["PodSysctl", "ContainerUlimit", "ReportingDashboards"]


@dataclass(frozen=True)
class PodSysctl(Fault):
    """``spec.securityContext.sysctls`` of a Deployment's pods gets ``name = value``."""

    namespace: str
    deployment: str
    name: str
    value: str

    def inject(self, backend: "Backend") -> None:
        sysctls = [{"name": self.name, "value": self.value}]
        backend.api.patch("Deployment", self.deployment, self.namespace, {"spec": {"template": {"spec": {"securityContext": {"sysctls": sysctls}}}}}, "merge")

    def recover(self, backend: "Backend") -> None:
        backend.api.patch("Deployment", self.deployment, self.namespace, {"spec": {"template": {"spec": {"securityContext": {"sysctls": None}}}}}, "merge")


@dataclass(frozen=True)
class ContainerUlimit(Fault):
    """The container starts through a shell that lowers ``RLIMIT_NOFILE`` before exec'ing the program."""

    namespace: str
    deployment: str
    container: str
    #: the program and its arguments, as the container ran them before
    argv: tuple[str, ...]
    nofile: int

    def inject(self, backend: "Backend") -> None:
        script = f"ulimit -c unlimited && ulimit -n {self.nofile} && exec {shlex.join(self.argv)}"
        self._set(backend, ["sh", "-c", script])

    def recover(self, backend: "Backend") -> None:
        self._set(backend, list(self.argv))

    def _set(self, backend: "Backend", command: list[str]) -> None:
        patch = {"spec": {"template": {"spec": {"containers": [{"name": self.container, "command": command}]}}}}
        backend.api.patch("Deployment", self.deployment, self.namespace, patch, "strategic")


@dataclass(frozen=True)
class ReportingDashboards(Fault):
    """A BI tool's dashboards start querying the database, and its server is tuned for them.

    The dashboards live outside the cluster (they refresh on their own schedule and
    reconnect when their sessions are killed); the tuning is the database's command
    line (``-c work_mem=... -c max_parallel_workers_per_gather=...``). The refreshes are
    a timer on the simulator's clock.
    """

    namespace: str
    app_name: str
    deployment: str
    container: str
    work_mem: str
    workers: int

    def inject(self, backend: "ModelBackend") -> None:
        from sre_env.sim.runtime.pg_reports import DashboardRefresh

        args = ["-c", f"work_mem={self.work_mem}", "-c", f"max_parallel_workers_per_gather={self.workers}"]
        patch = {"spec": {"template": {"spec": {"containers": [{"name": self.container, "args": args}]}}}}
        backend.api.patch("Deployment", self.deployment, self.namespace, patch, "strategic")
        backend.model.schedule(backend.now + 20.0, DashboardRefresh(self.namespace, self.app_name))

    def recover(self, backend: "ModelBackend") -> None:
        from sre_env.sim.runtime.pg_reports import TAG

        backend.model.cancel(TAG)
        patch = {"spec": {"template": {"spec": {"containers": [{"name": self.container, "args": None}]}}}}
        backend.api.patch("Deployment", self.deployment, self.namespace, patch, "strategic")
