"""Node-level faults: OS configuration and hardware, applied the way they happen on real hosts.

OS faults run ordinary commands on the node (through ``backend.nodes.exec``),
as an operator or configuration management would: ``systemctl disable --now``,
a file in ``/etc/sysctl.d`` plus ``sysctl --system``. On a real cluster the
same commands run in a privileged pod. Hardware faults set the state a broken
part has (``backend.nodes.inject_hardware_fault``); a real-cluster backend
emulates them where the kernel allows (netem corruption, EDAC error injection).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .base import Fault

if TYPE_CHECKING:
    from sre_env.backend import Backend

__all__ = ["KubeletDisabled", "ClockSkew", "ConntrackLimit", "NicCrcErrors", "NicLinkFlap", "MemoryEccErrors"]


def _run(backend: "Backend", node: str, command: str) -> None:
    res = backend.nodes.exec(node, ["bash", "-c", command])
    if res.exit_code != 0:
        raise RuntimeError(f"fault command failed on {node}: {command!r}: {res.output.strip()}")


@dataclass(frozen=True)
class KubeletDisabled(Fault):
    """Maintenance stopped the kubelet and disabled it, and nobody turned it back on."""

    node: str

    def inject(self, backend: "Backend") -> None:
        _run(backend, self.node, "systemctl disable --now kubelet")

    def recover(self, backend: "Backend") -> None:
        _run(backend, self.node, "systemctl enable --now kubelet")


@dataclass(frozen=True)
class ClockSkew(Fault):
    """NTP turned off and the clock (system and hardware) set wrong by ``offset_s``."""

    node: str
    offset_s: float

    def inject(self, backend: "Backend") -> None:
        _run(backend, self.node, "systemctl disable --now chrony")
        backend.nodes.inject_hardware_fault(self.node, "clock", offset_s=self.offset_s)

    def recover(self, backend: "Backend") -> None:
        backend.nodes.clear_hardware_fault(self.node, "clock")
        _run(backend, self.node, "systemctl enable --now chrony")


@dataclass(frozen=True)
class ConntrackLimit(Fault):
    """A tuning file pushed to the node caps the connection-tracking table."""

    node: str
    limit: int
    path: str = "/etc/sysctl.d/90-net-tuning.conf"

    def inject(self, backend: "Backend") -> None:
        _run(
            backend,
            self.node,
            f"echo '# network tuning (rolled out by config management)' > {self.path} && echo 'net.core.somaxconn = 4096' >> {self.path}"
            f" && echo 'net.netfilter.nf_conntrack_max = {self.limit}' >> {self.path} && sysctl --system",
        )

    def recover(self, backend: "Backend") -> None:
        _run(backend, self.node, f"rm -f {self.path} && sysctl -w net.netfilter.nf_conntrack_max=262144")


@dataclass(frozen=True)
class NicCrcErrors(Fault):
    """A failing NIC or cable: a share of received frames fail their checksum."""

    node: str
    fraction: float

    def inject(self, backend: "Backend") -> None:
        backend.nodes.inject_hardware_fault(self.node, "nic_crc", fraction=self.fraction)

    def recover(self, backend: "Backend") -> None:
        backend.nodes.clear_hardware_fault(self.node, "nic_crc")


@dataclass(frozen=True)
class NicLinkFlap(Fault):
    """The link goes down for a few seconds every minute or so (a bad transceiver or port)."""

    node: str
    down_s_per_min: float

    def inject(self, backend: "Backend") -> None:
        backend.nodes.inject_hardware_fault(self.node, "nic_flap", down_s_per_min=self.down_s_per_min)

    def recover(self, backend: "Backend") -> None:
        backend.nodes.clear_hardware_fault(self.node, "nic_flap")


@dataclass(frozen=True)
class MemoryEccErrors(Fault):
    """A DIMM throwing corrected errors and, now and then, uncorrectable ones."""

    node: str
    per_hour: float
    dimm: str

    def inject(self, backend: "Backend") -> None:
        backend.nodes.inject_hardware_fault(self.node, "ecc", per_hour=self.per_hour, dimm=self.dimm)

    def recover(self, backend: "Backend") -> None:
        backend.nodes.clear_hardware_fault(self.node, "ecc")
