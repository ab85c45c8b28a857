"""Turning a command line into pipeline stages, the way bash would read it.

A hand-written POSIX tokenizer rather than ``shlex``: we need to know which
``|`` were quoted (``grep 'a|b'``), to read heredoc bodies, and to refuse
constructs we do not emulate (``&&``, ``$(...)``, redirects) with a message a
person or model can act on, instead of silently doing something else.

The same tokenizer reads the scripts of ``sh -c '...'`` inside a container or
on a node (:func:`parse_script`): there lists (``;``, ``&&``, ``||``),
redirections into files and ``$VAR`` are part of the language, so a script is
parsed into pipelines of :class:`Command` whose words still hold their
``$VAR`` references, expanded by :meth:`Command.argv` when the command runs.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Mapping

__all__ = ["ShellSyntaxError", "Stage", "parse_pipeline", "Command", "Pipeline", "parse_script", "expand"]

PREFIX = "sre-env shell"


class ShellSyntaxError(Exception):
    """Input bash would reject or that this shell does not emulate; exit code 2.

    Besides bash's message, it says what went wrong, so a script's own shell
    can word it its way: ``token`` (a syntax error near that token),
    ``quote`` (no closing quote), ``eof`` (the input ended inside a command),
    ``bad_substitution`` (``${`` without ``}``) or ``unsupported`` (a
    construct not emulated here, e.g. "command substitution").
    """

    def __init__(self, message: str, code: int = 2, *, token: str = "", quote: str = "", eof: bool = False, bad_substitution: str = "", unsupported: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.token = token
        self.quote = quote
        self.eof = eof
        self.bad_substitution = bad_substitution
        self.unsupported = unsupported


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
#: a script's redirections besides the agent line's (``&>``, ``>&2``, ``2>>``, ...)
_SCRIPT_OPS = ("<<-", "&&", "||", "&>>", "&>", ">>", ">&", "<<", "|", "&", ";", "<", ">", "(", ")")
_FD_OPS = ("2>&1", "1>&2", "2>>", "1>>", "2>", "1>")
_AGENT_FD_OPS = ("2>&1", "2>")
_W, _OP, _DOC, _X = 0, 1, 2, 3  # _X: a word of unquoted expansions only (gone when they expand to nothing)
_PARAM = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[?$0-9]")


def _unsupported(what: str) -> ShellSyntaxError:
    return ShellSyntaxError(f"{PREFIX}: {what} is not supported; run one plain command (optionally piped into filters) per step", unsupported=what)


def _substitution() -> ShellSyntaxError:
    return ShellSyntaxError(f"{PREFIX}: command substitution is not supported", unsupported="command substitution")


def _near(token: str) -> ShellSyntaxError:
    return ShellSyntaxError(f"bash: syntax error near unexpected token `{token}'", token=token)


def _fd_op(s: str, i: int, script: bool) -> str | None:
    """A redirection of file descriptor 2 (or, in a script, 1) starting at ``s[i]``."""
    return next((op for op in (_FD_OPS if script else _AGENT_FD_OPS) if s.startswith(op, i)), None)


def _param(s: str, i: int) -> tuple[str, int] | None:
    """The parameter a ``$`` at ``s[i]`` names (``NAME``, ``{...}``, ``?``) and where it ends; None: a plain ``$``."""
    if s.startswith("${", i):
        j = s.find("}", i + 2)
        if j < 0:
            raise ShellSyntaxError(f"bash: {s[i:]}: bad substitution", bad_substitution=s[i:])
        return s[i + 1 : j + 1], j + 1
    m = _PARAM.match(s, i + 1)
    return (m.group(0), m.end()) if m else None


def expand(word: str, env: Mapping[str, str]) -> str:
    """A script word with its ``$VAR`` references (left by :func:`tokenize`) replaced from ``env``."""
    if "\x00" not in word:
        return word
    parts = word.split("\x00")
    out = parts[::2]
    for k, ref in enumerate(parts[1::2]):
        name = ref[1:]
        if name.startswith("{"):
            name, _, default = name[1:-1].partition(":-")
            value = env.get(name, "") or default
        else:
            value = {"?": env.get("?", "0"), "$": "1"}.get(name, env.get(name, ""))
        out[k] += value
    return "".join(out)


def tokenize(s: str, script: bool = False) -> list[tuple[int, str]]:
    """Split into (kind, text) tokens: words, operators and heredoc bodies.

    ``script``: read a ``sh -c`` script: also the redirections ``&>``, ``>&N``,
    ``N>>``, and ``$NAME``/``${NAME}``/``${NAME:-default}``/``$?`` outside single
    quotes, kept in the word as ``\\x00`` + ``q`` (quoted) or ``u`` + the reference
    + ``\\x00`` for :func:`expand`. The agent's own line has no variables.
    """
    toks: list[tuple[int, str]] = []
    buf: list[str] = []
    in_word = False
    literal = False  # the word has a character or a quote of its own (not only unquoted expansions)
    want_delim = False
    pending: list[tuple[int, str, bool]] = []  # (token index, delimiter, strip tabs)
    ops = _SCRIPT_OPS if script else _OPS
    i, n = 0, len(s)

    def flush() -> None:
        nonlocal in_word, want_delim, literal
        if in_word:
            word = "".join(buf)
            if want_delim:
                want_delim = False
                strip = toks[-1][1] == "<<-"
                toks[-1] = (_DOC, "")
                pending.append((len(toks) - 1, expand(word, {}), strip))
            else:
                toks.append((_W if literal or not script else _X, word))
        buf.clear()
        in_word = False
        literal = False

    while i < n:
        c = s[i]
        if c == " " or c == "\t" or c == "\r":
            flush()
            i += 1
        elif c == "\n":
            flush()
            if want_delim:
                raise _near("newline")
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
                raise ShellSyntaxError("bash: syntax error: unexpected EOF while looking for matching `''", quote="'")
            buf.append(s[i + 1 : j])
            in_word = literal = True
            i = j + 1
        elif c == '"':
            i += 1
            while True:
                if i >= n:
                    raise ShellSyntaxError("bash: syntax error: unexpected EOF while looking for matching `\"'", quote='"')
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
                    raise _substitution()
                ref = _param(s, i) if script and d == "$" else None
                if ref is not None:
                    buf.append(f"\x00q{ref[0]}\x00")
                    i = ref[1]
                    continue
                buf.append(d)
                i += 1
            in_word = literal = True
        elif c == "\\":
            if i + 1 < n:
                if s[i + 1] != "\n":
                    buf.append(s[i + 1])
                    in_word = literal = True
                i += 2
            else:
                i += 1
        elif c == "#" and not in_word:
            j = s.find("\n", i)
            i = n if j < 0 else j
        elif c == "`" or (c == "$" and i + 1 < n and s[i + 1] == "("):
            raise _substitution()
        elif script and c == "$" and (ref := _param(s, i)) is not None:
            buf.append(f"\x00u{ref[0]}\x00")
            in_word = True
            i = ref[1]
        elif c in "|&;<>()" or (c in "12" and not in_word and (fd := _fd_op(s, i, script)) is not None):
            if c in "12":
                flush()
                toks.append((_OP, fd))
                i += len(fd)
                continue
            flush()
            if want_delim:
                raise _near(c)
            for op in ops:
                if s.startswith(op, i):
                    break
            toks.append((_OP, op))
            i += len(op)
            if op in ("<<", "<<-"):
                want_delim = True
        else:
            buf.append(c)
            in_word = literal = True
            i += 1
    flush()
    if want_delim:
        raise _near("newline")
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
                raise _near("|")
            stages.append(cur)
            cur = Stage([])
        elif text == "2>&1":
            cur.stderr_to_stdout = True
        elif text in (">", ">>", "2>"):
            target = toks[k + 1][1] if k + 1 < len(toks) and toks[k + 1][0] == _W else None
            if target is None:
                nxt = toks[k + 1][1] if k + 1 < len(toks) else "newline"
                raise _near("newline" if nxt == "\n" else nxt)
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
                raise _near(text)
            raise _unsupported("a subshell")
        elif text in ("&&", "||", ";", "\n"):
            if not cur.argv:
                shown = "newline" if text == "\n" else text
                raise _near(shown)
            raise _unsupported(f"chaining commands with {'a newline' if text == chr(10) else repr(text)}")
        elif text == "&":
            raise _unsupported("running a command in the background ('&')")
        k += 1
    if not cur.argv:
        if stages:
            raise ShellSyntaxError("bash: syntax error: unexpected end of file", eof=True)
        if cur.stdin is not None:
            return []
        return []
    stages.append(cur)
    return stages


# --------------------------------------------------------------------------- sh -c scripts
#: redirections that take a file (or, after ``>&``, a descriptor) as their target
_REDIRECT_TO = (">", ">>", "1>", "1>>", "2>", "2>>", "&>", "&>>", ">&", "<")


@dataclass
class Command:
    """One simple command of a script: its words (``$VAR`` references unexpanded), heredoc and redirections."""

    #: (word, bare): a bare word is only unquoted expansions and disappears when they expand to nothing
    words: list[tuple[str, bool]] = field(default_factory=list)
    #: a heredoc's body, the command's stdin
    stdin: str | None = None
    #: (operator, target) in order: ``(">", "/tmp/x")``, ``("2>&1", "")``, ``(">&", "2")``, ``("<", "in.txt")``
    redirects: list[tuple[str, str]] = field(default_factory=list)

    def argv(self, env: Mapping[str, str]) -> list[str]:
        """The command's arguments with ``env``'s values in place of its references."""
        out = []
        for word, bare in self.words:
            value = expand(word, env)
            if value or not bare:
                out.append(value)
        return out

    def empty(self) -> bool:
        return not self.words and not self.redirects and self.stdin is None


@dataclass
class Pipeline:
    """Commands joined by ``|``, and how the pipeline follows the one before: ``""`` (first), ``;``, ``&&``, ``||``."""

    join: str
    commands: list[Command]


def parse_script(script: str) -> list[Pipeline]:
    """Parse a ``sh -c`` script (lists, pipelines, redirections, heredocs); raises ShellSyntaxError.

    A newline, ``;`` and ``&`` all end a pipeline (there is nothing to run in
    the background: commands take no time). Command substitution and subshells
    are refused, as on the agent's own line.
    """
    if "\x00" in script:
        script = script.replace("\x00", "")
    toks = tokenize(script, script=True)
    out: list[Pipeline] = []
    commands: list[Command] = []
    cmd = Command()
    join = ""
    dangling = False  # after |, && or ||: the next command is still to come
    k = 0
    while k < len(toks):
        kind, text = toks[k]
        if kind in (_W, _X):
            cmd.words.append((text, kind == _X))
            dangling = False
        elif kind == _DOC:
            cmd.stdin = text
            dangling = False
        elif text in _REDIRECT_TO:
            nxt = toks[k + 1] if k + 1 < len(toks) else (_OP, "newline")
            if nxt[0] not in (_W, _X):
                raise _near("newline" if nxt[1] == "\n" else nxt[1])
            cmd.redirects.append((text, nxt[1]))
            dangling = False
            k += 1
        elif text in ("2>&1", "1>&2"):
            cmd.redirects.append((text, ""))
            dangling = False
        elif text in ("(", ")"):
            if cmd.words:
                raise _near(text)
            raise ShellSyntaxError(f"{PREFIX}: a subshell is not supported", unsupported="a subshell")
        elif text == "\n" and cmd.empty():
            pass  # a blank line, or the line goes on after |, && or ||
        elif cmd.empty():
            raise _near("newline" if text == "\n" else text)
        else:
            commands.append(cmd)
            cmd = Command()
            if text == "|":
                dangling = True
            else:
                out.append(Pipeline(join, commands))
                commands = []
                join = text if text in ("&&", "||") else ";"
                dangling = text in ("&&", "||")
        k += 1
    if not cmd.empty():
        commands.append(cmd)
    elif dangling:
        raise ShellSyntaxError("bash: syntax error: unexpected end of file", eof=True)
    if commands:
        out.append(Pipeline(join, commands))
    return out
