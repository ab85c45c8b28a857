"""Agent-typed regular expressions: Go's syntax and errors, matched in linear time (RE2)."""

from __future__ import annotations

import pytest

from sre_env.kube.regexp import RegexError, compile_re2


@pytest.mark.parametrize(
    "pattern, message",
    [
        ("(a", "missing closing ): `(a`"),
        ("[a", "missing closing ]: `[a`"),
        ("a**", "invalid nested repetition operator: `**`"),
        ("*a", "missing argument to repetition operator: `*`"),
        ("a{2000}", "invalid repeat count: `{2000}`"),
        ("[z-a]", "invalid character class range: `z-a`"),
    ],
)
def test_refusals_read_as_gos(pattern: str, message: str) -> None:
    with pytest.raises(RegexError) as err:
        compile_re2(pattern)
    assert err.value.msg == message


def test_backreferences_are_refused_as_in_go() -> None:
    with pytest.raises(RegexError):
        compile_re2(r"(a)\1")


def test_a_pathological_pattern_does_not_backtrack() -> None:
    # exponential for a backtracking engine; RE2 answers at once
    assert compile_re2("(a*)*b").search("a" * 5000) is None
    assert compile_re2("(?i)ERROR").search("an error") is not None
    m = compile_re2("(?P<x>[0-9]+)ms", dot_all=True).search("took 12ms")
    assert m.group("x") == "12"
