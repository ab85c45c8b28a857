"""Blind strategies: the repairs an agent can make without ever looking at the cause.

Each strategy is a command sequence built only from what ``kubectl get`` lists in
the app's namespace (its Deployments, StatefulSets and DaemonSets with their
replica counts, the cluster's nodes, the namespace's NetworkPolicies): no logs,
no events, no describe. The conformance suite plays every strategy on every
scenario, followed by a vague submit, and requires the episode not to be a
success, unless the scenario declares the strategy an accepted repair of its
cause (:attr:`sre_env.envs.base.Scenario.accepted_blind`, with the reason).

The strategies:

- ``undo_everything``: ``kubectl rollout undo`` of every Deployment and
  StatefulSet;
- ``scale_to_zero_and_back``: scale every Deployment and StatefulSet to 0, wait
  for the pods to go, scale each back to the replicas it had;
- ``restart_everything``: ``kubectl rollout restart`` of every Deployment,
  StatefulSet and DaemonSet;
- ``delete_every_pod``: ``kubectl delete pod --all``;
- ``every_common_fix``: the shotgun — uncordon every node, delete every
  NetworkPolicy of the namespace (the agent created none: these are all the
  cluster's own), undo and restart every workload, delete every pod. It is
  what an agent that applies every remedy it knows, at once, would type; a
  repair that is one of them by chance must still be declared.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from sre_env.backend import Backend

__all__ = ["BLIND_STRATEGIES", "blind_strategies", "WAIT_FOR_PODS_S", "rollback_repairs", "restart_repairs"]

#: the strategies, in the order the suite plays them
BLIND_STRATEGIES = ("undo_everything", "scale_to_zero_and_back", "restart_everything", "delete_every_pod", "every_common_fix")

#: how long an agent waits after scaling to zero (a pod's default grace period is 30 s)
WAIT_FOR_PODS_S = 45

_ROLLED = ("Deployment", "StatefulSet")


def _workloads(backend: "Backend", namespace: str, kinds: tuple[str, ...]) -> list[tuple[str, str, int]]:
    """(kind, name, spec.replicas) of the namespace's workloads, as ``kubectl get`` lists them."""
    rows = []
    for kind in kinds:
        for obj in backend.api.list(kind, namespace):
            replicas = (obj.get("spec") or {}).get("replicas")
            rows.append((kind, obj["metadata"]["name"], 1 if replicas is None else int(replicas)))
    return rows


def blind_strategies(backend: "Backend", namespace: str) -> dict[str, list[str]]:
    """Every blind strategy's commands for the cluster as it is now (call it before the first command)."""
    ns = namespace
    rolled = _workloads(backend, ns, _ROLLED)
    restarted = _workloads(backend, ns, (*_ROLLED, "DaemonSet"))
    undo = [f"kubectl rollout undo {kind.lower()}/{name} -n {ns}" for kind, name, _ in rolled]
    restart = [f"kubectl rollout restart {kind.lower()}/{name} -n {ns}" for kind, name, _ in restarted]
    delete_pods = [f"kubectl delete pod --all -n {ns}"]
    scale = [f"kubectl scale {kind.lower()}/{name} -n {ns} --replicas=0" for kind, name, _ in rolled]
    scale += [f"sleep {WAIT_FOR_PODS_S}"]
    scale += [f"kubectl scale {kind.lower()}/{name} -n {ns} --replicas={n}" for kind, name, n in rolled]
    uncordon = [f"kubectl uncordon {node['metadata']['name']}" for node in backend.api.list("Node")]
    policies = [f"kubectl delete networkpolicy --all -n {ns}"] if backend.api.list("NetworkPolicy", ns) else []
    return {
        "undo_everything": undo,
        "scale_to_zero_and_back": scale,
        "restart_everything": restart,
        "delete_every_pod": delete_pods,
        "every_common_fix": [*uncordon, *policies, *undo, *restart, *delete_pods],
    }


def rollback_repairs(change: str) -> dict[str, str]:
    """The declaration of a scenario whose cause is the latest rollout of a workload: ``change`` says which.

    ``kubectl rollout undo`` returns each Deployment to the revision before its
    latest; where the latest is the bad change, that is the repair of a bad
    rollout, and the Deployments with no earlier revision are left as they are.
    """
    reason = f"the cause is the latest rollout ({change}); `rollout undo` returns to the revision before it, the repair of a bad rollout"
    return {"undo_everything": reason, "every_common_fix": f"it includes undo_everything: {reason}; the rest of it (uncordon, delete the NetworkPolicies, restart, delete pods) keeps the undone template"}


def restart_repairs(why: str) -> dict[str, str]:
    """The declaration of a scenario whose cause goes away with the pods that hold it: ``why`` says how.

    Scaling to zero and back, restarting and deleting the pods all replace them,
    and so does the shotgun; undoing alone does not (no workload has a revision to
    return to).
    """
    reason = f"new pods repair it: {why}"
    return {name: reason for name in ("scale_to_zero_and_back", "restart_everything", "delete_every_pod", "every_common_fix")}
