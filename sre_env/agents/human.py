"""``sre-env play``: a person at the prompt, with history, colour and the same grade at the end.

Local words never cost a step: ``help`` (the command reference), ``alerts``,
``logs``, ``traces``, ``metrics`` (the client's headline numbers), ``history``
(the commands so far with their exit codes), ``quit``/``exit`` or end of input
(stop without submitting; still graded). At a terminal, the arrow keys recall
earlier commands (GNU readline; kept in ``~/.sre_env_history`` unless
``SRE_ENV_HISTORY`` names another file or is empty) and, unless ``--plain``,
output is coloured: failed commands in red, alerts in yellow, the prompt shows
the step and the cluster time. When stdin is not a terminal the command is
echoed, so a piped session reads like a transcript.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

__all__ = ["HumanAgent"]


class HumanAgent:
    """Reads commands from stdin; see the module docstring for the local words."""

    LOCAL = ("help", "alerts", "logs", "traces", "metrics", "history", "quit", "exit")

    def __init__(self, prompt: str = "sre-env$ ", *, color: bool = False, max_steps: int | None = None) -> None:
        self.prompt = prompt
        self._tty = sys.stdin.isatty()
        self._echo = not self._tty
        self._console = _console() if color else None
        self.max_steps = max_steps
        self._last_alerts = ""
        self._started = False
        self._history: list[tuple[str, int]] = []
        self._metric_names: list[str] = []
        self._readline = _setup_readline() if self._tty else None

    def reset(self, env: Any) -> None:
        self._last_alerts = ""
        self._started = False
        self._history = []
        self._metric_names = list(getattr(env.unwrapped, "_metric_names", []))

    # ------------------------------------------------------------ printing
    def _print(self, text: str, style: str | None = None) -> None:
        if self._console is not None:
            from rich.text import Text

            self._console.print(Text(text, style=style or ""), soft_wrap=True)
        else:
            print(text)

    def show(self, observation: dict[str, Any], exit_code: int = 0) -> None:
        """Print what changed: the output, and the alerts when they differ from last time."""
        if observation.get("output"):
            self._print(observation["output"].rstrip("\n"), "red" if exit_code else None)
        alerts = observation.get("alerts", "")
        if alerts != self._last_alerts:
            self._print("\n[alerts]\n" + (alerts or "(none firing)"), "yellow")
            self._last_alerts = alerts

    def _prompt(self, observation: dict[str, Any]) -> str:
        if not self._tty:
            return self.prompt
        step = int(observation["step"][0]) if "step" in observation else len(self._history)
        t = float(observation["time"][0]) if "time" in observation else 0.0
        budget = f"/{self.max_steps}" if self.max_steps else ""
        return f"[{step}{budget} t+{t:.0f}s] {self.prompt}"

    # ------------------------------------------------------------ the loop
    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> str:
        from sre_env.agents.episode import StopEpisode

        if not self._started:  # first call: the brief and the alerts at the start
            self.show(observation)
            self._started = True
        while True:
            try:
                line = input(self._prompt(observation)).strip()
            except (EOFError, KeyboardInterrupt):
                print("\n(end of input: ending without a diagnosis)")
                raise StopEpisode from None
            if self._echo:
                print(line)
            if not line:
                continue
            if line in ("quit", "exit"):
                raise StopEpisode
            if not self._local(line, observation):
                return line

    def _local(self, line: str, observation: dict[str, Any]) -> bool:
        """Handle a local word; False when ``line`` is a command for the cluster."""
        from sre_env.env import SREEnv

        if line == "help":
            print(SREEnv.command_reference() + "\nLocal: help, alerts, logs, traces, metrics, history, quit (end without submitting), submit <diagnosis> (end and grade).")
        elif line == "alerts":
            self._print(observation.get("alerts") or "(none firing)", "yellow")
        elif line == "logs":
            print(observation.get("logs") or "(no recent warnings or errors)")
        elif line == "traces":
            print(observation.get("traces") or "(no traces)")
        elif line == "metrics":
            from sre_env.wrappers.text import metrics_summary

            print(metrics_summary(observation, self._metric_names) or "(no metrics)")
        elif line == "history":
            if not self._history:
                print("(no commands yet)")
            for i, (command, code) in enumerate(self._history, 1):
                self._print(f"{i:3d}  {command}" + (f"   (exit {code})" if code else ""), "red" if code else None)
        else:
            return False
        return True

    def on_step(self, step: Any, observation: dict[str, Any]) -> None:
        self._history.append((step.command, step.exit_code))
        self.show(observation, step.exit_code)

    def close(self) -> None:
        if self._readline is not None:
            path = _history_file()
            if path is not None:
                try:
                    self._readline.write_history_file(str(path))
                except OSError:
                    pass


def _console() -> Any:
    try:
        from rich.console import Console
    except ImportError:
        return None
    return Console(highlight=False)


def _history_file() -> Path | None:
    value = os.environ.get("SRE_ENV_HISTORY")
    if value is not None:
        return Path(value) if value else None
    return Path.home() / ".sre_env_history"


def _setup_readline() -> Any:
    """GNU readline with a persistent history, where the platform has it."""
    try:
        import readline
    except ImportError:  # pragma: no cover - Windows
        return None
    path = _history_file()
    if path is not None and path.exists():
        try:
            readline.read_history_file(str(path))
        except OSError:
            pass
    readline.set_history_length(1000)
    return readline
