"""The machines of the simulated cluster: hosts, their disks, and the cluster's layout.

A host's disks carry a latent-sector-error model; its kernel log, journal, files,
sysctls and units are the state the node tools read.

State lives here and shows only where it would on a real machine: ``dmesg``,
``smartctl``, ``df``, ``iostat``, ``journalctl``, node conditions and, through
the traffic model, errors in the logs of the processes whose data sits on the
disk. Kernel log lines are rendered lazily from per-tick error counts, so a
fault costs nothing until someone looks.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Disk", "HostNode", "NodeNet", "FileRun", "FillDir", "ClusterLayout", "DEFAULT_LAYOUT", "make_host_nodes", "default_sysctls", "kubelet_x509_error"]

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


#: the file system's block size: a file takes whole blocks
BLOCK = 4096


@dataclass
class FileRun:
    """Files one program run left in a directory: ``count`` files named ``names`` (a sample)."""

    names: tuple[str, ...]
    count: int
    bytes_each: int

    @property
    def blocks_bytes(self) -> int:
        return self.count * max(BLOCK, -(-self.bytes_each // BLOCK) * BLOCK)


@dataclass
class FillDir:
    runs: list[FileRun] = field(default_factory=list)

    @property
    def files(self) -> int:
        return sum(r.count for r in self.runs)

    @property
    def bytes(self) -> int:
        return sum(r.blocks_bytes for r in self.runs)


@dataclass
class NodeNet:
    """Kernel state of a node's network (lost at reboot); its files live in ``node.files``."""

    #: the iptables filter rules in force (``sre_env.sim.network.nodenet.FwRule``)
    rules: list[Any] = field(default_factory=list)
    rev: int = 0
    last_reserved: int = 1


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
    #: the kernel's network state: host firewall rules and pod IPAM (sre_env.sim.network.nodenet)
    net: NodeNet = field(default_factory=NodeNet)
    #: directories cron programs wrote on this node (sre_env.sim.node.diskfill)
    fill_dirs: dict[str, FillDir] = field(default_factory=dict)
    #: node conditions the kubelet's eviction manager sets, and when each signal last crossed
    memory_pressure: bool = False
    disk_pressure: bool = False
    pressure_seen: dict[str, float] = field(default_factory=dict)
    #: a signal the eviction manager watches came near its threshold (set by the node, read by the kubelet)
    eviction_check: bool = False

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


GiB = 1024**3


@dataclass(frozen=True)
class ClusterLayout:
    workers: int = 3
    worker_cpu: int = 8
    worker_memory_gib: int = 16
    pod_cidr_prefix: str = "10.244"


DEFAULT_LAYOUT = ClusterLayout()


def make_host_nodes(layout: ClusterLayout) -> list[HostNode]:
    names = ["control-plane"] + [f"worker-{i}" for i in range(1, layout.workers + 1)]
    nodes = []
    for idx, name in enumerate(names):
        disks = [
            Disk(
                device="sda",
                model="Samsung SSD 870 EVO 250GB",
                serial=f"S6PENL0T{300000 + idx * 7919:06d}",
                size_bytes=250 * 1000**3,
                mountpoint="/",
                used_bytes=int((31.5 + idx * 2.25) * GiB),
            )
        ]
        if idx > 0:
            disks.append(
                Disk(
                    device="sdb",
                    model="WDC WD20EFZX-68AWUN0",
                    serial=f"WD-WX{21 + idx}2D{4100 + idx * 37}A{idx}K",
                    size_bytes=2000 * 1000**3,
                    mountpoint="/mnt/data",
                    used_bytes=int((118.0 + idx * 11.5) * GiB),
                    rotational=True,
                    power_on_hours=14_873 + idx * 1_203,
                )
            )
        cpu = 4 if idx == 0 else layout.worker_cpu
        mem = (8 if idx == 0 else layout.worker_memory_gib) * GiB
        nodes.append(
            HostNode(
                name=name,
                index=idx,
                cpu_cores=cpu,
                memory_bytes=mem,
                internal_ip=f"172.18.0.{idx + 2}",
                disks=disks,
                sysctls=default_sysctls(),
            )
        )
    return nodes
