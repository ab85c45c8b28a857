"""Behaviour of the baseline agents, the episode loop and the report/JSON rendering."""

from __future__ import annotations

import io
import json
from dataclasses import replace

import gymnasium as gym
import pytest

import sre_env  # noqa: F401  (registers the ids)
from sre_env.agents.baselines import (
    AGENTS,
    RandomAgent,
    ReferenceAgent,
    ScriptedAgent,
    make_agent,
)
from sre_env.agents.episode import EpisodeResult, StopEpisode, excerpt, run_episode
from sre_env.eval.episode_report import format_plain, render, to_json

ENV_ID = "SREGym/MissingEnvVar-v0"


@pytest.fixture(scope="module")
def env():
    e = gym.make(ENV_ID)
    yield e
    e.close()


def _commands(result: EpisodeResult) -> list[str]:
    return [s.command for s in result.steps]


def test_reference_agent_plays_the_reference_solution_and_passes(env):
    result = run_episode(env, ReferenceAgent(), seed=0)
    scenario = env.unwrapped.scenario
    assert _commands(result)[:-1] == scenario.reference_solution()
    assert _commands(result)[-1].startswith("submit " + scenario.root_cause().summary + "\n{")
    assert result.passed and result.reward == pytest.approx(1.0)
    assert result.terminated and not result.truncated
    assert result.diagnosis.startswith(scenario.root_cause().summary)
    assert result.root_cause["component"] == scenario.root_cause().component
    assert result.env_id == ENV_ID and result.seed == 0
    assert result.brief.startswith("PAGE:")


def test_random_agent_is_deterministic_for_a_seed(env):
    first = _commands(run_episode(env, RandomAgent(seed=3), seed=0))
    again = _commands(run_episode(env, RandomAgent(seed=3), seed=0))
    other = _commands(run_episode(env, RandomAgent(seed=4), seed=0))
    assert first == again
    assert first != other


def test_random_agent_runs_real_commands_then_submits_and_fails(env):
    agent = RandomAgent(seed=0, steps=10)
    result = run_episode(env, agent, seed=0)
    commands = _commands(result)
    assert len(commands) == 11 and commands[-1].startswith("submit ")
    ns = env.unwrapped.scenario.namespace
    # names come from the live cluster, so every drawn command is one the shell accepts
    assert all(s.exit_code == 0 for s in result.steps), [(s.command, s.output) for s in result.steps if s.exit_code]
    assert any(f"-n {ns}" in c for c in commands)
    assert not result.passed and result.reward == 0.0
    assert result.oracles["live"]["passed"] is False


def test_random_agent_reset_restarts_its_draws(env):
    agent = RandomAgent(seed=5, steps=3)
    assert _commands(run_episode(env, agent, seed=1)) == _commands(run_episode(env, agent, seed=1))


def test_scripted_agent_plays_its_list_then_submits(env):
    agent = ScriptedAgent(["kubectl get pods -n hotel-reservation", "kubectl get nodes"], diagnosis="looked around")
    result = run_episode(env, agent, seed=0)
    assert _commands(result) == ["kubectl get pods -n hotel-reservation", "kubectl get nodes", "submit looked around"]
    assert result.diagnosis == "looked around"
    assert "NAME" in result.steps[0].output and result.steps[0].exit_code == 0


class _GivesUp:
    def reset(self, env) -> None:
        self.n = 0

    def act(self, observation, info) -> str:
        self.n += 1
        if self.n > 1:
            raise StopEpisode
        return "kubectl get pods -n hotel-reservation"


def test_stop_episode_is_graded_as_truncated(env):
    result = run_episode(env, _GivesUp(), seed=0)
    assert _commands(result) == ["kubectl get pods -n hotel-reservation"]
    assert result.truncated and not result.terminated
    assert result.diagnosis is None
    assert result.oracles["live"]["checks"], "an unsubmitted episode is still graded"
    assert not result.passed
    assert env.unwrapped.max_steps == 50, "ending early must not shrink the budget of later episodes"
    assert run_episode(env, ReferenceAgent(), seed=0).passed


def test_step_budget_ends_with_a_grade():
    e = gym.make(ENV_ID, max_steps=2)
    try:
        result = run_episode(e, ReferenceAgent(), seed=0)
    finally:
        e.close()
    assert len(result.steps) == 2 and result.truncated
    assert "live" in result.oracles and not result.passed


def test_make_agent_known_and_unknown_names():
    assert set(AGENTS) == {"reference", "random", "runbook"}
    assert isinstance(make_agent("random", seed=7), RandomAgent)
    assert isinstance(make_agent("reference", seed=7), ReferenceAgent)
    with pytest.raises(ValueError, match="No agent named 'smart'.*random, reference"):
        make_agent("smart")


def test_agent_needs_a_reset_env():
    with pytest.raises(RuntimeError, match="reset"):
        ReferenceAgent().reset(gym.make(ENV_ID))


def test_excerpt_marks_cut_output():
    assert excerpt("a\nb\n") == "a\nb"
    long = "\n".join(f"line {i}" for i in range(50))
    cut = excerpt(long, lines=3)
    assert cut.startswith("line 0\nline 1\nline 2\n") and "50 lines" in cut
    assert "cut" in excerpt("x" * 100, chars=10)


# ---------------------------------------------------------------- report
@pytest.fixture(scope="module")
def passed_result(env) -> EpisodeResult:
    return run_episode(env, ReferenceAgent(), seed=0)


def test_plain_report_shows_brief_steps_checks_root_cause_and_reward(passed_result):
    text = format_plain(passed_result)
    assert passed_result.brief in text
    for step in passed_result.steps:
        assert f"$ {step.command}" in text
    assert "Grade: PASS" in text
    assert "PASS  live.variable_restored" in text
    assert "Root cause (ground truth):" in text and passed_result.root_cause["summary"] in text
    assert "Reward: " in text
    assert "✓" not in text  # plain mode is ASCII


def test_plain_report_of_a_failure(env):
    text = format_plain(run_episode(env, RandomAgent(seed=0), seed=0))
    assert "Grade: FAIL" in text and "FAIL  live.variable_restored" in text


def test_render_plain_writes_to_the_given_file(passed_result):
    buf = io.StringIO()
    render(passed_result, file=buf, plain=True)
    assert buf.getvalue() == format_plain(passed_result)


def test_render_with_rich_when_installed(passed_result):
    pytest.importorskip("rich")
    buf = io.StringIO()
    render(passed_result, file=buf)
    out = buf.getvalue()
    assert "✓ PASS" in out and "Root cause" in out and "Reward" in out


def test_to_json_is_strict_json_with_reward(passed_result):
    data = json.loads(to_json(passed_result))
    assert data["reward"] == 1.0 and data["passed"] is True
    assert data["steps"][0] == {"command": passed_result.steps[0].command, "exit_code": 0, "output": passed_result.steps[0].output}
    assert data["root_cause"]["summary"] == passed_result.root_cause["summary"]
    odd = replace(passed_result, oracles={"mitigation": {"passed": False, "latency": float("inf")}})
    assert json.loads(to_json(odd))["oracles"]["mitigation"]["latency"] is None
