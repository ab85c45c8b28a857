"""What runs on the nodes for each pod: its sandbox and containers, as the kubelet keeps them.

The kubelet (``sre_env.sim.kubelet``) writes these records; the network, traffic,
telemetry and command layers read them. A record is plain state: how a container
behaves is decided by the kubelet and the runtime models, not here.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from sre_env.sim.kernel.world import World

__all__ = ["StartOutcome", "ContainerRuntime", "PodRuntime", "kill_container"]

Obj = dict[str, Any]


@dataclass(frozen=True)
class StartOutcome:
    #: seconds after start at which the process exits (None: keeps running)
    exit_after: float | None = None
    exit_code: int = 0
    reason: str = "Completed"
    #: container start itself fails (exec error) -> StartError, no process at all
    start_error: str | None = None
    #: seconds until the process listens on its port (None: never listens)
    serve_after: float | None = 0.0
    #: log events emitted at start: (delay_s, event, fields)
    log_events: tuple[tuple[float, str, tuple[tuple[str, Any], ...]], ...] = ()
    listen_port: int | None = None
    memory_mib: float = 8.0


@dataclass
class ContainerRuntime:
    name: str
    state: str = "creating"  # creating|pulling|image_backoff|config_error|running|backoff|exited
    since: float = 0.0
    wake_at: float = 0.0
    restart_count: int = 0
    crashes: int = 0
    started_at: float | None = None
    exit_at: float | None = None
    serve_at: float | None = None
    outcome: StartOutcome | None = None
    waiting_reason: str = "ContainerCreating"
    waiting_message: str = ""
    last_terminated: Obj | None = None
    container_id: str = ""
    image_id: str = ""
    ready: bool = False
    listen_port: int | None = None
    memory_mib: float = 0.0
    #: current instance's log lines (t, line); previous instance's lines
    log: deque = field(default_factory=lambda: deque(maxlen=1000))
    prev_log: list = field(default_factory=list)
    pending_logs: list = field(default_factory=list)
    image_pull_failures: int = 0
    #: the image the running instance was started from
    image: str = ""
    #: whether the process served at the last sync (routes change when this flips)
    was_serving: bool = False
    last_event_at: dict = field(default_factory=dict)
    #: when the current run of failed liveness probes began (None while they pass)
    live_fail_since: float | None = None
    #: the environment the running process was started with (env is fixed at process start)
    started_env: dict | None = None

    def serving(self, now: float) -> bool:
        return self.state == "running" and self.serve_at is not None and now >= self.serve_at


@dataclass
class PodRuntime:
    uid: str
    ip: str
    containers: dict[str, ContainerRuntime] = field(default_factory=dict)
    seen_rv: str = ""
    wake_at: float = 0.0
    started: float = 0.0
    debug_pod: bool = False
    #: init containers (sre_env.sim.kubelet.initcontainers), and whether they have all completed
    init: dict[str, ContainerRuntime] = field(default_factory=dict)
    initialized: bool = False


def kill_container(world: "World", pod: Obj, rt: "PodRuntime", ctr: "ContainerRuntime", *, exit_code: int, reason: str = "Error") -> None:
    """The container's process dies now (a signal from outside: OOM killer, SIGBUS, operator)."""
    now = world.clock.now
    ctr.outcome = StartOutcome(exit_after=0.0, exit_code=exit_code, reason=reason)
    ctr.exit_at = now
    rt.wake_at = min(rt.wake_at, now)
    world.kubelet_wake = min(world.kubelet_wake, now)
