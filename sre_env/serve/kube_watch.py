"""Watches: ``GET ...?watch=true`` as a chunked stream of ``WatchEvent`` lines.

Used by ``kubectl get -w`` (after its list, with that list's resourceVersion and
``as=Table``) and by informers / the ``kubernetes`` client's ``watch.Watch``.

The simulator's store bumps a per-kind write counter (``kind_revision``) and each
object's ``metadata.resourceVersion`` on every write, so a watch needs no hook in
the store: while a watch is open it polls, and when its kind's counter moved it
diffs the matching objects by (uid, resourceVersion) against what it has sent.
Nothing runs when no watch is open. Several writes to one object between two
polls arrive as one MODIFIED (a real API server may also coalesce when it
lags); an object that stops matching the selector is reported DELETED, as the
API server does.

resourceVersion semantics: absent, ``""`` or ``"0"`` start with a synthetic
ADDED for every current object; a number N starts with the objects written
after N (MODIFIED; the store keeps no history of deletions before the watch
began). ``timeoutSeconds`` ends the stream (wall clock), as does the server's
shutdown.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

from sre_env.errors import ApiError

from .kube_api import parse_path, status_response, table_of, wants_table
from .timeshift import shift_json_text

if TYPE_CHECKING:
    from .server import IncidentServer

__all__ = ["WatchState", "is_watch", "serve_watch"]

Obj = dict[str, Any]

#: how often an open watch looks for writes (wall seconds)
POLL_S = 0.2
#: the API server's default when the client sets no timeoutSeconds (--min-request-timeout)
DEFAULT_TIMEOUT_S = 1800.0


def is_watch(method: str, query: str) -> bool:
    q = parse_qs(query)
    return method == "GET" and (q.get("watch") or [""])[0].lower() in ("true", "1")


class WatchState:
    """What one watch has reported: key -> (uid, resourceVersion, object as last seen)."""

    def __init__(self, kind: str, list_fn: Any, store: Any) -> None:
        self.kind = kind
        self._list = list_fn
        self._store = store
        self._seen: dict[tuple[str, str], tuple[str, str, Obj]] = {}
        self._kind_rev: int | None = None

    def _current(self) -> dict[tuple[str, str], Obj]:
        return {(o["metadata"].get("namespace") or "", o["metadata"]["name"]): o for o in self._list()}

    def start(self, resource_version: str) -> list[tuple[str, Obj]]:
        """The opening events, and the baseline later polls diff against."""
        self._kind_rev = self._store.kind_revision.get(self.kind, 0) if self._store is not None else None
        cur = self._current()
        since = int(resource_version) if resource_version.isdigit() and resource_version != "0" else None
        events: list[tuple[str, Obj]] = []
        for key, obj in cur.items():
            meta = obj["metadata"]
            rv = str(meta.get("resourceVersion", ""))
            self._seen[key] = (str(meta.get("uid", "")), rv, obj)
            if since is None:
                events.append(("ADDED", obj))
            elif rv.isdigit() and int(rv) > since:
                events.append(("MODIFIED", obj))
        return events

    def poll(self) -> list[tuple[str, Obj]]:
        """Events for what changed since the last call (nothing to do when the kind was not written)."""
        if self._store is not None:
            rev = self._store.kind_revision.get(self.kind, 0)
            if rev == self._kind_rev:
                return []
            self._kind_rev = rev
        cur = self._current()
        events: list[tuple[str, Obj]] = []
        for key in sorted(set(self._seen) - set(cur)):
            events.append(("DELETED", self._seen.pop(key)[2]))
        for key, obj in cur.items():
            meta = obj["metadata"]
            uid, rv = str(meta.get("uid", "")), str(meta.get("resourceVersion", ""))
            old = self._seen.get(key)
            if old is None:
                events.append(("ADDED", obj))
            elif old[0] != uid:  # deleted and created again under the same name (a StatefulSet pod)
                events.append(("DELETED", old[2]))
                events.append(("ADDED", obj))
            elif old[1] != rv:
                events.append(("MODIFIED", obj))
            else:
                continue
            self._seen[key] = (uid, rv, obj)
        return events


def _store_of(server: IncidentServer) -> Any:
    world = getattr(server.backend, "world", None)
    return getattr(world, "store", None)


async def serve_watch(server: IncidentServer, request: Any) -> Any:
    """Stream events until timeoutSeconds, the client leaving, or the server stopping."""
    from aiohttp import web

    def fail(err: ApiError) -> Any:
        resp = status_response(err)
        return web.Response(status=resp.status, text=resp.text(), content_type=resp.content_type)

    parsed = parse_path(request.path.rstrip("/"))
    if parsed is None or parsed[3] is not None:
        return fail(ApiError(404, "NotFound", "the server could not find the requested resource"))
    info, ns, name, _ = parsed
    q = parse_qs(request.query_string)
    arg = lambda key: (q.get(key) or [""])[0]
    labels = arg("labelSelector") or None
    fields = arg("fieldSelector") or None
    if name is not None:  # GET .../pods/NAME?watch=true: a watch of that one object
        fields = f"metadata.name={name}" + (f",{fields}" if fields else "")
    namespace = ns if info.namespaced else None
    as_table = wants_table(request.headers.get("Accept", ""))
    try:
        timeout = float(arg("timeoutSeconds")) if arg("timeoutSeconds") else DEFAULT_TIMEOUT_S
    except ValueError:
        return fail(ApiError(400, "BadRequest", f'invalid value for timeoutSeconds: "{arg("timeoutSeconds")}"'))
    api = server.backend.api
    state = WatchState(info.kind, lambda: api.list(info.kind, namespace, labels, fields), _store_of(server))
    try:
        with server.lock:
            opening = _encode(state.start(arg("resourceVersion")), info, as_table, server.backend.now, server.offset())
    except ApiError as err:
        return fail(err)
    except ValueError as exc:
        return fail(ApiError(400, "BadRequest", str(exc)))
    resp = web.StreamResponse(status=200, headers={"Content-Type": "application/json", "Cache-Control": "no-cache, private"})
    resp.enable_chunked_encoding()
    await resp.prepare(request)
    deadline = time.monotonic() + max(timeout, 0.0)
    try:
        if opening:
            await resp.write(opening)
        while not server.stopping and time.monotonic() < deadline:
            await asyncio.sleep(min(POLL_S, max(deadline - time.monotonic(), 0.0)))
            with server.lock:
                chunk = _encode(state.poll(), info, as_table, server.backend.now, server.offset())
            if chunk:
                await resp.write(chunk)
        await resp.write_eof()
    except ConnectionError:
        pass  # the client hung up: nothing more to send
    return resp


def _encode(events: list[tuple[str, Obj]], info: Any, as_table: bool, now: float, offset: int = 0) -> bytes:
    """WatchEvent lines; ``offset``: the served clock's (``sre_env.serve.timeshift``)."""
    if not events:
        return b""
    lines = []
    for kind, obj in events:
        body = table_of(info, [obj], now, {"resourceVersion": str(obj["metadata"].get("resourceVersion", ""))}) if as_table else obj
        lines.append(json.dumps({"type": kind, "object": body}, separators=(",", ":")))
    return shift_json_text("\n".join(lines) + "\n", offset).encode()
