"""Metastable failure: the state outlives its trigger; repairs are judged by replaying the trigger."""

from __future__ import annotations

import sre_env
from sre_env.apps.hotel_reservation import HOTEL_RESERVATION


def _success(env) -> float:
    return env.backend.world.last_traffic[HOTEL_RESERVATION.name].client_success


def test_the_degraded_state_persists_after_the_trigger_is_gone() -> None:
    env = sre_env.SREEnv("RetryStorm")
    env.reset(seed=0)
    world = env.backend.world
    assert world.load_factor.get(HOTEL_RESERVATION.name, 1.0) == 1.0, "the spike is over when the agent looks"
    assert _success(env) < 0.6
    env.step("sleep 600")
    assert world.load_factor.get(HOTEL_RESERVATION.name, 1.0) == 1.0
    assert _success(env) < 0.6, "ten minutes without any trigger and still down: metastable"


def test_without_retries_the_same_spike_heals_itself() -> None:
    env = sre_env.SREEnv("RetryStorm")
    env.reset(seed=0)
    v = env.scenario.variant
    env.step(f"kubectl set env deployment/{v['frontend']} -n hotel-reservation RETRY_MAX=0")
    env.step("sleep 120")
    assert _success(env) > 0.99
    # the trigger again, on the repaired system: overload during the spike, recovery after it
    env.scenario.replay_trigger(env.backend)
    env.step("sleep 30")
    assert _success(env) < 0.99
    env.step("sleep 300")
    assert _success(env) > 0.99


def test_more_capacity_is_an_accepted_repair_and_fewer_retries_is_not() -> None:
    def grade(commands: list[str]) -> dict:
        env = sre_env.SREEnv("RetryStorm")
        env.reset(seed=1)
        for cmd in commands:
            env.step(cmd.format(**env.scenario.variant))
        _, info = env.finish()
        return info

    info = grade(["kubectl set resources deployment/{upstream} -n hotel-reservation -c {container} --limits=cpu=1"])
    assert info["oracles"]["live"]["passed"], info["oracles"]["live"]
    assert info["oracles"]["live"]["trigger_replayed"].startswith("load x")
    assert info["oracles"]["cleanup"]["passed"]
    info = grade(["kubectl set env deployment/{frontend} -n hotel-reservation RETRY_MAX=1"])
    assert not info["oracles"]["live"]["passed"]


def test_cache_stampede_outlives_its_trigger_and_repair_survives_a_replay() -> None:
    env = sre_env.SREEnv("CacheFlushStampede")
    env.reset(seed=0)
    v = env.scenario.variant
    world = env.backend.world
    cold = 1.0 - world.cache_state[(HOTEL_RESERVATION.name, v["cache"])][1]
    assert cold > 0.9 and _success(env) < 0.8, "the cache restarted empty and the database behind it is drowning"
    env.step("sleep 600")
    assert _success(env) < 0.8, "ten minutes later the cache is still cold: nothing gets written back"
    env.step(f"kubectl set resources deployment/{v['database']} -n hotel-reservation -c {v['container']} --limits=cpu=1")
    env.step("sleep 180")
    assert _success(env) > 0.99 and world.cache_state[(HOTEL_RESERVATION.name, v["cache"])][1] > 0.5, "reads succeed again and refill the cache"
    env.scenario.replay_trigger(env.backend)
    env.step("sleep 240")
    assert _success(env) > 0.99, "an empty cache is survivable now"


def test_gc_death_spiral_persists_and_restart_only_lasts_until_the_next_burst() -> None:
    env = sre_env.SREEnv("GcDegradation")
    env.reset(seed=0)
    v = env.scenario.variant
    assert _success(env) < 0.8
    env.step("sleep 600")
    assert _success(env) < 0.8, "the burst is long over; the spiral is not"
    env.step(f"kubectl rollout restart deployment/{v['service']} -n hotel-reservation")
    env.step("sleep 120")
    assert _success(env) > 0.99, "a restart empties the queue and the heap"
    env.scenario.replay_trigger(env.backend)
    env.step("sleep 300")
    assert _success(env) < 0.8, "the next burst starts the spiral again"


def _env_of(env, deployment: str, container: str) -> dict[str, str]:
    dep = env.backend.api.get("Deployment", deployment, "hotel-reservation")
    (c,) = [c for c in dep["spec"]["template"]["spec"]["containers"] if c["name"] == container]
    return {e["name"]: e.get("value") for e in c.get("env") or []}


def test_the_latent_setting_is_long_standing_so_rollout_undo_keeps_it() -> None:
    # the retries were turned on before the latest rollout: undo returns to a revision that has them
    env = sre_env.SREEnv("RetryStorm")
    env.reset(seed=0)
    v = env.scenario.variant
    assert _env_of(env, v["frontend"], v["frontend_container"])["RETRY_MAX"] == str(v["retries"])
    obs, *_ = env.step(f"kubectl rollout undo deployment/{v['frontend']} -n hotel-reservation")
    assert "rolled back" in obs["output"], obs["output"]
    assert _env_of(env, v["frontend"], v["frontend_container"])["RETRY_MAX"] == str(v["retries"])
