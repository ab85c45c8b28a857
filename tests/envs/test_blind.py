"""Blind strategies: built from what `kubectl get` lists, and the declarations' shape."""

from __future__ import annotations

import sre_env
from sre_env.envs.blind import (
    BLIND_STRATEGIES,
    WAIT_FOR_PODS_S,
    blind_strategies,
    restart_repairs,
    rollback_repairs,
)

NS = "hotel-reservation"


def test_every_strategy_names_every_workload_of_the_namespace() -> None:
    env = sre_env.SREEnv("BuggyRelease")
    env.reset(seed=0)
    api = env.backend.api
    deployments = [d["metadata"]["name"] for d in api.list("Deployment", NS)]
    s = blind_strategies(env.backend, NS)
    assert set(s) == set(BLIND_STRATEGIES)
    for name in deployments:
        assert f"kubectl rollout undo deployment/{name} -n {NS}" in s["undo_everything"]
        assert f"kubectl rollout restart deployment/{name} -n {NS}" in s["restart_everything"]
        assert f"kubectl scale deployment/{name} -n {NS} --replicas=0" in s["scale_to_zero_and_back"]
    assert s["delete_every_pod"] == [f"kubectl delete pod --all -n {NS}"]
    # scale to zero, wait for the pods to go, back to the replicas each had
    zero = s["scale_to_zero_and_back"].index(f"sleep {WAIT_FOR_PODS_S}")
    assert all("--replicas=0" in c for c in s["scale_to_zero_and_back"][:zero])
    assert not any("--replicas=0" in c for c in s["scale_to_zero_and_back"][zero + 1 :])
    # the shotgun is every one of them at once
    shotgun = s["every_common_fix"]
    assert set(s["undo_everything"]) | set(s["restart_everything"]) | set(s["delete_every_pod"]) <= set(shotgun)
    assert any(c.startswith("kubectl uncordon ") for c in shotgun)


def test_every_strategy_is_a_command_the_shell_runs() -> None:
    env = sre_env.SREEnv("BuggyRelease")
    env.reset(seed=0)
    for cmd in blind_strategies(env.backend, NS)["every_common_fix"]:
        out = env.step(cmd)[0]["output"]
        # a workload never rolled out has no revision to undo to: kubectl says so, like any agent would see
        assert "error" not in out.lower() or "no rollout history found" in out, (cmd, out)


def test_declarations_name_strategies_with_a_reason() -> None:
    undo = rollback_repairs("today's release")
    assert set(undo) == {"undo_everything", "every_common_fix"} and "today's release" in undo["undo_everything"]
    restart = restart_repairs("new pods read the Secret")
    assert "undo_everything" not in restart and set(restart) < set(BLIND_STRATEGIES)
    assert all("new pods read the Secret" in r for r in restart.values())
