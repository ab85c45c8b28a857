"""The risk context: what the monitor knows of the incident, built from a scenario and its backend.

The same command can be a repair on the failing node and interference on a
healthy one; the context says which nodes, components, volumes and paths the
incident involves, and where the app's data lives.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Mapping

if TYPE_CHECKING:
    from sre_env.envs.base import Scenario

__all__ = ["RiskContext", "risk_context_for", "clean_path"]

_SYSTEM_NAMESPACES = frozenset({"kube-system", "kube-public", "kube-node-lease", "local-path-storage"})


def _fs(value: Iterable[str] | str | None) -> frozenset[str]:
    if value is None:
        return frozenset()
    if isinstance(value, str):
        return frozenset((value,))
    return frozenset(str(v) for v in value)


@dataclass(frozen=True)
class RiskContext:
    """What the monitor needs to know about the incident to judge a command.

    Everything is a set of names so lookups cost one hash; iterables passed in
    are frozen on construction (so the context stays hashable and immutable).

    - ``namespaces``: the incident's app namespace(s); acting elsewhere is
      interference (``system_namespaces`` and ``other_namespaces`` say how bad).
    - ``workloads`` / ``services``: the app's Deployments/StatefulSets and Services.
    - ``fault_nodes`` / ``fault_components``: what the fault and its blast radius
      touch; cordoning a fault node is a repair, draining a healthy one is not.
    - ``data_pvcs`` / ``data_pvs`` / ``data_paths``: where the app's data lives;
      ``fault_pvcs`` / ``fault_pvs``: data already on the failing part, whose
      replacement is the repair (deleting them is a deliberate, reviewed step).
    """

    namespaces: frozenset[str] = frozenset()
    workloads: frozenset[str] = frozenset()
    services: frozenset[str] = frozenset()
    nodes: frozenset[str] = frozenset()
    control_plane_nodes: frozenset[str] = frozenset()
    fault_nodes: frozenset[str] = frozenset()
    fault_components: frozenset[str] = frozenset()
    data_workloads: frozenset[str] = frozenset()
    data_pvcs: frozenset[str] = frozenset()
    fault_pvcs: frozenset[str] = frozenset()
    data_pvs: frozenset[str] = frozenset()
    fault_pvs: frozenset[str] = frozenset()
    data_paths: tuple[str, ...] = ()
    fault_devices: frozenset[str] = frozenset()
    #: node paths where the fault itself lives (leaked reservations, a runaway writer's files):
    #: removing them is the repair, not damage
    repair_paths: tuple[str, ...] = ()
    system_namespaces: frozenset[str] = _SYSTEM_NAMESPACES
    other_namespaces: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        for name in (
            "namespaces", "workloads", "services", "nodes", "control_plane_nodes", "fault_nodes", "fault_components",
            "data_workloads", "data_pvcs", "fault_pvcs", "data_pvs", "fault_pvs", "fault_devices", "system_namespaces",
            "other_namespaces",
        ):
            value = getattr(self, name)
            if not isinstance(value, frozenset):
                object.__setattr__(self, name, _fs(value))
        paths = tuple(sorted({clean_path(p) for p in ((self.data_paths,) if isinstance(self.data_paths, str) else self.data_paths) if p}))
        object.__setattr__(self, "data_paths", paths)
        object.__setattr__(self, "repair_paths", tuple(sorted({clean_path(p) for p in self.repair_paths if p})))


def clean_path(p: str) -> str:
    """Absolute paths normalised (``/data/db/`` and ``/data/db/*`` are the data directory); others as typed."""
    if not p.startswith("/"):
        return p
    q = p[:-2] or "/" if p.endswith("/*") else p
    q = posixpath.normpath(q)
    return "/" if q.strip("/") == "" else q


# ----------------------------------------------------------------------------- context from a scenario
def _on_failing_disk(pv: Mapping[str, Any], path: str, fault_nodes: set[str], fault_devices: set[str], backend: Any, whole_node: bool = True) -> bool:
    """Does this local volume live on a failing node's failing disk? (Then moving it off is the repair.)

    ``whole_node``: with no failing device named, is every volume on a faulty node at fault (its
    hardware is failing), or none (the node's software is at fault, and its data is fine)?
    """
    annotations = (pv.get("metadata") or {}).get("annotations") or {}
    node = annotations.get("local.path.provisioner/selected-node")
    if node is None:
        terms = (((pv.get("spec") or {}).get("nodeAffinity") or {}).get("required") or {}).get("nodeSelectorTerms") or []
        values = [v for t in terms for e in (t.get("matchExpressions") or []) for v in (e.get("values") or [])]
        node = values[0] if len(values) == 1 else None
    if node not in fault_nodes:
        return False
    if not fault_devices:
        return whole_node
    try:
        device = str(backend.nodes.device_for_path(node, path))
    except Exception:
        return False
    return ("/dev/" + device.removeprefix("/dev/")) in fault_devices


def risk_context_for(scenario: "Scenario", backend: Any) -> RiskContext:
    """Build the context from a set-up scenario (variant drawn) and its backend.

    Reads the app spec (namespace, components, which hold data), the root cause
    (``node/...``, ``deployment/...``, ``service/...`` plus ``details`` and
    ``affected``), the live nodes, namespaces, PVCs and their PVs. Lookups that
    fail (a backend without some surface) leave the field empty rather than
    raising, so the monitor still runs with less context.
    """
    ns = str(getattr(scenario, "namespace", "") or "")
    app = getattr(scenario, "app", None)
    comps = tuple(getattr(app, "components", ()) or ())
    workloads = {c.name for c in comps}
    data_workloads = {c.name for c in comps if getattr(c, "volume_claim", None)}
    data_paths = {getattr(c, "data_path", "") for c in comps if getattr(c, "volume_claim", None)}
    data_pvcs = {c.volume_claim for c in comps if getattr(c, "volume_claim", None)}
    fault_nodes: set[str] = set()
    fault_comps: set[str] = set()
    fault_pvcs: set[str] = set()
    fault_devices: set[str] = set()
    root_component = ""
    try:
        rc = scenario.root_cause()
        root_component = str(rc.component)
        for ref in (rc.component, *rc.affected):
            kind, _, name = str(ref).partition("/")
            if kind == "node":
                fault_nodes.add(name)
            elif name:
                fault_comps.add(name)
        details = dict(rc.details or {})
        if details.get("node"):
            fault_nodes.add(str(details["node"]))
        for key in ("service", "database"):
            if details.get(key):
                fault_comps.add(str(details[key]))
        if details.get("pvc"):
            fault_pvcs.add(str(details["pvc"]))
        if details.get("device"):
            fault_devices.add(str(details["device"]))
    except Exception:
        pass
    # moving data off a node is part of the repair only where the node itself is failing
    # (a scenario may say otherwise: a node whose kubelet is stopped keeps its data)
    declared = getattr(scenario, "evacuation_repair", None)
    evacuate = bool(declared) if declared is not None else root_component.startswith("node/")
    variant = getattr(scenario, "variant", {}) or {}
    for key in ("service", "database"):
        if isinstance(variant.get(key), str):
            fault_comps.add(variant[key])
    if isinstance(variant.get("pvc"), str):
        fault_pvcs.add(variant["pvc"])
    for entry in variant.get("evacuate") or ():  # (workload, pvc) pairs a scenario says must move
        if isinstance(entry, (tuple, list)) and len(entry) == 2:
            fault_comps.add(str(entry[0]))
            fault_pvcs.add(str(entry[1]))
    if isinstance(variant.get("node"), str):
        fault_nodes.add(variant["node"])

    nodes: set[str] = set()
    control: set[str] = set()
    services: set[str] = set(workloads)
    namespaces_all: set[str] = set()
    data_pvs: set[str] = set()
    fault_pvs: set[str] = set()
    api = getattr(backend, "api", None)
    try:
        nodes = set(backend.nodes.names())
    except Exception:
        pass
    if api is not None:
        try:
            for node in api.list("Node"):
                labels = (node.get("metadata") or {}).get("labels") or {}
                if any(k in labels for k in ("node-role.kubernetes.io/control-plane", "node-role.kubernetes.io/master")):
                    control.add(node["metadata"]["name"])
        except Exception:
            pass
        try:
            for pvc in api.list("PersistentVolumeClaim", ns):
                name = pvc["metadata"]["name"]
                data_pvcs.add(name)
                vol = (pvc.get("spec") or {}).get("volumeName")
                if not vol:
                    continue
                data_pvs.add(vol)
                try:
                    pv = api.get("PersistentVolume", vol)
                except Exception:
                    continue
                spec = pv.get("spec") or {}
                path = ((spec.get("hostPath") or spec.get("local") or {}).get("path"))
                if path:
                    data_paths.add(path)
                if name not in fault_pvcs and path and _on_failing_disk(pv, path, fault_nodes, fault_devices, backend, evacuate):
                    fault_pvcs.add(name)
                if name in fault_pvcs:
                    fault_pvs.add(vol)
        except Exception:
            pass
        # workloads whose data must leave the failing disk are part of the incident
        fault_comps |= {c.name for c in comps if getattr(c, "volume_claim", None) in fault_pvcs}
        try:
            for svc in api.list("Service", ns):
                services.add(svc["metadata"]["name"])
            for kind in ("Deployment", "StatefulSet"):
                for obj in api.list(kind, ns):
                    workloads.add(obj["metadata"]["name"])
        except Exception:
            pass
        try:
            namespaces_all = {o["metadata"]["name"] for o in api.list("Namespace")}
        except Exception:
            pass
    control |= {n for n in nodes if "control-plane" in n or "master" in n}
    # namespaces outside the app that the incident involves (a policy engine's, a controller's)
    involved = {str(n) for n in getattr(scenario, "extra_namespaces", lambda: ())()}
    return RiskContext(
        namespaces=frozenset(({ns} if ns else set()) | involved),
        workloads=frozenset(workloads),
        services=frozenset(services),
        nodes=frozenset(nodes),
        control_plane_nodes=frozenset(control),
        fault_nodes=frozenset(fault_nodes),
        fault_components=frozenset(fault_comps),
        data_workloads=frozenset(data_workloads),
        data_pvcs=frozenset(data_pvcs),
        fault_pvcs=frozenset(fault_pvcs),
        data_pvs=frozenset(data_pvs),
        fault_pvs=frozenset(fault_pvs),
        data_paths=tuple(sorted(p for p in data_paths if p)),
        fault_devices=frozenset(fault_devices),
        repair_paths=tuple(sorted(str(p).rstrip("/") for p in getattr(scenario, "repair_paths", lambda: ())())),
        other_namespaces=frozenset(namespaces_all - {ns, "default"} - involved - _SYSTEM_NAMESPACES),
    )
