"""A Discrete command catalog: inspect and repair verbs x the live cluster's targets.

Text actions are the right interface for language models and the wrong one for
policy-gradient learners. ``CommandCatalog`` turns the text action space into
``Discrete(N)``: a fixed layout of *verbs* over *target slots* (the app's
workloads, its services and the cluster's nodes, each kind sorted by name), so
action ``i`` means the same thing in every episode of the same app. At each
reset the slots are bound to the objects that exist in the live cluster; an
``action_mask`` marks which actions are valid now (the target exists and the
verb applies to it, e.g. only nodes that hold local volumes can be evacuated).
The mask never depends on the injected fault: a valid action may be useless.

Repair verbs are generic SRE remediations computed from live state, never from
the scenario's hidden ground truth: ``rollout undo``, ``rollout restart``,
pointing a Service's targetPort at the port its pods declare, and evacuating the
local volumes off a node (cordon, recreate each claim elsewhere). One catalog
action may expand to several commands (a runbook step); ``commands(i)`` returns
them and ``CatalogWrapper`` plays them one env step each.

    env = CatalogWrapper(gym.make("SREGym/MissingEnvVar-v0"))
    obs, info = env.reset(seed=0)
    obs["action_mask"]                  # int8 vector, 1 = valid now
    env.unwrapped_catalog.text(17)      # "kubectl rollout undo deployment/geo -n hotel-reservation"
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from sre_env.kube.selectors import has_labels

__all__ = ["CatalogAction", "CommandCatalog", "CatalogWrapper", "Targets", "catalog_for", "INSPECT_VERBS", "REPAIR_VERBS"]

WORKLOAD_KINDS = ("Deployment", "StatefulSet")

#: verbs that only read state; everything else changes the cluster
INSPECT_VERBS = ("get_pods", "get_events", "describe_services", "logs", "describe_service", "dmesg")
REPAIR_VERBS = ("rollout_undo", "rollout_restart", "fix_target_port", "evacuate_node", "submit")

#: (verb, target kind); the order is the Discrete layout (globals, then per-slot blocks)
_GLOBAL_VERBS = ("get_pods", "get_events", "describe_services", "submit")
_WORKLOAD_VERBS = ("logs", "rollout_undo", "rollout_restart")
_SERVICE_VERBS = ("describe_service", "fix_target_port")
_NODE_VERBS = ("dmesg", "evacuate_node")


@dataclass(frozen=True)
class CatalogAction:
    """One entry of the layout: a verb on a target slot (``slot`` is -1 for cluster-wide verbs)."""

    verb: str
    kind: str  # global | workload | service | node
    slot: int

    @property
    def repair(self) -> bool:
        return self.verb in REPAIR_VERBS


@dataclass
class Targets:
    """The live objects bound to the slots at reset: names per kind, in slot order."""

    namespace: str
    workloads: list[tuple[str, str]]  # (kind, name)
    services: list[str]
    nodes: list[str]


def _lower(kind: str) -> str:
    return kind.lower()


class CommandCatalog:
    """The Discrete layout for fixed slot capacities, and the commands behind each index.

    ``capacity`` is (workloads, services, nodes); objects beyond a capacity are
    not addressable (documented limitation: pick capacities that cover your
    apps, ``catalog_for`` does it from the app specs).
    """

    def __init__(self, workloads: int, services: int, nodes: int) -> None:
        self.capacity = (int(workloads), int(services), int(nodes))
        layout = [CatalogAction(v, "global", -1) for v in _GLOBAL_VERBS]
        layout += [CatalogAction(v, "workload", i) for i in range(workloads) for v in _WORKLOAD_VERBS]
        layout += [CatalogAction(v, "service", i) for i in range(services) for v in _SERVICE_VERBS]
        layout += [CatalogAction(v, "node", i) for i in range(nodes) for v in _NODE_VERBS]
        self.layout: tuple[CatalogAction, ...] = tuple(layout)
        self.action_space = spaces.Discrete(len(layout))
        self.targets: Targets | None = None
        self._backend: Any = None
        self.diagnosis: Callable[[], str] = lambda: "Incident mitigated with the catalog's repair actions."

    def __len__(self) -> int:
        return len(self.layout)

    def index(self, verb: str, kind: str = "global", slot: int = -1) -> int:
        """The action index of ``verb`` on ``slot`` (raises ValueError when absent)."""
        return self.layout.index(CatalogAction(verb, kind, slot))

    # ------------------------------------------------------------ binding
    def bind(self, backend: Any, namespace: str) -> Targets:
        """Read the targets from the live cluster (called at every reset)."""
        api = backend.api
        workloads = sorted((k, o["metadata"]["name"]) for k in WORKLOAD_KINDS for o in api.list(k, namespace))
        workloads.sort(key=lambda kn: kn[1])
        services = sorted(o["metadata"]["name"] for o in api.list("Service", namespace))
        nodes = sorted(o["metadata"]["name"] for o in api.list("Node"))
        w, s, n = self.capacity
        self.targets = Targets(namespace, workloads[:w], services[:s], nodes[:n])
        self._backend = backend
        return self.targets

    def target_name(self, action: CatalogAction) -> str | None:
        t = self._require()
        if action.kind == "workload":
            return t.workloads[action.slot][1] if action.slot < len(t.workloads) else None
        if action.kind == "service":
            return t.services[action.slot] if action.slot < len(t.services) else None
        if action.kind == "node":
            return t.nodes[action.slot] if action.slot < len(t.nodes) else None
        return None

    def _require(self) -> Targets:
        if self.targets is None:
            raise RuntimeError("the catalog is not bound to a cluster yet: reset the environment first")
        return self.targets

    # ------------------------------------------------------------ mask
    def mask(self) -> np.ndarray:
        """1 where the action is valid in the live cluster now (target exists, verb applies)."""
        t = self._require()
        api = self._backend.api
        live_workloads = {(k, o["metadata"]["name"]) for k in WORKLOAD_KINDS for o in api.list(k, t.namespace)}
        live_services = {o["metadata"]["name"] for o in api.list("Service", t.namespace)}
        live_nodes = {o["metadata"]["name"] for o in api.list("Node")}
        local_nodes = set(self._local_volumes_by_node())
        out = np.zeros(len(self.layout), dtype=np.int8)
        for i, a in enumerate(self.layout):
            if a.kind == "global":
                ok = True
            elif a.kind == "workload":
                ok = a.slot < len(t.workloads) and t.workloads[a.slot] in live_workloads
                if ok and a.verb == "rollout_undo":
                    ok = t.workloads[a.slot][0] in WORKLOAD_KINDS
            elif a.kind == "service":
                ok = a.slot < len(t.services) and t.services[a.slot] in live_services
                if ok and a.verb == "fix_target_port":
                    ok = self._declared_port(t.services[a.slot]) is not None
            else:
                ok = a.slot < len(t.nodes) and t.nodes[a.slot] in live_nodes
                if ok and a.verb == "evacuate_node":
                    ok = t.nodes[a.slot] in local_nodes
            out[i] = 1 if ok else 0
        return out

    # ------------------------------------------------------------ commands
    def commands(self, index: int) -> list[str]:
        """The command line(s) action ``index`` stands for, computed from live state."""
        a = self.layout[int(index)]
        t = self._require()
        ns = t.namespace
        name = self.target_name(a)
        if a.kind != "global" and name is None:
            return [f"kubectl get {a.kind} slot-{a.slot} -n {ns}"]  # an empty slot: the real "not found" error
        if a.verb == "get_pods":
            return [f"kubectl get pods -n {ns} -o wide"]
        if a.verb == "get_events":
            return [f"kubectl get events -n {ns}"]
        if a.verb == "describe_services":
            return [f"kubectl describe svc -n {ns}"]
        if a.verb == "submit":
            return ["submit " + self.diagnosis()]
        if a.kind == "workload":
            kind = _lower(t.workloads[a.slot][0])
            if a.verb == "logs":
                return [f"kubectl logs {kind}/{name} -n {ns} --tail=30"]
            if a.verb == "rollout_undo":
                return [f"kubectl rollout undo {kind}/{name} -n {ns}"]
            return [f"kubectl rollout restart {kind}/{name} -n {ns}"]
        if a.kind == "service":
            if a.verb == "describe_service":
                return [f"kubectl describe svc {name} -n {ns}"]
            port = self._declared_port(name)
            patch = json.dumps([{"op": "replace", "path": "/spec/ports/0/targetPort", "value": port}])
            return [f"kubectl patch service {name} -n {ns} --type=json -p '{patch}'"]
        if a.verb == "dmesg":
            return [f"ssh {name} dmesg | tail -20"]
        return self._evacuate(name, ns)

    def text(self, index: int) -> str:
        """``commands(index)`` as one readable string (commands on separate lines)."""
        return "\n".join(self.commands(index))

    def describe(self, index: int) -> str:
        """A short label for logs and plots: ``rollout_undo(deployment/geo)``."""
        a = self.layout[int(index)]
        if a.kind == "global":
            return a.verb
        name = self.target_name(a)
        return f"{a.verb}({a.kind}/{name if name is not None else f'slot-{a.slot}'})"

    # ------------------------------------------------------------ live-state helpers
    def _declared_port(self, service: str) -> int | None:
        """The container port the Service's pods declare for its first port (what targetPort should be)."""
        t = self._require()
        api = self._backend.api
        try:
            svc = api.get("Service", service, t.namespace)
        except Exception:  # noqa: BLE001 - the service was deleted: no repair applies
            return None
        selector = svc.get("spec", {}).get("selector") or {}
        ports = svc.get("spec", {}).get("ports") or []
        if not selector or not ports:
            return None
        wanted = ports[0].get("targetPort", ports[0].get("port"))
        for kind in WORKLOAD_KINDS:
            for obj in api.list(kind, t.namespace):
                labels = obj["spec"]["template"]["metadata"].get("labels", {})
                if not has_labels(selector, labels):
                    continue
                declared = [p for c in obj["spec"]["template"]["spec"].get("containers", []) for p in c.get("ports", []) or []]
                if isinstance(wanted, str):
                    named = [p["containerPort"] for p in declared if p.get("name") == wanted]
                    if named:
                        return int(named[0])
                if declared:
                    return int(declared[0]["containerPort"])
        return None

    def _local_volumes_by_node(self) -> dict[str, list[dict[str, Any]]]:
        """Bound claims of the namespace whose volume is local to one node, by node."""
        t = self._require()
        api = self._backend.api
        out: dict[str, list[dict[str, Any]]] = {}
        for pvc in api.list("PersistentVolumeClaim", t.namespace):
            volume = pvc.get("spec", {}).get("volumeName")
            if not volume:
                continue
            try:
                pv = api.get("PersistentVolume", volume)
            except Exception:  # noqa: BLE001 - released volume: nothing to move
                continue
            node = _pv_node(pv)
            if node:
                out.setdefault(node, []).append(pvc)
        return out

    def _evacuate(self, node: str, ns: str) -> list[str]:
        """Cordon ``node`` and recreate every local claim on it elsewhere (the data is re-seeded)."""
        claims = self._local_volumes_by_node().get(node, [])
        api = self._backend.api
        steps = [f"kubectl cordon {node}"]
        manifests = []
        for pvc in sorted(claims, key=lambda p: p["metadata"]["name"]):
            name = pvc["metadata"]["name"]
            steps.append(f"kubectl delete pvc {name} -n {ns} --wait=false")
            for pod in api.list("Pod", ns):
                vols = pod["spec"].get("volumes", []) or []
                if any((v.get("persistentVolumeClaim") or {}).get("claimName") == name for v in vols):
                    steps.append(f"kubectl delete pod {pod['metadata']['name']} -n {ns} --wait=false")
            manifests.append(_claim_manifest(pvc))
        if manifests:
            steps.append("sleep 15")
            steps.append(f"kubectl apply -n {ns} -f - <<'EOF'\n" + "".join(manifests) + "EOF")
            steps.append("sleep 30")
        return steps


def _pv_node(pv: dict[str, Any]) -> str | None:
    """The node a local PersistentVolume lives on (node affinity, else the provisioner's annotation)."""
    terms = (((pv.get("spec") or {}).get("nodeAffinity") or {}).get("required") or {}).get("nodeSelectorTerms") or []
    for term in terms:
        for expr in term.get("matchExpressions", []) or []:
            if expr.get("key") == "kubernetes.io/hostname" and expr.get("values"):
                return str(expr["values"][0])
    return (pv.get("metadata", {}).get("annotations") or {}).get("local.path.provisioner/selected-node")


def _claim_manifest(pvc: dict[str, Any]) -> str:
    """A fresh claim with the same name, labels, class, modes and size (no volumeName: bind anew)."""
    meta = pvc["metadata"]
    spec = pvc.get("spec", {})
    lines = ["---", "apiVersion: v1", "kind: PersistentVolumeClaim", "metadata:", f"  name: {meta['name']}"]
    labels = meta.get("labels") or {}
    if labels:
        lines.append("  labels:")
        lines += [f"    {k}: {json.dumps(v)}" for k, v in sorted(labels.items())]
    lines.append("spec:")
    lines.append(f"  accessModes: [{', '.join(spec.get('accessModes') or ['ReadWriteOnce'])}]")
    if spec.get("storageClassName"):
        lines.append(f"  storageClassName: {spec['storageClassName']}")
    size = ((spec.get("resources") or {}).get("requests") or {}).get("storage", "1Gi")
    lines += ["  resources:", "    requests:", f"      storage: {size}"]
    return "\n".join(lines) + "\n"


def catalog_for(*app_specs: Any, nodes: int | None = None) -> CommandCatalog:
    """A catalog sized for the given apps (``scenario_cls.app``): one layout shared by all of them.

    Use one catalog for a training mix so that action ``i`` means the same verb on
    the same slot in every scenario of the mix.
    """
    if nodes is None:  # the simulator's cluster: a control plane and its workers
        from sre_env.sim.kernel.hosts import DEFAULT_LAYOUT

        nodes = 1 + DEFAULT_LAYOUT.workers
    workloads = max(len(app.components) for app in app_specs)
    services = max(sum(1 for c in app.components if c.service_ports) for app in app_specs)
    return CommandCatalog(workloads, services, nodes)


class CatalogWrapper(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Discrete actions from a ``CommandCatalog``; the observation gains ``action_mask``.

    Each catalog action is played as one or more text commands on the wrapped env
    (rewards summed, the episode stops early if it ends). ``info["commands"]``
    lists what was actually run, so every episode stays readable as text.
    """

    def __init__(self, env: gym.Env, catalog: CommandCatalog | None = None, *, capacity: tuple[int, int, int] | None = None) -> None:
        if catalog is None:
            catalog = CommandCatalog(*capacity) if capacity is not None else catalog_for(env.unwrapped.scenario_cls.app)
        # a re-made env (gym.make from the spec) gets its own catalog of the same layout
        gym.utils.RecordConstructorArgs.__init__(self, capacity=catalog.capacity)
        super().__init__(env)
        self.catalog = catalog
        self.action_space = catalog.action_space
        assert isinstance(env.observation_space, spaces.Dict)
        self.observation_space = spaces.Dict({**env.observation_space.spaces, "action_mask": spaces.Box(0, 1, shape=(len(catalog),), dtype=np.int8)})
        self.last_mask: np.ndarray | None = None
        self.applied: list[str] = []

    @property
    def unwrapped_catalog(self) -> CommandCatalog:
        return self.catalog

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        obs, info = self.env.reset(seed=seed, options=options)
        inner = self.env.unwrapped
        self.catalog.bind(inner.backend, inner.scenario.namespace)
        self.applied: list[str] = []
        # the catalog's submit says what the agent did (it cannot know more than that)
        self.catalog.diagnosis = lambda: ("Repairs applied: " + ", ".join(self.applied)) if self.applied else "No repair applied."
        return self._with_mask(obs), info

    def _with_mask(self, obs: dict[str, Any]) -> dict[str, Any]:
        self.last_mask = self.catalog.mask()
        return {**obs, "action_mask": self.last_mask.copy()}

    def step(self, action: int) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        commands = self.catalog.commands(int(action))
        entry = self.catalog.layout[int(action)]
        if entry.repair and entry.verb != "submit":
            self.applied.append(self.catalog.describe(int(action)))
        total = 0.0
        obs: dict[str, Any] = {}
        info: dict[str, Any] = {}
        terminated = truncated = False
        for command in commands:
            obs, reward, terminated, truncated, info = self.env.step(command)
            total += float(reward)
            if terminated or truncated:
                break
        info = {**info, "commands": list(commands), "catalog_action": self.catalog.describe(int(action))}
        return self._with_mask(obs), total, terminated, truncated, info
