"""The tick pipeline: how a World moves through cluster time, one phase after another.

This is the one module that knows every subsystem. A tick of :data:`TICK_S`
seconds runs, in this order:

1. timers due by now (noise, replayed triggers, HPA syncs, cron-like reports);
2. the node lifecycle controller, node-level faults, kernel limits, cron on the hosts;
3. the control-plane add-ons (Gatekeeper, Jobs/CronJobs, the eviction manager...);
4. the controllers over the objects that changed (deployments, replica sets,
   statefulsets, daemonsets), then the scheduler when pods or nodes changed;
5. the kubelets (pulls, starts, probes, terminations);
6. the endpoints controller, from the readiness the kubelets just wrote;
7. traffic: per-pod failures, routes, the request flow and its side effects;
8. the network's own per-tick work (CoreDNS reloads, ingress error logs);
9. a scrape (every exporter, then the alert rules) when one is due;
10. event expiry.

Each layer reads only what the layers before it wrote in the same tick, so the
order is the model. :func:`build_world` makes a cluster, installs the apps, and
returns it at second 0; :func:`advance` runs whole ticks.
"""

from __future__ import annotations

from sre_env.apps.base import AppSpec
from sre_env.kube.timefmt import iso
from sre_env.sim.control.addons import control_plane_tick
from sre_env.sim.control.cluster import bootstrap, install_app
from sre_env.sim.control.controllers import reconcile_all, reconcile_endpoints
from sre_env.sim.control.daemonsets import reconcile_daemonsets
from sre_env.sim.control.nodelifecycle import reconcile_node_lifecycle
from sre_env.sim.control.scheduler import schedule_pending
from sre_env.sim.control.statefulsets import reconcile_dirty_statefulsets
from sre_env.sim.kernel.clock import SCRAPE_S, TICK_S
from sre_env.sim.kernel.hosts import DEFAULT_LAYOUT, ClusterLayout, default_sysctls
from sre_env.sim.kernel.world import World
from sre_env.sim.kubelet.eviction import kubelet_started
from sre_env.sim.kubelet.node_status import update_node_conditions
from sre_env.sim.kubelet.sync import run_kubelets
from sre_env.sim.network.netsystem import network_on_reboot, network_tick
from sre_env.sim.node.diskfill import cron_tick
from sre_env.sim.node.faults import host_faults_tick
from sre_env.sim.node.files import sysctl_files
from sre_env.sim.runtime.oslimits import os_limits_tick
from sre_env.sim.traffic.phase import traffic_phase
from sre_env.telemetry.scrape import scrape

__all__ = ["build_world", "tick", "advance", "reboot_node", "TICK_S"]


def build_world(apps: tuple[AppSpec, ...] = (), layout: ClusterLayout = DEFAULT_LAYOUT, seed: int = 0) -> World:
    """A cluster at second 0: nodes, system components, and ``apps`` deployed (not yet running)."""
    world = World(layout, seed)
    world.apps = tuple(apps)
    bootstrap(world)
    for app in world.apps:
        install_app(world, app)
    return world


def tick(world: World, dt: float = TICK_S) -> None:
    """One step of cluster time through every layer, in the order of the module docstring."""
    clock = world.clock
    clock.now += dt
    while (event := clock.pop_due()) is not None:
        event.fire(world)
    reconcile_node_lifecycle(world)
    host_faults_tick(world)
    if world.os_limited:
        os_limits_tick(world)
    cron_tick(world)
    control_plane_tick(world)
    store = world.store
    dirty = store.take_dirty()
    if dirty:
        reconcile_all(world, dirty)
        reconcile_dirty_statefulsets(world, dirty)
        reconcile_daemonsets(world, dirty)
        if any(k in ("Pod", "Node", "PersistentVolumeClaim") for k, _, _ in dirty) or any(k == "Pod" for k, _, _ in store.dirty):
            schedule_pending(world, {**dirty, **store.dirty})
    if run_kubelets(world):
        world.runtime_epoch += 1
    # endpoints follow pod readiness written by the kubelets in this same tick
    changed = dict(dirty)
    changed.update(store.dirty)
    if changed:
        reconcile_endpoints(world, changed)
    traffic_phase(world, dt)
    network_tick(world)
    if clock.now >= world.next_scrape:
        scrape(world)
        world.next_scrape = clock.now + SCRAPE_S
    store.prune_events()


def advance(world: World, seconds: float) -> None:
    """Let ``seconds`` of cluster time pass; fractions of a tick carry over to the next call."""
    world.carry_s += max(float(seconds), 0.0)
    while world.carry_s >= TICK_S - 1e-9:
        world.carry_s -= TICK_S
        tick(world)


def reboot_node(world: World, name: str) -> None:
    """A node reboot: runtime-only host changes are lost and every container restarts in place.

    Pods stay bound to the node (a reboot does not reschedule them); the kubelet
    starts their containers again, which counts as a restart.
    """
    host = world.hosts[name]
    host.sysctls = {**default_sysctls(), **host.persistent_sysctls, **sysctl_files(host)}
    network_on_reboot(world, name)
    host.journal.append((world.clock.now, "systemd", "-- Boot --"))
    # units come back as enabled; without NTP the clock is whatever the RTC says
    host.kubelet_running = "kubelet" not in host.disabled_units
    if host.kubelet_running:
        kubelet_started(world, host)
    host.chrony_running = "chrony" not in host.disabled_units
    host.clock_offset_s = 0.0 if host.chrony_running else host.rtc_offset_s
    if host.kubelet_running:
        update_node_conditions(world)
    now = world.clock.now
    for pod in world.store.bound_pods():
        if pod["spec"].get("nodeName") != name:
            continue
        rt = world.runtimes.get(pod["metadata"]["uid"])
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
    world.kubelet_wake = min(world.kubelet_wake, now)
    world.runtime_epoch += 1
