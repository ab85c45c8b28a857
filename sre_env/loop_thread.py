"""An asyncio event loop in a daemon thread, for servers that run beside a synchronous caller.

``sre-env serve`` and the KubernetesBackend's namespace guard both serve HTTP from
a background thread while the caller (a test, the env, the CLI) keeps running:
the loop starts with a coroutine that binds the sockets and stops with one that
releases them.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable
from typing import Any

__all__ = ["LoopThread", "cleanup_runner"]


async def cleanup_runner(runner: Any) -> None:
    """Stop an aiohttp ``AppRunner`` now: open connections are aborted first, since a graceful TLS close waits
    for the peer's reply (an idle keep-alive client, perhaps in this very process) after the loop has stopped."""
    if runner.server is not None:
        for handler in list(runner.server.connections):
            if handler.transport is not None:
                handler.transport.abort()
    await runner.cleanup()


class LoopThread:
    def __init__(self, name: str) -> None:
        self.name = name
        self.loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self.loop is not None

    def start(self, setup: Callable[[], Awaitable[None]], what: str, timeout_s: float = 15.0) -> None:
        """Run ``setup()`` on a new loop in a daemon thread and return once it has finished.

        An exception in ``setup`` is raised here, in the caller's thread.
        """
        ready = threading.Event()
        failure: list[BaseException] = []

        def run() -> None:
            loop = asyncio.new_event_loop()
            self.loop = loop
            asyncio.set_event_loop(loop)
            try:
                try:
                    loop.run_until_complete(setup())
                except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
                    failure.append(exc)
                    return
                finally:
                    ready.set()
                loop.run_forever()
            finally:
                loop.run_until_complete(loop.shutdown_asyncgens())
                loop.close()

        self._thread = threading.Thread(target=run, name=self.name, daemon=True)
        self._thread.start()
        if not ready.wait(timeout_s):
            raise RuntimeError(f"{what} did not start within {timeout_s:.0f} s")
        if failure:
            self.loop = None
            raise failure[0]

    def stop(self, teardown: Callable[[], Awaitable[None]]) -> None:
        """Run ``teardown()`` on the loop, stop it and wait for the thread (a no-op when not running)."""
        loop = self.loop
        if loop is None:
            return

        async def shutdown() -> None:
            try:
                await teardown()
            finally:
                loop.stop()

        asyncio.run_coroutine_threadsafe(shutdown(), loop)
        if self._thread is not None:
            self._thread.join(10)
        self.loop = None
