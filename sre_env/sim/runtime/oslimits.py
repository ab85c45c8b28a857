"""Per-container kernel limits and what running into them does: ephemeral ports, open files.

Two resources every process has and rarely thinks about:

* **Ephemeral ports.** A client that opens a new TCP connection per call and
  closes it first leaves the socket in TIME_WAIT for 60 s (``TCP_TIMEWAIT_LEN``,
  fixed in Linux; ``tcp_fin_timeout`` is about FIN_WAIT_2 and does not change
  it). Towards one destination ``ip:port`` a pod can hold at most as many
  sockets as its network namespace's ``net.ipv4.ip_local_port_range`` has
  ports, so it sustains ``ports / 60`` new connections per second; beyond that
  ``connect()`` fails with EADDRNOTAVAIL ("cannot assign requested address").
  A pod's range is its own network namespace's: the kernel default
  (32768-60999) unless the pod sets the safe sysctl in
  ``spec.securityContext.sysctls`` -- the node's value does not reach pods.
  Which clients reconnect per call is app data (``Dependency.pooled``).
* **Open files.** A process holds a descriptor per socket and file; its
  ``RLIMIT_NOFILE`` is the runtime's default (1048576 under containerd) unless
  its start command lowers it (``sh -c 'ulimit -n 1024 && exec app'``). Kubernetes
  has no field for it. A server at its limit cannot ``accept()`` (EMFILE): new
  connections wait in the listen backlog and their clients time out, while the
  process logs the failed accepts. ``kubectl exec`` starts a new process with
  the runtime's default limit, so only ``/proc/1/limits`` shows the real one.

Everything here is a pure function of the pod specs, the app's workload and
the offered load: routes and pod error shares are derived when plans are
compiled, exec views when someone looks, and the per-tick log hook only runs
for pods that are at a limit.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sre_env.kube.timefmt import EPOCH
from sre_env.sim.logs.streams import container_raw_log
from sre_env.sim.runtime.pg_reports import shm_bytes, shm_used

if TYPE_CHECKING:
    from sre_env.apps.base import AppSpec, Component
    from sre_env.sim.kernel.world import World
    from sre_env.sim.network.routing import Route

__all__ = [
    "TIME_WAIT_S",
    "DEFAULT_PORT_RANGE",
    "DEFAULT_NOFILE",
    "port_range",
    "edge_connection_rate",
    "port_gate",
    "exec_target",
    "nofile_limit",
    "fd_demand",
    "pod_limit_failure",
    "os_limits_tick",
    "ContainerOsState",
    "container_os_state",
    "shm_row",
]

Obj = dict[str, Any]

#: TCP_TIMEWAIT_LEN: how long an actively closed socket keeps its local port
TIME_WAIT_S = 60.0
#: the kernel's default ``net.ipv4.ip_local_port_range`` of a new network namespace
DEFAULT_PORT_RANGE = (32768, 60999)
#: RLIMIT_NOFILE containerd gives containers (its unit's LimitNOFILE=infinity -> fs.nr_open)
DEFAULT_NOFILE = 1048576
#: descriptors any server process holds regardless of load: stdio, epoll, listeners, log files
BASE_FDS = 24
#: client connections an HTTP entrypoint holds open per request/s of offered load (keep-alive
#: browsers and load-generator workers idle between requests on their own connections)
CLIENT_CONNS_PER_RPS = 6.0
_SHELLS = ("sh", "/bin/sh", "bash", "/bin/bash", "ash", "/bin/ash", "dash", "/bin/dash")
_ULIMIT_N = re.compile(r"\bulimit\s+(?:-[SH]*n[SH]*|-n)\s+(\d+|unlimited)\b")
_EXEC = re.compile(r"(?:^|&&|;|\|\|)\s*exec\s+(.+?)\s*$")


# ---------------------------------------------------------------- ephemeral ports
def pod_sysctls(pod: Obj | None) -> dict[str, str]:
    """``spec.securityContext.sysctls`` of a pod as name -> value."""
    sc = ((pod or {}).get("spec") or {}).get("securityContext") or {}
    out: dict[str, str] = {}
    for item in sc.get("sysctls") or ():
        if isinstance(item, dict) and item.get("name"):
            out[str(item["name"])] = str(item.get("value", ""))
    return out


def port_range(pod: Obj | None) -> tuple[int, int]:
    """The pod network namespace's ``ip_local_port_range`` (the kernel default unless the pod sets it)."""
    raw = pod_sysctls(pod).get("net.ipv4.ip_local_port_range")
    if raw is None:
        return DEFAULT_PORT_RANGE
    parts = raw.replace(",", " ").split()
    try:
        lo, hi = int(parts[0]), int(parts[1])
    except (ValueError, IndexError):
        return DEFAULT_PORT_RANGE
    if not (1 <= lo <= hi <= 65535):
        return DEFAULT_PORT_RANGE
    return lo, hi


def _ports(pod: Obj | None) -> int:
    lo, hi = port_range(pod)
    return hi - lo + 1


def edge_connection_rate(world: "World", app: "AppSpec", caller: str, callee: str) -> float:
    """Calls/s ``caller`` makes to ``callee`` at the offered load (all caller pods together)."""
    offered = app.rps * world.load_factor.get(app.name, 1.0)
    rate = 0.0
    for rt in app.requests:
        for call in rt.calls:
            if call.caller == caller and call.callee == callee:
                rate += offered * rt.weight * call.times * call.miss_ratio
    return rate


def _unpooled(comp: "Component", callee: str) -> bool:
    dep = next((d for d in comp.dependencies if d.service == callee), None)
    return dep is not None and not getattr(dep, "pooled", True)


def port_gate(world: "World", app: "AppSpec", caller: "Component", callee: str, uid: str, route: "Route", n_callers: int) -> "Route":
    """``route`` as a client that connects once per call sees it from pod ``uid``: with too few
    ephemeral ports for the TIME_WAIT sockets its calls leave, some connects fail (EADDRNOTAVAIL)."""
    if route.ok <= 0.0 or not _unpooled(caller, callee):
        return route
    rate = edge_connection_rate(world, app, caller.name, callee) / max(n_callers, 1)
    held = rate * TIME_WAIT_S
    ports = _ports(world.pod_by_uid(uid))
    if held <= ports:
        return route
    dest = route.ip or route.target.rsplit(":", 1)[0]
    port = route.target.rsplit(":", 1)[-1]
    return dataclasses.replace(route, ok=route.ok * ports / held, error=f"dial tcp {dest}:{port}: connect: cannot assign requested address")


def _time_wait(world: "World", app: "AppSpec", comp: "Component", pod: Obj, n_pods: int) -> list[tuple[str, int, int]]:
    """(destination service, its port, sockets in TIME_WAIT) per destination this pod reconnects to."""
    out = []
    ports = _ports(pod)
    for dep in comp.dependencies:
        if getattr(dep, "pooled", True):
            continue
        rate = edge_connection_rate(world, app, comp.name, dep.service) / max(n_pods, 1)
        out.append((dep.service, dep.port, int(min(rate * TIME_WAIT_S, ports))))
    return out


# ---------------------------------------------------------------- open files
def exec_target(container: Obj) -> list[str] | None:
    """The program a ``sh -c '...; exec PROG ARGS'`` start command ends up running (None: not such a wrapper)."""
    command = [str(a) for a in container.get("command") or ()]
    args = [str(a) for a in container.get("args") or ()]
    argv = command + args
    if len(argv) < 3 or argv[0] not in _SHELLS or argv[1] not in ("-c", "-ec", "-euc"):
        return None
    m = _EXEC.search(argv[2])
    if m is None:
        return None
    try:
        target = shlex.split(m.group(1))
    except ValueError:
        return None
    return target or None


def nofile_limit(container: Obj) -> int:
    """RLIMIT_NOFILE of the container's main process: the runtime default, or what its wrapper's ``ulimit -n`` set."""
    if exec_target(container) is None:
        return DEFAULT_NOFILE
    script = str((list(container.get("command") or ()) + list(container.get("args") or ()))[2])
    limit = DEFAULT_NOFILE
    for m in _ULIMIT_N.finditer(script):
        limit = DEFAULT_NOFILE if m.group(1) == "unlimited" else min(int(m.group(1)), DEFAULT_NOFILE)
    return limit


def fd_demand(world: "World", app: "AppSpec", comp: "Component", n_pods: int) -> int:
    """Descriptors one replica needs: its base set, one per outgoing connection pool, and its
    clients' connections (many for an HTTP entrypoint, one per calling pod otherwise)."""
    fds = BASE_FDS + 2 * len(comp.dependencies)
    if comp.name == app.entrypoint:
        offered = app.rps * world.load_factor.get(app.name, 1.0)
        fds += int(CLIENT_CONNS_PER_RPS * offered / max(n_pods, 1))
    else:
        fds += 2 * sum(1 for c in app.components if any(d.service == comp.name for d in c.dependencies))
    return fds


def _app_of(world: "World", pod: Obj) -> "AppSpec | None":
    ns = pod["metadata"]["namespace"]
    return next((a for a in world.apps if a.namespace == ns), None)


def pod_limit_failure(world: "World", pod: Obj) -> tuple[float, str] | None:
    """Share of calls into ``pod`` that fail because its process is out of descriptors, and what
    callers see; records the pod for :func:`os_limits_tick`. Cheap for pods without a start wrapper."""
    containers = pod["spec"].get("containers") or ()
    if not containers or exec_target(containers[0]) is None:
        return None
    limit = nofile_limit(containers[0])
    comp = world.component_for(pod)
    app = _app_of(world, pod)
    if comp is None or app is None:
        return None
    n_pods = max(1, sum(1 for p in world.store.iter("Pod") if p["metadata"]["namespace"] == app.namespace and world.component_for(p) is comp and not p["metadata"].get("deletionTimestamp")))
    demand = fd_demand(world, app, comp, n_pods)
    if demand <= limit:
        return None
    world.os_limited[pod["metadata"]["uid"]] = ("nofile", limit, demand)
    # accepts fail; the connections wait in the backlog and their clients give up
    return 1.0 - limit / demand, "context deadline exceeded"


# ---------------------------------------------------------------- logs of processes at a limit
_BACKOFF_MS = (5, 10, 20, 40, 80, 160, 320, 640)


def _go_log_stamp(t: float) -> str:
    from datetime import timedelta

    return (EPOCH + timedelta(seconds=int(t))).strftime("%Y/%m/%d %H:%M:%S")


def os_limits_tick(world: "World") -> None:
    """The accept errors a Go HTTP server at its descriptor limit prints (its retry loop logs each one)."""
    now = world.clock.now
    for uid, (kind, limit, _demand) in sorted(world.os_limited.items()):
        if kind != "nofile":
            continue
        pod = world.pod_by_uid(uid)
        rt = world.runtimes.get(uid)
        comp = world.component_for(pod) if pod is not None else None
        if pod is None or rt is None or comp is None:
            continue
        for ctr in rt.containers.values():
            if ctr.state != "running" or not ctr.serving(now):
                continue
            h = zlib.crc32(f"{uid}/{int(now)}".encode())
            for k in range(2):
                delay = _BACKOFF_MS[(h >> (3 * k)) % len(_BACKOFF_MS)]
                wait = f"{delay}ms" if delay < 1000 else "1s"
                line = f"{_go_log_stamp(now - 3.0 + 2 * k)} http: Accept error: accept tcp [::]:{comp.listen_port}: accept4: too many open files; retrying in {wait}"
                container_raw_log(world, pod, ctr, now - 3.0 + 2 * k, line)
            break


# ---------------------------------------------------------------- what exec inside the container sees
@dataclass(frozen=True)
class ContainerOsState:
    """Kernel state of one container, for the in-container commands (``cat /proc/...``, ``netstat``, ``ls``)."""

    port_range: tuple[int, int]
    #: (destination "ip:port", sockets in TIME_WAIT towards it)
    time_wait: tuple[tuple[str, int], ...]
    #: RLIMIT_NOFILE of PID 1 and the descriptors it has open
    nofile: int
    open_fds: int
    pod_ip: str
    #: /dev/shm: its size, the bytes in use, and whether a memory-backed emptyDir provides it
    shm_size: int = 64 * 1024 * 1024
    shm_used: int = 0
    shm_volume: bool = False

    @property
    def tw_total(self) -> int:
        return sum(n for _, n in self.time_wait)


def container_os_state(world: "World", pod: Obj, spec: Obj) -> ContainerOsState:
    comp = world.component_for(pod)
    app = _app_of(world, pod)
    tw: list[tuple[str, int]] = []
    open_fds = BASE_FDS
    first = (pod["spec"].get("containers") or [{}])[0]
    nofile = nofile_limit(spec) if spec.get("name") == first.get("name") else DEFAULT_NOFILE
    if comp is not None and app is not None and spec.get("name") == comp.container:
        n_pods = len(world.serving_by_component(app.namespace).get(comp.name, ())) or 1
        for service, port, n in _time_wait(world, app, comp, pod, n_pods):
            if n <= 0:
                continue
            svc = world.store.find("Service", service, app.namespace)
            ip = (svc or {}).get("spec", {}).get("clusterIP") or service
            tw.append((f"{ip}:{port}", n))
        open_fds = min(fd_demand(world, app, comp, n_pods), nofile)
    ip = str((pod.get("status") or {}).get("podIP") or "")
    shm = shm_bytes(pod, spec)
    on_volume = any(str(m.get("mountPath", "")).rstrip("/") == "/dev/shm" for m in spec.get("volumeMounts") or ())
    return ContainerOsState(port_range(pod), tuple(tw), nofile, open_fds, ip, shm, shm_used(world, pod, spec), on_volume)


def shm_row(state: ContainerOsState | None) -> tuple[str, int, int, int, str]:
    """``df``'s row for /dev/shm: the runtime's ``shm`` mount, or the emptyDir's tmpfs."""
    if state is None:
        return ("shm", 64 * 1024 * 1024, 0, 64 * 1024 * 1024, "/dev/shm")
    used = min(state.shm_used, state.shm_size)
    return ("tmpfs" if state.shm_volume else "shm", state.shm_size, used, state.shm_size - used, "/dev/shm")


def limits_text(nofile: int) -> str:
    """``/proc/<pid>/limits`` (the layout the kernel prints)."""
    rows = [
        ("Max cpu time", "unlimited", "unlimited", "seconds"), ("Max file size", "unlimited", "unlimited", "bytes"),
        ("Max data size", "unlimited", "unlimited", "bytes"), ("Max stack size", "8388608", "unlimited", "bytes"),
        ("Max core file size", "unlimited", "unlimited", "bytes"), ("Max resident set", "unlimited", "unlimited", "bytes"),
        ("Max processes", "unlimited", "unlimited", "processes"), ("Max open files", str(nofile), str(nofile), "files"),
        ("Max locked memory", "8388608", "8388608", "bytes"), ("Max address space", "unlimited", "unlimited", "bytes"),
        ("Max file locks", "unlimited", "unlimited", "locks"), ("Max pending signals", "63471", "63471", "signals"),
        ("Max msgqueue size", "819200", "819200", "bytes"), ("Max nice priority", "0", "0", ""),
        ("Max realtime priority", "0", "0", ""), ("Max realtime timeout", "unlimited", "unlimited", "us"),
    ]
    return f"{'Limit':<26}{'Soft Limit':<21}{'Hard Limit':<21}{'Units':<10}\n" + "".join(f"{a:<26}{b:<21}{c:<21}{d:<10}\n" for a, b, c, d in rows)


def os_file(state: ContainerOsState | None, path: str) -> str | None:
    """Files under /proc that depend on the container's kernel state (None: not one of them)."""
    if state is None:
        return None
    if path == "/proc/sys/net/ipv4/ip_local_port_range":
        return f"{state.port_range[0]}\t{state.port_range[1]}\n"
    if path in ("/proc/sys/net/ipv4/tcp_fin_timeout",):
        return "60\n"
    if path in ("/proc/sys/net/ipv4/tcp_tw_reuse",):
        return "2\n"
    if path in ("/proc/net/sockstat",):
        tw = state.tw_total
        inuse = 6 + len(state.time_wait)
        return (
            f"sockets: used {inuse + 4}\n"
            f"TCP: inuse {inuse} orphan 0 tw {tw} alloc {inuse + 2} mem {1 + inuse // 4}\n"
            "UDP: inuse 1 mem 2\nUDPLITE: inuse 0\nRAW: inuse 0\nFRAG: inuse 0 memory 0\n"
        )
    if path == "/proc/1/limits":
        return limits_text(state.nofile)
    return None


def fd_entries(state: ContainerOsState | None) -> list[str] | None:
    """``ls /proc/1/fd``: one entry per open descriptor."""
    if state is None:
        return None
    return [str(i) for i in range(state.open_fds)]


def netstat_rows(state: ContainerOsState | None) -> list[str]:
    """busybox ``netstat -tan`` rows for the sockets in TIME_WAIT (ephemeral port per socket)."""
    if state is None or not state.time_wait:
        return []
    lo, hi = state.port_range
    span = hi - lo + 1
    rows = []
    for dest, n in state.time_wait:
        start = zlib.crc32(dest.encode()) % span
        for i in range(n):
            local = f"{state.pod_ip}:{lo + (start + i) % span}"
            rows.append(f"tcp        0      0 {local:<23} {dest:<23} TIME_WAIT   ")
    return rows
