"""Command specs: each kubectl verb declared once, driving parsing, ``--help`` and the prompt reference.

Parsing follows pflag (what kubectl uses): flags may appear anywhere, ``-n X``,
``-nX``, ``-n=X``, ``--namespace X``, ``--namespace=X``, grouped booleans
(``-it``), ``--`` ends flags. Lookup tables are built once at import time so a
call costs a dict lookup per token, not an argparse construction.
"""

from __future__ import annotations

import re

from dataclasses import dataclass, field
from typing import Any, Callable

__all__ = ["Flag", "Cmd", "Parsed", "UsageError", "KubectlError", "parse_flags", "render_help", "GLOBAL_FLAGS", "go_parse_int"]


class KubectlError(Exception):
    """Something kubectl reports as ``error: ...`` (exit 1)."""

    def __init__(self, message: str, code: int = 1, raw: bool = False) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.raw = raw  # message already carries its own prefix

    def render(self) -> str:
        return self.message if self.raw else f"error: {self.message}"


class UsageError(KubectlError):
    """A flag/argument error: kubectl adds the "See 'kubectl X --help'" hint."""

    def __init__(self, message: str, cmd_path: str, flag_error: bool = True) -> None:
        super().__init__(message)
        self.cmd_path = cmd_path
        self.flag_error = flag_error

    def render(self) -> str:
        if self.flag_error:  # cobra's flag error func
            return f"error: {self.message}\nSee 'kubectl {self.cmd_path} --help' for usage."
        return f"error: {self.message}\nSee 'kubectl {self.cmd_path} -h' for help and examples"


@dataclass(frozen=True)
class Flag:
    name: str
    short: str = ""
    kind: str = "bool"  # bool | str | int | list
    default: Any = None
    help: str = ""


@dataclass
class Cmd:
    path: str
    summary: str
    usage: str
    flags: tuple[Flag, ...] = ()
    examples: tuple[str, ...] = ()
    handler: Callable[..., None] | None = None
    # filled in by finalize()
    long: dict[str, Flag] = field(default_factory=dict)
    shorts: dict[str, Flag] = field(default_factory=dict)
    defaults: dict[str, Any] = field(default_factory=dict)

    def finalize(self) -> "Cmd":
        for f in (*self.flags, *GLOBAL_FLAGS):
            self.long[f.name] = f
            if f.short:
                self.shorts[f.short] = f
            self.defaults[f.name] = [] if f.kind == "list" else (False if f.kind == "bool" and f.default is None else f.default)
        return self


GLOBAL_FLAGS: tuple[Flag, ...] = (
    Flag("namespace", "n", "str", None, "If present, the namespace scope for this CLI request"),
    Flag("context", "", "str", None, "The name of the kubeconfig context to use"),
    Flag("kubeconfig", "", "str", None, "Path to the kubeconfig file to use for CLI requests."),
    Flag("cluster", "", "str", None, "The name of the kubeconfig cluster to use"),
    Flag("user", "", "str", None, "The name of the kubeconfig user to use"),
    Flag("request-timeout", "", "str", "0", "The length of time to wait before giving up on a single server request."),
    Flag("v", "v", "str", "0", "number for the log level verbosity"),
    Flag("help", "h", "bool", False, "help for this command"),
)
GLOBAL_LONG = {f.name: f for f in GLOBAL_FLAGS}
GLOBAL_SHORT = {f.short: f for f in GLOBAL_FLAGS if f.short}


@dataclass
class Parsed:
    opts: dict[str, Any]
    args: list[str]
    dash: int = -1  # len(args) when "--" was seen (cobra's ArgsLenAtDash), else -1
    set_flags: set[str] = field(default_factory=set)


_TRUE = {"true", "1", "t", "T", "TRUE", "True"}
_FALSE = {"false", "0", "f", "F", "FALSE", "False"}


#: Go's integer literal syntax (strconv.ParseInt with base 0, as pflag's int flags parse): ASCII digits only
_GO_INT = re.compile(r"[+-]?(?:0[xX](?:_?[0-9a-fA-F])+|0[bB](?:_?[01])+|0[oO](?:_?[0-7])+|0(?:_?[0-7])*|[1-9](?:_?[0-9])*)")


def go_parse_int(val: str) -> int:
    """``strconv.ParseInt(val, 0, 64)``: ValueError("invalid syntax" or "value out of range") where Go refuses it.

    Python's ``int`` would take ``٣`` or a 30-digit number; kubectl's flags take neither.
    """
    if not _GO_INT.fullmatch(val):
        raise ValueError("invalid syntax")
    text = val.replace("_", "")
    if len(text) > 70:  # past int64 in any base (and past what Python converts from a string)
        raise ValueError("value out of range")
    sign = -1 if text[0] == "-" else 1
    body = text.lstrip("+-")
    n = int(body, 8) if len(body) > 1 and body[0] == "0" and body[1].isdigit() else int(body, 0)
    n *= sign
    if not -(1 << 63) <= n < (1 << 63):
        raise ValueError("value out of range")
    return n


def _store(cmd: Cmd, opts: dict[str, Any], f: Flag, val: str, shown: str) -> None:
    if f.kind == "bool":
        if val in _TRUE:
            opts[f.name] = True
        elif val in _FALSE:
            opts[f.name] = False
        else:
            raise UsageError(f'invalid argument "{val}" for "{shown}" flag: strconv.ParseBool: parsing "{val}": invalid syntax', cmd.path)
    elif f.kind == "int":
        try:
            opts[f.name] = go_parse_int(val)
        except ValueError as exc:
            raise UsageError(f'invalid argument "{val}" for "{shown}" flag: strconv.ParseInt: parsing "{val}": {exc}', cmd.path) from None
    elif f.kind == "list":
        opts[f.name] = opts[f.name] + [val]
    else:
        opts[f.name] = val


def parse_flags(cmd: Cmd, argv: list[str]) -> Parsed:
    """pflag-style parse of ``argv`` against ``cmd``'s flags plus the global ones."""
    opts = dict(cmd.defaults)
    args: list[str] = []
    set_flags: set[str] = set()
    dash = -1
    i, n = 0, len(argv)
    while i < n:
        a = argv[i]
        i += 1
        if a == "--":
            dash = len(args)
            args.extend(argv[i:])
            break
        if len(a) < 2 or a[0] != "-":
            args.append(a)
            continue
        if a[1] == "-":
            name, eq, val = a[2:].partition("=")
            f = cmd.long.get(name)
            if f is None:
                raise UsageError(f"unknown flag: --{name}", cmd.path)
            if eq:
                _store(cmd, opts, f, val, f"--{name}")
            elif f.kind == "bool":
                opts[f.name] = True
            elif i < n:
                _store(cmd, opts, f, argv[i], f"--{name}")
                i += 1
            else:
                raise UsageError(f"flag needs an argument: --{name}", cmd.path)
            set_flags.add(f.name)
            continue
        j = 1
        while j < len(a):
            ch = a[j]
            f = cmd.shorts.get(ch)
            if f is None:
                raise UsageError(f"unknown shorthand flag: '{ch}' in {a}", cmd.path)
            set_flags.add(f.name)
            rest = a[j + 1 :]
            if f.kind == "bool":
                if rest.startswith("="):
                    _store(cmd, opts, f, rest[1:], f"-{ch}, --{f.name}")
                    break
                opts[f.name] = True
                j += 1
                continue
            if rest:
                _store(cmd, opts, f, rest[1:] if rest.startswith("=") else rest, f"-{ch}, --{f.name}")
            elif i < n:
                _store(cmd, opts, f, argv[i], f"-{ch}, --{f.name}")
                i += 1
            else:
                raise UsageError(f"flag needs an argument: '{ch}' in -{ch}", cmd.path)
            break
    return Parsed(opts, args, dash, set_flags)


def render_help(cmd: Cmd) -> str:
    """``kubectl <verb> --help`` in kubectl's layout (summary, examples, options, usage)."""
    lines = [cmd.summary, ""]
    if cmd.examples:
        lines.append("Examples:")
        for ex in cmd.examples:
            lines.append(f"  {ex}")
        lines.append("")
    if cmd.flags:
        lines.append("Options:")
        for f in cmd.flags:
            short = f"-{f.short}, " if f.short else ""
            default = "[]" if f.kind == "list" else ("false" if f.kind == "bool" and not f.default else ("" if f.default is None else str(f.default)))
            if f.kind == "bool" and f.default:
                default = "true"
            lines.append(f"    {short}--{f.name}={default}:")
            lines.append(f"\t{f.help}")
            lines.append("")
    lines += ["Usage:", f"  {cmd.usage}", "", 'Use "kubectl options" for a list of global command-line options (applies to all commands).']
    return "\n".join(lines) + "\n"
