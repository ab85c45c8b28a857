"""Baseline agents and the episode loop shared by the CLI, tests and examples.

An agent is anything with ``reset(env)`` (called once after ``env.reset``, so
it can look at the live cluster) and ``act(observation, info) -> str`` (the
next command line). Agents here are deliberately simple: they exist to
validate scenarios (the reference agent must pass, the random agent must
not) and to give learned agents a floor to beat.

``run_episode`` drives one episode and returns an ``EpisodeResult``: plain
data (no env objects) so it can be rendered, compared or written as JSON.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple, Protocol

import gymnasium as gym
import numpy as np

# the runbook baseline lives in its own module; re-exported here with the other baselines
from sre_env.agents.runbook import RunbookAgent

__all__ = [
    "AGENTS",
    "Agent",
    "EpisodeResult",
    "RandomAgent",
    "ReferenceAgent",
    "RunbookAgent",
    "ScriptedAgent",
    "Step",
    "StopEpisode",
    "make_agent",
    "run_episode",
]

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


def _scenario(env: gym.Env) -> Any:
    """The live scenario behind (possibly wrapped) ``env``; only valid after reset."""
    scenario = getattr(env.unwrapped, "scenario", None)
    if scenario is None:
        raise RuntimeError("the environment has no scenario yet: call env.reset() before agent.reset(env)")
    return scenario


class ScriptedAgent:
    """Plays a fixed list of commands, then submits ``diagnosis``.

    Useful for regression tests of known-good and known-bad fixes, and as the
    base of agents whose plan is known once the episode starts.
    """

    def __init__(self, commands: list[str] | tuple[str, ...] = (), diagnosis: str = "no diagnosis") -> None:
        self.commands = list(commands)
        self.diagnosis = diagnosis
        self._queue: list[str] = []

    def reset(self, env: gym.Env) -> None:
        self._queue = list(self.commands)

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> str:
        if self._queue:
            return self._queue.pop(0)
        return f"submit {self.diagnosis}"


class ReferenceAgent(ScriptedAgent):
    """Plays the scenario's own reference solution: the cheat.

    It reads the injected fault's ground truth (``scenario.reference_solution()``
    and ``scenario.root_cause().summary``), which no real agent can see. Its
    purpose is validating scenarios: if it does not pass, the scenario or the
    simulator is broken, not the agent.
    """

    def __init__(self, seed: int | None = None) -> None:  # seed accepted for a uniform make_agent signature
        super().__init__()

    def reset(self, env: gym.Env) -> None:
        scenario = _scenario(env)
        self.commands = list(scenario.reference_solution())
        rc = scenario.root_cause()
        structured = {k: v for k, v in rc.as_dict().items() if k in ("component", "namespace", "layer", "mechanism", "details", "affected")}
        # prose plus the structured form `submit` accepts (see sre_env.rewards.diagnosis)
        self.diagnosis = rc.summary + "\n" + json.dumps(structured, sort_keys=True)
        super().reset(env)


#: (template, kind of name it needs) — what an unfocused on-call engineer might type
_MENU: tuple[tuple[str, str | None], ...] = (
    ("kubectl get pods -n {ns}", None),
    ("kubectl get pods -n {ns} -o wide", None),
    ("kubectl get deployments -n {ns}", None),
    ("kubectl get svc -n {ns}", None),
    ("kubectl get endpoints -n {ns}", None),
    ("kubectl get events -n {ns}", None),
    ("kubectl get nodes", None),
    ("kubectl top pods -n {ns}", None),
    ("kubectl top nodes", None),
    ("kubectl describe pod {pod} -n {ns}", "pod"),
    ("kubectl logs {pod} -n {ns} --tail=20", "pod"),
    ("kubectl describe deployment {deployment} -n {ns}", "deployment"),
    ("kubectl describe node {node}", "node"),
    ("ssh {node} dmesg | tail -20", "node"),
    ("ssh {node} df -h", "node"),
    ("ssh {node} journalctl -u kubelet -n 20", "node"),
    ("kubectl rollout restart deployment/{deployment} -n {ns}", "deployment"),
    ("kubectl delete pod {pod} -n {ns}", "pod"),
)

_GENERIC_DIAGNOSIS = "Unclear root cause; some pods in {ns} look unhealthy. Restarted workloads and collected logs and events."


class RandomAgent:
    """Draws commands from a fixed menu of realistic ones, then submits a vague diagnosis.

    Names (pods, deployments, nodes) are read from the live cluster at each
    step, so the commands mostly succeed; what it never does is reason. It is
    the floor every real agent must beat, and scenarios check that it fails.
    Same seed (and same env seed) -> same commands.
    """

    def __init__(self, seed: int | None = 0, steps: int = 10) -> None:
        self.seed = seed
        self.steps = int(steps)
        self._rng = np.random.default_rng(seed)
        self._env: gym.Env | None = None
        self._taken = 0

    def reset(self, env: gym.Env) -> None:
        self._rng = np.random.default_rng(self.seed)
        self._env = env
        self._taken = 0

    def _names(self, kind: str, namespace: str) -> list[str]:
        assert self._env is not None
        api = self._env.unwrapped.backend.api
        api_kind = {"pod": "Pod", "deployment": "Deployment", "node": "Node"}[kind]
        objs = api.list(api_kind) if kind == "node" else api.list(api_kind, namespace)
        return sorted(o["metadata"]["name"] for o in objs)

    def _draw(self) -> str:
        namespace = _scenario(self._env).namespace
        template, kind = _MENU[int(self._rng.integers(len(_MENU)))]
        values = {"ns": namespace}
        if kind is not None:
            names = self._names(kind, namespace)
            if not names:  # e.g. every pod deleted: fall back to a listing
                return f"kubectl get pods -n {namespace}"
            values[kind] = names[int(self._rng.integers(len(names)))]
        return template.format(**values)

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> str:
        if self._env is None:
            raise RuntimeError("RandomAgent.act() before reset(env)")
        if self._taken >= self.steps:
            return "submit " + _GENERIC_DIAGNOSIS.format(ns=_scenario(self._env).namespace)
        self._taken += 1
        return self._draw()


AGENTS: dict[str, Callable[..., Agent]] = {"reference": ReferenceAgent, "random": RandomAgent, "runbook": RunbookAgent}


def make_agent(name: str, seed: int | None = 0) -> Agent:
    """Build a registered agent by name (what ``sre-env run --agent`` uses)."""
    factory = AGENTS.get(name)
    if factory is None:
        raise ValueError(f"No agent named {name!r}. Known agents: {', '.join(sorted(AGENTS))}")
    return factory(seed=seed)


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
