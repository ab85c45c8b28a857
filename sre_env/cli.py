"""The ``sre-env`` command: list scenarios, run an agent, play an incident yourself.

    sre-env list [--suite S] [--layer L] [--format table|json|markdown]
    sre-env run ID [--agent reference|random] [--seed N] [--max-steps N] [--json FILE] [--quiet] [--plain]
    sre-env play ID [--seed N] [--max-steps N] [--plain]
    sre-env eval [--suite S | --ids ID...] --agent A [--seeds 0-4] [--attempts K] [--workers N] [--ray] [--out DIR]
    sre-env report RESULTS [--out DIR]
    sre-env bench [ARGS...]          (ARGS go to benchmarks/bench_env.py unchanged)

Exit status: 0 on success; for ``run`` and ``play``, 0 only when the episode
passed the mitigation oracle (the cluster was actually repaired) and 1 when it
did not, so shell scripts and CI can gate on it; for ``eval``, 0 when every
episode ran (whatever the agent scored) and 1 when some episode crashed; 2 for
usage errors (unknown scenario id or agent, missing benchmark script or results).

This module is the front end only: parsing, printing and exit codes. What the
commands do lives below it — scenario ids in ``sre_env.envs.registry``, agents
and the episode loop in ``sre_env.agents``, evaluation runs and reports in
``sre_env.eval``.

Only the standard library is used here (argparse), so the command starts fast
and adds no dependency; ``rich`` makes reports nicer when it is installed.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Sequence

from sre_env.envs.registry import (
    MAX_EPISODE_STEPS,
    list_scenarios,
    resolve_id,
    scenario_class,
)
from sre_env.errors import SREEnvError

__all__ = ["main", "build_parser"]

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
BENCH_SCRIPT = Path(__file__).resolve().parent.parent / "benchmarks" / "bench_env.py"
_COLUMNS = ("id", "app", "layer", "family", "difficulty", "summary")


# ---------------------------------------------------------------- list
def _scenario_rows(suite: str | None, layer: str | None) -> list[dict[str, str]]:
    return [
        {"id": eid, "app": i.app, "layer": i.layer, "family": i.family, "difficulty": i.difficulty, "summary": i.summary}
        for eid, i in list_scenarios(suite=suite, layer=layer)
    ]


def _table(rows: list[dict[str, str]]) -> str:
    widths = {c: max([len(c)] + [len(r[c]) for r in rows]) for c in _COLUMNS}
    line = lambda cells: "  ".join(cells[c].ljust(widths[c]) for c in _COLUMNS).rstrip()  # noqa: E731
    return "\n".join([line({c: c.upper() for c in _COLUMNS})] + [line(r) for r in rows]) + "\n"


def _markdown(rows: list[dict[str, str]]) -> str:
    esc = lambda s: s.replace("|", "\\|")  # noqa: E731
    out = ["| " + " | ".join(_COLUMNS) + " |", "|" + "---|" * len(_COLUMNS)]
    out += ["| " + " | ".join(esc(r[c]) for c in _COLUMNS) + " |" for r in rows]
    return "\n".join(out) + "\n"


def cmd_list(args: argparse.Namespace) -> int:
    rows = _scenario_rows(args.suite, args.layer)
    if args.format == "json":
        sys.stdout.write(json.dumps(rows, indent=2) + "\n")
    elif args.format == "markdown":
        sys.stdout.write(_markdown(rows))
    elif rows:
        sys.stdout.write(_table(rows))
    if not rows:
        print("no scenarios match these filters", file=sys.stderr)
    return EXIT_OK


# ---------------------------------------------------------------- env helpers
def make_env(eid: str, max_steps: int) -> Any:
    """gym.make with one step budget for both the env (which grades) and the TimeLimit wrapper.

    If the wrapper's limit were lower, it would cut the episode before the env
    grades it and the report would have no verdict.
    """
    import gymnasium as gym

    import sre_env  # noqa: F401  (registers the ids)

    return gym.make(eid, max_steps=max_steps)


def _finish(result: Any, args: argparse.Namespace) -> int:
    from sre_env.eval.episode_report import render, to_json

    if getattr(args, "json", None):
        Path(args.json).write_text(to_json(result) + "\n", encoding="utf-8")
    if not getattr(args, "quiet", False):
        render(result, plain=args.plain)
    return EXIT_OK if result.passed else EXIT_FAILED


# ---------------------------------------------------------------- run
def cmd_run(args: argparse.Namespace) -> int:
    from sre_env.agents.baselines import make_agent
    from sre_env.agents.episode import run_episode

    eid = resolve_id(args.id)
    agent = make_agent(args.agent, seed=args.seed)
    env = make_env(eid, args.max_steps)
    try:
        result = run_episode(env, agent, seed=args.seed)
    finally:
        env.close()
    if args.quiet:
        print(f"{result.env_id} seed={result.seed} agent={args.agent}: {'PASS' if result.passed else 'FAIL'} reward={result.reward:.3f}")
    return _finish(result, args)


# ---------------------------------------------------------------- play
def cmd_play(args: argparse.Namespace) -> int:
    from sre_env.agents.episode import run_episode
    from sre_env.agents.human import HumanAgent

    eid = resolve_id(args.id)
    env = make_env(eid, args.max_steps)
    color = not args.plain and sys.stdout.isatty()
    human = HumanAgent(color=color, max_steps=args.max_steps)
    print(f"{eid} (seed {args.seed}). Type commands; 'help' lists them, 'history' shows yours; 'submit <diagnosis>' ends the episode.\n")
    try:
        result = run_episode(env, human, seed=args.seed, on_step=human.on_step)
    finally:
        human.close()
        env.close()
    print()
    return _finish(result, args)


# ---------------------------------------------------------------- eval / report
def _eval_ids(args: argparse.Namespace) -> tuple[str, ...]:
    if args.ids:
        return tuple(resolve_id(i) for i in args.ids)
    return tuple(eid for eid, _ in list_scenarios(suite=args.suite or "lite", layer=args.layer))


def cmd_eval(args: argparse.Namespace) -> int:
    from sre_env.eval.report import summarize, write_report
    from sre_env.eval.runs import EvalConfig, parse_seeds, run_eval, write_results

    ids = _eval_ids(args)
    if not ids:
        print("error: no scenarios match these filters", file=sys.stderr)
        return EXIT_USAGE
    if args.attempts < 1 or args.workers < 1:
        print("error: --attempts and --workers must be >= 1", file=sys.stderr)
        return EXIT_USAGE
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
            return EXIT_USAGE
    rows = run_eval(config, workers=args.workers, use_ray=args.ray, progress=not args.quiet)
    out = Path(args.out)
    csv_path, json_path = write_results(rows, out, config=config)
    paths = write_report(rows, out, title=f"sre-env evaluation: {args.agent}")
    s = summarize(rows)
    print(f"{s['episodes']} episodes, e2e success {s['success']:.0%}, pass@{s['k']} {s['pass@k']:.2f}, mean reward {s['reward']:.3f}")
    print(f"results: {csv_path}  {json_path}")
    print(f"report:  {paths['markdown']}  {paths['html']}")
    return EXIT_FAILED if s["errors"] else EXIT_OK


def cmd_report(args: argparse.Namespace) -> int:
    from sre_env.eval.report import write_report
    from sre_env.eval.runs import read_results

    src = Path(args.results)
    if not src.exists():
        print(f"error: no results at {src}", file=sys.stderr)
        return EXIT_USAGE
    rows = read_results(src)
    out = Path(args.out) if args.out else (src if src.is_dir() else src.parent)
    paths = write_report(rows, out, title=args.title)
    print(f"report: {paths['markdown']}  {paths['html']}")
    return EXIT_OK


# ---------------------------------------------------------------- serve
def cmd_serve(args: argparse.Namespace) -> int:
    """Develop the incident like an episode's reset, then serve it in real time."""
    from sre_env.env import SREEnv
    from sre_env.errors import MissingExtraError

    try:
        from sre_env.serve.server import serve_forever
    except MissingExtraError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    env = SREEnv(scenario_class(args.id), max_steps=args.max_steps)
    if args.mcp:
        # stdout is the protocol channel: nothing else may be printed on it
        from sre_env.serve.mcp_server import build_mcp_server

        try:
            build_mcp_server(env, seed=args.seed).run("stdio")
        except MissingExtraError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_USAGE
        return 0
    env.reset(seed=args.seed)
    assert env.backend is not None and env.scenario is not None
    print(env.scenario.brief(), flush=True)
    try:
        serve_forever(env.backend, host=args.host, port=args.port, speed=args.speed, kubeconfig=args.kubeconfig, namespace=env.scenario.namespace, prom_port=args.prometheus_port, real_epoch=args.real_epoch, auth=not args.no_auth)
    except MissingExtraError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return 0


# ---------------------------------------------------------------- bench
def cmd_bench(args: argparse.Namespace) -> int:
    if not BENCH_SCRIPT.is_file():
        print(f"error: no benchmark script at {BENCH_SCRIPT} (benchmarks ship with a source checkout of sre-env, not the wheel)", file=sys.stderr)
        return EXIT_USAGE
    return subprocess.call([sys.executable, str(BENCH_SCRIPT), *args.bench_args])


# ---------------------------------------------------------------- parser
def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sre-env",
        description="Gymnasium environments where agents diagnose and repair broken cloud-native systems.",
        epilog="run/play exit 0 when the episode passed mitigation (the cluster was repaired), 1 when not, 2 on usage errors.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("list", help="list the registered scenarios")
    p.add_argument("--suite", help="only scenarios in this suite (e.g. lite, full)")
    p.add_argument("--layer", help="only scenarios whose root cause is in this layer (e.g. application, hardware)")
    p.add_argument("--format", choices=("table", "json", "markdown"), default="table")
    p.set_defaults(func=cmd_list)

    from sre_env.agents.baselines import AGENTS

    p = sub.add_parser("run", help="run one episode with a built-in agent and print its report")
    p.add_argument("id", help="environment id, e.g. SREGym/MissingEnvVar-v0 (or just MissingEnvVar)")
    p.add_argument("--agent", choices=sorted(AGENTS), default="reference", help="reference = the scenario's own fix (the cheat); random = a baseline")
    _common(p)
    p.add_argument("--json", metavar="FILE", help="also write the result as JSON to FILE")
    p.add_argument("--quiet", action="store_true", help="print one summary line instead of the report")
    p.set_defaults(func=cmd_run)

    p = sub.add_parser("play", help="play an incident yourself at a prompt (reads stdin, so it can be piped)")
    p.add_argument("id", help="environment id, e.g. SREGym/DiskSector-v0")
    _common(p)
    p.set_defaults(func=cmd_play)

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

    p = sub.add_parser("serve", help="serve a simulated incident over the Kubernetes API (for the real kubectl and clients)")
    p.add_argument("id", help="environment id, e.g. SREGym/TargetPortMisconfig-v0")
    p.add_argument("--seed", type=int, default=0, help="episode seed")
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default: loopback only)")
    p.add_argument("--port", type=int, default=6443, help="port (0: any free port)")
    p.add_argument("--speed", type=float, default=1.0, help="simulated seconds per real second (0 freezes the clock)")
    p.add_argument("--kubeconfig", default="sre-env.kubeconfig", help="where to write the kubeconfig for kubectl")
    p.add_argument("--prometheus-port", type=int, default=9090, help="port of the Prometheus, Loki and Jaeger query APIs and /metrics")
    p.add_argument("--real-epoch", action="store_true", help="serve the simulator's own timestamps (from 2026-03-02T09:00Z) instead of wall-clock ones")
    p.add_argument("--no-auth", action="store_true", help="serve without the bearer token (anyone who can reach the ports may read and change everything; warns)")
    p.add_argument("--mcp", action="store_true", help="instead of HTTP, serve the episode as an MCP server on stdio (tools: kubectl, shell, promql, logql, traces, alerts, submit)")
    p.add_argument("--max-steps", type=_positive, default=MAX_EPISODE_STEPS, help="step budget of the MCP episode")
    p.set_defaults(func=cmd_serve)

    # listed for --help only: main() hands "bench ARGS..." to the script before parsing
    sub.add_parser("bench", help="run benchmarks/bench_env.py with ARGS (source checkouts only)", add_help=False)
    return parser


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument("--seed", type=int, default=0, help="episode seed (same seed + same commands = same episode)")
    p.add_argument("--max-steps", type=_positive, default=MAX_EPISODE_STEPS, help=f"step budget (default {MAX_EPISODE_STEPS})")
    p.add_argument("--plain", action="store_true", help="plain-text report even when rich is installed")


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be >= 1")
    return value


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``sre-env`` console script; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["bench"]:  # everything after "bench" is the script's, verbatim (argparse would reorder it)
        return cmd_bench(argparse.Namespace(command="bench", bench_args=argv[1:]))
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args))
    except SREEnvError as exc:  # unknown ids and other library-level misuse: a message, not a traceback
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
