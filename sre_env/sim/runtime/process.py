"""What happens when a container's process starts: the app's process model.

The outcome is computed from the *cause* side only — the image, the command,
the environment the process really sees, its memory limit — never from a
fault's label. A missing required env var makes the Go binary exit 1 after
printing its fatal line; a binary absent from the image fails to exec; a memory
limit below the working set ends in OOMKilled.
"""

from __future__ import annotations

import re
from typing import Any, Mapping

from sre_env.apps.base import Component
from sre_env.kube.quantity import memory_bytes
from sre_env.sim.kernel.images import split_image
from sre_env.sim.kernel.pods import StartOutcome
from sre_env.sim.runtime.oslimits import exec_target

__all__ = ["StartOutcome", "start_outcome"]

_SCRIPT_EXIT = re.compile(r"(?:^|[;&|]\s*)exit\s+(\d{1,3})\s*$")


def start_outcome(
    component: Component | None,
    container: dict[str, Any],
    env: dict[str, str],
    *,
    debug_pod: bool = False,
    programs: Mapping[str, Component] | None = None,
) -> StartOutcome:
    """What the container's process does. ``programs``: the other binaries the image ships."""
    ports = [int(p["containerPort"]) for p in container.get("ports") or () if "containerPort" in p]
    if debug_pod:
        return StartOutcome(exit_after=1.0, exit_code=0, reason="Completed", serve_after=None)
    if component is None:
        # A program the app model does not know (system pods, tools an agent runs): it just
        # runs, unless it is a shell one-liner that ends by exiting (a batch job's script).
        script = " ".join(str(a) for a in list(container.get("command") or ()) + list(container.get("args") or ()))
        m = _SCRIPT_EXIT.search(script)
        if m:
            code = int(m.group(1))
            return StartOutcome(exit_after=2.0, exit_code=code, reason="Completed" if code == 0 else "Error", serve_after=None)
        return StartOutcome(serve_after=1.0, listen_port=ports[0] if ports else None)
    wrapped = exec_target(container)
    if wrapped is not None:
        # ``sh -c '...; exec PROG ARGS'``: the shell sets things up (ulimit, env) and becomes PROG
        container = {**container, "command": wrapped[:1], "args": wrapped[1:]}
    image_repo, _ = split_image(container.get("image", ""))
    own_repo, _ = split_image(component.image)
    command = list(container.get("command") or component.command)
    if image_repo != own_repo and component.command:
        binary = command[0] if command else component.command[0]
        return StartOutcome(
            start_error=(
                "failed to create containerd task: failed to create shim task: OCI runtime create failed: "
                f'runc create failed: unable to start container process: exec: "{binary}": executable file not found in $PATH: unknown'
            ),
            exit_code=128,
            reason="StartError",
            serve_after=None,
        )
    if component.command and command and command[0] != component.command[0] and command[0] in (programs or {}):
        # the image ships that binary too: it runs, as the program it is, with this pod's env
        other = (programs or {})[command[0]]
        ran = start_outcome(other, {**container, "image": other.image}, env)
        events = tuple((d, e, tuple(f) + (("service", other.name),)) for d, e, f in ran.log_events)
        return StartOutcome(ran.exit_after, ran.exit_code, ran.reason, ran.start_error, ran.serve_after, events, ran.listen_port, ran.memory_mib)
    if component.command and command and command[0] != component.command[0]:
        return StartOutcome(
            start_error=(
                "failed to create containerd task: failed to create shim task: OCI runtime create failed: "
                f'runc create failed: unable to start container process: exec: "{command[0]}": executable file not found in $PATH: unknown'
            ),
            exit_code=128,
            reason="StartError",
            serve_after=None,
        )
    # the first line a binary prints, before it reads its configuration
    first_line: tuple[float, str, tuple[tuple[str, Any], ...]] = (0.0, "startup", (("partial", True),))
    for var in component.required_env:
        if not env.get(var):
            events = (first_line, (0.4, "missing_env", (("var", var),)))
            return StartOutcome(exit_after=1.0, exit_code=1, reason="Error", serve_after=None, log_events=events, memory_mib=6.0)
    argv = [str(a) for a in (container.get("command") or ())] + [str(a) for a in (container.get("args") or ())]
    events: list[tuple[float, str, tuple[tuple[str, Any], ...]]] = [(0.0, "startup", (("auth", True),) if "--auth" in argv else ())]
    limit = (container.get("resources") or {}).get("limits", {}).get("memory")
    try:
        limit_b = memory_bytes(limit) if limit else None
    except ValueError:
        limit_b = None
    need = component.memory_mib * 1024 * 1024
    events.append((0.2, "config", ()))
    events.append((component.startup_s, "listening", (("port", component.listen_port),)))
    events.append((component.startup_s, "ready", ()))
    if limit_b is not None and limit_b < need:
        return StartOutcome(
            exit_after=max(component.startup_s * 0.8, 1.5),
            exit_code=137,
            reason="OOMKilled",
            serve_after=None,
            log_events=(first_line, (0.2, "config", ())),
            memory_mib=limit_b / 1024 / 1024,
        )
    return StartOutcome(serve_after=component.startup_s, log_events=tuple(events), listen_port=component.listen_port, memory_mib=component.memory_mib)
