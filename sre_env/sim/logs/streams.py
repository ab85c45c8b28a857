"""What a container's log gets: each event rendered in the component's dialect.

Kubelet and runtime models report events (``startup``, ``request``,
``dependency_error``...); the component's dialect (``sre_env.sim.logs.render``)
words them. Warning and error lines also go to the world's notable-lines window,
which the observation's log panel shows.
"""

from __future__ import annotations

import zlib
from typing import TYPE_CHECKING, Any

from sre_env.sim.kernel.world import is_notable
from sre_env.sim.logs import render as logfmt

if TYPE_CHECKING:
    from sre_env.sim.kernel.pods import ContainerRuntime
    from sre_env.sim.kernel.world import World

__all__ = ["container_log", "container_raw_log"]

Obj = dict[str, Any]


def container_log(world: "World", pod: Obj, ctr: ContainerRuntime, event: str, t: float, fields: dict[str, Any]) -> None:
    comp = world.component_for(pod)
    dialect = comp.log_format if comp else "go-service"
    fields = dict(fields)
    if comp is not None:
        fields.setdefault("service", comp.name)
        fields.setdefault("port", comp.listen_port)
    variant = zlib.crc32(f"{world.variant_seed}/{pod['metadata']['uid']}/{len(ctr.log)}/{event}".encode())
    if event == "raw":
        # a line its program model rendered itself (sidecars, init scripts: sre_env.sim.runtime.programs)
        lines = [str(fields.get("line", ""))]
    elif event == "startup" and not fields.get("partial"):
        lines = logfmt.component_startup_lines(dialect, t, fields, variant)
    else:
        lines = [logfmt.render(dialect, event, t, fields, variant)]
    meta = pod["metadata"]
    for line in lines:
        if not line:
            continue  # the process prints nothing for this event
        ctr.log.append((t, line))
        if is_notable(line):
            world.notable_logs.append((t, meta["namespace"], meta["name"], line))


def container_raw_log(world: "World", pod: Obj, ctr: ContainerRuntime, t: float, line: str) -> None:
    """Append an already-formatted line to a container's log."""
    ctr.log.append((t, line))
    if is_notable(line):
        meta = pod["metadata"]
        world.notable_logs.append((t, meta["namespace"], meta["name"], line))
