"""Text filters an agent pipes kubectl output into: grep, head, tail, wc, sort, uniq, cut, awk, echo, cat.

Each takes (argv, stdin) and returns (stdout, stderr, exit code) with GNU
coreutils' wording for errors. Only the options agents actually use are
implemented; anything else fails loudly rather than being silently ignored.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from sre_env.kube.regexp import RegexError, compile_re2

__all__ = ["FILTERS", "FilterFn"]

Result = tuple[str, str, int]
FilterFn = Callable[[list[str], str | None], Result]


def _lines(text: str | None) -> list[str]:
    if not text:
        return []
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _join(lines: list[str]) -> str:
    return "".join(ln + "\n" for ln in lines)


def _bad_option(prog: str, opt: str) -> Result:
    if opt.startswith("--"):
        msg = f"{prog}: unrecognized option '{opt}'"
    else:
        msg = f"{prog}: invalid option -- '{opt.lstrip('-')[:1]}'"
    return "", f"{msg}\nTry '{prog} --help' for more information.\n", 2 if prog in ("grep", "sort") else 1


def _count(digits: str) -> int:
    """A run of decimal digits as a count; past 10**18 it saturates (no line or field number gets
    there, and Python would refuse to convert a 5000-digit string at all)."""
    return int(digits) if len(digits) <= 18 else 10**18


def _int(prog: str, what: str, val: str) -> int:
    try:
        if len(val) > 20:
            raise ValueError(val)
        return int(val)
    except ValueError:
        raise _FilterError(f"{prog}: invalid {what}: '{val}'") from None


class _FilterError(Exception):
    pass


def _no_file(prog: str, files: list[str], code: int = 1) -> Result:
    return "", "".join(f"{prog}: {f}: No such file or directory\n" for f in files), code


# --------------------------------------------------------------------------- grep
_GREP_LONG = {
    "--ignore-case": "i", "--invert-match": "v", "--extended-regexp": "E", "--fixed-strings": "F",
    "--count": "c", "--line-number": "n", "--word-regexp": "w", "--only-matching": "o",
    "--quiet": "q", "--silent": "q", "--no-filename": "h",
}
_GREP_VALUED = {"A", "B", "C", "e", "m"}


def _grep_regex(parts: list[str], word: bool, ignore_case: bool) -> tuple[Any, Callable[[], Any]]:
    """(matcher for whether a line matches, maker of the matcher whose matches ``-o`` prints).

    GNU grep matches without backtracking unless a backreference needs it; RE2 does the
    same in linear time, so ``(a*)*b`` against a long line cannot hang the step. What RE2
    refuses (backreferences, ``-P`` lookaround) goes to Python's engine. ``-w``: a line
    matches when the pattern occurs between non-word characters or the line's ends.
    """
    alt = "|".join(parts)
    refused = ""
    try:
        line_rx = compile_re2(rf"(?:^|\W)(?:{alt})(?:\W|$)" if word else alt, ignore_case=ignore_case)
    except RegexError as exc:
        line_rx, refused = None, exc.msg
    flags = re.IGNORECASE if ignore_case else 0
    py = rf"(?<!\w)(?:{alt})(?!\w)" if word else alt
    if line_rx is None:
        try:
            re.compile(py, flags)
        except RecursionError:
            raise re.error("regular expression too big") from None
        except re.error as exc:
            # GNU grep's words for the common mistakes
            if refused.startswith("missing closing )"):
                raise re.error("Unmatched ( or \\(") from None
            if refused.startswith("missing closing ]"):
                raise re.error("Unmatched [, [^, [:, [., or [=") from None
            raise exc from None

    def finder() -> Any:
        if not word and line_rx is not None:
            return line_rx
        return re.compile(py, flags)

    if line_rx is None:
        rx = re.compile(py, flags)
        return rx, lambda: rx
    return line_rx, finder


def _bre_to_python(p: str) -> str:
    """GNU basic regex: ``\\|``, ``\\+``, ``\\?``, ``\\(``, ``\\)`` are operators, bare ones literal."""
    out, i = [], 0
    while i < len(p):
        c = p[i]
        if c == "\\" and i + 1 < len(p):
            d = p[i + 1]
            out.append(d if d in "|+?(){}" else "\\" + d)
            i += 2
            continue
        out.append("\\" + c if c in "|+?(){}" else c)
        i += 1
    return "".join(out)


def grep(argv: list[str], stdin: str | None) -> Result:
    flags: set[str] = set()
    patterns: list[str] = []
    files: list[str] = []
    after = before = 0
    max_count = -1
    i = 0
    only_args = False
    try:
        while i < len(argv):
            a = argv[i]
            if only_args or not a.startswith("-") or a == "-":
                files.append(a)
            elif a == "--":
                only_args = True
            elif a.startswith("--"):
                name, _, val = a.partition("=")
                if name in _GREP_LONG:
                    flags.add(_GREP_LONG[name])
                elif name in ("--regexp", "--after-context", "--before-context", "--context", "--max-count"):
                    if not val:
                        i += 1
                        if i >= len(argv):
                            return "", f"grep: option '{name}' requires an argument\n", 2
                        val = argv[i]
                    letter = {"--regexp": "e", "--after-context": "A", "--before-context": "B", "--context": "C", "--max-count": "m"}[name]
                    if letter == "e":
                        patterns.append(val)
                    else:
                        n = _int("grep", "context length argument" if letter != "m" else "max count", val)
                        after, before, max_count = _apply_ctx(letter, n, after, before, max_count)
                elif name == "--color" or name == "--colour":
                    pass
                else:
                    return _bad_option("grep", a)
            else:
                j = 1
                while j < len(a):
                    ch = a[j]
                    if ch in _GREP_VALUED:
                        val = a[j + 1 :]
                        if not val:
                            i += 1
                            if i >= len(argv):
                                return "", f"grep: option requires an argument -- '{ch}'\nUsage: grep [OPTION]... PATTERNS [FILE]...\nTry 'grep --help' for more information.\n", 2
                            val = argv[i]
                        if ch == "e":
                            patterns.append(val)
                        else:
                            n = _int("grep", "context length argument" if ch != "m" else "max count", val)
                            after, before, max_count = _apply_ctx(ch, n, after, before, max_count)
                        break
                    if ch.isdigit():
                        n = _int("grep", "context length argument", a[j:])
                        after, before, max_count = _apply_ctx("C", n, after, before, max_count)
                        break
                    if ch not in "ivEFcnwoqhHrRlsPa":
                        return _bad_option("grep", "-" + ch)
                    flags.add(ch)
                    j += 1
            i += 1
    except _FilterError as exc:
        return "", f"{exc}\n", 2
    if not patterns:
        if not files:
            return "", "Usage: grep [OPTION]... PATTERNS [FILE]...\nTry 'grep --help' for more information.\n", 2
        patterns.append(files.pop(0))
    if files and files != ["-"]:
        return _no_file("grep", files, 2)
    pats: list[str] = []
    for p in patterns:
        pats.extend(p.split("\n"))
    try:
        parts = []
        for p in pats:
            if "F" in flags:
                p = re.escape(p)
            elif "E" not in flags and "P" not in flags:
                p = _bre_to_python(p)
            parts.append(f"(?:{p})")
        rx, finder = _grep_regex(parts, "w" in flags, "i" in flags)
    except re.error as exc:
        return "", f"grep: {exc}\n", 2
    lines = _lines(stdin)
    invert = "v" in flags
    hits = [(bool(rx.search(ln)) != invert) for ln in lines]
    if max_count >= 0:
        seen = 0
        for k, h in enumerate(hits):
            if h:
                seen += 1
                if seen > max_count:
                    hits[k] = False
        if seen > max_count:
            last = max(k for k, h in enumerate(hits) if h) if any(hits) else -1
            lines, hits = lines[: last + 1], hits[: last + 1]
    nmatch = sum(hits)
    code = 0 if nmatch else 1
    if "q" in flags:
        return "", "", code
    if "c" in flags:
        return f"{nmatch}\n", "", code
    num = "n" in flags
    out: list[str] = []
    if "o" in flags and not invert:
        for k, ln in enumerate(lines):
            if hits[k]:
                for m in finder().finditer(ln):
                    if m.group(0):
                        out.append(f"{k + 1}:{m.group(0)}" if num else m.group(0))
        return _join(out), "", code
    if not (after or before):
        for k, ln in enumerate(lines):
            if hits[k]:
                out.append(f"{k + 1}:{ln}" if num else ln)
        return _join(out), "", code
    shown = -1
    last_printed = -2
    for k, h in enumerate(hits):
        if not h:
            continue
        start = max(k - before, shown + 1)
        if last_printed >= 0 and start > last_printed + 1:
            out.append("--")
        for t in range(start, min(len(lines), k + after + 1)):
            if t <= shown:
                continue
            sep = ":" if hits[t] else "-"
            out.append(f"{t + 1}{sep}{lines[t]}" if num else lines[t])
            shown = last_printed = t
    return _join(out), "", code


def _apply_ctx(letter: str, n: int, after: int, before: int, max_count: int) -> tuple[int, int, int]:
    if letter == "A":
        return n, before, max_count
    if letter == "B":
        return after, n, max_count
    if letter == "C":
        return n, n, max_count
    return after, before, n


# --------------------------------------------------------------------------- head / tail
def _head_tail(prog: str, argv: list[str], stdin: str | None) -> Result:
    n_str = "10"
    files: list[str] = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("-n", "--lines"):
            i += 1
            if i >= len(argv):
                return "", f"{prog}: option requires an argument -- 'n'\nTry '{prog} --help' for more information.\n", 1
            n_str = argv[i]
        elif a.startswith("--lines="):
            n_str = a[8:]
        elif a.startswith("-n"):
            n_str = a[2:]
        elif len(a) > 1 and a[0] == "-" and a[1:].isdigit():
            n_str = a[1:]
        elif a in ("-f", "-F", "--follow", "-q", "-v"):
            pass
        elif a.startswith("-") and a != "-":
            return _bad_option(prog, a)
        else:
            files.append(a)
        i += 1
    if files and files != ["-"]:
        return _no_file(prog, files) if prog == "head" else ("", "".join(f"tail: cannot open '{f}' for reading: No such file or directory\n" for f in files), 1)
    lines = _lines(stdin)
    from_start = n_str.startswith("+")
    neg = n_str.startswith("-")
    body = n_str.lstrip("+-")
    if not body.isdecimal():
        what = "number of lines"
        return "", f"{prog}: invalid {what}: '{n_str}'\n", 1
    n = _count(body)
    if prog == "head":
        sel = lines[: len(lines) - n] if neg else lines[:n]
    elif from_start:
        sel = lines[max(n - 1, 0) :]
    else:
        sel = lines[len(lines) - n :] if n else []
    return _join(sel), "", 0


def head(argv: list[str], stdin: str | None) -> Result:
    return _head_tail("head", argv, stdin)


def tail(argv: list[str], stdin: str | None) -> Result:
    return _head_tail("tail", argv, stdin)


# --------------------------------------------------------------------------- wc
def wc(argv: list[str], stdin: str | None) -> Result:
    want: list[str] = []
    files = []
    for a in argv:
        if a.startswith("--"):
            m = {"--lines": "l", "--words": "w", "--bytes": "c", "--chars": "m"}.get(a)
            if not m:
                return _bad_option("wc", a)
            want.append(m)
        elif a.startswith("-") and a != "-":
            for ch in a[1:]:
                if ch not in "lwcm":
                    return _bad_option("wc", "-" + ch)
                want.append(ch)
        else:
            files.append(a)
    if files and files != ["-"]:
        return _no_file("wc", files)
    text = stdin or ""
    counts = {"l": text.count("\n"), "w": len(text.split()), "c": len(text.encode()), "m": len(text)}
    order = [k for k in "lwmc" if k in want] or ["l", "w", "c"]
    if len(order) == 1:
        return f"{counts[order[0]]}\n", "", 0
    return " ".join(f"{counts[k]:>7}" for k in order) + "\n", "", 0


# --------------------------------------------------------------------------- sort / uniq
def _num_key(s: str) -> tuple[int, float, str]:
    m = re.match(r"\s*(-?\d+(?:\.\d+)?)", s)
    return (1, float(m.group(1)), s) if m else (0, 0.0, s)


_HUMAN = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "KI": 1024, "MI": 1024**2, "GI": 1024**3, "TI": 1024**4, "m": 1e-3}


def _human_key(s: str) -> tuple[int, float, str]:
    m = re.match(r"\s*(-?\d+(?:\.\d+)?)([KMGTkmgt]?[iI]?)", s)
    if not m:
        return (0, 0.0, s)
    suf = m.group(2)
    mult = _HUMAN.get(suf if suf == "m" else suf.upper(), 1)
    return (1, float(m.group(1)) * mult, s)


def sort(argv: list[str], stdin: str | None) -> Result:
    rev = num = uniq = human = False
    key_field: int | None = None
    sep: str | None = None
    files = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("-k", "--key", "-t", "--field-separator"):
            i += 1
            if i >= len(argv):
                return "", f"sort: option requires an argument -- '{a[1] if len(a) == 2 else a}'\nTry 'sort --help' for more information.\n", 2
            val = argv[i]
            if a in ("-k", "--key"):
                a = "-k" + val
            else:
                a = "-t" + val
        if a.startswith("--key="):
            a = "-k" + a[6:]
        if a.startswith("-k") and len(a) > 2:
            spec = a[2:].split(",")[0]
            flags_in = "".join(ch for ch in spec if ch.isalpha())
            spec_num = spec.split(".")[0].rstrip("nrhb")
            if not spec_num.isdecimal() or _count(spec_num) < 1:
                return "", f"sort: invalid number at field start: invalid count at start of '{a[2:]}'\n", 2
            key_field = _count(spec_num)
            num = num or "n" in flags_in
            rev = rev or "r" in flags_in
            human = human or "h" in flags_in
        elif a.startswith("-t") and len(a) > 2:
            sep = a[2:]
        elif a.startswith("--"):
            m = {"--reverse": "r", "--numeric-sort": "n", "--unique": "u", "--human-numeric-sort": "h"}.get(a)
            if not m:
                return _bad_option("sort", a)
            rev, num, uniq, human = rev or m == "r", num or m == "n", uniq or m == "u", human or m == "h"
        elif a.startswith("-") and a != "-":
            for ch in a[1:]:
                if ch not in "rnuhbf":
                    return _bad_option("sort", "-" + ch)
                rev, num, uniq, human = rev or ch == "r", num or ch == "n", uniq or ch == "u", human or ch == "h"
        else:
            files.append(a)
        i += 1
    if files and files != ["-"]:
        return "", "".join(f"sort: cannot read: {f}: No such file or directory\n" for f in files), 2

    def field(ln: str) -> str:
        if key_field is None:
            return ln
        parts = ln.split(sep) if sep else ln.split()
        return parts[key_field - 1] if len(parts) >= key_field else ""

    keyfn: Callable[[str], object]
    if human:
        keyfn = lambda ln: _human_key(field(ln))  # noqa: E731
    elif num:
        keyfn = lambda ln: _num_key(field(ln))  # noqa: E731
    else:
        keyfn = field
    lines = sorted(_lines(stdin), key=keyfn, reverse=rev)  # type: ignore[arg-type]
    if uniq:
        seen: set[object] = set()
        out = []
        for ln in lines:
            k = keyfn(ln)
            if k not in seen:
                seen.add(k)
                out.append(ln)
        lines = out
    return _join(lines), "", 0


def uniq(argv: list[str], stdin: str | None) -> Result:
    count = dup = False
    for a in argv:
        if a in ("-c", "--count"):
            count = True
        elif a in ("-d", "--repeated"):
            dup = True
        elif a.startswith("-") and a != "-":
            if all(ch in "cd" for ch in a[1:]):
                count, dup = count or "c" in a, dup or "d" in a
            else:
                return _bad_option("uniq", a)
        else:
            return _no_file("uniq", [a])
    groups: list[list] = []
    for ln in _lines(stdin):
        if groups and groups[-1][0] == ln:
            groups[-1][1] += 1
        else:
            groups.append([ln, 1])
    out = [f"{n:>7} {ln}" if count else ln for ln, n in groups if not dup or n > 1]
    return _join(out), "", 0


# --------------------------------------------------------------------------- cut
def _ranges(spec: str) -> list[tuple[int, int]] | None:
    out = []
    for part in spec.split(","):
        m = re.fullmatch(r"(\d*)-(\d*)|(\d+)", part)
        if not m:
            return None
        if m.group(3):
            n = _count(m.group(3))
            out.append((n, n))
        else:
            lo = _count(m.group(1)) if m.group(1) else 1
            hi = _count(m.group(2)) if m.group(2) else 10**9
            out.append((lo, hi))
    if any(lo < 1 for lo, _ in out):
        return None
    return out


def cut(argv: list[str], stdin: str | None) -> Result:
    delim = "\t"
    fields: str | None = None
    chars: str | None = None
    i = 0
    files = []
    while i < len(argv):
        a = argv[i]
        if a in ("-d", "-f", "-c"):
            i += 1
            if i >= len(argv):
                return "", f"cut: option requires an argument -- '{a[1]}'\nTry 'cut --help' for more information.\n", 1
            a = a + argv[i]
        if a.startswith("-d"):
            delim = a[2:]
            if len(delim) != 1:
                return "", "cut: the delimiter must be a single character\nTry 'cut --help' for more information.\n", 1
        elif a.startswith("-f"):
            fields = a[2:]
        elif a.startswith("-c"):
            chars = a[2:]
        elif a.startswith("--delimiter="):
            delim = a[12:]
        elif a.startswith("--fields="):
            fields = a[9:]
        elif a.startswith("-") and a != "-":
            return _bad_option("cut", a)
        else:
            files.append(a)
        i += 1
    spec = fields if fields is not None else chars
    if spec is None:
        return "", "cut: you must specify a list of bytes, characters, or fields\nTry 'cut --help' for more information.\n", 1
    rng = _ranges(spec)
    if rng is None:
        return "", f"cut: invalid field value '{spec}'\nTry 'cut --help' for more information.\n", 1
    if files and files != ["-"]:
        return _no_file("cut", files)
    out = []
    for ln in _lines(stdin):
        if fields is None:
            out.append("".join(c for k, c in enumerate(ln, 1) if any(lo <= k <= hi for lo, hi in rng)))
        elif delim not in ln:
            out.append(ln)
        else:
            parts = ln.split(delim)
            out.append(delim.join(p for k, p in enumerate(parts, 1) if any(lo <= k <= hi for lo, hi in rng)))
    return _join(out), "", 0


# --------------------------------------------------------------------------- awk
_AWK_PROG = re.compile(r"^\s*(?:(NR\s*(?:==|!=|>=|<=|>|<)\s*\d+|/(?:[^/\\]|\\.)*/|!/(?:[^/\\]|\\.)*/)\s*)?\{\s*print(?:\s+(.*?))?\s*;?\s*\}\s*$", re.S)
_AWK_TOKEN = re.compile(r'\s*(?:(\$NF|\$\d+|\$\(NF-\d+\))|"((?:[^"\\]|\\.)*)"|(NR|NF)|(,))')
AWK_UNSUPPORTED = "awk: only programs of the form '[NR>N | /regex/] {print $N, ...}' are supported in this shell"


def awk(argv: list[str], stdin: str | None) -> Result:
    sep: str | None = None
    prog: str | None = None
    i = 0
    files = []
    while i < len(argv):
        a = argv[i]
        if a == "-F":
            i += 1
            if i >= len(argv):
                return "", "awk: option requires an argument -- F\n", 2
            sep = argv[i]
        elif a.startswith("-F"):
            sep = a[2:]
        elif prog is None:
            prog = a
        else:
            files.append(a)
        i += 1
    if prog is None:
        return "", "usage: awk [-F fs] 'prog' [file ...]\n", 2
    m = _AWK_PROG.match(prog)
    if not m:
        return "", AWK_UNSUPPORTED + "\n", 2
    cond, args = m.group(1), m.group(2) or "$0"
    items: list[list[tuple[str, str]]] = [[]]
    pos = 0
    while pos < len(args):
        t = _AWK_TOKEN.match(args, pos)
        if not t or t.end() == pos:
            if args[pos:].strip() == "":
                break
            return "", AWK_UNSUPPORTED + "\n", 2
        pos = t.end()
        if t.group(1):
            items[-1].append(("f", t.group(1)))
        elif t.group(2) is not None:
            items[-1].append(("s", t.group(2).replace('\\"', '"').replace("\\t", "\t").replace("\\n", "\n")))
        elif t.group(3):
            items[-1].append(("v", t.group(3)))
        else:
            items.append([])
    if files:
        return "", "".join(f"awk: fatal: cannot open file `{f}' for reading: No such file or directory\n" for f in files), 2
    cond_fn: Callable[[int, str], bool] = lambda nr, ln: True  # noqa: E731
    if cond:
        if cond.startswith("NR"):
            cm = re.match(r"NR\s*(==|!=|>=|<=|>|<)\s*(\d+)", cond)
            assert cm
            op, val = cm.group(1), _count(cm.group(2))
            ops = {"==": int.__eq__, "!=": int.__ne__, ">=": int.__ge__, "<=": int.__le__, ">": int.__gt__, "<": int.__lt__}
            cond_fn = lambda nr, ln: ops[op](nr, val)  # noqa: E731
        else:
            neg = cond.startswith("!")
            try:
                crx = compile_re2(cond.lstrip("!")[1:-1])  # awk's regexps are ERE: no backtracking
            except RegexError as exc:
                return "", f"awk: fatal: invalid regex: {exc}\n", 2
            cond_fn = lambda nr, ln: bool(crx.search(ln)) != neg  # noqa: E731
    out = []
    for nr, ln in enumerate(_lines(stdin), 1):
        if not cond_fn(nr, ln):
            continue
        fields = ln.split(sep) if sep else ln.split()
        vals = []
        for item in items:
            piece = []
            for kind, v in item:
                if kind == "s":
                    piece.append(v)
                elif kind == "v":
                    piece.append(str(nr if v == "NR" else len(fields)))
                else:
                    if v == "$NF":
                        idx = len(fields)
                    elif v.startswith("$("):
                        idx = len(fields) - _count(v[5:-1])
                    else:
                        idx = _count(v[1:])
                    piece.append(ln if idx == 0 else (fields[idx - 1] if 0 < idx <= len(fields) else ""))
            vals.append("".join(piece))
        out.append(" ".join(vals))
    return _join(out), "", 0


# --------------------------------------------------------------------------- echo / cat
def echo(argv: list[str], stdin: str | None) -> Result:
    newline = True
    escapes = False
    while argv and argv[0] in ("-n", "-e", "-ne", "-en", "-E"):
        newline = newline and "n" not in argv[0]
        escapes = escapes or "e" in argv[0][1:]
        argv = argv[1:]
    text = " ".join(argv)
    if escapes:
        text = text.replace("\\n", "\n").replace("\\t", "\t")
    return text + ("\n" if newline else ""), "", 0


def cat(argv: list[str], stdin: str | None) -> Result:
    files = [a for a in argv if a != "-" and not a.startswith("-")]
    if files:
        return _no_file("cat", files)
    return stdin or "", "", 0


FILTERS: dict[str, FilterFn] = {
    "grep": grep, "egrep": lambda a, s: grep(["-E", *a], s), "head": head, "tail": tail, "wc": wc,
    "sort": sort, "uniq": uniq, "cut": cut, "awk": awk, "echo": echo, "cat": cat,
}


# reading certificates out of Secrets: base64 -d | openssl x509 (sre_env.shell.filters_tls)
from .filters_tls import TLS_FILTERS as _TLS_FILTERS  # noqa: E402

FILTERS.update(_TLS_FILTERS)
