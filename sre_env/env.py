"""SREEnv: a Gymnasium environment around one scenario on one backend.

Action: one command line (``kubectl ...``, ``ssh node cmd``, pipes into text
filters, ``sleep N``) or ``submit <diagnosis>`` to end the episode.
Observation (Dict): the last command's output, firing alerts, a window of
metrics with a mask, recent notable log lines, step and cluster time.
Reward: 0 until the episode ends, then the mitigation oracle's score
(every component is in ``info["reward_components"]``).

Reset restores a cached healthy cluster (warm-up traffic included), builds a
fresh scenario from the seed, injects the fault and lets the incident develop
before the first observation. Same seed + same actions -> same episode.

``backend="kubernetes"`` (or a ``sre_env.k8s.KubernetesBackend``) runs the
scenario on a live cluster instead: the agent's commands go to the real
kubectl, observations come from the cluster's telemetry and the gates run on
the live timeline; such episodes are nondeterministic (docs/kubernetes.md).
"""

from __future__ import annotations

import re
import string
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from sre_env.backend import Backend
from sre_env.envs.base import SPLITS, Scenario
from sre_env.envs.registry import ENV_IDS, MAX_EPISODE_STEPS, resolve_id, scenario_class
from sre_env.episode import EpisodeBackend
from sre_env.grading import Grader
from sre_env.rewards.base import OracleResult
from sre_env.rewards.mitigation import Baseline
from sre_env.rewards.risk import RiskMonitor, risk_context_for
from sre_env.rewards.spec import TASKS, RewardSpec
from sre_env.shell import CommandResult, command_reference
from sre_env.sim.episodes import SimEpisodes
from sre_env.sim.noise import NOISE_LEVELS
from sre_env.telemetry.exporters import observation_series

__all__ = ["SREEnv", "EpisodeLength", "CHARSET", "OUTPUT_MAX", "ACTION_MAX", "metric_names"]

#: characters observations and actions may contain (printable ASCII, newline, tab)
CHARSET = frozenset(string.printable) - {"\x0b", "\x0c", "\r"}
_CHARSET_STR = "".join(sorted(CHARSET))
OUTPUT_MAX = 8192
ALERTS_MAX = 4096
LOGS_MAX = 4096
TRACES_MAX = 2048
ACTION_MAX = 16384
WINDOW = 12  # metric samples (one per 30 s scrape) in the observation
METRIC_MAX = 1e9  # finite bounds: rates, ratios, milliseconds and counts all stay far below
_TRANSLATE = {i: "?" for i in range(0, 256) if chr(i) not in CHARSET}


_UNPRINTABLE = re.compile(r"[^\t\n\x20-\x7e]")


def episode_backend(backend: Any, kubeconfig: str | None = None, options: dict[str, Any] | None = None) -> EpisodeBackend:
    """``"sim"``/None: the embedded simulator; ``"kubernetes"``: a KubernetesBackend built from
    ``kubeconfig`` and ``options``; an :class:`~sre_env.episode.EpisodeBackend`: that one."""
    if backend is None or backend == "sim":
        if kubeconfig is not None or options:
            raise ValueError("kubeconfig and backend_options apply to backend='kubernetes'")
        return SimEpisodes()
    if backend == "kubernetes":
        from sre_env.k8s.backend import KubernetesBackend

        return KubernetesBackend(kubeconfig, **(options or {}))
    if not isinstance(backend, type) and isinstance(backend, EpisodeBackend):
        return backend
    raise ValueError(f"backend must be 'sim', 'kubernetes' or a KubernetesBackend, got {backend!r}")


_TASK_HINTS = {
    "mitigation": "",
    "diagnosis": "\n(Task: diagnose only. End with `submit <root cause: component, mechanism, details>`.)",
    "e2e": "\n(Task: first `submit <diagnosis>`, then repair the cause and `submit` again.)",
}


_DROP_TAB_NL = str.maketrans("", "", "\t\n")


def sanitize(text: str, limit: int) -> str:
    """Printable ASCII only, truncated with a marker the agent can see."""
    if len(text) > 4 * limit:
        text = text[: 4 * limit]  # never scan more than could be shown
    # the common case (plain ASCII) is checked in C; only odd text goes through the regex
    if not (text.isascii() and text.translate(_DROP_TAB_NL).isprintable()):
        text = _UNPRINTABLE.sub("?", text)
    if len(text) > limit:
        marker = "\n... [output truncated]\n"
        text = text[: limit - len(marker)] + marker
    return text


def too_long(action: str) -> str:
    """What the shell answers to a line longer than :data:`ACTION_MAX` (it reads none of it)."""
    return f"sre-env shell: command line too long: {len(action)} characters (at most {ACTION_MAX}); nothing was run\n"


def metric_names(scenario_cls: type[Scenario]) -> list[str]:
    """The fixed series of the observation's metrics window, in order (documented in the README)."""
    return observation_series(scenario_cls.app)


class SREEnv(gym.Env[dict[str, Any], str]):
    metadata = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(
        self,
        scenario: str | type[Scenario] = "DiskSector",
        *,
        max_steps: int = MAX_EPISODE_STEPS,
        grade_truncated: bool = True,
        render_mode: str | None = None,
        develop_s: float | None = None,
        task: str = "mitigation",
        reward_spec: RewardSpec | None = None,
        diagnosis_judge: Any = None,
        split: str = "all",
        noise: str = "none",
        backend: Any = "sim",
        kubeconfig: str | None = None,
        backend_options: dict[str, Any] | None = None,
    ) -> None:
        self.scenario_cls = scenario_class(scenario) if isinstance(scenario, str) else scenario
        #: where episodes run: the embedded simulator, or a live cluster (sre_env.k8s)
        self._episodes = episode_backend(backend, kubeconfig, backend_options)
        self._episodes.check_supported(self.scenario_cls, noise=noise)
        if self._episodes.nondeterministic:
            # users see from the metadata (and the spec, see below) that episodes do not replay
            self.metadata = {**type(self).metadata, "nondeterministic": True, "backend": self._episodes.name}
        if split not in SPLITS:
            raise ValueError(f"split must be one of {', '.join(SPLITS)}, got {split!r}")
        if noise not in NOISE_LEVELS:
            raise ValueError(f"noise must be one of {', '.join(NOISE_LEVELS)}, got {noise!r}")
        #: which targets this env draws: the training ones, the held-out ones, or all
        self.split = split
        self.noise = noise
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']} or None, got {render_mode!r}")
        self.render_mode = render_mode
        #: the episode's one step limit (``gym.make(..., max_episode_steps=N)`` sets it too: EpisodeLength)
        self.max_steps = int(max_steps)
        #: grade an episode that reaches the limit without a submit (False: it ends with reward 0, ungraded,
        #: which saves a trainer the grading of episodes that earn nothing)
        self.grade_truncated = bool(grade_truncated)
        self.develop_s = develop_s
        if task not in TASKS:
            raise ValueError(f"task must be one of {', '.join(TASKS)}, got {task!r}")
        self.task = task
        self.reward_spec = reward_spec or RewardSpec()
        self.grader = Grader(self.reward_spec, task=task, diagnosis_judge=diagnosis_judge)
        self._metric_names = metric_names(self.scenario_cls)
        n = len(self._metric_names)
        text = lambda m: spaces.Text(max_length=m, min_length=0, charset=_CHARSET_STR)  # noqa: E731
        self.observation_space = spaces.Dict(
            {
                "output": text(OUTPUT_MAX),
                "alerts": text(ALERTS_MAX),
                "logs": text(LOGS_MAX),
                "traces": text(TRACES_MAX),
                "metrics": spaces.Box(low=0.0, high=METRIC_MAX, shape=(WINDOW, n), dtype=np.float32),
                "metrics_mask": spaces.MultiBinary(n),
                "step": spaces.Box(low=0, high=np.iinfo(np.int64).max, shape=(1,), dtype=np.int64),
                "time": spaces.Box(low=0.0, high=METRIC_MAX, shape=(1,), dtype=np.float32),
            }
        )
        self.action_space = spaces.Text(max_length=ACTION_MAX, min_length=0, charset=_CHARSET_STR)
        #: the cluster of the current episode (None before the first reset)
        self.backend: Backend | None = None
        self.scenario: Scenario | None = None
        self._baseline: Baseline | None = None
        self._steps = 0
        self._done = False
        self._last_output = ""
        self._t0 = 0.0
        self._history: list[dict[str, Any]] = []
        self._final_info: dict[str, Any] = {}
        #: the last texts the backend observed, with their sanitized form (by identity: backends reuse them)
        self._sanitized: dict[str, tuple[str, str]] = {}

    # ------------------------------------------------------------------ gym API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        super().reset(seed=seed)
        episode_seed = int(self.np_random.integers(0, 2**63 - 1))
        self.scenario = self.scenario_cls(np.random.default_rng([episode_seed, 1]), split=self.split)
        develop_s = self.develop_s if self.develop_s is not None else self.scenario.develop_s
        self._baseline = self._episodes.start_episode(self.scenario, develop_s=develop_s, seed=episode_seed, noise=self.noise)
        backend = self.backend = self._episodes.cluster
        self._sanitized = {}
        self._t0 = backend.now
        self._steps = 0
        self._done = False
        self._history = []
        self._final_info = {}
        self._episode_seed = episode_seed
        self._diagnosis: OracleResult | None = None
        self._diagnosis_text: str | None = None
        self._risk = RiskMonitor(risk_context_for(self.scenario, backend))
        self._potential = self._health() if self.reward_spec.shaping else 0.0
        self._last_output = self.scenario.brief() + _TASK_HINTS[self.task]
        # what the columns of obs["metrics"] are, once per episode rather than every step
        return self._observation(), self._info(None) | {"metric_names": list(self._metric_names), "task": self.task}

    def step(self, action: str) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        if self.backend is None or self.scenario is None:
            raise gym.error.ResetNeeded("Cannot call step() before reset().")
        if self._done:
            return self._observation(), 0.0, True, False, self._info(None) | self._final_info
        if not isinstance(action, str):
            action = str(action)
        self._steps += 1
        reward = -self.reward_spec.step_cost
        terminated = truncated = False
        refused = len(action) > ACTION_MAX
        stripped = "" if refused else action.strip()
        flags = [] if refused else self._risk.observe(self._steps, action)
        if refused:
            # refused before anything reads it (no parsing, no risk scan, nothing reaches the cluster):
            # the step counts, so the step limit still bounds the episode; no cluster time passes
            result = CommandResult(too_long(action), 2, 0.0, False)
        elif stripped == "submit" or stripped.startswith(("submit ", "submit\n", "submit\t")):
            text = stripped[len("submit") :].strip()
            if self.task == "e2e" and self._diagnosis is None:
                self._diagnosis_text = text
                self._diagnosis = self.grader.diagnosis(text, self.backend, self.scenario, seed=self._episode_seed)
                result = CommandResult("Diagnosis recorded. Repair the cause, then `submit` again to end the episode.\n", 0, 0.0, False)
            else:
                if self.task == "e2e":
                    text = self._diagnosis_text or ""
                result = CommandResult("Submitted. Grading the cluster...\n", 0, 0.0, False)
                reward += self._finish(text, submitted=True)
                terminated = True
        else:
            if self._risk.catastrophic and self._episodes.nondeterministic:
                # a live cluster's catastrophe cannot be undone: the same judgement ends the episode, unrun
                why = "; ".join(f.reason for f in flags if f.catastrophic)
                result = CommandResult(f"refused on a live cluster: {why}\n", 1, 0.0, False)
            else:
                result = self._episodes.run_command(action)
            if self._risk.catastrophic:
                result = CommandResult(result.output + "\n[episode ended: catastrophic action]\n", result.exit_code, result.cost_s, result.mutating)
                reward += self._finish(None, submitted=False, catastrophic=True)
                terminated = True
        if self.reward_spec.shaping and not terminated:
            phi = self._health()
            reward += self.reward_spec.shaping * (self.reward_spec.gamma * phi - self._potential)
            self._potential = phi
        self._last_output = result.output
        self._history.append({"step": self._steps, "command": action[:2000], "exit_code": result.exit_code, "mutating": result.mutating, "time": self.backend.now, "risk": [f.category.value for f in flags]})
        if not terminated and self._steps >= self.max_steps:
            if self.grade_truncated:
                reward += self._finish(None, submitted=False)
            truncated = True
        self._done = terminated or truncated
        info = self._info(result)
        if flags:
            info["risk_flags"] = [{"category": f.category.value, "severity": f.severity.name, "reason": f.reason} for f in flags]
        if self._done:
            info |= self._final_info
        return self._observation(), float(reward), terminated, truncated, info

    def finish(self) -> tuple[float, dict[str, Any]]:
        """End the episode now and grade it as not submitted (for agents that stop on their own)."""
        if self.backend is None or self.scenario is None:
            raise gym.error.ResetNeeded("Cannot call finish() before reset().")
        if not self._done:
            reward = self._finish(None, submitted=False)
            self._done = True
            return reward, self._info(None) | self._final_info
        return 0.0, self._info(None) | self._final_info

    def render(self) -> str | None:
        if self.render_mode != "ansi":
            return None
        obs = self._observation()
        shown = "-" if self.backend is None else self._episodes.clock_label(self._t0)
        lines = [f"--- step {self._steps}  t={shown} ---", obs["output"]]
        if obs["alerts"]:
            lines += ["[alerts]", obs["alerts"]]
        return "\n".join(lines)

    # ------------------------------------------------------------------ helpers
    def _finish(self, diagnosis_text: str | None, *, submitted: bool, catastrophic: bool = False) -> float:
        assert self.backend is not None and self.scenario is not None and self._baseline is not None
        diagnosis = self._diagnosis
        if diagnosis is None and (diagnosis_text or self.task == "diagnosis"):
            diagnosis = self.grader.diagnosis(diagnosis_text, self.backend, self.scenario, seed=self._episode_seed)
        grade = self.grader.grade(
            self._episodes,
            self.scenario,
            self._baseline,
            diagnosis=diagnosis,
            risk_oracle=self._risk.as_oracle(),
            risk_summary=self._risk.summary(),
            catastrophic=catastrophic,
        )
        self._final_info = {
            "task": self.task,
            "submitted": submitted,
            "catastrophic": catastrophic,
            "diagnosis": diagnosis_text if diagnosis_text is not None else self._diagnosis_text,
            "is_success": grade.success,
            "reward_components": grade.components,
            "oracles": grade.oracles,
            "risk": grade.risk,
            "root_cause": self.scenario.root_cause().as_dict(),
            "split": self.split,
            "noise": self._episodes.noise_log(),
            "variant": {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.scenario.variant.items()},
        }
        return grade.reward

    def _health(self) -> float:
        """Potential for shaping: the client's success ratio right now."""
        assert self.scenario is not None
        return self._episodes.health(self.scenario)

    def _observation(self) -> dict[str, Any]:
        assert self.backend is not None and self.scenario is not None
        seen = self._episodes.observe(self.scenario, self._metric_names, WINDOW)
        return {
            "output": sanitize(self._last_output, OUTPUT_MAX),
            "alerts": self._clean("alerts", seen.alerts, ALERTS_MAX),
            "logs": self._clean("logs", seen.logs, LOGS_MAX),
            "traces": self._clean("traces", seen.traces, TRACES_MAX),
            "metrics": np.clip(seen.metrics, 0.0, METRIC_MAX).astype(np.float32, copy=False),
            "metrics_mask": seen.metrics_mask.astype(np.int8),
            "step": np.array([self._steps], dtype=np.int64),
            "time": np.array([max(self.backend.now - self._t0, 0.0)], dtype=np.float32),
        }

    def _clean(self, field: str, text: str, limit: int) -> str:
        """``sanitize(text, limit)``, once per text the backend hands out."""
        hit = self._sanitized.get(field)
        if hit is not None and hit[0] is text:
            return hit[1]
        out = sanitize(text, limit)
        self._sanitized[field] = (text, out)
        return out

    @property
    def spec(self) -> Any:
        return self.__dict__.get("_spec")

    @spec.setter
    def spec(self, value: Any) -> None:
        if value is not None and value.id in ENV_IDS and scenario_class(value.id) is not self.scenario_cls:
            # gym.make merges the caller's kwargs over the registered ones, but the scenario defines the id
            asked = value.kwargs.get("scenario")
            hint = f"gym.make({resolve_id(asked)!r})" if isinstance(asked, str) else "SREEnv(scenario=...)"
            raise ValueError(f"{value.id} is its own scenario; scenario={asked!r} cannot change it (use {hint})")
        # gym.make stamps the registered (deterministic) spec on the env; on a live cluster say otherwise
        episodes = self.__dict__.get("_episodes")
        if value is not None and episodes is not None and episodes.nondeterministic and not value.nondeterministic:
            import dataclasses

            value = dataclasses.replace(value, nondeterministic=True)
        self.__dict__["_spec"] = value

    def close(self) -> None:
        """Release a live backend's sandbox, agent credentials and node pods (the simulator holds none)."""
        self._episodes.close()

    def _info(self, result: CommandResult | None) -> dict[str, Any]:
        info: dict[str, Any] = {"step": self._steps, "time_s": float(self.backend.now - self._t0) if self.backend else 0.0}
        if result is not None:
            info |= {"exit_code": result.exit_code, "cost_s": result.cost_s, "mutating": result.mutating}
        return info

    @property
    def history(self) -> list[dict[str, Any]]:
        return list(self._history)

    @staticmethod
    def command_reference() -> str:
        """Every command an agent can type (shell, kubectl, ssh, observability, submit)."""
        from sre_env.telemetry import telemetry_reference

        return command_reference() + "\n" + telemetry_reference()


class EpisodeLength(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """The one step limit of an SREGym id: ``SREEnv.max_steps``.

    Every id is registered with this wrapper (outside Gymnasium's ``TimeLimit``) and
    no ``max_episode_steps`` of its own, so the env is the limit: it grades the
    episode when the limit is reached. ``gym.make(id, max_episode_steps=N)`` adds a
    ``TimeLimit`` of N below this wrapper, which hands N to the env, so both agree;
    ``max_steps=N`` does the same without a ``TimeLimit``. The spec reports the limit.
    """

    def __init__(self, env: gym.Env) -> None:
        gym.utils.RecordConstructorArgs.__init__(self)
        gym.Wrapper.__init__(self, env)
        inner = env.unwrapped
        limit = env.spec.max_episode_steps if env.spec is not None else None
        if limit is not None:
            asked = ((inner.spec.kwargs if inner.spec is not None else None) or {}).get("max_steps")
            if asked is not None and int(asked) != int(limit):
                raise ValueError(f"max_steps={asked} and max_episode_steps={limit} are the same step limit: pass one of them")
            inner.max_steps = int(limit)

    @property
    def spec(self) -> Any:
        spec = super().spec
        if spec is None:
            return None
        import dataclasses

        return dataclasses.replace(spec, max_episode_steps=self.env.unwrapped.max_steps)
