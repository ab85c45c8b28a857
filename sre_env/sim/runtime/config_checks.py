"""Configuration a process refuses at start: redis' FATAL CONFIG FILE ERROR, nginx's [emerg].

redis-server validates every directive of its config file and command line
before it does anything else and exits 1 on a bad one; nginx parses its whole
configuration and exits 1 on a syntax error. Either way the container
crash-loops with the process' own message in its log — what an agent who
mistypes a repair sees.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from sre_env.sim.kernel.pods import StartOutcome
from sre_env.sim.runtime.mounts import mounted_file
from sre_env.sim.runtime.redis_model import (
    POLICIES,
    is_redis,
    parse_memory,
    startup_config,
)

if TYPE_CHECKING:
    from sre_env.apps.base import Component
    from sre_env.sim.kernel.world import World

__all__ = ["nginx_syntax_error", "start_config_error"]

Obj = dict[str, Any]
_YES_NO = ("yes", "no")


def _redis_problem(name: str, value: str) -> str | None:
    if name in ("maxmemory",) and parse_memory(value) is None:
        return "argument must be a memory value"
    if name == "maxmemory-policy" and value.lower() not in POLICIES:
        return "argument(s) must be one of the following: volatile-lru, volatile-lfu, volatile-random, volatile-ttl, allkeys-lru, allkeys-lfu, allkeys-random, noeviction"
    if name in ("port", "tls-port", "databases", "io-threads", "timeout", "tcp-keepalive", "maxmemory-samples") and not value.lstrip("-").isdigit():
        return "Invalid port" if name.endswith("port") else "argument couldn't be parsed into an integer"
    if name in ("appendonly", "io-threads-do-reads", "protected-mode") and value.lower() not in _YES_NO:
        return "argument must be 'yes' or 'no'"
    if not name or not re.fullmatch(r"[a-z][a-z0-9-]*", name):
        return "Bad directive or wrong number of arguments"
    return None


def _redis_error(world: World, pod: Obj, spec: Obj) -> list[str] | None:
    _, conf_file = startup_config(world, pod, spec)
    text = mounted_file(world, pod, spec, conf_file) if conf_file else ""
    conf_lines = [ln for ln in (text or "").splitlines()]
    # redis appends command-line directives to the file's text and reports the line of the first bad one
    from sre_env.sim.runtime.image_contents import process_cmdline

    argv = process_cmdline(spec)
    extra: list[tuple[str, str]] = []
    rest = argv[2:] if len(argv) > 1 and not argv[1].startswith("--") else argv[1:]
    i = 0
    while i < len(rest):
        if rest[i].startswith("--"):
            name, vals = rest[i][2:].lower(), []
            i += 1
            while i < len(rest) and not rest[i].startswith("--"):
                vals.append(rest[i])
                i += 1
            extra.append((name, " ".join(vals)))
        else:
            i += 1
    entries = []
    for n, raw in enumerate(conf_lines, start=1):
        parts = raw.strip().split(None, 1)
        if parts and not parts[0].startswith("#"):
            entries.append((n, parts[0].lower(), parts[1].strip().strip('"') if len(parts) > 1 else "", raw.strip()))
    base = len(conf_lines)
    for k, (name, value) in enumerate(extra, start=1):
        entries.append((base + k, name, value, f'{name} "{value}"' if value else name))
    for line_no, name, value, shown in entries:
        problem = _redis_problem(name, value)
        if problem:
            return ["*** FATAL CONFIG FILE ERROR (Redis 6.2.4) ***", f"Reading the configuration file, at line {line_no}", f">>> '{shown}'", problem]
    return None


def _nginx_error(text: str, path: str) -> list[str] | None:
    depth = 0
    quote = ""
    line = 1
    for i, ch in enumerate(text):
        if ch == "\n":
            line += 1
            continue
        if quote:
            if ch == quote and text[i - 1] != "\\":
                quote = ""
            continue
        if ch in "\"'":
            quote = ch
        elif ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
            if depth < 0:
                return [f'nginx: [emerg] unexpected "}}" in {path}:{line}']
    if depth > 0:
        return [f'nginx: [emerg] unexpected end of file, expecting "}}" in {path}:{line}']
    return None


def start_config_error(world: World, pod: Obj, spec: Obj, component: Component | None) -> StartOutcome | None:
    """The outcome of a process that rejects its configuration at start (None: it accepts it)."""
    if component is None:
        return None
    lines: list[str] | None = None
    if is_redis(component):
        lines = _redis_error(world, pod, spec)
    elif component.log_format == "openresty":
        path = next((p for key, p, _ in component.config_files if key == "nginx.conf"), "")
        text = mounted_file(world, pod, spec, path) if path else None
        lines = _nginx_error(_strip_comments(text), path) if text else None
    if not lines:
        return None
    events = tuple((0.0, "raw", (("line", line),)) for line in lines)
    return StartOutcome(exit_after=0.2, exit_code=1, reason="Error", serve_after=None, log_events=events, memory_mib=2.0)


def _strip_comments(text: str) -> str:
    return "\n".join(re.sub(r"(^|\s)#.*$", r"\1", ln) if '"' not in ln and "'" not in ln else ln for ln in text.splitlines())


def nginx_syntax_error(text: str, path: str) -> str | None:
    """nginx's ``[emerg]`` line for a configuration it cannot parse, or None."""
    lines = _nginx_error(_strip_comments(text), path) if text else None
    return lines[0] if lines else None
