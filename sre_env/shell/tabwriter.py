"""A port of the alignment rule of Go's ``text/tabwriter`` (no flags).

kubectl renders both tables (minwidth 6, padding 3) and ``describe`` output
(minwidth 0, padding 2) through tabwriter; column blocks are runs of consecutive
lines that have a tab-terminated cell in that column. Reproducing the rule,
rather than approximating it, is what makes our output line up exactly like
the real tool's, including describe's odd-looking per-section alignment.
"""

from __future__ import annotations

__all__ = ["tabwrite", "TABLE", "DESCRIBE"]

TABLE = (6, 3)
DESCRIBE = (0, 2)


def tabwrite(text: str, minwidth: int = 6, padding: int = 3) -> str:
    """Align ``\\t``-separated cells of ``text`` exactly as tabwriter.Flush would."""
    lines = [ln.split("\t") for ln in text.split("\n")]
    ncell = len(lines[0])
    if ncell > 1 and all(len(ln) == ncell for ln in lines):
        # uniform table (kubectl get): one block per column, so widths are plain column maxima
        widths = [max(max(len(ln[j]) for ln in lines) + padding, minwidth) for j in range(ncell - 1)]
        return "\n".join("".join([c.ljust(w) for c, w in zip(ln, widths)]) + ln[-1] for ln in lines)
    out: list[str] = []
    _format(lines, 0, len(lines), [], minwidth, padding, out)
    return "\n".join(out)


def _write(lines: list[list[str]], a: int, b: int, widths: list[int], out: list[str]) -> None:
    for i in range(a, b):
        cells = lines[i]
        parts = []
        last = len(cells) - 1
        for j, c in enumerate(cells):
            # the last cell is never tab-terminated, so it is never padded
            parts.append(c + " " * (widths[j] - len(c)) if j < len(widths) and j < last else c)
        out.append("".join(parts))


def _format(lines: list[list[str]], line0: int, line1: int, widths: list[int], minwidth: int, padding: int, out: list[str]) -> None:
    column = len(widths)
    this = line0
    while this < line1:
        if column >= len(lines[this]) - 1:
            this += 1
            continue
        _write(lines, line0, this, widths, out)
        line0 = this
        width = minwidth
        while this < line1:
            cells = lines[this]
            if column >= len(cells) - 1:
                break
            w = len(cells[column]) + padding
            if w > width:
                width = w
            this += 1
        widths.append(width)
        _format(lines, line0, this, widths, minwidth, padding, out)
        widths.pop()
        line0 = this
    _write(lines, line0, line1, widths, out)
