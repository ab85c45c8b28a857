"""Evaluation runs: many episodes of one agent, in parallel, into a results table.

    sre-env eval --suite lite --agent runbook --attempts 3 --seeds 0-4 --out runs/eval
    sre-env eval --ids SREGym/MissingEnvVar-v0 --agent openai:qwen2.5 --base-url http://localhost:8000/v1

Every (scenario id, seed, noise level, attempt) is one *job*. Jobs run in worker
processes (``workers``; 1 = in this process) or, with ``use_ray``, as Ray tasks
on whatever cluster ``ray.init()`` finds. Each job builds its own env and agent,
so nothing is shared between episodes. A job that crashes becomes a row with
``error`` set rather than stopping the run.

A row holds the grade split into its parts (diagnosis, immediate, live —
called *mitigation* in the report —, durability, cleanup, end-to-end success),
the risk flags, steps, tokens, the simulated seconds until the cluster was
healthy again, and the scenario's tags (app, layer, family, difficulty). The
rows go to ``results.csv`` and ``results.json``; ``sre_env.eval.report`` turns
them into Markdown, HTML and PNG plots.
"""

from __future__ import annotations

import csv
import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

__all__ = ["EvalConfig", "Job", "jobs_for", "run_job", "run_eval", "write_results", "read_results", "make_eval_agent", "parse_seeds", "ROW_FIELDS"]

#: columns of results.csv, in order
ROW_FIELDS = (
    "env_id", "family", "app", "layer", "difficulty", "noise", "seed", "attempt", "agent",
    "success", "reward", "diagnosis", "diagnosis_score", "immediate", "mitigation", "durability", "cleanup",
    "risk_flags", "catastrophic", "submitted", "steps", "prompt_tokens", "completion_tokens", "sim_seconds",
    "time_to_mitigate_s", "wall_s", "error",
)


@dataclass(frozen=True)
class EvalConfig:
    """What to run: the agent spec, the ids, seeds, attempts, noise levels, budgets and where to write."""

    agent: str
    env_ids: tuple[str, ...]
    seeds: tuple[int, ...] = (0,)
    attempts: int = 1
    noise: tuple[str, ...] = ("none",)
    max_steps: int = 50
    task: str = "mitigation"
    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float = 0.0
    max_tokens: int = 200_000
    out_dir: str | None = None
    transcripts: bool = True


@dataclass(frozen=True)
class Job:
    env_id: str
    seed: int
    attempt: int
    noise: str
    config: EvalConfig = field(repr=False)

    @property
    def slug(self) -> str:
        noise = "" if self.noise == "none" else f"-noise{self.noise}"
        return f"{self.env_id.replace('/', '_')}-seed{self.seed}{noise}-a{self.attempt}"


def parse_seeds(text: str) -> tuple[int, ...]:
    """``"0-4,10,12"`` -> (0, 1, 2, 3, 4, 10, 12)."""
    out: list[int] = []
    for part in str(text).split(","):
        part = part.strip()
        if not part:
            continue
        if "-" in part[1:]:
            lo, hi = part.split("-", 1) if not part.startswith("-") else ("-" + part[1:].split("-", 1)[0], part[1:].split("-", 1)[1])
            out.extend(range(int(lo), int(hi) + 1))
        else:
            out.append(int(part))
    return tuple(dict.fromkeys(out))


def jobs_for(config: EvalConfig) -> list[Job]:
    return [Job(e, s, a, n, config) for e in config.env_ids for n in config.noise for s in config.seeds for a in range(config.attempts)]


def make_eval_agent(spec: str, *, seed: int, attempt: int, config: EvalConfig) -> Any:
    """A baseline by name, or an LLM agent for ``openai:<model>`` / ``hf:<path>``."""
    if ":" in spec:
        from sre_env.agents.llm_agent import LLMAgent
        from sre_env.agents.llm_client import make_chat_model

        api_key = os.environ.get(config.api_key_env) if config.api_key_env else None
        model = make_chat_model(spec, base_url=config.base_url, api_key=api_key)
        return LLMAgent(model, max_steps=config.max_steps, max_tokens=config.max_tokens, temperature=config.temperature)
    from sre_env.agents.baselines import make_agent

    # attempts of a stochastic agent differ; of a deterministic one they repeat
    return make_agent(spec, seed=seed * 1000 + attempt)


def _make_env(job: Job) -> Any:
    import gymnasium as gym

    import sre_env  # noqa: F401

    kwargs: dict[str, Any] = {"max_steps": job.config.max_steps, "task": job.config.task}
    if job.noise != "none":
        kwargs["noise"] = job.noise
    return gym.make(job.env_id, **kwargs)


def _time_to_mitigate(history: list[dict[str, Any]], t0: float, success: bool) -> float | None:
    """Simulated seconds from hand-over to the last cluster-changing command of a successful episode."""
    if not success:
        return None
    changed = [h["time"] for h in history if h.get("mutating")]
    return round(float(changed[-1] - t0), 1) if changed else 0.0


def run_job(job: Job) -> dict[str, Any]:
    """Play one episode; always returns a row (``error`` set when something broke)."""
    from sre_env.agents.episode import run_episode
    from sre_env.envs.registry import scenario_class

    started = time.perf_counter()
    cls = scenario_class(job.env_id)
    info = cls.info(job.env_id.removeprefix("SREGym/").rsplit("-v", 1)[0])
    row: dict[str, Any] = {
        "env_id": job.env_id, "family": info.family, "app": info.app, "layer": info.layer, "difficulty": info.difficulty,
        "noise": job.noise, "seed": job.seed, "attempt": job.attempt, "agent": job.config.agent,
    }
    try:
        agent = make_eval_agent(job.config.agent, seed=job.seed, attempt=job.attempt, config=job.config)
        env = _make_env(job)
        try:
            result = run_episode(env, agent, seed=job.seed)
            inner = env.unwrapped
            history = inner.history
            t0 = inner._t0
            final = dict(getattr(inner, "_final_info", {}) or {})
        finally:
            env.close()
    except Exception as exc:  # noqa: BLE001 - one broken episode must not sink the run
        row.update({k: None for k in ROW_FIELDS if k not in row})
        row.update(success=False, reward=0.0, error=f"{type(exc).__name__}: {exc}", wall_s=round(time.perf_counter() - started, 3))
        return row
    oracles = result.oracles
    passed = lambda name: (bool(oracles[name].get("passed")) if name in oracles else None)  # noqa: E731
    usage = getattr(agent, "usage", None)
    usage_d = usage.as_dict() if hasattr(usage, "as_dict") else {}
    row.update(
        success=bool(result.is_success),
        reward=float(result.reward),
        diagnosis=passed("diagnosis"),
        diagnosis_score=float(oracles["diagnosis"].get("score", 0.0)) if "diagnosis" in oracles else None,
        immediate=passed("immediate"),
        mitigation=passed("live"),
        durability=passed("durability"),
        cleanup=passed("cleanup"),
        risk_flags=sum(1 for h in history if h.get("risk")),
        catastrophic=bool(final.get("catastrophic", False)),
        submitted=bool(result.terminated),
        steps=len(result.steps),
        prompt_tokens=usage_d.get("prompt_tokens", 0),
        completion_tokens=usage_d.get("completion_tokens", 0),
        sim_seconds=round(result.sim_seconds, 1),
        time_to_mitigate_s=_time_to_mitigate(history, t0, bool(result.is_success)),
        wall_s=round(time.perf_counter() - started, 3),
        error=None,
    )
    if job.config.out_dir and job.config.transcripts:
        _save_transcript(job, result, agent)
    return row


def _save_transcript(job: Job, result: Any, agent: Any) -> None:
    """The episode as JSON (the report's facts) and as an ATIF trajectory, plus the chat if there was one."""
    from sre_env.eval.episode_report import to_dict
    from sre_env.wrappers.recording import atif_trajectory

    folder = Path(job.config.out_dir) / "transcripts"
    folder.mkdir(parents=True, exist_ok=True)
    data = to_dict(result)
    messages = getattr(agent, "messages", None)
    if messages:
        data["messages"] = messages
        data["usage"] = agent.usage.as_dict()
    (folder / f"{job.slug}.json").write_text(json.dumps(data, indent=1, default=str) + "\n", encoding="utf-8")
    turns = getattr(agent, "turns", None) or [{"command": s.command} for s in result.steps]
    turns = [dict(t, output=s.output, exit_code=s.exit_code) for t, s in zip(turns, result.steps)]
    model = getattr(getattr(agent, "model", None), "name", None)
    final = {"is_success": result.is_success, "reward": result.reward, "reward_components": result.reward_components}
    traj = atif_trajectory(session_id=job.slug, agent=job.config.agent, model=model, brief=result.brief, turns=turns, final=final, system_prompt=(messages[0]["content"] if messages else None))
    (folder / f"{job.slug}.atif.json").write_text(json.dumps(traj, indent=1) + "\n", encoding="utf-8")


def run_eval(config: EvalConfig, *, workers: int = 1, use_ray: bool = False, progress: bool = True, on_row: Callable[[dict[str, Any]], None] | None = None) -> list[dict[str, Any]]:
    """Run every job of ``config``; rows come back in job order whatever order they finished in."""
    jobs = jobs_for(config)
    rows: list[dict[str, Any] | None] = [None] * len(jobs)
    bar = _Progress(len(jobs), config.agent, enabled=progress)

    def done(i: int, row: dict[str, Any]) -> None:
        rows[i] = row
        bar.advance(row)
        if on_row is not None:
            on_row(row)

    try:
        if use_ray:
            _run_ray(jobs, done)
        elif workers <= 1:
            for i, job in enumerate(jobs):
                done(i, run_job(job))
        else:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor, as_completed

            ctx = multiprocessing.get_context("spawn")  # no forked simulator state or threads
            with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as pool:
                futures = {pool.submit(run_job, job): i for i, job in enumerate(jobs)}
                for fut in as_completed(futures):
                    done(futures[fut], fut.result())
    finally:
        bar.close()
    return [r for r in rows if r is not None]


def _run_ray(jobs: Sequence[Job], done: Callable[[int, dict[str, Any]], None]) -> None:
    try:
        import ray
    except ImportError:
        from sre_env.errors import MissingExtraError

        raise MissingExtraError("ray", "rllib") from None
    if not ray.is_initialized():
        ray.init(include_dashboard=False, configure_logging=False, log_to_driver=False)
    remote = ray.remote(run_job)
    pending = {remote.remote(job): i for i, job in enumerate(jobs)}
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1)
        for ref in ready:
            done(pending.pop(ref), ray.get(ref))


class _Progress:
    """A rich progress bar on stderr (plain counter lines when rich or a terminal is missing)."""

    def __init__(self, total: int, label: str, *, enabled: bool) -> None:
        self.total, self.count, self.passed = total, 0, 0
        self._bar = None
        self._label = label
        self.enabled = enabled
        if not enabled:
            return
        try:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
            )
        except ImportError:
            return
        import sys

        from rich.console import Console

        self._bar = Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[passed]} passed"), TimeElapsedColumn(), console=Console(file=sys.stderr))
        self._task = self._bar.add_task(f"eval {label}", total=total, passed=0)
        self._bar.start()

    def advance(self, row: dict[str, Any]) -> None:
        self.count += 1
        self.passed += 1 if row.get("success") else 0
        if self._bar is not None:
            self._bar.update(self._task, advance=1, passed=self.passed)
        elif self.enabled:
            import sys

            print(f"[{self.count}/{self.total}] {row['env_id']} seed={row['seed']} attempt={row['attempt']}: {'PASS' if row.get('success') else 'FAIL'}", file=sys.stderr)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()


def write_results(rows: Iterable[dict[str, Any]], out_dir: str | Path, *, config: EvalConfig | None = None) -> tuple[Path, Path]:
    """``results.csv`` and ``results.json`` (the JSON also records the run's configuration)."""
    from sre_env.wrappers.recording import json_safe

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    rows = list(rows)
    csv_path, json_path = out / "results.csv", out / "results.json"
    with csv_path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=list(ROW_FIELDS), extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: ("" if row.get(k) is None else row.get(k)) for k in ROW_FIELDS})
    meta = {"config": {k: (list(v) if isinstance(v, tuple) else v) for k, v in asdict(config).items()} if config else None}
    json_path.write_text(json.dumps(json_safe({**meta, "rows": rows}), indent=1, allow_nan=False) + "\n", encoding="utf-8")
    return csv_path, json_path


def read_results(path: str | Path) -> list[dict[str, Any]]:
    """Rows from a ``results.json``/``results.csv`` or the folder that holds them."""
    p = Path(path)
    if p.is_dir():
        p = p / "results.json" if (p / "results.json").exists() else p / "results.csv"
    if p.suffix == ".json":
        data = json.loads(p.read_text(encoding="utf-8"))
        return list(data["rows"] if isinstance(data, dict) else data)
    with p.open(encoding="utf-8") as f:
        return [_typed(r) for r in csv.DictReader(f)]


def _typed(row: dict[str, str]) -> dict[str, Any]:
    """CSV strings back to bools and numbers."""
    out: dict[str, Any] = {}
    for k, v in row.items():
        if v == "":
            out[k] = None
        elif v in ("True", "False"):
            out[k] = v == "True"
        else:
            try:
                out[k] = int(v)
            except ValueError:
                try:
                    out[k] = float(v)
                except ValueError:
                    out[k] = v
    return out
