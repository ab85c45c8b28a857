"""The load generator and the request flow through an app's call graph, per tick.

Aggregate math, never one object per request: for each request type the
offered rate flows down its call tree; every edge is scaled by the share of
connections that reach a listening server (network routes), every component by
the share it can serve (ready replicas x per-pod capacity) and by the errors
of the pods it lands on (e.g. a database reading a failing disk). Errors and
latency propagate back up to the client. Routes are compiled once per change
of the cluster objects; a tick is a few microseconds per call edge.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sre_env.apps.base import AppSpec, Call, Component
from sre_env.sim.kernel.flows import EdgeRoute, TickResult, TrafficPlan
from sre_env.sim.network.ingress import entry_routes
from sre_env.sim.network.netmodel import routing_revision
from sre_env.sim.network.routing import Route, resolve_route
from sre_env.sim.runtime.appconfig import configured_address
from sre_env.sim.runtime.mongo_auth import reset_op_errors, session_gate
from sre_env.sim.runtime.oslimits import port_gate
from sre_env.sim.runtime.podenv import go_memory_limit_mib, pod_env, retry_limit
from sre_env.sim.traffic.capacity import serving_capacity
from sre_env.sim.traffic.state import traffic_state

if TYPE_CHECKING:
    from sre_env.sim.kernel.world import World

__all__ = ["TrafficPlan", "TickResult", "compile_plan", "run_traffic"]


def _dependency_address(world: "World", app: AppSpec, caller: Component, callee: str, pod_uid: str) -> tuple[str, int | None]:
    dep = next((d for d in caller.dependencies if d.service == callee), None)
    if dep is None:
        comp = app.component(callee)
        port = comp.service_ports[0][1] if comp.service_ports else None
        return callee, port
    if dep.address_env:
        env = pod_env(world, pod_uid, caller.container)
        value = env.get(dep.address_env)
        if value:
            return value, dep.port
        return f"{dep.service}:{dep.port}", dep.port
    if dep.config_key:
        pod = world.pod_by_uid(pod_uid)
        value = configured_address(world, pod, caller, dep) if pod is not None else None
        if value:
            return value, dep.port
    return f"{dep.service}:{dep.port}", dep.port


def _merge_routes(routes: list[Route], callers: tuple[str, ...]) -> EdgeRoute:
    if not routes:
        return EdgeRoute(0.0, "no caller", (), "", callers)
    n = len(routes)
    ok = sum(r.ok for r in routes) / n
    servers: dict[str, float] = {}
    for r in routes:
        for uid, share in r.servers:
            servers[uid] = servers.get(uid, 0.0) + share * r.ok
    total = sum(servers.values())
    merged = tuple(sorted((uid, s / total) for uid, s in servers.items())) if total else ()
    error = next((r.error for r in routes if r.error), None)
    return EdgeRoute(ok, error, merged, routes[0].target, callers)


def compile_plan(world: "World", app: AppSpec) -> TrafficPlan:
    reset_op_errors(world, app)  # database refusals are re-derived with the routes
    serving = world.serving_by_component(app.namespace)
    serving = {c.name: serving.get(c.name, ()) for c in app.components}
    route_cache: dict[tuple[str, int | None, str | None], Route] = {}

    def route(addr: str, port: int | None, client: str | None = None) -> Route:
        # each caller pod sees the network from its own node, DNS settings and policies
        key = (addr, port, client)
        r = route_cache.get(key)
        if r is None:
            r = route_cache[key] = resolve_route(world, app.namespace, addr, port, client=client)
        return r

    entries: dict[str, EdgeRoute] = {}
    edge = entry_routes(world, app)
    if edge is None:
        entry_route = route(f"{app.entry_service or app.entrypoint}:{app.entry_port}", None)
        entry = EdgeRoute(entry_route.ok, entry_route.error, entry_route.servers, entry_route.target)
    else:
        entries = {name: EdgeRoute(r.ok, r.error, r.servers, r.target) for name, r in edge.items()}
        entry = entries[max(app.requests, key=lambda r: r.weight).name]
    edges: dict[tuple[str, str], EdgeRoute] = {}
    children: dict[tuple[str, str], tuple[Call, ...]] = {}
    for rt in app.requests:
        by_caller: dict[str, list[Call]] = {}
        for call in rt.calls:
            by_caller.setdefault(call.caller, []).append(call)
            key = (call.caller, call.callee)
            if key in edges:
                continue
            caller = app.component(call.caller)
            routes = []
            for uid in serving[call.caller]:
                addr, port = _dependency_address(world, app, caller, call.callee, uid)
                gated = session_gate(world, app, caller, call.callee, uid, route(addr, port, uid))
                routes.append(port_gate(world, app, caller, call.callee, uid, gated, len(serving[call.caller])))
            edges[key] = _merge_routes(routes, serving[call.caller])
        for caller, calls in by_caller.items():
            critical = {d.service: d.critical for d in app.component(caller).dependencies}
            children[(rt.name, caller)] = tuple(sorted(calls, key=lambda c: critical.get(c.callee, True)))
    retries = {c.name: n for c in app.components if serving[c.name] and (n := retry_limit(world, c, serving[c.name]))}
    memlimits = {c.name: m for c in app.components if serving[c.name] and (m := go_memory_limit_mib(world, c, serving[c.name]))}
    return TrafficPlan(routing_revision(world), entry, edges, serving, children, entries, retries, memlimits)


#: heap a queued request holds until it is served (its buffers, its goroutine), MiB
QUEUED_REQUEST_MIB = 0.0625


def gc_cpu_share(comp: Component, queued_per_pod: float, limit_mib: float) -> float:
    """CPU the Go garbage collector takes as the live heap nears GOMEMLIMIT.

    Below ~85 % of the limit GC is cheap; approaching it, the runtime collects
    ever more often to stay under, up to the death spiral where it does little
    else. Queued requests are live heap, so a backlog feeds the spiral.
    """
    heap = comp.memory_mib + queued_per_pod * QUEUED_REQUEST_MIB
    return min(0.9, max(0.0, (heap / limit_mib - 0.85) / 0.15) * 0.9)


#: distinct keys a cache holds when warm (how many successful fills it takes to warm up)
CACHE_KEYS = 20_000.0
#: a queue holds at most this many client timeouts' worth of a component's capacity
QUEUE_LIMIT_TIMEOUTS = 2.0


def run_traffic(world: "World", app: AppSpec, plan: TrafficPlan, dt: float) -> TickResult:
    res = TickResult()
    comps = {c.name: c for c in app.components}
    # capacity and own error share per component, from last tick's load
    capacity: dict[str, float] = {}
    # an app's runtime model may change what its processes do (feature flags, GC pauses, floods)
    mods = getattr(world.app_models.get(app.name), "mods", None)
    cap_mod = mods.capacity if mods is not None else {}
    lat_mod = mods.latency_ms if mods is not None else {}
    for name, pods in plan.serving.items():
        capacity[name] = serving_capacity(world, comps[name], pods) * cap_mod.get(name, 1.0)
        limit = plan.memlimits.get(name) if plan.memlimits else None
        if limit and pods:
            held = world.backlog.get((app.name, name))
            queued = held[1] if held is not None and held[0] == pods else 0.0  # new pods start with empty heaps
            capacity[name] *= 1.0 - gc_cpu_share(comps[name], queued / len(pods), limit)
    load = world.last_load
    served: dict[str, float] = {}
    wait_ms: dict[str, float] = {}
    backlog = world.backlog
    timeout = app.client_timeout_s
    for name, cap in capacity.items():
        arrival = load.get(name, 0.0)
        ok = 1.0 if arrival <= cap else (cap / arrival if arrival > 0 else 0.0)
        # overload queues work; the queue outlives the overload that built it. Requests that
        # wait longer than clients do are served for nobody (goodput falls to zero), and
        # the queue is bounded by what clients keep in flight.
        key = (app.name, name)
        pods = plan.serving.get(name, ())
        prev = backlog.get(key)
        queued = prev[1] if prev is not None and prev[0] == pods else 0.0
        queued = min(max(0.0, queued + (arrival - cap) * dt), cap * QUEUE_LIMIT_TIMEOUTS * timeout) if cap > 0 else 0.0
        if queued > 0.0:
            backlog[key] = (pods, queued)
            res.queued = True
            wait = queued / cap
            wait_ms[name] = wait * 1000.0
            if wait > 0.5 * timeout:
                ok *= max(0.0, (timeout - wait) / (0.5 * timeout))
        elif prev is not None:
            del backlog[key]
        served[name] = ok
    # caches start empty after a restart and fill from the reads that missed them
    cold: dict[str, float] = {}
    fills: dict[str, float] = {}
    for c in app.components:
        if c.role != "cache":
            continue
        key = (app.name, c.name)
        pods = plan.serving.get(c.name, ())
        seen = world.cache_state.get(key)
        if seen is None:
            world.cache_state[key] = (pods, 1.0)
        elif seen[0] != pods:
            world.cache_state[key] = (pods, 0.0)  # a new instance holds nothing
            cold[c.name] = 1.0
        elif seen[1] < 1.0:
            cold[c.name] = 1.0 - seen[1]
    if cold:
        res.queued = True
    rps = res.rps
    errs = res.errors
    lat_acc: dict[str, float] = {}
    pod_err = traffic_state(world).pod_error_fraction
    op_errors = world.op_errors
    op_rps = res.op_rps
    retries = plan.retries

    def server_err(route: EdgeRoute, op: str = "") -> float:
        e = 0.0
        for uid, share in route.servers:
            pe = pod_err(uid)
            if op_errors and op:
                pe = max(pe, op_errors.get((uid, op), (0.0, ""))[0])
            if pe:
                e += share * pe
        return e

    pod_err_text = world.pod_error_text

    def op_error_text(route: EdgeRoute, op: str) -> str:
        for uid, _ in route.servers:
            frac, text = op_errors.get((uid, op), (0.0, ""))
            if frac > 0 and text:
                return text
        for uid, _ in route.servers:
            text = pod_err_text.get(uid, "")
            if text:
                return text
        return "server error"

    def flow(rt_name: str, comp: str, arrival: float) -> tuple[float, float]:
        """Success probability and latency (ms) of one call into ``comp``."""
        rps[comp] = rps.get(comp, 0.0) + arrival
        spec = comps[comp]
        ok = served.get(comp, 0.0)
        if not plan.serving.get(comp):
            ok = 0.0
        cap = capacity.get(comp, 0.0)
        rho = min(load.get(comp, 0.0) / cap, 0.97) if cap > 0 else 0.97
        lat = spec.latency_ms / (1.0 - rho) + (wait_ms.get(comp, 0.0) if wait_ms else 0.0)
        if lat_mod:
            lat += lat_mod.get(comp, 0.0)
        extra_miss = 0.0
        cache = ""
        for call in plan.children.get((rt_name, comp), ()):
            edge = plan.edges[(comp, call.callee)]
            miss = min(1.0, call.miss_ratio + (1.0 - call.miss_ratio) * extra_miss) if call.miss_ratio < 1.0 else 1.0
            rate = arrival * ok * call.times * miss
            reach = edge.ok * (1.0 - server_err(edge, call.operation))
            tries = 1.0
            n_retry = retries.get(comp, 0) if retries else 0
            if n_retry:
                # a client retrying failed calls multiplies the load on a callee that is already
                # failing (judged from last tick's overload): expected attempts 1 + f + ... + f^n
                fail = 1.0 - reach * served.get(call.callee, 0.0)
                tries = sum(fail**k for k in range(n_retry + 1))
            child_ok, child_lat = flow(rt_name, call.callee, rate * edge.ok * tries) if edge.ok > 0 else (0.0, 0.0)
            if call.payload_bytes:
                key = (call.callee, call.operation)
                op_rps[key] = op_rps.get(key, 0.0) + rate * edge.ok
            # a server that rejects every call still answers: the rejections are its errors
            serr = server_err(edge, call.operation) if edge.ok > 0 else 0.0
            if serr:
                errs[call.callee] = errs.get(call.callee, 0.0) + rate * edge.ok * serr
            success = reach * child_ok
            if n_retry:
                success = 1.0 - (1.0 - success) ** (n_retry + 1)
            if rate > 0 and edge.ok < 0.999:
                res.failed_edges.append((comp, call.callee, edge.target, edge.error or "connection refused", rate * (1.0 - edge.ok)))
            elif rate > 0 and serr:
                res.failed_edges.append((comp, call.callee, edge.target, op_error_text(edge, call.operation) if op_errors or pod_err_text else "server error", rate * serr))
            if call.callee in cold or (cache and call.miss_ratio < 1.0 and cache in cold):
                if call.callee in cold:
                    cache = call.callee
                    extra_miss = max(extra_miss, cold[cache])
                elif miss > 0:
                    # reads that missed only because the cache is cold put their keys back in it
                    fills[cache] = fills.get(cache, 0.0) + rate * success * (miss - call.miss_ratio) / miss
            critical = next((d.critical for d in spec.dependencies if d.service == call.callee), True)
            if critical:
                ok *= (1.0 - miss) + miss * (success ** call.times)
                lat += miss * call.times * (child_lat if edge.ok > 0 else (1000.0 if "timeout" in (edge.error or "") else 1.0))
            else:
                extra_miss = max(extra_miss, 1.0 - success)
                lat += miss * call.times * child_lat
        errs[comp] = errs.get(comp, 0.0) + arrival * (1.0 - ok)
        lat_acc[comp] = lat_acc.get(comp, 0.0) + arrival * lat
        return ok, lat

    total_ok = 0.0
    total_lat = 0.0
    offered = app.rps * world.load_factor.get(app.name, 1.0)
    default_entry = plan.entry
    extra_rps = mods.extra_rps if mods is not None else {}
    # with extra load (a flood) the client's mix shifts: weigh each request type by its arrivals
    norm = 1.0 + sum(extra_rps.values()) / offered if extra_rps and offered > 0 else 1.0
    for rt in app.requests:
        arrival = offered * rt.weight + extra_rps.get(rt.name, 0.0)
        share = arrival / (offered * norm) if offered > 0 else rt.weight
        entry = plan.entries.get(rt.name, default_entry)
        entry_reach = entry.ok * (1.0 - server_err(entry))
        if entry.ok > 0:
            ok, lat = flow(rt.name, app.entrypoint, arrival * entry.ok)
        else:
            ok, lat = 0.0, 0.0
        success = entry_reach * ok
        if success < 0.999:
            res.failed_requests[rt.name] = arrival * (1.0 - success)
        total_ok += share * success
        failed_lat = app.client_timeout_s * 1000.0 if "timeout" in (entry.error or "") else 2.0
        total_lat += share * (success * lat + (1.0 - success) * min(lat, failed_lat) if success > 0 else failed_lat)
    for name in cold:
        pods, warm = world.cache_state[(app.name, name)]
        warm = min(1.0, warm + fills.get(name, 0.0) * dt / CACHE_KEYS)
        # the last few keys are the rarely read ones: call it warm
        world.cache_state[(app.name, name)] = (pods, 1.0 if warm > 0.98 else warm)
    res.client_rps = offered * norm
    res.client_success = total_ok
    res.client_latency_ms = total_lat
    for comp, acc in lat_acc.items():
        r = rps.get(comp, 0.0)
        res.latency_ms[comp] = acc / r if r > 0 else comps[comp].latency_ms
    for name, pods in plan.serving.items():
        if pods:
            share = rps.get(name, 0.0) / len(pods)
            for uid in pods:
                res.pod_rps[uid] = share
    world.last_load = dict(rps)
    return res
