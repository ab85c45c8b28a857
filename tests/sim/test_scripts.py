"""``sh -c`` scripts in the simulator: the shell's grammar and filters over the place's binaries (sre_env.sim.scripts)."""

from __future__ import annotations

import pytest

from sre_env.backend import ExecResult
from sre_env.sim.commands.spec import Binary, binary_table
from sre_env.sim.scripts import SIM_SHELL


def _place(files: dict[str, str] | None = None):
    """A toy place: echo, cat, false and true as binaries; the runs they saw; writes into ``files``."""
    files = {} if files is None else files
    seen: list[tuple[list[str], str | None]] = []

    def run(argv: list[str], stdin: str | None) -> ExecResult:
        seen.append((argv, stdin))
        name = argv[0]
        if name == "echo":
            return ExecResult(" ".join(argv[1:]) + "\n", 0)
        if name == "cat":
            if len(argv) == 1:
                return ExecResult(stdin or "", 0)
            if argv[1] not in files:
                return ExecResult(f"cat: {argv[1]}: No such file or directory\n", 1)
            return ExecResult(files[argv[1]], 0)
        if name in ("true", "false"):
            return ExecResult("", int(name == "false"))
        if name == "wc":
            return SIM_SHELL.text_filter(argv, stdin or "")
        return ExecResult(f"sh: 1: {name}: not found\n", 127)

    def write(path: str, text: str, append: bool) -> str | None:
        if path.startswith("/proc/"):
            return f"{path}: Read-only file system"
        files[path] = (files.get(path, "") if append else "") + text
        return None

    return run, write, files, seen


def script(text: str, dialect: str = "sh", env: dict[str, str] | None = None, files: dict[str, str] | None = None) -> ExecResult:
    run, write, _, _ = _place(files)
    return SIM_SHELL.run_script(text, dialect=dialect, env=dict(env or {}), run=run, write_file=write)


def test_lists_and_status():
    assert script("echo a; false || echo b && echo c") == ExecResult("a\nb\nc\n", 0)
    assert script("false && echo never") == ExecResult("", 1)
    assert script("echo a\n\necho b\n") == ExecResult("a\nb\n", 0)
    assert script("echo a |\n  cat") == ExecResult("a\n", 0)
    assert script("false; echo $?; true; echo $?") == ExecResult("1\n0\n", 0)


def test_expansion_happens_when_the_command_runs():
    env = {"HOME": "/root", "EMPTY": ""}
    assert script('echo $HOME "$HOME" \'$HOME\' ${HOME}/x ${NOPE:-dflt}', env=env).output == "/root /root $HOME /root/x dflt\n"
    run, write, _, seen = _place()
    SIM_SHELL.run_script('echo $EMPTY; echo "$EMPTY"', dialect="sh", env=dict(env), run=run)
    assert [argv for argv, _ in seen] == [["echo"], ["echo", ""]]  # an unquoted empty expansion is no word
    assert script("export A=1 B=2; echo $A$B; C=3; echo $C").output == "12\n3\n"


def test_exit_ends_the_script():
    assert script("echo a; exit 3; echo b") == ExecResult("a\n", 3)
    assert script("false; exit") == ExecResult("", 1)


def test_pipelines_heredocs_and_the_shells_filters():
    assert script("echo a b | wc -w") == ExecResult("2\n", 0)
    assert script("cat <<EOF | wc -l\none\ntwo\nEOF") == ExecResult("2\n", 0)
    assert SIM_SHELL.text_filter(["grep", "-c", "x"], "x\ny\nx\n") == ExecResult("2\n", 0)
    assert SIM_SHELL.text_filter(["grep", "-Q", "x"], "x\n").exit_code == 2


def test_redirections():
    files: dict[str, str] = {}
    assert script("echo one > /etc/x && echo two >> /etc/x", files=files) == ExecResult("", 0)
    assert files["/etc/x"] == "one\ntwo\n"
    assert script("cat < /etc/x", files=files).output == "one\ntwo\n"
    assert script("cat < /nope", files=files) == ExecResult("sh: 1: cannot open /nope: No such file\n", 2)
    assert script("echo x > /proc/foo", dialect="bash", files=files) == ExecResult("bash: /proc/foo: Read-only file system\n", 1)
    assert script("echo gone >/dev/null; echo kept 2>/dev/null; echo both &>/dev/null; echo err >&2") == ExecResult("kept\nerr\n", 0)
    run, _, _, _ = _place()
    assert SIM_SHELL.run_script("echo dropped > /tmp/x", dialect="sh", env={}, run=run) == ExecResult("", 0)  # nowhere to write


@pytest.mark.parametrize(
    ("text", "sh", "bash"),
    [
        ('echo "x', "sh: 1: Syntax error: Unterminated quoted string\n", "bash: -c: line 1: unexpected EOF while looking for matching `\"'\n"),
        ("| x", 'sh: 1: Syntax error: "|" unexpected\n', "bash: -c: line 1: syntax error near unexpected token `|'\nbash: -c: line 1: `| x'\n"),
        ("echo a &&", "sh: 1: Syntax error: end of file unexpected\n", "bash: -c: line 2: syntax error: unexpected end of file\n"),
        ("echo >", "sh: 1: Syntax error: newline unexpected\n", "bash: -c: line 1: syntax error near unexpected token `newline'\nbash: -c: line 1: `echo >'\n"),
        ("echo $(hostname)", "sre-env shell: command substitution is not supported in scripts here\n", "sre-env shell: command substitution is not supported in scripts here\n"),
    ],
)
def test_syntax_errors_in_each_shells_words(text, sh, bash):
    assert script(text, dialect="sh") == ExecResult(sh, 2)
    assert script(text, dialect="bash") == ExecResult(bash, 2)


def test_binary_tables_refuse_a_name_twice():
    def run(view, argv, stdin):
        return ExecResult("", 0)

    table = binary_table([Binary("grep", "host", "search", run, aliases=("egrep",))])
    assert set(table) == {"grep", "egrep"}
    with pytest.raises(ValueError, match="'grep' is declared twice"):
        binary_table([Binary("grep", "host", "search", run), Binary("grep", "image", "search", run)])
