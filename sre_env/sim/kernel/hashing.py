"""Deterministic hashing for the simulator's pseudo-random choices.

PIDs, serial-looking hex, jitter and which request fails are picked from a
hash of values that do not change between runs, so the same world always
renders the same text. Python's ``hash`` is salted per process; this is not.
"""

from __future__ import annotations

import zlib
from typing import Any

__all__ = ["stable_hash"]


def stable_hash(*parts: Any) -> int:
    """A 32-bit hash of ``parts`` that is identical across processes (unlike ``hash``)."""
    return zlib.crc32("\x1f".join(map(str, parts)).encode())
