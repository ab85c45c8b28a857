"""The traffic layer's compiled routes and its per-tick results, as the world keeps them.

``TrafficPlan`` is what ``sre_env.sim.traffic`` compiles from routes and capacity
(recompiled when a route could change); ``TickResult`` is one tick's flow: rates,
errors and latencies per service, the client's view, and the edges that failed.
Telemetry, the observation and the graders read the latest result.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sre_env.apps.base import Call

__all__ = ["EdgeRoute", "TrafficPlan", "TickResult"]


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
    #: request type -> its route through the app's edge (ingress), where the app has one
    entries: dict[str, EdgeRoute] = field(default_factory=dict)
    #: caller -> how many times it retries a failed upstream call (client retry policy)
    retries: dict[str, int] = field(default_factory=dict)
    #: component -> the Go runtime's soft memory limit (GOMEMLIMIT), MiB, where one is set
    memlimits: dict[str, float] = field(default_factory=dict)


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
    #: (callee, operation) -> calls/s that reached a server (writes feed stateful stores)
    op_rps: dict[tuple[str, str], float] = field(default_factory=dict)
    #: some component has a backlog: the next tick differs even at the same load
    queued: bool = False
    #: request type -> client requests/s that failed
    failed_requests: dict[str, float] = field(default_factory=dict)
