"""The ``pods/exec`` subresource over WebSocket, as ``kubectl exec`` (1.30+) speaks it.

kubectl 1.32 opens exec as a WebSocket upgrade with the subprotocol
``v5.channel.k8s.io`` (and falls back to SPDY only when the upgrade itself
fails). Every binary message starts with a channel byte: 0 stdin, 1 stdout,
2 stderr, 3 the error channel (a ``metav1.Status`` JSON written once, when the
command ends), 4 terminal resize. ``v5`` adds the CLOSE signal ``[255, id]``,
with which the client half-closes stdin after the piped input ends; ``v4``
has no such signal, so stdin there ends when the client goes quiet.

The command runs in the simulator (``SimApi.exec``) once stdin is complete:
the built-in container commands are not interactive processes, so an
interactive shell (``-it`` without piped input) sees nothing until EOF. The
simulator reports one combined output stream; it goes out on stdout.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qs

from sre_env.errors import ApiError

from .kube_api import status_response

if TYPE_CHECKING:
    from .server import IncidentServer

__all__ = ["PROTOCOLS", "exec_status", "is_exec", "serve_exec"]

#: subprotocols spoken, in preference order (binary framing only)
PROTOCOLS = ("v5.channel.k8s.io", "v4.channel.k8s.io")
STDIN, STDOUT, STDERR, ERROR, RESIZE, CLOSE = 0, 1, 2, 3, 4, 255
#: largest stdin accepted (a short piped script or file, not a data transfer)
MAX_STDIN = 1 << 20
#: v4 cannot half-close stdin: its input is taken as complete after this much silence
V4_STDIN_IDLE_S = 1.0
#: one output message at most this big, like the kubelet's copy buffer
CHUNK = 32 * 1024


def is_exec(method: str, path: str) -> bool:
    """``/api/v1/namespaces/NS/pods/NAME/exec`` with GET (WebSocket clients) or POST (kubectl)."""
    parts = [p for p in path.split("/") if p]
    return method in ("GET", "POST") and len(parts) == 7 and parts[:3] == ["api", "v1", "namespaces"] and parts[4] == "pods" and parts[6] == "exec"


def exec_status(exit_code: int, argv: list[str]) -> dict[str, Any]:
    """The Status the kubelet writes on the error channel when the command ends."""
    if exit_code == 0:
        return {"metadata": {}, "status": "Success"}
    return {
        "metadata": {},
        "status": "Failure",
        "message": f"command terminated with non-zero exit code: error executing command [{' '.join(argv)}], exit code {exit_code}",
        "reason": "NonZeroExitCode",
        "details": {"causes": [{"reason": "ExitCode", "message": str(exit_code)}]},
    }


def _status_response(web: Any, err: ApiError) -> Any:
    resp = status_response(err)
    return web.Response(status=resp.status, text=resp.text(), content_type=resp.content_type)


def _truthy(q: dict[str, list[str]], key: str) -> bool:
    return (q.get(key) or ["false"])[0].lower() in ("true", "1")


def _validate(server: IncidentServer, ns: str, name: str, container: str | None, argv: list[str]) -> str:
    """The container to run in, or the ApiError the API server answers before upgrading."""
    if not argv:
        raise ApiError(400, "BadRequest", "you must specify at least one command for the container")
    pod = server.backend.api.get("Pod", name, ns)
    names = [c["name"] for c in pod["spec"].get("containers") or ()]
    if container is None:
        if len(names) != 1:
            raise ApiError(400, "BadRequest", f"a container name must be specified for pod {name}, choose one of: [{' '.join(names)}]")
        container = names[0]
    inits = [c["name"] for c in pod["spec"].get("initContainers") or ()]
    if container not in names and container not in inits:
        raise ApiError(400, "BadRequest", f"container {container} is not valid for pod {name}")
    phase = (pod.get("status") or {}).get("phase")
    if phase in ("Succeeded", "Failed"):
        raise ApiError(400, "BadRequest", f"cannot exec into a container in a completed pod; current phase is {phase}")
    return container


async def _read_stdin(ws: Any, web: Any, v5: bool) -> bytes:
    """Collect stdin until the client half-closes it (v5), goes quiet (v4), or disconnects."""
    buf = bytearray()
    while True:
        try:
            msg = await ws.receive(timeout=None if v5 else V4_STDIN_IDLE_S)
        except TimeoutError:
            return bytes(buf)
        if msg.type == web.WSMsgType.TEXT:
            data = msg.data.encode()  # the Python client frames str stdin as text messages
        elif msg.type == web.WSMsgType.BINARY:
            data = msg.data
        else:
            return bytes(buf)  # close or error: no more input
        if not data:
            continue
        if data[0] == STDIN:
            buf += data[1:]
            if len(buf) > MAX_STDIN:
                return bytes(buf[:MAX_STDIN])
        elif data[0] == CLOSE and data[1:2] == bytes([STDIN]):
            return bytes(buf)
        # RESIZE and anything else: a terminal size means nothing to the simulated commands


def _refusal(web: Any, err: ApiError) -> Any:
    """How the upgrade is refused: a Status from the API server, or the kubelet's plain-text answer."""
    prefix = "unable to upgrade connection: "
    if err.message.startswith(prefix):
        # the kubelet answers http.Error text; kubectl prints "error: unable to upgrade connection: ..."
        return web.Response(status=err.code, text=err.message[len(prefix) :] + "\n", content_type="text/plain")
    return _status_response(web, err)


def _run(server: IncidentServer, ns: str, name: str, container: str, argv: list[str], stdin: str | None) -> Any:
    with server.lock:
        return server.backend.api.exec(name, ns, container, [str(a) for a in argv], stdin=stdin)


async def serve_exec(server: IncidentServer, request: Any) -> Any:
    """Validate, upgrade, gather stdin, run the command in the simulator, stream output and the Status."""
    from aiohttp import web

    parts = [p for p in request.path.split("/") if p]
    ns, name = parts[3], parts[5]
    q = parse_qs(request.query_string)
    argv = q.get("command") or []
    container = (q.get("container") or [None])[0] or None
    want_stdin = _truthy(q, "stdin")
    res = None
    try:
        with server.lock:
            container = _validate(server, ns, name, container, argv)
        websocket = request.headers.get("Upgrade", "").lower() == "websocket"
        # a container that is not running refuses the upgrade: run now (no stdin), or probe with a no-op
        res = _run(server, ns, name, container, argv if websocket and not want_stdin else ["true"], None)
        if not websocket:
            # kubectl tries SPDY only after a failed WebSocket upgrade; this server speaks WebSocket only
            raise ApiError(400, "BadRequest", "Upgrade request required: this server runs exec over WebSocket (v5.channel.k8s.io, v4.channel.k8s.io) only")
    except ApiError as err:
        return _refusal(web, err)
    except (KeyError, TypeError, ValueError) as exc:  # a malformed request or object: never a crashed handler
        return _status_response(web, ApiError(500, "InternalError", f"Internal error occurred: {exc}"))
    ws = web.WebSocketResponse(protocols=PROTOCOLS, max_msg_size=MAX_STDIN + 1024)
    await ws.prepare(request)
    out, status = b"", None
    if want_stdin:
        stdin = await _read_stdin(ws, web, ws.ws_protocol == PROTOCOLS[0])
        try:
            res = _run(server, ns, name, container, argv, stdin.decode("utf-8", "replace"))
        except ApiError as err:  # the container stopped while stdin was read
            res, status = None, {"metadata": {}, "status": "Failure", "message": err.message, "reason": err.reason, "code": err.code}
    if res is not None:
        out, status = res.output.encode(), exec_status(res.exit_code, argv)
    try:
        for i in range(0, len(out), CHUNK):
            await ws.send_bytes(bytes([STDOUT]) + out[i : i + CHUNK])
        await ws.send_bytes(bytes([ERROR]) + json.dumps(status, separators=(",", ":")).encode())
    except ConnectionError:
        pass  # the client went away; nothing to report to
    await ws.close()
    return ws
