"""The ``eval`` and ``report`` subcommands of ``sre-env`` (parsers and handlers).

    sre-env eval --suite lite --agent runbook --attempts 3 --seeds 0-4 --workers 2 --out runs/eval
    sre-env eval --ids SREGym/DiskSector-v0 --agent openai:llama3.1 --base-url http://localhost:11434/v1
    sre-env eval --suite lite --agent hf:./tiny-model --max-steps 20
    sre-env report runs/eval

``eval`` exits 0 when every episode ran (whatever the agent scored) and 1 when
some episode crashed; ``report`` rebuilds report.md/.html and the plots from a
results file or folder.
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Callable

__all__ = ["add_eval_parsers", "run_eval_command", "run_report_command"]


def add_eval_parsers(sub: Any, cmd_eval: Callable[..., int], cmd_report: Callable[..., int]) -> None:
    from sre_env.envs.registry import MAX_EPISODE_STEPS

    p = sub.add_parser("eval", help="evaluate an agent over many scenarios, seeds and attempts; writes results and a report")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--suite", help="every id of a suite (e.g. lite, full)")
    which.add_argument("--ids", nargs="+", metavar="ID", help="these ids (or bare scenario names)")
    p.add_argument("--layer", help="only ids whose root cause is in this layer")
    p.add_argument("--agent", required=True, help="random | reference | runbook | openai:<model> | hf:<path-or-name>")
    p.add_argument("--base-url", help="OpenAI-compatible server for openai:<model> (default http://localhost:8000/v1)")
    p.add_argument("--api-key-env", default="OPENAI_API_KEY", help="environment variable holding the API key (default OPENAI_API_KEY)")
    p.add_argument("--seeds", default="0", help="seeds, e.g. 0-4,10 (default 0)")
    p.add_argument("--attempts", type=int, default=1, help="attempts per (scenario, seed): pass@k and best-of-N use them")
    p.add_argument("--noise", default="none", help="noise levels, comma-separated (e.g. none,low): the report compares them")
    p.add_argument("--task", default="mitigation", choices=("mitigation", "diagnosis", "e2e"))
    p.add_argument("--max-steps", type=int, default=MAX_EPISODE_STEPS)
    p.add_argument("--max-tokens", type=int, default=200_000, help="token budget per episode (LLM agents)")
    p.add_argument("--temperature", type=float, default=0.0, help="LLM sampling temperature (attempts differ only above 0)")
    p.add_argument("--workers", type=int, default=min(4, os.cpu_count() or 1), help="worker processes (1 = in this process)")
    p.add_argument("--ray", action="store_true", help="run episodes as Ray tasks (ray.init() finds the cluster)")
    p.add_argument("--out", default="runs/eval", help="output folder (results.csv/json, report.md/html, plots, transcripts)")
    p.add_argument("--no-transcripts", action="store_true", help="do not save per-episode transcripts")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_eval)

    p = sub.add_parser("report", help="rebuild the evaluation report (Markdown, HTML, plots) from results")
    p.add_argument("results", help="results.json, results.csv, or the folder holding them")
    p.add_argument("--out", help="where to write the report (default: next to the results)")
    p.add_argument("--title", default="sre-env evaluation")
    p.set_defaults(func=cmd_report)


def _ids(args: argparse.Namespace) -> tuple[str, ...]:
    from sre_env.cli import resolve_id
    from sre_env.envs.registry import list_scenarios

    if args.ids:
        return tuple(resolve_id(i) for i in args.ids)
    return tuple(eid for eid, _ in list_scenarios(suite=args.suite or "lite", layer=args.layer))


def run_eval_command(args: argparse.Namespace) -> int:
    from pathlib import Path

    from sre_env.eval.tables import summarize, write_report
    from sre_env.eval.runs import EvalConfig, parse_seeds, run_eval, write_results

    ids = _ids(args)
    if not ids:
        print("error: no scenarios match these filters", file=sys.stderr)
        return 2
    if args.attempts < 1 or args.workers < 1:
        print("error: --attempts and --workers must be >= 1", file=sys.stderr)
        return 2
    config = EvalConfig(
        agent=args.agent,
        env_ids=ids,
        seeds=parse_seeds(args.seeds),
        attempts=args.attempts,
        noise=tuple(n.strip() for n in args.noise.split(",") if n.strip()) or ("none",),
        max_steps=args.max_steps,
        task=args.task,
        base_url=args.base_url,
        api_key_env=args.api_key_env,
        temperature=args.temperature,
        max_tokens=args.max_tokens,
        out_dir=args.out,
        transcripts=not args.no_transcripts,
    )
    if ":" not in args.agent:
        from sre_env.agents.baselines import AGENTS

        if args.agent not in AGENTS:
            print(f"error: unknown agent {args.agent!r}; use {', '.join(sorted(AGENTS))}, openai:<model> or hf:<path>", file=sys.stderr)
            return 2
    rows = run_eval(config, workers=args.workers, use_ray=args.ray, progress=not args.quiet)
    out = Path(args.out)
    csv_path, json_path = write_results(rows, out, config=config)
    paths = write_report(rows, out, title=f"sre-env evaluation: {args.agent}")
    s = summarize(rows)
    print(f"{s['episodes']} episodes, e2e success {s['success']:.0%}, pass@{s['k']} {s['pass@k']:.2f}, mean reward {s['reward']:.3f}")
    print(f"results: {csv_path}  {json_path}")
    print(f"report:  {paths['markdown']}  {paths['html']}")
    return 1 if s["errors"] else 0


def run_report_command(args: argparse.Namespace) -> int:
    from pathlib import Path

    from sre_env.eval.tables import write_report
    from sre_env.eval.runs import read_results

    src = Path(args.results)
    if not src.exists():
        print(f"error: no results at {src}", file=sys.stderr)
        return 2
    rows = read_results(src)
    out = Path(args.out) if args.out else (src if src.is_dir() else src.parent)
    paths = write_report(rows, out, title=args.title)
    print(f"report: {paths['markdown']}  {paths['html']}")
    return 0
