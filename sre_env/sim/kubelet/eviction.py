"""The kubelet's eviction manager, driven by the thresholds in the node's kubelet config.

The kubelet reads ``/var/lib/kubelet/config.yaml`` when it starts (``systemctl
restart kubelet``, a reboot). Its ``evictionHard`` signals — ``memory.available``,
``nodefs.available``, ``imagefs.available`` — are compared every housekeeping
interval (10 s) with what the node really has; a crossed threshold sets the
node's ``MemoryPressure``/``DiskPressure`` condition (and the matching
``NoSchedule`` taint, as the node lifecycle controller adds it) and evicts one
pod per interval, ranked as the kubelet ranks them, with the kubelet's own
event and status message. Conditions clear only after
``evictionPressureTransitionPeriod`` (5 min) below the threshold.

Nodes whose config holds the defaults are never looked at, so the manager
costs nothing on a healthy cluster.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import yaml

from sre_env.kube.quantity import memory_bytes
from sre_env.kube.timefmt import iso
from sre_env.sim.kubelet.config import kubelet_start_error
from sre_env.sim.kubelet.node_status import update_node_conditions
from sre_env.sim.node.files import DEFAULT_KUBELET_CONFIG

if TYPE_CHECKING:
    from sre_env.sim.kernel.hosts import HostNode
    from sre_env.sim.kernel.world import World

__all__ = ["DEFAULT_EVICTION_HARD", "KUBELET_CONFIG", "EvictionState", "eviction_state", "eviction_pending", "eviction_thresholds", "kubelet_started", "run_eviction_managers", "signals"]

Obj = dict[str, Any]
KUBELET_CONFIG = "/var/lib/kubelet/config.yaml"
DEFAULT_EVICTION_HARD = {"imagefs.available": "15%", "memory.available": "100Mi", "nodefs.available": "10%", "nodefs.inodesFree": "5%"}
HOUSEKEEPING_S = 10.0
TRANSITION_S = 300.0
#: what the OS, kubelet and containerd use on a node, beside the pods
_SYSTEM_MEMORY = 900 * 1024 * 1024
_RESOURCE = {"memory.available": "memory", "nodefs.available": "ephemeral-storage", "imagefs.available": "ephemeral-storage", "nodefs.inodesFree": "inodes"}
_TAINT = {"memory": "node.kubernetes.io/memory-pressure", "disk": "node.kubernetes.io/disk-pressure"}


def _config_text(host: HostNode) -> str:
    text = host.files.get(KUBELET_CONFIG)
    return text if text is not None else DEFAULT_KUBELET_CONFIG


def eviction_thresholds(host: HostNode) -> dict[str, str]:
    """The ``evictionHard`` map of the node's kubelet config file (raises ValueError if it does not parse)."""
    try:
        cfg = yaml.safe_load(_config_text(host))
    except yaml.YAMLError as exc:
        raise ValueError(str(exc).replace("\n", " ")) from None
    if not isinstance(cfg, dict):
        raise ValueError("object 'Kind' is missing in config file")
    hard = cfg.get("evictionHard") or {}
    if not isinstance(hard, dict):
        raise ValueError("json: cannot unmarshal evictionHard into Go value of type map[string]string")
    return {str(k): str(v) for k, v in hard.items()}


@dataclass
class EvictionState:
    """The eviction managers with something to watch: their thresholds, and when each looks next."""

    #: node -> the kubelet's evictionHard thresholds (only nodes with non-default ones or pressure)
    nodes: dict[str, dict[str, str]] = field(default_factory=dict)
    #: node -> when its manager's next housekeeping is due
    next: dict[str, float] = field(default_factory=dict)


def eviction_state(world: World) -> EvictionState:
    return world.slot(EvictionState)


def eviction_pending(world: World) -> bool:
    """Whether any eviction manager has work this tick (a watched node, or a node near a threshold)."""
    state = world.peek(EvictionState)
    return bool(state is not None and state.nodes) or any(h.eviction_check for h in world.hosts.values())


def kubelet_started(world: World, host: HostNode) -> None:
    """The kubelet (re)starts: load its config; a config it cannot load keeps it down."""
    now = world.clock.now
    state = eviction_state(world).nodes
    try:
        hard = eviction_thresholds(host)
        problem = kubelet_start_error(host, yaml.safe_load(_config_text(host)) or {})
    except ValueError as exc:
        problem = f"failed to load kubelet config file, path: {KUBELET_CONFIG}, error: failed to load Kubelet config file {KUBELET_CONFIG}, error failed to decode: {exc}"
    if problem:
        host.kubelet_running = False
        host.journal.append((now, "kubelet", f'E{iso(now)[5:7]}{iso(now)[8:10]} {iso(now)[11:19]}.000000   {1100 + host.index}    run.go:72] "command failed" err="{problem}"'))
        host.journal.append((now, "systemd", "kubelet.service: Main process exited, code=exited, status=1/FAILURE"))
        host.journal.append((now, "systemd", "kubelet.service: Failed with result 'exit-code'."))
        return
    if hard != DEFAULT_EVICTION_HARD or host.memory_pressure or host.disk_pressure:
        state[host.name] = hard
    else:
        state.pop(host.name, None)
    eviction_state(world).next[host.name] = now


def _pods_on(world: World, node: str) -> list[Obj]:
    return [p for p in world.store.list("Pod") if p["spec"].get("nodeName") == node and not p["metadata"].get("deletionTimestamp") and (p.get("status") or {}).get("phase") not in ("Failed", "Succeeded")]


def _container_memory(world: World, pod: Obj) -> dict[str, float]:
    rt = world.runtimes.get(pod["metadata"]["uid"])
    if rt is None:
        return {}
    return {name: c.memory_mib * 1024 * 1024 for name, c in rt.containers.items() if c.state == "running"}


def _ephemeral_usage(pod: Obj, container: str) -> int:
    """Bytes a container writes to its writable layer and logs (small, stable per container)."""
    h = int(hashlib.blake2b(f"{pod['metadata']['uid']}/{container}".encode(), digest_size=4).hexdigest(), 16)
    return (24 + h % 480) * 1024


def signals(world: World, host: HostNode) -> dict[str, tuple[float, float]]:
    """signal -> (available, capacity) in bytes (inodes for inodesFree)."""
    used = _SYSTEM_MEMORY + sum(sum(_container_memory(world, p).values()) for p in _pods_on(world, host.name))
    root = host.disks[0]
    disk_avail = float(root.size_bytes - root.used_bytes)
    return {
        "memory.available": (float(host.memory_bytes) - used, float(host.memory_bytes)),
        "nodefs.available": (disk_avail, float(root.size_bytes)),
        "imagefs.available": (disk_avail, float(root.size_bytes)),
        "nodefs.inodesFree": (float(root.inodes_total - root.inodes_used), float(root.inodes_total)),
    }


def _threshold_value(value: str, capacity: float) -> float | None:
    value = value.strip()
    try:
        if value.endswith("%"):
            return capacity * float(value[:-1]) / 100.0
        return float(memory_bytes(value))
    except ValueError:
        return None


def _quantity(n: float) -> str:
    n = int(n)
    return f"{n // 1024}Ki" if n % 1024 == 0 else str(n)


def run_eviction_managers(world: World) -> None:
    state = eviction_state(world)
    nodes, nxt = state.nodes, state.next
    for name in sorted(world.hosts):
        host = world.hosts[name]
        if host.eviction_check:
            # the node's root disk came near a threshold: its manager starts watching it
            host.eviction_check = False
            try:
                nodes.setdefault(name, eviction_thresholds(host))
            except ValueError:
                pass
    now = world.clock.now
    for name in sorted(nodes):
        host = world.hosts.get(name)
        if host is None or not host.kubelet_running or now < nxt.get(name, 0.0):
            continue
        nxt[name] = now + HOUSEKEEPING_S
        _housekeeping(world, host, nodes[name])


def _housekeeping(world: World, host: HostNode, hard: dict[str, str]) -> None:
    now = world.clock.now
    sig = signals(world, host)
    crossed: list[tuple[str, float, float]] = []
    for signal, value in sorted(hard.items()):
        if signal not in sig:
            continue
        avail, cap = sig[signal]
        thr = _threshold_value(value, cap)
        if thr is not None and avail < thr:
            crossed.append((signal, thr, avail))
    last_seen = host.pressure_seen
    for kind in ("memory", "disk"):
        hit = any((s == "memory.available") == (kind == "memory") for s, _, _ in crossed)
        if hit:
            last_seen[kind] = now
        pressure = hit or (kind in last_seen and now - last_seen[kind] < TRANSITION_S)
        _set_pressure(world, host, kind, pressure)
    if not crossed:
        if not host.memory_pressure and not host.disk_pressure and hard == DEFAULT_EVICTION_HARD:
            eviction_state(world).nodes.pop(host.name, None)
        return
    signal, thr, avail = crossed[0]
    resource = _RESOURCE[signal]
    node_obj = world.store.find("Node", host.name)
    if node_obj is not None:
        world.event(node_obj, "Warning", "EvictionThresholdMet", f"Attempting to reclaim {resource}", "kubelet")
    stamp = f"I{iso(now)[5:7]}{iso(now)[8:10]} {iso(now)[11:19]}.000000     870"
    host.journal.append((now, "kubelet", f'{stamp} eviction_manager.go:366] "Eviction manager: attempting to reclaim" resourceName="{resource}"'))
    victims = _rank(world, host.name, resource)
    if not victims:
        host.journal.append((now, "kubelet", f'{stamp} eviction_manager.go:390] "Eviction manager: unable to evict any pods from the node"'))
        return
    host.journal.append((now, "kubelet", f'{stamp} eviction_manager.go:377] "Eviction manager: must evict pod(s) to reclaim" resourceName="{resource}"'))
    host.journal.append((now, "kubelet", f'{stamp} eviction_manager.go:395] "Eviction manager: pods ranked for eviction" pods=[' + ",".join(f'"{p["metadata"]["namespace"]}/{p["metadata"]["name"]}"' for p in victims[:8]) + "]"))
    _evict(world, victims[0], resource, thr, avail)
    host.journal.append((now, "kubelet", f'{stamp} eviction_manager.go:616] "Eviction manager: pod is evicted successfully" pod="{victims[0]["metadata"]["namespace"]}/{victims[0]["metadata"]["name"]}"'))


def _critical(pod: Obj) -> bool:
    return str(pod["spec"].get("priorityClassName", "")).startswith("system-") or int(pod["spec"].get("priority", 0) or 0) >= 2_000_000_000


def _rank(world: World, node: str, resource: str) -> list[Obj]:
    pods = [p for p in _pods_on(world, node) if not _critical(p) and p["metadata"]["uid"] in world.runtimes]

    def key(p: Obj) -> tuple[int, float, str]:
        if resource == "memory":
            usage = sum(_container_memory(world, p).values())
        else:
            usage = float(sum(_ephemeral_usage(p, c["name"]) for c in p["spec"].get("containers") or ()))
        # no pod here requests ephemeral storage or memory: all exceed their requests; then priority, then usage
        return (int(p["spec"].get("priority", 0) or 0), -usage, p["metadata"]["name"])

    return sorted(pods, key=key)


def _evict(world: World, pod: Obj, resource: str, thr: float, avail: float) -> None:
    now = world.clock.now
    usage = _container_memory(world, pod)
    parts = []
    for c in pod["spec"].get("containers") or ():
        used = usage.get(c["name"], 0.0) if resource == "memory" else _ephemeral_usage(pod, c["name"])
        parts.append(f"Container {c['name']} was using {int(used) // 1024}Ki, request is 0, has larger consumption of {resource}. ")
    message = f"The node was low on resource: {resource}. Threshold quantity: {_quantity(thr)}, available: {int(avail) // 1024}Ki. " + "".join(parts)
    world.event(pod, "Warning", "Evicted", message, "kubelet")
    rt = world.runtimes.pop(pod["metadata"]["uid"], None)
    statuses = []
    for c in pod["spec"].get("containers") or ():
        ctr = rt.containers.get(c["name"]) if rt else None
        if ctr is not None and ctr.state == "running":
            world.event(pod, "Normal", "Killing", f"Stopping container {c['name']}", "kubelet")
        statuses.append({
            "name": c["name"], "image": c.get("image", ""), "imageID": ctr.image_id if ctr else "", "containerID": ctr.container_id if ctr else "",
            "ready": False, "restartCount": ctr.restart_count if ctr else 0, "started": False,
            "state": {"terminated": {"exitCode": 137, "reason": "ContainerStatusUnknown", "message": "The container could not be located when the pod was terminated", "startedAt": iso(ctr.started_at if ctr and ctr.started_at is not None else now), "finishedAt": iso(now)}},
            "lastState": {},
        })
    status = dict(pod.get("status") or {})
    conds = [dict(c) for c in status.get("conditions") or () if c.get("type") != "DisruptionTarget"]
    for c in conds:
        if c.get("type") in ("Ready", "ContainersReady") and c.get("status") == "True":
            c.update({"status": "False", "reason": "PodFailed", "lastTransitionTime": iso(now)})
    conds.append({"type": "DisruptionTarget", "status": "True", "lastProbeTime": None, "lastTransitionTime": iso(now), "reason": "TerminationByKubelet", "message": message})
    status.update({"phase": "Failed", "reason": "Evicted", "message": message, "conditions": conds, "containerStatuses": statuses})
    pod["status"] = status
    world.store.touch(pod)
    world.runtime_epoch += 1


def _set_pressure(world: World, host: HostNode, kind: str, on: bool) -> None:
    if (host.memory_pressure if kind == "memory" else host.disk_pressure) == on:
        if on:
            _ensure_taint(world, host.name, _TAINT[kind])
        return
    if kind == "memory":
        host.memory_pressure = on
    else:
        host.disk_pressure = on
    update_node_conditions(world)
    node = world.store.find("Node", host.name)
    if node is None:
        return
    key = _TAINT[kind]
    taints = [t for t in node["spec"].get("taints") or () if t.get("key") != key]
    if on:
        taints.append({"key": key, "effect": "NoSchedule", "timeAdded": iso(world.clock.now)})
        world.event(node, "Normal", "NodeHasDiskPressure" if kind == "disk" else "NodeHasInsufficientMemory", f"Node {host.name} status is now: {'NodeHasDiskPressure' if kind == 'disk' else 'NodeHasInsufficientMemory'}", "kubelet")
    else:
        world.event(node, "Normal", "NodeHasNoDiskPressure" if kind == "disk" else "NodeHasSufficientMemory", f"Node {host.name} status is now: {'NodeHasNoDiskPressure' if kind == 'disk' else 'NodeHasSufficientMemory'}", "kubelet")
    if taints:
        node["spec"]["taints"] = taints
    else:
        node["spec"].pop("taints", None)
    world.store.touch(node)


def _ensure_taint(world: World, node_name: str, key: str) -> None:
    """The node lifecycle controller puts a removed pressure taint back while the condition holds."""
    node = world.store.find("Node", node_name)
    if node is None or any(t.get("key") == key for t in node["spec"].get("taints") or ()):
        return
    node["spec"]["taints"] = [*(node["spec"].get("taints") or []), {"key": key, "effect": "NoSchedule", "timeAdded": iso(world.clock.now)}]
    world.store.touch(node)
