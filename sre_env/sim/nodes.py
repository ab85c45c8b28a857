"""Host-level model of a node: disks with a latent-sector-error model, kernel log, SMART.

State lives here and shows only where it would on a real machine: ``dmesg``,
``smartctl``, ``df``, ``iostat``, ``journalctl``, node conditions and, through
the traffic model, errors in the logs of the processes whose data sits on the
disk. Kernel log lines are rendered lazily from per-tick error counts, so a
fault costs nothing until someone looks.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

__all__ = ["Disk", "HostNode"]

#: nodes booted this many seconds before simulated second 0
BOOT_OFFSET_S = 3 * 86400 + 4211.0


@dataclass
class Disk:
    device: str  # "sdb"
    model: str
    serial: str
    size_bytes: int
    mountpoint: str
    used_bytes: int
    rotational: bool = False
    inodes_total: int = 6_553_600
    inodes_used: int = 41_236
    #: fraction of reads that hit an unreadable sector and fail with EIO
    bad_read_fraction: float = 0.0
    #: logical block addresses of the latent bad sectors (chosen by the fault)
    bad_sectors: tuple[int, ...] = ()
    #: directories whose files sit on the bad sectors (empty: the whole disk)
    bad_paths: tuple[str, ...] = ()
    pending_sectors: int = 0
    reallocated_sectors: int = 0
    offline_uncorrectable: int = 0
    reported_uncorrect: int = 0
    power_on_hours: int = 14_873
    reads_total: float = 0.0
    writes_total: float = 0.0
    read_errors_total: float = 0.0
    read_bytes_total: float = 0.0
    io_time_s_total: float = 0.0
    #: (time, failed reads in that tick) while errors happen; rendered lazily into dmesg
    error_ticks: deque = field(default_factory=lambda: deque(maxlen=720))
    #: last tick's rates, for iostat
    last_reads_per_s: float = 0.0
    last_writes_per_s: float = 0.0

    @property
    def healthy(self) -> bool:
        return self.bad_read_fraction <= 0.0

    def read_error_fraction(self, path: str) -> float:
        """Share of reads of files under ``path`` that fail with EIO."""
        if self.bad_read_fraction <= 0.0:
            return 0.0
        if not self.bad_paths or any(path.startswith(p) for p in self.bad_paths):
            return self.bad_read_fraction
        return 0.0


@dataclass
class HostNode:
    name: str
    index: int
    cpu_cores: int
    memory_bytes: int
    kernel: str = "6.1.0-27-amd64"
    os_image: str = "Debian GNU/Linux 12 (bookworm)"
    kubelet_version: str = "v1.32.2"
    container_runtime: str = "containerd://1.7.24"
    internal_ip: str = ""
    disks: list[Disk] = field(default_factory=list)
    kubelet_running: bool = True
    clock_offset_s: float = 0.0
    sysctls: dict[str, str] = field(default_factory=dict)
    #: sysctls written to /etc/sysctl.d (survive a reboot)
    persistent_sysctls: dict[str, str] = field(default_factory=dict)
    #: images already pulled on this node
    image_cache: set[str] = field(default_factory=set)
    #: host journal lines (t, unit, text) for events the model records
    journal: deque = field(default_factory=lambda: deque(maxlen=400))
    cpu_used_millicores: float = 0.0
    memory_used_bytes: float = 0.0

    def disk(self, device: str) -> Disk | None:
        dev = device.removeprefix("/dev/")
        for d in self.disks:
            if d.device == dev or dev.startswith(d.device):
                return d
        return None

    def disk_for_path(self, path: str) -> Disk:
        """The disk holding ``path``: the longest matching mountpoint, else the root disk."""
        best = self.disks[0]
        for d in self.disks:
            if path.startswith(d.mountpoint) and len(d.mountpoint) > len(best.mountpoint):
                best = d
        return best

    def uptime(self, now: float) -> float:
        return now + BOOT_OFFSET_S


def default_sysctls() -> dict[str, str]:
    return {
        "net.ipv4.ip_local_port_range": "32768\t60999",
        "net.netfilter.nf_conntrack_max": "262144",
        "net.core.somaxconn": "4096",
        "fs.file-max": "9223372036854775807",
        "vm.max_map_count": "262144",
        "kernel.pid_max": "4194304",
        "vm.swappiness": "60",
    }
