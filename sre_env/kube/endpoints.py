"""Which pods serve a Service port: the ready addresses of its Endpoints, with their target port.

An Endpoints subset names its ports after the Service's ports (the endpoints
controller copies the names), so a Service port is served by the subsets that
have a port of the same name; a subset with a single port also serves an
unnamed Service port (hand-written Endpoints often name the one port they
have). kube-proxy programs its rules this way, and the ingress controller
reads the same objects.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["Backend", "service_port_backends"]

Obj = Mapping[str, Any]
#: (pod uid, pod IP, target port)
Backend = tuple[str, str, int]


def service_port_backends(endpoints: Obj | None, service_port: Obj, *, lone_port_any_name: bool = False) -> list[Backend]:
    """The ready pod addresses serving ``service_port`` (an entry of a Service's ``spec.ports``).

    ``lone_port_any_name``: a subset's only port serves a Service port of any
    name, not just an unnamed one (how the ingress controller here reads them).
    """
    out: list[Backend] = []
    name = service_port.get("name", "")
    for sub in (endpoints or {}).get("subsets") or ():
        ports = sub.get("ports") or []
        match = next((p for p in ports if p.get("name", "") == name), None)
        if match is None and len(ports) == 1 and (lone_port_any_name or not service_port.get("name")):
            match = ports[0]
        if match is None:
            continue
        for addr in sub.get("addresses") or ():
            uid = (addr.get("targetRef") or {}).get("uid")
            if uid:
                out.append((uid, addr.get("ip", ""), int(match["port"])))
    return out
