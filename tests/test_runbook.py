"""The generic runbook baseline: each playbook fires on its symptom, fails honestly, never peeks, never raises."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

import sre_env  # noqa: F401  (registers the ids)
from sre_env.agents.baselines import AGENTS
from sre_env.agents.episode import EpisodeResult, run_episode
from sre_env.agents.runbook import RunbookAgent, parse_table

#: commands that change the cluster (what an honest "nothing found" must not run)
MUTATING = re.compile(r"^(?:kubectl (?:patch|apply|delete|scale|taint|cordon|drain|set|create|rollout (?:undo|restart))|ssh \S+ systemctl (?:start|restart|enable))")

_CACHE: dict[tuple[str, int], EpisodeResult] = {}


def _play(env_id: str, seed: int = 0) -> EpisodeResult:
    """One runbook episode (cached: several tests read the same transcript)."""
    key = (env_id, seed)
    if key not in _CACHE:
        env = gym.make(env_id, max_steps=50)
        try:
            _CACHE[key] = run_episode(env, RunbookAgent(), seed=seed)
        finally:
            env.close()
    return _CACHE[key]


def _commands(result: EpisodeResult) -> list[str]:
    return [s.command for s in result.steps]


# (id, a command the playbook must choose, words its diagnosis must contain)
PLAYBOOKS = [
    # crash loop after a recent rollout -> diff the revisions, undo
    ("SREGym/MissingEnvVar-v0", r"^kubectl rollout undo deployment/\S+ -n hotel-reservation$", r"was removed from the pod template"),
    # ImagePullBackOff -> undo
    ("SREGym/IncorrectImage-v0", r"^kubectl rollout undo deployment/mongodb-profile ", r"ImagePullBackOff"),
    # OOMKilled -> revert the limit the last rollout lowered
    ("SREGym/LimitTooSmall-v0", r"^kubectl rollout undo deployment/", r"OOMKilled"),
    # Pending: Insufficient cpu/memory -> the request the namespace's other workloads use
    ("SREGym/RequestTooLarge-v0", r"^kubectl patch deployment \S+ .*/resources", r"Insufficient (?:cpu|memory)"),
    # Pending: node selector matches no node -> drop the unmatched selector
    ("SREGym/NonExistentNode-v0", r'"op": "remove", "path": "/spec/template/spec/nodeSelector', r"no node carries"),
    # Pending: untolerated maintenance taint -> remove it
    ("SREGym/TaintNoToleration-v0", r"^kubectl taint nodes \S+ \S+:\w+-$", r"untolerated taint"),
    # Pending: volume pinned elsewhere after a rollout -> undo
    ("SREGym/PVAffinityViolation-v0", r"^kubectl rollout undo deployment/mongodb-profile ", r"volume node affinity conflict"),
    # FailedCreate: exceeded quota -> raise it to what runs plus headroom
    ("SREGym/NamespaceQuota-v0", r"^kubectl patch resourcequota \S+ .*requests\.cpu", r"exceeded quota"),
    # replicas 0 -> scale back
    ("SREGym/ScalePodZero-v0", r"^kubectl scale deployment/\S+ -n hotel-reservation --replicas=1$", r"scaled to 0 replicas"),
    # probes: wrong port / too aggressive -> point at the container port with sane timings
    ("SREGym/LivenessProbeMisconfig-v0", r"/livenessProbe", r"liveness probe"),
    ("SREGym/LivenessProbeTooAggressive-v0", r"/livenessProbe", r"too aggressive"),
    ("SREGym/ReadinessProbeMisconfig-v0", r"/readinessProbe", r"readiness probe"),
    # every pod healthy: a Service's selector / targetPort / existence
    ("SREGym/WrongServiceSelector-v0", r'"path": "/spec/selector"', r"matches no pod"),
    ("SREGym/TargetPortMisconfig-v0", r'"path": "/spec/ports/0/targetPort"', r"targetPort"),
    ("SREGym/MissingService-v0", r'^kubectl apply -n hotel-reservation -f - <<\'EOF\'\n\{[\s\S]*"kind": "Service"', r"does not exist"),
    # DNS errors on the failing call -> CoreDNS's Corefile override for that name
    ("SREGym/ServiceDNSFailure-v0", r'^kubectl apply -f - <<\'EOF\'\n\{[\s\S]*"name": "coredns"', r"Corefile"),
    # authentication failures after a rotation -> restart the client
    ("SREGym/StaleSecretCredentials-v0", r"^kubectl rollout restart deployment/profile ", r"authenticate"),
    # a node NotReady: kubelet inactive -> enable --now
    ("SREGym/KubeletDown-v0", r"^ssh worker-\d systemctl enable --now kubelet$", r"kubelet is not running"),
    # disk read errors in logs and dmesg -> move local volumes off the node
    ("SREGym/DiskSector-v0", r"^kubectl cordon worker-\d$", r"I/O errors"),
    # hardware errors in the kernel log of a crashing pod's node -> cordon and drain
    ("SREGym/MemoryEccErrors-v0", r"^kubectl drain worker-\d ", r"hardware errors"),
    # HPA cannot compute utilisation -> set the usual CPU request
    ("SREGym/HPAWithoutRequests-v0", r"^kubectl patch deployment frontend .*requests", r"missing request for cpu"),
    # users fail at the front door: the Ingress backend names a Service that does not exist
    ("SREGym/IngressMisroute-v0", r'^kubectl patch ingress frontend-ingress .*backend/service/name", "value": "frontend"', r"does not exist"),
    # errors on a path whose deployment was rolled out recently -> diff, undo
    ("SREGym/BuggyRelease-v0", r"^kubectl rollout undo deployment/rate ", r"Image"),
]


@pytest.mark.parametrize("env_id,command,words", PLAYBOOKS, ids=[p[0].removeprefix("SREGym/") for p in PLAYBOOKS])
def test_playbook_fires_and_passes(env_id: str, command: str, words: str) -> None:
    result = _play(env_id)
    chosen = [c for c in _commands(result) if re.search(command, c, re.MULTILINE)]
    assert chosen, f"expected a command matching {command!r}; ran:\n" + "\n".join(_commands(result))
    assert result.passed, result.oracles
    assert result.terminated and _commands(result)[-1].startswith("submit ")
    assert re.search(words, result.diagnosis or ""), result.diagnosis
    assert result.oracles["diagnosis"]["passed"], result.oracles["diagnosis"]


def test_nothing_found_is_submitted_honestly_without_touching_the_cluster() -> None:
    # a feature flag flipped in flagd's config: every pod healthy, no Service or rollout to blame
    result = _play("SREGym/FeatureFlag-PaymentFailure-v0")
    assert not result.passed
    assert not [c for c in _commands(result) if MUTATING.search(c)], _commands(result)
    assert "nothing was changed" in (result.diagnosis or "")
    assert "No root cause the runbook covers" in (result.diagnosis or "") or "No root cause found" in (result.diagnosis or "")


def test_a_symptom_without_a_textbook_repair_is_diagnosed_but_not_fixed() -> None:
    # the ConfigMap is gone: the runbook names it, but cannot know its content
    result = _play("SREGym/MissingConfigMap-v0")
    assert not result.passed
    assert 'configmap "profile-mongo-config" not found' in (result.diagnosis or "")
    assert "no earlier revision" in (result.diagnosis or "")
    assert not [c for c in _commands(result) if MUTATING.search(c)]


def test_a_textbook_move_that_is_the_wrong_fix_fails_the_repair_gates() -> None:
    # clock drift breaks the kubelet's TLS: restarting the kubelet is what the runbook knows; it is not the repair
    result = _play("SREGym/NodeClockDrift-v0")
    assert any(re.match(r"ssh worker-\d systemctl restart kubelet$", c) for c in _commands(result))
    assert not result.passed
    assert not result.oracles["immediate"]["passed"] and not result.oracles["live"]["passed"]


def test_same_seed_same_transcript() -> None:
    env = gym.make("SREGym/DiskSector-v0", max_steps=50)
    try:
        first = run_episode(env, RunbookAgent(), seed=0)
        again = run_episode(env, RunbookAgent(), seed=0)
    finally:
        env.close()
    assert _commands(first) == _commands(again)
    assert first.diagnosis == again.diagnosis
    assert [s.output for s in first.steps] == [s.output for s in again.steps]


class _Namespace:
    """Exposes only what a page tells the on-call engineer: the namespace (and the app's name)."""

    def __init__(self, scenario: Any) -> None:
        self.namespace = scenario.namespace
        self.app = scenario.app


class _GuardedUnwrapped:
    def __init__(self, scenario: Any) -> None:
        self.scenario = _Namespace(scenario)

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"the runbook read env.unwrapped.{name}")


class _GuardedEnv:
    """What the runbook's reset() gets: no backend, no scenario beyond its namespace."""

    def __init__(self, env: gym.Env) -> None:
        self.unwrapped = _GuardedUnwrapped(env.unwrapped.scenario)

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"the runbook read env.{name}")


@pytest.mark.parametrize("env_id", ["SREGym/MissingEnvVar-v0", "SREGym/TargetPortMisconfig-v0", "SREGym/DiskSector-v0"])
def test_no_peeking_at_the_scenario_or_the_simulator(env_id: str) -> None:
    env = gym.make(env_id, max_steps=50)
    try:
        obs, info = env.reset(seed=0)
        agent = RunbookAgent()
        agent.reset(_GuardedEnv(env))
        # act() sees the observation only; the info it gets is emptied to prove it does not need it
        for _ in range(50):
            command = agent.act(obs, {})
            obs, _reward, terminated, truncated, info = env.step(command)
            if terminated or truncated:
                break
        assert terminated and info["is_success"]
    finally:
        env.close()


def test_the_source_never_names_the_ground_truth() -> None:
    here = Path(__import__("sre_env.agents.runbook", fromlist=["x"]).__file__).parent
    source = (here / "runbook.py").read_text() + (here / "runbook_text.py").read_text()
    for forbidden in ("reference_solution", "root_cause", "wrong_fixes", "cause_checks", "variant", ".family", "scenario_cls",
                      ".backend", "_metric_names", "allowed_changes", "draw_variant"):
        assert forbidden not in source, forbidden
    # the scenario object is touched for its namespace, nowhere else
    uses = re.findall(r"scenario\.(\w+)", source)
    assert set(uses) == {"namespace"}, uses


def test_never_raises_on_odd_output() -> None:
    env = gym.make("SREGym/MissingEnvVar-v0")
    try:
        env.reset(seed=0)
        odd = ["", "Error from server (NotFound): pods \"x\" not found", "{not json", "NAME\n", "\x00\x01garbage\n" * 50,
               "NAME READY STATUS\nfoo-abc12-def34 0/1 Pending", '{"items": [1, 2, {"a": null}]}', "x" * 9000]
        for variant in range(len(odd)):
            agent = RunbookAgent()
            agent.reset(env)
            commands = [agent.act({"output": odd[(variant + i) % len(odd)], "traces": "failing call: a -> b: no such host"}, {}) for i in range(60)]
            assert all(isinstance(c, str) and c for c in commands)
            assert commands[-1].startswith("submit ")
    finally:
        env.close()


def test_act_before_reset_is_an_error_and_the_agent_is_registered() -> None:
    with pytest.raises(RuntimeError):
        RunbookAgent().act({"output": ""}, {})
    assert AGENTS["runbook"] is RunbookAgent


def test_parse_table_reads_columns_by_header_position() -> None:
    text = ("NAME                        READY   STATUS             RESTARTS      AGE\n"
            "profile-5sxsx4jlc5-7c8sm    0/1     CrashLoopBackOff   5 (84s ago)   2m55s\n"
            "geo-f5dzn8l29t-k5xbn        1/1     Running            1 (17m ago)   17m\n")
    rows = parse_table(text)
    assert rows[0] == {"NAME": "profile-5sxsx4jlc5-7c8sm", "READY": "0/1", "STATUS": "CrashLoopBackOff", "RESTARTS": "5 (84s ago)", "AGE": "2m55s"}
    assert rows[1]["RESTARTS"] == "1 (17m ago)"
    assert parse_table("No resources found in x namespace.") == []
