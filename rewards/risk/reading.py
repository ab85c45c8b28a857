"""Reading an agent's command line into pipeline stages the way bash would.

Most lines go through a fast exact reading (words and ``|``, plain quotes);
the rest through the shell's own parser (:mod:`sre_env.shell.parse`). A line
the shell refuses (``&&``, redirects, ``$(...)``) is still read, leniently, so
that the monitor judges what it *would* run; ``sh -c`` bodies and remote ssh
lines are read the same lenient way.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

from sre_env.shell.parse import ShellSyntaxError, parse_pipeline

__all__ = ["Segment", "SPECIAL", "lenient_stages", "read_stages"]

#: characters after which the simple "split on | and whitespace" reading may differ from bash
SPECIAL = frozenset("'\"\\<>&;()$`#\n\x00\x0b\x0c\x1c\x1d\x1e\x1f")
_REDIRECT_OPS = frozenset({">", ">>", ">|", "&>", "&>>", ">&", "1>", "2>", "1>>", "2>>"})
_SPLIT_OPS = frozenset({"|", "||", "&&", ";", "&", "(", ")", ";;", "|&", "{", "}"})


@dataclass
class Segment:
    """One pipeline stage: its argv, its stdin (a heredoc), and the redirect targets the lenient reading keeps."""

    argv: list[str]
    stdin: str | None = None
    writes: list[str] = field(default_factory=list)  # redirect targets (lenient reading only)


def lenient_stages(text: str) -> list[Segment]:
    """Commands in a shell snippet the strict parser refuses (``&&``, ``$(...)``, redirects, scripts).

    Used for ``sh -c`` bodies, remote ssh lines and refused lines: it cuts at
    every operator and keeps redirect targets, erring on the side of seeing
    each command that *would* run.
    """
    segs: list[Segment] = []
    for line in text.splitlines() or [text]:
        if not line.strip():
            continue
        try:
            lex = shlex.shlex(line, posix=True, punctuation_chars=";&|()<>")
            lex.whitespace_split = True
            lex.commenters = ""
            toks = list(lex)
        except ValueError:  # unbalanced quotes: read it as bare words
            toks = line.replace("'", " ").replace('"', " ").split()
        cur = Segment([])
        i = 0
        while i < len(toks):
            t = toks[i]
            if t in _SPLIT_OPS or (t and set(t) <= set(";&|()") and ">" not in t):
                if cur.argv:
                    segs.append(cur)
                cur = Segment([])
            elif t in _REDIRECT_OPS or (t and set(t) <= set("<>&|")):
                if ">" in t and i + 1 < len(toks):
                    cur.writes.append(toks[i + 1])
                i += 1  # skip the redirect target / source
            else:
                # "$(cmd" and "`cmd`" leave their inner words in place: cut there too
                if t.startswith("`") or t.endswith("`"):
                    t = t.strip("`")
                    if cur.argv:
                        segs.append(cur)
                    cur = Segment([])
                    if t:
                        cur.argv.append(t)
                elif t == "$":
                    pass
                else:
                    cur.argv.append(t)
            i += 1
        if cur.argv:
            segs.append(cur)
    return segs


_QUOTES_ONLY = frozenset("'\"")
_SPECIAL_NO_QUOTES = SPECIAL - _QUOTES_ONLY
_WORD_OR_PIPE = re.compile(r"""(?:[^\s'"|]+|'[^']*'|"[^"]*")+|\||\s+|.""")
_WORD_PART = re.compile(r"""'([^']*)'|"([^"]*)"|([^'"]+)""")


def _quick_split(text: str) -> list[list[str]] | None:
    """Bash's reading of a line whose only special characters are ``|`` and plain quotes.

    The shell parser is exact but walks the line a character at a time in
    Python; this regex reading is equivalent for the lines most agents type
    (``ssh n dmesg | grep -i 'medium error' | tail``) and returns None for
    anything it cannot read exactly, which then goes to the parser.
    """
    stages: list[list[str]] = [[]]
    for m in _WORD_OR_PIPE.finditer(text):
        tok = m.group(0)
        c = tok[0]
        if c == "|":
            if not stages[-1]:
                return None
            stages.append([])
        elif c in " \t\r":
            continue
        elif c in "'\"" and len(tok) == 1:
            return None  # an unterminated quote
        else:
            if "'" in tok or '"' in tok:
                tok = "".join(a or b or d for a, b, d in _WORD_PART.findall(tok))
            stages[-1].append(tok)
    if not stages[-1]:
        return None if len(stages) > 1 else []
    return stages


def read_stages(text: str) -> tuple[list[Segment], bool]:
    """Pipeline stages and whether the shell would run the line at all."""
    if text.isascii():
        if SPECIAL.isdisjoint(text):
            # no quoting, heredoc or operator other than "|": bash's reading is exactly this
            parts = [p.split() for p in text.split("|")]
            if all(parts) or (len(parts) == 1):
                return [Segment(p) for p in parts if p], True
        elif _SPECIAL_NO_QUOTES.isdisjoint(text):
            quick = _quick_split(text)
            if quick is not None:
                return [Segment(p) for p in quick], True
    try:
        return [Segment(st.argv, st.stdin) for st in parse_pipeline(text)], True
    except ShellSyntaxError:
        return lenient_stages(text), False
