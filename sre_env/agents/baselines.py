"""The baseline agents, and every built-in agent by name (``sre-env run --agent``).

Deliberately simple agents that validate scenarios and give learned agents a
floor to beat: ``reference`` plays the scenario's own fix (it must pass),
``random`` types realistic commands without reasoning (it must fail),
``ScriptedAgent`` replays a fixed list; ``runbook`` (:mod:`.runbook`) plays
textbook on-call playbooks. They implement :class:`~sre_env.agents.episode.Agent`
and play through :func:`~sre_env.agents.episode.run_episode`.
"""

from __future__ import annotations

import json
from typing import Any, Callable

import gymnasium as gym
import numpy as np

from sre_env.agents.episode import Agent
from sre_env.agents.runbook import RunbookAgent

__all__ = ["AGENTS", "RandomAgent", "ReferenceAgent", "ScriptedAgent", "make_agent"]


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
