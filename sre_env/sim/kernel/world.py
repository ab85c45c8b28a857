"""The World: the simulated cluster's declared state, and nothing that behaves.

A World is one picklable object (snapshot, restore and fork are a pickle round
trip) holding the clock and its timers, the API objects, the hosts, what runs
for each pod, the traffic layer's latest results, and each subsystem's own
state. The state shared across layers is declared here, attribute by attribute;
state that only one subsystem reads is a class that subsystem declares and
reaches with :meth:`World.slot`, so nothing is ever added to a World from
outside.

How the world changes is written elsewhere: ``sre_env.sim.engine`` builds a
cluster and runs the tick pipeline; the control plane, kubelets, network,
runtime and traffic subsystems are functions of a World.
"""

from __future__ import annotations

import pickle
from collections import deque
from typing import Any, Protocol, TypeVar

import numpy as np

from sre_env.apps.base import AppSpec, Component
from sre_env.kube.timefmt import iso
from sre_env.sim.kernel.clock import SimClock
from sre_env.sim.kernel.flows import TickResult, TrafficPlan
from sre_env.sim.kernel.hosts import (
    DEFAULT_LAYOUT,
    ClusterLayout,
    HostNode,
    make_host_nodes,
)
from sre_env.sim.kernel.images import ImageCatalog
from sre_env.sim.kernel.pods import PodRuntime
from sre_env.sim.kernel.store import ObjectStore

__all__ = ["World", "AppModel", "is_notable"]

Obj = dict[str, Any]
S = TypeVar("S")
#: the alphabet of generated name suffixes (Kubernetes' rand.String: no vowels, no 0/1/3)
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


class AppModel(Protocol):
    """An app's runtime model (feature flags, queues, database sessions; ``sre_env.sim.runtime.models``)."""

    def tick(self, world: "World", app: AppSpec, plan: TrafficPlan, res: TickResult, dt: float) -> None: ...

    def container_tool(self, world: "World", pod: Obj, spec: Obj, env: dict[str, str]) -> Any: ...


class World:
    """One simulated cluster's state at one moment of cluster time."""

    def __init__(self, layout: ClusterLayout = DEFAULT_LAYOUT, seed: int = 0) -> None:
        self.layout = layout
        self.clock = SimClock()
        self.store = ObjectStore(self.clock)
        #: the image registry the kubelets pull from
        self.images = ImageCatalog()
        #: every random draw of the simulation (the env reseeds it per episode)
        self.rng = np.random.default_rng(seed)
        #: seed of the deterministic variation of rendered details (log wording, ids)
        self.variant_seed = seed
        self.apps: tuple[AppSpec, ...] = ()
        #: (namespace, component name) -> the component of an installed app
        self.components: dict[tuple[str, str], Component] = {}
        #: app name -> its runtime model
        self.app_models: dict[str, AppModel] = {}
        self.hosts: dict[str, HostNode] = {h.name: h for h in make_host_nodes(layout)}
        #: pod uid -> its sandbox and containers on the node
        self.runtimes: dict[str, PodRuntime] = {}
        #: bumped whenever a process starts or stops serving, or a fault changes what pods see
        self.runtime_epoch = 0
        self.fault_epoch = 0
        #: the kubelets' next wake-up, and the store revision they last synced
        self.kubelet_rev = -1
        self.kubelet_wake = 0.0
        #: (deployment uid, generation) -> pod-template-hash
        self.template_hashes: dict[tuple[str, int], str] = {}
        #: app name -> its compiled routes, recompiled when a route could change (sre_env.sim.traffic)
        self.plans: dict[str, TrafficPlan] = {}
        #: app name -> the latest tick's flow
        self.last_traffic: dict[str, TickResult] = {}
        #: app name -> (time, client success ratio, client latency ms) of recent ticks
        self.client_history: dict[str, deque] = {}
        #: component -> requests/s it received last tick
        self.last_load: dict[str, float] = {}
        #: app name -> multiplier on the load generator's offered rate (load spikes, floods)
        self.load_factor: dict[str, float] = {}
        #: app name -> bumped when an input of its flow other than routes changes (load, model costs)
        self.flow_input_rev: dict[str, int] = {}
        #: (app, component) -> (serving pods, queued requests): overload backlogs
        self.backlog: dict[tuple[str, str], tuple[tuple[str, ...], float]] = {}
        #: (app, cache component) -> (serving pods, warm share of its keys): restarts start cold
        self.cache_state: dict[tuple[str, str], tuple[tuple[str, ...], float]] = {}
        #: pod uid -> the error its callers see when it fails requests (disk, kernel limits, releases, node)
        self.pod_error_text: dict[str, str] = {}
        #: pods whose process is at a kernel limit (sre_env.sim.runtime.oslimits): uid -> (resource, limit, demand)
        self.os_limited: dict[str, tuple[str, int, int]] = {}
        #: (server pod uid, call operation) -> share of those calls the server rejects, and its error text
        #: (per-operation failures of stateful stores, e.g. redis refusing writes at maxmemory)
        self.op_errors: dict[tuple[str, str], tuple[float, str]] = {}
        #: MongoDB user databases by data volume (sre_env.sim.runtime.mongo_auth); they live with the volume
        self.mongo_users: dict[str, Any] = {}
        #: container id -> in-memory state of a stateful store process (sre_env.sim.runtime.redis_model)
        self.redis_states: dict[str, Any] = {}
        #: recent warning/error lines of every container, for the observation's log window
        self.notable_logs: deque = deque(maxlen=256)
        #: noise that fired (sre_env.sim.noise), and the objects it created (graders ignore them)
        self.noise_log: list[dict[str, Any]] = []
        self.noise_objects: set[str] = set()
        #: seconds asked for but not yet ticked (advance() moves in whole ticks)
        self.carry_s = 0.0
        #: when the next scrape is due
        self.next_scrape = 0.0
        #: each subsystem's own state, by the class that declares it (see slot())
        self.slots: dict[type, Any] = {}
        self._uid_index: dict[str, Obj] = {}
        self._uid_index_rev = -1

    # ------------------------------------------------------------------ subsystem state
    def slot(self, kind: type[S]) -> S:
        """The state one subsystem keeps in this world: an instance of ``kind``, made on first use.

        ``kind`` is a class with a no-argument constructor, declared next to the code
        that reads it; the world pickles it with everything else.
        """
        state = self.slots.get(kind)
        if state is None:
            state = self.slots[kind] = kind()
        return state

    def peek(self, kind: type[S]) -> S | None:
        """The subsystem's state if it has kept any yet (None: it never ran in this world)."""
        return self.slots.get(kind)

    # ------------------------------------------------------------------ identity
    def name_suffix(self, length: int = 5) -> str:
        return "".join(_ALPHABET[i] for i in self.rng.integers(0, len(_ALPHABET), size=length))

    def component_for(self, pod: Obj) -> Component | None:
        labels = pod["metadata"].get("labels") or {}
        name = labels.get("io.kompose.service") or labels.get("service") or labels.get("app.kubernetes.io/component") or labels.get("app")
        if not name:
            return None
        return self.components.get((pod["metadata"]["namespace"], name))

    def app_for_namespace(self, namespace: str) -> AppSpec | None:
        return next((a for a in self.apps if a.namespace == namespace), None)

    # ------------------------------------------------------------------ lookups
    def pod_by_uid(self, uid: str) -> Obj | None:
        rev = self.store.membership_revision.get("Pod", 0)
        if self._uid_index_rev != rev:
            self._uid_index = {p["metadata"]["uid"]: p for p in self.store.iter("Pod")}
            self._uid_index_rev = rev
        return self._uid_index.get(uid)

    def pod_listens(self, uid: str, port: int) -> bool:
        rt = self.runtimes.get(uid)
        if rt is None:
            return False
        now = self.clock.now
        return any(c.listen_port == port and c.serving(now) for c in rt.containers.values())

    def pod_uid_by_ip(self, ip: str) -> str | None:
        for uid, rt in self.runtimes.items():
            if rt.ip == ip:
                return uid
        return None

    def service_by_ip(self, ip: str) -> Obj | None:
        for svc in self.store.iter("Service"):
            if svc["spec"].get("clusterIP") == ip:
                return svc
        return None

    def serving_by_component(self, namespace: str) -> dict[str, tuple[str, ...]]:
        """component label (io.kompose.service, helm's service, app...) -> uids of pods whose process serves now (one pass)."""
        out: dict[str, list[str]] = {}
        now = self.clock.now
        for pod in self.store.iter("Pod"):
            meta = pod["metadata"]
            if meta["namespace"] != namespace or meta.get("deletionTimestamp"):
                continue
            labels = meta.get("labels") or {}
            name = labels.get("io.kompose.service") or labels.get("service") or labels.get("app.kubernetes.io/component") or labels.get("app")
            rt = self.runtimes.get(meta["uid"])
            if name and rt and any(c.serving(now) for c in rt.containers.values()):
                out.setdefault(name, []).append(meta["uid"])
        return {k: tuple(v) for k, v in out.items()}

    def node_ready(self, name: str) -> bool:
        host = self.hosts.get(name)
        return host is not None and host.kubelet_connected()

    # ------------------------------------------------------------------ changes every layer makes
    def event(self, obj: Obj, type_: str, reason: str, message: str, source: str) -> None:
        """Record a Kubernetes Event; the kubelet's warnings also go to the node's journal."""
        self.store.record_event(obj, type_, reason, message, source)
        if source == "kubelet" and type_ == "Warning" and obj.get("kind") == "Pod":
            host = self.hosts.get(obj["spec"].get("nodeName", ""))
            if host is not None:
                host.journal.append((self.clock.now, "kubelet", _klog_line(self.clock.now, obj, reason, message)))

    def delete_pod(self, pod: Obj) -> None:
        """Graceful deletion: the pod terminates on its node; one never scheduled goes at once."""
        meta = pod["metadata"]
        if meta.get("deletionTimestamp"):
            return
        if not pod["spec"].get("nodeName") or pod["metadata"]["uid"] not in self.runtimes:
            self.store.remove("Pod", meta["name"], meta["namespace"])
            return
        meta["deletionTimestamp"] = iso(self.clock.now)
        meta["deletionGracePeriodSeconds"] = pod["spec"].get("terminationGracePeriodSeconds", 30)
        self.store.touch(pod)

    def flow_inputs_changed(self, app_name: str) -> None:
        """Tell the traffic layer that an app's flow must be recomputed (its routes did not change)."""
        self.flow_input_rev[app_name] = self.flow_input_rev.get(app_name, 0) + 1

    def set_load_factor(self, app_name: str, factor: float) -> None:
        """Scale the load generator's offered rate for an app (load spikes, floods, their end)."""
        self.load_factor[app_name] = float(factor)
        self.flow_inputs_changed(app_name)

    # ------------------------------------------------------------------ snapshots
    def snapshot(self) -> bytes:
        return pickle.dumps(self, protocol=pickle.HIGHEST_PROTOCOL)

    @staticmethod
    def restore(blob: bytes) -> "World":
        return pickle.loads(blob)

    def fork(self) -> "World":
        return World.restore(self.snapshot())


_NOTABLE = ("ERR", "error", "Error", "FTL", "PNC", "panic", "fatal", "Fatal", '"s":"E"', '"s":"F"', '"s":"W"', "WRN", "refused", "timeout", "failed")


def is_notable(line: str) -> bool:
    """Warning- and error-level lines (what a log dashboard's error panel shows)."""
    return any(k in line for k in _NOTABLE)


def _klog_line(t: float, pod: Obj, reason: str, message: str) -> str:
    """The kubelet's own log line for a pod sync failure (klog header, structured fields)."""
    stamp = iso(t)
    head = f"E{stamp[5:7]}{stamp[8:10]} {stamp[11:19]}.{int(t * 1e6) % 1_000_000:06d}     870 pod_workers.go:1301]"
    ref = f'pod="{pod["metadata"]["namespace"]}/{pod["metadata"]["name"]}" podUID="{pod["metadata"]["uid"]}"'
    msg = message.replace('"', '\\"')
    if reason == "BackOff":
        return f'{head} "Error syncing pod, skipping" err="failed to \\"StartContainer\\" with CrashLoopBackOff: \\"{msg}\\"" {ref}'
    return f'{head} "Error syncing pod, skipping" err="{reason}: {msg}" {ref}'
