"""What frontend-proxy's envoy configuration costs per request, and whether envoy accepts it.

Envoy matches ``safe_regex`` with RE2: linear in the input, but linear with a
factor of the compiled *program size*. Counted repetitions multiply that size
(``(?:[a-z]{1,64}){1,32}`` compiles to thousands of instructions), and once a
program is too big for RE2's DFA cache matching falls back to the NFA, which
touches every instruction for every input byte: each request then burns
milliseconds of CPU in the header match. Envoy guards this with the runtime
key ``re2.max_program_size.error_level`` (default 100): a bigger program is
rejected when the configuration loads, so a rule like that only gets in when
someone also raises the limit in the runtime layer. Static configuration is
read at start, so only a new envoy process picks up a change.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import yaml

__all__ = ["EnvoyConfig", "parse_envoy", "re2_program_size", "request_cost_ms", "DEFAULT_ERROR_LEVEL"]

DEFAULT_ERROR_LEVEL = 100
#: programs above this size do not fit RE2's DFA budget per match and run on the NFA
DFA_LIMIT = 20_000
#: bytes of a typical request header the regex reads
INPUT_BYTES = 120
#: ns per (instruction x byte) on the NFA path
NFA_NS = 15.0


@dataclass(frozen=True)
class EnvoyConfig:
    #: (where, pattern, program size) of every safe_regex in the file
    regexes: tuple[tuple[str, str, int], ...] = ()
    error_level: int = DEFAULT_ERROR_LEVEL
    #: why envoy refuses to start with this file ("" when it loads)
    error: str = ""
    extra: dict[str, Any] = field(default_factory=dict)


def re2_program_size(pattern: str) -> int:
    """An estimate of RE2's compiled program size: counted repeats copy their operand."""

    def parse(i: int) -> tuple[int, int]:
        """Size of an alternation starting at ``i``; returns (size, index after it)."""
        alts = [0]
        while i < len(pattern) and pattern[i] != ")":
            if pattern[i] == "|":
                alts.append(0)
                i += 1
                continue
            size, i = atom(i)
            size, i = quantify(size, i)
            alts[-1] += size
        return sum(alts) + len(alts) - 1, i

    def atom(i: int) -> tuple[int, int]:
        ch = pattern[i]
        if ch == "(":
            j = i + 1
            if pattern.startswith("?:", j) or pattern.startswith("?i:", j):
                j = pattern.index(":", j) + 1
            size, j = parse(j)
            return size + 2, min(j + 1, len(pattern))
        if ch == "[":
            j = i + 1
            if j < len(pattern) and pattern[j] == "]":
                j += 1
            while j < len(pattern) and pattern[j] != "]":
                j += 2 if pattern[j] == "\\" else 1
            return 1, j + 1
        if ch == "\\":
            return 1, i + 2
        return 1, i + 1

    def quantify(size: int, i: int) -> tuple[int, int]:
        if i >= len(pattern):
            return size, i
        ch = pattern[i]
        if ch in "*+?":
            return size + 1, i + 1 + (1 if i + 1 < len(pattern) and pattern[i + 1] == "?" else 0)
        if ch == "{":
            end = pattern.find("}", i)
            body = pattern[i + 1 : end] if end > 0 else ""
            parts = body.split(",")
            try:
                lo = int(parts[0] or 0)
                hi = int(parts[1]) if len(parts) > 1 and parts[1] else (lo if len(parts) == 1 else lo + 1)
            except ValueError:
                return size, i + 1
            return min(size * max(hi, 1) + max(hi - lo, 0), 10**8), end + 1
        return size, i

    try:
        size, _ = parse(0)
    except (ValueError, IndexError):
        return len(pattern)
    return size + 2


def _walk(node: Any, path: str, out: list[tuple[str, str]]) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "safe_regex" and isinstance(value, dict) and isinstance(value.get("regex"), str):
                out.append((path, value["regex"]))
            else:
                _walk(value, f"{path}.{key}" if path else str(key), out)
    elif isinstance(node, list):
        for i, item in enumerate(node):
            _walk(item, f"{path}[{i}]", out)


def parse_envoy(text: str | None) -> EnvoyConfig:
    if not text:
        return EnvoyConfig(error="unable to read file: /etc/envoy/envoy.yaml")
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as e:
        return EnvoyConfig(error=f"Unable to convert YAML as JSON: {str(e).splitlines()[0]}")
    if not isinstance(doc, dict):
        return EnvoyConfig(error="Unable to parse JSON as proto (INVALID_ARGUMENT: root element must be a message)")
    found: list[tuple[str, str]] = []
    _walk(doc.get("static_resources"), "static_resources", found)
    level = DEFAULT_ERROR_LEVEL
    for layer in ((doc.get("layered_runtime") or {}).get("layers") or ()):
        static = (layer or {}).get("static_layer") if isinstance(layer, dict) else None
        if isinstance(static, dict) and "re2.max_program_size.error_level" in static:
            try:
                level = int(static["re2.max_program_size.error_level"])
            except (TypeError, ValueError):
                pass
    regexes = tuple((where, pattern, re2_program_size(pattern)) for where, pattern in found)
    for _, pattern, size in regexes:
        if size > level:
            return EnvoyConfig(regexes, level, (
                f"regex '{pattern}' RE2 program size of {size} > max program size of {level} set for the error level threshold. "
                "Increase configured max program size if RE2 program size is expected to be large."
            ))
    return EnvoyConfig(regexes, level)


def request_cost_ms(cfg: EnvoyConfig) -> float:
    """CPU ms one request spends in the route table's regex matches."""
    total = 0.0
    for _, _, size in cfg.regexes:
        total += size * INPUT_BYTES * NFA_NS * 1e-6 if size > DFA_LIMIT else 0.002
    return total
