"""Shared pieces of the pod/probe/volume scenarios: commands, checks, vocabulary.

The checks read the live model (the kubelet's runtimes, the prober, the
store), never the commands an agent typed, so any repair that really removes
the cause passes them.
"""

from __future__ import annotations

import copy
import json
from typing import TYPE_CHECKING, Any

from sre_env.kube.patching import json_patch as apply_json_patch
from sre_env.kube.patching import strategic_merge
from sre_env.kube.probe_defaults import default_probes
from sre_env.rewards.base import Check
from sre_env.sim.control.controllers import template_hash

if TYPE_CHECKING:
    from sre_env.backend import Backend
    from sre_env.sim.model import ModelBackend

__all__ = ["GO_SERVICES", "REQUEST_DBS", "json_patch", "live_pods", "pods_ready_check", "probe_check", "container_index", "replicaset_after", "replicaset_only_fix", "STABLE_S"]

Obj = dict[str, Any]
#: hotel-reservation's Go services (the order is part of the seeded variants)
GO_SERVICES = ("frontend", "search", "geo", "rate", "profile", "recommendation", "user", "reservation")
#: databases read on a request path, whose Deployments use the Recreate strategy (order: seeded variants)
REQUEST_DBS = ("mongodb-rate", "mongodb-profile", "mongodb-reservation")
#: a container counts as stable once it has run this long without being restarted
STABLE_S = 30.0


def json_patch(kind: str, name: str, namespace: str, ops: list[Obj]) -> str:
    """``kubectl patch <kind> <name> --type=json -p '<ops>'`` as an agent would type it."""
    return f"kubectl patch {kind} {name} -n {namespace} --type=json -p '{json.dumps(ops, separators=(',', ':'))}'"


def replicaset_only_fix(namespace: str, replicaset: str, service: str, ops: list[Obj]) -> list[str]:
    """A repair made in the ReplicaSet the rollout created, its pods recreated from it.

    It works until the next rollout renders the Deployment's (still broken) template
    again: the non-durable fix every pod-template scenario offers.
    """
    return [json_patch("replicaset", replicaset, namespace, ops), f"kubectl delete pod -n {namespace} -l io.kompose.service={service}", "sleep 20"]


def replicaset_after(backend: "Backend", namespace: str, deployment: str, patch: Any, patch_type: str = "strategic") -> str:
    """The name of the ReplicaSet the Deployment controller creates for the patched template.

    (A ReplicaSet is ``<deployment>-<pod-template-hash>``, a pure function of the template.)
    """
    dep = copy.deepcopy(backend.api.get("Deployment", deployment, namespace))
    new = apply_json_patch(dep, copy.deepcopy(patch)) if patch_type == "json" else strategic_merge(dep, copy.deepcopy(patch))
    default_probes(new)  # the API server defaults the stored template (probes) before the controller hashes it
    return f"{deployment}-{template_hash(new['spec']['template'])}"


def container_index(backend: "Backend", namespace: str, deployment: str, container: str) -> int:
    dep = backend.api.get("Deployment", deployment, namespace)
    names = [c["name"] for c in dep["spec"]["template"]["spec"]["containers"]]
    return names.index(container) if container in names else 0


def live_pods(backend: "Backend", namespace: str, component: str) -> list[Obj]:
    return [p for p in backend.api.list("Pod", namespace, f"io.kompose.service={component}") if not p["metadata"].get("deletionTimestamp")]


def pods_ready_check(backend: "ModelBackend", namespace: str, component: str, *, name: str = "pods_ready") -> Check:
    """Every pod of the component is scheduled, initialized, Ready, and its containers have stopped restarting."""
    now = backend.now
    pods = live_pods(backend, namespace, component)
    if not pods:
        return Check(name, False, f"no pod of {component} exists")
    bad = []
    for pod in pods:
        pname = pod["metadata"]["name"]
        conds = {c["type"]: c.get("status") for c in pod.get("status", {}).get("conditions") or ()}
        if conds.get("Ready") != "True":
            bad.append(f"{pname} not Ready")
            continue
        rt = backend.model.runtime(pod["metadata"]["uid"])
        for ctr in (rt.containers.values() if rt else ()):
            if ctr.state != "running" or ctr.started_at is None or now - ctr.started_at < STABLE_S:
                bad.append(f"{pname}/{ctr.name} restarted within the last {int(STABLE_S)}s")
    return Check(name, not bad, "; ".join(bad) if bad else f"every {component} pod is Ready and stable")


def probe_check(backend: "ModelBackend", namespace: str, component: str, container: str, key: str, *, name: str) -> Check:
    """The container keeps its ``key`` probe, and the prober gets a success from the process now."""
    pods = live_pods(backend, namespace, component)
    if not pods:
        return Check(name, False, f"no pod of {component} exists")
    bad = []
    for pod in pods:
        spec = next((c for c in pod["spec"].get("containers") or () if c["name"] == container), None)
        probe = (spec or {}).get(key)
        if not probe:
            bad.append(f"{pod['metadata']['name']}/{container} has no {key}")
            continue
        rt = backend.model.runtime(pod["metadata"]["uid"])
        ctr = rt.containers.get(container) if rt else None
        if ctr is None:
            bad.append(f"{pod['metadata']['name']}/{container} is not running")
            continue
        result = backend.model.run_probe(pod, rt, ctr, spec, probe)
        if not result.ok:
            bad.append(f"{pod['metadata']['name']}/{container}: {result.output or 'probe fails'}")
    return Check(name, not bad, "; ".join(bad) if bad else f"the {key} of {component}/{container} succeeds against the process")
