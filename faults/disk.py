"""Hardware: latent sector errors on a node's disk.

On a real node this is an eBPF syscall-error override (or a dm device with bad
blocks) that makes reads of certain sectors return EIO; in the simulator the
node model's disk gets the same property. Everything else — kernel I/O errors
in dmesg, pending sectors in SMART, WiredTiger read errors and mongod aborting,
the caller's failed requests — follows from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .base import Fault

if TYPE_CHECKING:
    from sre_env.backend import Backend

__all__ = ["LatentSectorErrors", "SilentCorruption"]


@dataclass(frozen=True)
class LatentSectorErrors(Fault):
    node: str
    device: str
    sectors: tuple[int, ...]
    #: share of reads that touch a bad sector
    fraction: float = 0.05
    #: directories whose files lie on the bad sectors (empty: anywhere on the disk)
    paths: tuple[str, ...] = ()

    def inject(self, backend: "Backend") -> None:
        backend.nodes.inject_read_errors(self.node, self.device, fraction=self.fraction, sectors=self.sectors, paths=self.paths)

    def recover(self, backend: "Backend") -> None:
        backend.nodes.clear_read_errors(self.node, self.device)


@dataclass(frozen=True)
class SilentCorruption(Fault):
    """A device (firmware bug, failing controller cache) returns wrong data without an error.

    On a real node: a dm-flakey table with ``corrupt_bio_byte``. Nothing reaches
    the kernel log or SMART; only the application's own checksums notice.
    """

    node: str
    device: str
    fraction: float
    paths: tuple[str, ...] = ()

    def inject(self, backend: "Backend") -> None:
        backend.nodes.inject_silent_corruption(self.node, self.device, fraction=self.fraction, paths=self.paths)

    def recover(self, backend: "Backend") -> None:
        backend.nodes.clear_silent_corruption(self.node, self.device)
