"""node-exporter and cAdvisor: host and container series from the node and runtime models.

Why they read the same helpers as the shell tools: ``df``, ``iostat``,
``/proc/loadavg`` and ``sysctl`` already derive their numbers from the disk and
node models; the exporters reuse those derivations so a graph and a terminal
never disagree. There is deliberately no disk *error* counter: node-exporter has
none, so latent sector errors show as I/O time and await (and in dmesg/SMART),
not as a tidy metric.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from ..sim._cmd_common import load_average, stable_hash
from ..sim._cmd_disk import DiskStats, _fs_numbers, _iowait, _parts
from ..sim.clock import EPOCH
from ..sim.nodes import BOOT_OFFSET_S
from ..sim.quantity import cpu_millicores, memory_bytes
from .tsdb import TSDB, series_key

if TYPE_CHECKING:
    from ..sim.apps.base import Component
    from ..sim.world import World

__all__ = ["HostExporters", "pod_cpu_millicores", "node_base_millicores", "SYSTEM_MEMORY_BYTES"]

EPOCH_UNIX = EPOCH.timestamp()
MiB = 1024 * 1024
#: memory the OS, kubelet and containerd use on every node (what ``kubectl top node`` adds)
SYSTEM_MEMORY_BYTES = 900 * MiB
CPU_MODES = ("idle", "iowait", "system", "user")
#: share of time in each mode on a quiet node, for the counters' value at boot + uptime
_BOOT_SPLIT = {"idle": 0.9688, "iowait": 0.0012, "system": 0.009, "user": 0.021}
CFS_PERIODS_PER_S = 10.0  # 100 ms CFS period


def pod_cpu_millicores(comp: "Component | None", rps: float) -> int:
    """CPU a pod uses serving ``rps`` requests/s (what ``kubectl top pod`` shows), millicores.

    One shared estimate for metrics-server and cAdvisor: a baseline millicore plus
    the request rate times the component's service time.
    """
    return 1 + int(rps * (comp.latency_ms if comp else 1.0) * 0.35)


def node_base_millicores(index: int) -> int:
    """CPU the node's own daemons use (kubelet, containerd, kube-proxy), millicores."""
    return 60 + 7 * index


class HostExporters:
    """Counter state of node-exporter and cAdvisor between scrapes."""

    def __init__(self) -> None:
        self.last_t: float | None = None
        #: container id -> [cpu seconds, cfs periods, throttled periods]
        self.containers: dict[str, list[float]] = {}
        #: node -> per-cpu-per-mode counters [modes * cores]
        self.cpu: dict[str, np.ndarray] = {}
        #: (node, device) -> [io_time_s, io_time_weighted_s, read_time_s]
        self.disks: dict[tuple[str, str], list[float]] = {}
        #: (namespace, component) -> [cores, bytes] of the last scrape (for the recorded series)
        self.usage: dict[tuple[str, str], list[float]] = {}
        self._reset_caches()

    def _reset_caches(self) -> None:
        #: TSDB columns per container id / node (derived; rebuilt after a restore)
        self._cols: dict[Any, np.ndarray] = {}
        #: (pod uid, resourceVersion) -> static per-container facts
        self._pods: dict[str, tuple[str, list[tuple[str, float, float, str]]]] = {}
        self._ctr_key: tuple = ()
        self._ctr_cols = np.empty(0, dtype=np.int64)
        self._node_cols: np.ndarray | None = None
        #: node -> (disk usage key, filesystem values)
        self._fs: dict[str, tuple[tuple, list[float]]] = {}

    # caches (TSDB columns per container and node) travel with a snapshot: the TSDB is
    # restored identically, and rebuilding them after every restore costs more

    def _pod_static(self, pod: dict) -> list[tuple[str, float, float, str]]:
        """(container, cpu limit cores, memory limit bytes, image) per spec container, cached by resourceVersion."""
        meta = pod["metadata"]
        hit = self._pods.get(meta["uid"])
        rv = meta.get("resourceVersion", "")
        if hit is not None and hit[0] == rv:
            return hit[1]
        out = []
        for spec in pod["spec"].get("containers") or ():
            limits = (spec.get("resources") or {}).get("limits") or {}
            out.append((spec["name"], cpu_millicores(limits["cpu"]) / 1000.0 if "cpu" in limits else 0.0, float(memory_bytes(limits["memory"])) if "memory" in limits else 0.0, spec.get("image", "")))
        self._pods[meta["uid"]] = (rv, out)
        return out

    def collect(self, world: "World", tsdb: TSDB, pod_rps: dict[str, float]) -> list[tuple[np.ndarray, np.ndarray]]:
        now = world.clock.now
        dt = 0.0 if self.last_t is None else max(now - self.last_t, 0.0)
        self.last_t = now
        node_cpu: dict[str, float] = {}
        node_mem: dict[str, float] = {}
        node_pods: dict[str, int] = {}
        usage: dict[tuple[str, str], list[float]] = {}
        unix_now = now + EPOCH_UNIX
        ctr_ids: list[str] = []
        vals: list[float] = []
        live_pods: set[str] = set()
        for pod in world.store.iter("Pod"):
            node = pod["spec"].get("nodeName")
            if not node:
                continue
            node_pods[node] = node_pods.get(node, 0) + 1
            meta = pod["metadata"]
            uid = meta["uid"]
            rt = world.runtimes.get(uid)
            if rt is None:
                continue
            live_pods.add(uid)
            comp = world.component_for(pod)
            first = True
            for cname, limit_cores, mem_limit, image in self._pod_static(pod):
                ctr = rt.containers.get(cname)
                if ctr is None or ctr.state != "running" or not ctr.container_id:
                    continue
                cores = (pod_cpu_millicores(comp, pod_rps.get(uid, 0.0)) if first else 1) / 1000.0
                first = False
                mem = ctr.memory_mib * MiB
                node_cpu[node] = node_cpu.get(node, 0.0) + cores
                node_mem[node] = node_mem.get(node, 0.0) + mem
                if comp is not None:
                    u = usage.setdefault((meta["namespace"], comp.name), [0.0, 0.0])
                    u[0] += cores
                    u[1] += mem
                cid = ctr.container_id.split("://", 1)[-1]
                ctr_ids.append(cid)
                acc = self.containers.get(cid)
                if acc is None:
                    acc = self.containers[cid] = [0.0, 0.0, 0.0]
                acc[0] += cores * dt
                vals += (acc[0], mem, mem_limit, unix_now)
                if limit_cores > 0:
                    acc[1] += CFS_PERIODS_PER_S * dt
                    acc[2] += CFS_PERIODS_PER_S * dt * min(max((cores / limit_cores - 0.6) / 0.4, 0.0), 1.0)
                    vals += (acc[1], acc[2], limit_cores * 100000.0, 100000.0)
                if cid not in self._cols:
                    host = world.hosts.get(node)
                    labels = {
                        "namespace": meta["namespace"],
                        "pod": meta["name"],
                        "container": cname,
                        "image": image,
                        "name": cid,
                        "node": node,
                        "instance": f"{host.internal_ip if host else ''}:10250",
                        "job": "kubelet",
                        "metrics_path": "/metrics/cadvisor",
                    }
                    self._cols[cid] = tsdb.columns(_container_keys(labels, limit_cores > 0))
        self.usage = usage
        key = tuple(ctr_ids)
        if key != self._ctr_key:
            self._ctr_key = key
            self._ctr_cols = np.concatenate([self._cols[c] for c in ctr_ids]) if ctr_ids else np.empty(0, dtype=np.int64)
            live = set(ctr_ids)
            if len(self.containers) > len(live) + 64:
                self.containers = {k: v for k, v in self.containers.items() if k in live}
                self._cols = {k: v for k, v in self._cols.items() if k in live}
            self._pods = {k: v for k, v in self._pods.items() if k in live_pods}
        parts = [(self._ctr_cols, np.asarray(vals, dtype=np.float64))]
        parts.append(self._nodes(world, tsdb, dt, node_cpu, node_mem, node_pods))
        return parts

    def _nodes(self, world: "World", tsdb: TSDB, dt: float, node_cpu: dict[str, float], node_mem: dict[str, float], node_pods: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
        now = world.clock.now
        build = self._node_cols is None
        keys: list[str] = []
        vals: list[float] = []
        for name, host in world.hosts.items():
            base = {"instance": f"{host.internal_ip}:9100", "job": "node-exporter", "node": name}
            cores = max(int(host.cpu_cores), 1)
            # cpu: counters per mode and cpu
            busy = min(node_base_millicores(host.index) / 1000.0 + node_cpu.get(name, 0.0), cores * 0.95)
            iowait = cores * _iowait(host) / 100.0
            rates = (max(cores - busy - iowait, 0.0), iowait, busy * 0.3, busy * 0.7)  # CPU_MODES order
            acc = self.cpu.get(name)
            if acc is None or len(acc) != cores * len(CPU_MODES):
                up = host.uptime(now)
                acc = self.cpu[name] = np.concatenate([up * _BOOT_SPLIT[m] * np.ones(cores) for m in CPU_MODES])
            weights = _cpu_weights(cores, host.index)
            acc += np.outer(rates, weights).ravel() * dt
            vals.extend(acc.tolist())
            if build:
                keys += [series_key("node_cpu_seconds_total", {**base, "cpu": str(c), "mode": m}) for m in CPU_MODES for c in range(cores)]
            # gauges
            mem_total = float(host.memory_bytes)
            avail = max(mem_total - SYSTEM_MEMORY_BYTES - node_mem.get(name, 0.0), 0.0)
            one, five, fifteen = load_average(host, now)
            conntrack = 800 + stable_hash(name, int(now // 10)) % 400 + 40 * node_pods.get(name, 0)
            limit = float(str((host.sysctls or {}).get("net.netfilter.nf_conntrack_max", "262144")).split()[0] or 262144)
            gauges = (
                ("node_memory_MemTotal_bytes", mem_total),
                ("node_memory_MemAvailable_bytes", avail),
                ("node_memory_MemFree_bytes", avail * 0.45),
                ("node_load1", one),
                ("node_load5", five),
                ("node_load15", fifteen),
                ("node_nf_conntrack_entries", float(conntrack)),
                ("node_nf_conntrack_entries_limit", limit),
                ("node_timex_offset_seconds", float(host.clock_offset_s)),
                ("node_timex_sync_status", 1.0),
                ("node_boot_time_seconds", EPOCH_UNIX - BOOT_OFFSET_S),
                ("node_uname_info", 1.0),
            )
            vals.extend(v for _, v in gauges)
            if build:
                keys += [series_key(g, base) for g, _ in gauges[:-1]]
                keys.append(series_key("node_uname_info", {**base, "nodename": name, "release": host.kernel, "machine": "x86_64", "sysname": "Linux"}))
            # filesystems (their numbers only move when a disk's usage does)
            fs_key = tuple((d.used_bytes, d.inodes_used, d.inodes_total, d.size_bytes) for d in host.disks)
            cached = self._fs.get(name)
            if cached is not None and cached[0] == fs_key and not build:
                vals += cached[1]
                fs_iter: tuple = ()
            else:
                fs_iter = tuple(_parts(host))
                fs_start = len(vals)
            for d, _i, part, _minor, mnt, size in fs_iter:
                if not mnt:
                    continue
                if mnt == "/boot/efi":
                    sz, used, a = 124 * MiB, 12_374_016, 117 * MiB
                    files, files_free, fstype = 0.0, 0.0, "vfat"
                else:
                    sz, used, a = _fs_numbers(d, size)
                    files, files_free, fstype = float(d.inodes_total), float(d.inodes_total - d.inodes_used), "ext4"
                vals += (float(sz), float(a), float(sz - used), files, files_free, 0.0)
                if build:
                    labels = {**base, "device": f"/dev/{part}", "fstype": fstype, "mountpoint": mnt}
                    keys += [series_key(m, labels) for m in FS_METRICS]
            if fs_iter:
                self._fs[name] = (fs_key, vals[fs_start:])
            # disks
            for i, d in enumerate(host.disks):
                stats = DiskStats(d, i)
                acc_d = self.disks.get((name, d.device))
                if acc_d is None:
                    acc_d = self.disks[(name, d.device)] = [stats.io_ms / 1000.0, (stats.rms + stats.wms) / 1000.0, stats.rms / 1000.0]
                rps = max(d.last_reads_per_s, 0.0) + (0.2 if i == 0 else 0.0)
                wps = max(d.last_writes_per_s, 0.0) + (5.1 if i == 0 else 0.0)
                svc = 5.8 if d.rotational else 0.31
                retry = 7400.0 if d.rotational else 1800.0
                r_await = svc + min(max(d.bad_read_fraction, 0.0), 1.0) * retry if rps > 0 else 0.0
                w_await = svc * 1.9 if wps > 0 else 0.0
                busy_ms = rps * r_await + wps * w_await  # ms of I/O in flight per second, as iostat's aqu-sz * 1000
                acc_d[0] += dt * min(busy_ms / 1000.0, 1.0)
                acc_d[1] += dt * busy_ms / 1000.0
                acc_d[2] += dt * rps * r_await / 1000.0
                vals += (float(stats.reads), float(stats.writes), float(stats.rsect) * 512.0, float(stats.wsect) * 512.0, acc_d[0], acc_d[1], acc_d[2])
                if build:
                    keys += [series_key(m, {**base, "device": d.device}) for m in DISK_METRICS]
        if self._node_cols is None or len(self._node_cols) != len(vals):
            self._node_cols = tsdb.columns(keys) if keys else self._node_cols
            if self._node_cols is None or len(self._node_cols) != len(vals):  # layout changed: rebuild the keys
                self._node_cols = None
                return self._nodes(world, tsdb, 0.0, node_cpu, node_mem, node_pods)
        return self._node_cols, np.asarray(vals, dtype=np.float64)


FS_METRICS = ("node_filesystem_size_bytes", "node_filesystem_avail_bytes", "node_filesystem_free_bytes", "node_filesystem_files", "node_filesystem_files_free", "node_filesystem_readonly")
DISK_METRICS = (
    "node_disk_reads_completed_total",
    "node_disk_writes_completed_total",
    "node_disk_read_bytes_total",
    "node_disk_written_bytes_total",
    "node_disk_io_time_seconds_total",
    "node_disk_io_time_weighted_seconds_total",
    "node_disk_read_time_seconds_total",
)
_WEIGHTS: dict[tuple[int, int], np.ndarray] = {}


def _cpu_weights(cores: int, index: int) -> np.ndarray:
    """A fixed, slightly uneven spread of a node's load over its CPUs."""
    w = _WEIGHTS.get((cores, index))
    if w is None:
        w = 1.0 + 0.08 * np.cos(np.arange(cores) * 1.7 + index)
        w = _WEIGHTS[(cores, index)] = w / w.sum()
    return w


def _container_keys(labels: dict[str, str], limited: bool) -> list[str]:
    names = ["container_cpu_usage_seconds_total", "container_memory_working_set_bytes", "container_spec_memory_limit_bytes", "container_last_seen"]
    if limited:
        names += ["container_cpu_cfs_periods_total", "container_cpu_cfs_throttled_periods_total", "container_spec_cpu_quota", "container_spec_cpu_period"]
    return [series_key(n, labels) for n in names]
