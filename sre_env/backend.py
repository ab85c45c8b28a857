"""The Backend seam: one cluster an episode runs on.

Everything above this line (shell, faults, oracles, the env) talks to a cluster
only through these surfaces, so a fault written once runs on the embedded
simulator and on a real cluster. ``SimBackend`` (sre_env.sim.backend) is the
default implementation; ``KubernetesBackend`` (sre_env.k8s) runs on a live cluster.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

__all__ = ["ExecResult", "ClusterAPI", "NodeAccess", "Backend"]

Obj = dict[str, Any]


@dataclass(frozen=True)
class ExecResult:
    """What a command run in a container or on a node printed, and its exit code."""

    output: str
    exit_code: int = 0


@runtime_checkable
class ClusterAPI(Protocol):
    """A Kubernetes API: kinds are canonical (``Pod``, ``Deployment``); errors are ApiError."""

    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj: ...

    def list(
        self,
        kind: str,
        namespace: str | None = None,
        label_selector: str | None = None,
        field_selector: str | None = None,
    ) -> list[Obj]: ...

    def create(self, obj: Obj) -> Obj: ...

    def replace(self, obj: Obj) -> Obj: ...

    def patch(self, kind: str, name: str, namespace: str | None, patch: Any, patch_type: str = "strategic") -> Obj: ...

    def delete(self, kind: str, name: str, namespace: str | None = None, *, force: bool = False) -> Obj: ...

    def scale(self, kind: str, name: str, namespace: str, replicas: int) -> Obj: ...

    def evict(self, name: str, namespace: str) -> None: ...

    def logs(
        self,
        name: str,
        namespace: str,
        container: str | None = None,
        *,
        previous: bool = False,
        tail: int | None = None,
        since_seconds: float | None = None,
        timestamps: bool = False,
    ) -> str: ...

    def exec(self, name: str, namespace: str, container: str | None, argv: list[str]) -> ExecResult: ...

    def top_pods(self, namespace: str | None) -> list[tuple[str, str, int, int]]:
        """(namespace, pod, cpu millicores, memory bytes) for running pods."""
        ...

    def top_nodes(self) -> list[tuple[str, int, int, int, int]]:
        """(node, cpu millicores, cpu capacity millicores, memory bytes, memory capacity bytes)."""
        ...


@runtime_checkable
class NodeAccess(Protocol):
    """Host-level access to a node (what ``ssh`` or ``kubectl debug node/...`` gives)."""

    def names(self) -> list[str]: ...

    def exec(self, node: str, argv: list[str]) -> ExecResult: ...

    # fault surfaces (a real cluster implements these with a privileged pod: bpftrace, dm-flakey)
    def device_for_path(self, node: str, path: str) -> str:
        """The block device (``sdb``) holding ``path`` on ``node``."""
        ...

    def inject_read_errors(self, node: str, device: str, *, fraction: float, sectors: tuple[int, ...], paths: tuple[str, ...] = ()) -> None:
        """Make reads of ``sectors`` on ``device`` fail with EIO (a share ``fraction`` of reads of files under ``paths``)."""
        ...

    def clear_read_errors(self, node: str, device: str) -> None: ...

    def inject_silent_corruption(self, node: str, device: str, *, fraction: float, paths: tuple[str, ...] = ()) -> None:
        """Make reads of files under ``paths`` on ``device`` return wrong data now and then (no EIO)."""
        ...

    def clear_silent_corruption(self, node: str, device: str) -> None: ...

    def inject_hardware_fault(self, node: str, kind: str, **params: Any) -> None:
        """What a broken part does: ``nic_crc`` (fraction), ``nic_flap`` (down_s_per_min), ``ecc``
        (per_hour, dimm), ``clock`` (offset_s), ``tsc_unstable`` (cpu); a backend that cannot
        emulate one on its nodes refuses it."""
        ...

    def clear_hardware_fault(self, node: str, kind: str) -> None: ...


@runtime_checkable
class Backend(Protocol):
    api: ClusterAPI
    nodes: NodeAccess

    @property
    def now(self) -> float:
        """Seconds of cluster time since the episode's epoch."""
        ...

    def advance(self, seconds: float) -> None: ...
