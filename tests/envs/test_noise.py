"""Background noise: scheduled from the seed, self-healing, ignored by grading, revealed at the end."""

from __future__ import annotations

import json

import pytest

import sre_env
from sre_env.apps.hotel_reservation import HOTEL_RESERVATION
from sre_env.envs.base import RootCause, Scenario


class NoFault(Scenario):
    """A healthy cluster: nothing is injected (a control for noise)."""

    family = "NoFault"
    app = HOTEL_RESERVATION
    layer = "application"
    summary = "Nothing is wrong."

    def draw_variant(self, backend, rng):
        return {"target": "none"}

    def inject(self, backend) -> None:
        return None

    def root_cause(self) -> RootCause:
        return RootCause("deployment/frontend", self.namespace, "application", "none", "No fault.")

    def brief(self) -> str:
        return "Routine check: is everything fine?"

    def reference_solution(self) -> list[str]:
        return []


def _play(env, steps: int, command: str = "kubectl get pods -A"):
    infos = []
    for _ in range(steps):
        obs, reward, term, trunc, info = env.step(command)
        infos.append(info)
    return infos


@pytest.mark.parametrize("level", ["low", "high"])
def test_noise_only_episode_is_graded_healthy(level: str) -> None:
    env = sre_env.SREEnv(NoFault, noise=level)
    env.reset(seed=3)
    # long enough for most of the schedule to fire (each sleep is a minute of cluster time)
    _play(env, 12, "sleep 60")
    reward, info = env.finish()
    assert info["noise"], "noise fired during the episode"
    for gate in ("live", "durability", "cleanup"):
        assert info["oracles"][gate]["passed"], (gate, info["oracles"][gate])


def test_noise_is_visible_to_the_agent_and_deterministic() -> None:
    def run(seed: int):
        env = sre_env.SREEnv("MissingEnvVar", noise="high")
        _, reset_info = env.reset(seed=seed)
        assert "noise" not in reset_info
        infos = _play(env, 10, "sleep 60")
        assert all("noise" not in i for i in infos[:-1])
        outputs = [env.step(c)[0]["output"] for c in ("kubectl get configmaps -n hotel-reservation", "kubectl get pods -n batch")]
        _, info = env.finish()
        return info["noise"], outputs

    noise_a, out_a = run(5)
    noise_b, out_b = run(5)
    assert json.dumps(noise_a) == json.dumps(noise_b) and out_a == out_b
    kinds = {n["kind"] for n in noise_a}
    assert len(kinds) >= 3, kinds
    if "decoy_configmap" in kinds:
        decoy = next(n for n in noise_a if n["kind"] == "decoy_configmap")["detail"]
        assert decoy in out_a[0]
    if "failed_batch_job" in kinds:
        assert "Error" in out_a[1]
    noise_c, _ = run(6)
    assert json.dumps(noise_a) != json.dumps(noise_c)


def test_noise_none_schedules_nothing_and_bad_levels_are_refused() -> None:
    env = sre_env.SREEnv("MissingEnvVar")
    env.reset(seed=0)
    assert env.backend.world.clock.timers == []
    _, info = env.finish()
    assert info["noise"] == []
    with pytest.raises(ValueError, match="noise must be one of"):
        sre_env.SREEnv("MissingEnvVar", noise="loud")


def test_noise_does_not_change_the_grade_of_a_correct_repair() -> None:
    env = sre_env.SREEnv("MissingEnvVar", noise="high")
    env.reset(seed=2)
    for cmd in env.scenario.reference_solution():
        env.step(cmd)
    _, reward, term, _, info = env.step("submit " + env.scenario.root_cause().summary)
    assert term and info["is_success"] and reward > 0.9
