"""The command catalog (Discrete + action mask) and the numeric observation."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import sre_env  # noqa: F401
from sre_env.wrappers.catalog import CatalogWrapper, CommandCatalog, catalog_for
from sre_env.wrappers.mix import ScenarioMix, make_numeric_env
from sre_env.wrappers.numeric import feature_names

DISK, ENV, PORT = "SREGym/DiskSector-v0", "SREGym/MissingEnvVar-v0", "SREGym/TargetPortMisconfig-v0"


def catalog_env(env_id: str, seed: int = 0) -> tuple[CatalogWrapper, dict]:
    env = CatalogWrapper(gym.make(env_id))
    obs, _ = env.reset(seed=seed)
    return env, obs


#: check_env warns that a wrapped env is not the raw one; checking the wrapper is the point here
WRAPPED_OK = pytest.mark.filterwarnings("ignore:.*is different from the unwrapped version")


@WRAPPED_OK
def test_check_env_on_the_numeric_catalog_env() -> None:
    env = make_numeric_env(PORT, max_steps=8)
    check_env(env, skip_render_check=True)
    obs, _ = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    assert env.action_space.n == len(env.catalog) == obs["action_mask"].shape[0]


def test_mask_matches_valid_commands() -> None:
    env, obs = catalog_env(PORT)
    cat = env.catalog
    mask = obs["action_mask"]
    t = cat.targets
    assert t is not None and t.services and t.workloads and t.nodes
    for i, action in enumerate(cat.layout):
        if action.repair:
            continue
        commands = cat.commands(i)
        if mask[i]:
            # every valid inspect command runs cleanly on the live cluster
            _, _, term, trunc, info = env.step(i)
            assert info["exit_code"] == 0, (cat.describe(i), commands)
            assert not term and not trunc
        else:
            assert cat.target_name(action) is None, cat.describe(i)  # only empty slots are masked for inspect verbs
    # repair verbs are valid only where they apply: evacuation only on nodes holding local volumes
    for i, action in enumerate(cat.layout):
        if action.verb == "evacuate_node" and mask[i]:
            assert any(c.startswith("kubectl delete pvc") for c in cat.commands(i))


def test_mask_follows_the_live_cluster_not_the_fault() -> None:
    env, obs0 = catalog_env(PORT, seed=0)
    target0 = env.unwrapped.scenario.variant["service"]
    obs1, _ = env.reset(seed=3)
    assert env.unwrapped.scenario.variant["service"] != target0  # a different fault...
    assert np.array_equal(obs0["action_mask"], obs1["action_mask"])  # ...the same mask: it leaks nothing
    cat = env.catalog
    slot = cat.targets.services.index("geo")
    i = cat.index("describe_service", "service", slot)
    env.env.step("kubectl delete service geo -n hotel-reservation")  # a text command under the catalog
    assert env.catalog.mask()[i] == 0  # gone from the cluster: masked


@pytest.mark.parametrize(
    "env_id, verb, kind, target",
    [
        (ENV, "rollout_undo", "workload", lambda v: v["service"]),
        (PORT, "fix_target_port", "service", lambda v: v["service"]),
        (DISK, "evacuate_node", "node", lambda v: v["node"]),
    ],
)
def test_the_generic_repair_on_the_right_target_passes_every_gate(env_id, verb, kind, target) -> None:
    env, _ = catalog_env(env_id, seed=1)
    cat = env.catalog
    name = target(env.unwrapped.scenario.variant)
    names = {"workload": [n for _, n in cat.targets.workloads], "service": cat.targets.services, "node": cat.targets.nodes}[kind]
    _, _, _, _, info = env.step(cat.index(verb, kind, names.index(name)))
    assert all(c in info["commands"][0] for c in (name,)) or verb == "evacuate_node"
    _, reward, term, _, info = env.step(cat.index("submit"))
    assert term and info["is_success"], info.get("oracles")
    assert reward > 0.5


def test_a_repair_on_the_wrong_target_fails() -> None:
    env, _ = catalog_env(ENV, seed=1)
    cat = env.catalog
    broken = env.unwrapped.scenario.variant["service"]
    other = next(n for _, n in cat.targets.workloads if n not in (broken, "frontend"))
    env.step(cat.index("rollout_restart", "workload", [n for _, n in cat.targets.workloads].index(other)))
    _, reward, term, _, info = env.step(cat.index("submit"))
    assert term and not info["is_success"] and reward == 0.0


def test_layout_is_stable_and_described() -> None:
    from sre_env.envs.registry import scenario_class

    a = catalog_for(scenario_class(DISK).app)
    b = catalog_for(scenario_class(ENV).app)
    assert a.layout == b.layout  # one app: one layout across scenarios
    assert isinstance(a, CommandCatalog)
    with pytest.raises(RuntimeError, match="reset"):
        a.mask()


def test_numeric_features_appear_only_after_inspection() -> None:
    env = make_numeric_env(PORT, max_steps=10)
    obs, _ = env.reset(seed=0)
    cat = env.catalog
    w, s, n = cat.capacity
    names = feature_names(w, s, n)
    assert len(names) == obs["observations"].shape[0]
    slot = cat.targets.services.index(env.unwrapped.scenario.variant["service"])
    mismatch = names.index(f"s{slot}.port_mismatch")
    assert obs["observations"][mismatch] == 0.0  # not looked at yet
    obs, *_ = env.step(cat.index("describe_services"))
    assert obs["observations"][mismatch] == 1.0
    others = [names.index(f"s{i}.port_mismatch") for i in range(len(cat.targets.services)) if i != slot]
    assert not obs["observations"][others].any()
    obs, *_ = env.step(cat.index("fix_target_port", "service", slot))
    assert obs["observations"][mismatch] == 0.0 and obs["observations"][names.index(f"s{slot}.port_fixed")] == 1.0


def test_dmesg_keywords_flag_the_failing_disk() -> None:
    env = make_numeric_env(DISK, max_steps=10)
    obs, _ = env.reset(seed=0)
    cat = env.catalog
    names = feature_names(*cat.capacity)
    bad = env.unwrapped.scenario.variant["node"]
    flags = {}
    for k, node in enumerate(cat.targets.nodes):
        if node == "control-plane":
            continue
        obs, *_ = env.step(cat.index("dmesg", "node", k))
        flags[node] = obs["observations"][names.index(f"n{k}.dmesg_io_error")]
    assert flags[bad] == 1.0 and all(v == 0.0 for node, v in flags.items() if node != bad)


@pytest.mark.parametrize("seed", [0, 1])
def test_restarts_point_at_the_node_of_the_crash_looping_pod(seed) -> None:
    env = make_numeric_env(DISK, max_steps=10)
    obs, _ = env.reset(seed=seed)
    cat = env.catalog
    names = feature_names(*cat.capacity)
    restarts = [names.index(f"n{k}.pod_restarts") for k in range(len(cat.targets.nodes))]
    assert not obs["observations"][restarts].any()  # not looked at yet
    bad = cat.targets.nodes.index(env.unwrapped.scenario.variant["node"])
    # the dashboard (restarts by node) shows where the crash-looping pod runs from the start
    hosting = [names.index(f"n{k}.hosts_restarting") for k in range(len(cat.targets.nodes))]
    assert obs["observations"][hosting].tolist() == [1.0 if k == bad else 0.0 for k in range(len(hosting))]
    obs, *_ = env.step(cat.index("get_pods"))
    values = obs["observations"][restarts]
    # the database whose disk fails crash-loops; other pods restarted at most once at startup
    assert values[bad] > 0.4 and all(v <= 0.2 for k, v in enumerate(values) if k != bad)
    db = next(i for i, (_, name) in enumerate(cat.targets.workloads) if name == env.unwrapped.scenario.variant["database"])
    assert obs["observations"][names.index(f"w{db}.pod_restarts")] == values[bad]


def test_scenario_mix_draws_from_the_pool_and_takes_explicit_choices() -> None:
    mix = ScenarioMix([ENV, PORT], seeds=[5, 6], max_steps=4)
    seen = set()
    for s in range(6):
        obs, info = mix.reset(seed=s)
        assert info["episode_seed"] in (5, 6)
        seen.add(info["env_id"])
        assert mix.observation_space.contains(obs)
    assert seen == {ENV, PORT}
    _, info = mix.reset(options={"scenario": 1, "seed": 99})
    assert info["env_id"] == PORT and info["episode_seed"] == 99


def test_ungraded_truncation_for_training() -> None:
    env = make_numeric_env(ENV, max_steps=2, grade_truncated=False)
    env.reset(seed=0)
    env.step(env.catalog.index("get_pods"))
    _, reward, term, trunc, info = env.step(env.catalog.index("get_events"))
    assert trunc and not term and reward == 0.0 and "is_success" not in info
