"""Human-readable episode reports (terminal) and their JSON form.

``rich`` is used when it is installed, for colour and panels; it is not a
dependency of sre-env, so everything also renders as plain text (and always
does when ``plain=True``). Both forms print the same facts in the same order:
the incident brief, each command with its exit code and the first lines of
its output, the verdict with every oracle check (PASS/FAIL), the ground-truth
root cause (only ever shown once the episode is over) and the reward.
"""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

from sre_env.agents.episode import EpisodeResult
from sre_env.wrappers.recording import json_safe

__all__ = ["render", "format_plain", "to_json", "to_dict", "rich_available"]

#: lines of each command's output shown in the report
OUTPUT_LINES = 6


def rich_available() -> bool:
    """Whether ``rich`` can be imported (checked lazily: importing it costs ~50 ms)."""
    try:
        import rich  # noqa: F401
    except ImportError:
        return False
    return True


def render(result: EpisodeResult, *, file: TextIO | None = None, plain: bool = False, output_lines: int = OUTPUT_LINES) -> None:
    """Print the report of ``result`` to ``file`` (stdout by default), with rich when possible."""
    out = file if file is not None else sys.stdout
    if not plain and rich_available():
        _render_rich(result, out, output_lines)
    else:
        out.write(format_plain(result, output_lines=output_lines))


# ---------------------------------------------------------------- shared facts
def _verdict(result: EpisodeResult) -> str:
    return "PASS" if result.passed else "FAIL"


def _ending(result: EpisodeResult) -> str:
    if result.terminated:
        return "submitted"
    if result.truncated:
        return "not submitted (truncated)"
    return "unfinished"


def _checks(result: EpisodeResult) -> list[tuple[str, str, bool, str]]:
    """(oracle, check, passed, detail) for every check of every oracle."""
    rows = []
    for oracle, data in result.oracles.items():
        for check in data.get("checks", ()):
            rows.append((oracle, str(check.get("name", "?")), bool(check.get("passed")), str(check.get("detail", ""))))
    return rows


def _head(text: str, lines: int) -> list[str]:
    kept = text.splitlines()
    if len(kept) > lines:
        return kept[:lines] + [f"... ({len(kept) - lines} more lines)"]
    return kept


def _header(result: EpisodeResult) -> str:
    agent = f"  agent={result.agent}" if result.agent else ""
    return f"{result.env_id}  seed={result.seed}{agent}"


def _summary_line(result: EpisodeResult) -> str:
    return (
        f"{len(result.steps)} step(s), {result.sim_seconds:.0f} s of cluster time, {_ending(result)}; "
        f"reward {result.reward:.3f}"
    )


def _components(result: EpisodeResult) -> str:
    return ", ".join(f"{k}={v:.3f}" for k, v in result.reward_components.items()) or "-"


# ---------------------------------------------------------------- plain text
def format_plain(result: EpisodeResult, *, output_lines: int = OUTPUT_LINES) -> str:
    """The report as plain text (no colour, ASCII verdicts): for logs, pipes and tests."""
    lines = [f"=== {_header(result)} ===", "", "Incident brief:", *_indent(result.brief.splitlines()), ""]
    lines.append(f"Steps ({len(result.steps)}):")
    for i, step in enumerate(result.steps, 1):
        lines.append(f"  [{i}] $ {step.command}    (exit {step.exit_code})")
        lines.extend(_indent(_head(step.output, output_lines), "      "))
    lines += ["", f"Diagnosis: {result.diagnosis if result.diagnosis is not None else '(none submitted)'}", ""]
    lines.append(f"Grade: {_verdict(result)}  ({_summary_line(result)})")
    for oracle, name, passed, detail in _checks(result):
        lines.append(f"  {'PASS' if passed else 'FAIL'}  {oracle}.{name}: {detail}")
    lines += ["", "Root cause (ground truth):"]
    lines.extend(_indent(_root_cause_lines(result)))
    lines += ["", f"Reward: {result.reward:.3f}  [{_components(result)}]", ""]
    return "\n".join(lines)


def _indent(lines: list[str], pad: str = "  ") -> list[str]:
    return [pad + line for line in lines]


def _root_cause_lines(result: EpisodeResult) -> list[str]:
    rc = result.root_cause
    if not rc:
        return ["(not available: the episode was not graded)"]
    out = [str(rc.get("summary", ""))]
    for key in ("component", "layer", "mechanism"):
        if rc.get(key):
            out.append(f"{key}: {rc[key]}")
    return out


# ---------------------------------------------------------------- rich
def _render_rich(result: EpisodeResult, out: TextIO, output_lines: int) -> None:
    from rich.console import Console, Group
    from rich.markup import escape
    from rich.padding import Padding
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    console = Console(file=out, highlight=False)
    console.rule(escape(_header(result)))
    console.print(Panel(escape(result.brief), title="Incident brief", border_style="yellow"))
    for i, step in enumerate(result.steps, 1):
        style = "green" if step.exit_code == 0 else "red"
        title = Text.assemble((f"[{i}] $ ", "bold"), (step.command, "bold cyan"), (f"  exit {step.exit_code}", style))
        console.print(title)
        body = "\n".join(_head(step.output, output_lines))
        if body:
            console.print(Padding(Text(body, style="dim", no_wrap=True, overflow="ellipsis"), (0, 0, 0, 4)))
    diagnosis = result.diagnosis if result.diagnosis is not None else "(none submitted)"
    console.print(Text.assemble(("Diagnosis: ", "bold"), diagnosis))
    table = Table(title=f"Grade: {_verdict(result)}", title_style="bold green" if result.passed else "bold red", expand=False)
    table.add_column("", no_wrap=True)
    table.add_column("check", no_wrap=True)
    table.add_column("detail")
    for oracle, name, passed, detail in _checks(result):
        mark = Text("✓ PASS", style="green") if passed else Text("✗ FAIL", style="bold red")
        table.add_row(mark, f"{oracle}.{name}", escape(detail))
    console.print(table)
    console.print(escape(_summary_line(result)))
    root = Text("\n".join(_root_cause_lines(result)))
    console.print(Panel(Group(root), title="Root cause (ground truth)", border_style="magenta"))
    console.print(Text.assemble(("Reward: ", "bold"), (f"{result.reward:.3f}", "bold green" if result.passed else "bold red"), f"  [{_components(result)}]"))


# ---------------------------------------------------------------- JSON
def to_dict(result: EpisodeResult) -> dict[str, Any]:
    """``result`` as JSON-safe data: steps become objects, non-finite floats become null."""
    data = {
        "env_id": result.env_id,
        "seed": result.seed,
        "agent": result.agent,
        "passed": result.passed,
        "reward": result.reward,
        "reward_components": result.reward_components,
        "oracles": result.oracles,
        "diagnosis": result.diagnosis,
        "root_cause": result.root_cause,
        "variant": result.variant,
        "sim_seconds": result.sim_seconds,
        "terminated": result.terminated,
        "truncated": result.truncated,
        "brief": result.brief,
        "steps": [{"command": s.command, "exit_code": s.exit_code, "output": s.output} for s in result.steps],
    }
    return json_safe(data)


def to_json(result: EpisodeResult, *, indent: int | None = 2) -> str:
    """``result`` as strict JSON (no NaN/Infinity, which many parsers reject)."""
    return json.dumps(to_dict(result), indent=indent, allow_nan=False)

