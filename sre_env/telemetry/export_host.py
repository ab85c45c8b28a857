"""node-exporter and cAdvisor: host and container series from the node and runtime models.

Why they read the same helpers as the shell tools: ``df``, ``iostat``,
``/proc/loadavg`` and ``sysctl`` already derive their numbers from the disk and
node models; the exporters reuse those derivations so a graph and a terminal
never disagree. There is deliberately no disk *error* counter: node-exporter has
none, so latent sector errors show as I/O time and await (and in dmesg/SMART),
not as a tidy metric.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from sre_env.kube.quantity import cpu_millicores, memory_bytes
from sre_env.kube.timefmt import EPOCH
from sre_env.sim.kernel.hosts import BOOT_OFFSET_S
from sre_env.sim.node.faults import conntrack_count
from sre_env.sim.node.stats import (
    DiskStats,
    fs_numbers,
    iowait_percent,
    load_average,
    partitions,
)

from .tsdb import TSDB, series_key

if TYPE_CHECKING:
    from sre_env.sim.kernel.world import World

__all__ = ["HostExporters", "node_base_millicores", "SYSTEM_MEMORY_BYTES"]

EPOCH_UNIX = EPOCH.timestamp()
MiB = 1024 * 1024
#: memory the OS, kubelet and containerd use on every node (what ``kubectl top node`` adds)
SYSTEM_MEMORY_BYTES = 900 * MiB
CPU_MODES = ("idle", "iowait", "system", "user")
#: share of time in each mode on a quiet node, for the counters' value at boot + uptime
_BOOT_SPLIT = {"idle": 0.9688, "iowait": 0.0012, "system": 0.009, "user": 0.021}
CFS_PERIODS_PER_S = 10.0  # 100 ms CFS period


def node_base_millicores(index: int) -> int:
    """CPU the node's own daemons use (kubelet, containerd, kube-proxy), millicores."""
    return 60 + 7 * index


@dataclass
class _CtrLayout:
    key: tuple
    cids: list[str]
    acc: np.ndarray  # [containers, 3]: cpu seconds, cfs periods, throttled periods
    first_uids: list[str]
    first_pos: np.ndarray
    lat: np.ndarray
    node_idx: np.ndarray
    n_nodes: int
    usage_keys: list[tuple[str, str]]
    usage_sel: np.ndarray
    usage_idx: np.ndarray
    limited: np.ndarray
    limits: np.ndarray
    cols: np.ndarray
    template: np.ndarray
    pos_cpu: np.ndarray
    pos_mem: np.ndarray
    pos_seen: np.ndarray
    pos_per: np.ndarray
    pos_thr: np.ndarray


@dataclass
class _NodeLayout:
    sig: tuple
    cols: np.ndarray
    buf: np.ndarray
    cpu_acc: np.ndarray
    cpu_pos: np.ndarray
    weights: np.ndarray
    rate_idx: np.ndarray
    gauge_pos: np.ndarray
    fs: list[tuple[int, int]]
    disk_pos: np.ndarray


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
        #: vectorised layout of the running containers, and the scheduled pods (derived)
        self._lay: _CtrLayout | None = None
        self._plist: tuple[int, list] | None = None
        #: (node, device) -> (counter key, DiskStats numbers)
        self._disk_stats: dict[tuple[str, str], tuple[tuple, tuple]] = {}
        #: slots of the node series (derived from the first slow pass), load averages, conntrack limits
        self._node_fast: _NodeLayout | None = None
        self._load: dict[str, tuple] = {}
        self._limits: dict[str, float] = {}

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

    def _pod_list(self, world: "World") -> list[tuple[str, str, Any, str, str, list[tuple[str, float, float, str]]]]:
        """(uid, node, component, namespace, name, static containers) of every scheduled pod, in store
        order; rebuilt only when a pod is written (every pod write bumps the kind's revision)."""
        rev = world.store.kind_revision.get("Pod", 0)
        cached = self._plist
        if cached is not None and cached[0] == rev:
            return cached[1]
        out = []
        for pod in world.store.iter("Pod"):
            node = pod["spec"].get("nodeName")
            if not node:
                continue
            meta = pod["metadata"]
            out.append((meta["uid"], node, world.component_for(pod), meta["namespace"], meta["name"], self._pod_static(pod)))
        self._plist = (rev, out)
        return out

    def _flush(self) -> None:
        """Write the vectorised counters of the current layout back into ``containers``."""
        lay = self._lay
        if lay is None:
            return
        for cid, row in zip(lay.cids, lay.acc.tolist()):
            self.containers[cid] = row

    def _layout(self, world: "World", tsdb: TSDB, plist: list, key: tuple) -> "_CtrLayout":
        """Columns, value slots and static facts of every running container (the slow path, as the
        scrape loop did it once per container; rebuilt when the set of running containers changes)."""
        self._flush()
        runtimes = world.runtimes
        node_pos = {name: i for i, name in enumerate(world.hosts)}
        n_nodes = len(node_pos)
        cids: list[str] = []
        first_uids: list[str] = []
        first_pos: list[int] = []
        lat: list[float] = []
        node_idx: list[int] = []
        usage_keys: dict[tuple[str, str], int] = {}
        usage_idx: list[int] = []
        limits: list[float] = []
        cols_parts: list[np.ndarray] = []
        template: list[float] = []
        pos = {"cpu": [], "mem": [], "seen": [], "per": [], "thr": []}
        live_pods: set[str] = set()
        for uid, node, comp, ns, pname, statics in plist:
            rt = runtimes.get(uid)
            if rt is None:
                continue
            live_pods.add(uid)
            first = True
            for cname, limit_cores, mem_limit, image in statics:
                ctr = rt.containers.get(cname)
                if ctr is None or ctr.state != "running" or not ctr.container_id:
                    continue
                i = len(cids)
                if first:
                    first_uids.append(uid)
                    first_pos.append(i)
                    lat.append(comp.latency_ms if comp else 1.0)
                first = False
                node_idx.append(node_pos.get(node, n_nodes))
                usage_idx.append(usage_keys.setdefault((ns, comp.name), len(usage_keys)) if comp is not None else -1)
                cid = ctr.container_id.split("://", 1)[-1]
                cids.append(cid)
                limits.append(limit_cores)
                base = len(template)
                pos["cpu"].append(base)
                pos["mem"].append(base + 1)
                pos["seen"].append(base + 3)
                template += (0.0, 0.0, mem_limit, 0.0)
                if limit_cores > 0:
                    pos["per"].append(base + 4)
                    pos["thr"].append(base + 5)
                    template += (0.0, 0.0, limit_cores * 100000.0, 100000.0)
                if cid not in self._cols:
                    host = world.hosts.get(node)
                    labels = {
                        "namespace": ns,
                        "pod": pname,
                        "container": cname,
                        "image": image,
                        "name": cid,
                        "node": node,
                        "instance": f"{host.internal_ip if host else ''}:10250",
                        "job": "kubelet",
                        "metrics_path": "/metrics/cadvisor",
                    }
                    self._cols[cid] = tsdb.columns(_container_keys(labels, limit_cores > 0))
                cols_parts.append(self._cols[cid])
        ctr_key = tuple(cids)
        if ctr_key != self._ctr_key:
            self._ctr_key = ctr_key
            live = set(cids)
            if len(self.containers) > len(live) + 64:
                self.containers = {k: v for k, v in self.containers.items() if k in live}
                self._cols = {k: v for k, v in self._cols.items() if k in live}
            self._pods = {k: v for k, v in self._pods.items() if k in live_pods}
        acc = np.zeros((len(cids), 3))
        for i, cid in enumerate(cids):
            row = self.containers.get(cid)
            if row is None:
                row = self.containers[cid] = [0.0, 0.0, 0.0]
            acc[i] = row
        limits_a = np.asarray(limits, dtype=np.float64)
        lay = _CtrLayout(
            key=key,
            cids=cids,
            acc=acc,
            first_uids=first_uids,
            first_pos=np.asarray(first_pos, dtype=np.int64),
            lat=np.asarray(lat, dtype=np.float64),
            node_idx=np.asarray(node_idx, dtype=np.int64),
            n_nodes=n_nodes,
            usage_keys=list(usage_keys),
            usage_sel=np.flatnonzero(np.asarray(usage_idx, dtype=np.int64) >= 0),
            usage_idx=np.asarray([u for u in usage_idx if u >= 0], dtype=np.int64),
            limited=np.flatnonzero(limits_a > 0),
            limits=limits_a[limits_a > 0],
            cols=np.concatenate(cols_parts) if cols_parts else np.empty(0, dtype=np.int64),
            template=np.asarray(template, dtype=np.float64),
            pos_cpu=np.asarray(pos["cpu"], dtype=np.int64),
            pos_mem=np.asarray(pos["mem"], dtype=np.int64),
            pos_seen=np.asarray(pos["seen"], dtype=np.int64),
            pos_per=np.asarray(pos["per"], dtype=np.int64),
            pos_thr=np.asarray(pos["thr"], dtype=np.int64),
        )
        self._lay = lay
        return lay

    def collect(self, world: "World", tsdb: TSDB, pod_rps: dict[str, float]) -> list[tuple[np.ndarray, np.ndarray]]:
        now = world.clock.now
        dt = 0.0 if self.last_t is None else max(now - self.last_t, 0.0)
        self.last_t = now
        plist = self._pod_list(world)
        runtimes = world.runtimes
        # the running containers, in scrape order (the only per-container Python work)
        raw: list[str] = []
        ctrs: list[Any] = []
        node_pods: dict[str, int] = {}
        for uid, node, _comp, _ns, _name, statics in plist:
            node_pods[node] = node_pods.get(node, 0) + 1
            rt = runtimes.get(uid)
            if rt is None:
                continue
            cs = rt.containers
            for st in statics:
                ctr = cs.get(st[0])
                if ctr is not None and ctr.state == "running" and ctr.container_id:
                    raw.append(ctr.container_id)
                    ctrs.append(ctr)
        key = (self._plist[0] if self._plist else -1, tuple(raw))
        lay = self._lay
        if lay is None or lay.key != key:
            lay = self._layout(world, tsdb, plist, key)
        n = len(lay.cids)
        # cores: the pod's first container serves the requests, the others idle at 1m
        milli = np.ones(n)
        if len(lay.first_pos):
            rps = np.fromiter((pod_rps.get(u, 0.0) for u in lay.first_uids), dtype=np.float64, count=len(lay.first_uids))
            milli[lay.first_pos] = 1.0 + np.trunc(rps * lay.lat * 0.35)
        cores = milli / 1000.0
        mem = np.fromiter((c.memory_mib for c in ctrs), dtype=np.float64, count=n) * MiB
        node_cpu = np.bincount(lay.node_idx, weights=cores, minlength=lay.n_nodes + 1) if n else np.zeros(lay.n_nodes + 1)
        node_mem = np.bincount(lay.node_idx, weights=mem, minlength=lay.n_nodes + 1) if n else np.zeros(lay.n_nodes + 1)
        if len(lay.usage_keys):
            u_cores = np.bincount(lay.usage_idx, weights=cores[lay.usage_sel], minlength=len(lay.usage_keys)).tolist()
            u_mem = np.bincount(lay.usage_idx, weights=mem[lay.usage_sel], minlength=len(lay.usage_keys)).tolist()
            self.usage = {k: [c, m] for k, c, m in zip(lay.usage_keys, u_cores, u_mem)}
        else:
            self.usage = {}
        acc = lay.acc
        acc[:, 0] += cores * dt
        vals = lay.template.copy()
        vals[lay.pos_cpu] = acc[:, 0]
        vals[lay.pos_mem] = mem
        vals[lay.pos_seen] = now + EPOCH_UNIX
        if len(lay.limited):
            step = CFS_PERIODS_PER_S * dt
            acc[lay.limited, 1] += step
            acc[lay.limited, 2] += step * np.minimum(np.maximum((cores[lay.limited] / lay.limits - 0.6) / 0.4, 0.0), 1.0)
            vals[lay.pos_per] = acc[lay.limited, 1]
            vals[lay.pos_thr] = acc[lay.limited, 2]
        parts = [(lay.cols, vals)]
        parts.append(self._nodes(world, tsdb, dt, node_cpu, node_mem, node_pods))
        return parts

    def __getstate__(self) -> dict:
        self._flush()
        state = dict(self.__dict__)
        state["_lay"] = None  # derived (and holds no world objects); rebuilt at the first scrape
        state["_plist"] = None
        for k, v in (("_disk_stats", {}), ("_node_fast", None), ("_load", {}), ("_limits", {})):
            state[k] = v
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        for k, v in (("_lay", None), ("_plist", None), ("_disk_stats", {}), ("_node_fast", None), ("_load", {}), ("_limits", {})):
            self.__dict__.setdefault(k, v)

    def _nodes(self, world: "World", tsdb: TSDB, dt: float, node_cpu: np.ndarray, node_mem: np.ndarray, node_pods: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
        # the layout of node series only changes with the hosts' cores and disks
        sig = tuple((name, max(int(h.cpu_cores), 1), h.index, tuple((d.device, d.mountpoint) for d in h.disks)) for name, h in world.hosts.items())
        fast = self._node_fast
        if fast is not None and fast.sig == sig and self._node_cols is fast.cols:
            return self._nodes_fast(world, fast, dt, node_cpu, node_mem, node_pods)
        cols, vals = self._nodes_slow(world, tsdb, dt, node_cpu, node_mem, node_pods)
        self._node_fast = self._node_layout(world, sig, cols, vals)
        return cols, vals

    def _node_layout(self, world: "World", sig: tuple, cols: np.ndarray, vals: np.ndarray) -> "_NodeLayout | None":
        """Value slots of :meth:`_nodes_slow`'s output, so later scrapes fill them with vector ops."""
        off = 0
        cpu_pos: list[np.ndarray] = []
        accs: list[np.ndarray] = []
        weights: list[np.ndarray] = []
        rate_idx: list[np.ndarray] = []
        gauge_pos: list[int] = []
        fs: list[tuple[int, int]] = []
        disk_pos: list[int] = []
        for hi, (name, host) in enumerate(world.hosts.items()):
            cores = max(int(host.cpu_cores), 1)
            acc = self.cpu.get(name)
            if acc is None or len(acc) != cores * len(CPU_MODES):
                return None
            cpu_pos.append(np.arange(off, off + len(acc)))
            accs.append(acc)
            weights.append(np.tile(_cpu_weights(cores, host.index), len(CPU_MODES)))
            rate_idx.append(np.repeat(np.arange(len(CPU_MODES)) + hi * len(CPU_MODES), cores))
            off += len(acc)
            gauge_pos += range(off, off + 12)
            off += 12
            n_fs = 6 * sum(1 for _d, _i, _p, _m, mnt, _s in partitions(host) if mnt)
            fs.append((off, off + n_fs))
            off += n_fs
            disk_pos += range(off, off + 7 * len(host.disks))
            off += 7 * len(host.disks)
        if off != len(vals) or off != len(cols):
            return None
        big = np.concatenate(accs) if accs else np.empty(0)
        start = 0
        for (name, _host), acc in zip(world.hosts.items(), accs):
            self.cpu[name] = big[start : start + len(acc)]  # views: the slow path keeps working on them
            start += len(acc)
        return _NodeLayout(
            sig=sig,
            cols=cols,
            buf=np.array(vals, dtype=np.float64),
            cpu_acc=big,
            cpu_pos=np.concatenate(cpu_pos) if cpu_pos else np.empty(0, dtype=np.int64),
            weights=np.concatenate(weights) if weights else np.empty(0),
            rate_idx=np.concatenate(rate_idx) if rate_idx else np.empty(0, dtype=np.int64),
            gauge_pos=np.asarray(gauge_pos, dtype=np.int64),
            fs=fs,
            disk_pos=np.asarray(disk_pos, dtype=np.int64),
        )

    def _nodes_fast(self, world: "World", lay: "_NodeLayout", dt: float, node_cpu: np.ndarray, node_mem: np.ndarray, node_pods: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`_nodes_slow`'s numbers, written into the layout's slots (same arithmetic, same order)."""
        now = world.clock.now
        buf = lay.buf
        rates: list[float] = []
        gauges: list[float] = []
        disk_vals: list[float] = []
        boot = EPOCH_UNIX - BOOT_OFFSET_S
        minute = int(now // 60)
        for hi, (name, host) in enumerate(world.hosts.items()):
            cores = max(int(host.cpu_cores), 1)
            busy = min(node_base_millicores(host.index) / 1000.0 + float(node_cpu[hi]), cores * 0.95)
            iowait = cores * iowait_percent(host) / 100.0
            rates += (max(cores - busy - iowait, 0.0), iowait, busy * 0.3, busy * 0.7)
            mem_total = float(host.memory_bytes)
            avail = max(mem_total - SYSTEM_MEMORY_BYTES - float(node_mem[hi]), 0.0)
            disks = host.disks
            if any(d.error_ticks for d in disks):
                one, five, fifteen = load_average(host, now)
            else:
                lkey = (name, host.cpu_used_millicores, minute)
                hit = self._load.get(name)
                if hit is None or hit[0] != lkey:
                    hit = self._load[name] = (lkey, load_average(host, now))
                one, five, fifteen = hit[1]
            conntrack = conntrack_count(host, now, node_pods.get(name, 0))
            raw = str((host.sysctls or {}).get("net.netfilter.nf_conntrack_max", "262144"))
            limit = self._limits.get(raw)
            if limit is None:
                limit = self._limits[raw] = float(raw.split()[0] or 262144)
            gauges += (mem_total, avail, avail * 0.45, one, five, fifteen, float(conntrack), limit, float(host.clock_offset_s), 1.0, boot, 1.0)
            fs_key = tuple((d.used_bytes, d.inodes_used, d.inodes_total, d.size_bytes) for d in disks)
            cached = self._fs.get(name)
            if cached is None or cached[0] != fs_key:
                fs_vals: list[float] = []
                for d, _i, part, _minor, mnt, size in partitions(host):
                    if not mnt:
                        continue
                    if mnt == "/boot/efi":
                        sz, used, a = 124 * MiB, 12_374_016, 117 * MiB
                        files, files_free = 0.0, 0.0
                    else:
                        sz, used, a = fs_numbers(d, size)
                        files, files_free = float(d.inodes_total), float(d.inodes_total - d.inodes_used)
                    fs_vals += (float(sz), float(a), float(sz - used), files, files_free, 0.0)
                self._fs[name] = (fs_key, fs_vals)
                lo, hi_ = lay.fs[hi]
                buf[lo:hi_] = fs_vals
            for i, d in enumerate(disks):
                skey = (i, d.serial, d.device, d.rotational, d.reads_total, d.writes_total, d.read_bytes_total, d.read_errors_total, d.io_time_s_total)
                cached_s = self._disk_stats.get((name, d.device))
                if cached_s is not None and cached_s[0] == skey:
                    s_reads, s_writes, s_rsect, s_wsect, s_io, s_rms, s_wms = cached_s[1]
                else:
                    stats = DiskStats(d, i)
                    s_reads, s_writes, s_rsect, s_wsect, s_io, s_rms, s_wms = numbers = (stats.reads, stats.writes, stats.rsect, stats.wsect, stats.io_ms, stats.rms, stats.wms)
                    self._disk_stats[(name, d.device)] = (skey, numbers)
                acc_d = self.disks.get((name, d.device))
                if acc_d is None:
                    acc_d = self.disks[(name, d.device)] = [s_io / 1000.0, (s_rms + s_wms) / 1000.0, s_rms / 1000.0]
                rps = max(d.last_reads_per_s, 0.0) + (0.2 if i == 0 else 0.0)
                wps = max(d.last_writes_per_s, 0.0) + (5.1 if i == 0 else 0.0)
                svc = 5.8 if d.rotational else 0.31
                retry = 7400.0 if d.rotational else 1800.0
                r_await = svc + min(max(d.bad_read_fraction, 0.0), 1.0) * retry if rps > 0 else 0.0
                w_await = svc * 1.9 if wps > 0 else 0.0
                busy_ms = rps * r_await + wps * w_await
                acc_d[0] += dt * min(busy_ms / 1000.0, 1.0)
                acc_d[1] += dt * busy_ms / 1000.0
                acc_d[2] += dt * rps * r_await / 1000.0
                disk_vals += (float(s_reads), float(s_writes), float(s_rsect) * 512.0, float(s_wsect) * 512.0, acc_d[0], acc_d[1], acc_d[2])
        lay.cpu_acc += np.asarray(rates)[lay.rate_idx] * lay.weights * dt
        buf[lay.cpu_pos] = lay.cpu_acc
        buf[lay.gauge_pos] = gauges
        buf[lay.disk_pos] = disk_vals
        return lay.cols, buf

    def _nodes_slow(self, world: "World", tsdb: TSDB, dt: float, node_cpu: np.ndarray, node_mem: np.ndarray, node_pods: dict[str, int]) -> tuple[np.ndarray, np.ndarray]:
        now = world.clock.now
        build = self._node_cols is None
        keys: list[str] = []
        vals: list[float] = []
        for hi, (name, host) in enumerate(world.hosts.items()):
            if build:
                base = {"instance": f"{host.internal_ip}:9100", "job": "node-exporter", "node": name}
            cores = max(int(host.cpu_cores), 1)
            # cpu: counters per mode and cpu
            busy = min(node_base_millicores(host.index) / 1000.0 + float(node_cpu[hi]), cores * 0.95)
            iowait = cores * iowait_percent(host) / 100.0
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
            avail = max(mem_total - SYSTEM_MEMORY_BYTES - float(node_mem[hi]), 0.0)
            one, five, fifteen = load_average(host, now)
            conntrack = conntrack_count(host, now, node_pods.get(name, 0))
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
                fs_iter = tuple(partitions(host))
                fs_start = len(vals)
            for d, _i, part, _minor, mnt, size in fs_iter:
                if not mnt:
                    continue
                if mnt == "/boot/efi":
                    sz, used, a = 124 * MiB, 12_374_016, 117 * MiB
                    files, files_free, fstype = 0.0, 0.0, "vfat"
                else:
                    sz, used, a = fs_numbers(d, size)
                    files, files_free, fstype = float(d.inodes_total), float(d.inodes_total - d.inodes_used), "ext4"
                vals += (float(sz), float(a), float(sz - used), files, files_free, 0.0)
                if build:
                    labels = {**base, "device": f"/dev/{part}", "fstype": fstype, "mountpoint": mnt}
                    keys += [series_key(m, labels) for m in FS_METRICS]
            if fs_iter:
                self._fs[name] = (fs_key, vals[fs_start:])
            # disks
            for i, d in enumerate(host.disks):
                # DiskStats only moves with the disk's counters: reuse it while they stand still
                skey = (i, d.serial, d.device, d.rotational, d.reads_total, d.writes_total, d.read_bytes_total, d.read_errors_total, d.io_time_s_total)
                cached_s = self._disk_stats.get((name, d.device))
                if cached_s is not None and cached_s[0] == skey:
                    s_reads, s_writes, s_rsect, s_wsect, s_io, s_rms, s_wms = cached_s[1]
                else:
                    stats = DiskStats(d, i)
                    s_reads, s_writes, s_rsect, s_wsect, s_io, s_rms, s_wms = numbers = (stats.reads, stats.writes, stats.rsect, stats.wsect, stats.io_ms, stats.rms, stats.wms)
                    self._disk_stats[(name, d.device)] = (skey, numbers)
                acc_d = self.disks.get((name, d.device))
                if acc_d is None:
                    acc_d = self.disks[(name, d.device)] = [s_io / 1000.0, (s_rms + s_wms) / 1000.0, s_rms / 1000.0]
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
                vals += (float(s_reads), float(s_writes), float(s_rsect) * 512.0, float(s_wsect) * 512.0, acc_d[0], acc_d[1], acc_d[2])
                if build:
                    keys += [series_key(m, {**base, "device": d.device}) for m in DISK_METRICS]
        if self._node_cols is None or len(self._node_cols) != len(vals):
            self._node_cols = tsdb.columns(keys) if keys else self._node_cols
            if self._node_cols is None or len(self._node_cols) != len(vals):  # layout changed: rebuild the keys
                self._node_cols = None
                return self._nodes_slow(world, tsdb, 0.0, node_cpu, node_mem, node_pods)
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
