"""What a simulated cluster shows beyond the Kubernetes API: the model behind it.

Faults and scenarios are written against :class:`sre_env.backend.Backend` (the
API, node access, time). Some causes and some checks of whether a cause is gone
can only be read off the model: a disk's bad sectors, which routes a client pod
really gets, the app's runtime state (feature flags, queues, database sessions),
the load generator's view. Such code asks for a :class:`ModelBackend` -- a backend
with a :attr:`~ModelBackend.model` -- and is simulator-only *by type*: a scenario
that needs it is a :class:`sre_env.envs.base.SimScenario`, and a real-cluster
backend refuses it.

:class:`SimModel` is that inspection surface, written once here instead of every
scenario reaching into the world: each method answers one question about the
model, by the subsystem that owns the answer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from sre_env.backend import Backend

if TYPE_CHECKING:
    from sre_env.apps.base import AppSpec, Component
    from sre_env.sim.kernel.clock import TimedEvent
    from sre_env.sim.kernel.flows import TickResult
    from sre_env.sim.kernel.hosts import Disk, HostNode
    from sre_env.sim.kernel.pods import ContainerRuntime, PodRuntime
    from sre_env.sim.kernel.world import World
    from sre_env.sim.kubelet.probes import ProbeResult
    from sre_env.sim.network.dns import Answer
    from sre_env.sim.network.netpol import Peer
    from sre_env.sim.network.routing import Route
    from sre_env.sim.runtime.edge_filter import RegexRule
    from sre_env.sim.runtime.mongo_auth import UserStore
    from sre_env.sim.runtime.redis_model import RedisState

__all__ = ["SimModel", "ModelBackend"]

Obj = dict[str, Any]


class SimModel:
    """Read access to one simulated cluster's model, and the few levers a fault pulls on it."""

    def __init__(self, world: "World") -> None:
        self._world = world

    # ------------------------------------------------------------------ machines
    def hosts(self) -> dict[str, "HostNode"]:
        """Every node's host (disks, kernel log, files, units, sysctls), by node name."""
        return self._world.hosts

    def host(self, node: str) -> "HostNode":
        return self._world.hosts[node]

    def pod_volume_paths(self, pod: Obj) -> list[tuple[str, "Disk", str]]:
        """(node, disk, host path) under each PersistentVolume the pod mounts."""
        from sre_env.sim.node.volumes import pod_volume_paths

        return pod_volume_paths(self._world, pod)

    def eviction_thresholds(self, node: str) -> dict[str, str]:
        """The hard eviction thresholds the node's running kubelet enforces (signal -> value)."""
        from sre_env.sim.kubelet.eviction import DEFAULT_EVICTION_HARD, EvictionState

        managed = self._world.peek(EvictionState)
        return (managed.nodes if managed is not None else {}).get(node, DEFAULT_EVICTION_HARD)

    def eviction_signals(self, node: str) -> dict[str, tuple[float, float]]:
        """What the node's eviction manager measures: signal -> (available, capacity)."""
        from sre_env.sim.kubelet.eviction import signals

        return signals(self._world, self._world.hosts[node])

    def pod_ips_in_use(self, node: str) -> dict[str, str]:
        """Addresses held by the live pod sandboxes on ``node`` -> sandbox id."""
        from sre_env.sim.network.nodenet import in_use

        return in_use(self._world, node)

    def replay_cron(self, node: str, seconds: float) -> None:
        """Run the node's cron jobs as if they had been installed ``seconds`` before now."""
        from sre_env.sim.node.diskfill import run_cron_history

        run_cron_history(self._world, node, seconds)

    # ------------------------------------------------------------------ processes
    def runtime(self, pod_uid: str) -> "PodRuntime | None":
        """What runs for a pod on its node (its containers' states, logs, restarts)."""
        return self._world.runtimes.get(pod_uid)

    def pod_listens(self, pod_uid: str, port: int) -> bool:
        """Whether a running process of the pod listens on ``port``."""
        return self._world.pod_listens(pod_uid, port)

    def run_probe(self, pod: Obj, runtime: "PodRuntime", container: "ContainerRuntime", spec: Obj, probe: Obj) -> "ProbeResult":
        """What the kubelet's prober gets from the container's process now (``probe`` from its ``spec``)."""
        from sre_env.sim.kubelet.probes import run_probe

        return run_probe(self._world, pod, runtime, container, spec, probe, self._world.clock.now)

    def pod_env(self, pod_uid: str, container: str) -> dict[str, str]:
        """The environment a container's process runs with (its start-time copy while it runs)."""
        from sre_env.sim.runtime.podenv import pod_env

        return pod_env(self._world, pod_uid, container)

    def serving(self, namespace: str) -> dict[str, tuple[str, ...]]:
        """Component -> uids of the namespace's pods whose process serves requests now."""
        return self._world.serving_by_component(namespace)

    def app_model(self, app: str) -> Any:
        """An app's runtime model by app name (feature flags, queues, database sessions)."""
        return self._world.app_models[app]

    def image_defect(self, image: str, binary: str) -> tuple[float, str] | None:
        """The share of requests a release's bug fails, and its error (None: no known bug)."""
        return self._world.images.defect(image, binary)

    def redis_state(self, pod: Obj) -> "RedisState | None":
        """The dataset and memory state of the redis server in ``pod`` (None: none runs there)."""
        from sre_env.sim.runtime.redis_model import state_for_pod

        return state_for_pod(self._world, pod)

    def mongo_users(self, pod: Obj) -> "UserStore | None":
        """The users and roles of the MongoDB in ``pod`` (None: it runs without access control)."""
        from sre_env.sim.runtime.mongo_auth import user_store

        return user_store(self._world, pod)

    def gateway_rules(self, app: str, pod_uid: str) -> tuple["RegexRule", ...]:
        """The regex rules an app's gateway process in pod ``pod_uid`` runs with (empty: none, or not running)."""
        model = self._world.app_models.get(app)
        return model.gateway_rules(self._world, pod_uid) if model is not None else ()

    def cart_passwords_ok(self, app: str, namespace: str) -> list[bool]:
        """Per serving cart pod, whether the password it started with opens the cache server."""
        return self._world.app_models[app].cart_password_ok(self._world, self.serving(namespace))

    # ------------------------------------------------------------------ network and traffic
    def route(self, namespace: str, address: str, port: int | None = None, *, client: str | None = None) -> "Route":
        """Where a connection to ``address`` from a pod of ``namespace`` (or pod uid ``client``) ends up."""
        from sre_env.sim.network.routing import resolve_route

        return resolve_route(self._world, namespace, address, port, client=client)

    def entry_routes(self, app: "AppSpec") -> "dict[str, Route] | None":
        """Per request type, how the load generator's request fares at the edge (None: the app has no edge)."""
        from sre_env.sim.network.ingress import entry_routes

        return entry_routes(self._world, app)

    def kube_proxy_live(self, node: str) -> bool:
        """Whether a kube-proxy process serves on ``node``."""
        from sre_env.sim.network.kubeproxy import proxy_live

        return proxy_live(self._world, node)

    def resolve_name(self, pod_uid: str, name: str) -> "Answer | None":
        """What a DNS lookup of ``name`` answers inside the pod (None: the pod has no address to ask from)."""
        from sre_env.sim.network.netmodel import client_for, resolve_from

        src = client_for(self._world, pod_uid)
        if src is None or not src.ip:
            return None
        return resolve_from(self._world, src, name)

    def policy_peer(self, pod: Obj) -> "Peer":
        """The pod as NetworkPolicies see it (address, namespace, labels)."""
        from sre_env.sim.network.netpol import peer_for_pod

        return peer_for_pod(self._world, pod)

    def policy_allows(self, src: "Peer", dst: "Peer", port: int) -> bool:
        """Whether the NetworkPolicies in force admit a TCP connection from ``src`` to ``dst:port``."""
        from sre_env.sim.network.netpol import allowed

        return allowed(self._world, src, dst, port)

    def traffic(self, app: str) -> "TickResult | None":
        """The last tick's request flow of an app (rates, errors, latencies, failing edges)."""
        return self._world.last_traffic.get(app)

    def load(self, component: str) -> float:
        """Requests/s a component received in the last tick."""
        return self._world.last_load.get(component, 0.0)

    def client_history(self, app: str) -> list[tuple[float, float, float]]:
        """The load generator's recent ticks: (time, success ratio, mean latency ms), oldest first."""
        return list(self._world.client_history.get(app, ()))

    def serving_capacity(self, component: "Component", pod_uids: tuple[str, ...]) -> float:
        """Requests/s these pods can serve (component capacity, CPU limits, node efficiency)."""
        from sre_env.sim.traffic.capacity import serving_capacity

        return serving_capacity(self._world, component, pod_uids)

    def retry_limit(self, component: "Component", pod_uids: tuple[str, ...]) -> int:
        """How many times the component's clients retry a failed upstream call."""
        from sre_env.sim.runtime.podenv import retry_limit

        return retry_limit(self._world, component, pod_uids)

    def connection_rate(self, app: "AppSpec", caller: str, callee: str) -> float:
        """New connections/s ``caller`` opens to ``callee`` at the offered load (all its pods together)."""
        from sre_env.sim.runtime.oslimits import edge_connection_rate

        return edge_connection_rate(self._world, app, caller, callee)

    def fd_demand(self, app: "AppSpec", component: "Component", n_pods: int) -> int:
        """File descriptors one of ``n_pods`` replicas of the component needs at the offered load."""
        from sre_env.sim.runtime.oslimits import fd_demand

        return fd_demand(self._world, app, component, n_pods)

    def go_memory_limit_mib(self, component: "Component", pod_uids: tuple[str, ...]) -> float:
        """The component's Go soft memory limit (GOMEMLIMIT), MiB; 0 when unset."""
        from sre_env.sim.runtime.podenv import go_memory_limit_mib

        return go_memory_limit_mib(self._world, component, pod_uids)

    # ------------------------------------------------------------------ control plane
    def webhook_error(self, hook: Obj, path_default: str = "/") -> str | None:
        """Why the apiserver's call to an admission webhook fails (None: it answers)."""
        from sre_env.sim.control.admission import call_webhook

        return call_webhook(self._world, hook, path_default)

    def mutate(self, pod: Obj) -> Obj:
        """``pod`` as the mutating admission webhooks in force rewrite it (changed in place)."""
        from sre_env.sim.control.admission import apply_assign_mutators

        return apply_assign_mutators(self._world, pod)

    def metrics_api_available(self) -> bool:
        """Whether the aggregated Metrics API (metrics-server's APIService) is Available."""
        from sre_env.sim.control.namespaces import metrics_api_available

        return metrics_api_available(self._world)

    # ------------------------------------------------------------------ telemetry
    def firing_alerts(self) -> list[Any]:
        """The alerts firing now (Prometheus rule state after the last evaluation)."""
        from sre_env.telemetry.alerting import alerts_of

        return alerts_of(self._world).firing(self._world.clock.now)

    def noise_objects(self) -> set[str]:
        """Objects background noise created (graders set them aside)."""
        return self._world.noise_objects

    # ------------------------------------------------------------------ levers
    def schedule(self, at: float, event: "TimedEvent") -> None:
        """Fire a model event at cluster second ``at`` (a trigger that comes back, a periodic job)."""
        self._world.clock.schedule(at, event)

    def cancel(self, tag: str) -> int:
        return self._world.clock.cancel(tag)

    def set_load_factor(self, app: str, factor: float) -> None:
        """Scale the load generator's offered rate (a traffic surge, its end)."""
        self._world.set_load_factor(app, factor)

    def reboot(self, node: str) -> None:
        """Reboot a node's host: runtime state is lost, every container on it restarts."""
        from sre_env.sim.engine import reboot_node

        reboot_node(self._world, node)


@runtime_checkable
class ModelBackend(Backend, Protocol):
    """A backend whose cluster is a model: what simulator-only faults, scenarios and gates take."""

    @property
    def model(self) -> SimModel: ...

    def fork(self) -> "ModelBackend":
        """A what-if copy of the cluster (graders disturb it, the episode never sees it)."""
        ...
