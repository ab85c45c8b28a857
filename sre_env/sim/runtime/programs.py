"""The programs in a pod besides the app's own process, and what they share.

A pod's containers share one network namespace: two processes cannot bind one
TCP port, and the one that binds second gets ``bind: address already in use``
and exits the way that program does (a Go service's zerolog ``FTL``, mongod's
``SocketException`` and exit code 48, memcached's ``failed to listen``).
Which one binds second follows from their start-up times, never from a label.
Likewise two mongod processes cannot open one data directory: the second one
fails to lock ``mongod.lock`` (``DBPathInUse``, exit code 100).

Which program a container runs is decided by its image and name: the
component's own container runs the component's process model; another
container running the same software (a second ``mongod``) behaves like it but
reads its port from its own flags; a known sidecar image (the StatsD exporter)
listens where its flags say; anything else listens on its first declared port.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from sre_env.apps.base import Component
from sre_env.kube.timefmt import iso
from sre_env.sim.kernel.images import split_image
from sre_env.sim.kernel.pods import StartOutcome
from sre_env.sim.runtime.mounts import snapshot_at_start

if TYPE_CHECKING:
    from sre_env.sim.kernel.pods import ContainerRuntime, PodRuntime
    from sre_env.sim.kernel.world import World

__all__ = ["main_component", "peer_outcome", "after_start", "claim_port", "data_dir_holder", "dbpath_in_use", "listen_address_port", "program_kind"]

Obj = dict[str, Any]

#: sidecar images we know the flags of: repo -> (flag that sets the HTTP listen address, default port, seconds to bind)
_SIDECARS: dict[str, tuple[str, int, float]] = {
    "prom/statsd-exporter": ("--web.listen-address", 9102, 0.5),
    "prom/memcached-exporter": ("--web.listen-address", 9150, 0.5),
    "percona/mongodb_exporter": ("--web.listen-address", 9216, 0.5),
}


def main_component(world: "World", pod: Obj, spec: Obj) -> Component | None:
    """The app component whose process this container runs, or None for a sidecar/tool.

    A pod with one container runs the component's process whatever the container
    is called (agents rename things); in a multi-container pod only the container
    named like the component's is the app.
    """
    comp = world.component_for(pod)
    if comp is None:
        return None
    containers = pod["spec"].get("containers") or ()
    if spec.get("name") == comp.container:
        return comp
    if len(containers) == 1 and containers[0].get("name") == spec.get("name"):
        return comp
    return None


def program_kind(comp: Component | None, spec: Obj) -> str:
    """A short name for the software a container runs (for its log lines and exit codes)."""
    repo, _ = split_image(spec.get("image", ""))
    if repo in _SIDECARS:
        return repo.rsplit("/", 1)[-1]
    if comp is not None:
        return comp.log_format
    base = repo.rsplit("/", 1)[-1]
    if base in ("mongo", "memcached"):
        return "mongodb" if base == "mongo" else "memcached"
    return "generic"


def _flag(argv: list[str], names: tuple[str, ...]) -> str | None:
    for i, a in enumerate(argv):
        for n in names:
            if a == n and i + 1 < len(argv):
                return argv[i + 1]
            if a.startswith(n + "="):
                return a[len(n) + 1 :]
    return None


def listen_address_port(value: str | None, default: int) -> int:
    """The port of a ``host:port`` / ``:port`` listen address flag."""
    if not value:
        return default
    _, _, port = value.rpartition(":")
    return int(port) if port.isdigit() else default


def peer_outcome(world: "World", pod: Obj, spec: Obj) -> StartOutcome:
    """How a container that is not the app's own process starts: sidecars, second instances, tools."""
    argv = [str(a) for a in (spec.get("command") or [])] + [str(a) for a in (spec.get("args") or [])]
    ports = [int(p["containerPort"]) for p in spec.get("ports") or () if "containerPort" in p]
    repo, _ = split_image(spec.get("image", ""))
    known = _SIDECARS.get(repo)
    if known is not None:
        flag, default, bind_s = known
        port = listen_address_port(_flag(argv, (flag,)), default)
        return StartOutcome(serve_after=bind_s, listen_port=port, memory_mib=18.0)
    comp = world.component_for(pod)
    if comp is not None and repo == split_image(comp.image)[0]:
        # the same software as the app, started from its own flags (a second mongod, memcached)
        if comp.log_format == "mongodb":
            port = int(_flag(argv, ("--port",)) or comp.listen_port)
        elif comp.log_format == "memcached":
            port = int(_flag(argv, ("-p", "--port")) or comp.listen_port)
        else:
            port = ports[0] if ports else comp.listen_port
        return StartOutcome(serve_after=comp.startup_s, listen_port=port, memory_mib=comp.memory_mib)
    return StartOutcome(serve_after=1.0, listen_port=ports[0] if ports else None)


# --------------------------------------------------------------------------- ports
def after_start(world: "World", pod: Obj, rt: "PodRuntime", ctr: "ContainerRuntime") -> None:
    """Settle what a just-started process shares with its pod: its port, and its own pre-rendered lines."""
    if any(e[1] == "dbpath_lock" for e in ctr.pending_logs):
        out = []
        for t, event, fields in ctr.pending_logs:
            if event == "dbpath_lock":
                out.extend((t + i * 0.001, "raw", {"line": line}) for i, line in enumerate(dbpath_lines(t, str(fields.get("error", "")))))
            else:
                out.append((t, event, fields))
        ctr.pending_logs = out
    if not ctr.log and not ctr.pending_logs:
        spec = next((c for c in pod["spec"].get("containers") or () if c.get("name") == ctr.name), {})
        ctr.pending_logs = [(ctr.started_at or world.clock.now, "raw", {"line": line}) for line in _sidecar_start_lines(spec, ctr.started_at or world.clock.now, ctr.listen_port)]
    claim_port(world, pod, rt, ctr)
    # subPath-mounted ConfigMap/Secret keys are copied now and never refreshed
    snapshot_at_start(world, pod, ctr)


def _sidecar_start_lines(spec: Obj, t: float, port: int | None) -> list[str]:
    repo, tag = split_image(spec.get("image", ""))
    if repo not in _SIDECARS:
        return []
    ts = f"{iso(int(t))[:-1]}.{int((t % 1) * 1000):03d}Z"
    name = repo.rsplit("/", 1)[-1]
    out = [f'ts={ts} caller=main.go:199 level=info msg="Starting {name}" version="(version={tag.lstrip("v") or "latest"}, branch=HEAD)"']
    if name == "statsd-exporter":
        out.append(f"ts={ts} caller=main.go:365 level=info msg=\"Accepting StatsD Traffic\" udp=:9125 tcp=:9125 unixgram=")
    out.append(f"ts={ts} caller=main.go:366 level=info msg=\"Accepting Prometheus Requests\" addr=:{port}")
    return out


def claim_port(world: "World", pod: Obj, rt: "PodRuntime", ctr: "ContainerRuntime") -> None:
    """``ctr`` just started: if another process in the pod binds its port first, the later bind fails."""
    port = ctr.listen_port
    if port is None or ctr.serve_at is None:
        return
    for other in rt.containers.values():
        if other is ctr or other.state != "running" or other.listen_port != port or other.serve_at is None:
            continue
        loser = ctr if other.serve_at <= ctr.serve_at else other
        _fail_bind(world, pod, rt, loser)
        if loser is ctr:
            return


def _fail_bind(world: "World", pod: Obj, rt: "PodRuntime", ctr: "ContainerRuntime") -> None:
    at = float(ctr.serve_at if ctr.serve_at is not None else world.clock.now)
    port = int(ctr.listen_port or 0)
    spec = next((c for c in pod["spec"].get("containers") or () if c.get("name") == ctr.name), {})
    comp = main_component(world, pod, spec)
    kind = program_kind(comp, spec)
    error = f"listen tcp :{port}: bind: address already in use"
    lines, code = _bind_failure_lines(kind, comp, at, port, error)
    ctr.serve_at = None
    ctr.listen_port = None
    ctr.exit_at = at
    ctr.outcome = StartOutcome(exit_after=0.0, exit_code=code, reason="Error", serve_after=None)
    keep = [e for e in ctr.pending_logs if e[0] < at and e[1] not in ("listening", "ready")]
    ctr.pending_logs = keep + [(at, "raw", {"line": line}) for line in lines]
    rt.wake_at = min(rt.wake_at, at)
    world.kubelet_wake = min(world.kubelet_wake, at)


def _mongo_json(t: float, s: str, c: str, id_: int, ctx: str, msg: str, attr: Obj | None = None) -> str:
    """One mongod 4.4 structured log line, padded the way mongod pads its header fields."""
    sec = int(t)
    ms = min(max(int((t - sec) * 1000), 0), 999)
    head = f'{{"t":{{"$date":"{iso(sec)[:-1]}.{ms:03d}+00:00"}},' + f'"s":"{s}",'.ljust(10) + f'"c":"{c}",'.ljust(16) + f'"id":{id_},'.ljust(14)
    body = f'"ctx":"{ctx}","msg":{json.dumps(msg)}'
    if attr is not None:
        body += ',"attr":' + json.dumps(attr, separators=(",", ":"))
    return head + body + "}"


def _bind_failure_lines(kind: str, comp: Component | None, t: float, port: int, error: str) -> tuple[list[str], int]:
    """What each program prints when its listen() fails, and its exit code."""
    ts = iso(int(t))
    if kind in ("go-service", "frontend") and comp is not None:
        if kind == "frontend":
            return [f"{ts} FTL cmd/frontend/main.go:72 > {error}"], 1
        return [f"{ts} FTL services/{comp.name}/server.go:88 > failed to listen: {error}"], 1
    if kind == "mongodb":
        return [
            _mongo_json(t, "E", "NETWORK", 23024, "initandlisten", "Failed to set up listener", {"error": {"code": 9001, "codeName": "SocketException", "errmsg": "Address already in use"}}),
            _mongo_json(t + 0.001, "I", "CONTROL", 20562, "initandlisten", "Shutting down", {"exitCode": 48}),
        ], 48
    if kind == "memcached":
        return [f"failed to listen on TCP port {port}: Address already in use"], 71
    if kind.endswith("exporter"):
        return [f'ts={iso(int(t))[:-1]}.{int((t % 1) * 1000):03d}Z caller=main.go:321 level=error msg="error starting HTTP server" err="{error}"'], 1
    return [error], 1


# --------------------------------------------------------------------------- data directories
def _pv_names(world: "World", pod: Obj) -> set[str]:
    out = set()
    ns = pod["metadata"]["namespace"]
    for vol in pod["spec"].get("volumes") or ():
        claim = (vol.get("persistentVolumeClaim") or {}).get("claimName")
        if not claim:
            continue
        pvc = world.store.find("PersistentVolumeClaim", claim, ns)
        if pvc is not None and pvc["spec"].get("volumeName"):
            out.add(pvc["spec"]["volumeName"])
    return out


def data_dir_holder(world: "World", pod: Obj, comp: Component) -> Obj | None:
    """Another live pod whose mongod already holds the lock on a volume this pod mounts."""
    if comp.log_format != "mongodb" or not comp.volume_claim:
        return None
    mine = _pv_names(world, pod)
    if not mine:
        return None
    uid = pod["metadata"]["uid"]
    for other in world.store.iter("Pod"):
        ouid = other["metadata"]["uid"]
        if ouid == uid or other["metadata"].get("deletionTimestamp"):
            continue
        rt = world.runtimes.get(ouid)
        if rt is None:
            continue
        ocomp = world.component_for(other)
        if ocomp is None or ocomp.log_format != "mongodb":
            continue
        if not any(c.state == "running" and c.started_at is not None and c.exit_at is None for c in rt.containers.values()):
            continue
        if mine & _pv_names(world, other):
            return other
    return None


def dbpath_in_use(comp: Component, memory_mib: float) -> StartOutcome:
    """mongod cannot lock ``<dbpath>/mongod.lock``: it logs DBPathInUse and exits 100."""
    path = comp.data_path
    error = f"DBPathInUse: Unable to lock the lock file: {path}/mongod.lock (Resource temporarily unavailable). Another mongod instance is already running on the {path} directory"
    return StartOutcome(
        exit_after=0.4,
        exit_code=100,
        reason="Error",
        serve_after=None,
        log_events=(
            (0.0, "startup", (("partial", True),)),
            (0.35, "dbpath_lock", (("error", error),)),
        ),
        memory_mib=memory_mib / 4,
    )


def dbpath_lines(t: float, error: str) -> list[str]:
    """mongod's own lines for a data directory it cannot lock."""
    return [
        _mongo_json(t, "E", "STORAGE", 20557, "initandlisten", "DBException in initAndListen, terminating", {"error": error}),
        _mongo_json(t + 0.001, "I", "CONTROL", 20565, "initandlisten", "Now exiting"),
        _mongo_json(t + 0.002, "I", "CONTROL", 23138, "initandlisten", "Shutting down", {"exitCode": 100}),
    ]

