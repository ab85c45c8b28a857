"""The agent's shell: one command line in, what a terminal would show out.

``run_command`` parses a line like bash (quotes, pipes, heredocs), runs
``kubectl``/``ssh``/extra commands against the episode's Backend, pipes their
stdout through text filters, and returns the merged output, exit code,
simulated cost and whether cluster state changed. It never raises: agent
mistakes become the text the real tools print.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping

from ..backend import Backend
from .filters import FILTERS
from .kubectl import COMMANDS, run_kubectl
from .parse import ShellSyntaxError, Stage, parse_pipeline
from .ssh import run_ssh

__all__ = ["CommandResult", "ShellContext", "Handler", "run_command", "command_reference"]

INVALID_COST = 1.0
MAX_SLEEP = 300.0


@dataclass(frozen=True)
class CommandResult:
    output: str  # what the terminal shows (stdout+stderr merged as a terminal would)
    exit_code: int
    cost_s: float  # simulated seconds the command takes
    mutating: bool  # True when the command changed cluster state


Handler = Callable[["ShellContext", list[str]], tuple[str, int]]


@dataclass
class ShellContext:
    backend: Backend
    namespace: str = "default"
    extra_commands: Mapping[str, Handler] = field(default_factory=dict)


def _sleep(argv: list[str]) -> tuple[str, str, int, float]:
    if not argv:
        return "", "sleep: missing operand\nTry 'sleep --help' for more information.\n", 1, INVALID_COST
    total = 0.0
    for a in argv:
        mult = {"s": 1, "m": 60, "h": 3600}.get(a[-1:], 1)
        body = a[:-1] if a[-1:] in "smh" else a
        try:
            total += float(body) * mult
        except ValueError:
            return "", f"sleep: invalid time interval '{a}'\nTry 'sleep --help' for more information.\n", 1, INVALID_COST
    return "", "", 0, min(max(total, 0.0), MAX_SLEEP)


def _run_stage(ctx: ShellContext, stage: Stage, stdin: str | None) -> tuple[str, str, int, float, bool, str | None]:
    argv = stage.argv
    name = argv[0]
    if stage.stdin is not None:
        stdin = stage.stdin
    if name == "kubectl":
        return run_kubectl(ctx, argv[1:], stdin)
    extra = ctx.extra_commands.get(name)
    if extra is not None:
        out, code = extra(ctx, argv[1:])
        return out, "", code, 2.0, False, None
    if name == "ssh":
        return (*run_ssh(ctx, argv[1:]), None)
    f = FILTERS.get(name)
    if f is not None:
        out, err, code = f(argv[1:], stdin)
        return out, err, code, 0.0, False, None
    if name == "sleep":
        out, err, code, cost = _sleep(argv[1:])
        return out, err, code, cost, False, None
    if name in ("watch",):
        return "", "sre-env shell: watch is not supported: the session is not interactive; re-run the command instead\n", 2, INVALID_COST, False, None
    shown = name if name else "''"
    return "", f"bash: {shown}: command not found\n", 127, INVALID_COST, False, None


def _run(ctx: ShellContext, command: str) -> CommandResult:
    try:
        stages = parse_pipeline(command)
    except ShellSyntaxError as exc:
        return CommandResult(exc.message + "\n", exc.code, INVALID_COST, False)
    if not stages:
        return CommandResult("", 0, 0.5, False)
    stdin: str | None = None
    shown_err: list[str] = []
    code = 0
    cost = 0.0
    mutated = False
    last = len(stages) - 1
    tail = ""
    for i, stage in enumerate(stages):
        out, err, code, c, m, merged = _run_stage(ctx, stage, stdin)
        # a pipeline's stages run side by side: it takes as long as its slowest stage, so
        # a line of 5000 stages costs one stage's time, not 5000 of them
        cost = max(cost, c)
        mutated = mutated or m
        if stage.stderr_to_stdout and not stage.drop_stderr:
            out, err = (merged if merged is not None else out + err), ""
        if stage.drop_stdout:
            out = ""
        if stage.drop_stderr:
            err = ""
        if i == last and merged is not None and err and out and not stage.drop_stdout:
            tail = merged  # the terminal shows both streams in the order they were written
        else:
            if err:
                shown_err.append(err)
            tail = out
        stdin = out
    output = "".join(shown_err) + tail
    return CommandResult(output, code, cost if cost > 0 else 0.5, mutated)


def run_command(ctx: ShellContext, command: str, *, contain: bool = True) -> CommandResult:
    """Run one agent command line; never raises unless ``contain`` is off.

    ``contain=False`` is for a caller that handles a failure itself -- the
    simulator's episodes roll the cluster back when a command (or the time it
    lets pass) fails half-way.
    """
    if not isinstance(command, str):
        command = str(command)
    if not contain:
        return _run(ctx, command)
    try:
        return _run(ctx, command)
    except Exception as exc:  # last-resort safety net; real cases produce real messages
        return CommandResult(f"error: internal: {type(exc).__name__}: {exc}\n", 1, INVALID_COST, False)


def command_reference() -> str:
    """Supported commands, generated from the command specs (for LLM prompts)."""
    lines = ["Commands (one per step; stdout may be piped into grep/head/tail/wc/sort/uniq/cut/awk):", ""]
    for c in COMMANDS.values():
        lines.append(f"  {c.usage}")
        lines.append(f"      {c.summary}")
    lines += [
        "  ssh NODE COMMAND [args...]",
        "      Run a command on a node's host (journalctl, systemctl, crictl, df, free, ...).",
        "",
        "Filters: grep [-i -v -E -c -n -w -o -A N -B N -C N -e PAT], head/tail [-n N], wc [-l -w -c], sort [-r -n -k N -u],",
        "  uniq [-c], cut -d D -f LIST, awk '{print $N}', echo, cat. Heredocs (<<'EOF') feed stdin to kubectl apply -f -.",
        "Not supported: &&, ;, ||, $(...), backticks, redirects to files, interactive sessions (-f/--follow, -w, exec -it shells).",
    ]
    return "\n".join(lines) + "\n"
