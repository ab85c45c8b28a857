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

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from .apps.base import AppSpec, Call, Component
from .network import Route, resolve_route

if TYPE_CHECKING:
    from .world import World

__all__ = ["TrafficPlan", "TickResult", "compile_plan", "run_traffic"]


@dataclass
class EdgeRoute:
    ok: float
    error: str | None
    servers: tuple[tuple[str, float], ...]
    target: str
    #: caller pods that dial this edge, with their share of the caller's traffic
    callers: tuple[str, ...] = ()


@dataclass
class TrafficPlan:
    revision: int
    entry: EdgeRoute
    edges: dict[tuple[str, str], EdgeRoute]
    #: component -> serving pod uids
    serving: dict[str, tuple[str, ...]]
    children: dict[tuple[str, str], tuple[Call, ...]]


@dataclass
class TickResult:
    rps: dict[str, float] = field(default_factory=dict)
    errors: dict[str, float] = field(default_factory=dict)
    latency_ms: dict[str, float] = field(default_factory=dict)
    client_rps: float = 0.0
    client_success: float = 1.0
    client_latency_ms: float = 0.0
    #: pod uid -> requests/s it served
    pod_rps: dict[str, float] = field(default_factory=dict)
    #: edges whose connections or server replies failed this tick:
    #: (caller, callee, "host:port" dialled, error text, failed calls/s)
    failed_edges: list[tuple[str, str, str, str, float]] = field(default_factory=list)


def _dependency_address(world: "World", app: AppSpec, caller: Component, callee: str, pod_uid: str) -> tuple[str, int | None]:
    dep = next((d for d in caller.dependencies if d.service == callee), None)
    if dep is None:
        comp = app.component(callee)
        port = comp.service_ports[0][1] if comp.service_ports else None
        return callee, port
    if dep.address_env:
        env = world.pod_env(pod_uid, caller.container)
        value = env.get(dep.address_env)
        if value:
            return value, dep.port
        return f"{dep.service}:{dep.port}", dep.port
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
    serving = world.serving_by_component(app.namespace)
    serving = {c.name: serving.get(c.name, ()) for c in app.components}
    route_cache: dict[tuple[str, int | None], Route] = {}

    def route(addr: str, port: int | None) -> Route:
        key = (addr, port)
        r = route_cache.get(key)
        if r is None:
            r = route_cache[key] = resolve_route(world, app.namespace, addr, port)
        return r

    entry_route = route(f"{app.entrypoint}:{app.entry_port}", None)
    entry = EdgeRoute(entry_route.ok, entry_route.error, entry_route.servers, entry_route.target)
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
                routes.append(route(addr, port))
            edges[key] = _merge_routes(routes, serving[call.caller])
        for caller, calls in by_caller.items():
            critical = {d.service: d.critical for d in app.component(caller).dependencies}
            children[(rt.name, caller)] = tuple(sorted(calls, key=lambda c: critical.get(c.callee, True)))
    return TrafficPlan(world.routing_revision, entry, edges, serving, children)


def run_traffic(world: "World", app: AppSpec, plan: TrafficPlan, dt: float) -> TickResult:
    res = TickResult()
    comps = {c.name: c for c in app.components}
    # capacity and own error share per component, from last tick's load
    capacity: dict[str, float] = {}
    for name, pods in plan.serving.items():
        capacity[name] = comps[name].capacity_rps * len(pods)
    load = world.last_load
    served: dict[str, float] = {}
    for name, cap in capacity.items():
        arrival = load.get(name, 0.0)
        served[name] = 1.0 if arrival <= cap else (cap / arrival if arrival > 0 else 0.0)
    rps = res.rps
    errs = res.errors
    lat_acc: dict[str, float] = {}
    pod_err = world.pod_error_fraction

    def server_err(route: EdgeRoute) -> float:
        e = 0.0
        for uid, share in route.servers:
            pe = pod_err(uid)
            if pe:
                e += share * pe
        return e

    def flow(rt_name: str, comp: str, arrival: float) -> tuple[float, float]:
        """Success probability and latency (ms) of one call into ``comp``."""
        rps[comp] = rps.get(comp, 0.0) + arrival
        spec = comps[comp]
        ok = served.get(comp, 0.0)
        if not plan.serving.get(comp):
            ok = 0.0
        cap = capacity.get(comp, 0.0)
        rho = min(load.get(comp, 0.0) / cap, 0.97) if cap > 0 else 0.97
        lat = spec.latency_ms / (1.0 - rho)
        extra_miss = 0.0
        for call in plan.children.get((rt_name, comp), ()):
            edge = plan.edges[(comp, call.callee)]
            miss = min(1.0, call.miss_ratio + (1.0 - call.miss_ratio) * extra_miss) if call.miss_ratio < 1.0 else 1.0
            rate = arrival * ok * call.times * miss
            reach = edge.ok * (1.0 - server_err(edge))
            child_ok, child_lat = flow(rt_name, call.callee, rate * edge.ok) if edge.ok > 0 else (0.0, 0.0)
            serr = reach and server_err(edge)
            if serr:
                errs[call.callee] = errs.get(call.callee, 0.0) + rate * edge.ok * serr
            success = reach * child_ok
            if rate > 0 and edge.ok < 0.999:
                res.failed_edges.append((comp, call.callee, edge.target, edge.error or "connection refused", rate * (1.0 - edge.ok)))
            elif rate > 0 and serr:
                res.failed_edges.append((comp, call.callee, edge.target, "server error", rate * serr))
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
    offered = app.rps
    entry = plan.entry
    entry_reach = entry.ok * (1.0 - server_err(entry))
    for rt in app.requests:
        arrival = offered * rt.weight
        if entry.ok > 0:
            ok, lat = flow(rt.name, app.entrypoint, arrival * entry.ok)
        else:
            ok, lat = 0.0, 0.0
        success = entry_reach * ok
        total_ok += rt.weight * success
        failed_lat = app.client_timeout_s * 1000.0 if "timeout" in (entry.error or "") else 2.0
        total_lat += rt.weight * (success * lat + (1.0 - success) * min(lat, failed_lat) if success > 0 else failed_lat)
    res.client_rps = offered
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
