"""Episode recording: one JSON line per event, and an ATIF trajectory per episode.

``RecordEpisode`` wraps a text-action env (the plain env, or a chat wrapper's
inner env) and appends to a JSONL file: a ``reset`` line (seed, brief), one
``step`` line per command (command, exit code, output, reward, the flags) and
an ``end`` line with the grade. With ``atif_dir`` it also writes each episode as
an ATIF trajectory (the Agent Trajectory Interchange Format used by Harbor and
Terminal-Bench, schema ``ATIF-v1.4``): a system step with the incident, then
one agent step per command, each a ``run_command`` tool call with its
observation, and ``final_metrics`` with the reward and token totals.

An agent that knows more about a turn (its reasoning, token counts) says so
with ``note_agent_turn`` before the step; the recorder attaches it.

    env = RecordEpisode(gym.make("SREGym/DiskSector-v0"), "runs/episodes.jsonl", atif_dir="runs/atif")
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import gymnasium as gym

__all__ = ["RecordEpisode", "atif_trajectory", "json_safe", "ATIF_VERSION"]

ATIF_VERSION = "ATIF-v1.4"


def json_safe(value: Any) -> Any:
    """``value`` as strict JSON data: what episode records hold, here and in evaluation's reports.

    Mappings get string keys, tuples become lists, numpy scalars plain numbers,
    non-finite floats ``null`` (many parsers reject NaN/Infinity), anything
    else its ``str``.
    """
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [json_safe(v) for v in value]
    if isinstance(value, (bool, str)) or value is None:
        return value
    if hasattr(value, "item") and not isinstance(value, (int, float)):  # numpy scalars
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (int, float)):
        return value
    return str(value)


def atif_trajectory(
    *,
    session_id: str,
    agent: str,
    model: str | None,
    brief: str,
    turns: list[dict[str, Any]],
    final: dict[str, Any],
    system_prompt: str | None = None,
) -> dict[str, Any]:
    """An ATIF trajectory from the brief and the agent's turns.

    Each turn: ``command``, ``output``, optional ``message`` (what the model
    said), ``reasoning``, ``prompt_tokens``, ``completion_tokens``, ``exit_code``.
    """
    steps: list[dict[str, Any]] = []
    if system_prompt:
        steps.append({"step_id": len(steps) + 1, "source": "system", "message": system_prompt})
    steps.append({"step_id": len(steps) + 1, "source": "user", "message": brief})
    prompt_total = completion_total = 0
    for i, turn in enumerate(turns, 1):
        call_id = f"call_{i}"
        command = str(turn.get("command", ""))
        is_submit = command.strip().startswith("submit")
        name, args = ("submit", {"diagnosis": command.strip()[len("submit") :].strip()}) if is_submit else ("run_command", {"command": command})
        step: dict[str, Any] = {
            "step_id": len(steps) + 1,
            "source": "agent",
            "message": str(turn.get("message") or ""),
            "tool_calls": [{"tool_call_id": call_id, "function_name": name, "arguments": args}],
            "observation": {"results": [{"source_call_id": call_id, "content": str(turn.get("output", ""))}]},
            "extra": {"exit_code": int(turn.get("exit_code", 0))},
        }
        if model:
            step["model_name"] = model
        if turn.get("reasoning"):
            step["reasoning_content"] = str(turn["reasoning"])
        metrics = {k: int(turn[k]) for k in ("prompt_tokens", "completion_tokens") if turn.get(k) is not None}
        if metrics:
            step["metrics"] = metrics
            prompt_total += metrics.get("prompt_tokens", 0)
            completion_total += metrics.get("completion_tokens", 0)
        steps.append(step)
    agent_obj: dict[str, Any] = {"name": agent, "version": _version()}
    if model:
        agent_obj["model_name"] = model
    return json_safe(
        {
            "schema_version": ATIF_VERSION,
            "session_id": session_id,
            "agent": agent_obj,
            "steps": steps,
            "final_metrics": {
                "total_prompt_tokens": prompt_total,
                "total_completion_tokens": completion_total,
                "total_steps": len(steps),
                "extra": final,
            },
        }
    )


def _version() -> str:
    from sre_env import __version__

    return __version__


class RecordEpisode(gym.Wrapper):
    """Append every reset/step of a text-action env to ``path`` (JSONL); optionally ATIF per episode."""

    def __init__(self, env: gym.Env, path: str | Path, *, atif_dir: str | Path | None = None, agent: str = "agent", model: str | None = None, output_chars: int = 4000) -> None:
        super().__init__(env)
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.atif_dir = Path(atif_dir) if atif_dir is not None else None
        if self.atif_dir is not None:
            self.atif_dir.mkdir(parents=True, exist_ok=True)
        self.agent = agent
        self.model = model
        self.output_chars = int(output_chars)
        self.episode = 0
        self._seed: int | None = None
        self._brief = ""
        self._turns: list[dict[str, Any]] = []
        self._note: dict[str, Any] = {}
        self.atif_paths: list[Path] = []

    def _write(self, record: dict[str, Any]) -> None:
        with self.path.open("a", encoding="utf-8") as f:
            f.write(json.dumps(json_safe(record), allow_nan=False) + "\n")

    def note_agent_turn(self, message: str | None = None, *, reasoning: str | None = None, prompt_tokens: int | None = None, completion_tokens: int | None = None) -> None:
        """Attach what the agent said and spent to the next step's record."""
        self._note = {k: v for k, v in {"message": message, "reasoning": reasoning, "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}.items() if v is not None}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict[str, Any]]:
        obs, info = self.env.reset(seed=seed, options=options)
        self.episode += 1
        self._seed = seed
        self._brief = str(obs.get("output", "")) if isinstance(obs, dict) else str(obs)
        self._turns = []
        self._note = {}
        self._write({"type": "reset", "episode": self.episode, "env_id": self._env_id(), "seed": seed, "brief": self._brief})
        return obs, info

    def _env_id(self) -> str:
        spec = getattr(self.env, "spec", None)
        return spec.id if spec is not None and spec.id else type(self.env.unwrapped).__name__

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        output = str(obs.get("output", "")) if isinstance(obs, dict) else str(obs)
        turn = {"command": str(action), "output": output[: self.output_chars], "exit_code": int(info.get("exit_code", 0)), **self._note}
        self._turns.append(turn)
        self._note = {}
        self._write({"type": "step", "episode": self.episode, "step": len(self._turns), **turn, "reward": float(reward), "terminated": bool(terminated), "truncated": bool(truncated), "risk_flags": info.get("risk_flags", [])})
        if terminated or truncated:
            final = {k: info.get(k) for k in ("is_success", "reward_components", "diagnosis", "root_cause", "task", "submitted")}
            final["reward"] = float(reward)
            self._write({"type": "end", "episode": self.episode, **final, "oracles": info.get("oracles", {})})
            if self.atif_dir is not None:
                traj = atif_trajectory(session_id=f"{self._env_id()}-seed{self._seed}-ep{self.episode}", agent=self.agent, model=self.model, brief=self._brief, turns=self._turns, final=final)
                path = self.atif_dir / f"{self._env_id().replace('/', '_')}-seed{self._seed}-ep{self.episode}.json"
                path.write_text(json.dumps(traj, indent=2, allow_nan=False) + "\n", encoding="utf-8")
                self.atif_paths.append(path)
        return obs, reward, terminated, truncated, info
