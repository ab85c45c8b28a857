"""A minimal POSIX-ish shell for ``sh -c '...'`` / ``bash -c '...'`` command strings.

Agents routinely wrap probes in ``sh -c`` (``sh -c 'echo stats | nc localhost
11211'``, ``sh -c 'ulimit -n; cat /proc/1/limits'``), so the interpreters need
lists (``;``, ``&&``, ``||``), pipelines with the usual text filters,
``$VAR`` expansion and the harmless redirections. Anything fancier is out of
scope; the goal is that common one-liners behave as they would, not a shell.
"""

from __future__ import annotations

import re
from typing import Callable

from sre_env.backend import ExecResult

__all__ = ["run_script", "split_words", "ShellSyntaxError", "apply_filter", "FILTERS"]

Runner = Callable[[list[str], str | None], ExecResult]


class ShellSyntaxError(Exception):
    pass


_OPS = ("&&", "||", ";", "|", "\n")


def split_words(script: str, env: dict[str, str]) -> list[list[str] | str]:
    """Tokenise into words (lists) and operators, expanding ``$VAR`` outside single quotes."""
    out: list[list[str] | str] = []
    words: list[str] = []
    cur: list[str] = []
    have = False
    i = 0
    n = len(script)

    def flush_word() -> None:
        nonlocal cur, have
        if have:
            words.append("".join(cur))
        cur = []
        have = False

    def flush_cmd(op: str) -> None:
        nonlocal words
        flush_word()
        out.append(words)
        out.append(op)
        words = []

    def expand(j: int) -> tuple[str, int]:
        if j + 1 < n and script[j + 1] == "{":
            k = script.find("}", j + 2)
            if k < 0:
                raise ShellSyntaxError("Bad substitution")
            name = script[j + 2 : k]
            name = name.split(":-")[0] if ":-" in name else name
            default = script[j + 2 : k].split(":-", 1)[1] if ":-" in script[j + 2 : k] else ""
            return env.get(name, "") or default, k + 1
        m = re.match(r"[A-Za-z_][A-Za-z0-9_]*|\?|\$|[0-9]", script[j + 1 :])
        if not m:
            return "$", j + 1
        name = m.group(0)
        val = {"?": env.get("?", "0"), "$": "1"}.get(name, env.get(name, ""))
        return val, j + 1 + len(name)

    while i < n:
        c = script[i]
        if c == "'":
            k = script.find("'", i + 1)
            if k < 0:
                raise ShellSyntaxError("Unterminated quoted string")
            cur.append(script[i + 1 : k])
            have = True
            i = k + 1
        elif c == '"':
            i += 1
            have = True
            while True:
                if i >= n:
                    raise ShellSyntaxError("Unterminated quoted string")
                ch = script[i]
                if ch == '"':
                    i += 1
                    break
                if ch == "\\" and i + 1 < n and script[i + 1] in '"\\$`':
                    cur.append(script[i + 1])
                    i += 2
                elif ch == "$":
                    val, i = expand(i)
                    cur.append(val)
                else:
                    cur.append(ch)
                    i += 1
        elif c == "\\" and i + 1 < n:
            cur.append(script[i + 1])
            have = True
            i += 2
        elif c == "$":
            val, i = expand(i)
            if val:
                cur.append(val)
                have = True
        elif c in " \t":
            flush_word()
            i += 1
        elif c == "#" and not have:
            k = script.find("\n", i)
            i = n if k < 0 else k
        elif script.startswith("&&", i) or script.startswith("||", i):
            flush_cmd(script[i : i + 2])
            i += 2
        elif c in ";|\n":
            flush_cmd(c if c != "\n" else ";")
            i += 1
        elif c == "&":
            flush_cmd(";")  # background: run in sequence, there is nothing to wait for
            i += 1
        elif c in "<>" or (c.isdigit() and i + 1 < n and script[i + 1] == ">" and not have):
            flush_word()
            j = i
            while j < n and script[j] in "0123456789<>&":
                j += 1
            op = script[i:j]
            while j < n and script[j] == " ":
                j += 1
            k = j
            while k < n and script[k] not in " \t;|&\n":
                k += 1
            target = script[j:k]
            if op.endswith("&") and not target:
                raise ShellSyntaxError("Syntax error: redirection unexpected")
            words.append("\x00redir:" + op + (target if not op.endswith("&") else target))
            i = k
        else:
            cur.append(c)
            have = True
            i += 1
    flush_word()
    out.append(words)
    return out


def _grep(args: list[str], text: str) -> ExecResult:
    inv = icase = count = only_count = fixed = False
    pattern: str | None = None
    for a in args:
        if a.startswith("-") and pattern is None and len(a) > 1:
            for ch in a[1:]:
                if ch == "v":
                    inv = True
                elif ch == "i":
                    icase = True
                elif ch == "c":
                    count = True
                elif ch == "F":
                    fixed = True
                elif ch in "Ew":
                    continue
                else:
                    return ExecResult(f"grep: invalid option -- '{ch}'\nUsage: grep [OPTION]... PATTERNS [FILE]...\nTry 'grep --help' for more information.\n", 2)
        elif pattern is None:
            pattern = a
    if pattern is None:
        return ExecResult("Usage: grep [OPTION]... PATTERNS [FILE]...\nTry 'grep --help' for more information.\n", 2)
    try:
        rx = re.compile(re.escape(pattern) if fixed else pattern.replace("\\|", "|"), re.IGNORECASE if icase else 0)
    except re.error:
        rx = re.compile(re.escape(pattern), re.IGNORECASE if icase else 0)
    lines = [ln for ln in text.splitlines() if bool(rx.search(ln)) != inv]
    del only_count
    if count:
        return ExecResult(f"{len(lines)}\n", 0 if lines else 1)
    return ExecResult("".join(ln + "\n" for ln in lines), 0 if lines else 1)


def _head_tail(args: list[str], text: str, tail: bool) -> ExecResult:
    k = 10
    it = iter(args)
    for a in it:
        if a == "-n":
            a = next(it, "10")
            k = int(a.lstrip("+-")) if a.lstrip("+-").isdigit() else 10
        elif a.startswith("-n") and a[2:].lstrip("+-").isdigit():
            k = int(a[2:].lstrip("+-"))
        elif a.startswith("-") and a[1:].isdigit():
            k = int(a[1:])
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    sel = (lines[-k:] if k else []) if tail else lines[:k]
    return ExecResult("".join(ln + "\n" for ln in sel), 0)


def _wc(args: list[str], text: str) -> ExecResult:
    lines = text.count("\n")
    words = len(text.split())
    if "-l" in args:
        return ExecResult(f"{lines}\n", 0)
    if "-w" in args:
        return ExecResult(f"{words}\n", 0)
    if "-c" in args:
        return ExecResult(f"{len(text.encode())}\n", 0)
    return ExecResult(f"{lines:7d} {words:7d} {len(text.encode()):7d}\n", 0)


def _sort(args: list[str], text: str) -> ExecResult:
    lines = sorted(text.splitlines(), reverse="-r" in args)
    if "-u" in args:
        lines = list(dict.fromkeys(lines))
    return ExecResult("".join(ln + "\n" for ln in lines), 0)


def _uniq(args: list[str], text: str) -> ExecResult:
    out: list[str] = []
    for ln in text.splitlines():
        if not out or out[-1] != ln:
            out.append(ln)
    return ExecResult("".join(ln + "\n" for ln in out), 0)


FILTERS: dict[str, Callable[[list[str], str], ExecResult]] = {
    "grep": _grep,
    "egrep": _grep,
    "head": lambda a, t: _head_tail(a, t, False),
    "tail": lambda a, t: _head_tail(a, t, True),
    "wc": _wc,
    "sort": _sort,
    "uniq": _uniq,
    "cat": lambda a, t: ExecResult(t, 0),
}


def apply_filter(argv: list[str], text: str) -> ExecResult | None:
    """Run a text filter over piped input; None when ``argv`` is not a filter reading stdin."""
    if not argv:
        return None
    name = argv[0].rsplit("/", 1)[-1]
    f = FILTERS.get(name)
    if f is None:
        return None
    if name == "cat" and len(argv) > 1:
        return None
    if name in ("head", "tail", "wc", "sort", "uniq") and any(not a.startswith("-") and not a.isdigit() for a in argv[1:] if a):
        # a file operand: not reading stdin
        prev = argv[1:]
        if name in ("head", "tail") and len(prev) >= 2 and prev[0] == "-n":
            if len(prev) == 2:
                return f(argv[1:], text)
        return None
    if name in ("grep", "egrep") and len([a for a in argv[1:] if not a.startswith("-")]) > 1:
        return None
    return f(argv[1:], text)


def run_script(script: str, env: dict[str, str], run: Runner, shell_name: str = "sh", write_file: "Callable[[str, str, bool], str | None] | None" = None) -> ExecResult:
    """Execute ``script``; ``run(argv, stdin)`` runs one simple command.

    ``write_file(path, text, append)`` receives output redirected to a file (``>``,
    ``>>``) and returns an error message or None; without it, redirected output
    is discarded.
    """
    try:
        toks = split_words(script, env)
    except ShellSyntaxError as e:
        return ExecResult(f"{shell_name}: 1: Syntax error: {e}\n" if shell_name == "sh" else f"{shell_name}: -c: line 1: {e}\n", 2)
    # group into pipelines joined by ; && ||
    pipelines: list[tuple[list[list[str]], str]] = []
    cur: list[list[str]] = []
    for t in toks:
        if isinstance(t, list):
            cur.append(t)
        elif t == "|":
            continue
        else:
            pipelines.append((cur, t))
            cur = []
    pipelines.append((cur, ""))
    # validate: an operator with an empty side is a syntax error
    for k, (p, op) in enumerate(pipelines):
        if any(not c for c in p[:-1]) or (op and (not p or not p[-1]) and op != ";"):
            word = op if op else "|"
            return ExecResult(f'{shell_name}: 1: Syntax error: "{word}" unexpected\n', 2)
    output: list[str] = []
    status = 0
    prev_op = ""
    for p, op in pipelines:
        p = [c for c in p if c]
        if not p:
            prev_op = op
            continue
        if (prev_op == "&&" and status != 0) or (prev_op == "||" and status == 0):
            prev_op = op
            continue
        stdin: str | None = None
        res = ExecResult("", 0)
        for c in p:
            argv, to_null, merge, target = _redirs(c)
            if not argv:
                res = ExecResult("", 0)
                continue
            if stdin is not None:
                fres = apply_filter(argv, stdin)
                res = fres if fres is not None else run(argv, stdin)
            else:
                res = run(argv, None)
            if target and write_file is not None and target[0] != "/dev/null":
                err = write_file(target[0], res.output, target[1])
                res = ExecResult(f"{shell_name}: {err}\n" if err else "", 1 if err else res.exit_code)
            elif to_null:
                res = ExecResult("", res.exit_code)
            stdin = res.output
        output.append(res.output)
        status = res.exit_code
        env["?"] = str(status)
        prev_op = op
    return ExecResult("".join(output), status)


def _redirs(words: list[str]) -> tuple[list[str], bool, bool, tuple[str, bool] | None]:
    """argv without redirections; stdout discarded?; stderr merged?; (file, append) stdout goes to."""
    argv: list[str] = []
    to_null = merge = False
    target: tuple[str, bool] | None = None
    for w in words:
        if w.startswith("\x00redir:"):
            spec = w[len("\x00redir:") :]
            if spec.startswith(("2>&1", ">&")):
                merge = True
            elif spec.startswith(">") or spec.startswith("1>") or spec.startswith("&>"):
                to_null = True
                op = spec.lstrip("1&")
                path = op.lstrip(">")
                if path:
                    target = (path, op.startswith(">>"))
            continue
        argv.append(w)
    return argv, to_null, merge, target
