"""The cluster's networking add-ons and the world's hooks into the network model.

kind installs CoreDNS (with its ``coredns`` ConfigMap), kube-proxy as a
DaemonSet, and — following kind's ingress guide — ingress-nginx on the
control-plane node (labelled ``ingress-ready=true``). This module builds those
objects and holds the few calls the world makes into the network model
(pod addresses, reboots, route revisions), so the world stays a list of hooks.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sre_env.sim.network import dns, ingress, kubeproxy, nodenet

if TYPE_CHECKING:
    from sre_env.apps.base import AppSpec
    from sre_env.sim.kernel.world import World

__all__ = ["system_network_objects", "app_edge_objects", "allocate_for_pod", "sandbox_failed", "network_on_reboot", "network_tick"]

Obj = dict[str, Any]


@dataclass
class _NetSystemState:
    """What the network add-ons remember between ticks."""

    #: pod uid -> when the kubelet last tried (and failed) to set up its sandbox's network
    sandbox_retry: dict[str, float] = field(default_factory=dict)
    #: the coredns ConfigMap's resourceVersion CoreDNS last reloaded (once one was seen)
    corefile_seen: bool = False
    corefile_rv: str | None = None
    #: the ConfigMaps revision the reload check last ran at
    configmap_rev: int | None = None
    #: (ingress, app, error or request type) -> when ingress-nginx last logged it
    ingress_logged: dict[tuple[str, str, str], float] = field(default_factory=dict)


def system_network_objects(world: "World") -> list[Obj]:
    """CoreDNS, kube-proxy and ingress-nginx, ready for ``world.create``; registers their images."""
    for image in (dns.COREDNS_IMAGE, kubeproxy.KUBE_PROXY_IMAGE, ingress.CONTROLLER_IMAGE):
        world.images.add(image)
    for node in world.store.iter("Node"):
        if "node-role.kubernetes.io/control-plane" in (node["metadata"].get("labels") or {}):
            node["metadata"]["labels"]["ingress-ready"] = "true"
            world.store.touch(node)
    return [*dns.coredns_objects(), *kubeproxy.kube_proxy_objects(), *ingress.ingress_nginx_objects()]


def app_edge_objects(app: "AppSpec") -> list[Obj]:
    """The Ingress publishing an app whose load generator enters through ingress-nginx."""
    return [ingress.app_ingress(app)] if getattr(app, "edge_ingress", False) else []


def allocate_for_pod(world: "World", node: str, pod: Obj) -> str | None:
    if pod["spec"].get("hostNetwork"):
        return world.hosts[node].internal_ip
    return nodenet.allocate_ip(world, node)


def network_on_reboot(world: "World", node: str) -> None:
    nodenet.on_reboot(world.hosts[node])
    kubeproxy.on_reboot(world, node)


#: seconds between the kubelet's sandbox creation retries
SANDBOX_RETRY_S = 15.0


def sandbox_failed(world: "World", pod: Obj, node: str) -> float:
    """A pod sandbox whose network setup failed: the kubelet's event and the pod's waiting status.

    Returns when the kubelet tries again.
    """
    from sre_env.kube.timefmt import iso

    now = world.clock.now
    uid = pod["metadata"]["uid"]
    retries = world.slot(_NetSystemState).sandbox_retry
    last = retries.get(uid)
    if last is None or now - last >= SANDBOX_RETRY_S:
        retries[uid] = now
        world.event(pod, "Warning", "FailedCreatePodSandBox", nodenet.exhausted_message(world, node, uid), "kubelet")
    status = pod.setdefault("status", {})
    if not status.get("containerStatuses"):
        t = iso(now)
        status.update(
            {
                "phase": "Pending",
                "hostIP": world.hosts[node].internal_ip,
                "hostIPs": [{"ip": world.hosts[node].internal_ip}],
                "startTime": t,
                "conditions": [
                    {"type": "PodReadyToStartContainers", "status": "False", "lastProbeTime": None, "lastTransitionTime": t},
                    {"type": "Initialized", "status": "True", "lastProbeTime": None, "lastTransitionTime": t},
                    {"type": "Ready", "status": "False", "lastProbeTime": None, "lastTransitionTime": t, "reason": "ContainersNotReady", "message": "containers with unready status: [" + " ".join(c["name"] for c in pod["spec"].get("containers", [])) + "]"},
                    {"type": "ContainersReady", "status": "False", "lastProbeTime": None, "lastTransitionTime": t, "reason": "ContainersNotReady", "message": "containers with unready status: [" + " ".join(c["name"] for c in pod["spec"].get("containers", [])) + "]"},
                    {"type": "PodScheduled", "status": "True", "lastProbeTime": None, "lastTransitionTime": t},
                ],
                "containerStatuses": [
                    {"name": c["name"], "image": c.get("image", ""), "imageID": "", "ready": False, "restartCount": 0, "started": False, "state": {"waiting": {"reason": "ContainerCreating"}}, "lastState": {}}
                    for c in pod["spec"].get("containers", [])
                ],
            }
        )
        world.store.touch(pod)
    return (retries[uid] if uid in retries else now) + SANDBOX_RETRY_S


# --------------------------------------------------------------------------- what the add-ons log
def _append(world: "World", pod: Obj, t: float, line: str) -> None:
    from sre_env.sim.kernel.world import is_notable

    rt = world.runtimes.get(pod["metadata"]["uid"])
    if rt is None:
        return
    for ctr in rt.containers.values():
        if ctr.state == "running":
            ctr.log.append((t, line))
            if is_notable(line):
                world.notable_logs.append((t, pod["metadata"]["namespace"], pod["metadata"]["name"], line))


def _coredns_reloads(world: "World") -> None:
    """CoreDNS's reload plugin re-reads the Corefile the kubelet projected: it logs the reload or the parse error."""
    import hashlib

    cm = world.store.find("ConfigMap", "coredns", "kube-system")
    rv = cm["metadata"].get("resourceVersion") if cm is not None else None
    state = world.slot(_NetSystemState)
    if state.corefile_rv == rv:
        return
    first = not state.corefile_seen
    state.corefile_seen, state.corefile_rv = True, rv
    if first or cm is None:
        return
    text = (cm.get("data") or {}).get("Corefile", "")
    parsed = dns.parse_corefile(text)
    t = world.clock.now
    for pod in world.store.iter("Pod"):
        if pod["metadata"]["namespace"] != "kube-system" or (pod["metadata"].get("labels") or {}).get("k8s-app") != "kube-dns":
            continue
        if parsed.error:
            _append(world, pod, t, f"[ERROR] Restart failed: {parsed.error}")
            _append(world, pod, t, "[ERROR] plugin/reload: Corefile changed but reload failed: starting with listener file descriptors: " + parsed.error)
            continue
        digest = hashlib.sha512(text.encode()).hexdigest()
        _append(world, pod, t, "[INFO] Reloading")
        _append(world, pod, t, f"[INFO] plugin/reload: Running configuration SHA512 = {digest}")
        _append(world, pod, t, "[INFO] Reloading complete")


def _ingress_errors(world: "World") -> None:
    """ingress-nginx's error log for the routes that fail (one line per failing path per 15 s)."""
    from sre_env.kube.timefmt import iso

    state = world.slot(_NetSystemState).ingress_logged
    now = world.clock.now
    for app in world.apps:
        plan = world.plans.get(app.name)
        if plan is None or not plan.entries or all(e.ok >= 0.999 for e in plan.entries.values()):
            continue
        pods = [p for p in world.store.iter("Pod") if p["metadata"]["namespace"] == ingress.INGRESS_NAMESPACE and not p["metadata"].get("deletionTimestamp")]
        if not pods:
            continue
        for rt in app.requests:
            entry = plan.entries.get(rt.name)
            if entry is None or entry.ok >= 0.999 or not entry.error:
                continue
            err = entry.error
            # the controller's sync warnings are per Service, nginx's error lines per request
            key = ("ingress", app.name, err if err.startswith("HTTP 503") else rt.name)
            if now - state.get(key, -1e9) < 15.0:
                continue
            state[key] = now
            stamp = iso(now).replace("-", "/").replace("T", " ").rstrip("Z")
            req = f'request: "{rt.method} {rt.path} HTTP/1.1", host: "localhost"'
            err = entry.error
            klog = f"W{stamp[5:7]}{stamp[8:10]} {stamp[11:19]}.000000       7 controller.go"
            if err.startswith("HTTP 503") and "(no service " in err:
                key = err.split("(no service ", 1)[1].rstrip(")")
                line = f'{klog}:1214] Error obtaining Endpoints for Service "{key}": no object matching key "{key}" in local store'
            elif err.startswith("HTTP 503"):
                key = err.split("endpoint for ", 1)[1].rstrip(")")
                line = f'{klog}:1216] Service "{key}" does not have any active Endpoint.'
            elif err.startswith("HTTP 502") and "prematurely" in err:
                line = f"{stamp} [error] 31#31: *{int(now) % 100000} upstream prematurely closed connection while reading response header from upstream, client: 172.18.0.1, server: _, {req}"
            elif err.startswith("HTTP 504"):
                line = f"{stamp} [error] 31#31: *{int(now) % 100000} upstream timed out (110: Operation timed out) while connecting to upstream, client: 172.18.0.1, server: _, {req}"
            elif err.startswith("HTTP 502"):
                line = f"{stamp} [error] 31#31: *{int(now) % 100000} connect() failed (111: Connection refused) while connecting to upstream, client: 172.18.0.1, server: _, {req}"
            else:
                continue
            for pod in pods:
                _append(world, pod, now, line)


def network_tick(world: "World") -> None:
    """Per tick, after traffic: cheap unless a Corefile changed or an edge route fails."""
    state = world.slot(_NetSystemState)
    if world.store.kind_revision.get("ConfigMap", 0) != state.configmap_rev:
        state.configmap_rev = world.store.kind_revision.get("ConfigMap", 0)
        _coredns_reloads(world)
    _ingress_errors(world)
