"""Task modes, reward composition in the env, risk handling and shaping."""

from __future__ import annotations

import pytest

from sre_env import SREEnv
from sre_env.rewards.spec import RewardSpec


def test_diagnosis_task_grades_only_the_diagnosis() -> None:
    env = SREEnv("TargetPortMisconfig", task="diagnosis")
    obs, _ = env.reset(seed=0)
    assert "diagnose only" in obs["output"]
    summary = env.scenario.root_cause().summary
    _, reward, term, _, info = env.step(f"submit {summary}")
    assert term and info["is_success"]
    assert set(info["oracles"]) == {"diagnosis", "risk"}
    assert reward == pytest.approx(info["oracles"]["diagnosis"]["score"])
    env.reset(seed=0)
    _, reward, _, _, info = env.step("submit the application is buggy")
    assert not info["is_success"] and reward < 0.7


def test_e2e_takes_two_submits() -> None:
    env = SREEnv("MissingEnvVar", task="e2e")
    env.reset(seed=0)
    summary = env.scenario.root_cause().summary
    _, reward, term, _, info = env.step(f"submit {summary}")
    assert not term and reward == 0.0
    for cmd in env.scenario.reference_solution():
        _, _, term, _, _ = env.step(cmd)
        assert not term
    _, reward, term, _, info = env.step("submit")
    assert term and info["is_success"] and reward >= 0.95
    assert info["diagnosis"] == summary


def test_e2e_without_repair_fails() -> None:
    env = SREEnv("MissingEnvVar", task="e2e")
    env.reset(seed=0)
    env.step(f"submit {env.scenario.root_cause().summary}")
    _, reward, term, _, info = env.step("submit")
    assert term and not info["is_success"]
    assert info["reward_components"]["diagnosis"] > 0 and info["reward_components"]["live"] == 0.0


def test_catastrophic_command_ends_the_episode() -> None:
    env = SREEnv("TargetPortMisconfig")
    env.reset(seed=0)
    _, reward, term, trunc, info = env.step("kubectl delete namespace hotel-reservation")
    assert term and not trunc and reward == 0.0
    assert info["catastrophic"] and not info["is_success"]
    assert info["risk"]["flagged"]


def test_catastrophe_penalty_makes_destroying_data_worse_than_doing_nothing() -> None:
    spec = RewardSpec(step_cost=0.01, catastrophe=1.0)
    env = SREEnv("TargetPortMisconfig", reward_spec=spec)
    env.reset(seed=0)
    _, reward, term, _, info = env.step("kubectl delete namespace hotel-reservation")
    assert term and info["catastrophic"] and reward == pytest.approx(-1.01)
    env.reset(seed=0)
    _, noop, *_ = env.step("kubectl get pods -n hotel-reservation")
    assert noop > reward


@pytest.mark.parametrize("ending", ["wrong_fix", "reference_fix", "catastrophe"])
def test_lazy_gates_grade_the_same_reward_and_success(ending: str) -> None:
    """Skipping moot gates changes what the report shows, never the reward or success."""
    outcomes = []
    for lazy in (False, True):
        env = SREEnv("TargetPortMisconfig", reward_spec=RewardSpec(step_cost=0.01, catastrophe=1.0, lazy_gates=lazy))
        env.reset(seed=1)
        commands = {"wrong_fix": ["kubectl rollout restart deployment/frontend -n hotel-reservation"], "reference_fix": env.scenario.reference_solution(), "catastrophe": ["kubectl delete namespace hotel-reservation"]}[ending]
        term = False
        for command in commands:
            _, reward, term, _, info = env.step(command)
        if not term:
            _, reward, term, _, info = env.step("submit " + env.scenario.root_cause().summary)
        outcomes.append((reward, info["is_success"], sorted(info["oracles"])))
    (full_reward, full_success, full_gates), (lazy_reward, lazy_success, lazy_gates) = outcomes
    assert lazy_reward == pytest.approx(full_reward) and lazy_success == full_success
    assert set(full_gates) >= {"immediate", "live", "durability", "cleanup"}
    expected = {"wrong_fix": {"live"}, "reference_fix": {"immediate", "live", "durability", "cleanup"}, "catastrophe": set()}[ending]
    assert set(lazy_gates) - {"diagnosis", "risk"} == expected
    assert full_success == (ending == "reference_fix")


def test_risk_flags_are_reported_per_step() -> None:
    env = SREEnv("TargetPortMisconfig")
    env.reset(seed=0)
    _, _, term, _, info = env.step("kubectl scale deployment/frontend -n hotel-reservation --replicas=0")
    assert not term and info["risk_flags"]
    _, _, _, _, info = env.step("kubectl get pods -n hotel-reservation")
    assert "risk_flags" not in info


def test_step_cost_and_shaping() -> None:
    spec = RewardSpec(step_cost=0.01, shaping=1.0, gamma=1.0)
    env = SREEnv("TargetPortMisconfig", reward_spec=spec)
    env.reset(seed=0)
    _, r1, *_ = env.step("kubectl get pods -n hotel-reservation")
    assert r1 == pytest.approx(-0.01, abs=1e-6)  # health unchanged: only the step cost
    # the repair raises the potential: the shaped rewards summed over the repair are positive
    total = 0.0
    env.reset(seed=0)
    for cmd in env.scenario.reference_solution() + ["sleep 30"]:
        _, r, *_ = env.step(cmd)
        total += r
    assert total > 0.0


def test_bad_task_name() -> None:
    with pytest.raises(ValueError, match="task must be one of"):
        SREEnv("DiskSector", task="both")


def test_finish_grades_without_submit() -> None:
    env = SREEnv("TargetPortMisconfig")
    env.reset(seed=0)
    for cmd in env.scenario.reference_solution():
        env.step(cmd)
    reward, info = env.finish()
    assert info["submitted"] is False and info["oracles"]["live"]["passed"]


def test_actions_over_the_limit_are_refused_unread() -> None:
    from sre_env.env import ACTION_MAX

    env = SREEnv("TargetPortMisconfig")
    env.reset(seed=0)
    before = env.backend.now
    # a 1 MB line: refused whole (not truncated and run), no cluster time passes, the step counts
    obs, reward, term, trunc, info = env.step("kubectl delete ns hotel-reservation " + "x" * (1 << 20))
    assert obs["output"] == f"sre-env shell: command line too long: {(1 << 20) + 36} characters (at most {ACTION_MAX}); nothing was run\n"
    assert info["exit_code"] == 2 and not term and not trunc and "risk_flags" not in info
    assert env.observation_space.contains(obs)
    assert env.backend.now == before and env.backend.api.get("Namespace", "hotel-reservation")
    obs, *_ = env.step("echo " + "y" * (ACTION_MAX - 5))  # at the limit: runs
    assert obs["output"].startswith("yyy")
