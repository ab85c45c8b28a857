"""The shell's grammar for ``sh -c`` scripts (parse_script), and that the agent's own line is read as before."""

from __future__ import annotations

import pytest

from sre_env.shell.parse import ShellSyntaxError, expand, parse_pipeline, parse_script


def test_lists_pipelines_and_redirections():
    script = parse_script("a x | b >> /tmp/f 2>&1; c && d\ne || f")
    assert [(p.join, [c.argv({}) for c in p.commands]) for p in script] == [
        ("", [["a", "x"], ["b"]]), (";", [["c"]]), ("&&", [["d"]]), (";", [["e"]]), ("||", [["f"]]),
    ]
    assert script[0].commands[1].redirects == [(">>", "/tmp/f"), ("2>&1", "")]
    assert parse_script("cat <<EOF\nbody\nEOF")[0].commands[0].stdin == "body\n"


def test_references_expand_when_asked():
    cmd = parse_script("echo $A \"$A\" '$A' ${B:-b}$? $NONE")[0].commands[0]
    assert cmd.argv({"A": "1", "?": "3"}) == ["echo", "1", "1", "$A", "b3"]
    assert cmd.argv({"A": "", "B": "x"}) == ["echo", "", "$A", "x0"]
    assert expand("plain", {}) == "plain"


def test_the_agents_line_has_no_variables():
    assert parse_pipeline("echo $HOME '$X' | grep x")[0].argv == ["echo", "$HOME", "$X"]


@pytest.mark.parametrize(
    ("text", "field", "value"),
    [("echo 'x", "quote", "'"), ("a |", "eof", True), ("; a", "token", ";"), ("echo ${A", "bad_substitution", "${A"), ("echo `x`", "unsupported", "command substitution"), ("(a)", "unsupported", "a subshell")],
)
def test_errors_say_what_went_wrong(text, field, value):
    with pytest.raises(ShellSyntaxError) as info:
        parse_script(text)
    assert getattr(info.value, field) == value and info.value.code == 2


def test_int_flags_parse_as_go_does() -> None:
    from sre_env.shell.spec import go_parse_int

    assert [go_parse_int(v) for v in ("5", "-3", "0x10", "0755", "0b101", "1_000", "9223372036854775807")] == [5, -3, 16, 493, 5, 1000, (1 << 63) - 1]
    for v, why in (("99999999999999999999", "value out of range"), ("9223372036854775808", "value out of range"), ("\u0663", "invalid syntax"), ("1e3", "invalid syntax"), ("", "invalid syntax"), ("08", "invalid syntax")):
        with pytest.raises(ValueError, match=why):
            go_parse_int(v)
