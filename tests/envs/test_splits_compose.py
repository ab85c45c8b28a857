"""Train/held-out splits per scenario, and composing scenarios from existing faults."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import sre_env
from sre_env.envs.compose import compose
from sre_env.envs.disk_sector import DiskSector
from sre_env.envs.missing_env_var import MissingEnvVar
from sre_env.envs.registry import NAMES, scenario_class
from sre_env.envs.target_port import TargetPortMisconfig
from sre_env.sim.backend import SimBackend
from sre_env.sim.episodes import reference_world


def _keys(cls, split: str, n: int = 24) -> set[str]:
    backend = SimBackend(reference_world(cls.app))
    out = set()
    for seed in range(n):
        sc = cls(np.random.default_rng(seed), split=split)
        out.add(sc.variant_split_key(sc.choose_variant(backend)))
    return out


@pytest.mark.parametrize("name", sorted(NAMES))
def test_train_and_test_splits_are_disjoint_and_both_used(name: str) -> None:
    cls = scenario_class(name)
    held = cls.heldout_keys(SimBackend(reference_world(cls.app)))
    if not held:
        pytest.skip(f"{name} has a single target")
    train, test = _keys(cls, "train"), _keys(cls, "test")
    assert train and test and not (train & test)
    assert all(cls.in_heldout(k, held) for k in test) and not any(cls.in_heldout(k, held) for k in train)


def test_split_reaches_the_env_and_bad_splits_are_refused() -> None:
    env = sre_env.SREEnv("MissingEnvVar", split="test")
    env.reset(seed=1)
    held = MissingEnvVar.heldout_keys(env.backend)
    assert MissingEnvVar.in_heldout(env.scenario.variant["service"], held)
    _, info = env.finish()
    assert info["split"] == "test"
    with pytest.raises(ValueError, match="split must be one of"):
        sre_env.SREEnv("MissingEnvVar", split="validation")


def test_compose_builds_a_scenario_that_checks_and_solves() -> None:
    combo = compose("PortAndDisk", TargetPortMisconfig, DiskSector)
    env = sre_env.SREEnv(combo)
    check_env(env, skip_render_check=True)
    env.reset(seed=4)
    sc = env.scenario
    assert len(sc.variant["parts"]) == 2
    for cmd in sc.reference_solution():
        env.step(cmd)
    _, reward, term, _, info = env.step("submit " + sc.root_cause().summary)
    assert term and info["is_success"], info["oracles"]
    # fixing only one of the two faults is not a repair
    env2 = sre_env.SREEnv(combo)
    env2.reset(seed=4)
    for cmd in env2.scenario.wrong_fixes()["only_major_fixed"]:
        env2.step(cmd)
    _, reward, *_ = env2.step("submit x")
    assert reward == 0.0


def test_compose_refuses_mixed_apps_and_single_parts() -> None:
    with pytest.raises(ValueError, match="at least one minor"):
        compose("Alone", DiskSector)
    other = MissingEnvVar.for_app(DiskSector.app.__class__(name="other-app", namespace="other", components=(), requests=()))
    with pytest.raises(ValueError, match="share one app"):
        compose("Mixed", DiskSector, other)


def test_composed_ids_are_registered() -> None:
    ids = [e for e in sre_env.ENV_IDS if e.startswith("SREGym/Concurrent-")]
    assert len(ids) >= 2
    assert gym.spec(ids[0]).kwargs["scenario"].startswith("Concurrent-")
