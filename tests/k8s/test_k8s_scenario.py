"""The KubernetesBackend running whole scenarios against ``sre-env serve`` with the real kubectl.

Inject through the backend's API, the live oracle fails, the reference fix goes
through the real ``kubectl`` in the sandbox (``none``: unsandboxed, namespace-scoped
kubeconfig), the oracle passes; a wrong fix gets no reward, and the next reset
reconciles the cluster to its baseline before injecting again.
"""

from __future__ import annotations

import copy
import shutil

import gymnasium as gym
import pytest

import sre_env
from sre_env.backend import Backend
from sre_env.envs.registry import scenario_class
from sre_env.k8s.oracles import LIVE_SCENARIOS, LiveGates

pytestmark = pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed")

#: short windows in cluster time (the served clock runs 120x the wall), long enough to age out the incident
GATES = LiveGates(immediate_s=60.0, settle_s=120.0, window_s=60.0, restart_settle_s=60.0, poll_s=10.0)


def _episode(env, *, fix: list[str], diagnose: bool = True) -> tuple[float, dict]:
    """Run ``fix``, then submit (with the true root cause as the diagnosis when ``diagnose``)."""
    for cmd in fix:
        obs, _, _, _, info = env.step(cmd)
    text = env.unwrapped.scenario.root_cause().summary if diagnose else ""
    obs, reward, terminated, _, info = env.step(f"submit {text}".strip())
    assert terminated
    return reward, info


def test_scale_to_zero_fails_the_oracle_until_real_kubectl_repairs_it(running) -> None:
    backend = running.backend(gates=GATES)
    env = sre_env.SREEnv("ScalePodZero", backend=backend, develop_s=60.0)
    try:
        obs, info = env.reset(seed=0)
        scenario = env.scenario
        svc = scenario.variant["service"]
        # the fault went through the API: the served cluster itself changed
        with running.server.lock:
            assert running.sim.api.get("Deployment", svc, scenario.namespace)["spec"]["replicas"] == 0
        assert obs["metrics_mask"][:3].tolist() == [1, 1, 1] and obs["metrics"][-1, 0] < 0.99  # client success from Prometheus
        before = backend.live_gates.live(backend, scenario, env._baseline, "live")
        failed = {c.name for c in before.checks if not c.passed}
        assert not before.passed and {"replicas_restored", "workloads_available", "client_success"} <= failed
        reward, info = _episode(env, fix=scenario.reference_solution())
        assert env.history[-2]["exit_code"] == 0 and env.history[-2]["mutating"]
        assert info["is_success"] and reward > 0.9, {g: [c for c in r["checks"] if not c["passed"]] for g, r in info["oracles"].items()}
        assert all(info["oracles"][g]["passed"] for g in ("immediate", "live", "durability", "cleanup"))
        assert info["oracles"]["durability"]["live_cluster"] is True
    finally:
        env.close()


@pytest.mark.slow
def test_missing_env_var_wrong_fix_then_reset_reconciles_and_the_reference_fix_passes(running) -> None:
    backend = running.backend(gates=GATES)
    env = sre_env.SREEnv("MissingEnvVar", backend=backend, develop_s=60.0)
    try:
        env.reset(seed=0)
        first = dict(env.scenario.variant)
        assert not all(c.passed for c in env.scenario.cause_checks(backend))
        reward, info = _episode(env, fix=env.scenario.wrong_fixes()["rollout_restart"], diagnose=False)
        assert reward == 0.0 and not info["is_success"] and not info["oracles"]["live"]["passed"]
        # reset: the baseline Deployment comes back (the variable is restored) before the next injection
        env.reset(seed=1)
        second = env.scenario.variant
        with running.server.lock:
            dep = running.sim.api.get("Deployment", first["service"], env.scenario.namespace)
        env_names = {e["name"] for c in dep["spec"]["template"]["spec"]["containers"] for e in c.get("env") or ()}
        assert first["var"] in env_names or (first["service"], first["var"]) == (second["service"], second["var"])
        reward, info = _episode(env, fix=env.scenario.reference_solution())
        assert info["is_success"] and reward > 0.9, {g: [c for c in r["checks"] if not c["passed"]] for g, r in info["oracles"].items()}
    finally:
        env.close()


@pytest.mark.slow
def test_target_port_reference_fix_passes_and_changing_the_container_port_does_not(running) -> None:
    url = running.server.prometheus_url
    options = {"prometheus_url": url, "loki_url": url, "jaeger_url": url, "telemetry_token": running.server.token, "time_scale": running.server.speed, "sandbox": "none", "gates": GATES}
    env = gym.make("SREGym/TargetPortMisconfig-v0", backend="kubernetes", kubeconfig=str(running.kubeconfig), backend_options=options, develop_s=60.0)
    try:
        assert env.spec.nondeterministic is True and env.unwrapped.metadata["nondeterministic"] is True
        env.reset(seed=2)
        reward, info = _episode(env, fix=env.unwrapped.scenario.wrong_fixes()["change_container_port"], diagnose=False)
        assert reward == 0.0 and not info["oracles"]["immediate"]["passed"]
        env.reset(seed=2)
        reward, info = _episode(env, fix=env.unwrapped.scenario.reference_solution())
        assert info["is_success"] and reward > 0.9, {g: [c for c in r["checks"] if not c["passed"]] for g, r in info["oracles"].items()}
    finally:
        env.close()


def test_unverified_families_are_refused_clearly(paused) -> None:
    backend = paused.backend()
    assert copy.deepcopy(backend) is backend  # gym.make copies specs; a live cluster is not copied
    assert isinstance(backend, Backend) and backend.nondeterministic
    with pytest.raises(sre_env.ScenarioError, match="runs on the simulator only"):
        sre_env.SREEnv("DiskSector", backend=backend)
    with pytest.raises(sre_env.ScenarioError, match="not verified on the KubernetesBackend"):
        sre_env.SREEnv("NamespaceQuota", backend=backend)
    with pytest.raises(ValueError, match="noise"):
        sre_env.SREEnv("ScalePodZero", backend=backend, noise="low")
    with pytest.raises(ValueError, match="backend must be"):
        sre_env.SREEnv("ScalePodZero", backend="vm")
    backend.close()


def test_close_recovers_the_fault_it_injected(paused) -> None:
    env = sre_env.SREEnv("ScalePodZero", backend=paused.backend(), develop_s=0.0)
    env.reset(seed=3)
    svc, ns = env.scenario.variant["service"], env.scenario.namespace
    with paused.server.lock:
        assert paused.sim.api.get("Deployment", svc, ns)["spec"]["replicas"] == 0
    env.close()  # the episode was abandoned: the next user finds the app as it was
    with paused.server.lock:
        assert paused.sim.api.get("Deployment", svc, ns)["spec"]["replicas"] == env.scenario.variant["replicas"]


#: the verified ids not exercised by a dedicated test above
_OTHERS = sorted(LIVE_SCENARIOS - {"ScalePodZero", "MissingEnvVar", "TargetPortMisconfig"})


@pytest.mark.slow
@pytest.mark.parametrize("name", _OTHERS)
def test_every_verified_scenario_passes_with_its_reference_fix_through_real_kubectl(name: str, serve_app) -> None:
    served = serve_app(scenario_class(name).app)
    env = sre_env.SREEnv(name, backend=served.backend(gates=GATES), develop_s=60.0)
    try:
        env.reset(seed=0)
        assert not all(c.passed for c in env.scenario.cause_checks(env.backend))
        reward, info = _episode(env, fix=env.scenario.reference_solution())
        assert info["is_success"] and reward > 0.9, {g: [c for c in r["checks"] if not c["passed"]] for g, r in info["oracles"].items()}
    finally:
        env.close()


@pytest.mark.slow
def test_the_example_runs_an_episode_against_the_served_simulator() -> None:
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "examples" / "kubernetes_backend.py"
    spec = importlib.util.spec_from_file_location("kubernetes_backend_example", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.main(["--env", "SREGym/ScalePodZero-v0", "--sandbox", "none"]) > 0.9


def test_a_catastrophic_command_ends_a_live_episode_unrun(running) -> None:
    """The simulator's catastrophe judgement applies to live episodes; there the command is refused, not run,
    since nothing undoes a deleted namespace on a real cluster."""
    env = sre_env.SREEnv("ScalePodZero", backend=running.backend(gates=GATES), develop_s=0.0)
    try:
        env.reset(seed=3)
        ns = env.scenario.namespace
        obs, reward, terminated, _, info = env.step(f"kubectl delete namespace {ns}")
        assert terminated and not info["is_success"] and info["catastrophic"] is True
        assert reward <= 0.0  # as on the simulator: the catastrophe penalty, no success
        assert "refused on a live cluster: deletes the app's namespace" in obs["output"] and "[episode ended: catastrophic action]" in obs["output"]
        with running.server.lock:  # the served cluster still has the app's namespace
            assert running.sim.api.get("Namespace", ns)["metadata"]["name"] == ns
    finally:
        env.close()


def test_what_the_role_refuses_is_refused_through_real_kubectl(paused) -> None:
    """Commands the simulator judges high-risk but not catastrophic (every node deleted, a cluster-admin binding)
    are refused by the agent's Role on a live cluster: the served cluster is unchanged."""
    env = sre_env.SREEnv("ScalePodZero", backend=paused.backend(), develop_s=0.0)
    try:
        env.reset(seed=3)
        for cmd in ("kubectl delete nodes --all", f"kubectl create clusterrolebinding pwn --clusterrole=cluster-admin --serviceaccount={env.scenario.namespace}:default"):
            obs, _, terminated, _, _ = env.step(cmd)
            assert not terminated and "forbidden" in obs["output"].lower(), obs["output"]
        with paused.server.lock:
            assert paused.sim.api.list("Node") and not [b for b in paused.sim.api.list("ClusterRoleBinding") if b["metadata"]["name"] == "pwn"]
    finally:
        env.close()
