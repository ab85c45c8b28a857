"""What a node's kernel counts: load average, partitions, file-system numbers, disk I/O since boot.

These are facts of the host model that more than one reader shows: the tools
behind ``ssh`` (``uptime``, ``df``, ``iostat``, ``/proc/diskstats``) and the
node exporter's metrics. The node was up for :data:`BOOT_OFFSET_S` before the
episode began, so cumulative counters get a deterministic pre-episode
baseline; otherwise every since-boot average would read as an idle machine.
"""

from __future__ import annotations

from sre_env.sim.kernel.hashing import stable_hash
from sre_env.sim.kernel.hosts import BOOT_OFFSET_S, Disk, HostNode

__all__ = ["load_average", "partition", "partitions", "fs_numbers", "iowait_percent", "DiskStats"]


def load_average(node: HostNode, now: float) -> tuple[float, float, float]:
    """1/5/15-minute load: runnable CPU demand plus tasks stuck in D state on failing disks.

    Processes blocked in uninterruptible reads count toward Linux load, which is
    why a sick disk raises the load average on an otherwise idle node.
    """
    cpu = max(node.cpu_used_millicores, 0.0) / 1000.0
    stuck = 0.0
    for d in node.disks:
        if d.error_ticks:
            last_t = d.error_ticks[-1][0]
            if now - last_t < 120:
                stuck += 1.0 + min(d.bad_read_fraction * 20.0, 3.0)
    base = cpu + stuck
    j = stable_hash(node.name, int(now // 60)) % 100 / 1000.0
    one = base * (0.95 + j)
    five = base * 0.9 + cpu * 0.05
    fifteen = base * 0.8 + cpu * 0.15
    if stuck:
        # load follows the disk trouble with the exponential averages' lag
        first = min((d.error_ticks[0][0] for d in node.disks if d.error_ticks), default=now)
        age = max(now - first, 0.0)
        five = cpu + stuck * min(age / 300.0, 1.0)
        fifteen = cpu + stuck * min(age / 900.0, 1.0)
    return round(one, 2), round(five, 2), round(fifteen, 2)


def partition(disk: Disk) -> str:
    """Device name of the mounted partition: the root disk's ``sda1``, data disks' ``sdb1``."""
    if disk.device.startswith("nvme"):
        return f"{disk.device}p1"
    return f"{disk.device}1"


def partitions(node: HostNode) -> list[tuple[Disk, int, str, int, str, int]]:
    """(disk, disk index, partition name, partition minor offset, mountpoint, size bytes)."""
    out = []
    for i, d in enumerate(node.disks):
        if i == 0:
            esp = 127 * 1024 * 1024
            out.append((d, i, f"{d.device}1", 1, d.mountpoint or "/", int(d.size_bytes) - esp - 4 * 1024 * 1024))
            out.append((d, i, f"{d.device}14", 14, "", 3 * 1024 * 1024))
            out.append((d, i, f"{d.device}15", 15, "/boot/efi", 124 * 1024 * 1024))
        else:
            out.append((d, i, f"{d.device}1", 1, d.mountpoint, int(d.size_bytes) - 2 * 1024 * 1024))
    return out


def fs_numbers(d: Disk, part_size: int) -> tuple[int, int, int]:
    """(size, used, avail) in bytes as ext4 reports them: metadata overhead and 5% reserve."""
    size = int(part_size * 0.984)
    used = min(max(int(d.used_bytes), 0), size)
    avail = max(int(size * 0.95) - used, 0)
    return size, used, avail


def iowait_percent(node: HostNode) -> float:
    """Share of CPU time spent waiting for I/O: small, and large while a disk keeps failing reads."""
    w = 0.15
    for d in node.disks:
        if d.bad_read_fraction > 0 and d.error_ticks:
            w += 4.0 + d.bad_read_fraction * 60.0
    return min(w, 60.0)


class DiskStats:
    """Cumulative counters of one disk since boot, baseline included."""

    __slots__ = ("reads", "writes", "rsect", "wsect", "rms", "wms", "io_ms", "merged_r", "merged_w", "r_await", "w_await")

    def __init__(self, d: Disk, idx: int) -> None:
        h = stable_hash(d.serial or d.device)
        base_r = (0.9 if idx == 0 else 1.6) + (h % 50) / 100.0
        base_w = (6.5 if idx == 0 else 2.4) + (h % 70) / 100.0
        self.reads = int(base_r * BOOT_OFFSET_S + d.reads_total)
        self.writes = int(base_w * BOOT_OFFSET_S + d.writes_total)
        rb = d.read_bytes_total if d.read_bytes_total > 0 else d.reads_total * 16384
        self.rsect = int(base_r * BOOT_OFFSET_S * 32 + rb / 512)
        self.wsect = int(base_w * BOOT_OFFSET_S * 48 + d.writes_total * 48)
        svc = 5.8 if d.rotational else 0.31
        retry = 7400.0 if d.rotational else 1800.0
        frac = (d.read_errors_total / d.reads_total) if d.reads_total > 0 else 0.0
        self.r_await = svc + min(frac, 1.0) * retry
        self.w_await = svc * 1.9
        self.rms = int(self.reads * self.r_await)
        self.wms = int(self.writes * self.w_await)
        self.io_ms = int(max(d.io_time_s_total * 1000.0, 0.0) + (self.rms + self.wms) * 0.6)
        self.merged_r = self.reads // 9
        self.merged_w = self.writes // 3
