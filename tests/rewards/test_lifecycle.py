"""Each lifecycle gate has a counterexample that fails only that gate; references pass all."""

from __future__ import annotations

import gymnasium as gym
import pytest

import sre_env  # noqa: F401  (registers the ids)
from sre_env.grading import Grader
from sre_env.rewards.cleanup import CleanupOracle
from sre_env.rewards.spec import RewardSpec, compose_reward


def _episode(env_id: str, seed: int, commands: list[str]):
    env = gym.make(env_id)
    env.reset(seed=seed)
    core = env.unwrapped
    for cmd in commands:
        core.step(cmd)
    return core


def _gates(core) -> dict[str, bool]:
    results = Grader().gates(core._episodes, core.scenario, core._baseline)
    return {name: r.passed for name, r in results.items()}


# every registered id is played through all gates by tests/envs/test_conformance.py; here the
# grader's own API is exercised on the first scenarios
@pytest.mark.parametrize("env_id", list(sre_env.ENV_IDS)[:3])
def test_reference_passes_every_gate(env_id: str) -> None:
    env = gym.make(env_id)
    env.reset(seed=0)
    core = env.unwrapped
    for cmd in core.scenario.reference_solution():
        core.step(cmd)
    assert _gates(core) == {"immediate": True, "live": True, "durability": True, "cleanup": True}


def test_fix_in_the_replicaset_fails_only_durability() -> None:
    env = gym.make("SREGym/MissingEnvVar-v0")
    env.reset(seed=0)
    core = env.unwrapped
    v = core.scenario.variant
    ns = core.scenario.namespace
    dep = core.backend.api.get("Deployment", v["service"], ns)
    rs = [r for r in core.backend.api.list("ReplicaSet", ns) if r["metadata"]["ownerReferences"][0]["uid"] == dep["metadata"]["uid"]]
    newest = max(rs, key=lambda r: int(r["metadata"]["annotations"]["deployment.kubernetes.io/revision"]))
    # patch the live ReplicaSet, not the Deployment: works until the next rollout
    core.step(f"kubectl set env rs/{newest['metadata']['name']} -n {ns} {v['var']}={v['value']}")
    core.step(f"kubectl delete pod -n {ns} -l io.kompose.service={v['service']}")
    core.step("sleep 30")
    gates = _gates(core)
    assert gates["immediate"] and gates["live"]
    assert not gates["durability"]


def test_leftover_debug_pod_fails_only_cleanup() -> None:
    env = gym.make("SREGym/TargetPortMisconfig-v0")
    env.reset(seed=0)
    core = env.unwrapped
    for cmd in core.scenario.reference_solution():
        core.step(cmd)
    core.step("kubectl debug node/worker-2 --image=busybox -- uptime")
    core.step("sleep 20")
    gates = _gates(core)
    assert gates == {"immediate": True, "live": True, "durability": True, "cleanup": False}
    residue = CleanupOracle().evaluate(core.backend, core.scenario, core._baseline).details["residue"]
    assert any("node-debugger-worker-2" in r for r in residue)


def test_forgotten_scale_up_fails_only_cleanup() -> None:
    env = gym.make("SREGym/TargetPortMisconfig-v0")
    env.reset(seed=1)
    core = env.unwrapped
    for cmd in core.scenario.reference_solution():
        core.step(cmd)
    core.step("kubectl scale deployment/frontend -n hotel-reservation --replicas=3")
    core.step("sleep 30")
    gates = _gates(core)
    assert gates["live"] and gates["durability"] and not gates["cleanup"]


def test_deleted_deployment_fails_baseline_preservation() -> None:
    env = gym.make("SREGym/TargetPortMisconfig-v0")
    env.reset(seed=2)
    core = env.unwrapped
    svc = core.scenario.variant["service"]
    core.step(f"kubectl delete deployment {svc} -n hotel-reservation")
    core.step(f"kubectl delete service {svc} -n hotel-reservation")
    results = Grader().gates(core._episodes, core.scenario, core._baseline)
    assert not results["live"].passed
    failed = {c.name for c in results["live"].checks if not c.passed}
    assert "workloads_present" in failed


def test_disk_sector_cordon_is_allowed_but_uncordon_of_others_is_drift() -> None:
    env = gym.make("SREGym/DiskSector-v0")
    env.reset(seed=0)
    core = env.unwrapped
    for cmd in core.scenario.reference_solution():
        core.step(cmd)
    assert _gates(core)["cleanup"]
    other = next(n for n in ("worker-1", "worker-2", "worker-3") if n != core.scenario.variant["node"])
    core.step(f"kubectl cordon {other}")
    assert not _gates(core)["cleanup"]


def test_compose_reward_gates_repair_terms_on_live() -> None:
    from sre_env.rewards.base import Check, OracleResult

    ok = OracleResult("x", True, 1.0, (Check("a", True),))
    bad = OracleResult("x", False, 0.0, (Check("a", False),))
    spec = RewardSpec()
    reward, comps, success = compose_reward(spec, "mitigation", {"immediate": ok, "live": bad, "durability": ok, "cleanup": ok}, 0.0)
    assert reward == 0.0 and not success and comps["cleanup"] == 0.0
    reward, comps, success = compose_reward(spec, "mitigation", {"immediate": ok, "live": ok, "durability": ok, "cleanup": ok, "diagnosis": ok}, 0.0)
    assert reward == 1.0 and success and set(comps) == {"diagnosis", "immediate", "live", "durability", "cleanup", "risk"}
    reward, _, _ = compose_reward(spec, "mitigation", {"immediate": ok, "live": ok, "durability": ok, "cleanup": ok, "diagnosis": ok}, 0.5)
    assert reward == pytest.approx(0.75)
    reward, _, success = compose_reward(spec, "diagnosis", {"diagnosis": ok}, 0.0)
    assert reward == 1.0 and success
