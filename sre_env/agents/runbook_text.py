"""Reading what kubectl, ssh and journalctl print: the runbook baseline's text helpers.

Pure functions over command output (tables by header position, ``describe``
blocks, jsonpath/JSON, quantities, revision templates, Corefiles), kept apart
from :mod:`sre_env.agents.runbook` so its playbooks read as a runbook.
"""

from __future__ import annotations

import json
import re
from typing import Any

__all__ = ["ago_s", "common_prefix", "corefile_overrides", "describe_events", "describe_field", "flatten", "fmt_cpu_m", "json_patch_cmd", "last_error", "load_json", "parse_table", "quantity", "restart_count", "selector_text", "tables", "template_env"]


def parse_table(text: str) -> list[dict[str, str]]:
    """Rows of a kubectl table (columns start where the header's words start after two spaces)."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines or lines[0].startswith(("No resources", "Error", "error")):
        return []
    header = lines[0]
    starts = [m.start() for m in re.finditer(r"(?:^|(?<=  ))\S", header)]
    names = [header[s:e].strip() for s, e in zip(starts, starts[1:] + [len(header) + 1000])]
    rows = []
    for line in lines[1:]:
        cells = [line[s:e].strip() for s, e in zip(starts, starts[1:] + [len(line) + 1000])]
        rows.append(dict(zip(names, cells)))
    return rows


def tables(text: str) -> list[list[dict[str, str]]]:
    """Every table of a multi-kind ``kubectl get a,b`` (blank-line separated)."""
    return [parse_table(block) for block in re.split(r"\n\s*\n", text) if block.strip()]


def load_json(text: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except (ValueError, TypeError):
        return {}
    return data if isinstance(data, dict) else {}


def ago_s(text: str) -> float | None:
    """``'5 (84s ago)'`` -> 84; ``'1 (17m ago)'`` -> 1020; no parenthesis -> None."""
    m = re.search(r"\(([\dhms]+) ago\)", text)
    if not m:
        return None
    total = 0.0
    for amount, unit in re.findall(r"(\d+)([dhms])", m.group(1)):
        total += int(amount) * {"d": 86400, "h": 3600, "m": 60, "s": 1}[unit]
    return total


def restart_count(text: str) -> int:
    m = re.match(r"\s*(\d+)", text or "")
    return int(m.group(1)) if m else 0


def quantity(text: str) -> float:
    """A Kubernetes quantity as a float in base units (cpu in cores, memory in bytes)."""
    m = re.fullmatch(r"\s*([\d.]+)\s*([a-zA-Z]*)\s*", str(text))
    if not m:
        return 0.0
    value, unit = float(m.group(1)), m.group(2)
    scale = {"m": 1e-3, "": 1, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "Ki": 1024, "Mi": 1024**2, "Gi": 1024**3, "Ti": 1024**4}
    return value * scale.get(unit, 1)


def fmt_cpu_m(millis: float) -> str:
    return f"{round(millis)}m"


def describe_events(text: str) -> list[tuple[str, str, str]]:
    """(type, reason, message) of the ``Events:`` block of a describe."""
    out = []
    block = text.split("\nEvents:", 1)[1] if "\nEvents:" in text else ""
    for row in parse_table(block.strip("\n")):
        if row.get("Type", "").startswith("--"):
            continue
        out.append((row.get("Type", ""), row.get("Reason", ""), row.get("Message", "")))
    return out


def describe_field(text: str, name: str) -> list[str]:
    """Values of ``Name:  value`` lines of a describe (every occurrence, in order)."""
    return [m.group(1).strip() for m in re.finditer(rf"^\s*{re.escape(name)}:\s+(.*)$", text, re.MULTILINE)]


def json_patch_cmd(kind: str, name: str, ns: str, ops: list[dict[str, Any]]) -> str:
    return f"kubectl patch {kind} {name} -n {ns} --type=json -p '{json.dumps(ops)}'"


def selector_text(selector: dict[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in selector.items())


def common_prefix(a: str, b: str) -> str:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]


def last_error(journal: str) -> str:
    """The last line of a journal excerpt that reports an error."""
    return next((line.strip() for line in reversed(journal.splitlines()) if re.search(r"\bE\d{4}|error|failed", line, re.IGNORECASE)), "")


def flatten(value: Any, prefix: str = "") -> dict[str, str]:
    """A pod spec as ``path -> value`` leaves; named list items (containers, env, ports) keyed by name."""
    out: dict[str, str] = {}
    if isinstance(value, dict):
        for key in sorted(value):
            out.update(flatten(value[key], f"{prefix}.{key}" if prefix else str(key)))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            tag = item.get("name") if isinstance(item, dict) and isinstance(item.get("name"), str) else str(i)
            out.update(flatten(item, f"{prefix}[{tag}]"))
    else:
        out[prefix] = json.dumps(value) if not isinstance(value, str) else value
    return out


def corefile_overrides(corefile: str, name: str) -> list[str]:
    """Corefile lines or blocks that special-case ``name`` (rewrite, template, hosts entries)."""
    out = []
    lines = corefile.splitlines(keepends=True)
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if re.match(r"(rewrite|template|hosts)\b", stripped) and re.search(rf"\b{re.escape(name)}\b", "".join(lines[i:i + 6])):
            block = [line]
            if stripped.endswith("{"):
                depth = 1
                while depth and i + 1 < len(lines):
                    i += 1
                    block.append(lines[i])
                    depth += lines[i].count("{") - lines[i].count("}")
            out.append("".join(block))
        i += 1
    return out


def template_env(text: str) -> dict[str, str]:
    """NAME -> value from the ``Environment:`` block of a ``rollout history --revision`` template."""
    out: dict[str, str] = {}
    inside = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped == "Environment:":
            inside = True
            continue
        if inside:
            m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*):\s+(.*)$", stripped)
            if m:
                out[m.group(1)] = m.group(2).strip()
            else:
                inside = False
    return out
