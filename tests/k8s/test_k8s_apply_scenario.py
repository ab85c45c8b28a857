"""MissingService on the KubernetesBackend: the deleted Service comes back through the real ``kubectl apply``.

``kubectl apply`` reads the server's OpenAPI v3 documents and leaves field
validation to the server (``sre_env.serve.kube_openapi``, ``kube_fields``), so
the reference fix works against ``sre-env serve`` as against a real cluster.
"""

from __future__ import annotations

import shutil

import pytest

import sre_env
from sre_env.k8s.oracles import LIVE_SCENARIOS, LiveGates

#: the windows of tests/k8s/test_k8s_scenario.py (cluster time; the served clock runs 120x the wall)
GATES = LiveGates(immediate_s=60.0, settle_s=120.0, window_s=60.0, restart_settle_s=60.0, poll_s=10.0)

pytestmark = pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")


def test_missing_service_recreated_by_kubectl_apply_passes_and_a_wrong_port_does_not(running) -> None:
    assert "MissingService" in LIVE_SCENARIOS
    backend = running.backend(gates=GATES)
    env = sre_env.SREEnv("MissingService", backend=backend, develop_s=60.0)
    try:
        env.reset(seed=0)
        svc, ns = env.scenario.variant["service"], env.scenario.namespace
        with running.server.lock:
            assert running.sim.world.store.find("Service", svc, ns) is None  # deleted through the API
        assert not any(c.passed for c in env.scenario.cause_checks(backend))
        for cmd in env.scenario.wrong_fixes()["recreate_wrong_port"]:
            env.step(cmd)
        obs, reward, terminated, _, info = env.step("submit")
        assert terminated and reward == 0.0 and not info["oracles"]["immediate"]["passed"]

        env.reset(seed=0)
        *reads, apply = env.scenario.reference_solution()
        for cmd in reads:
            env.step(cmd)
        obs, _, _, _, info = env.step(apply)
        assert info["exit_code"] == 0 and f"service/{svc} created" in obs["output"], obs["output"]
        with running.server.lock:
            assert running.sim.api.get("Service", svc, ns)["metadata"]["annotations"]["kubectl.kubernetes.io/last-applied-configuration"]
        obs, reward, terminated, _, info = env.step(f"submit {env.scenario.root_cause().summary}")
        assert terminated and info["is_success"] and reward > 0.9, {g: [c for c in r["checks"] if not c["passed"]] for g, r in info["oracles"].items()}
        assert all(info["oracles"][g]["passed"] for g in ("immediate", "live", "durability", "cleanup"))
    finally:
        env.close()
