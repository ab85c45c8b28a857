"""RLlib: ids registered with Tune, and a smoke run of examples/rllib_ppo.py (slow; needs ray[rllib])."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "rllib_ppo.py"


def _ray():
    return pytest.importorskip("ray.rllib", reason="needs the rllib extra: pip install 'sre-env[rllib]'")


def test_missing_ray_names_the_extra(monkeypatch) -> None:
    import sys

    from sre_env.errors import MissingExtraError
    from sre_env.rllib import register_envs

    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(MissingExtraError, match=r"sre-env\[rllib\]"):
        register_envs()


@pytest.mark.slow
def test_every_id_is_registered_with_tune() -> None:
    _ray()
    from ray.tune.registry import ENV_CREATOR, _global_registry

    import sre_env
    from sre_env.rllib import MIX_ENV, register_envs

    names = register_envs()
    assert set(sre_env.ENV_IDS) <= set(names) and MIX_ENV in names
    for env_id in sre_env.ENV_IDS:
        assert _global_registry.contains(ENV_CREATOR, env_id + "/numeric")
    env = _global_registry.get(ENV_CREATOR, MIX_ENV)({"env_ids": ["SREGym/MissingEnvVar-v0"], "seeds": [0], "max_steps": 5})
    obs, info = env.reset(seed=0)
    assert set(obs) == {"observations", "action_mask"} and info["episode_seed"] == 0


@pytest.mark.slow
def test_rllib_ppo_example_smoke(tmp_path, monkeypatch) -> None:
    """Two PPO iterations with action masking on the three-scenario mix; writes results.json."""
    _ray()
    spec = importlib.util.spec_from_file_location("rllib_ppo_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    assert spec.loader is not None
    monkeypatch.setitem(__import__("sys").modules, spec.name, module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    args = module.Args(iterations=2, batch=200, eval_seeds=1, curve_seeds=1, curve_every=1, out=str(tmp_path))
    report = module.main(args)
    data = json.loads((tmp_path / "results.json").read_text())
    assert len(data["curve"]) == 2 and data["curve"][-1]["env_steps"] >= 200
    for phase in ("random", "before", "after", "after_sampled"):
        assert set(report[phase]) == {"train", "heldout"}
        assert 0.0 <= report[phase]["train"]["all"] <= 1.0
    # the saved policy reloads and plays exactly the episodes the final evaluation played
    from sre_env.rllib import load_module, module_policy
    from sre_env.wrappers.mix import ScenarioMix, success_rate

    evaluator = ScenarioMix(args.env_ids, max_steps=args.max_steps, reward_spec=module.training_reward_spec(args), grade_truncated=False)
    reloaded = module_policy(load_module(tmp_path / "policy.pt", evaluator))
    assert success_rate(evaluator, reloaded, range(args.eval_seeds)) == report["after"]["train"]


@pytest.mark.slow
def test_slot_module_verb_prior_gives_every_valid_verb_equal_mass() -> None:
    """With zeroed weights the policy is the prior alone: each verb gets 1/verbs, split evenly over its targets."""
    _ray()
    import collections

    import numpy as np
    import torch

    from sre_env.rllib import slot_ppo_module_spec
    from sre_env.wrappers.mix import ScenarioMix

    mix = ScenarioMix(["SREGym/DiskSector-v0", "SREGym/MissingEnvVar-v0"], max_steps=5)
    obs, _ = mix.reset(options={"scenario": 0, "seed": 0})
    mask = np.asarray(obs["action_mask"])
    batch = {"obs": {k: torch.as_tensor(np.asarray(v)[None]) for k, v in obs.items()}}

    def probabilities(verb_prior: bool) -> np.ndarray:
        spec = slot_ppo_module_spec(mix.catalog, verb_prior=verb_prior)
        spec.observation_space, spec.action_space = mix.observation_space, mix.action_space
        module = spec.build()
        with torch.no_grad():
            for p in module.parameters():
                p.zero_()
            logits = module.forward_inference(batch)["action_dist_inputs"][0].numpy().astype(np.float64)
        p = np.exp(logits - logits.max())
        return p / p.sum()

    verbs = [a.verb for a in mix.catalog.layout]
    valid_verbs = collections.Counter(verbs[i] for i in np.flatnonzero(mask))
    with_prior, flat = probabilities(True), probabilities(False)
    assert np.all(with_prior[mask == 0] < 1e-12) and np.all(flat[mask == 0] < 1e-12)
    mass = collections.defaultdict(float)
    for i, verb in enumerate(verbs):
        mass[verb] += with_prior[i]
    assert all(mass[verb] == pytest.approx(1 / len(valid_verbs)) for verb in valid_verbs)
    assert np.allclose(flat[mask == 1], 1 / mask.sum())  # without the prior: uniform over valid actions
    evacuate = [i for i in np.flatnonzero(mask) if verbs[i] == "evacuate_node"]
    assert evacuate and with_prior[evacuate].sum() > 3 * flat[evacuate].sum()  # the rare verb is tried far more often
