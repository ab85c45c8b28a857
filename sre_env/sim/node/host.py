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
    #: share of reads that silently return wrong data (no I/O error, nothing in dmesg or SMART)
    corrupt_read_fraction: float = 0.0
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

    def corruption_fraction(self, path: str) -> float:
        """Share of reads of files under ``path`` that return corrupted blocks (silently)."""
        if self.corrupt_read_fraction <= 0.0:
            return 0.0
        if not self.bad_paths or any(path.startswith(p) for p in self.bad_paths):
            return self.corrupt_read_fraction
        return 0.0

    def read_error_fraction(self, path: str) -> float:
        """Share of reads of files under ``path`` that fail with EIO."""
        if self.bad_read_fraction <= 0.0:
            return 0.0
        if not self.bad_paths or any(path.startswith(p) for p in self.bad_paths):
            return self.bad_read_fraction
        return 0.0


#: CPU left for work when the clocksource is the HPET (measured slowdowns of Go services: 5-10x)
HPET_CPU_EFFICIENCY = 0.08

#: the kubelet client certificate: issued this long before simulated time 0, valid for a year
KUBELET_CERT_AGE_S = 30 * 86400.0
KUBELET_CERT_LIFETIME_S = 365 * 86400.0


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
    #: files an operator or a fault wrote (sre_env.sim.node.files): path -> content
    files: dict[str, str] = field(default_factory=dict)
    #: systemd units disabled at boot (``systemctl disable``)
    disabled_units: set[str] = field(default_factory=set)
    chrony_running: bool = True
    #: the hardware clock's error: what the clock comes back with after a reboot without NTP
    rtc_offset_s: float = 0.0
    #: since when the node controller has not heard from this node's kubelet (None: connected)
    lost_since: float | None = None
    #: kernel messages node faults add: (simulated time, syslog level, text), rendered by dmesg
    kmsg: deque = field(default_factory=lambda: deque(maxlen=300))
    #: NIC faults: share of received frames that fail their CRC; link down this many seconds per minute
    nic_crc_error_fraction: float = 0.0
    nic_flap_down_s_per_min: float = 0.0
    nic_fault_since: float = 0.0
    #: memory: uncorrectable ECC errors per hour on one DIMM (processes touching the page die)
    ecc_uncorrectable_per_hour: float = 0.0
    ecc_dimm: str = ""
    #: the kernel's clocksource; "hpet" after the watchdog marks the TSC unstable
    clocksource: str = "tsc"

    @property
    def cpu_efficiency(self) -> float:
        """Share of CPU time left for real work. On the HPET every clock read is a slow
        hardware access, and Go programs read the clock constantly (scheduler, timers)."""
        return HPET_CPU_EFFICIENCY if self.clocksource == "hpet" else 1.0

    def kubelet_cert_valid(self) -> bool:
        """The kubelet's client certificate, checked against this node's (possibly wrong) clock.

        Issued when the cluster was built (30 days before simulated time 0) for a year,
        so a clock more than 30 days slow sees it as not yet valid and one more than
        335 days fast as expired.
        """
        return -KUBELET_CERT_AGE_S <= self.clock_offset_s <= KUBELET_CERT_LIFETIME_S - KUBELET_CERT_AGE_S

    def kubelet_connected(self) -> bool:
        """Whether the kubelet can talk to the API server (running, with a valid certificate)."""
        return self.kubelet_running and self.kubelet_cert_valid()

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


def kubelet_x509_error(host: HostNode, now: float) -> str:
    """The kubelet's log line when its clock puts the API server's certificate out of validity."""
    from sre_env.kube.timefmt import iso

    wall = iso(now + host.clock_offset_s)
    if host.clock_offset_s < 0:
        bound = f"is before {iso(-KUBELET_CERT_AGE_S)}"
    else:
        bound = f"is after {iso(KUBELET_CERT_LIFETIME_S - KUBELET_CERT_AGE_S)}"
    return (
        f'E{wall[5:7]}{wall[8:10]} {wall[11:19]}.000000     870 kubelet_node_status.go:96] "Unable to register node with API server" '
        f'err="Post \\"https://10.0.0.10:6443/api/v1/nodes\\": tls: failed to verify certificate: x509: certificate has expired or is not yet valid: current time {wall} {bound}" node="{host.name}"'
    )


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
