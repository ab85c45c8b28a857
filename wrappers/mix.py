"""One environment over several scenarios: each reset draws a scenario and a seed.

Policies that should generalise are trained on a *mix* of incidents, and judged
on seeds they never saw. ``ScenarioMix`` holds one catalog-and-numeric env per
id, all sharing one ``CommandCatalog`` layout (so action ``i`` means the same
thing in every scenario of the mix), and on each reset draws which scenario and
which episode seed from ``seeds`` (the training pool). Evaluation picks both
explicitly: ``reset(options={"scenario": 1, "seed": 1234})``.

    env = ScenarioMix(["SREGym/DiskSector-v0", "SREGym/MissingEnvVar-v0"], seeds=range(100))
    obs, info = env.reset(seed=0)          # info["env_id"], info["episode_seed"]
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

import gymnasium as gym
import numpy as np

from .catalog import CatalogWrapper, catalog_for
from .numeric import NumericObservation

__all__ = ["ScenarioMix", "make_numeric_env"]


def make_numeric_env(env_id: str, catalog: Any = None, *, grade_truncated: bool = True, **env_kwargs: Any) -> NumericObservation:
    """``gym.make(env_id)`` behind a catalog (Discrete actions) and the numeric observation.

    With ``grade_truncated=False`` (``SREEnv``'s option) an episode that runs out of
    steps without a submit ends with reward 0 and no grading (no ``is_success`` in
    its info). Grading forks the cluster and plays minutes of it, which dominates the
    cost of an unsubmitted episode; a trainer loses nothing, since such an episode
    earns nothing anyway.
    """
    import sre_env  # noqa: F401  (registers the ids)

    max_steps = int(env_kwargs.pop("max_steps", 50))
    base = gym.make(env_id, max_steps=max_steps, grade_truncated=grade_truncated, **env_kwargs)
    return NumericObservation(CatalogWrapper(base, catalog))


class ScenarioMix(gym.Env):
    """A mix of scenario ids behind one Discrete catalog and one numeric observation."""

    metadata = {"render_modes": []}

    def __init__(self, env_ids: Sequence[str], *, seeds: Iterable[int] | None = None, max_steps: int = 15, grade_truncated: bool = True, **env_kwargs: Any) -> None:
        from sre_env.envs.registry import scenario_class

        if not env_ids:
            raise ValueError("ScenarioMix needs at least one env id")
        self.env_ids = list(env_ids)
        apps = [scenario_class(eid).app for eid in self.env_ids]
        self.catalog = catalog_for(*apps)
        self.envs = [make_numeric_env(eid, self.catalog, max_steps=max_steps, grade_truncated=grade_truncated, **env_kwargs) for eid in self.env_ids]
        self.observation_space = self.envs[0].observation_space
        self.action_space = self.catalog.action_space
        self.seeds = list(seeds) if seeds is not None else None
        self.current = 0
        self.episode_seed: int | None = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict[str, Any], dict[str, Any]]:
        super().reset(seed=seed)
        options = dict(options or {})
        if "scenario" in options:
            self.current = int(options["scenario"])
        else:
            self.current = int(self.np_random.integers(len(self.envs)))
        if "seed" in options:
            episode_seed = int(options["seed"])
        elif self.seeds is not None:
            episode_seed = int(self.seeds[int(self.np_random.integers(len(self.seeds)))])
        else:
            episode_seed = int(self.np_random.integers(0, 2**31 - 1))
        self.episode_seed = episode_seed
        obs, info = self.envs[self.current].reset(seed=episode_seed)
        return obs, {**info, "env_id": self.env_ids[self.current], "episode_seed": episode_seed}

    def step(self, action: int) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.envs[self.current].step(int(action))
        return obs, float(reward), terminated, truncated, {**info, "env_id": self.env_ids[self.current]}

    def close(self) -> None:
        for env in self.envs:
            env.close()


def success_rate(env: ScenarioMix, policy: Any, seeds: Iterable[int], *, scenarios: Iterable[int] | None = None) -> dict[str, float]:
    """Fraction of episodes ``policy(obs) -> action`` solves, per env id and overall."""
    scenario_list = list(scenarios) if scenarios is not None else list(range(len(env.envs)))
    wins: dict[str, list[bool]] = {env.env_ids[i]: [] for i in scenario_list}
    for i in scenario_list:
        for s in seeds:
            obs, info = env.reset(options={"scenario": i, "seed": int(s)})
            done = False
            while not done:
                obs, _, terminated, truncated, info = env.step(int(policy(obs)))
                done = terminated or truncated
            wins[env.env_ids[i]].append(bool(info.get("is_success", False)))
    out = {k: float(np.mean(v)) if v else 0.0 for k, v in wins.items()}
    every = [x for v in wins.values() for x in v]
    out["all"] = float(np.mean(every)) if every else 0.0
    return out
