"""Speed and memory of the hot paths: reset, step on a realistic command mix, memory per env.

Reported, never asserted (machines are noisy). Every figure is a median over
repeats, next to CartPole-v1 measured in the same process, so the ratio is
comparable across machines.

    python benchmarks/bench_env.py            # all ids, human-readable
    python benchmarks/bench_env.py --json out.json --resets 200 --steps 3000
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
import tracemalloc
from dataclasses import asdict, dataclass

import gymnasium as gym

import sre_env
from sre_env.env import SREEnv

NS = "hotel-reservation"


@dataclass
class Result:
    env_id: str
    reset_cold_ms: float  # first time each variant is seen: the incident develops from the healthy baseline
    reset_ms: float  # median over all resets (repeated variants come from the cache)
    steps_per_s: float
    step_ms: float
    mb_per_env: float


def command_mix(env: SREEnv) -> list[str]:
    """What an SRE agent actually types, with names read from the live cluster."""
    api = env.backend.api
    pods = [p["metadata"]["name"] for p in api.list("Pod", NS)]
    deps = [d["metadata"]["name"] for d in api.list("Deployment", NS)]
    pod, dep = pods[len(pods) // 2], deps[len(deps) // 3]
    return [
        f"kubectl get pods -n {NS}",
        f"kubectl get pods -n {NS} -o wide",
        f"kubectl describe pod {pod} -n {NS}",
        f"kubectl logs {pod} -n {NS} --tail=20",
        f"kubectl get events -n {NS} --sort-by=.lastTimestamp",
        f"kubectl get svc,endpoints -n {NS}",
        f"kubectl top pods -n {NS}",
        f"kubectl get deploy {dep} -n {NS} -o yaml | grep -n image",
        "ssh worker-1 dmesg | tail -20",
        f"kubectl get pods -n {NS} | grep -v Running",
        "kubectl get nodes -o wide",
        f"kubectl rollout history deployment/{dep} -n {NS}",
    ]


def bench_resets(env_id: str, n: int) -> tuple[float, float]:
    env = SREEnv(env_id)
    times, cold = [], []
    seen: set = set()
    for seed in range(n):
        t = time.perf_counter()
        env.reset(seed=seed)
        dt = time.perf_counter() - t
        times.append(dt)
        key = repr(sorted(env.scenario.variant.items()))
        if key not in seen:
            cold.append(dt)
            seen.add(key)
    return statistics.median(cold) * 1e3, statistics.median(times) * 1e3


def bench_steps(env_id: str, steps: int, repeats: int = 5) -> float:
    env = SREEnv(env_id, max_steps=10**9)
    env.reset(seed=0)
    mix = command_mix(env)
    rates = []
    per = steps // repeats
    for r in range(repeats):
        env.reset(seed=r)
        t = time.perf_counter()
        for i in range(per):
            env.step(mix[i % len(mix)])
        rates.append(per / (time.perf_counter() - t))
    return statistics.median(rates)


def bench_memory(env_id: str, n: int = 4) -> float:
    SREEnv(env_id).reset(seed=0)  # caches (baseline, specs) are shared; measure what each env adds
    gc.collect()
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    envs = []
    for i in range(n):
        e = SREEnv(env_id)
        e.reset(seed=1000 + i)
        envs.append(e)
    gc.collect()
    used = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    return used / n / 1e6


def bench_cartpole(resets: int, steps: int) -> tuple[float, float]:
    env = gym.make("CartPole-v1")
    times = []
    for seed in range(resets):
        t = time.perf_counter()
        env.reset(seed=seed)
        times.append(time.perf_counter() - t)
    rates = []
    for r in range(5):
        env.reset(seed=r)
        t = time.perf_counter()
        for _ in range(steps // 5):
            _, _, term, trunc, _ = env.step(env.action_space.sample())
            if term or trunc:
                env.reset()
        rates.append((steps // 5) / (time.perf_counter() - t))
    return statistics.median(times) * 1e3, statistics.median(rates)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ids", nargs="*", default=list(sre_env.ENV_IDS))
    ap.add_argument("--resets", type=int, default=100)
    ap.add_argument("--steps", type=int, default=2000)
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args(argv)
    results = []
    for env_id in args.ids:
        cold, warm = bench_resets(env_id, args.resets)
        rate = bench_steps(env_id, args.steps)
        mem = bench_memory(env_id)
        results.append(Result(env_id, round(cold, 2), round(warm, 2), round(rate, 1), round(1e3 / rate, 3), round(mem, 2)))
    cp_reset, cp_rate = bench_cartpole(args.resets, args.steps * 10)
    print(f"{'env':32} {'reset cold ms':>13} {'reset ms':>9} {'steps/s':>9} {'ms/step':>8} {'MB/env':>7}")
    for r in results:
        print(f"{r.env_id:32} {r.reset_cold_ms:13.2f} {r.reset_ms:9.2f} {r.steps_per_s:9.1f} {r.step_ms:8.3f} {r.mb_per_env:7.2f}")
    print(f"{'CartPole-v1':32} {'':13} {cp_reset:9.4f} {cp_rate:9.0f}")
    for r in results:
        print(f"ratio vs CartPole-v1, {r.env_id}: reset x{r.reset_ms / cp_reset:.0f} slower, steps/s x{cp_rate / r.steps_per_s:.0f} fewer")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"results": [asdict(r) for r in results], "cartpole": {"reset_ms": cp_reset, "steps_per_s": cp_rate}, "python": sys.version}, fh, indent=2)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
