"""Faults are causes, applied only through the Backend's surfaces.

A fault never writes a symptom (a crash, a log line, an alert); it changes the
thing a real incident changes — an object, a node's disk, a config value — and
the model produces whatever follows. ``recover`` undoes the cause, for users
who reset a real cluster between episodes.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sre_env.backend import Backend

__all__ = ["Fault"]


class Fault(ABC):
    @abstractmethod
    def inject(self, backend: "Backend") -> None: ...

    @abstractmethod
    def recover(self, backend: "Backend") -> None: ...
