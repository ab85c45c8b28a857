"""Read-only API resources a real cluster always serves and the simulator derives.

kubectl reads some kinds the simulator does not store:

- ``coordination.k8s.io/v1`` Leases in ``kube-node-lease`` (``kubectl describe
  node`` prints the node's Lease), derived from the Node (``sre_env.kube.node_lease``);
- ``discovery.k8s.io/v1`` EndpointSlices (``kubectl describe service`` reads its
  endpoints from slices since 1.29), one per Endpoints subset, as the
  EndpointSlice mirroring of the Endpoints the simulator maintains;
- ``v1`` LimitRanges (``kubectl describe namespace`` prints "No LimitRange
  resource." only when the list succeeds): the simulator models none, so the
  list is empty.

They are answered here, read-only (a write is refused with MethodNotAllowed), so
the real kubectl prints what the built-in shell prints.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sre_env.errors import ApiError
from sre_env.kube.node_lease import LEASE_NAMESPACE, node_lease
from sre_env.kube.selectors import parse_field_selector, parse_label_selector

if TYPE_CHECKING:
    from sre_env.sim.backend import SimBackend

__all__ = ["VIRTUAL", "VirtualKind", "find_virtual", "virtual_resources"]

Obj = dict[str, Any]


@dataclass(frozen=True)
class VirtualKind:
    kind: str
    group: str
    version: str
    plural: str
    singular: str
    short_names: tuple[str, ...]
    #: every object of the kind, across namespaces, sorted by (namespace, name)
    objects: Callable[[SimBackend], list[Obj]]
    #: Table columns after NAME: (header, cell function of (object, now))
    columns: tuple[tuple[str, Callable[[Obj, float], str]], ...]

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version


def _leases(backend: SimBackend) -> list[Obj]:
    return [node_lease(n, backend.now) for n in backend.api.list("Node")]


def _slug(uid: str, index: int) -> str:
    """The five-character generateName suffix, stable per Endpoints object."""
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    n = int("".join(c for c in uid if c in "0123456789abcdef")[-10:] or "0", 16) + index * 7919
    out = ""
    for _ in range(5):
        n, r = divmod(n, len(alphabet))
        out += alphabet[r]
    return out


def _slices(backend: SimBackend) -> list[Obj]:
    out: list[Obj] = []
    for ep in backend.api.list("Endpoints"):
        meta = ep["metadata"]
        svc = meta["name"]
        for i, subset in enumerate(ep.get("subsets") or [{}]):
            endpoints = [
                {"addresses": [a.get("ip")], "conditions": {"ready": ready, "serving": ready, "terminating": False}, **({"nodeName": a["nodeName"]} if a.get("nodeName") else {}), **({"targetRef": a["targetRef"]} if a.get("targetRef") else {})}
                for key, ready in (("addresses", True), ("notReadyAddresses", False))
                for a in subset.get(key) or []
            ]
            out.append({
                "kind": "EndpointSlice",
                "apiVersion": "discovery.k8s.io/v1",
                "metadata": {
                    "name": f"{svc}-{_slug(str(meta.get('uid', '')), i)}",
                    "generateName": f"{svc}-",
                    "namespace": meta.get("namespace"),
                    "uid": str(meta.get("uid", "")).replace("-5e1f-", f"-e5{i:02d}-", 1),
                    "resourceVersion": str(meta.get("resourceVersion", "1")),
                    "creationTimestamp": meta.get("creationTimestamp"),
                    "labels": {**(meta.get("labels") or {}), "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io", "kubernetes.io/service-name": svc},
                    "ownerReferences": [{"apiVersion": "v1", "kind": "Service", "name": svc, "controller": True, "blockOwnerDeletion": True}],
                },
                "addressType": "IPv4",
                "endpoints": endpoints,
                "ports": [{"name": p.get("name", ""), "port": p.get("port"), "protocol": p.get("protocol", "TCP")} for p in subset.get("ports") or []],
            })
    return sorted(out, key=lambda o: (o["metadata"]["namespace"] or "", o["metadata"]["name"]))


def _age(o: Obj, now: float) -> str:
    from sre_env.shell.printers import age

    return age(o["metadata"].get("creationTimestamp"), now)


def _slice_ports(o: Obj, now: float) -> str:
    ports = [str(p.get("port")) for p in o.get("ports") or [] if p.get("port") is not None]
    return ",".join(ports) or "<unset>"


def _slice_endpoints(o: Obj, now: float) -> str:
    ips = [a for e in o.get("endpoints") or [] for a in e.get("addresses") or []]
    if not ips:
        return "<none>"
    return ",".join(ips[:3]) + (f" + {len(ips) - 3} more..." if len(ips) > 3 else "")


VIRTUAL: tuple[VirtualKind, ...] = (
    VirtualKind("Lease", "coordination.k8s.io", "v1", "leases", "lease", (), _leases, (("HOLDER", lambda o, now: o["spec"].get("holderIdentity", "")), ("AGE", _age))),
    VirtualKind("EndpointSlice", "discovery.k8s.io", "v1", "endpointslices", "endpointslice", (), _slices, (("ADDRESSTYPE", lambda o, now: o.get("addressType", "")), ("PORTS", _slice_ports), ("ENDPOINTS", _slice_endpoints), ("AGE", _age))),
    VirtualKind("LimitRange", "", "v1", "limitranges", "limitrange", ("limits",), lambda backend: [], (("CREATED AT", lambda o, now: str(o["metadata"].get("creationTimestamp", ""))),)),
)
_BY_PATH = {(v.group, v.version, v.plural): v for v in VIRTUAL}


def virtual_resources(group: str, version: str) -> list[Obj]:
    """Discovery entries for the virtual kinds of one group/version (read-only verbs)."""
    return [
        {"name": v.plural, "singularName": v.singular, "namespaced": True, "kind": v.kind, "verbs": ["get", "list"], **({"shortNames": list(v.short_names)} if v.short_names else {})}
        for v in VIRTUAL
        if v.group == group and v.version == version
    ]


def virtual_groups() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for v in VIRTUAL:
        if v.group and v.version not in out.setdefault(v.group, []):
            out[v.group].append(v.version)
    return out


def find_virtual(path: str) -> tuple[VirtualKind, str | None, str | None] | None:
    """(kind, namespace, name) when ``path`` names a virtual resource collection or object."""
    parts = [p for p in path.split("/") if p]
    if parts[:1] == ["api"] and len(parts) >= 3:
        group, version, rest = "", parts[1], parts[2:]
    elif parts[:1] == ["apis"] and len(parts) >= 4:
        group, version, rest = parts[1], parts[2], parts[3:]
    else:
        return None
    ns = None
    if len(rest) > 2 and rest[0] == "namespaces":
        ns, rest = rest[1], rest[2:]
    v = _BY_PATH.get((group, version, rest[0]))
    if v is None or len(rest) > 2:
        return None
    return v, ns, rest[1] if len(rest) == 2 else None


def serve_virtual(backend: SimBackend, v: VirtualKind, ns: str | None, name: str | None, method: str, label_selector: str | None, field_selector: str | None) -> tuple[str, Any]:
    """("list", objects) or ("get", object) for a read; raises ApiError like the API server."""
    if method != "GET":
        raise ApiError(405, "MethodNotAllowed", f"the server does not allow this method on the requested resource ({v.plural}.{v.group or 'core'})")
    objs = [o for o in v.objects(backend) if ns is None or o["metadata"].get("namespace") == ns]
    if name is not None:
        for o in objs:
            if o["metadata"]["name"] == name:
                return "get", o
        resource = f"{v.plural}.{v.group}" if v.group else v.plural
        raise ApiError(404, "NotFound", f'{resource} "{name}" not found')
    if label_selector:
        pred = parse_label_selector(label_selector)
        objs = [o for o in objs if pred(o["metadata"].get("labels") or {})]
    if field_selector:
        fpred = parse_field_selector(field_selector)
        objs = [o for o in objs if fpred(o)]
    return "list", objs


__all__ += ["LEASE_NAMESPACE", "serve_virtual", "virtual_groups"]
