"""The evaluation report: tables (Markdown, HTML) and PNG plots from results rows.

    sre-env report runs/eval            # rebuilds report.md, report.html and the plots

Tables: overall, per scenario, per layer, per family and — when the run had
more than one noise level — per noise level. Columns: episodes, end-to-end
success, pass@1 and pass@k (the unbiased estimator over the attempts of each
(scenario, seed, noise) task), best-of-N reward, mean reward, the share of
episodes passing each gate (diagnosis, mitigation = the live gate, durability,
cleanup), risk flags, steps, tokens and the median simulated time to mitigate.

Plots need matplotlib (``pip install 'sre-env[eval]'``); without it the
report says so and the tables are still written.
"""

from __future__ import annotations

import html
import math
import statistics
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

__all__ = ["pass_at_k", "summarize", "markdown_report", "html_report", "write_report", "COLUMNS"]


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from n attempts with c successes (Chen et al., 2021)."""
    if n <= 0 or k <= 0:
        return float("nan")
    k = min(k, n)
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def _rate(rows: Sequence[dict[str, Any]], key: str) -> float | None:
    vals = [bool(r[key]) for r in rows if r.get(key) is not None]
    return sum(vals) / len(vals) if vals else None


def _mean(rows: Sequence[dict[str, Any]], key: str) -> float | None:
    vals = [float(r[key]) for r in rows if isinstance(r.get(key), (int, float)) and not isinstance(r.get(key), bool)]
    return sum(vals) / len(vals) if vals else None


def _median(rows: Sequence[dict[str, Any]], key: str) -> float | None:
    vals = [float(r[key]) for r in rows if isinstance(r.get(key), (int, float)) and not isinstance(r.get(key), bool)]
    return statistics.median(vals) if vals else None


def _tasks(rows: Sequence[dict[str, Any]]) -> dict[tuple[Any, ...], list[dict[str, Any]]]:
    tasks: dict[tuple[Any, ...], list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        tasks[(r.get("env_id"), r.get("seed"), r.get("noise"))].append(r)
    return tasks


def summarize(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Every column of the report for one group of rows."""
    tasks = _tasks(rows)
    k = max((len(v) for v in tasks.values()), default=1)
    p1 = [pass_at_k(len(v), sum(bool(r.get("success")) for r in v), 1) for v in tasks.values()]
    pk = [pass_at_k(len(v), sum(bool(r.get("success")) for r in v), k) for v in tasks.values()]
    best = [max(float(r.get("reward") or 0.0) for r in v) for v in tasks.values()]
    tokens = [float((r.get("prompt_tokens") or 0) + (r.get("completion_tokens") or 0)) for r in rows]
    return {
        "episodes": len(rows),
        "tasks": len(tasks),
        "k": k,
        "success": _rate(rows, "success"),
        "pass@1": sum(p1) / len(p1) if p1 else None,
        "pass@k": sum(pk) / len(pk) if pk else None,
        "best_of_n": sum(best) / len(best) if best else None,
        "reward": _mean(rows, "reward"),
        "diagnosis": _rate(rows, "diagnosis"),
        "mitigation": _rate(rows, "mitigation"),
        "durability": _rate(rows, "durability"),
        "cleanup": _rate(rows, "cleanup"),
        "risk_flags": _mean(rows, "risk_flags"),
        "steps": _mean(rows, "steps"),
        "tokens": (sum(tokens) / len(tokens)) if tokens else None,
        "ttm_s": _median(rows, "time_to_mitigate_s"),
        "errors": sum(1 for r in rows if r.get("error")),
    }


#: (key in summarize(), header, format)
COLUMNS: tuple[tuple[str, str, str], ...] = (
    ("episodes", "episodes", "{:d}"),
    ("success", "e2e success", "{:.0%}"),
    ("pass@1", "pass@1", "{:.2f}"),
    ("pass@k", "pass@k", "{:.2f}"),
    ("best_of_n", "best-of-N reward", "{:.2f}"),
    ("reward", "mean reward", "{:.2f}"),
    ("diagnosis", "diagnosis", "{:.0%}"),
    ("mitigation", "mitigation", "{:.0%}"),
    ("durability", "durability", "{:.0%}"),
    ("cleanup", "cleanup", "{:.0%}"),
    ("risk_flags", "risk flags", "{:.1f}"),
    ("steps", "steps", "{:.1f}"),
    ("tokens", "tokens", "{:,.0f}"),
    ("ttm_s", "time to mitigate (sim s, median)", "{:.0f}"),
)


def _fmt(value: Any, fmt: str) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    try:
        return fmt.format(value)
    except (ValueError, TypeError):
        return str(value)


def _groups(rows: Sequence[dict[str, Any]], key: Callable[[dict[str, Any]], Any]) -> list[tuple[str, list[dict[str, Any]]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        out.setdefault(str(key(r)), []).append(r)
    return sorted(out.items())


def tables(rows: Sequence[dict[str, Any]]) -> list[tuple[str, str, list[tuple[str, dict[str, Any]]]]]:
    """(title, first column header, [(label, summary)]) for every table of the report."""
    out = [("Overall", "agent", [(str(rows[0].get("agent", "")) if rows else "-", summarize(rows))])]
    out.append(("Per scenario", "scenario", [(k, summarize(v)) for k, v in _groups(rows, lambda r: r.get("env_id"))]))
    out.append(("Per layer", "layer", [(k, summarize(v)) for k, v in _groups(rows, lambda r: r.get("layer"))]))
    out.append(("Per family", "family", [(k, summarize(v)) for k, v in _groups(rows, lambda r: r.get("family"))]))
    noise = _groups(rows, lambda r: r.get("noise") or "none")
    if len(noise) > 1:
        out.append(("Noise vs no noise", "noise", [(k, summarize(v)) for k, v in noise]))
    return out


def markdown_report(rows: Sequence[dict[str, Any]], *, title: str = "sre-env evaluation", plots: Iterable[str] = ()) -> str:
    lines = [f"# {title}", ""]
    agents = sorted({str(r.get("agent")) for r in rows})
    k = summarize(rows)["k"] if rows else 1
    lines += [f"Agent: {', '.join(agents) or '-'}. {len(rows)} episodes over {len(_tasks(rows))} tasks (scenario x seed x noise), k = {k} attempts each.", ""]
    errors = [r for r in rows if r.get("error")]
    if errors:
        lines += [f"**{len(errors)} episode(s) failed to run** (counted as failures); first: `{errors[0]['error']}`", ""]
    for name, first, entries in tables(rows):
        lines += [f"## {name}", "", "| " + " | ".join([first] + [h for _, h, _ in COLUMNS]) + " |", "|" + "---|" * (len(COLUMNS) + 1)]
        for label, summary in entries:
            lines.append("| " + " | ".join([label.replace("|", "\\|")] + [_fmt(summary.get(key), fmt) for key, _, fmt in COLUMNS]) + " |")
        lines.append("")
    for plot in plots:
        lines += [f"![{Path(plot).stem}]({Path(plot).name})", ""]
    lines += [
        "Columns: *e2e success* = every gate the task requires passed; *mitigation* = the live gate (the app serves like before the incident under load); "
        "*pass@k* = unbiased estimate that at least one of k attempts succeeds; *best-of-N* = the best reward among a task's attempts, averaged; "
        "*time to mitigate* = simulated seconds from hand-over to the last cluster-changing command of a successful episode.",
        "",
    ]
    return "\n".join(lines)


def html_report(rows: Sequence[dict[str, Any]], *, title: str = "sre-env evaluation", plots: Iterable[str] = ()) -> str:
    esc = html.escape
    parts = [
        "<!doctype html><html><head><meta charset='utf-8'>",
        f"<title>{esc(title)}</title>",
        "<style>body{font-family:system-ui,sans-serif;margin:2em;max-width:1400px}table{border-collapse:collapse;margin-bottom:2em}"
        "th,td{border:1px solid #ccc;padding:4px 8px;text-align:right}th:first-child,td:first-child{text-align:left}"
        "th{background:#f4f4f4}.good{background:#e6f6e6}.bad{background:#fbe9e9}</style></head><body>",
        f"<h1>{esc(title)}</h1>",
        f"<p>{len(rows)} episodes over {len(_tasks(rows))} tasks.</p>",
    ]
    for name, first, entries in tables(rows):
        parts.append(f"<h2>{esc(name)}</h2><table><tr><th>{esc(first)}</th>" + "".join(f"<th>{esc(h)}</th>" for _, h, _ in COLUMNS) + "</tr>")
        for label, summary in entries:
            cells = []
            for key, _, fmt in COLUMNS:
                value = summary.get(key)
                cls = ""
                if key == "success" and isinstance(value, float):
                    cls = " class='good'" if value >= 0.5 else " class='bad'"
                cells.append(f"<td{cls}>{esc(_fmt(value, fmt))}</td>")
            parts.append(f"<tr><td>{esc(label)}</td>{''.join(cells)}</tr>")
        parts.append("</table>")
    for plot in plots:
        parts.append(f"<p><img src='{esc(Path(plot).name)}' alt='{esc(Path(plot).stem)}'></p>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"


def plot(rows: Sequence[dict[str, Any]], out_dir: Path) -> list[str]:
    """PNG bar charts: success and gate pass rates per scenario, success per layer. [] without matplotlib."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    written = []
    groups = _groups(rows, lambda r: r.get("env_id"))
    if groups:
        labels = [k.removeprefix("SREGym/").removesuffix("-v0") for k, _ in groups]
        keys = ("success", "diagnosis", "mitigation", "durability", "cleanup")
        fig, ax = plt.subplots(figsize=(max(6, 0.9 * len(labels) * len(keys) / 3), 4))
        width = 0.8 / len(keys)
        for j, key in enumerate(keys):
            vals = [(summarize(v).get(key) or 0.0) for _, v in groups]
            ax.bar([i + j * width for i in range(len(labels))], vals, width, label=key)
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(labels))])
        ax.set_xticklabels(labels, rotation=30, ha="right", fontsize=8)
        ax.set_ylim(0, 1.22)  # room for the legend above the bars
        ax.set_yticks([0, 0.2, 0.4, 0.6, 0.8, 1.0])
        ax.set_ylabel("share of episodes")
        ax.legend(fontsize=7, ncol=len(keys), loc="upper center")
        ax.set_title("Per scenario")
        fig.tight_layout()
        path = out_dir / "per_scenario.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(str(path))
    layers = _groups(rows, lambda r: r.get("layer"))
    if layers:
        fig, ax = plt.subplots(figsize=(6, 3.2))
        ax.bar([k for k, _ in layers], [summarize(v).get("success") or 0.0 for _, v in layers], color="#4c72b0")
        ax.set_ylim(0, 1.05)
        ax.set_ylabel("e2e success")
        ax.set_title("Per layer")
        fig.tight_layout()
        path = out_dir / "per_layer.png"
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(str(path))
    return written


def write_report(rows: Sequence[dict[str, Any]], out_dir: str | Path, *, title: str = "sre-env evaluation") -> dict[str, Path]:
    """report.md, report.html and the PNG plots into ``out_dir``; returns their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    plots = plot(rows, out)
    md = markdown_report(rows, title=title, plots=plots)
    if not plots:
        md += "\n(No plots: install matplotlib, `pip install 'sre-env[eval]'`.)\n"
    (out / "report.md").write_text(md, encoding="utf-8")
    (out / "report.html").write_text(html_report(rows, title=title, plots=plots), encoding="utf-8")
    paths = {"markdown": out / "report.md", "html": out / "report.html"}
    paths.update({Path(p).stem: Path(p) for p in plots})
    return paths
