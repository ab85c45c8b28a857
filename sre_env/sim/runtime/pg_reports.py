"""Reporting queries on the astronomy shop's PostgreSQL, and the shared memory their parallel plans need.

A BI tool's dashboards (outside the cluster) refresh their panels against the
accounting database: aggregates over ``orderitem`` joined to ``shipping``. On
tables this size PostgreSQL plans a *parallel hash join*; its shared hash table
lives in dynamic shared memory, which ``dynamic_shared_memory_type = posix``
(the default) allocates as files in ``/dev/shm``. The table may grow to
``work_mem x hash_mem_multiplier`` per participant (leader + workers), so the
server's settings decide the demand and the container's ``/dev/shm`` decides
the supply -- 64 MiB unless the pod mounts a memory-backed emptyDir there.

When a segment cannot grow, ``posix_fallocate`` fails with ENOSPC and the query
errors with PostgreSQL's own message ("could not resize shared memory segment
... No space left on device"); restarting changes nothing, the next refresh
fails the same way. Memory-backed /dev/shm pages are charged to the
container's memory cgroup: a bigger /dev/shm under the old memory limit gets
the container OOM-killed instead.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sre_env.kube.quantity import memory_bytes
from sre_env.kube.timefmt import iso
from sre_env.sim.kernel.pods import kill_container
from sre_env.sim.logs.streams import container_raw_log

if TYPE_CHECKING:
    from sre_env.sim.kernel.world import World

__all__ = ["DEFAULTS", "REPORT_QUERY", "TAG", "DashboardRefresh", "dashboards_active", "dsm_bytes", "memory_limit", "pg_settings", "shm_bytes", "shm_used"]

Obj = dict[str, Any]
MiB = 1024 * 1024
TAG = "bi-dashboards"
#: PostgreSQL 17 defaults of the settings that size a parallel hash join
DEFAULTS = {"work_mem": "4MB", "hash_mem_multiplier": "2.0", "max_parallel_workers_per_gather": "2", "max_parallel_workers": "8", "dynamic_shared_memory_type": "posix"}
#: what the BI tool sends for its "revenue by product" panel (its SQL generator's quoting)
REPORT_QUERY = (
    'SELECT "public"."orderitem"."product_id" AS "product_id", SUM("public"."orderitem"."quantity") AS "sum", '
    'SUM("public"."orderitem"."item_cost_units") AS "sum_2", COUNT(DISTINCT "Shipping"."order_id") AS "count" '
    'FROM "public"."orderitem" LEFT JOIN "public"."shipping" AS "Shipping" ON "public"."orderitem"."order_id" = "Shipping"."order_id" '
    'GROUP BY "public"."orderitem"."product_id" ORDER BY "sum" DESC, "public"."orderitem"."product_id" ASC'
)
_UNITS = {"kB": 1024, "MB": MiB, "GB": 1024 * MiB, "TB": 1024 * 1024 * MiB, "B": 1}


def pg_settings(container: Obj) -> dict[str, str]:
    """Server settings from the command line (``-c name=value`` / ``--name=value``) over the defaults."""
    argv = [str(a) for a in list(container.get("command") or ()) + list(container.get("args") or ())]
    out = dict(DEFAULTS)
    i = 0
    while i < len(argv):
        a = argv[i]
        item = None
        if a == "-c" and i + 1 < len(argv):
            item = argv[i + 1]
            i += 1
        elif a.startswith("-c") and len(a) > 2 or a.startswith("--") and "=" in a:
            item = a[2:]
        if item and "=" in item:
            k, v = item.split("=", 1)
            out[k.strip().replace("-", "_")] = v.strip().strip("'\"")
        i += 1
    return out


def _bytes(value: str, unit: int = 1024) -> int:
    """A memory setting: a number with an optional unit (bare numbers are kB)."""
    v = value.strip()
    for suffix, mult in _UNITS.items():
        if v.endswith(suffix) and v[: -len(suffix)].strip().isdigit():
            return int(v[: -len(suffix)]) * mult
    return int(v) * unit if v.isdigit() else 4 * MiB


def dsm_bytes(settings: dict[str, str]) -> int:
    """Dynamic shared memory in /dev/shm one report query's parallel hash join grows to (0: not in /dev/shm)."""
    if settings.get("dynamic_shared_memory_type", "posix") != "posix":
        return 0
    try:
        workers = max(0, min(int(settings["max_parallel_workers_per_gather"]), int(settings["max_parallel_workers"])))
        mult = max(float(settings["hash_mem_multiplier"]), 1.0)
    except ValueError:
        workers, mult = 2, 2.0
    if workers == 0:
        return 0  # a serial plan keeps its hash table in the backend's private memory
    return int(_bytes(settings["work_mem"]) * mult * (workers + 1)) + MiB


def shm_bytes(pod: Obj, container: Obj) -> int:
    """Size of the container's /dev/shm: a memory-backed emptyDir mounted there, else the runtime's 64 MiB."""
    mount = next((m for m in container.get("volumeMounts") or () if str(m.get("mountPath", "")).rstrip("/") == "/dev/shm"), None)
    if mount is None:
        return 64 * MiB
    vol = next((v for v in pod["spec"].get("volumes") or () if v.get("name") == mount.get("name")), None)
    empty = (vol or {}).get("emptyDir")
    if empty is None or empty.get("medium") != "Memory":
        return 64 * MiB if empty is None else 100 * 1024 * MiB  # a disk-backed emptyDir: node disk
    limit = empty.get("sizeLimit")
    try:
        if limit:
            return memory_bytes(limit)
    except ValueError:
        pass
    # no sizeLimit: tmpfs sized to the pod's memory limit (SizeMemoryBackedVolumes)
    total = 0
    for c in pod["spec"].get("containers") or ():
        mem = ((c.get("resources") or {}).get("limits") or {}).get("memory")
        try:
            total += memory_bytes(mem) if mem else 0
        except ValueError:
            pass
    return total or 8 * 1024 * MiB


def memory_limit(container: Obj) -> int | None:
    mem = ((container.get("resources") or {}).get("limits") or {}).get("memory")
    try:
        return memory_bytes(mem) if mem else None
    except ValueError:
        return None


def _is_postgres(world: "World", pod: Obj) -> bool:
    comp = world.component_for(pod)
    return comp is not None and comp.name == "postgresql"


def dashboards_active(world: "World", namespace: str) -> bool:
    return any(getattr(e, "tag", "") == TAG and getattr(e, "namespace", "") == namespace for _, _, e in world.clock.timers)


def _segment(limit: int) -> int:
    """The DSA segment whose creation crosses ``limit``: segments double every two (1, 1, 2, 2, 4 MiB ...)."""
    total, size, k = 0, MiB, 0
    while total + size <= limit:
        total += size
        k += 1
        if k % 2 == 0:
            size *= 2
    return size


@dataclass(frozen=True)
class DashboardRefresh:
    """One refresh of the BI dashboards' panels (each a parallel report query); reschedules itself."""

    namespace: str
    app_name: str
    every_s: float = 60.0
    client_addr: str = "172.18.0.1"
    application_name: str = "Metabase v0.50.30"
    tag: str = TAG

    def fire(self, world: "World") -> None:
        now = world.clock.now
        world.clock.schedule(now + self.every_s, self)
        model = world.app_models.get(self.app_name)
        pg = getattr(model, "pg", None)
        if pg is None or pg.started_at < 0:
            return
        pod = next((p for p in world.store.iter("Pod") if p["metadata"]["namespace"] == self.namespace and not p["metadata"].get("deletionTimestamp") and _is_postgres(world, p)), None)
        rt = world.runtimes.get(pod["metadata"]["uid"]) if pod is not None else None
        if pod is None or rt is None:
            return
        spec = pod["spec"]["containers"][0]
        ctr = rt.containers.get(spec["name"])
        if ctr is None or ctr.state != "running" or not ctr.serving(now):
            return
        session = next((s for s in pg.sessions.values() if s.application_name == self.application_name), None)
        if session is None:
            session = pg.connect("otelu", self.application_name, self.client_addr, now)
        need = dsm_bytes(pg_settings(spec))
        shm = shm_bytes(pod, spec)
        limit = memory_limit(spec)
        working = ctr.memory_mib * MiB
        h = zlib.crc32(f"{pod['metadata']['uid']}/{int(now)}".encode())
        worker = session.pid + 1 + h % 40
        if need > shm:
            seg = _segment(shm)
            stamp = iso(now).replace("T", " ").replace("Z", "")
            lines = (
                f'{stamp}.{h % 1000:03d} UTC [{session.pid}] ERROR:  could not resize shared memory segment "/PostgreSQL.{h}" to {seg} bytes: No space left on device',
                f"{stamp}.{h % 1000:03d} UTC [{session.pid}] STATEMENT:  {REPORT_QUERY}",
                f'{stamp}.{(h + 7) % 1000:03d} UTC [1] LOG:  background worker "parallel worker" (PID {worker}) exited with exit code 1',
            )
            for line in lines:
                container_raw_log(world, pod, ctr, now, line)
            session.state, session.query, session.query_start = "idle", REPORT_QUERY, now
            return
        if limit is not None and working + need > limit:
            # the tmpfs pages count against the container's memory cgroup: the OOM killer takes it down
            kill_container(world, pod, rt, ctr, exit_code=137, reason="OOMKilled")
            return
        session.state, session.query, session.query_start = "idle", REPORT_QUERY, now


def shm_used(world: "World", pod: Obj, container: Obj) -> int:
    """Bytes of /dev/shm in use: the dashboards' concurrent panels keep their segments allocated."""
    if not dashboards_active(world, pod["metadata"]["namespace"]):
        return 0
    if not _is_postgres(world, pod):
        return 0
    return min(dsm_bytes(pg_settings(container)), shm_bytes(pod, container))
