"""The simulated world: one clock, the API objects, node hosts, runtimes, traffic, telemetry.

``World.tick()`` advances cluster time by one step and recomputes everything
from the layer below: controllers from objects, kubelets from pod specs,
endpoints from pod readiness, traffic from routes and capacity, telemetry from
traffic. The whole world is one picklable object: snapshot/restore/fork are a
pickle round trip.
"""

from __future__ import annotations

import copy
import heapq
import hashlib
import pickle
import zlib
from collections import deque
from typing import Any

import numpy as np

from sre_env.sim.logs import render as logfmt
from sre_env.sim.runtime import mongo_auth
from sre_env.telemetry.alerting import AlertState
from sre_env.apps.base import AppSpec, Component, register_spec
from sre_env.apps.manifests import app_manifests, namespace_object
from sre_env.sim.control.app_models import build_app_model
from sre_env.sim.control.cluster import (
    ClusterLayout,
    DEFAULT_LAYOUT,
    make_host_nodes,
    node_object,
)
from sre_env.sim.kernel.clock import SimClock
from sre_env.kube.timefmt import iso
from sre_env.sim.control.controllers import reconcile_all, reconcile_endpoints
from sre_env.sim.runtime.images import ImageCatalog, split_image
from sre_env.sim.node.faults import host_fault_key, host_faults_tick, node_request_failure
from sre_env.sim.node.oslimits import os_limits_tick, pod_limit_failure
from sre_env.sim.node.diskfill import cron_tick
from sre_env.sim.kubelet.sync import ContainerRuntime, PodRuntime, run_kubelets
from sre_env.sim.control.nodelifecycle import reconcile_node_lifecycle
from sre_env.sim.runtime.process import StartOutcome
from sre_env.kube.quantity import CPU_MS_PER_REQUEST_MS, cpu_millicores
from sre_env.sim.runtime import redis_model
from sre_env.sim.runtime.appconfig import configured_address
from sre_env.telemetry.metrics_store import MetricsStore
from sre_env.sim.network.routing import resolve_route
from sre_env.sim.network.netsystem import (
    allocate_for_pod,
    app_edge_objects,
    network_on_reboot,
    network_tick,
    network_revision,
    reconcile_daemonsets,
    system_network_objects,
)
from sre_env.sim.node.host import HostNode
from sre_env.sim.runtime.podenv import resolve_env
from sre_env.sim.control.priority import builtin_priority_classes
from sre_env.sim.control.sched_hooks import admit_pod
from sre_env.sim.control.admission import admit_pod as admission_chain
from sre_env.sim.control.namespaces import check_create_allowed
from sre_env.sim.control.addons import control_plane_tick, install_control_plane_addons
from sre_env.sim.control.scheduler import schedule_pending
from sre_env.sim.control.statefulsets import reconcile_statefulsets
from sre_env.sim.kernel.store import ObjectStore
from sre_env.sim.traffic.flow import TickResult, TrafficPlan, compile_plan, run_traffic

__all__ = ["World", "TICK_S", "SCRAPE_S"]

Obj = dict[str, Any]
TICK_S = 5.0
#: kube-prometheus' default scrape interval
SCRAPE_S = 30.0
_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


class World:
    def __init__(self, apps: tuple[AppSpec, ...] = (), layout: ClusterLayout = DEFAULT_LAYOUT, seed: int = 0) -> None:
        self.layout = layout
        self.clock = SimClock()
        self.store = ObjectStore(self.clock)
        self.images = ImageCatalog()
        self.rng = np.random.default_rng(seed)
        self.apps: tuple[AppSpec, ...] = tuple(apps)
        self.hosts: dict[str, HostNode] = {h.name: h for h in make_host_nodes(layout)}
        self.runtimes: dict[str, PodRuntime] = {}
        self.components: dict[tuple[str, str], Component] = {}
        self.last_load: dict[str, float] = {}
        self.metrics = MetricsStore(interval_s=SCRAPE_S, capacity=int(3600 // SCRAPE_S))
        self.alert_state = AlertState()
        self.client_history: dict[str, deque] = {}
        self.last_traffic: dict[str, TickResult] = {}
        self._plans: dict[str, TrafficPlan] = {}
        self._db_disks: dict[str, list] = {}
        #: (deployment uid, generation) -> pod-template-hash
        self.template_hashes: dict[tuple[str, int], str] = {}
        self._traffic_settled: dict[str, bool] = {}
        self._controllers_rev = -1
        self._ip_counters: dict[str, int] = {}
        self._svc_ip_counter = 10
        self.runtime_epoch = 0
        self.fault_epoch = 0
        self._next_scrape = 0.0
        self._carry = 0.0
        #: recent warning/error lines of every container, for the observation's log window
        self.notable_logs: deque = deque(maxlen=256)
        self._uid_index: dict[str, Obj] = {}
        self._uid_index_rev = -1
        #: resolved env per (pod uid, container); pods' specs never change in place
        self._env_cache: dict[tuple[str, str], dict[str, str]] = {}
        self._pod_err_key: tuple = ()
        #: pod uid -> share of its volume reads that fail (recomputed when faults or volumes change)
        self._pod_err: dict[str, float] = {}
        #: node-level failures (conntrack, NIC) per pod uid, and the error callers see
        self._pod_net_err: dict[str, float] = {}
        self.pod_error_text: dict[str, str] = {}
        self._host_fault_key: tuple = ()
        #: pods whose process is at a kernel limit (sre_env.sim.node.oslimits): uid -> (resource, limit, demand)
        self.os_limited: dict[str, tuple[str, int, int]] = {}
        #: pod uid -> (requests/s its CPU limit allows, node): pods' resources and nodes are fixed
        self._cpu_caps: dict[str, tuple[float, str]] = {}
        #: (app, component) -> (serving pods, queued requests): overload backlogs (sre_env.sim.traffic.flow)
        self.backlog: dict[tuple[str, str], tuple[tuple[str, ...], float]] = {}
        #: (app, cache component) -> (serving pods, warm share of its keys): restarts start cold
        self.cache_state: dict[tuple[str, str], tuple[tuple[str, ...], float]] = {}
        self.kubelet_rev = -1
        self.kubelet_wake = 0.0
        #: MongoDB user databases by data volume (sre_env.sim.runtime.mongo_auth); they live with the volume
        self.mongo_users: dict[str, Any] = {}
        #: (server pod uid, call operation) -> share of those calls the server rejects, and its error text
        #: (per-operation failures of stateful stores, e.g. redis refusing writes at maxmemory)
        self.op_errors: dict[tuple[str, str], tuple[float, str]] = {}
        #: container id -> in-memory state of a stateful store process (sre_env.sim.runtime.redis_model)
        self.redis_states: dict[str, Any] = {}
        self.variant_seed = seed
        #: app name -> its runtime model (feature flags, queues, database sessions; see AppSpec.model)
        self.app_models: dict[str, Any] = {}
        #: scheduled one-off events (noise, triggers): a heap of (due time, sequence, event with .tag and .fire(world))
        self.timers: list[tuple[float, int, Any]] = []
        self._timer_seq = 0
        #: app name -> multiplier on the load generator's offered rate (load spikes, floods)
        self.load_factor: dict[str, float] = {}
        #: noise that fired (sre_env.sim.noise), and the objects it created (graders ignore them)
        self.noise_log: list[dict[str, Any]] = []
        self.noise_objects: set[str] = set()
        for host in self.hosts.values():
            self.store.create(node_object(host, layout))
            host.journal.append((-120.0, "kubelet", "Started kubelet: The Kubernetes Node Agent."))
        self._update_node_conditions()
        for ns in ("default", "kube-system", "kube-public", "kube-node-lease", "local-path-storage"):
            self.store.create(namespace_object(ns))
        self.store.create(
            {
                "kind": "StorageClass",
                "apiVersion": "storage.k8s.io/v1",
                "metadata": {"name": "local-path", "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
                "provisioner": "rancher.io/local-path",
                "reclaimPolicy": "Delete",
                "volumeBindingMode": "WaitForFirstConsumer",
            }
        )
        self.store.create({"kind": "Service", "metadata": {"name": "kubernetes", "namespace": "default", "labels": {"component": "apiserver", "provider": "kubernetes"}}, "spec": {"type": "ClusterIP", "clusterIP": "10.96.0.1", "clusterIPs": ["10.96.0.1"], "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": 6443}], **_SERVICE_DEFAULTS}})
        self.store.create({"kind": "Service", "metadata": {"name": "kube-dns", "namespace": "kube-system", "labels": {"k8s-app": "kube-dns"}}, "spec": {"type": "ClusterIP", "clusterIP": "10.96.0.10", "selector": {"k8s-app": "kube-dns"}, "clusterIPs": ["10.96.0.10"], "ports": [{"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 53}, {"name": "dns-tcp", "port": 53, "protocol": "TCP", "targetPort": 53}], **_SERVICE_DEFAULTS}})
        for pc in builtin_priority_classes():
            self.store.create(pc)
        self.images.add("registry.k8s.io/coredns/coredns:v1.11.3")
        self.images.add("docker.io/rancher/local-path-provisioner:v0.0.30")
        for obj in system_network_objects(self):
            self.create(obj)
        self.create(_system_deployment("local-path-provisioner", "local-path-storage", "docker.io/rancher/local-path-provisioner:v0.0.30", {"app": "local-path-provisioner"}, 1, [], control_plane=True))
        install_control_plane_addons(self)
        for app in self.apps:
            self.install_app(app)

    # ------------------------------------------------------------------ building
    def install_app(self, app: AppSpec) -> None:
        register_spec(app)
        for comp in app.components:
            self.components[(app.namespace, comp.name)] = comp
            self.images.add(comp.image)
            if comp.command:
                self.images.add_program(comp.image, comp.command[0], comp)
        for ref in app.extra_images:
            self.images.add(ref)
        for node, labels, taints in app.node_setup:
            obj = self.store.get("Node", node)
            obj["metadata"].setdefault("labels", {}).update(dict(labels))
            obj["spec"].setdefault("taints", []).extend(dict(t) for t in taints)
            self.store.touch(obj)
        for obj in app_manifests(app):
            self.create(obj)
        for obj in app_edge_objects(app):
            self.create(obj)
        model = build_app_model(app)
        if model is not None:
            self.app_models[app.name] = model

    def create(self, obj: Obj, *, copy_in: bool = True) -> Obj:
        """Create through the API's admission path (cluster IPs, finalizers, defaults).

        ``copy_in=False``: ``obj`` was built for this call and nothing else holds it, so
        the store takes it as is (a pod from a template is already a deep copy).
        """
        obj = copy.deepcopy(obj) if copy_in else obj
        kind = obj.get("kind")
        check_create_allowed(self, obj)
        if kind == "Service":
            spec = obj.setdefault("spec", {})
            spec.setdefault("type", "ClusterIP")
            if not spec.get("clusterIP"):
                spec["clusterIP"] = self._allocate_service_ip()
            spec.setdefault("clusterIPs", [spec["clusterIP"]])
            for p in spec.get("ports") or ():
                p.setdefault("protocol", "TCP")
                p.setdefault("targetPort", p.get("port"))
            spec.setdefault("sessionAffinity", "None")
            # the API server's dual-stack and traffic-policy defaults (what `kubectl describe svc` prints)
            spec.setdefault("ipFamilies", ["IPv4"])
            spec.setdefault("ipFamilyPolicy", "SingleStack")
            spec.setdefault("internalTrafficPolicy", "Cluster")
        elif kind == "PersistentVolumeClaim":
            obj.setdefault("metadata", {}).setdefault("finalizers", ["kubernetes.io/pvc-protection"])
            obj.setdefault("status", {"phase": "Pending"})
        elif kind == "Pod":
            spec = obj.setdefault("spec", {})
            spec.setdefault("restartPolicy", "Always")
            spec.setdefault("dnsPolicy", "ClusterFirst")
            spec.setdefault("schedulerName", "default-scheduler")
            spec.setdefault("terminationGracePeriodSeconds", 30)
            spec.setdefault("tolerations", [
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            ])
            obj.setdefault("status", {"phase": "Pending", "qosClass": "BestEffort"})
            obj = admission_chain(self, obj)
            admit_pod(self, obj)
        elif kind in ("Deployment", "StatefulSet"):
            spec = obj.setdefault("spec", {})
            spec.setdefault("replicas", 1)
            spec.setdefault("revisionHistoryLimit", 10)
            if kind == "Deployment":
                spec.setdefault("strategy", {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}})
                spec.setdefault("progressDeadlineSeconds", 600)
        return self.store.create(obj, copy_in=False)

    def _allocate_service_ip(self) -> str:
        while True:
            self._svc_ip_counter += 1
            n = (self._svc_ip_counter * 7919) % 65000 + 20
            ip = f"10.96.{n // 250}.{n % 250 + 2}"
            if not any(s["spec"].get("clusterIP") == ip for s in self.store.iter("Service")):
                return ip

    def allocate_pod_ip(self, node: str, pod: Obj | None = None) -> str | None:
        """A pod's address: the node's own for host-network pods, else host-local IPAM's (None: range full)."""
        if pod is not None:
            return allocate_for_pod(self, node, pod)
        idx = self.hosts[node].index
        n = self._ip_counters.get(node, 1) + 1
        self._ip_counters[node] = n
        return f"{self.layout.pod_cidr_prefix}.{idx}.{(n % 250) + 2}"

    def name_suffix(self, length: int = 5) -> str:
        return "".join(_ALPHABET[i] for i in self.rng.integers(0, len(_ALPHABET), size=length))

    def new_pod_from_template(self, owner: Obj, template: Obj, prefix: str) -> Obj | None:
        meta = copy.deepcopy(template.get("metadata") or {})
        spec = copy.deepcopy(template.get("spec") or {})
        for _ in range(5):
            name = prefix + self.name_suffix()
            if self.store.find("Pod", name, owner["metadata"]["namespace"]) is None:
                break
        meta["name"] = name
        meta["namespace"] = owner["metadata"]["namespace"]
        meta["ownerReferences"] = [
            {"apiVersion": owner.get("apiVersion", "apps/v1"), "kind": owner["kind"], "name": owner["metadata"]["name"], "uid": owner["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}
        ]
        meta.pop("generateName", None)
        return self.create({"kind": "Pod", "apiVersion": "v1", "metadata": meta, "spec": spec}, copy_in=False)

    def delete_pod(self, pod: Obj) -> None:
        meta = pod["metadata"]
        if meta.get("deletionTimestamp"):
            return
        if not pod["spec"].get("nodeName") or pod["metadata"]["uid"] not in self.runtimes:
            self.store.remove("Pod", meta["name"], meta["namespace"])
            return
        meta["deletionTimestamp"] = iso(self.clock.now)
        meta["deletionGracePeriodSeconds"] = pod["spec"].get("terminationGracePeriodSeconds", 30)
        self.store.touch(pod)

    def bind_pod(self, pod: Obj, node: str) -> None:
        ns = pod["metadata"]["namespace"]
        for vol in pod["spec"].get("volumes") or ():
            claim = (vol.get("persistentVolumeClaim") or {}).get("claimName")
            if claim:
                pvc = self.store.find("PersistentVolumeClaim", claim, ns)
                if pvc is not None and not pvc["spec"].get("volumeName"):
                    self._provision(pvc, node)
        pod["spec"]["nodeName"] = node
        pod.setdefault("status", {})["conditions"] = [{"type": "PodScheduled", "status": "True", "lastProbeTime": None, "lastTransitionTime": iso(self.clock.now)}]
        self.store.touch(pod)
        self.event(pod, "Normal", "Scheduled", f"Successfully assigned {ns}/{pod['metadata']['name']} to {node}", "default-scheduler")

    def _provision(self, pvc: Obj, node: str) -> None:
        """local-path provisioner: a directory on the node's data disk, pinned to the node."""
        ns, name = pvc["metadata"]["namespace"], pvc["metadata"]["name"]
        pv_name = "pvc-" + pvc["metadata"]["uid"]
        host = self.hosts[node]
        base = "/mnt/data" if host.disk("sdb") else "/opt"
        path = f"{base}/local-path-provisioner/{pv_name}_{ns}_{name}"
        storage = pvc["spec"].get("resources", {}).get("requests", {}).get("storage", "1Gi")
        self.store.create(
            {
                "kind": "PersistentVolume",
                "apiVersion": "v1",
                "metadata": {"name": pv_name, "annotations": {"local.path.provisioner/selected-node": node, "pv.kubernetes.io/provisioned-by": "rancher.io/local-path"}, "finalizers": ["kubernetes.io/pv-protection"]},
                "spec": {
                    "accessModes": list(pvc["spec"].get("accessModes", ["ReadWriteOnce"])),
                    "capacity": {"storage": storage},
                    "claimRef": {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "name": name, "namespace": ns, "uid": pvc["metadata"]["uid"]},
                    "hostPath": {"path": path, "type": "DirectoryOrCreate"},
                    "nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": [node]}]}]}},
                    "persistentVolumeReclaimPolicy": "Delete",
                    "storageClassName": pvc["spec"].get("storageClassName", "local-path"),
                    "volumeMode": "Filesystem",
                },
                "status": {"phase": "Bound"},
            }
        )
        pvc["spec"]["volumeName"] = pv_name
        pvc["status"] = {"phase": "Bound", "accessModes": list(pvc["spec"].get("accessModes", ["ReadWriteOnce"])), "capacity": {"storage": storage}}
        pvc["metadata"].setdefault("annotations", {}).update({"pv.kubernetes.io/bind-completed": "yes", "pv.kubernetes.io/bound-by-controller": "yes", "volume.kubernetes.io/selected-node": node, "volume.kubernetes.io/storage-provisioner": "rancher.io/local-path"})
        self.store.touch(pvc)
        self.event(pvc, "Normal", "ProvisioningSucceeded", f"Successfully provisioned volume {pv_name}", "rancher.io/local-path_local-path-provisioner")
        self.fault_epoch += 1

    def on_volume_deleted(self, pv: Obj) -> None:
        self.fault_epoch += 1

    # ------------------------------------------------------------------ lookups used by layers
    def event(self, obj: Obj, type_: str, reason: str, message: str, source: str) -> None:
        self.store.record_event(obj, type_, reason, message, source)
        if source == "kubelet" and type_ == "Warning" and obj.get("kind") == "Pod":
            host = self.hosts.get(obj["spec"].get("nodeName", ""))
            if host is not None:
                host.journal.append((self.clock.now, "kubelet", _klog_line(self.clock.now, obj, reason, message)))

    def node_ready(self, name: str) -> bool:
        host = self.hosts.get(name)
        return host is not None and host.kubelet_connected()

    def component_for(self, pod: Obj) -> Component | None:
        labels = pod["metadata"].get("labels") or {}
        name = labels.get("io.kompose.service") or labels.get("service") or labels.get("app.kubernetes.io/component") or labels.get("app")
        if not name:
            return None
        return self.components.get((pod["metadata"]["namespace"], name))

    def image_id(self, image: str) -> str:
        repo, _ = split_image(image)
        digest = hashlib.blake2b(image.encode(), digest_size=32).hexdigest()
        full = repo if "." in repo.split("/")[0] else f"docker.io/{'library/' if '/' not in repo else ''}{repo}"
        return f"{full}@sha256:{digest}"

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

    def pod_env(self, uid: str, container: str) -> dict[str, str]:
        key = (uid, container)
        cached = self._env_cache.get(key)
        if cached is not None:
            return cached
        rt = self.runtimes.get(uid)
        ctr = rt.containers.get(container) if rt is not None else None
        if ctr is not None and ctr.state == "running" and ctr.started_env is not None:
            # a running process keeps the environment it started with
            return ctr.started_env
        pod = self.pod_by_uid(uid)
        if pod is None:
            return {}
        spec = next((c for c in pod["spec"].get("containers", []) if c["name"] == container), None)
        if spec is None:
            spec = pod["spec"]["containers"][0]
        env, _ = resolve_env(self.store, pod, spec)
        return env

    def start_dependency_error(self, pod: Obj, comp: Component, env: dict[str, str]) -> tuple[str, str] | None:
        """The first dependency a process dials at start-up and cannot reach (DB, consul), if any."""
        for dep in comp.dependencies:
            if dep.protocol not in ("mongodb", "consul") or not dep.critical:
                continue
            addr = env.get(dep.address_env, "") if dep.address_env else ""
            if not addr and dep.config_key:
                addr = configured_address(self, pod, comp, dep, starting=True) or ""
            route = resolve_route(self, pod["metadata"]["namespace"], addr or f"{dep.service}:{dep.port}", dep.port, client=pod["metadata"]["uid"])
            if route.ok <= 0.0:
                return route.target, route.error or "connection refused"
        return None

    def volume_read_error_fraction(self, pod: Obj) -> float:
        """Worst share of failing reads over the volumes a pod mounts."""
        return max((max(disk.read_error_fraction(path), disk.corruption_fraction(path)) for _, disk, path in self.pod_volume_paths(pod)), default=0.0)

    def pod_volume_disks(self, pod: Obj) -> list[tuple[str, Any]]:
        """(node, Disk) under each PersistentVolume the pod mounts."""
        return [(node, disk) for node, disk, _ in self.pod_volume_paths(pod)]

    def pod_volume_paths(self, pod: Obj) -> list[tuple[str, Any, str]]:
        """(node, Disk, host path) of each PersistentVolume the pod mounts."""
        out = []
        ns = pod["metadata"]["namespace"]
        for vol in pod["spec"].get("volumes") or ():
            claim = (vol.get("persistentVolumeClaim") or {}).get("claimName")
            if not claim:
                continue
            pvc = self.store.find("PersistentVolumeClaim", claim, ns)
            pv = self.store.find("PersistentVolume", pvc["spec"].get("volumeName", "")) if pvc else None
            if pv is None:
                continue
            node = pv["metadata"].get("annotations", {}).get("local.path.provisioner/selected-node") or pod["spec"].get("nodeName")
            host = self.hosts.get(node)
            if host is not None:
                path = pv["spec"].get("hostPath", {}).get("path", "/")
                out.append((node, host.disk_for_path(path), path))
        return out

    def retry_limit(self, comp: Component, uids: tuple[str, ...]) -> int:
        """Client retries of failed upstream calls, from the process's environment (``RETRY_MAX``).

        A modelling convention of sre-env's apps: their clients honour ``RETRY_MAX``
        (absent: no retries), as gRPC retry policies or HTTP client settings would.
        """
        for uid in uids[:1]:
            raw = self.pod_env(uid, comp.container).get("RETRY_MAX", "")
            try:
                return max(0, min(int(raw), 20))
            except ValueError:
                return 0
        return 0

    def go_memory_limit_mib(self, comp: Component, uids: tuple[str, ...]) -> float:
        """The Go runtime's soft memory limit from ``GOMEMLIMIT`` (e.g. ``96MiB``), MiB; 0 when unset."""
        for uid in uids[:1]:
            raw = self.pod_env(uid, comp.container).get("GOMEMLIMIT", "").strip()
            units = {"B": 1 / 2**20, "KiB": 1 / 1024, "MiB": 1.0, "GiB": 1024.0, "TiB": 1024.0**2}
            for unit in ("KiB", "MiB", "GiB", "TiB", "B"):
                if raw.endswith(unit):
                    try:
                        return max(float(raw[: -len(unit)]) * units[unit], 0.0)
                    except ValueError:
                        return 0.0
            return 0.0
        return 0.0

    def serving_capacity(self, comp: Component, uids: tuple[str, ...]) -> float:
        """Requests/s the pods can serve: each is bounded by the component's capacity and by
        the CPU its limit allows (a CFS quota below the work throttles it)."""
        total = 0.0
        cache = self._cpu_caps
        hosts = self.hosts
        for uid in uids:
            hit = cache.get(uid)
            if hit is None:
                pod = self.pod_by_uid(uid)
                hit = cache[uid] = (self._cpu_capacity(comp, uid), (pod or {}).get("spec", {}).get("nodeName", ""))
            host = hosts.get(hit[1])
            total += hit[0] * (host.cpu_efficiency if host is not None else 1.0)
        return total

    def _cpu_capacity(self, comp: Component, uid: str) -> float:
        pod = self.pod_by_uid(uid)
        limit = 0
        if pod is not None:
            for ctr in pod["spec"].get("containers") or ():
                if ctr.get("name") == comp.container:
                    limit = cpu_millicores(((ctr.get("resources") or {}).get("limits") or {}).get("cpu", 0))
        if limit <= 0:
            return comp.capacity_rps
        # the inverse of the CPU model in telemetry.export_host.pod_cpu_millicores
        return min(comp.capacity_rps, max(limit - 1, 0) / (max(comp.latency_ms, 0.01) * CPU_MS_PER_REQUEST_MS))

    def pod_error_fraction(self, uid: str) -> float:
        disk = self._pod_err.get(uid, 0.0)
        net = self._pod_net_err.get(uid, 0.0) if self._pod_net_err else 0.0
        return disk + net - disk * net if net else disk

    @property
    def routing_revision(self) -> tuple[int, ...]:
        """Changes whenever a route could: services, endpoints, pod set, volumes, runtimes, faults."""
        kr = self.store.kind_revision
        return (kr.get("Service", 0), kr.get("Endpoints", 0), self._pod_set_revision(), kr.get("PersistentVolume", 0), kr.get("PersistentVolumeClaim", 0), self.runtime_epoch, self.fault_epoch, *network_revision(self))

    def _pod_set_revision(self) -> int:
        return self.store.membership_revision.get("Pod", 0)

    # ------------------------------------------------------------------ logs
    def container_log(self, pod: Obj, ctr: ContainerRuntime, event: str, t: float, fields: dict[str, Any]) -> None:
        comp = self.component_for(pod)
        dialect = comp.log_format if comp else "go-service"
        fields = dict(fields)
        if comp is not None:
            fields.setdefault("service", comp.name)
            fields.setdefault("port", comp.listen_port)
        variant = zlib.crc32(f"{self.variant_seed}/{pod['metadata']['uid']}/{len(ctr.log)}/{event}".encode())
        if event == "raw":
            # a line its program model rendered itself (sidecars, init scripts: sre_env.sim.runtime.programs)
            lines = [str(fields.get("line", ""))]
        elif event == "startup" and not fields.get("partial"):
            lines = logfmt.component_startup_lines(dialect, t, fields, variant)
        else:
            lines = [logfmt.render(dialect, event, t, fields, variant)]
        meta = pod["metadata"]
        for line in lines:
            if not line:
                continue  # the process prints nothing for this event
            ctr.log.append((t, line))
            if is_notable(line):
                self.notable_logs.append((t, meta["namespace"], meta["name"], line))

    def container_raw_log(self, pod: Obj, ctr: ContainerRuntime, t: float, line: str) -> None:
        """Append an already-formatted line to a container's log."""
        ctr.log.append((t, line))
        if is_notable(line):
            meta = pod["metadata"]
            self.notable_logs.append((t, meta["namespace"], meta["name"], line))

    # ------------------------------------------------------------------ time
    def schedule(self, at: float, event: Any) -> None:
        """Fire ``event.fire(self)`` at the first tick at or after ``at`` (events must pickle)."""
        self._timer_seq += 1
        heapq.heappush(self.timers, (float(at), self._timer_seq, event))

    def cancel_timers(self, tag: str) -> int:
        """Drop every pending event tagged ``tag``; returns how many were dropped."""
        kept = [t for t in self.timers if getattr(t[2], "tag", "") != tag]
        dropped = len(self.timers) - len(kept)
        if dropped:
            heapq.heapify(kept)
            self.timers = kept
        return dropped

    def set_load_factor(self, app_name: str, factor: float) -> None:
        self.load_factor[app_name] = float(factor)
        self._traffic_settled[app_name] = False

    def tick(self, dt: float = TICK_S) -> None:
        self.clock.now += dt
        while self.timers and self.timers[0][0] <= self.clock.now:
            heapq.heappop(self.timers)[2].fire(self)
        reconcile_node_lifecycle(self)
        host_faults_tick(self)
        if self.os_limited:
            os_limits_tick(self)
        cron_tick(self)
        control_plane_tick(self)
        dirty = self.store.take_dirty()
        if dirty:
            reconcile_all(self, dirty)
            self._reconcile_statefulsets(dirty)
            reconcile_daemonsets(self, dirty)
            if any(k in ("Pod", "Node", "PersistentVolumeClaim") for k, _, _ in dirty) or any(k == "Pod" for k, _, _ in self.store.dirty):
                schedule_pending(self)
        if run_kubelets(self):
            self.runtime_epoch += 1
        # endpoints follow pod readiness written by the kubelets in this same tick
        changed = dict(dirty)
        changed.update(self.store.dirty)
        if changed:
            reconcile_endpoints(self, changed)
        self._run_traffic(dt)
        if self.clock.now >= self._next_scrape:
            self._scrape()
            self._next_scrape = self.clock.now + SCRAPE_S
        self.store.prune_events()

    def reboot_node(self, name: str) -> None:
        """A node reboot: runtime-only host changes are lost and every container restarts in place.

        Pods stay bound to the node (a reboot does not reschedule them); the kubelet
        starts their containers again, which counts as a restart.
        """
        from sre_env.sim.node.files import sysctl_files
        from sre_env.sim.node.host import default_sysctls

        host = self.hosts[name]
        host.sysctls = {**default_sysctls(), **host.persistent_sysctls, **sysctl_files(host)}
        network_on_reboot(self, name)
        host.journal.append((self.clock.now, "systemd", "-- Boot --"))
        # units come back as enabled; without NTP the clock is whatever the RTC says
        host.kubelet_running = "kubelet" not in host.disabled_units
        if host.kubelet_running:
            from sre_env.sim.kubelet.eviction import kubelet_started

            kubelet_started(self, host)
        host.chrony_running = "chrony" not in host.disabled_units
        host.clock_offset_s = 0.0 if host.chrony_running else host.rtc_offset_s
        if host.kubelet_running:
            self._update_node_conditions()
        now = self.clock.now
        for pod in self.store.iter("Pod"):
            if pod["spec"].get("nodeName") != name:
                continue
            rt = self.runtimes.get(pod["metadata"]["uid"])
            if rt is None:
                continue
            for ctr in rt.containers.values():
                if ctr.state == "running":
                    ctr.last_terminated = {"exitCode": 255, "reason": "Unknown", "startedAt": iso(ctr.started_at or now), "finishedAt": iso(now), "containerID": ctr.container_id}
                    ctr.ready = False
                    ctr.serve_at = ctr.exit_at = None
                    ctr.pending_logs = []
                    ctr.state, ctr.wake_at, ctr.since = "backoff", now + 20.0, now
                    ctr.waiting_reason, ctr.waiting_message = "ContainerCreating", ""
            if rt.init:
                # a new sandbox runs its init containers again before the app's
                rt.initialized = False
                for ictr in rt.init.values():
                    ictr.state, ictr.since, ictr.exit_at, ictr.serve_at, ictr.pending_logs = "creating", now, None, None, []
            rt.wake_at = min(rt.wake_at, now + 20.0)
            rt.seen_rv = ""
        self.kubelet_wake = min(self.kubelet_wake, now)
        self.runtime_epoch += 1

    def _reconcile_statefulsets(self, dirty: dict[tuple[str, str, str], None]) -> None:
        only: set[tuple[str, str]] = set()
        for kind, ns, name in dirty:
            if kind == "StatefulSet":
                only.add((ns, name))
            elif kind == "Pod":
                pod = self.store.find("Pod", name, ns)
                ref = next((r for r in (pod["metadata"].get("ownerReferences") or ()) if r.get("kind") == "StatefulSet"), None) if pod else None
                if ref:
                    only.add((ns, ref["name"]))
                elif pod is None and name.rsplit("-", 1)[-1].isdigit():
                    only.add((ns, name.rsplit("-", 1)[0]))
        if only:
            reconcile_statefulsets(self, only)

    def advance(self, seconds: float) -> None:
        """Let ``seconds`` of cluster time pass; fractions of a tick carry over to the next call."""
        self._carry += max(float(seconds), 0.0)
        while self._carry >= TICK_S - 1e-9:
            self._carry -= TICK_S
            self.tick()

    def _update_node_conditions(self) -> None:
        for node in self.store.list("Node"):
            host = self.hosts[node["metadata"]["name"]]
            conds = _node_conditions(host, self.clock.now, node.get("status", {}).get("conditions") or [])
            if conds != node["status"].get("conditions"):
                node["status"]["conditions"] = conds
                self.store.touch(node)

    # ------------------------------------------------------------------ traffic
    def _compute_pod_errors(self) -> None:
        err: dict[str, float] = {}
        net: dict[str, float] = {}
        self.os_limited = {}
        text: dict[str, str] = {}
        per_node: dict[str, list[str]] = {}
        for pod in self.store.iter("Pod"):
            uid = pod["metadata"]["uid"]
            frac = self.volume_read_error_fraction(pod)
            if frac > 0:
                err[uid] = frac
            bug = self._release_defect(pod)
            if bug is not None:
                err[uid] = max(err.get(uid, 0.0), bug[0])
                text[uid] = bug[1]
            limited = pod_limit_failure(self, pod)
            if limited is not None:
                err[uid] = max(err.get(uid, 0.0), limited[0])
                text[uid] = limited[1]
            node = pod["spec"].get("nodeName")
            if node:
                per_node.setdefault(node, []).append(uid)
        now = self.clock.now
        for node, uids in per_node.items():
            host = self.hosts.get(node)
            if host is None:
                continue
            frac, why = node_request_failure(host, now, len(uids))
            if frac > 0:
                for uid in uids:
                    net[uid] = frac
                    text[uid] = why
        self._pod_err = err
        self._pod_net_err = net
        self.pod_error_text = text

    def _release_defect(self, pod: Obj) -> tuple[float, str] | None:
        """A bug in the image version the pod's app container runs (sre_env.sim.runtime.images)."""
        containers = pod["spec"].get("containers") or ()
        if not containers or not containers[0].get("command"):
            return None
        return self.images.defect(containers[0].get("image", ""), str(containers[0]["command"][0]))

    def _run_traffic(self, dt: float) -> None:
        hkey = host_fault_key(self)
        if hkey != self._host_fault_key:
            # node-level failure shares changed (a sysctl, a NIC): recompute routes and errors
            self._host_fault_key = hkey
            self.fault_epoch += 1
        rev = self.routing_revision
        for app in self.apps:
            plan = self._plans.get(app.name)
            fresh = plan is None or plan.revision != rev
            if fresh:
                err_key = (self.fault_epoch, self.store.membership_revision.get("Pod", 0), self.store.kind_revision.get("PersistentVolume", 0), self.store.kind_revision.get("PersistentVolumeClaim", 0))
                if err_key != self._pod_err_key:
                    self._compute_pod_errors()
                    self._pod_err_key = err_key
                plan = self._plans[app.name] = compile_plan(self, app)
                self._db_disks[app.name] = self._database_disks(app, plan)
            prev = self.last_traffic.get(app.name)
            if not fresh and prev is not None and self._traffic_settled.get(app.name):
                res = prev  # same routes, same load: the same flow as last tick
            else:
                before = dict(self.last_load)
                res = run_traffic(self, app, plan, dt)
                self._traffic_settled[app.name] = before == self.last_load and not res.queued
            self.last_traffic[app.name] = res
            model = self.app_models.get(app.name)
            if model is not None:
                model.tick(self, app, plan, res, dt)
            hist = self.client_history.setdefault(app.name, deque(maxlen=240))
            hist.append((self.clock.now, res.client_success, res.client_latency_ms))
            self._apply_side_effects(app, plan, res, dt)
        network_tick(self)

    def _apply_side_effects(self, app: AppSpec, plan: TrafficPlan, res: TickResult, dt: float) -> None:
        now = self.clock.now
        if redis_model.has_redis(app):
            redis_model.update(self, app, plan, res, dt)
        # disk I/O of database pods, and read errors where a disk is failing
        for comp, uid, pod, disks in self._db_disks.get(app.name, ()):
            if True:
                rps = res.pod_rps.get(uid, 0.0)
                for node, disk in disks:
                    reads = rps * 2.0 * dt
                    disk.reads_total += reads
                    disk.writes_total += rps * 0.2 * dt
                    disk.read_bytes_total += reads * 4096
                    disk.last_reads_per_s = rps * 2.0
                    disk.last_writes_per_s = rps * 0.2
                    frac = self._pod_err.get(uid, 0.0)
                    if frac > 0 and reads > 0 and disk.bad_read_fraction <= 0.0:
                        # silent corruption: no I/O error, nothing for the kernel or SMART to count;
                        # WiredTiger's block checksums catch it
                        self._schedule_io_abort(pod, uid, comp, disk)
                    elif frac > 0 and reads > 0:
                        failed = reads * frac
                        disk.read_errors_total += failed
                        disk.pending_sectors = max(disk.pending_sectors, len(disk.bad_sectors))
                        disk.reported_uncorrect = int(disk.read_errors_total)
                        disk.error_ticks.append((now, int(round(failed))))
                        self._schedule_io_abort(pod, uid, comp, disk)
        # callers log the dependency errors they see (one line per edge per tick)
        for caller, callee, target, error, failed in res.failed_edges:
            if failed <= 0.01:
                continue
            fields = {"target": target, "error": error, "phase": "request"}
            if error.startswith("dial tcp"):
                fields["dial"] = error
            self._log_serving(plan, caller, "dependency_error", fields)
            if error == mongo_auth.AUTH_FAILED:
                mongo_auth.note_edge_failure(self, plan, caller, callee, error)
        if res.client_success < 0.99 and res.failed_edges:
            caller, callee, target, error, _ = res.failed_edges[0]
            rtype = next((r for r in app.requests if any(c.caller == caller and c.callee == callee for c in r.calls)), app.requests[0])
            if res.failed_requests:
                # the request type that fails most, and the first failing edge on its path
                worst = max(app.requests, key=lambda r: res.failed_requests.get(r.name, 0.0))
                edge = next((e for e in res.failed_edges if any(c.caller == e[0] and c.callee == e[1] for c in worst.calls)), None)
                if edge is not None:
                    rtype, (caller, callee, target, error, _) = worst, edge
            if caller == app.entrypoint and error.startswith("dial tcp"):
                grpc_error = f'rpc error: code = Unavailable desc = connection error: desc = "transport: Error while dialing {error}"'
            else:
                grpc_error = f"rpc error: code = Unknown desc = {callee if caller == app.entrypoint else caller}: {error}"
            self._log_serving(plan, app.entrypoint, "request", {"method": rtype.method, "path": rtype.path, "status": 500, "latency_ms": round(res.client_latency_ms, 1), "grpc_error": grpc_error})

    def _log_serving(self, plan: TrafficPlan, comp: str, event: str, fields: dict[str, Any]) -> None:
        now = self.clock.now
        for uid in plan.serving.get(comp, ())[:1]:
            rt = self.runtimes.get(uid)
            pod = self.pod_by_uid(uid)
            if rt is None or pod is None:
                continue
            for ctr in rt.containers.values():
                if ctr.state == "running":
                    self.container_log(pod, ctr, event, now, fields)

    def kill_container(self, pod: Obj, rt: Any, ctr: ContainerRuntime, *, exit_code: int, reason: str = "Error") -> None:
        """The container's process dies now (a signal from outside: OOM killer, SIGBUS, operator)."""
        now = self.clock.now
        ctr.outcome = StartOutcome(exit_after=0.0, exit_code=exit_code, reason=reason)
        ctr.exit_at = now
        rt.wake_at = min(rt.wake_at, now)
        self.kubelet_wake = min(self.kubelet_wake, now)

    def _schedule_io_abort(self, pod: Obj, uid: str, comp: Component, disk: Any) -> None:
        """A read that hits a bad sector makes WiredTiger panic and mongod abort (fassert 50853)."""
        rt = self.runtimes.get(uid)
        if rt is None:
            return
        now = self.clock.now
        for ctr in rt.containers.values():
            if ctr.state != "running" or not ctr.serving(now) or ctr.exit_at is not None:
                continue
            h = int(hashlib.blake2b(f"{self.variant_seed}/{uid}/{ctr.restart_count}".encode(), digest_size=4).hexdigest(), 16)
            crash = now + 10.0 + (h % 35)
            sector = disk.bad_sectors[h % len(disk.bad_sectors)] if disk.bad_sectors else 0
            fields = {"offset": sector * 512, "device": disk.device, "path": f"{comp.data_path}/collection-{h % 9}-{(h >> 8) % 10**18}.wt", "error": "Input/output error", "errno": 5}
            read_event = "disk_read_error"
            if disk.bad_read_fraction <= 0.0:
                read_event = "checksum_error"
                fields.update(offset=4096 * (h % 50_000), got=f"{h & 0xFFFFFFFF:08x}", want=f"{(h * 2654435761) & 0xFFFFFFFF:08x}")
            ctr.outcome = StartOutcome(exit_after=0.0, exit_code=134, reason="Error")
            ctr.exit_at = crash
            ctr.pending_logs = sorted(
                ctr.pending_logs
                + [(crash - 6.0, read_event, fields), (crash - 1.0, read_event, fields), (crash, "wt_panic", fields), (crash, "fatal_assertion", fields), (crash, "abort", fields)],
                key=lambda e: e[0],
            )
            rt.wake_at = min(rt.wake_at, crash - 6.0)
            self.kubelet_wake = min(self.kubelet_wake, rt.wake_at)

    def _database_disks(self, app: AppSpec, plan: TrafficPlan) -> list[tuple[Component, str, Obj, list]]:
        out = []
        for comp in app.components:
            if not comp.volume_claim:
                continue
            for uid in plan.serving.get(comp.name, ()):
                pod = self.pod_by_uid(uid)
                if pod is not None:
                    out.append((comp, uid, pod, self.pod_volume_disks(pod)))
        return out

    def service_sample(self, namespace: str, service: str, t: float) -> tuple[float, float, float] | None:
        """(requests/s, error ratio, p99 latency ms) of a service at the last scrape at or before ``t``.

        The stable accessor for lazily generated telemetry (logs, traces): whatever the
        metric storage becomes, this keeps answering.
        """
        return self._sample_at(t, (f"rps{{namespace={namespace},service={service}}}", f"error_ratio{{namespace={namespace},service={service}}}", f"latency_p99_ms{{namespace={namespace},service={service}}}"))

    def client_sample(self, namespace: str, t: float) -> tuple[float, float, float] | None:
        """(offered requests/s, success ratio, p99 latency ms) seen by the load generator at ``t``."""
        return self._sample_at(t, (f"client_rps{{namespace={namespace}}}", f"client_success_ratio{{namespace={namespace}}}", f"client_latency_p99_ms{{namespace={namespace}}}"))

    def _sample_at(self, t: float, names: tuple[str, str, str]) -> tuple[float, float, float] | None:
        ring = self.metrics.recorded
        n = min(ring.rows, ring.capacity)
        if n == 0:
            return None
        for back in range(n):
            row = (ring.rows - 1 - back) % ring.capacity
            if ring.times[row] <= t:
                out = []
                for name in names:
                    col = ring.index.get(name)
                    v = float(ring.data[row, col]) if col is not None else float("nan")
                    out.append(0.0 if v != v else v)
                return (out[0], out[1], out[2])
        return None

    def client_error_ratio(self, app_name: str, window_s: float = 60.0) -> float | None:
        hist = self.client_history.get(app_name)
        if not hist:
            return None
        now = self.clock.now
        vals = [s for t, s, _ in hist if t > now - window_s]
        return 1.0 - sum(vals) / len(vals) if vals else None

    def client_p99_ms(self, app_name: str, window_s: float = 60.0) -> float | None:
        hist = self.client_history.get(app_name)
        if not hist:
            return None
        now = self.clock.now
        vals = [lat for t, _, lat in hist if t > now - window_s]
        return max(vals) * 2.2 if vals else None

    # ------------------------------------------------------------------ telemetry
    def _scrape(self) -> None:
        """Every exporter's samples into the TSDB (sre_env.telemetry.exporters), then the alert rules."""
        self.metrics.scrape(self)
        self.alert_state.evaluate(self)

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


#: the Service fields the API server defaults (the two bootstrap Services are stored without the create path)
_SERVICE_DEFAULTS: Obj = {"sessionAffinity": "None", "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack", "internalTrafficPolicy": "Cluster"}


def _node_conditions(host: HostNode, now: float, old: list[Obj]) -> list[Obj]:
    prev = {c["type"]: c for c in old}
    t = iso(now)

    def cond(type_: str, status: str, reason: str, message: str) -> Obj:
        p = prev.get(type_)
        transition = p["lastTransitionTime"] if p and p["status"] == status else t
        return {"type": type_, "status": status, "lastHeartbeatTime": t if not p else p["lastHeartbeatTime"], "lastTransitionTime": transition, "reason": reason, "message": message}

    ready = host.kubelet_connected()
    return [
        # set by the kubelet's eviction manager (sre_env.sim.kubelet.eviction) when a threshold is crossed
        cond("MemoryPressure", "True", "KubeletHasInsufficientMemory", "kubelet has insufficient memory available") if getattr(host, "memory_pressure", False) else cond("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
        cond("DiskPressure", "True", "KubeletHasDiskPressure", "kubelet has disk pressure") if getattr(host, "disk_pressure", False) else cond("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
        cond("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
        cond("Ready", "True" if ready else "Unknown", "KubeletReady" if ready else "NodeStatusUnknown", "kubelet is posting ready status" if ready else "Kubelet stopped posting node status."),
    ]


def _system_deployment(name: str, ns: str, image: str, labels: dict[str, str], replicas: int, ports: list[tuple[str, int, str]], control_plane: bool) -> Obj:
    spec: Obj = {
        "containers": [
            {
                "name": name,
                "image": image,
                "ports": [{"name": n, "containerPort": p, "protocol": proto} for n, p, proto in ports],
                "resources": {"requests": {"cpu": "100m", "memory": "70Mi"}},
            }
        ],
        "priorityClassName": "system-cluster-critical",
    }
    if control_plane:
        spec["tolerations"] = [{"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}]
        spec["nodeSelector"] = {"kubernetes.io/os": "linux"}
    return {
        "kind": "Deployment",
        "apiVersion": "apps/v1",
        "metadata": {"name": name, "namespace": ns, "labels": dict(labels)},
        "spec": {"replicas": replicas, "selector": {"matchLabels": dict(labels)}, "template": {"metadata": {"labels": dict(labels)}, "spec": spec}},
    }
