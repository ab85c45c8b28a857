"""Scaling to thousands of replicas costs what a real cluster's control plane does, not what was asked.

The ReplicaSet controller creates pods in slow-start batches, at most 500 a sync and
at the pace its API client's rate limiter allows (kube-controller-manager's
``--kube-api-qps`` 20, ``--kube-api-burst`` 30); the scheduler respects each node's
pod capacity (``max-pods``, 110) and resources, and leaves the rest Pending with the
scheduler's FailedScheduling text; a namespace's ResourceQuota refuses the creates
past it.
"""

from __future__ import annotations

import re

import pytest

from sre_env.apps.hotel_reservation import HOTEL_RESERVATION as APP
from sre_env.shell import ShellContext, run_command
from sre_env.sim.backend import SimBackend
from sre_env.sim.control.client_limits import CONTROLLER_BURST, CONTROLLER_QPS
from sre_env.sim.episodes import healthy_world
from sre_env.sim.kernel.clock import TICK_S
from sre_env.sim.kernel.world import World

NS = APP.namespace
TAINT = "1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }"
TINY = f"""apiVersion: apps/v1
kind: Deployment
metadata:
  name: tiny
  namespace: {NS}
spec:
  replicas: 400
  selector:
    matchLabels: {{app: tiny}}
  template:
    metadata:
      labels: {{app: tiny}}
    spec:
      containers:
      - name: c
        image: nginx
        resources:
          requests: {{cpu: 1m, memory: 1Mi}}
"""


@pytest.fixture(scope="module")
def base() -> World:
    return healthy_world(APP)


@pytest.fixture
def backend(base: World) -> SimBackend:
    return SimBackend(base.fork())


def sh(backend: SimBackend, command: str) -> str:
    return run_command(ShellContext(backend, NS), command).output


def pods(backend: SimBackend, selector: str) -> list[dict]:
    return backend.api.list("Pod", NS, selector)


def test_scale_up_goes_at_the_controllers_pace(backend: SimBackend) -> None:
    assert sh(backend, "kubectl scale deploy frontend --replicas=100000") == "deployment.apps/frontend scaled\n"
    backend.advance(TICK_S)
    first = len(pods(backend, "io.kompose.service=frontend"))
    # the first sync: the bucket's burst plus a tick of refill, spent in batches of 1, 2, 4, ...
    assert 1 < first <= 1 + CONTROLLER_BURST + CONTROLLER_QPS * TICK_S
    backend.advance(60)
    later = len(pods(backend, "io.kompose.service=frontend"))
    assert first < later <= 1 + CONTROLLER_BURST + CONTROLLER_QPS * (60 + TICK_S)
    rs = backend.api.list("ReplicaSet", NS, "io.kompose.service=frontend")[0]
    assert rs["spec"]["replicas"] == 100000 and rs["status"]["replicas"] == later


def test_pods_past_the_nodes_capacity_stay_pending(backend: SimBackend) -> None:
    sh(backend, f"kubectl apply -f - <<'EOF'\n{TINY}EOF")
    backend.advance(60)
    tiny = pods(backend, "app=tiny")
    assert len(tiny) == 400
    per_node: dict[str, int] = {}
    for p in backend.api.list("Pod", None):
        if p["spec"].get("nodeName"):
            per_node[p["spec"]["nodeName"]] = per_node.get(p["spec"]["nodeName"], 0) + 1
    assert per_node and max(per_node.values()) <= 110
    pending = [p for p in tiny if not p["spec"].get("nodeName")]
    assert pending and all(p["status"]["phase"] == "Pending" for p in pending)
    message = next(c["message"] for c in pending[-1]["status"]["conditions"] if c["type"] == "PodScheduled")
    assert message == (
        f"0/4 nodes are available: {TAINT}, 3 Too many pods. "
        "preemption: 0/4 nodes are available: 1 Preemption is not helpful for scheduling, 3 No preemption victims found for incoming pod."
    )
    assert re.search(r"PodScheduled +False", sh(backend, f"kubectl describe pod {pending[-1]['metadata']['name']}"))


def test_quota_caps_a_scale_up(backend: SimBackend) -> None:
    sh(backend, "kubectl create quota pods --hard=pods=30")
    sh(backend, "kubectl scale deploy frontend --replicas=5000")
    backend.advance(30)
    assert len(backend.api.list("Pod", NS)) <= 30
    failed = [e for e in backend.api.list("Event", NS) if e["reason"] == "FailedCreate"]
    assert failed and "exceeded quota: pods, requested: pods=1, used: pods=30, limited: pods=30" in failed[0]["message"]
