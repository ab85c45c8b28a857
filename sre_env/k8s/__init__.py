"""Real clusters: the KubernetesBackend and its parts (the ``[k8s]`` extra).

``KubernetesBackend`` (backend.py) runs the simulator's scenarios on a live
cluster: ``KubeApi`` (api.py) over the official client, ``LiveTelemetry``
(telemetry.py) over Prometheus/Loki/Jaeger, what the agent may do
(agent_access.py: its Role and Pod Security), the agent's sandbox (sandbox.py),
in front of a server that cannot scope a token its namespace guard (guard.py),
and a relay to a loopback server for the bridged sandbox (relay.py), privileged-pod node access (nodes.py), reset by reconciliation
(reconcile.py), grading without forks (oracles.py), and the real-cluster
manifests with their load generator (manifests.py, loadgen.py). See
docs/kubernetes.md.
"""

from __future__ import annotations

from typing import Any

__all__ = ["LIVE_SCENARIOS", "KubernetesBackend"]


def __getattr__(name: str) -> Any:
    # the kubernetes client is heavy and optional: load it when the backend is asked for
    if name == "KubernetesBackend":
        from .backend import KubernetesBackend

        return KubernetesBackend
    if name == "LIVE_SCENARIOS":
        from .oracles import LIVE_SCENARIOS

        return LIVE_SCENARIOS
    raise AttributeError(f"module 'sre_env.k8s' has no attribute {name!r}")
