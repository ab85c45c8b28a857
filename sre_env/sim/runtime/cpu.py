"""The CPU a pod's process uses for the requests it serves.

One estimate for everything that reports or acts on CPU: metrics-server (``kubectl
top``), cAdvisor, the HPA controller; its inverse bounds what a CPU limit lets a pod
serve (``sre_env.sim.traffic.capacity``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from sre_env.kube.quantity import CPU_MS_PER_REQUEST_MS

if TYPE_CHECKING:
    from sre_env.apps.base import Component

__all__ = ["pod_cpu_millicores"]


def pod_cpu_millicores(comp: "Component | None", rps: float, extra_ms: float = 0.0) -> int:
    """CPU a pod uses serving ``rps`` requests/s (what ``kubectl top pod`` shows), millicores.

    One shared estimate for metrics-server and cAdvisor: a baseline millicore plus
    the request rate times the component's service time (``extra_ms``: CPU an
    app model adds per request, e.g. a backtracking regex).
    """
    return 1 + int(rps * ((comp.latency_ms if comp else 1.0) + extra_ms) * CPU_MS_PER_REQUEST_MS)
