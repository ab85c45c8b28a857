"""The Dict observation rendered as one prompt-ready string.

Language models read text; the env's observation is a Dict (output, alerts,
logs, traces, a metrics window). ``render_observation`` lays the text fields
out under headers and summarises the metrics window as the few numbers people
look at first (client success ratio, request rate, p99 latency, now vs. the
start of the window), skipping empty sections. ``TextObservation`` is the
wrapper form.

    env = TextObservation(gym.make("SREGym/MissingEnvVar-v0"))
    text, info = env.reset(seed=0)
    print(text)
"""

from __future__ import annotations

from typing import Any, Sequence

import gymnasium as gym
import numpy as np
from gymnasium import spaces

__all__ = ["render_observation", "metrics_summary", "TextObservation", "SECTIONS"]

#: observation fields rendered, in order, with their headers
SECTIONS: tuple[tuple[str, str], ...] = (("output", "Output"), ("alerts", "Firing alerts"), ("logs", "Recent warnings and errors in logs"), ("traces", "Traces (last 30 s)"))
_HEADLINE = ("client_success_ratio", "client_rps", "client_latency_p99_ms")


def metrics_summary(obs: dict[str, Any], metric_names: Sequence[str]) -> str:
    """The client-side headline metrics: value now and at the start of the window."""
    window = np.asarray(obs.get("metrics", []))
    if window.ndim != 2 or not len(window) or not metric_names:
        return ""
    lines = []
    for j, name in enumerate(metric_names):
        base = name.split("{", 1)[0]
        if base in _HEADLINE and j < window.shape[1]:
            first, last = float(window[0, j]), float(window[-1, j])
            fmt = "{:.3f}" if base == "client_success_ratio" else "{:.1f}"
            lines.append(f"{base}: {fmt.format(last)} (window start {fmt.format(first)})")
    return "\n".join(lines)


def render_observation(obs: dict[str, Any], *, metric_names: Sequence[str] = (), sections: Sequence[tuple[str, str]] = SECTIONS, header: bool = True) -> str:
    """One string with every non-empty text field under a header, plus the headline metrics."""
    parts = []
    if header and "step" in obs:
        step = int(np.asarray(obs["step"]).ravel()[0])
        t = float(np.asarray(obs.get("time", [0.0])).ravel()[0])
        parts.append(f"[step {step}, {t:.0f} s since the incident was handed over]")
    for key, title in sections:
        value = str(obs.get(key, "") or "").rstrip()
        if key == "output":
            parts.append(value if value else "(no output)")
        elif value:
            parts.append(f"## {title}\n{value}")
    summary = metrics_summary(obs, metric_names)
    if summary:
        parts.append("## Client metrics\n" + summary)
    return "\n\n".join(parts) + "\n"


class TextObservation(gym.ObservationWrapper, gym.utils.RecordConstructorArgs):
    """Observation -> ``render_observation(obs)``; the Dict stays in ``info["dict_observation"]``."""

    def __init__(self, env: gym.Env, *, max_length: int = 32768, keep_dict: bool = False) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, max_length=max_length, keep_dict=keep_dict)
        super().__init__(env)
        self.observation_space = spaces.Text(max_length=max_length, min_length=0, charset=_charset())
        self.max_length = max_length
        self.keep_dict = keep_dict
        self._metric_names: list[str] = []

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        obs, info = self.env.reset(seed=seed, options=options)
        self._metric_names = list(info.get("metric_names", []))
        return self._convert(obs, info), info

    def step(self, action: Any) -> tuple[str, float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        return self._convert(obs, info), reward, terminated, truncated, info

    def _convert(self, obs: dict[str, Any], info: dict[str, Any]) -> str:
        if self.keep_dict:
            info["dict_observation"] = obs
        return self.observation(obs)

    def observation(self, observation: dict[str, Any]) -> str:
        text = render_observation(observation, metric_names=self._metric_names)
        if len(text) > self.max_length:
            text = text[: self.max_length - 20] + "\n...[truncated]\n"
        return text


def _charset() -> str:
    from sre_env.env import CHARSET

    return "".join(sorted(CHARSET))
