"""The in-memory state of redis server processes: configuration, dataset size, eviction.

A redis process reads its configuration when it starts — the config file named
on its command line (here a mounted ConfigMap), then ``--directive value``
pairs from the command line, which win — and keeps it until it exits;
``CONFIG SET`` changes only the running process. Its dataset grows with the
writes the workload sends (``Call.payload_bytes`` per call) and is lost when
the container restarts (the social-network charts run redis without
persistence).

When ``used_memory`` reaches ``maxmemory`` redis applies ``maxmemory-policy``:
the ``allkeys-*`` policies evict keys and keep accepting writes; the
``volatile-*`` policies only evict keys with a TTL (timelines have none), so
they behave like ``noeviction``, which refuses every write with redis' own
``OOM command not allowed when used memory > 'maxmemory'.``; reads still work.
Refused writes surface to callers through ``World.op_errors``, so the failure
propagates through the call graph like any other server error.

State is keyed by container instance, so a restart begins empty with the
configuration in the pod spec again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from sre_env.apps.base import AppSpec, Component
from sre_env.sim.kernel.images import split_image
from sre_env.sim.runtime.mounts import mounted_file

if TYPE_CHECKING:
    from sre_env.sim.kernel.flows import TickResult, TrafficPlan
    from sre_env.sim.kernel.world import World

__all__ = [
    "OOM_ERROR",
    "POLICIES",
    "RedisState",
    "format_memory",
    "has_redis",
    "is_redis",
    "parse_memory",
    "startup_config",
    "state_for_pod",
    "update",
]

OOM_ERROR = "OOM command not allowed when used memory > 'maxmemory'."
POLICIES = ("volatile-lru", "allkeys-lru", "volatile-lfu", "allkeys-lfu", "volatile-random", "allkeys-random", "volatile-ttl", "noeviction")
#: used_memory of an empty redis 6.2 with a handful of clients
BASE_USED_MEMORY = 874_312
#: resident memory beyond used_memory (allocator, buffers): INFO's used_memory_rss - used_memory
RSS_OVERHEAD = 2_170_880
#: rough bytes per key (one timeline: a small sorted set) for key counts and eviction
AVG_KEY_BYTES = 2_400.0
#: distinct users whose timelines can exist (the socfb-Reed98 graph DeathStarBench loads)
MAX_KEYS = 962
_DEFAULTS = {
    "maxmemory": "0",
    "maxmemory-policy": "noeviction",
    "maxmemory-samples": "5",
    "port": "6379",
    "bind": "* -::*",
    "protected-mode": "no",
    "appendonly": "no",
    "save": "3600 1 300 100 60 10000",
    "io-threads": "1",
    "io-threads-do-reads": "no",
    "timeout": "0",
    "tcp-keepalive": "300",
    "databases": "16",
    "loglevel": "notice",
}
_HAS_REDIS: dict[str, bool] = {}


def is_redis(comp: Component) -> bool:
    repo, _ = split_image(comp.image)
    return repo.rsplit("/", 1)[-1] == "redis"


def has_redis(app: AppSpec) -> bool:
    found = _HAS_REDIS.get(app.name)
    if found is None:
        found = _HAS_REDIS[app.name] = any(is_redis(c) for c in app.components)
    return found


@lru_cache(maxsize=256)
def parse_memory(value: str) -> int | None:
    """redis' memory units: ``1k`` = 1000, ``1kb`` = 1024, ``1m``/``1mb``, ``1g``/``1gb``; None if invalid."""
    v = str(value).strip().lower()
    units = (("gb", 1024**3), ("mb", 1024**2), ("kb", 1024), ("g", 1000**3), ("m", 1000**2), ("k", 1000), ("b", 1))
    for suffix, mult in units:
        if v.endswith(suffix):
            num = v[: -len(suffix)]
            return int(num) * mult if num.isdigit() else None
    return int(v) if v.isdigit() else None


def format_memory(n: float) -> str:
    """``used_memory_human`` style: 1.23M, 853.82K, 0B."""
    n = float(n)
    for unit, size in (("G", 1024**3), ("M", 1024**2), ("K", 1024)):
        if n >= size:
            return f"{n / size:.2f}{unit}"
    return f"{int(n)}B"


@dataclass
class RedisState:
    app: str
    component: str
    pod_uid: str
    started_at: float
    #: effective configuration (defaults, config file, command line, then CONFIG SET)
    config: dict[str, str]
    config_file: str = ""
    dataset_bytes: float = 0.0
    evicted_keys: float = 0.0
    rejected_writes: float = 0.0
    commands: float = 0.0
    writes: float = 0.0
    #: whether writes are being refused (maxmemory reached, no evictable keys)
    refusing: bool = False
    #: CONFIG SET history in this process: (time, directive, value)
    runtime_changes: list[tuple[float, str, str]] = field(default_factory=list)

    @property
    def maxmemory(self) -> int:
        return parse_memory(self.config.get("maxmemory", "0")) or 0

    @property
    def policy(self) -> str:
        return self.config.get("maxmemory-policy", "noeviction")

    @property
    def used_memory(self) -> float:
        return BASE_USED_MEMORY + self.dataset_bytes

    @property
    def keys(self) -> int:
        return min(MAX_KEYS, int(self.dataset_bytes / AVG_KEY_BYTES + 0.999)) if self.dataset_bytes > 0 else 0

    def evicts(self) -> bool:
        return self.policy.startswith("allkeys-")


def _parse_conf(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split(None, 1)
        out[parts[0].lower()] = parts[1].strip().strip('"') if len(parts) > 1 else ""
    return out


def startup_config(world: World, pod: dict[str, Any], spec: dict[str, Any]) -> tuple[dict[str, str], str]:
    """The configuration a redis process starting from this pod spec runs with, and its config file."""
    from sre_env.sim.runtime.image_contents import process_cmdline

    argv = process_cmdline(spec)
    if argv and argv[0] in ("docker-entrypoint.sh",):
        argv = argv[1:]
    if argv and argv[0].rsplit("/", 1)[-1] != "redis-server" and (argv[0].startswith("-") or argv[0].endswith(".conf")):
        argv = ["redis-server", *argv]
    config = dict(_DEFAULTS)
    conf_file = ""
    rest = argv[1:]
    if rest and not rest[0].startswith("--"):
        conf_file = rest[0]
        text = mounted_file(world, pod, spec, conf_file)
        if text:
            config.update(_parse_conf(text))
        rest = rest[1:]
    i = 0
    while i < len(rest):
        arg = rest[i]
        if arg.startswith("--"):
            name = arg[2:].lower()
            vals = []
            i += 1
            while i < len(rest) and not rest[i].startswith("--"):
                vals.append(rest[i])
                i += 1
            config[name] = " ".join(vals)
        else:
            i += 1
    return config, conf_file


def _state_key(ctr: Any) -> str:
    return f"{ctr.container_id}@{ctr.started_at}"


def state_for_pod(world: World, pod: dict[str, Any], container: str | None = None) -> RedisState | None:
    """The running redis process' state in ``pod`` (created on first use), or None."""
    rt = world.runtimes.get(pod["metadata"]["uid"])
    if rt is None:
        return None
    comp = None
    for spec in pod["spec"].get("containers") or ():
        if container and spec["name"] != container:
            continue
        ctr = rt.containers.get(spec["name"])
        if ctr is None or ctr.state != "running" or ctr.started_at is None:
            continue
        key = _state_key(ctr)
        st = world.redis_states.get(key)
        if st is None:
            comp = comp or world.component_for(pod)
            if comp is None or not is_redis(comp):
                return None
            app = next((a.name for a in world.apps if a.namespace == pod["metadata"]["namespace"]), "")
            config, conf_file = startup_config(world, pod, spec)
            st = world.redis_states[key] = RedisState(app, comp.name, pod["metadata"]["uid"], float(ctr.started_at), config, conf_file)
        return st
    return None


_WRITES: dict[str, tuple[tuple[str, tuple[tuple[str, float], ...]], ...]] = {}


def _write_ops(app: AppSpec) -> tuple[tuple[str, tuple[tuple[str, float], ...]], ...]:
    """(redis component, ((operation, bytes one call adds), ...)) from the app's call graph, cached per app."""
    ops = _WRITES.get(app.name)
    if ops is None:
        found: dict[str, dict[str, float]] = {c.name: {} for c in app.components if is_redis(c)}
        for rt in app.requests:
            for call in rt.calls:
                if call.callee in found and call.payload_bytes > 0:
                    found[call.callee].setdefault(call.operation, call.payload_bytes)
        ops = _WRITES[app.name] = tuple((name, tuple(sorted(w.items()))) for name, w in found.items())
    return ops


def update(world: World, app: AppSpec, plan: TrafficPlan, res: TickResult, dt: float) -> None:
    """Grow each serving redis' dataset by the writes it accepted; refuse writes at maxmemory."""
    live: set[str] = set()
    wanted: dict[tuple[str, str], tuple[float, str]] = {}
    for name, comp_ops in _write_ops(app):
        pods = plan.serving.get(name, ())
        if not pods:
            continue
        for uid in pods:
            pod = world.pod_by_uid(uid)
            if pod is None:
                continue
            st = state_for_pod(world, pod)
            if st is None:
                continue
            rt = world.runtimes[uid]
            live.update(_state_key(c) for c in rt.containers.values() if c.state == "running")
            share = 1.0 / len(pods)
            st.commands += res.pod_rps.get(uid, 0.0) * dt
            for op, size in comp_ops:
                rate = res.op_rps.get((name, op), 0.0) * share
                if rate <= 0:
                    continue
                if st.refusing:
                    st.rejected_writes += rate * dt
                    continue
                st.writes += rate * dt
                st.dataset_bytes += rate * size * dt
            limit = st.maxmemory
            st.refusing = False
            if limit > 0 and st.used_memory >= limit:
                over = st.used_memory - limit
                if st.evicts():
                    st.dataset_bytes = max(0.0, st.dataset_bytes - over)
                    st.evicted_keys += over / AVG_KEY_BYTES
                else:
                    st.refusing = True
            if st.refusing:
                for op, _ in comp_ops:
                    wanted[(uid, op)] = (1.0, OOM_ERROR)
    # forget processes of this app that are gone
    for key in [k for k, s in world.redis_states.items() if s.app == app.name and k not in live]:
        del world.redis_states[key]
    mine = {k: v for k, v in world.op_errors.items() if _owned(world, app, k[0])}
    if mine != wanted:
        for k in mine:
            world.op_errors.pop(k, None)
        world.op_errors.update(wanted)
        # routes and results depend on it: make the traffic layer recompute
        world.fault_epoch += 1


def _owned(world: World, app: AppSpec, uid: str) -> bool:
    pod = world.pod_by_uid(uid)
    return pod is None or pod["metadata"]["namespace"] == app.namespace
