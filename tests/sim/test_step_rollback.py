"""A step whose tick raises still answers, and the cluster goes back to before the command.

Admission keeps objects a controller cannot handle out of the store, so a tick
should never raise; this forces one (a controller that fails while a given pod
exists) to check the safety net of ``SimEpisodes.run_command``.
"""

from __future__ import annotations

import pytest

import sre_env
import sre_env.sim.engine as engine

NS = "default"


@pytest.fixture()
def failing_scheduler(monkeypatch: pytest.MonkeyPatch):
    real = engine.schedule_pending

    def schedule_pending(world, *args, **kwargs) -> None:
        if world.store.find("Pod", "trigger", NS) is not None:
            raise KeyError("status")
        real(world, *args, **kwargs)

    monkeypatch.setattr(engine, "schedule_pending", schedule_pending)


def test_a_failing_tick_rolls_the_command_back_and_the_episode_goes_on(failing_scheduler) -> None:
    env = sre_env.SREEnv("MissingEnvVar")
    env.reset(seed=0)
    env.step("kubectl get pods")
    before_time = env.backend.now
    pods_before = sorted(p["metadata"]["name"] for p in env.backend.api.list("Pod", NS))
    obs, reward, terminated, truncated, info = env.step("kubectl run trigger --image=nginx")
    assert info["exit_code"] == 1 and not (terminated or truncated)
    assert obs["output"] == "error: internal error in the simulated cluster (KeyError: 'status'); the cluster was put back to before this command\n"
    assert env.observation_space.contains(obs)
    # the pod the command created is gone, and so is the time the step took
    assert sorted(p["metadata"]["name"] for p in env.backend.api.list("Pod", NS)) == pods_before
    assert env.backend.now == before_time
    # the backend the env holds is the one that was rolled back: commands and telemetry work
    obs, _, _, _, info = env.step("kubectl run other --image=nginx")
    assert obs["output"] == "pod/other created\n"
    assert env.step("kubectl get pod other")[4]["exit_code"] == 0
    _, _, terminated, _, info = env.step("submit the pod was missing an env var")
    assert terminated and info["submitted"] and "is_success" in info and info["oracles"]
    env.close()


def test_a_command_that_fails_while_it_waits_is_rolled_back_too(failing_scheduler) -> None:
    """``kubectl run -i``/``wait`` let time pass inside the command: a failure there is caught the same way."""
    env = sre_env.SREEnv("MissingEnvVar")
    env.reset(seed=0)
    env.step("kubectl create deployment web --image=nginx")
    before = env.backend.now
    obs, _, _, _, info = env.step("kubectl run trigger --image=nginx --restart=Never -i --rm -- true")
    assert info["exit_code"] == 1 and obs["output"].startswith("error: internal error in the simulated cluster (KeyError: 'status')")
    assert env.backend.now == before and "trigger" not in [p["metadata"]["name"] for p in env.backend.api.list("Pod", NS)]
    assert env.step("kubectl get deploy web")[4]["exit_code"] == 0  # the earlier change is kept
    env.close()
