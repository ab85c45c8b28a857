"""Grammar fuzzing of ``env.step`` at scale: exceptions, out-of-space observations, step times, memory.

    python benchmarks/fuzz.py --commands 200000 --ids 12
    python benchmarks/fuzz.py --commands 2000 --id SREGym/DiskSector-v0

The generator is tests/fuzz_grammar.py (shared with tests/test_fuzz.py). Step times
exclude commands that let simulated time pass (sleep, wait, rollout status), which
and the steps that end an episode (grading runs the durability window) are reported
apart; every other command over 1 s is listed. Memory: RSS at the
start and end of one 2,000-step episode. Nothing is asserted: numbers are printed.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from fuzz_grammar import FuzzStats, pick_ids, rss_bytes, run_fuzz  # noqa: E402


def _pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    return values[min(len(values) - 1, int(q * len(values)))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--commands", type=int, default=2000, help="commands in all (spread evenly over the ids)")
    ap.add_argument("--ids", type=int, default=12, help="how many ids, spread over the layers")
    ap.add_argument("--id", action="append", default=[], help="an id to fuzz (repeatable; overrides --ids)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--episode-steps", type=int, default=2000, help="length of the memory episode (0: skip it)")
    ap.add_argument("--grade-every", type=int, default=10, help="grade one truncated episode in this many (1: every one)")
    ap.add_argument("--progress", action="store_true", help="print a progress line after each id")
    ap.add_argument("--max-seconds", type=float, default=0, help="stop starting commands after this long (0: no limit); the ids share it evenly")
    args = ap.parse_args(argv)
    ids = args.id or pick_ids(args.ids)
    stats = FuzzStats()
    t0 = time.perf_counter()
    per_id = max(1, args.commands // len(ids))
    for k, env_id in enumerate(ids):
        deadline = t0 + args.max_seconds * (k + 1) / len(ids) if args.max_seconds else None
        run_fuzz(env_id, per_id, seed=args.seed + k, stats=stats, deadline=deadline, grade_every=args.grade_every)
        if args.progress:
            el = time.perf_counter() - t0
            print(f"[{el:7.0f}s] {env_id}: {stats.commands} commands, {len(stats.exceptions)} exceptions, {stats.commands / el:.1f}/s", flush=True)
    wall = time.perf_counter() - t0
    times = sorted(t for t, _, _ in stats.times)
    print(f"ids: {len(ids)} ({', '.join(ids)})")
    print(f"commands run: {stats.commands} in {wall:.0f} s ({stats.commands / wall:.1f}/s), episodes: {stats.resets} (one truncated episode in {args.grade_every} graded)")
    print(f"exceptions: {len(stats.exceptions)}")
    for env_id, cmd, tb in stats.exceptions[:20]:
        print(f"  {env_id}: {cmd[:200]!r}\n    {tb.strip().splitlines()[-1]}")
    print(f"out-of-space observations: {len(stats.out_of_space)}")
    for env_id, cmd in stats.out_of_space[:20]:
        print(f"  {env_id}: {cmd}")
    if times:
        print(f"step time (not passing time, {len(times)} steps): median {statistics.median(times) * 1000:.1f} ms, p99 {_pct(times, 0.99) * 1000:.1f} ms, max {times[-1] * 1000:.0f} ms")
    slow = sorted((s for s in stats.times if s[0] > 1.0), reverse=True)
    print(f"commands over 1 s (not passing time): {len(slow)}")
    for dt, env_id, cmd in slow[:40]:
        print(f"  {dt:6.2f} s  {env_id}: {cmd}")
    passing = sorted(t for t, _, _ in stats.passing_times)
    if passing:
        print(f"time-passing commands: {len(passing)}, median {statistics.median(passing) * 1000:.0f} ms, max {passing[-1] * 1000:.0f} ms")
    ending = sorted(stats.ending_times, reverse=True)
    if ending:
        print(f"episode-ending (grading) steps: {len(ending)}, median {statistics.median(t for t, _, _ in ending) * 1000:.0f} ms, max {ending[0][0]:.1f} s ({ending[0][1]}: {ending[0][2]})")
    if args.episode_steps:
        marks: dict[str, int] = {}

        def on_step(i: int, _env: object) -> None:
            if i == 0:
                marks["start"] = rss_bytes()

        ep = run_fuzz(ids[0], args.episode_steps, seed=args.seed, max_steps=args.episode_steps, safe=True, on_step=on_step)
        end = rss_bytes()
        print(f"RSS over a {args.episode_steps}-step episode of {ids[0]} ({ep.resets - 1} episode end(s)): start {marks['start'] / 2**20:.0f} MiB, end {end / 2**20:.0f} MiB, exceptions {len(ep.exceptions)}")
    return 1 if stats.exceptions or stats.out_of_space else 0


if __name__ == "__main__":
    raise SystemExit(main())
