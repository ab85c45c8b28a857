"""Read-only views handed to the binaries (host and in-container commands).

The backend builds a view when a command runs; binaries render text from it
and never mutate the world except through the explicit hooks in the view.
One hook is the shell language itself: ``sh -c '...'`` scripts and the text
filters (grep, head, wc ...) are the agent shell's own (``shell``, a
:class:`ShellLanguage`), which lives above this layer and is handed in by the
backend that builds the view.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Protocol

from sre_env.apps.base import Component
from sre_env.backend import ExecResult
from sre_env.sim.kernel.hosts import HostNode
from sre_env.sim.runtime.image_contents import ImageInfo, image_info

__all__ = ["HostView", "ContainerView", "ShellLanguage", "Runner", "FileWriter"]

#: runs one simple command of a script: (argv, stdin) -> its result
Runner = Callable[[list[str], str | None], ExecResult]
#: writes a script's redirected output: (path, text, append) -> an error message, or None
FileWriter = Callable[[str, str, bool], str | None]


class ShellLanguage(Protocol):
    """The language of a script and of the text filters, as the agent's own shell speaks it."""

    def run_script(self, script: str, *, dialect: str, env: dict[str, str], run: Runner, write_file: FileWriter | None = None) -> ExecResult:
        """Run ``script``: each simple command through ``run``; syntax errors worded as ``dialect`` ("sh": dash, "bash") words them."""
        ...

    def text_filter(self, argv: list[str], stdin: str) -> ExecResult:
        """Run the text filter ``argv`` (grep, head, tail, wc, sort, uniq, cut, awk, cat) over ``stdin``."""
        ...


@dataclass
class HostView:
    node: HostNode
    now: float
    #: pods bound to this node (Kubernetes-shaped dicts), sorted by namespace/name
    pods: list[dict[str, Any]]
    #: the language of ``bash -c`` scripts and of grep/head/tail/wc/... (sre_env.sim.scripts)
    shell: ShellLanguage
    #: a deterministic integer for picking among alternative values (derived from the episode seed)
    variant: int = 0
    #: (mountpoint of a local PV on this node) -> PV name, for ``ls``/``df``
    local_volumes: dict[str, str] = field(default_factory=dict)
    #: restart a systemd unit ("kubelet", "containerd"); returns False when unknown
    restart_unit: Callable[[str], bool] | None = None


@dataclass
class ContainerView:
    pod: dict[str, Any]
    #: the container's spec from pod.spec.containers
    container: dict[str, Any]
    #: fully resolved environment (env, envFrom, valueFrom) as the process sees it
    env: dict[str, str]
    component: Component | None
    node: HostNode
    now: float
    process_running: bool
    listening_ports: tuple[int, ...]
    #: seconds since the container started
    uptime_s: float
    #: the language of ``sh -c`` scripts and of grep/head/tail/wc/... (sre_env.sim.scripts)
    shell: ShellLanguage
    variant: int = 0
    #: resolve a DNS name from inside the pod -> cluster IP / pod IP, or None (NXDOMAIN)
    resolve: Callable[[str], str | None] | None = None
    #: try a TCP connect from this pod: (host, port) -> None on success or an error string
    connect: Callable[[str, int], str | None] | None = None
    #: the pod's resolver for ``name``: (nameserver asked, "ok" | "nxdomain" | "timeout" | "servfail") (sre_env.sim.network.netmodel)
    dns_probe: Callable[[str], tuple[str, str]] | None = None
    #: files the container sees: path -> content (config files, mounted ConfigMaps/Secrets)
    files: dict[str, str] = field(default_factory=dict)
    #: the node disk under the container's persistent volume (None: no volume)
    data_disk: Any = None
    #: share of reads of the volume's files that fail with EIO
    data_error_fraction: float = 0.0
    #: the live redis process state in this container (sre_env.sim.runtime.redis_model), if it runs redis
    redis: Any = None
    #: the redis process a client in this pod reaches at (host, port), or None
    redis_at: Callable[[str, int], Any] | None = None
    #: mongod running with --auth: its user database (sre_env.sim.runtime.mongo_auth.UserStore), else None
    mongo_users: Any = None
    #: call after changing ``mongo_users`` (clients re-authenticate against the new state)
    on_mongo_users_changed: Callable[[], None] | None = None
    #: the app model's in-container tools (psql, kafka-consumer-groups.sh, valkey-cli ...):
    #: (argv, stdin) -> ExecResult, or None when the command is not one of them
    app_tool: Callable[[list[str], str | None], Any] | None = None
    #: the container's kernel state: port range, TIME_WAIT sockets, open-files limit (sre_env.sim.runtime.oslimits)
    os_state: Any = None

    @property
    def image(self) -> ImageInfo:
        """What the container's image holds: its binaries, user, OS (sre_env.sim.runtime.image_contents)."""
        return image_info(str(self.container.get("image") or (self.component.image if self.component else "")))
