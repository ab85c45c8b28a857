"""``sh -c '...'`` inside the simulator, in the agent shell's own language.

A container's ``sh`` and a node's ``bash`` (:mod:`sre_env.sim.commands`) read
their options and hand the script to :data:`SIM_SHELL`: it is parsed with the
shell's grammar (:func:`sre_env.shell.parse.parse_script`: lists, pipelines,
redirections, heredocs, ``$VAR``), each simple command runs through the
place's binaries, and the text tools of both places filter with the shell's
own filters (:mod:`sre_env.shell.filters`). So one tokenizer and one grep
serve the agent's line, a script in a pod and a script on a node.

The backends hand :data:`SIM_SHELL` to every view they build (``SimApi.exec``,
``SimNodes.exec``), which is what ``kubectl exec``, ``ssh``, ``kubectl debug
node`` and ``sre-env serve``'s exec all go through.

Beyond the grammar the language has what scripts need from a shell: ``$?``
and ``export`` (expansion happens when a command runs), ``exit``, output
redirected to a file (written through the place's ``write_file``; where there
is none the output is dropped, as into a file nobody reads) and input read
from one (through the place's ``cat``). A pipeline's commands pass each other
their whole output: a binary's result is what the terminal would show, its
errors included.
"""

from __future__ import annotations

import re

from sre_env.backend import ExecResult
from sre_env.shell.filters import FILTERS
from sre_env.shell.parse import Command, ShellSyntaxError, expand, parse_script
from sre_env.sim.commands.views import FileWriter, Runner

__all__ = ["SimShell", "SIM_SHELL"]

_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=")
#: redirections of standard output into a file (or /dev/null)
_TO_FILE = (">", "1>", "&>", ">>", "1>>", "&>>")


def syntax_error(exc: ShellSyntaxError, dialect: str, script: str) -> str:
    """How ``dialect``'s shell reports a script it cannot parse (dash for "sh", else bash)."""
    if exc.unsupported:
        return f"sre-env shell: {exc.unsupported} is not supported in scripts here\n"
    if dialect == "sh":
        if exc.quote:
            return "sh: 1: Syntax error: Unterminated quoted string\n"
        if exc.bad_substitution:
            return "sh: 1: Syntax error: Bad substitution\n"
        if exc.eof:
            return "sh: 1: Syntax error: end of file unexpected\n"
        token = exc.token if exc.token == "newline" else f'"{exc.token}"'
        return f"sh: 1: Syntax error: {token} unexpected\n"
    if exc.quote:
        return f"{dialect}: -c: line 1: unexpected EOF while looking for matching `{exc.quote}'\n"
    if exc.bad_substitution:
        return f"{dialect}: line 1: {exc.bad_substitution}: bad substitution\n"
    if exc.eof:
        return f"{dialect}: -c: line {script.count(chr(10)) + 2}: syntax error: unexpected end of file\n"
    first = script.split("\n", 1)[0]
    return f"{dialect}: -c: line 1: syntax error near unexpected token `{exc.token}'\n{dialect}: -c: line 1: `{first}'\n"


class SimShell:
    """The shell language the simulator's binaries speak (:class:`sre_env.sim.commands.views.ShellLanguage`)."""

    def run_script(self, script: str, *, dialect: str, env: dict[str, str], run: Runner, write_file: FileWriter | None = None) -> ExecResult:
        try:
            pipelines = parse_script(script)
        except ShellSyntaxError as exc:
            return ExecResult(syntax_error(exc, dialect, script), 2)
        output: list[str] = []
        status = 0
        for pipeline in pipelines:
            if (pipeline.join == "&&" and status != 0) or (pipeline.join == "||" and status == 0):
                continue
            stdin: str | None = None
            res, exited = ExecResult("", 0), False
            for cmd in pipeline.commands:
                res, exited = self._command(cmd, stdin, dialect=dialect, env=env, run=run, write_file=write_file)
                stdin = res.output
            output.append(res.output)
            status = res.exit_code
            env["?"] = str(status)
            if exited:
                break
        return ExecResult("".join(output), status)

    def _command(self, cmd: Command, stdin: str | None, *, dialect: str, env: dict[str, str], run: Runner, write_file: FileWriter | None) -> tuple[ExecResult, bool]:
        """The command's result, and whether it was ``exit`` (the script ends there)."""
        argv = cmd.argv(env)
        exited = bool(argv) and argv[0] == "exit"
        if cmd.stdin is not None:
            stdin = cmd.stdin
        target: tuple[str, bool] | None = None
        for op, word in cmd.redirects:
            path = expand(word, env)
            if op == "<":
                read = run(["cat", path], None)
                if read.exit_code:
                    return ExecResult(f"sh: 1: cannot open {path}: No such file\n" if dialect == "sh" else f"{dialect}: line 1: {path}: No such file or directory\n", 2 if dialect == "sh" else 1), False
                stdin = read.output
            elif op in _TO_FILE or (op == ">&" and not (path.isdigit() or path == "-")):
                target = (path, op.endswith(">>"))
            # 2>, 2>>, 2>&1, >&2: the result is already what the terminal shows, both streams in one
        if not argv or all(_ASSIGNMENT.match(a) for a in argv) or argv[0] == "export":
            for a in argv[1:] if argv and argv[0] == "export" else argv:
                if _ASSIGNMENT.match(a):
                    name, _, value = a.partition("=")
                    env[name] = value
            res = ExecResult("", 0)
        elif exited:
            res = ExecResult("", int(argv[1]) % 256 if len(argv) > 1 and argv[1].isdigit() else int(env.get("?", "0")))
        else:
            res = run(argv, stdin)
        if target is not None:
            if target[0] == "/dev/null" or write_file is None:
                res = ExecResult("", res.exit_code)
            else:
                err = write_file(target[0], res.output, target[1])
                res = ExecResult(f"{dialect}: {err}\n", 1) if err else ExecResult("", res.exit_code)
        return res, exited

    def text_filter(self, argv: list[str], stdin: str) -> ExecResult:
        out, err, code = FILTERS[argv[0]](argv[1:], stdin)
        return ExecResult(err + out, code)


#: the one instance the backends hand to the views
SIM_SHELL = SimShell()
