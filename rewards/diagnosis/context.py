"""What the grader knows about an incident beyond its root cause: the cluster's names and the cascade.

Built once per graded episode from the scenario (its app's components, their
containers and volume claims, the request graph) and the backend (the nodes,
which node hosts which pod), so the grader can tell the failing request path
(symptomatic components, whose errors are real) from bystanders.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Iterable, Mapping

from .vocabulary import mechanism_id_for

if TYPE_CHECKING:
    from sre_env.envs.base import Scenario

__all__ = ["DiagnosisContext", "diagnosis_context_for", "NODE_PREFIXES", "pod_owner", "dedupe"]

NODE_PREFIXES = frozenset({"node", "nodes", "no"})
_HASH = "bcdfghjklmnpqrstvwxz2456789"  # Kubernetes' pod-template-hash alphabet (no vowels)
_POD_SUFFIX = re.compile(rf"^(?:[{_HASH}]{{5,10}}(?:-[{_HASH}]{{5}})?|\d+)$")


@dataclass(frozen=True)
class DiagnosisContext:
    """What the grader knows beyond the root cause: the cluster's names and the cascade.

    ``affected`` must all be named for S2 (defaults to ``RootCause.affected``);
    ``symptomatic`` may be mentioned without counting as bystanders (the request
    path upstream of the fault, nodes hosting affected pods). ``aliases`` maps
    other names (container, PVC) to the component they belong to. References are
    ``kind/name`` or bare names; kinds other than ``node`` only say "component".
    """

    namespace: str
    components: tuple[str, ...]
    nodes: tuple[str, ...] = ()
    affected: tuple[str, ...] = ()
    symptomatic: tuple[str, ...] = ()
    aliases: Mapping[str, str] = field(default_factory=dict)
    mechanism_id: str = ""

    def key(self, ref: str) -> str | None:
        """``node/worker-1`` -> ``node:worker-1``; ``deployment/geo`` -> ``component:geo``."""
        ref = ref.strip()
        kind, _, name = ref.rpartition("/")
        kind = kind.lower()
        name = name.lower()
        if kind in NODE_PREFIXES or (not kind and name in self._node_set):
            return f"node:{name}" if name in self._node_set else None
        if name in self._component_set:
            return f"component:{name}"
        if name in self._alias_map:
            return f"component:{self._alias_map[name]}"
        return None

    # computed once per context (cached_property writes the instance dict, which a
    # frozen dataclass allows); equality and repr still see only the fields
    @cached_property
    def _node_set(self) -> frozenset[str]:
        return frozenset(n.lower() for n in self.nodes)

    @cached_property
    def _component_set(self) -> frozenset[str]:
        return frozenset(c.lower() for c in self.components)

    @cached_property
    def _alias_map(self) -> dict[str, str]:
        return {k.lower(): v.lower() for k, v in self.aliases.items()}


def diagnosis_context_for(scenario: "Scenario", backend: Any = None) -> DiagnosisContext:
    """Build the grading context from a live scenario (after ``setup``) and its backend.

    The symptomatic set is the affected components, everything that calls them
    (transitively: the request path up to the entrypoint) and the nodes hosting
    their pods, read from the backend when one is given.
    """
    root = scenario.root_cause()
    app = scenario.app
    # cluster components outside the app a scenario involves (a policy engine, a system controller)
    extra = tuple(getattr(scenario, "extra_components", lambda: ())())
    components = tuple(c.name for c in app.components) + tuple(n for n in extra if n not in {c.name for c in app.components})
    aliases: dict[str, str] = {}
    for c in app.components:
        if c.container and c.container != c.name:
            aliases[c.container] = c.name
        if c.volume_claim:
            aliases[c.volume_claim] = c.name
    nodes: tuple[str, ...] = ()
    if backend is not None:
        try:
            nodes = tuple(backend.nodes.names())
        except Exception:  # a backend without node access still gets a context
            nodes = ()
    root_name = root.component.rpartition("/")[2]
    if root.component.startswith("node/") and root_name not in nodes:
        nodes = (*nodes, root_name)

    affected_names = dedupe(ref.rpartition("/")[2] for ref in root.affected)
    # everything upstream of an affected component sees its errors
    callers: dict[str, set[str]] = {}
    for c in app.components:
        for d in c.dependencies:
            callers.setdefault(d.service, set()).add(c.name)
    seeds = [n for n in (*affected_names, root_name) if n in components]
    upstream: set[str] = set(seeds)
    frontier = list(seeds)
    while frontier:
        for caller in callers.get(frontier.pop(), ()):
            if caller not in upstream:
                upstream.add(caller)
                frontier.append(caller)
    hosting: set[str] = set()
    if backend is not None:
        try:
            pods = backend.api.list("Pod", root.namespace)
        except Exception:
            pods = []
        wanted = set(affected_names) | ({root_name} if root_name in components else set())
        for pod in pods:
            owner = pod_owner(pod.get("metadata", {}).get("name", ""), components)
            node = (pod.get("spec") or {}).get("nodeName")
            if owner in wanted and node:
                hosting.add(node)
    affected_keys = {n for n in affected_names}
    symptomatic = dedupe(
        [*dedupe(root.affected), *(n for n in sorted(upstream) if n not in affected_keys), *(f"node/{n}" for n in sorted(hosting))]
    )
    mech = scenario.mechanism.id if scenario.mechanism is not None else mechanism_id_for(root)
    return DiagnosisContext(
        namespace=root.namespace,
        components=components,
        nodes=nodes,
        affected=dedupe(root.affected),
        symptomatic=symptomatic,
        aliases=aliases,
        mechanism_id=mech,
    )


def dedupe(items: Iterable[str]) -> tuple[str, ...]:
    seen: dict[str, None] = {}
    for item in items:
        seen.setdefault(item, None)
    return tuple(seen)


def pod_owner(name: str, components: Iterable[str]) -> str | None:
    """The component a pod (or ReplicaSet) name belongs to, by Kubernetes' naming scheme."""
    name = name.lower()
    best = None
    for comp in components:
        c = comp.lower()
        if name.startswith(c + "-") and _POD_SUFFIX.match(name[len(c) + 1 :]) and (best is None or len(c) > len(best)):
            best = comp
    return best
