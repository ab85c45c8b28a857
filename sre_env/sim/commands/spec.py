"""Binaries as data: each one declared once, with where it exists, what it does and how it runs.

As :mod:`sre_env.shell.spec` declares the kubectl verbs, this declares what
``kubectl exec`` and ``ssh`` can run. A :class:`Binary` names the program,
says where it exists and holds one function with one signature,
``run(view, argv, stdin) -> ExecResult`` (``argv[0]`` is the name it was
called by, without its directory). The dispatchers (:mod:`.host`,
:mod:`.container`) look names up in their table and nothing else; what a
missing binary prints is the dispatcher's (bash's, or the container shell's).

Where a binary exists:

- ``host``: on every node (Debian 12), for ``ssh NODE CMD`` and ``kubectl debug node``;
- ``image``: in a container whose image ships it (``ImageInfo.bins``, :mod:`sre_env.sim.runtime.image_contents`);
- ``shell``: a builtin of the container's shell, there whatever the image holds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Generic, Iterable, Literal, TypeVar

from sre_env.backend import ExecResult

__all__ = ["Binary", "Where", "binary_table"]

Where = Literal["host", "image", "shell"]
V = TypeVar("V")


@dataclass(frozen=True)
class Binary(Generic[V]):
    name: str
    where: Where
    #: one line: what the program is for (the command reference, ``--help`` of the table)
    summary: str
    run: Callable[[V, list[str], str | None], ExecResult]
    #: other names of the same program (``egrep``, ``iptables-nft``)
    aliases: tuple[str, ...] = ()
    #: the directory ``which`` finds it in
    directory: str = "/usr/bin"


def binary_table(binaries: Iterable[Binary[V]]) -> dict[str, Binary[V]]:
    """Name (and alias) -> binary; a name declared twice is a mistake in the table."""
    out: dict[str, Binary[V]] = {}
    for b in binaries:
        for name in (b.name, *b.aliases):
            if name in out:
                raise ValueError(f"binary {name!r} is declared twice")
            out[name] = b
    return out
