"""One episode between an agent and an env: the Agent protocol, the loop and its result.

An agent is anything with ``reset(env)`` (called once after ``env.reset``, so
it can look at the live cluster) and ``act(observation, info) -> str`` (the
next command line); it may raise :class:`StopEpisode` to walk away. The
baselines, the runbook, the LLM agent and a person at ``sre-env play`` all
play through :func:`run_episode`, which returns an :class:`EpisodeResult`:
plain data (no env objects) so it can be rendered, compared or written as JSON.

The loop lives with the protocol it drives, in the agents layer, rather than
in evaluation: agents raise ``StopEpisode`` (so it must sit at or below them),
and running one agent once — ``sre-env run``/``play``, tests, examples — needs
nothing of evaluation's runs and reports, which build on this.

    result = run_episode(gym.make("SREGym/MissingEnvVar-v0"), ReferenceAgent(), seed=0)
    result.passed, result.reward, [s.command for s in result.steps]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple, Protocol

import gymnasium as gym

__all__ = ["Agent", "EpisodeResult", "Step", "StopEpisode", "excerpt", "run_episode", "EXCERPT_LINES", "EXCERPT_CHARS"]

#: lines / characters of each command's output kept in an EpisodeResult
EXCERPT_LINES = 20
EXCERPT_CHARS = 2000


class StopEpisode(Exception):
    """Raised by ``act`` to end the episode without a diagnosis.

    The episode is still graded (as truncated), so a person who walks away
    from ``sre-env play`` or an agent that gives up still gets a verdict.
    """


class Agent(Protocol):
    def reset(self, env: gym.Env) -> None: ...

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> str: ...


class Step(NamedTuple):
    """One command the agent ran: what it typed, the exit code, the start of the output."""

    command: str
    exit_code: int
    output: str


@dataclass(frozen=True)
class EpisodeResult:
    """Everything worth keeping from one episode, as plain data."""

    env_id: str
    seed: int | None
    steps: list[Step]
    reward: float
    reward_components: dict[str, float]
    oracles: dict[str, Any]
    root_cause: dict[str, Any]
    diagnosis: str | None
    sim_seconds: float
    terminated: bool
    truncated: bool
    brief: str = ""
    agent: str = ""
    variant: dict[str, Any] = field(default_factory=dict)
    is_success: bool = False

    @property
    def passed(self) -> bool:
        """Whether the episode succeeded: every gate the task requires passed (the CLI's exit status)."""
        return self.is_success


def excerpt(output: str, lines: int = EXCERPT_LINES, chars: int = EXCERPT_CHARS) -> str:
    """The start of a command's output, marked when cut, so results stay small."""
    kept = output.splitlines()
    text = "\n".join(kept[:lines])
    cut = len(kept) > lines or len(text) > chars
    text = text[:chars]
    if cut:
        text += f"\n... [output cut; {len(kept)} lines in all]"
    return text


def _env_id(env: gym.Env) -> str:
    spec = getattr(env, "spec", None)
    if spec is not None and spec.id:
        return spec.id
    scenario_cls = getattr(env.unwrapped, "scenario_cls", None)
    return getattr(scenario_cls, "family", type(env.unwrapped).__name__)


def run_episode(
    env: gym.Env,
    agent: Agent,
    seed: int | None = None,
    *,
    on_step: Callable[[Step, dict[str, Any]], None] | None = None,
) -> EpisodeResult:
    """Reset ``env`` with ``seed``, let ``agent`` act until the episode ends, collect the grade.

    ``on_step(step, observation)`` is called after every command (the CLI's
    ``play`` uses it to show outputs). An agent that raises ``StopEpisode``
    ends the episode unsubmitted; it is graded as truncated.
    """
    obs, info = env.reset(seed=seed)
    brief = obs["output"]
    agent.reset(env)
    steps: list[Step] = []
    reward, terminated, truncated = 0.0, False, False
    while not (terminated or truncated):
        try:
            command = agent.act(obs, info)
        except StopEpisode:
            obs, reward, terminated, truncated, info = _end_unsubmitted(env, info)
            break
        obs, reward, terminated, truncated, info = env.step(command)
        step = Step(command, int(info.get("exit_code", 0)), excerpt(obs["output"]))
        steps.append(step)
        if on_step is not None:
            on_step(step, obs)
    return EpisodeResult(
        env_id=_env_id(env),
        seed=seed,
        steps=steps,
        reward=float(reward),
        reward_components=dict(info.get("reward_components", {})),
        oracles=dict(info.get("oracles", {})),
        root_cause=dict(info.get("root_cause", {})),
        diagnosis=info.get("diagnosis"),
        sim_seconds=float(info.get("time_s", 0.0)),
        terminated=bool(terminated),
        truncated=bool(truncated),
        brief=brief,
        agent=type(agent).__name__,
        variant=dict(info.get("variant", {})),
        is_success=bool(info.get("is_success", False)),
    )


def _end_unsubmitted(env: gym.Env, info: dict[str, Any]) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
    """End the episode now without a diagnosis; the env grades it as truncated."""
    inner = env.unwrapped
    reward, final = inner.finish()
    return inner._observation(), reward, False, True, final
