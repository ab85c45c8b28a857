"""Train PPO (RLlib, new API stack, action masking) on a mix of SRE incidents.

The policy sees the numeric observation and picks from the command catalog
(``sre_env.wrappers``): inspect and repair verbs over the live cluster's
workloads, services and nodes. It is trained on a pool of seeds per scenario
and judged, before and after, on those seeds and on seeds it never saw.

    pip install 'sre-env[rllib]'
    python examples/rllib_ppo.py                      # 12-20 CPU-minutes on a 2-core machine
    python examples/rllib_ppo.py --iterations 2 --eval-seeds 2   # smoke run

Writes ``<out>/results.json`` (success rates, the learning curve) and, with
matplotlib installed, ``<out>/curve.png``.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np


@dataclass
class Args:
    env_ids: list[str] = field(default_factory=lambda: ["SREGym/DiskSector-v0", "SREGym/MissingEnvVar-v0", "SREGym/TargetPortMisconfig-v0"])
    train_seeds: int = 50  # seeds 0..N-1 of every scenario form the training pool
    heldout_start: int = 100_000  # held-out seeds: heldout_start.. (never drawn in training)
    eval_seeds: int = 10  # seeds per scenario for each before/after evaluation
    curve_seeds: int = 10  # seeds per scenario for the curve's periodic checks
    curve_every: int = 5  # iterations between curve checks
    iterations: int = 200
    time_budget_s: float = 3000.0  # CPU seconds of training (sampling + learning), evaluation excluded
    target: float = 0.9  # stop early once the curve's training-seed success reaches this
    max_steps: int = 15
    env_runners: int = 0  # 0: sample in this process, so its CPU time is the whole cost
    batch: int = 800
    minibatch: int = 128
    epochs: int = 8
    lr: float = 1e-3
    entropy: float = 0.03
    catastrophe: float = 0.3  # final reward of an episode that destroyed data: minus this (RewardSpec.catastrophe)
    module: str = "slot"  # slot: weights shared across target slots; mlp: RLlib's masked MLP
    verb_prior: bool = True  # slot module: start from a verb-uniform policy (see slot_ppo_module_spec)
    seed: int = 0
    out: str = "runs/rllib_ppo"


def parse_args() -> Args:
    defaults = Args()
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    for name, value in asdict(defaults).items():
        if isinstance(value, list):
            p.add_argument("--" + name.replace("_", "-"), nargs="+", default=value)
        elif isinstance(value, bool):
            p.add_argument("--" + name.replace("_", "-"), action=argparse.BooleanOptionalAction, default=value)
        else:
            p.add_argument("--" + name.replace("_", "-"), type=type(value), default=value)
    return Args(**vars(p.parse_args()))


def random_policy(seed: int):
    rng = np.random.default_rng(seed)
    return lambda obs: int(rng.choice(np.flatnonzero(obs["action_mask"])))


def training_reward_spec(args: Args):
    """The reward PPO trains on and is judged by (a reloaded policy is replayed with the same one)."""
    from sre_env.rewards.spec import RewardSpec

    # a small step cost and potential-based shaping from the client success ratio (optimal policy unchanged);
    # destroying data (say, evacuating a healthy node's volumes) must cost more than trying and failing;
    # lazy gates: a failed live gate or a catastrophe decides the reward, so the other gates are skipped
    return RewardSpec(step_cost=0.01, shaping=1.0, catastrophe=args.catastrophe, lazy_gates=True)


def main(args: Args) -> dict:
    import ray
    from ray.rllib.algorithms.ppo import PPOConfig

    from sre_env.rllib import (
        MIX_ENV,
        masked_ppo_module_spec,
        module_policy,
        register_envs,
        slot_ppo_module_spec,
    )
    from sre_env.wrappers.mix import ScenarioMix, success_rate

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    reward_spec = training_reward_spec(args)
    # training episodes that hit the step limit unsubmitted end ungraded (reward 0): grading is the costly part
    env_config = {"env_ids": args.env_ids, "seeds": list(range(args.train_seeds)), "max_steps": args.max_steps, "reward_spec": reward_spec, "grade_truncated": False}
    train = list(range(args.eval_seeds))  # a subset of the training pool
    heldout = list(range(args.heldout_start, args.heldout_start + args.eval_seeds))
    # success = the policy submitted within the step limit and every gate passed (unsubmitted episodes fail)
    evaluator = ScenarioMix(args.env_ids, max_steps=args.max_steps, reward_spec=reward_spec, grade_truncated=False)

    import torch

    torch.set_num_threads(1)  # small MLP: threads only contend on a 2-core machine
    ray.init(num_cpus=max(2, args.env_runners + 1), include_dashboard=False, log_to_driver=False, configure_logging=False)
    register_envs()
    config = (
        PPOConfig()
        .environment(MIX_ENV, env_config=env_config)
        .env_runners(num_env_runners=args.env_runners, num_envs_per_env_runner=1)
        .training(train_batch_size_per_learner=args.batch, minibatch_size=min(args.minibatch, args.batch), num_epochs=args.epochs, lr=args.lr, gamma=0.97, lambda_=0.95, entropy_coeff=args.entropy, vf_loss_coeff=0.5)
        .rl_module(rl_module_spec=slot_ppo_module_spec(evaluator.catalog, verb_prior=args.verb_prior) if args.module == "slot" else masked_ppo_module_spec())
        .debugging(seed=args.seed)
    )
    algo = config.build_algo()
    report: dict = {"args": asdict(args), "curve": []}
    t0 = time.time()
    report["random"] = {"train": success_rate(evaluator, random_policy(args.seed), train), "heldout": success_rate(evaluator, random_policy(args.seed + 1), heldout)}
    before = module_policy(algo.get_module())
    report["before"] = {"train": success_rate(evaluator, before, train), "heldout": success_rate(evaluator, before, heldout)}
    print(f"before: random {report['random']['train']['all']:.2f}/{report['random']['heldout']['all']:.2f}  untrained {report['before']['train']['all']:.2f}/{report['before']['heldout']['all']:.2f} (train/held-out)", flush=True)
    train_time = train_cpu = 0.0
    env_steps = 0
    for it in range(1, args.iterations + 1):
        t, c = time.time(), time.process_time()
        try:
            result = algo.train()
        except KeyboardInterrupt:  # Ctrl-C: stop training, still evaluate and write the results
            print("interrupted: evaluating the policy trained so far", flush=True)
            break
        train_time += time.time() - t
        train_cpu += time.process_time() - c
        runners = result.get("env_runners", {})
        env_steps = int(result.get("num_env_steps_sampled_lifetime", runners.get("num_env_steps_sampled_lifetime", env_steps)))
        ret = float(runners.get("episode_return_mean", float("nan")))
        episodes = int(runners.get("num_episodes_lifetime", 0))
        point = {"iteration": it, "train_cpu_s": round(train_cpu, 1), "train_wall_s": round(train_time, 1), "env_steps": env_steps, "episodes": episodes, "episode_return_mean": ret}
        if it % args.curve_every == 0 or it == args.iterations:
            check = success_rate(evaluator, module_policy(algo.get_module()), range(args.curve_seeds))
            point["train_success"] = check.pop("all")
            point["train_success_by_id"] = check
            torch.save(algo.get_module().state_dict(), out / "policy.pt")  # the latest checked policy survives an interrupted run
        report["curve"].append(point)
        print(json.dumps(point), flush=True)
        limit = train_cpu if args.env_runners == 0 else train_time
        if point.get("train_success", 0.0) >= args.target or limit > args.time_budget_s:
            break
    module = algo.get_module()
    torch.save(module.state_dict(), out / "policy.pt")  # reload: sre_env.rllib.load_module(path, evaluator)
    after = module_policy(module)
    report["after"] = {"train": success_rate(evaluator, after, train), "heldout": success_rate(evaluator, after, heldout)}
    # the stochastic policy PPO trains, sampled as during training
    report["after_sampled"] = {"train": success_rate(evaluator, module_policy(module, args.seed), train), "heldout": success_rate(evaluator, module_policy(module, args.seed + 1), heldout)}
    report["wall_s"] = round(time.time() - t0, 1)
    report["train_wall_s"] = round(train_time, 1)
    report["train_cpu_s"] = round(train_cpu, 1)
    print(f"after:  trained {report['after']['train']['all']:.2f} on training seeds, {report['after']['heldout']['all']:.2f} on held-out seeds (greedy); sampled {report['after_sampled']['train']['all']:.2f}/{report['after_sampled']['heldout']['all']:.2f}", flush=True)
    (out / "results.json").write_text(json.dumps(report, indent=2) + "\n")
    plot(report, out / "curve.png")
    algo.stop()
    ray.shutdown()
    return report


def plot(report: dict, path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not installed: no curve.png")
        return
    # the untrained policy at 0 CPU-minutes, then every curve check
    pts = [{"train_cpu_s": 0.0, "train_success": report["before"]["train"]["all"], "train_success_by_id": {k: v for k, v in report["before"]["train"].items() if k != "all"}}]
    pts += [p for p in report["curve"] if "train_success" in p]
    minutes = [p["train_cpu_s"] / 60 for p in pts]
    fig, ax = plt.subplots(figsize=(8, 3.5))
    ax.plot(minutes, [p["train_success"] for p in pts], marker="o", label="greedy policy, training seeds")
    for env_id in report["args"]["env_ids"]:
        ys = [p.get("train_success_by_id", {}).get(env_id, float("nan")) for p in pts]
        ax.plot(minutes, ys, linewidth=0.8, alpha=0.6, label="  " + env_id.split("/")[1].removesuffix("-v0"))
    ax.axhline(report["random"]["heldout"]["all"], color="grey", linestyle="--", label="random (masked), held-out seeds")
    ax.axhline(report["after"]["heldout"]["all"], color="green", linestyle=":", label="final policy, held-out seeds")
    ax.set_xlabel("training CPU time (min)")
    ax.set_ylabel("success rate")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title("PPO on " + ", ".join(e.split("/")[1].removesuffix("-v0") for e in report["args"]["env_ids"]))
    ax.legend(loc="center left", bbox_to_anchor=(1.01, 0.5), fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


if __name__ == "__main__":
    main(parse_args())
