"""Init containers: run in order, each to completion, before the pod's app containers start.

While one runs the pod is ``Pending`` with ``Init:0/1`` in ``kubectl get pods``,
condition ``Initialized=False`` (``ContainersNotInitialized``) and the app
containers wait in ``PodInitializing``. The script an init container runs is
interpreted as far as its effect goes: the common wait loops
(``until nc -z HOST PORT; do echo ...; sleep N; done``, ``nslookup HOST``,
``wget URL``) poll the model's DNS and Service routing, print what busybox
prints while the thing they wait for is absent, and exit 0 once it answers;
any other script runs briefly and exits 0.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sre_env.sim.kernel.pods import StartOutcome
from sre_env.sim.logs.streams import container_log
from sre_env.sim.network.routing import resolve_route

if TYPE_CHECKING:
    from sre_env.sim.kernel.pods import ContainerRuntime, PodRuntime
    from sre_env.sim.kernel.world import World

__all__ = ["WaitLoop", "parse_wait_loop", "init_outcome", "sync_init_containers", "POLL_S"]

Obj = dict[str, Any]
#: how often the kubelet model looks at a waiting loop (its iterations in between are logged then)
POLL_S = 10.0
_UNTIL = re.compile(r"until\s+(?P<cond>.+?)\s*;\s*do\s+(?P<body>.*?)\s*;?\s*done", re.S)


@dataclass(frozen=True)
class WaitLoop:
    tool: str  # nc | nslookup | wget
    host: str
    port: int | None
    message: str
    interval_s: float


def _script(spec: Obj) -> str:
    argv = [str(a) for a in (spec.get("command") or [])] + [str(a) for a in (spec.get("args") or [])]
    for i, a in enumerate(argv):
        if a == "-c" and i + 1 < len(argv):
            return argv[i + 1]
    return " ".join(argv)


def parse_wait_loop(spec: Obj) -> WaitLoop | None:
    """The wait loop an init container's shell script runs, if it is one we can follow."""
    m = _UNTIL.search(_script(spec))
    if m is None:
        return None
    try:
        cond = shlex.split(m.group("cond"))
    except ValueError:
        return None
    args = [a for a in cond if not a.startswith("-")]
    tool = cond[0] if cond else ""
    host, port = "", None
    if tool == "nc":
        # nc -z [-w N] HOST PORT
        skip = {i + 1 for i, a in enumerate(cond) if a in ("-w", "-W")}
        pos = [a for i, a in enumerate(cond[1:], 1) if not a.startswith("-") and i not in skip]
        if len(pos) >= 2 and pos[1].isdigit():
            host, port = pos[0], int(pos[1])
    elif tool in ("nslookup", "getent"):
        host = args[-1] if len(args) > 1 else ""
    elif tool == "wget":
        url = next((a for a in cond if "://" in a), "")
        rest = url.split("://", 1)[1] if url else ""
        hostport = rest.split("/", 1)[0]
        host, _, p = hostport.partition(":")
        port = int(p) if p.isdigit() else 80
    if not host:
        return None
    body = m.group("body")
    msg = ""
    em = re.search(r"echo\s+(?:\"([^\"]*)\"|'([^']*)'|([^;]+))", body)
    if em:
        msg = (em.group(1) or em.group(2) or em.group(3) or "").strip()
    sm = re.search(r"sleep\s+(\d+(?:\.\d+)?)", body)
    interval = float(sm.group(1)) if sm else 1.0
    return WaitLoop("nslookup" if tool == "getent" else tool, host, port, msg, max(interval, 0.5))


def init_outcome(spec: Obj) -> StartOutcome:
    """A waiting loop runs until its condition holds (decided by polling); other scripts finish at once."""
    if parse_wait_loop(spec) is not None:
        return StartOutcome(exit_after=None, exit_code=0, reason="Completed", serve_after=None, memory_mib=1.0)
    return StartOutcome(exit_after=1.0, exit_code=0, reason="Completed", serve_after=None, memory_mib=1.0)


def _satisfied(world: "World", namespace: str, loop: WaitLoop) -> tuple[bool, str]:
    """Whether the loop's condition holds now, and what one failed attempt prints."""
    route = resolve_route(world, namespace, f"{loop.host}:{loop.port or 53}")
    unresolved = route.error is not None and "no such host" in route.error
    if loop.tool == "nslookup":
        if unresolved:
            return False, f"** server can't find {loop.host}: NXDOMAIN"
        return True, ""
    if unresolved:
        return False, f"nc: bad address '{loop.host}'" if loop.tool == "nc" else f"wget: bad address '{loop.host}'"
    if route.ok > 0:
        return True, ""
    return False, "" if loop.tool == "nc" else f"wget: can't connect to remote host ({route.ip or loop.host}): Connection refused"


def _poll(world: "World", pod: Obj, ctr: "ContainerRuntime", spec: Obj, now: float) -> float:
    """Advance a running wait loop to ``now``: log its iterations, finish it if the condition holds."""
    loop = parse_wait_loop(spec)
    if loop is None or ctr.exit_at is not None or ctr.started_at is None:
        return float("inf")
    last = ctr.last_event_at.get("initpoll", ctr.started_at - loop.interval_s)
    ok, text = _satisfied(world, pod["metadata"]["namespace"], loop)
    if ok:
        ctr.exit_at = now
        ctr.outcome = StartOutcome(exit_after=0.0, exit_code=0, reason="Completed", serve_after=None)
        return now
    # the iterations since the last look, at most a screenful per look
    n = int((now - last) // loop.interval_s)
    first = max(n - 6, 0)
    for i in range(first, n):
        t = last + (i + 1) * loop.interval_s
        if text:
            container_log(world, pod, ctr, "raw", t, {"line": text})
        if loop.message:
            container_log(world, pod, ctr, "raw", t + 0.01, {"line": loop.message})
    if n:
        ctr.last_event_at["initpoll"] = last + n * loop.interval_s
    return now + POLL_S


def sync_init_containers(world: "World", pod: Obj, rt: "PodRuntime", host: Any, mount_error: str | None) -> tuple[bool, float]:
    """Step the pod's init containers in order; (all completed, when to look again)."""
    from sre_env.sim.kernel.pods import ContainerRuntime
    from sre_env.sim.kubelet.sync import _step_container

    now = world.clock.now
    for spec in pod["spec"].get("initContainers") or ():
        name = spec["name"]
        ctr = rt.init.get(name)
        if ctr is None:
            ctr = rt.init[name] = ContainerRuntime(name=name, since=now, wake_at=now)
        if ctr.state == "exited" and (ctr.last_terminated or {}).get("exitCode") == 0:
            continue
        wake = _poll(world, pod, ctr, spec, now) if ctr.state == "running" else float("inf")
        wake = min(wake, _step_container(world, pod, rt, ctr, spec, host, mount_error, "OnFailure", init=True))
        if ctr.state == "running":
            wake = min(wake, _poll(world, pod, ctr, spec, now))
        if ctr.state == "exited" and (ctr.last_terminated or {}).get("exitCode") == 0:
            continue
        return False, wake
    return True, float("inf")
