"""A TCP relay that lets a bridged sandbox container reach an API server listening on the host's loopback.

The Docker sandbox has no host networking (with it, ``kubectl --server`` could
reach anything on the host's loopback, the guard's upstream included). A real
cluster's API server is reached through the bridge's NAT like any other
address; one on the host's loopback (kind publishes on ``127.0.0.1``) is not
reachable from a container at all. For those, this relay listens on the bridge's
gateway address and passes bytes through to the loopback port: TLS stays end to
end (the kubeconfig keeps the server's name in ``tls-server-name``), and only
that one port is exposed, not the host's loopback. A served simulator (plain
HTTP) gets the namespace guard there instead (``guard.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from sre_env.loop_thread import LoopThread

__all__ = ["TcpRelay", "is_loopback_url"]


def is_loopback_url(url: str) -> bool:
    """Whether ``url`` names a loopback host (``localhost``, ``127.0.0.0/8``, ``::1``)."""
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@dataclass
class TcpRelay:
    """Listens on ``host``:``port`` (0: any free port) and relays every connection to ``target_host``:``target_port``."""

    target_host: str
    target_port: int
    host: str = "127.0.0.1"
    port: int = 0
    _loop: LoopThread = field(default_factory=lambda: LoopThread("sre-env-relay"), init=False, repr=False)
    _server: Any = field(default=None, init=False, repr=False)

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while chunk := await reader.read(65536):
                writer.write(chunk)
                await writer.drain()
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            up_reader, up_writer = await asyncio.open_connection(self.target_host, self.target_port)
        except OSError:
            writer.close()
            return
        await asyncio.gather(self._pipe(reader, up_writer), self._pipe(up_reader, writer))

    async def _start(self) -> None:
        self._server = await asyncio.start_server(self._relay, self.host, self.port)
        self.port = int(self._server.sockets[0].getsockname()[1])

    def start(self) -> "TcpRelay":
        self._loop.start(self._start, "the API relay")
        return self

    def stop(self) -> None:
        async def teardown() -> None:
            if self._server is not None:
                self._server.close()
                with contextlib.suppress(asyncio.TimeoutError):  # open connections (a watch) do not hold the shutdown
                    await asyncio.wait_for(self._server.wait_closed(), 2.0)

        self._loop.stop(teardown)
