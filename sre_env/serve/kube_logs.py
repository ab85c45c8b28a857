"""``kubectl logs -f``: the ``pods/log`` subresource with ``follow=true``, streamed.

The first chunk is what a plain ``logs`` call returns (``tailLines``,
``sinceSeconds``, ``timestamps`` honoured). Then, while the simulated clock
advances, the stream polls the container's log for lines newer than the last
one sent (lines carry nanosecond timestamps, so nothing is repeated or skipped)
and ends, as on a real cluster, when the container stops running or the pod is
gone — or when the client hangs up or the server stops. Lines are compared in
simulated time and shown in the served clock's, with one offset for the whole
stream (``timeshift``), so the stamps a client sees stay in order at any speed.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

from sre_env.errors import ApiError

from .kube_api import log_since, status_response
from .timeshift import shift_log_line, shift_log_text

if TYPE_CHECKING:
    from .server import IncidentServer

__all__ = ["is_follow", "new_lines", "serve_follow"]

#: how often a followed log looks for new lines (wall seconds)
POLL_S = 0.5


def is_follow(method: str, path: str, query: str) -> bool:
    parts = [p for p in path.split("/") if p]
    if method != "GET" or len(parts) != 7 or parts[:3] != ["api", "v1", "namespaces"] or parts[4] != "pods" or parts[6] != "log":
        return False
    return (parse_qs(query).get("follow") or [""])[0].lower() in ("true", "1")


def new_lines(text: str, last: str, seen_at_last: set[str]) -> list[str]:
    """Timestamped lines of ``text`` after ``last`` (a line's timestamp); lines at ``last`` itself unless already sent."""
    out = []
    for line in text.splitlines():
        stamp = line.partition(" ")[0]
        if stamp > last or (stamp == last and line not in seen_at_last):
            out.append(line)
    return out


def _running(pod: dict[str, Any], container: str | None) -> bool:
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    for s in statuses:
        if container is None or s.get("name") == container:
            return "running" in (s.get("state") or {})
    return False


async def serve_follow(server: IncidentServer, request: Any) -> Any:
    from aiohttp import web

    parts = [p for p in request.path.split("/") if p]
    ns, name = parts[3], parts[5]
    q = parse_qs(request.query_string)
    arg = lambda key: (q.get(key) or [""])[0]
    container = arg("container") or None
    want_stamps = arg("timestamps").lower() == "true"
    api = server.backend.api
    try:
        tail = int(arg("tailLines")) if arg("tailLines") else None
        with server.lock:
            # one offset for the whole stream: re-anchored per request at speed-ups, it would
            # move between polls and the shown stamps would not be in order (sre_env.serve.timeshift)
            offset = server.offset()
            since = log_since(arg("sinceSeconds"), arg("sinceTime"), server.backend.now, offset)
            if container is None:
                pod = api.get("Pod", name, ns)
                names = [c["name"] for c in pod["spec"].get("containers") or ()]
                container = names[0] if len(names) == 1 else None  # several: logs() asks for one, as the API does
            text = api.logs(name, ns, container, tail=tail, since_seconds=since, timestamps=True)
            polled_at = server.backend.now
    except ApiError as err:
        r = status_response(err)
        return web.Response(status=r.status, text=r.text(), content_type=r.content_type)
    except ValueError as exc:
        r = status_response(ApiError(400, "BadRequest", str(exc)))
        return web.Response(status=r.status, text=r.text(), content_type=r.content_type)
    resp = web.StreamResponse(status=200, headers={"Content-Type": "text/plain"})
    resp.enable_chunked_encoding()
    await resp.prepare(request)
    last, seen = "", set()

    async def send(lines: list[str]) -> None:
        nonlocal last, seen
        if not lines:
            return
        top = lines[-1].partition(" ")[0]
        seen = ({ln for ln in lines if ln.partition(" ")[0] == top} | (seen if top == last else set()))
        last = top
        # lines are compared in simulated time (above) and shown in the served clock's
        shown = (shift_log_text(ln, offset, prefixed=True) if want_stamps else shift_log_line(ln.partition(" ")[2], offset) for ln in lines)
        await resp.write("".join(ln + "\n" for ln in shown).encode())

    try:
        await send(text.splitlines())
        while not server.stopping:
            await asyncio.sleep(POLL_S)
            with server.lock:
                try:
                    pod = api.get("Pod", name, ns)
                    now = server.backend.now
                    text = api.logs(name, ns, container, since_seconds=max(now - polled_at, 0.0) + 1.0, timestamps=True) if now > polled_at else ""
                except ApiError:
                    break  # the pod is gone or its container cannot be read: the stream ends
                polled_at = max(polled_at, now)
                running = _running(pod, container)
            await send(new_lines(text, last, seen))
            if not running:
                break  # the container stopped: kubectl logs -f returns
        await resp.write_eof()
    except ConnectionError:
        pass  # the client hung up
    return resp
