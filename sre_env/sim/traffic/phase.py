"""The traffic phase of a tick: which pods fail which share of requests, then the flow.

Per app: recompile the routes when a route could have changed, run the flow
(``sre_env.sim.traffic.flow``) unless it has settled, let the app's runtime
model react, and apply what the flow causes: database disk I/O (and the reads
that hit bad sectors), the dependency errors callers log, the client's view.
"""

from __future__ import annotations

import hashlib
from collections import deque
from typing import TYPE_CHECKING, Any

from sre_env.sim.kernel.pods import StartOutcome
from sre_env.sim.logs.streams import container_log
from sre_env.sim.network.netmodel import routing_revision
from sre_env.sim.node.faults import host_fault_key, node_request_failure
from sre_env.sim.node.volumes import pod_volume_disks, volume_read_error_fraction
from sre_env.sim.runtime import mongo_auth, redis_model
from sre_env.sim.runtime.oslimits import pod_limit_failure
from sre_env.sim.traffic.flow import compile_plan, run_traffic
from sre_env.sim.traffic.state import traffic_state

if TYPE_CHECKING:
    from sre_env.apps.base import AppSpec, Component
    from sre_env.sim.kernel.flows import TickResult, TrafficPlan
    from sre_env.sim.kernel.world import World

__all__ = ["traffic_phase"]

Obj = dict[str, Any]


def traffic_phase(world: "World", dt: float) -> None:
    """One tick of request flow for every app: errors per pod, routes, the flow, and what it causes."""
    state = traffic_state(world)
    hkey = host_fault_key(world)
    if hkey != state.host_fault_key:
        # node-level failure shares changed (a sysctl, a NIC): recompute routes and errors
        state.host_fault_key = hkey
        world.fault_epoch += 1
    rev = routing_revision(world)
    for app in world.apps:
        inputs = world.flow_input_rev.get(app.name, 0)
        if state.inputs_seen.get(app.name, 0) != inputs:
            state.inputs_seen[app.name] = inputs
            state.settled[app.name] = False
        plan = world.plans.get(app.name)
        fresh = plan is None or plan.revision != rev
        if fresh:
            err_key = (world.fault_epoch, world.store.bound_pod_revision, world.store.kind_revision.get("PersistentVolume", 0), world.store.kind_revision.get("PersistentVolumeClaim", 0))
            if err_key != state.pod_err_key:
                _compute_pod_errors(world)
                state.pod_err_key = err_key
            plan = world.plans[app.name] = compile_plan(world, app)
            state.db_disks[app.name] = _database_disks(world, app, plan)
        prev = world.last_traffic.get(app.name)
        if not fresh and prev is not None and state.settled.get(app.name):
            res = prev  # same routes, same load: the same flow as last tick
        else:
            before = dict(world.last_load)
            res = run_traffic(world, app, plan, dt)
            state.settled[app.name] = before == world.last_load and not res.queued
        world.last_traffic[app.name] = res
        model = world.app_models.get(app.name)
        if model is not None:
            model.tick(world, app, plan, res, dt)
        hist = world.client_history.setdefault(app.name, deque(maxlen=240))
        hist.append((world.clock.now, res.client_success, res.client_latency_ms))
        _apply_side_effects(world, app, plan, res, dt)


def _compute_pod_errors(world: "World") -> None:
    state = traffic_state(world)
    err: dict[str, float] = {}
    net: dict[str, float] = {}
    world.os_limited = {}
    text: dict[str, str] = {}
    per_node: dict[str, list[str]] = {}
    for pod in world.store.iter("Pod"):
        uid = pod["metadata"]["uid"]
        frac = volume_read_error_fraction(world, pod)
        if frac > 0:
            err[uid] = frac
        bug = _release_defect(world, pod)
        if bug is not None:
            err[uid] = max(err.get(uid, 0.0), bug[0])
            text[uid] = bug[1]
        limited = pod_limit_failure(world, pod)
        if limited is not None:
            err[uid] = max(err.get(uid, 0.0), limited[0])
            text[uid] = limited[1]
        node = pod["spec"].get("nodeName")
        if node:
            per_node.setdefault(node, []).append(uid)
    now = world.clock.now
    for node, uids in per_node.items():
        host = world.hosts.get(node)
        if host is None:
            continue
        frac, why = node_request_failure(host, now, len(uids))
        if frac > 0:
            for uid in uids:
                net[uid] = frac
                text[uid] = why
    state.pod_err = err
    state.pod_net_err = net
    world.pod_error_text = text


def _release_defect(world: "World", pod: Obj) -> tuple[float, str] | None:
    """A bug in the image version the pod's app container runs (sre_env.sim.runtime.images)."""
    containers = pod["spec"].get("containers") or ()
    if not containers or not containers[0].get("command"):
        return None
    return world.images.defect(containers[0].get("image", ""), str(containers[0]["command"][0]))


def _apply_side_effects(world: "World", app: AppSpec, plan: TrafficPlan, res: TickResult, dt: float) -> None:
    now = world.clock.now
    state = traffic_state(world)
    if redis_model.has_redis(app):
        redis_model.update(world, app, plan, res, dt)
    # disk I/O of database pods, and read errors where a disk is failing
    for comp, uid, pod, disks in state.db_disks.get(app.name, ()):
        if True:
            rps = res.pod_rps.get(uid, 0.0)
            for node, disk in disks:
                reads = rps * 2.0 * dt
                disk.reads_total += reads
                disk.writes_total += rps * 0.2 * dt
                disk.read_bytes_total += reads * 4096
                disk.last_reads_per_s = rps * 2.0
                disk.last_writes_per_s = rps * 0.2
                frac = state.pod_err.get(uid, 0.0)
                if frac > 0 and reads > 0 and disk.bad_read_fraction <= 0.0:
                    # silent corruption: no I/O error, nothing for the kernel or SMART to count;
                    # WiredTiger's block checksums catch it
                    _schedule_io_abort(world, pod, uid, comp, disk)
                elif frac > 0 and reads > 0:
                    failed = reads * frac
                    disk.read_errors_total += failed
                    disk.pending_sectors = max(disk.pending_sectors, len(disk.bad_sectors))
                    disk.reported_uncorrect = int(disk.read_errors_total)
                    disk.error_ticks.append((now, int(round(failed))))
                    _schedule_io_abort(world, pod, uid, comp, disk)
    # callers log the dependency errors they see (one line per edge per tick)
    for caller, callee, target, error, failed in res.failed_edges:
        if failed <= 0.01:
            continue
        fields = {"target": target, "error": error, "phase": "request"}
        if error.startswith("dial tcp"):
            fields["dial"] = error
        _log_serving(world, plan, caller, "dependency_error", fields)
        if error == mongo_auth.AUTH_FAILED:
            mongo_auth.note_edge_failure(world, plan, caller, callee, error)
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
        _log_serving(world, plan, app.entrypoint, "request", {"method": rtype.method, "path": rtype.path, "status": 500, "latency_ms": round(res.client_latency_ms, 1), "grpc_error": grpc_error})


def _log_serving(world: "World", plan: TrafficPlan, comp: str, event: str, fields: dict[str, Any]) -> None:
    now = world.clock.now
    for uid in plan.serving.get(comp, ())[:1]:
        rt = world.runtimes.get(uid)
        pod = world.pod_by_uid(uid)
        if rt is None or pod is None:
            continue
        for ctr in rt.containers.values():
            if ctr.state == "running":
                container_log(world, pod, ctr, event, now, fields)


def _schedule_io_abort(world: "World", pod: Obj, uid: str, comp: Component, disk: Any) -> None:
    """A read that hits a bad sector makes WiredTiger panic and mongod abort (fassert 50853)."""
    rt = world.runtimes.get(uid)
    if rt is None:
        return
    now = world.clock.now
    for ctr in rt.containers.values():
        if ctr.state != "running" or not ctr.serving(now) or ctr.exit_at is not None:
            continue
        h = int(hashlib.blake2b(f"{world.variant_seed}/{uid}/{ctr.restart_count}".encode(), digest_size=4).hexdigest(), 16)
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
        world.kubelet_wake = min(world.kubelet_wake, rt.wake_at)


def _database_disks(world: "World", app: AppSpec, plan: TrafficPlan) -> list[tuple[Component, str, Obj, list]]:
    out = []
    for comp in app.components:
        if not comp.volume_claim:
            continue
        for uid in plan.serving.get(comp.name, ()):
            pod = world.pod_by_uid(uid)
            if pod is not None:
                out.append((comp, uid, pod, pod_volume_disks(world, pod)))
    return out
