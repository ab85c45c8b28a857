"""Conformance of every registered environment: API, determinism, grading truthfulness."""

from __future__ import annotations

import json
import string

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import sre_env
from sre_env.envs.base import DIFFICULTIES, LAYERS
from sre_env.envs.blind import BLIND_STRATEGIES, blind_strategies
from sre_env.envs.registry import scenario_class
from sre_env.rewards.lifecycle import ImmediateOracle

IDS = list(sre_env.ENV_IDS)
SEEDS = (0, 1, 2)
#: the default suite plays one seed per id; the other seeds run in CI's slow pass
GRADED_SEEDS = (0, pytest.param(1, marks=pytest.mark.slow), pytest.param(2, marks=pytest.mark.slow))


def play(env_id: str, seed: int, commands: list[str], diagnosis: str = "done"):
    env = gym.make(env_id)
    obs, info = env.reset(seed=seed)
    trace = [obs]
    for cmd in commands:
        obs, reward, term, trunc, info = env.step(cmd)
        trace.append((obs, reward, term, trunc, json.dumps(info, sort_keys=True, default=str)))
        assert not term and not trunc, f"episode ended early on {cmd!r}"
    obs, reward, term, trunc, info = env.step(f"submit {diagnosis}")
    trace.append((obs, reward, term, trunc, json.dumps(info, sort_keys=True, default=str)))
    env.close()
    return reward, term, info, trace


def same(a, b) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and np.array_equal(a, b)
    return a == b


def scenario_for(env_id: str, seed: int):
    env = gym.make(env_id)
    env.reset(seed=seed)
    return env.unwrapped.scenario


@pytest.mark.parametrize("env_id", IDS)
def test_check_env(env_id: str) -> None:
    env = gym.make(env_id)
    check_env(env.unwrapped, skip_render_check=True)


@pytest.mark.parametrize("env_id", IDS)
def test_registry_metadata(env_id: str) -> None:
    # the env's own step limit is the only one, and the made env's spec reports it
    assert gym.spec(env_id).max_episode_steps is None
    assert gym.make(env_id).spec.max_episode_steps == 50
    cls = scenario_class(env_id)
    assert cls.layer in LAYERS
    assert cls.difficulty in DIFFICULTIES
    assert cls.summary and cls.description, "every scenario says, in users' words, what is wrong"
    info = cls.info(env_id.removeprefix("SREGym/").rsplit("-v", 1)[0])
    assert info.tags["app"] == cls.app.name and "full" in info.tags["suites"]


@pytest.mark.parametrize("env_id", IDS)
@pytest.mark.parametrize("seed", GRADED_SEEDS)
def test_reference_solution_passes(env_id: str, seed: int) -> None:
    scenario = scenario_for(env_id, seed)
    reward, term, info, _ = play(env_id, seed, scenario.reference_solution(), scenario.root_cause().summary)
    assert term
    for gate in ("immediate", "live", "durability", "cleanup", "diagnosis"):
        assert info["oracles"][gate]["passed"], (gate, info["oracles"][gate])
    assert info["is_success"]
    assert reward >= 0.95
    assert set(info["reward_components"]) >= {"diagnosis", "immediate", "live", "durability", "cleanup", "risk"}


@pytest.mark.parametrize("env_id", IDS)
@pytest.mark.parametrize("seed", GRADED_SEEDS)
def test_noop_fails(env_id: str, seed: int) -> None:
    reward, term, info, _ = play(env_id, seed, [])
    assert term and reward == 0.0
    assert not info["oracles"]["live"]["passed"] and not info["is_success"]


@pytest.mark.parametrize("env_id", IDS)
@pytest.mark.parametrize("seed", GRADED_SEEDS)
def test_wrong_fixes_fail(env_id: str, seed: int) -> None:
    scenario = scenario_for(env_id, seed)
    fixes = scenario.wrong_fixes()
    assert fixes, "every scenario declares the plausible fixes that must fail"
    for name, commands in fixes.items():
        reward, term, info, _ = play(env_id, seed, commands)
        assert reward == 0.0, f"wrong fix {name!r} earned {reward}: {info['oracles']['live']}"
        assert not info["is_success"]


#: what an agent that never looked at the cause submits
VAGUE_SUBMIT = "submit restarted and rolled back what looked broken; it should be fixed now"
#: the default suite's blind matrix: the ids blind fixes used to pass (the metastable ones, the lock held
#: by a database session), one with a bad rollout and one needing new pods (accepted strategies), and one
#: per remaining layer; every other id runs in CI's slow pass
BLIND_DEFAULT_IDS = frozenset(
    f"SREGym/{name}-v0"
    for name in (
        "RetryStorm",
        "GcDegradation",
        "CacheFlushStampede",
        "DBLockContention",
        "BuggyRelease",
        "StaleSecretCredentials",
        "HPAWithoutRequests",
        "NetworkPolicyBlock",
        "CfsThrottling",
        "DiskSector",
        "OperatorMisoperation-WrongVersion",
    )
)
BLIND_IDS = [i if i in BLIND_DEFAULT_IDS else pytest.param(i, marks=pytest.mark.slow) for i in IDS]


def test_blind_default_ids_are_registered() -> None:
    assert BLIND_DEFAULT_IDS <= set(IDS)


@pytest.mark.parametrize("env_id", BLIND_IDS)
@pytest.mark.parametrize("seed", GRADED_SEEDS)
def test_blind_strategies_fail_unless_accepted(env_id: str, seed: int) -> None:
    # every blind strategy (undo, scale to zero and back, restart, delete pods, all at once), played from
    # the one developed incident of this seed (each reset restores it from the cache), then a vague submit:
    # the episode is a success exactly for the strategies the scenario declares a repair of its cause
    env = gym.make(env_id, max_steps=500)  # the strategies name every workload: more commands than an episode allows
    env.reset(seed=seed)
    core = env.unwrapped
    accepted = dict(core.scenario.accepted_blind)
    assert set(accepted) <= set(BLIND_STRATEGIES), "accepted_blind names strategies of sre_env.envs.blind"
    assert all(reason.strip() for reason in accepted.values()), "every accepted blind strategy says why it repairs the cause"
    strategies = blind_strategies(core.backend, core.scenario.namespace)
    unexpected = []
    for name in BLIND_STRATEGIES:
        env.reset(seed=seed)
        for cmd in strategies[name]:
            *_, term, trunc, _ = env.step(cmd)
            assert not term and not trunc, f"{name}: episode ended early on {cmd!r}"
        if name not in accepted and not ImmediateOracle().evaluate(core.backend, core.scenario, core._baseline).passed:
            continue  # success needs the immediate gate, which grading would run on this very state: not a success
        _, reward, term, _, info = env.step(VAGUE_SUBMIT)
        assert term
        if info["is_success"] != (name in accepted):
            failed = {g: [f"{c['name']}: {c['detail']}" for c in r["checks"] if not c["passed"]] for g, r in info["oracles"].items() if not r["passed"] and g != "diagnosis"}
            unexpected.append(f"{name}: {'fails although accepted' if name in accepted else 'passes (declare it with the reason, or fix the model)'} {failed}")
    env.close()
    assert not unexpected, unexpected


@pytest.mark.parametrize("env_id", IDS)
def test_non_durable_fixes_fail_durability(env_id: str) -> None:
    scenario = scenario_for(env_id, 0)
    fixes = scenario.non_durable_fixes()
    if not fixes:
        pytest.skip("no repair of this fault can be made non-durably")
    for name, commands in fixes.items():
        reward, term, info, _ = play(env_id, 0, commands, scenario.root_cause().summary)
        assert info["oracles"]["immediate"]["passed"], (name, info["oracles"]["immediate"])
        assert not info["oracles"]["durability"]["passed"], (name, "survived the restart/reboot")
        assert not info["is_success"]


@pytest.mark.parametrize("env_id", IDS)
def test_same_seed_same_episode(env_id: str) -> None:
    scenario = scenario_for(env_id, 11)
    commands = ["kubectl get pods -A -o wide", f"kubectl get events -n {scenario.namespace}", *scenario.reference_solution()[:2]]
    a = play(env_id, 11, commands)
    b = play(env_id, 11, commands)
    assert same(a[3], b[3])
    c = play(env_id, 12, commands)
    assert not same(a[3], c[3])


@pytest.mark.parametrize("env_id", IDS)
@pytest.mark.parametrize("seed", GRADED_SEEDS)
def test_brief_does_not_leak_the_cause(env_id: str, seed: int) -> None:
    env = gym.make(env_id)
    obs, _ = env.reset(seed=seed)
    scenario = env.unwrapped.scenario
    brief = obs["output"].lower()
    rc = scenario.root_cause()
    for word in rc.mechanism.lower().replace(":", " ").replace("(", " ").replace(")", " ").split():
        if len(word) > 5 and word not in {"errors", "service"}:
            assert word not in brief, f"brief leaks {word!r}"
    assert rc.component.lower() not in brief
    cls = type(scenario)
    for text in (cls.summary, cls.description):
        assert rc.component.lower() not in text.lower(), "the listing names the broken component"
    if rc.component.startswith("node/"):
        assert rc.component.split("/")[1] not in brief
    for key in ("root_cause", "oracles", "variant"):
        assert key not in _
    # the observation's telemetry is evidence, never the answer: not the ground truth's sentence (its
    # mechanism's words may appear — a Go binary really prints "missing required environment variable")
    observed = " ".join(str(obs[k]).lower() for k in ("output", "alerts", "logs", "traces"))
    assert rc.summary[:48].lower() not in observed


HOSTILE = [
    "",
    "   ",
    "x" * 10_000,
    "kubectl get pods 'unbalanced",
    'echo "unterminated',
    "kubectl",
    "kubectl frobnicate",
    "kubectl get",
    "kubectl get pods -n",
    "kubectl delete",
    "rm -rf /",
    ":(){ :|:& };:",
    "$(reboot)",
    "`id`",
    "kubectl get pods | | grep x",
    "kubectl apply -f - <<EOF\nnot: [valid\nEOF",
    "kubectl patch svc frontend -n hotel-reservation -p '{bad json'",
    "ssh nowhere uptime",
    "kubectl exec nonexistent -- ls",
    "\x00\x01\x02",
    "k\u00fcbectl get p\u00f6ds",
    "submit",
]


@pytest.mark.parametrize("env_id", IDS[:1])
def test_hostile_commands_never_raise(env_id: str) -> None:
    env = gym.make(env_id)
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    printable = np.array(list(string.printable))
    randoms = ["".join(rng.choice(printable, size=int(rng.integers(1, 200)))) for _ in range(40)]
    for cmd in HOSTILE + randoms:
        obs, reward, term, trunc, info = env.step(cmd)
        assert env.observation_space.contains(obs)
        if term or trunc:
            env.reset(seed=0)
    env.close()


def test_errors_look_like_the_real_tools() -> None:
    env = gym.make(IDS[0])
    env.reset(seed=0)
    obs, *_ , info = env.step("kubectl get pdos")
    assert 'error: the server doesn\'t have a resource type "pdos"' in obs["output"]
    assert info["exit_code"] != 0
    obs, *_ = env.step("frobnicate --now")
    assert "command not found" in obs["output"]
    obs, *_ = env.step("kubectl get pod nope -n hotel-reservation")
    assert 'Error from server (NotFound): pods "nope" not found' in obs["output"]


def test_truncation_grades_the_cluster() -> None:
    # max_episode_steps and max_steps are one limit, and reaching it grades the episode
    for limits in ({"max_episode_steps": 3}, {"max_steps": 3}, {"max_steps": 3, "max_episode_steps": 3}):
        env = gym.make(IDS[0], **limits)
        assert env.spec.max_episode_steps == 3 and env.unwrapped.max_steps == 3
        env.reset(seed=0)
        term = trunc = False
        steps = 0
        while not (term or trunc):
            _, reward, term, trunc, info = env.step("kubectl get nodes")
            steps += 1
        assert trunc and not term and steps == 3, limits
        assert info["submitted"] is False and "live" in info["oracles"] and info["is_success"] is False, limits
    with pytest.raises(ValueError, match="max_steps=4 and max_episode_steps=3 are the same step limit"):
        gym.make(IDS[0], max_steps=4, max_episode_steps=3)
    ungraded = gym.make(IDS[0], max_steps=2, grade_truncated=False)
    ungraded.reset(seed=0)
    ungraded.step("kubectl get nodes")
    _, reward, term, trunc, info = ungraded.step("kubectl get nodes")
    assert trunc and not term and "is_success" not in info
    env2 = sre_env.SREEnv("DiskSector", max_steps=2)
    env2.reset(seed=0)
    env2.step("kubectl get nodes")
    _, reward, term, trunc, info = env2.step("kubectl get nodes")
    assert trunc and info["submitted"] is False and reward == 0.0
    assert "live" in info["oracles"] and info["is_success"] is False


def test_step_after_end_and_before_reset() -> None:
    env = sre_env.SREEnv("TargetPortMisconfig")
    with pytest.raises(gym.error.ResetNeeded):
        env.step("kubectl get pods")
    env.reset(seed=0)
    env.step("submit nothing")
    obs, reward, term, trunc, info = env.step("kubectl get pods")
    assert term and reward == 0.0


def test_render_ansi() -> None:
    env = sre_env.SREEnv("MissingEnvVar", render_mode="ansi")
    env.reset(seed=0)
    env.step("kubectl get pods -n hotel-reservation")
    text = env.render()
    assert "step 1" in text and "NAME" in text


def test_unknown_id_suggests() -> None:
    with pytest.raises(sre_env.UnknownEnvironmentError, match="Did you mean 'SREGym/DiskSector-v0'"):
        sre_env.SREEnv("DiskSectr")


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_vector_env_steps(mode: str) -> None:
    # Text observations cannot live in AsyncVectorEnv's shared memory (it reads
    # non-array spaces once, Gymnasium issue #1164), so async runs without it.
    kwargs = {"shared_memory": False} if mode == "async" else {}
    envs = gym.make_vec(IDS[2], num_envs=2, vectorization_mode=mode, vector_kwargs=kwargs)
    try:
        obs, infos = envs.reset(seed=[0, 1])
        assert obs["metrics"].shape[0] == 2
        obs, rewards, terms, truncs, infos = envs.step(["kubectl get pods -n hotel-reservation", "submit nothing"])
        assert list(terms) == [False, True]
        assert rewards[1] == 0.0
        assert "NAME" in obs["output"][0]
    finally:
        envs.close()
