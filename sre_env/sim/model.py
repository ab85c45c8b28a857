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
    from sre_env.apps.base import Component
    from sre_env.sim.kernel.clock import TimedEvent
    from sre_env.sim.kernel.flows import TickResult
    from sre_env.sim.kernel.hosts import Disk, HostNode
    from sre_env.sim.kernel.pods import PodRuntime
    from sre_env.sim.kernel.world import World
    from sre_env.sim.network.routing import Route

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

    # ------------------------------------------------------------------ processes
    def runtime(self, pod_uid: str) -> "PodRuntime | None":
        """What runs for a pod on its node (its containers' states, logs, restarts)."""
        return self._world.runtimes.get(pod_uid)

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

    # ------------------------------------------------------------------ network and traffic
    def route(self, namespace: str, address: str, port: int | None = None, *, client: str | None = None) -> "Route":
        """Where a connection to ``address`` from a pod of ``namespace`` (or pod uid ``client``) ends up."""
        from sre_env.sim.network.routing import resolve_route

        return resolve_route(self._world, namespace, address, port, client=client)

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

    def go_memory_limit_mib(self, component: "Component", pod_uids: tuple[str, ...]) -> float:
        """The component's Go soft memory limit (GOMEMLIMIT), MiB; 0 when unset."""
        from sre_env.sim.runtime.podenv import go_memory_limit_mib

        return go_memory_limit_mib(self._world, component, pod_uids)

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
