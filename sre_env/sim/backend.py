"""SimBackend: the embedded, deterministic cluster behind the Backend seam.

``SimApi`` is the Kubernetes API over the world's object store with the
server's semantics (every write admitted as the API server admits it --
decoded, defaulted, validated: ``sre_env.sim.control.apiserver`` -- graceful
pod deletion, cascading deletes through the garbage collector, the exact
Status messages), ``SimNodes`` gives host access
for ``ssh``/``kubectl debug node``. Snapshot and fork are pickle round trips.
"""

from __future__ import annotations

import copy
from typing import Any

from sre_env.kube.field_labels import check_field_selector
from sre_env.kube.kinds import kind_info
from sre_env.kube.quantity import cpu_millicores
from sre_env.sim.commands.views import ContainerView, HostView
from sre_env.sim.control.apiserver import create, update
from sre_env.sim.control.apiserver import patch as apiserver_patch
from sre_env.sim.control.apiserver import scale as apiserver_scale
from sre_env.sim.control.namespaces import metrics_api_available
from sre_env.sim.engine import advance
from sre_env.sim.kernel.hosts import kubelet_x509_error
from sre_env.sim.kernel.world import World
from sre_env.sim.kubelet.node_status import update_node_conditions
from sre_env.sim.model import SimModel
from sre_env.sim.network.netmodel import client_for, resolve_from
from sre_env.sim.network.routing import resolve_route
from sre_env.sim.node.volumes import pod_volume_paths
from sre_env.sim.runtime import redis_model
from sre_env.sim.runtime.cpu import pod_cpu_millicores
from sre_env.sim.runtime.mongo_auth import touch, user_store
from sre_env.sim.runtime.mounts import mounted_files
from sre_env.sim.runtime.oslimits import container_os_state
from sre_env.sim.runtime.podenv import resolve_env
from sre_env.sim.scripts import SIM_SHELL
from sre_env.telemetry.alerting import alerts_of

from ..backend import ExecResult
from ..errors import ApiError

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
            if field_selector:
                check_field_selector(kind, field_selector)  # the per-kind field labels, refused as the API does
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
        return create(self.world, obj, admit=True)

    def replace(self, obj: Obj) -> Obj:
        if not isinstance(obj, dict) or not obj.get("kind"):
            raise ApiError.bad_request("Object 'Kind' is missing in the request")
        return update(self.world, obj)

    def patch(self, kind: str, name: str, namespace: str | None, patch: Any, patch_type: str = "strategic") -> Obj:
        return apiserver_patch(self.world, kind, name, namespace, patch, patch_type)

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
            # Terminating until the namespace controller has removed its content and finalizer
            from sre_env.sim.control.namespaces import begin_namespace_deletion

            return begin_namespace_deletion(world, obj)
        if kind == "PersistentVolumeClaim":
            return world.store.delete(kind, name, namespace)
        if kind == "PersistentVolume":
            obj["metadata"]["finalizers"] = []
        return world.store.delete(kind, name, namespace, force=True)

    def scale(self, kind: str, name: str, namespace: str, replicas: int) -> Obj:
        return apiserver_scale(self.world, kind, name, namespace, replicas)

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
        if container not in names and container not in [c["name"] for c in pod["spec"].get("initContainers") or ()]:
            raise ApiError.bad_request(f"container {container} is not valid for pod {pod['metadata']['name']}")
        return container

    def logs(self, name: str, namespace: str, container: str | None = None, *, previous: bool = False, tail: int | None = None, since_seconds: float | None = None, timestamps: bool = False) -> str:
        pod = self.world.store.get("Pod", name, namespace)
        cname = self._container(pod, container)
        rt = self.world.runtimes.get(pod["metadata"]["uid"])
        ctr = (rt.containers.get(cname) or rt.init.get(cname)) if rt else None
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
        from sre_env.kube.timefmt import iso

        if timestamps:
            return "".join(f"{iso(t)[:-1]}.{int((t % 1) * 1e9):09d}Z {l}\n" for t, l in lines)
        return "".join(l + "\n" for _, l in lines)

    def exec(self, name: str, namespace: str, container: str | None, argv: list[str], stdin: str | None = None) -> ExecResult:
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
        # exec sees the environment the container was started with, not today's ConfigMaps/Secrets
        env = dict(ctr.started_env) if ctr.started_env is not None else resolve_env(world.store, pod, spec)[0]
        host = world.hosts[pod["spec"]["nodeName"]]
        ns = namespace

        uid = pod["metadata"]["uid"]

        def resolve(hostname: str) -> str | None:
            # the pod's own resolv.conf, CoreDNS config and network path decide (sre_env.sim.network.netmodel)
            src = client_for(world, uid)
            if src is not None:
                return resolve_from(world, src, hostname).ip
            r = resolve_route(world, ns, f"{hostname}:1")
            if r.ip:
                return r.ip
            svc = world.store.find("Service", hostname.split(".")[0], hostname.split(".")[1] if "." in hostname else ns)
            return svc["spec"].get("clusterIP") if svc else None

        def dns_probe(hostname: str) -> tuple[str, str]:
            src = client_for(world, uid)
            if src is None:
                return "10.96.0.10", "ok"
            ans = resolve_from(world, src, hostname)
            kind = {"TIMEOUT": "timeout", "SERVFAIL": "servfail", "REFUSED": "servfail"}.get(ans.rcode, "ok" if ans.ip else "nxdomain")
            return ans.server or "10.96.0.10", kind

        def connect(hostname: str, port: int) -> str | None:
            r = resolve_route(world, ns, f"{hostname}:{port}", client=uid)
            return None if r.ok > 0 else (r.error or "connection refused")

        def redis_at(hostname: str, port: int) -> Any:
            r = resolve_route(world, ns, f"{hostname}:{port}")
            server = world.pod_by_uid(r.servers[0][0]) if r.ok > 0 and r.servers else None
            return redis_model.state_for_pod(world, server) if server is not None else None

        volumes = pod_volume_paths(world, pod)
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
            dns_probe=dns_probe,
            connect=connect,
            files=mounted_files(world, pod, spec),
            mongo_users=user_store(world, pod) if cname == pod["spec"]["containers"][0]["name"] else None,
            on_mongo_users_changed=lambda: touch(world),
            redis=redis_model.state_for_pod(world, pod, cname),
            redis_at=redis_at,
            os_state=container_os_state(world, pod, spec),
            shell=SIM_SHELL,
        )
        model = next((m for a, m in world.app_models.items() if any(x.name == a and x.namespace == ns for x in world.apps)), None)
        if model is not None:
            view.app_tool = model.container_tool(world, pod, spec, env)
        from sre_env.sim.commands.container import run_container_command

        return run_container_command(view, list(argv), stdin)

    def _metrics_served(self, resource: str) -> None:
        """The aggregator answers for metrics.k8s.io only while its APIService is Available."""
        if not metrics_api_available(self.world):
            raise ApiError(503, "ServiceUnavailable", f"the server is currently unable to handle the request (get {resource}.metrics.k8s.io)")

    def top_pods(self, namespace: str | None) -> list[tuple[str, str, int, int]]:
        self._metrics_served("pods")
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
            cpu = pod_cpu_millicores(comp, load, _model_cpu_ms(world, pod, comp))
            limit = sum(cpu_millicores(str((c.get("resources") or {}).get("limits", {}).get("cpu", "0"))) for c in pod["spec"].get("containers") or ())
            if limit and all("cpu" in ((c.get("resources") or {}).get("limits") or {}) for c in pod["spec"].get("containers") or ()):
                cpu = min(cpu, limit)  # the CFS quota caps what the cgroup can use
            mem = sum(int(c.memory_mib * 1024 * 1024) for c in rt.containers.values() if c.state == "running")
            store = redis_model.state_for_pod(world, pod) if world.redis_states else None
            if store is not None:
                mem = max(mem, int(store.used_memory) + redis_model.RSS_OVERHEAD)  # redis' RSS follows its dataset
            out.append((pod["metadata"]["namespace"], pod["metadata"]["name"], cpu, mem))
        return out

    def top_nodes(self) -> list[tuple[str, int, int, int, int]]:
        self._metrics_served("nodes")
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
            now = world.clock.now
            if unit in ("kubelet", "kubelet.service"):
                host.kubelet_running = True
                host.journal.append((now, "kubelet", "Started kubelet: The Kubernetes Node Agent."))
                # the kubelet reads /var/lib/kubelet/config.yaml at start (eviction thresholds, ...)
                from sre_env.sim.kubelet.eviction import kubelet_started

                kubelet_started(world, host)
                if not host.kubelet_cert_valid():
                    host.journal.append((now, "kubelet", kubelet_x509_error(host, now)))
                update_node_conditions(world)
                return True
            if unit in ("chrony", "chrony.service", "chronyd"):
                if not host.chrony_running:
                    host.chrony_running = True
                    host.journal.append((now, "systemd", "Started chrony.service - chrony, an NTP client/server."))
                    if abs(host.clock_offset_s) > 1.0:
                        # chrony.conf's "makestep 1 3" steps a large offset on the first updates
                        host.journal.append((now, "chronyd", f"System clock wrong by {-host.clock_offset_s:.6f} seconds"))
                        host.journal.append((now, "chronyd", f"System clock was stepped by {-host.clock_offset_s:.6f} seconds"))
                        host.clock_offset_s = 0.0
                return True
            return unit in ("containerd", "containerd.service")

        view = HostView(node=host, now=world.clock.now, pods=pods, shell=SIM_SHELL, variant=world.variant_seed, local_volumes=volumes, restart_unit=restart_unit)
        from sre_env.sim.commands.host import run_host_command

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

    def inject_silent_corruption(self, node: str, device: str, *, fraction: float, paths: tuple[str, ...] = ()) -> None:
        """Reads of files under ``paths`` on ``device`` return wrong data now and then (no EIO)."""
        disk = self.world.hosts[node].disk(device)
        if disk is None:
            raise ValueError(f"node {node} has no device {device}")
        disk.corrupt_read_fraction = float(fraction)
        disk.bad_paths = tuple(paths)
        self.world.fault_epoch += 1

    def clear_silent_corruption(self, node: str, device: str) -> None:
        disk = self.world.hosts[node].disk(device)
        if disk is not None:
            disk.corrupt_read_fraction = 0.0
            self.world.fault_epoch += 1

    def inject_hardware_fault(self, node: str, kind: str, **params: Any) -> None:
        """Hardware state a test rig (or a broken part) imposes: ``nic_crc`` (fraction),
        ``nic_flap`` (down_s_per_min), ``ecc`` (per_hour, dimm) or ``clock`` (offset_s: system
        clock and RTC skewed, as after a bad manual ``date -s``/``hwclock --systohc``)."""
        host = self.world.hosts[node]
        if kind in ("nic_crc", "nic_flap"):
            host.nic_fault_since = self.world.clock.now
        if kind == "nic_crc":
            host.nic_crc_error_fraction = float(params["fraction"])
        elif kind == "nic_flap":
            host.nic_flap_down_s_per_min = float(params["down_s_per_min"])
        elif kind == "ecc":
            host.ecc_uncorrectable_per_hour = float(params["per_hour"])
            host.ecc_dimm = str(params.get("dimm", "CPU_SrcID#0_MC#0_Chan#1_DIMM#0"))
        elif kind == "clock":
            host.clock_offset_s = host.rtc_offset_s = float(params["offset_s"])
        elif kind == "tsc_unstable":
            # the clocksource watchdog catches the TSC drifting against the HPET and switches
            now = self.world.clock.now
            cpu = int(params.get("cpu", 3))
            skew = int(params.get("skew_ns", 62_500_000))
            host.kmsg.append((now, 4, f"clocksource: timekeeping watchdog on CPU{cpu}: Marking clocksource 'tsc' as unstable because the skew is too large:"))
            host.kmsg.append((now, 4, "clocksource:                       'hpet' wd_nsec: 503965440 wd_now: 3f0a8c2e wd_last: 3e2c1b53 mask: ffffffff"))
            host.kmsg.append((now, 4, f"clocksource:                       'tsc' cs_nsec: {503965440 + skew} cs_now: 2b8e5f3a7c9d cs_last: 2b8e2a1f4b10 mask: ffffffffffffffff"))
            host.kmsg.append((now, 4, "clocksource:                       Clocksource 'tsc' skewed {0} ns ({1} ms) over watchdog 'hpet' interval of 503965440 ns (503 ms)".format(skew, skew // 1_000_000)))
            host.kmsg.append((now, 4, "tsc: Marking TSC unstable due to clocksource watchdog"))
            host.kmsg.append((now, 6, "clocksource: Switched to clocksource hpet"))
            host.clocksource = "hpet"
        else:
            raise ValueError(f"unknown hardware fault {kind!r}")
        self.world.fault_epoch += 1

    def clear_hardware_fault(self, node: str, kind: str) -> None:
        host = self.world.hosts[node]
        if kind == "nic_crc":
            host.nic_crc_error_fraction = 0.0
        elif kind == "nic_flap":
            host.nic_flap_down_s_per_min = 0.0
        elif kind == "ecc":
            host.ecc_uncorrectable_per_hour = 0.0
        elif kind == "clock":
            host.clock_offset_s = host.rtc_offset_s = 0.0
        elif kind == "tsc_unstable":
            host.clocksource = "tsc"
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
        #: the model behind the API, for simulator-only scenarios and gates (sre_env.sim.model)
        self.model = SimModel(world)

    @property
    def now(self) -> float:
        return self.world.clock.now

    def advance(self, seconds: float) -> None:
        advance(self.world, seconds)

    def snapshot(self) -> bytes:
        return self.world.snapshot()

    def fork(self) -> "SimBackend":
        """A what-if copy for grading. Scheduled noise is not part of the what-if: graders
        judge the repair, not a pod that noise would have killed a minute later."""
        world = self.world.fork()
        world.clock.cancel("noise")
        return SimBackend(world)

    @classmethod
    def restore(cls, blob: bytes) -> "SimBackend":
        return cls(World.restore(blob))

    def adopt(self, other: SimBackend) -> None:
        """Take ``other``'s cluster as this backend's own: whoever holds this backend sees it from now on."""
        self.world, self.api, self.nodes, self.model = other.world, other.api, other.nodes, other.model

    def firing_alerts(self) -> list[str]:
        return [a.line() for a in alerts_of(self.world).firing(self.world.clock.now)]

    def deepcopy_objects(self) -> dict[str, list[Any]]:
        return {k: copy.deepcopy(self.world.store.list(k)) for k in self.world.store.kinds()}


def _model_cpu_ms(world: World, pod: Obj, comp: Any) -> float:
    """Extra CPU per request an app model adds to this pod's component (0 when none)."""
    if comp is None or not world.app_models:
        return 0.0
    ns = pod["metadata"]["namespace"]
    app = next((a for a in world.apps if a.namespace == ns), None)
    mods = getattr(world.app_models.get(app.name), "mods", None) if app is not None else None
    return float(getattr(mods, "cpu_ms", {}).get(comp.name, 0.0)) if mods is not None else 0.0
