"""Digest of fixed scripted episodes: a behaviour fingerprint for refactors and speed-ups.

For each (id, seed) it plays one scripted episode on the embedded simulator:
reset; a mix of inspection commands (pods, events, describe, logs, PromQL,
alerts, top, a one-minute sleep); the scenario's ``reference_solution``; a last
look; then ``submit <root cause summary>``. Every observation (all keys; arrays
by dtype, shape and bytes), every reward, and every info dict (JSON, sorted
keys, so ``is_success``, the oracles and the reward components are included)
are folded into one blake2b digest per (id, seed).

A change that must not alter behaviour (an optimisation) keeps every digest:

    python benchmarks/episode_hash.py --json /tmp/before.json      # on the old tree
    python benchmarks/episode_hash.py --compare /tmp/before.json   # on the new tree; exit 1 on a mismatch

``--timing`` also prints process CPU time of the scripted steps and of the
grading submit (grading forks the world and runs it forward for minutes).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from typing import Any

import numpy as np

from sre_env.env import SREEnv

#: one id per layer/kind of fault, plus the four ids of benchmarks/bench_env.py
DEFAULT_IDS = (
    "SREGym/DiskSector-v0",
    "SREGym/MissingEnvVar-v0",
    "SREGym/TargetPortMisconfig-v0",
    "SREGym/KubeletDown-v0",
    "SREGym/LivenessProbeTooAggressive-v0",
    "SREGym/IncorrectImage-v0",
    "SREGym/NetworkPartition-v0",
    "SREGym/KubeProxyBroken-SocialNetwork-v0",
    "SREGym/FileDescriptorExhaustion-v0",
    "SREGym/OperatorMisoperation-WrongVersion-v0",
    "SREGym/Concurrent-DiskSectorAndMissingEnvVar-v0",
    "SREGym/Correlated-KubeletConfig-v0",
    "SREGym/FeatureFlag-PaymentFailure-v0",
    "SREGym/RetryStorm-v0",
)


def inspect_commands(env: SREEnv) -> list[str]:
    """What an on-call engineer looks at first, with names read from the live cluster."""
    assert env.backend is not None and env.scenario is not None
    ns = env.scenario.namespace
    pods = sorted(p["metadata"]["name"] for p in env.backend.api.list("Pod", ns))
    pod = pods[len(pods) // 2] if pods else "missing"
    return [
        f"kubectl get pods -n {ns} -o wide",
        f"kubectl get events -n {ns} --sort-by=.lastTimestamp",
        f"kubectl describe pod {pod} -n {ns}",
        f"kubectl logs {pod} -n {ns} --tail=30",
        "promql 'sum by (namespace, pod) (kube_pod_container_status_restarts_total)'",
        "promql 'sum by (service) (rate(grpc_server_handled_total[1m]))' --range 10m",
        "alerts --all",
        f"kubectl top pods -n {ns}",
        "sleep 60",
        "kubectl get nodes -o wide",
        f"kubectl get pods -n {ns}",
    ]


def _fold(h: hashlib._Hash, value: Any) -> None:
    """Feed a value into the digest: arrays by dtype/shape/bytes, dicts by sorted key, the rest as JSON."""
    if isinstance(value, np.ndarray):
        h.update(f"nd:{value.dtype.str}:{value.shape}:".encode())
        h.update(np.ascontiguousarray(value).tobytes())
    elif isinstance(value, dict):
        h.update(b"{")
        for key in sorted(value, key=str):
            h.update(repr(key).encode())
            _fold(h, value[key])
        h.update(b"}")
    else:
        h.update(json.dumps(value, sort_keys=True, default=repr).encode())
    h.update(b";")


def episode_digest(env_id: str, seed: int, *, max_steps: int = 400) -> tuple[str, dict[str, float]]:
    """Play the scripted episode; return its digest and CPU seconds (steps, grading submit)."""
    env = SREEnv(env_id, max_steps=max_steps)
    h = hashlib.blake2b(digest_size=16)
    obs, info = env.reset(seed=seed)
    _fold(h, obs)
    _fold(h, info)
    assert env.scenario is not None
    commands = inspect_commands(env) + list(env.scenario.reference_solution()) + [f"kubectl get pods -n {env.scenario.namespace}", "alerts"]
    t0 = time.process_time()
    for cmd in commands:
        obs, reward, term, trunc, info = env.step(cmd)
        for part in (obs, reward, term, trunc, info):
            _fold(h, part)
        if term or trunc:
            break
    t1 = time.process_time()
    obs, reward, term, trunc, info = env.step(f"submit {env.scenario.root_cause().summary}")
    t2 = time.process_time()
    for part in (obs, reward, term, trunc, info):
        _fold(h, part)
    _fold(h, {"is_success": info.get("is_success")})
    env.close()
    return h.hexdigest(), {"steps": len(commands), "steps_cpu_s": t1 - t0, "grade_cpu_s": t2 - t1, "success": bool(info.get("is_success"))}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ids", nargs="*", default=list(DEFAULT_IDS), help="env ids (default: %(default)s)")
    ap.add_argument("--seeds", nargs="*", type=int, default=[0, 1])
    ap.add_argument("--steps", type=int, default=400, help="episode step limit (the script is shorter)")
    ap.add_argument("--json", metavar="FILE", help="write {id/seed: digest} here")
    ap.add_argument("--compare", metavar="FILE", help="exit 1 unless every digest equals the one in FILE")
    ap.add_argument("--timing", action="store_true", help="print CPU seconds of the steps and of the grading submit")
    args = ap.parse_args(argv)
    digests: dict[str, str] = {}
    expected: dict[str, str] = {}
    if args.compare:
        with open(args.compare) as fh:
            expected = json.load(fh)
    mismatches = 0
    for env_id in args.ids:
        for seed in args.seeds:
            key = f"{env_id}/{seed}"
            digest, cost = episode_digest(env_id, seed, max_steps=args.steps)
            digests[key] = digest
            verdict = ""
            if args.compare:
                ok = expected.get(key) == digest
                mismatches += not ok
                verdict = " same" if ok else f" DIFFERENT (expected {expected.get(key)})"
            timing = f"  steps={cost['steps']} steps_cpu={cost['steps_cpu_s']:.3f}s grade_cpu={cost['grade_cpu_s']:.3f}s success={cost['success']}" if args.timing else ""
            print(f"{key:58} {digest}{verdict}{timing}", flush=True)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(digests, fh, indent=1, sort_keys=True)
    if args.compare:
        print(f"{len(digests) - mismatches}/{len(digests)} identical")
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
