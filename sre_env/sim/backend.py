"""SimBackend: the embedded, deterministic cluster behind the Backend seam.

``SimApi`` is the Kubernetes API over the world's object store with the
server's semantics (graceful pod deletion, cascading deletes through the
garbage collector, the exact Status messages), ``SimNodes`` gives host access
for ``ssh``/``kubectl debug node``. Snapshot and fork are pickle round trips.
"""

from __future__ import annotations

import copy
from typing import Any

from ..backend import ExecResult
from ..errors import ApiError
from .kinds import kind_info
from .network import resolve_route
from .podenv import resolve_env
from ..telemetry.exporters import pod_cpu_millicores
from .views import ContainerView, HostView
from .world import World

__all__ = ["SimBackend", "SimApi", "SimNodes"]

#: how far back `kubectl logs` generates per-request lines when --since is not given
LAZY_LOG_WINDOW_S = 600.0

Obj = dict[str, Any]


class SimApi:
    def __init__(self, world: World) -> None:
        self.world = world

    # reads ---------------------------------------------------------------
    def get(self, kind: str, name: str, namespace: str | None = None) -> Obj:
        return self.world.store.get(kind, name, namespace)

    def list(self, kind: str, namespace: str | None = None, label_selector: str | None = None, field_selector: str | None = None) -> list[Obj]:
        try:
            return self.world.store.list(kind, namespace, label_selector, field_selector)
        except ValueError as exc:
            raise ApiError.bad_request(str(exc)) from None

    # writes --------------------------------------------------------------
    def create(self, obj: Obj) -> Obj:
        if not isinstance(obj, dict) or not obj.get("kind"):
            raise ApiError.bad_request("Object 'Kind' is missing in the request")
        try:
            kind_info(obj["kind"])
        except KeyError:
            raise ApiError(404, "NotFound", f'the server could not find the requested resource (post {str(obj["kind"]).lower()}s)') from None
        return self.world.create(obj)

    def replace(self, obj: Obj) -> Obj:
        return self.world.store.replace(obj)

    def patch(self, kind: str, name: str, namespace: str | None, patch: Any, patch_type: str = "strategic") -> Obj:
        return self.world.store.patch(kind, name, namespace, patch, patch_type)

    def delete(self, kind: str, name: str, namespace: str | None = None, *, force: bool = False) -> Obj:
        world = self.world
        obj = world.store.get(kind, name, namespace)
        if kind == "Pod":
            if force:
                world.runtimes.pop(obj["metadata"]["uid"], None)
                world.store.remove("Pod", name, namespace)
            else:
                world.delete_pod(obj)
            return obj
        if kind == "Namespace":
            if name in ("default", "kube-system", "kube-public"):
                raise ApiError.forbidden(f'namespaces "{name}" is forbidden: this namespace may not be deleted')
            for k in world.store.kinds():
                if kind_info(k).namespaced:
                    for o in world.store.list(k, name):
                        if k == "Pod":
                            world.runtimes.pop(o["metadata"]["uid"], None)
                        world.store.remove(k, o["metadata"]["name"], name)
            world.store.remove("Namespace", name)
            return obj
        if kind == "PersistentVolumeClaim":
            return world.store.delete(kind, name, namespace)
        if kind == "PersistentVolume":
            obj["metadata"]["finalizers"] = []
        return world.store.delete(kind, name, namespace, force=True)

    def scale(self, kind: str, name: str, namespace: str, replicas: int) -> Obj:
        if replicas < 0:
            raise ApiError.invalid(kind_info(kind).resource, name, f"spec.replicas: Invalid value: {replicas}: must be greater than or equal to 0")
        return self.world.store.patch(kind, name, namespace, {"spec": {"replicas": int(replicas)}}, "merge")

    def evict(self, name: str, namespace: str) -> None:
        pod = self.world.store.get("Pod", name, namespace)
        self.world.delete_pod(pod)

    # subresources ----------------------------------------------------------
    def _container(self, pod: Obj, container: str | None) -> str:
        names = [c["name"] for c in pod["spec"].get("containers", [])]
        if container is None:
            if len(names) == 1:
                return names[0]
            raise ApiError.bad_request(f"a container name must be specified for pod {pod['metadata']['name']}, choose one of: [{' '.join(names)}]")
        if container not in names:
            raise ApiError.bad_request(f"container {container} is not valid for pod {pod['metadata']['name']}")
        return container

    def logs(self, name: str, namespace: str, container: str | None = None, *, previous: bool = False, tail: int | None = None, since_seconds: float | None = None, timestamps: bool = False) -> str:
        pod = self.world.store.get("Pod", name, namespace)
        cname = self._container(pod, container)
        rt = self.world.runtimes.get(pod["metadata"]["uid"])
        ctr = rt.containers.get(cname) if rt else None
        if previous:
            if ctr is None or not ctr.prev_log and not ctr.last_terminated:
                raise ApiError.bad_request(f'previous terminated container "{cname}" in pod "{name}" not found')
            lines = list(ctr.prev_log) if ctr.prev_log else []
        else:
            if ctr is None or (ctr.started_at is None and not ctr.last_terminated):
                reason = (ctr.waiting_reason if ctr else "") or "ContainerCreating"
                reason = {"ErrImagePull": "image can't be pulled", "ImagePullBackOff": "trying and failing to pull image"}.get(reason, reason)
                raise ApiError.bad_request(f'container "{cname}" in pod "{name}" is waiting to start: {reason}')
            lines = list(ctr.log)
            if ctr.state == "running" and ctr.started_at is not None:
                # per-request lines are generated on demand (sre_env.telemetry.lazylogs), so
                # `kubectl logs` and `logql` show the same stream
                from ..telemetry.lazylogs import request_entries

                now = self.world.clock.now
                window = since_seconds if since_seconds is not None else LAZY_LOG_WINDOW_S
                if tail is not None and tail >= 0:
                    # a few sampled lines per 15 s interval: look back only as far as --tail needs
                    window = min(window, 15.0 * (tail // 2 + 2))
                lo = max(ctr.started_at, now - window)
                extra = [(e.t, e.line) for e in request_entries(self.world, pod, cname, lo, now)]
                if extra:
                    lines = sorted(lines + extra, key=lambda x: x[0])
        now = self.world.clock.now
        if since_seconds is not None:
            lines = [(t, l) for t, l in lines if t >= now - since_seconds]
        if tail is not None and tail >= 0:
            lines = lines[-tail:] if tail else []
        from .clock import iso

        if timestamps:
            return "".join(f"{iso(t)[:-1]}.{int((t % 1) * 1e9):09d}Z {l}\n" for t, l in lines)
        return "".join(l + "\n" for _, l in lines)

    def exec(self, name: str, namespace: str, container: str | None, argv: list[str]) -> ExecResult:
        world = self.world
        pod = world.store.get("Pod", name, namespace)
        cname = self._container(pod, container)
        rt = world.runtimes.get(pod["metadata"]["uid"])
        ctr = rt.containers.get(cname) if rt else None
        if pod.get("status", {}).get("phase") in ("Succeeded", "Failed"):
            raise ApiError.bad_request(f"cannot exec into a container in a completed pod; current phase is {pod['status']['phase']}")
        if ctr is None or ctr.state != "running":
            raise ApiError(500, "InternalError", f'unable to upgrade connection: container not found ("{cname}")')
        spec = next(c for c in pod["spec"]["containers"] if c["name"] == cname)
        env, _ = resolve_env(world.store, pod, spec)
        host = world.hosts[pod["spec"]["nodeName"]]
        ns = namespace

        def resolve(hostname: str) -> str | None:
            r = resolve_route(world, ns, f"{hostname}:1")
            if r.ip:
                return r.ip
            svc = world.store.find("Service", hostname.split(".")[0], hostname.split(".")[1] if "." in hostname else ns)
            return svc["spec"].get("clusterIP") if svc else None

        def connect(hostname: str, port: int) -> str | None:
            r = resolve_route(world, ns, f"{hostname}:{port}")
            return None if r.ok > 0 else (r.error or "connection refused")

        volumes = world.pod_volume_paths(pod)
        data_disk = volumes[0][1] if volumes else None
        data_error = max((disk.read_error_fraction(path) for _, disk, path in volumes), default=0.0)
        view = ContainerView(
            data_disk=data_disk,
            data_error_fraction=data_error,
            pod=pod,
            container=spec,
            env=env,
            component=world.component_for(pod),
            node=host,
            now=world.clock.now,
            process_running=True,
            listening_ports=tuple(p for p in (ctr.listen_port,) if p is not None and ctr.serving(world.clock.now)),
            uptime_s=world.clock.now - (ctr.started_at or world.clock.now),
            variant=world.variant_seed,
            resolve=resolve,
            connect=connect,
            files={},
        )
        from .containercmds import run_container_command

        return run_container_command(view, list(argv))

    def top_pods(self, namespace: str | None) -> list[tuple[str, str, int, int]]:
        world = self.world
        out = []
        rps = {}
        for res in world.last_traffic.values():
            rps.update(res.pod_rps)
        for pod in world.store.list("Pod", namespace):
            rt = world.runtimes.get(pod["metadata"]["uid"])
            if rt is None or not any(c.state == "running" for c in rt.containers.values()):
                continue
            comp = world.component_for(pod)
            load = rps.get(pod["metadata"]["uid"], 0.0)
            cpu = pod_cpu_millicores(comp, load)
            mem = sum(int(c.memory_mib * 1024 * 1024) for c in rt.containers.values() if c.state == "running")
            out.append((pod["metadata"]["namespace"], pod["metadata"]["name"], cpu, mem))
        return out

    def top_nodes(self) -> list[tuple[str, int, int, int, int]]:
        pods = self.top_pods(None)
        by_node: dict[str, list[int]] = {}
        for ns, name, cpu, mem in pods:
            node = self.world.store.get("Pod", name, ns)["spec"].get("nodeName")
            acc = by_node.setdefault(node, [0, 0])
            acc[0] += cpu
            acc[1] += mem
        out = []
        for name, host in self.world.hosts.items():
            cpu, mem = by_node.get(name, [0, 0])
            out.append((name, 60 + cpu + 7 * host.index, host.cpu_cores * 1000, mem + 900 * 1024 * 1024, host.memory_bytes))
        return out


class SimNodes:
    def __init__(self, world: World) -> None:
        self.world = world

    def names(self) -> list[str]:
        return sorted(self.world.hosts)

    def exec(self, node: str, argv: list[str]) -> ExecResult:
        world = self.world
        host = world.hosts.get(node)
        if host is None:
            return ExecResult(f"ssh: Could not resolve hostname {node}: Name or service not known\n", 255)
        pods = [p for p in world.store.iter("Pod") if p["spec"].get("nodeName") == node]
        volumes = {}
        for pv in world.store.iter("PersistentVolume"):
            if pv["metadata"].get("annotations", {}).get("local.path.provisioner/selected-node") == node:
                volumes[pv["spec"].get("hostPath", {}).get("path", "")] = pv["metadata"]["name"]

        def restart_unit(unit: str) -> bool:
            if unit in ("kubelet", "kubelet.service"):
                host.kubelet_running = True
                host.journal.append((world.clock.now, "kubelet", "Started kubelet: The Kubernetes Node Agent."))
                world._update_node_conditions()
                return True
            return unit in ("containerd", "containerd.service")

        view = HostView(node=host, now=world.clock.now, pods=pods, variant=world.variant_seed, local_volumes=volumes, restart_unit=restart_unit)
        from .hostcmds import run_host_command

        return run_host_command(view, list(argv))


    def device_for_path(self, node: str, path: str) -> str:
        return self.world.hosts[node].disk_for_path(path).device

    def inject_read_errors(self, node: str, device: str, *, fraction: float, sectors: tuple[int, ...], paths: tuple[str, ...] = ()) -> None:
        disk = self.world.hosts[node].disk(device)
        if disk is None:
            raise ValueError(f"node {node} has no device {device}")
        disk.bad_read_fraction = float(fraction)
        disk.bad_sectors = tuple(sectors)
        disk.bad_paths = tuple(paths)
        disk.pending_sectors = len(sectors)
        self.world.fault_epoch += 1

    def clear_read_errors(self, node: str, device: str) -> None:
        disk = self.world.hosts[node].disk(device)
        if disk is not None:
            disk.bad_read_fraction = 0.0
            self.world.fault_epoch += 1


class SimBackend:
    """The default backend: an in-process World. Deterministic for a given seed and action sequence."""

    nondeterministic = False

    def __init__(self, world: World) -> None:
        self.world = world
        self.api = SimApi(world)
        self.nodes = SimNodes(world)

    @property
    def now(self) -> float:
        return self.world.clock.now

    def advance(self, seconds: float) -> None:
        self.world.advance(seconds)

    def snapshot(self) -> bytes:
        return self.world.snapshot()

    def fork(self) -> "SimBackend":
        return SimBackend(self.world.fork())

    @classmethod
    def restore(cls, blob: bytes) -> "SimBackend":
        return cls(World.restore(blob))

    def firing_alerts(self) -> list[str]:
        return [a.line() for a in self.world.alert_state.firing(self.world.clock.now)]

    def deepcopy_objects(self) -> dict[str, list[Any]]:
        return {k: copy.deepcopy(self.world.store.list(k)) for k in self.world.store.kinds()}
