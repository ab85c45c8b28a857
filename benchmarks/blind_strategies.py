"""Which ids a blind strategy passes: every strategy on every id, each followed by a vague submit.

A blind strategy (:mod:`sre_env.envs.blind`) repairs without looking at the
cause: undo, scale to zero and back, restart or delete everything, or all of it
at once. For each (id, seed) every strategy is played from the developed
incident, then the episode is submitted with a vague diagnosis; the episode's
``is_success`` is recorded. A pass is acceptable only where the scenario
declares the strategy a repair of its cause (``accepted_blind``); the table
prints both counts.

    python benchmarks/blind_strategies.py                       # every id, seed 0
    python benchmarks/blind_strategies.py --seeds 0 1 2 --jobs 2 --json out.json
    python benchmarks/blind_strategies.py --ids RetryStorm-v0 DBLockContention-v0
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from typing import Any

import gymnasium as gym

import sre_env
from sre_env.envs.blind import BLIND_STRATEGIES, blind_strategies

#: what an agent that never looked at the cause submits (the conformance suite's submit)
VAGUE_SUBMIT = "submit restarted and rolled back what looked broken; it should be fixed now"


def play(env_id: str, seed: int) -> dict[str, Any]:
    """Every strategy on one (id, seed): whether it passed and whether the scenario accepts it."""
    start = time.process_time()
    env = gym.make(env_id, max_steps=500)  # the strategies name every workload
    env.reset(seed=seed)
    core = env.unwrapped
    accepted = dict(core.scenario.accepted_blind)
    strategies = blind_strategies(core.backend, core.scenario.namespace)
    passed: dict[str, bool] = {}
    for name in BLIND_STRATEGIES:
        env.reset(seed=seed)
        ended = False
        for cmd in strategies[name]:
            *_, term, trunc, _ = env.step(cmd)
            if term or trunc:
                ended = True
                break
        if ended:
            passed[name] = False
            continue
        _, _, _, _, info = env.step(VAGUE_SUBMIT)
        passed[name] = bool(info["is_success"])
    env.close()
    return {"env_id": env_id, "seed": seed, "passed": passed, "accepted": sorted(accepted), "cpu_s": round(time.process_time() - start, 1)}


def _play(args: tuple[str, int]) -> dict[str, Any]:
    return play(*args)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--ids", nargs="*", default=list(sre_env.ENV_IDS))
    parser.add_argument("--seeds", nargs="*", type=int, default=[0])
    parser.add_argument("--jobs", type=int, default=1, help="worker processes")
    parser.add_argument("--json", help="write the results to this file")
    args = parser.parse_args(argv)
    ids = [i if "/" in i else f"SREGym/{i}" for i in args.ids]
    work = [(env_id, seed) for env_id in ids for seed in args.seeds]
    start = time.perf_counter()
    if args.jobs > 1:
        with ProcessPoolExecutor(args.jobs) as pool:
            rows = list(pool.map(_play, work))
    else:
        rows = [_play(w) for w in work]
    wall = time.perf_counter() - start
    summary: dict[str, dict[str, Any]] = {}
    for name in BLIND_STRATEGIES:
        passes = [f"{r['env_id']}@{r['seed']}" for r in rows if r["passed"][name]]
        undeclared = [f"{r['env_id']}@{r['seed']}" for r in rows if r["passed"][name] and name not in r["accepted"]]
        accepted_failing = [f"{r['env_id']}@{r['seed']}" for r in rows if name in r["accepted"] and not r["passed"][name]]
        summary[name] = {"passes": passes, "undeclared_passes": undeclared, "accepted_but_failing": accepted_failing}
    print(f"{len(work)} episodes ({len(ids)} ids x seeds {args.seeds}) in {wall:.0f} s wall")
    print(f"{'strategy':<24}{'pass':>6}{'undeclared':>12}{'accepted fail':>15}")
    for name, s in summary.items():
        print(f"{name:<24}{len(s['passes']):>6}{len(s['undeclared_passes']):>12}{len(s['accepted_but_failing']):>15}")
    for name, s in summary.items():
        if s["passes"]:
            print(f"\n{name} passes: {' '.join(s['passes'])}")
        if s["undeclared_passes"]:
            print(f"{name} undeclared: {' '.join(s['undeclared_passes'])}")
        if s["accepted_but_failing"]:
            print(f"{name} accepted but failing: {' '.join(s['accepted_but_failing'])}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"wall_s": round(wall, 1), "summary": summary, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
