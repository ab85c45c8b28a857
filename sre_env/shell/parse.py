"""Turning a command line into pipeline stages, the way bash would read it.

A hand-written POSIX tokenizer rather than ``shlex``: we need to know which
``|`` were quoted (``grep 'a|b'``), to read heredoc bodies, and to refuse
constructs we do not emulate (``&&``, ``$(...)``, redirects) with a message a
person or model can act on, instead of silently doing something else.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

__all__ = ["ShellSyntaxError", "Stage", "parse_pipeline"]

PREFIX = "sre-env shell"


class ShellSyntaxError(Exception):
    """Input bash would reject or that this shell does not emulate; exit code 2."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


@dataclass
class Stage:
    """One command of a pipeline: its argv and where its streams go."""

    argv: list[str]
    stdin: str | None = None
    drop_stdout: bool = False
    drop_stderr: bool = False
    stderr_to_stdout: bool = False
    redirects: list[str] = field(default_factory=list)


_OPS = ("<<-", "&&", "||", ">>", "<<", "2>&1", "|", "&", ";", "<", ">", "(", ")")
_W, _OP, _DOC = 0, 1, 2


def _unsupported(what: str) -> ShellSyntaxError:
    return ShellSyntaxError(f"{PREFIX}: {what} is not supported; run one plain command (optionally piped into filters) per step")


def tokenize(s: str) -> list[tuple[int, str]]:
    """Split into (kind, text) tokens: words, operators and heredoc bodies."""
    toks: list[tuple[int, str]] = []
    buf: list[str] = []
    in_word = False
    want_delim = False
    pending: list[tuple[int, str, bool]] = []  # (token index, delimiter, strip tabs)
    i, n = 0, len(s)

    def flush() -> None:
        nonlocal in_word, want_delim
        if in_word:
            word = "".join(buf)
            if want_delim:
                want_delim = False
                strip = toks[-1][1] == "<<-"
                toks[-1] = (_DOC, "")
                pending.append((len(toks) - 1, word, strip))
            else:
                toks.append((_W, word))
        buf.clear()
        in_word = False

    while i < n:
        c = s[i]
        if c == " " or c == "\t" or c == "\r":
            flush()
            i += 1
        elif c == "\n":
            flush()
            if want_delim:
                raise ShellSyntaxError("bash: syntax error near unexpected token `newline'")
            i += 1
            if pending:
                for idx, delim, strip in pending:
                    body: list[str] = []
                    while i < n:
                        j = s.find("\n", i)
                        line = s[i:] if j < 0 else s[i:j]
                        i = n if j < 0 else j + 1
                        cmp = line.lstrip("\t") if strip else line
                        if cmp == delim:
                            break
                        body.append(cmp)
                    toks[idx] = (_DOC, "\n".join(body) + ("\n" if body else ""))
                pending.clear()
            toks.append((_OP, "\n"))
        elif c == "'":
            j = s.find("'", i + 1)
            if j < 0:
                raise ShellSyntaxError("bash: syntax error: unexpected EOF while looking for matching `''")
            buf.append(s[i + 1 : j])
            in_word = True
            i = j + 1
        elif c == '"':
            i += 1
            while True:
                if i >= n:
                    raise ShellSyntaxError("bash: syntax error: unexpected EOF while looking for matching `\"'")
                d = s[i]
                if d == '"':
                    i += 1
                    break
                if d == "\\" and i + 1 < n and s[i + 1] in '"\\$`\n':
                    if s[i + 1] != "\n":
                        buf.append(s[i + 1])
                    i += 2
                    continue
                if d == "`" or (d == "$" and i + 1 < n and s[i + 1] == "("):
                    raise ShellSyntaxError(f"{PREFIX}: command substitution is not supported")
                buf.append(d)
                i += 1
            in_word = True
        elif c == "\\":
            if i + 1 < n:
                if s[i + 1] != "\n":
                    buf.append(s[i + 1])
                    in_word = True
                i += 2
            else:
                i += 1
        elif c == "#" and not in_word:
            j = s.find("\n", i)
            i = n if j < 0 else j
        elif c == "`" or (c == "$" and i + 1 < n and s[i + 1] == "("):
            raise ShellSyntaxError(f"{PREFIX}: command substitution is not supported")
        elif c in "|&;<>()" or (c == "2" and not in_word and s.startswith("2>", i)):
            if c == "2":
                flush()
                if s.startswith("2>&1", i):
                    toks.append((_OP, "2>&1"))
                    i += 4
                else:
                    toks.append((_OP, "2>"))
                    i += 2
                continue
            flush()
            if want_delim:
                raise ShellSyntaxError(f"bash: syntax error near unexpected token `{c}'")
            for op in _OPS:
                if s.startswith(op, i):
                    break
            toks.append((_OP, op))
            i += len(op)
            if op in ("<<", "<<-"):
                want_delim = True
        else:
            buf.append(c)
            in_word = True
            i += 1
    flush()
    if want_delim:
        raise ShellSyntaxError("bash: syntax error near unexpected token `newline'")
    for idx, delim, _ in pending:
        # bash warns and takes everything up to end-of-file; there is nothing after the first line
        toks[idx] = (_DOC, "")
    return toks


@functools.lru_cache(maxsize=2048)
def _tokens(line: str) -> tuple[tuple[str, str], ...]:
    """Agents repeat command lines a lot; tokenising is pure, so remember it."""
    return tuple(tokenize(line))


def parse_pipeline(line: str) -> list[Stage]:
    """Parse one command line into pipeline stages; raises ShellSyntaxError."""
    if "\x00" in line:
        line = line.replace("\x00", "")  # bash drops NUL bytes from its input
    toks = list(_tokens(line)) if len(line) <= 4096 else tokenize(line)
    while toks and toks[-1] == (_OP, "\n") or toks and toks[-1] == (_OP, ";"):
        toks.pop()
    while toks and toks[0] == (_OP, "\n"):
        toks.pop(0)
    stages: list[Stage] = []
    cur = Stage([])
    k = 0
    while k < len(toks):
        kind, text = toks[k]
        if kind == _W:
            cur.argv.append(text)
        elif kind == _DOC:
            cur.stdin = text
        elif text == "|":
            if not cur.argv:
                raise ShellSyntaxError("bash: syntax error near unexpected token `|'")
            stages.append(cur)
            cur = Stage([])
        elif text == "2>&1":
            cur.stderr_to_stdout = True
        elif text in (">", ">>", "2>"):
            target = toks[k + 1][1] if k + 1 < len(toks) and toks[k + 1][0] == _W else None
            if target is None:
                nxt = toks[k + 1][1] if k + 1 < len(toks) else "newline"
                raise ShellSyntaxError(f"bash: syntax error near unexpected token `{'newline' if nxt == chr(10) else nxt}'")
            if target != "/dev/null":
                raise _unsupported("output redirection to a file")
            if text == "2>":
                cur.drop_stderr = True
            else:
                cur.drop_stdout = True
            k += 1
        elif text == "<":
            raise _unsupported("input redirection from a file")
        elif text in ("(", ")"):
            if cur.argv:
                raise ShellSyntaxError(f"bash: syntax error near unexpected token `{text}'")
            raise _unsupported("a subshell")
        elif text in ("&&", "||", ";", "\n"):
            if not cur.argv:
                shown = "newline" if text == "\n" else text
                raise ShellSyntaxError(f"bash: syntax error near unexpected token `{shown}'")
            raise _unsupported(f"chaining commands with {'a newline' if text == chr(10) else repr(text)}")
        elif text == "&":
            raise _unsupported("running a command in the background ('&')")
        k += 1
    if not cur.argv:
        if stages:
            raise ShellSyntaxError("bash: syntax error: unexpected end of file")
        if cur.stdin is not None:
            return []
        return []
    stages.append(cur)
    return stages
