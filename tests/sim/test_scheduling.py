"""Scheduling and resource model: predicates, priorities and preemption, quotas, taint eviction, HPA.

Each test forks the warmed-up healthy hotel-reservation cluster, applies a cause
through the API (as kubectl would) and checks what the cluster then serves:
the scheduler's FailedScheduling text, the Preempted events, the ReplicaSet's
FailedCreate for an exceeded quota, the HPA's ``<unknown>`` target, and the
kubectl tables/describers for the new kinds.
"""

from __future__ import annotations

import copy

import pytest

from sre_env.apps.hotel_reservation import HOTEL_RESERVATION as APP
from sre_env.errors import ApiError
from sre_env.shell import ShellContext, run_command
from sre_env.sim.backend import SimBackend
from sre_env.sim.episodes import healthy_world
from sre_env.sim.kernel.world import World

NS = APP.namespace
TAINT = "1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }"


@pytest.fixture(scope="module")
def base() -> World:
    return healthy_world(APP)


@pytest.fixture
def world(base: World) -> World:
    return base.fork()


@pytest.fixture
def backend(world: World) -> SimBackend:
    return SimBackend(world)


def sh(backend: SimBackend, command: str) -> str:
    return run_command(ShellContext(backend, NS), command).output


def live_pods(backend: SimBackend, comp: str, ns: str = NS) -> list[dict]:
    return [p for p in backend.api.list("Pod", ns, f"io.kompose.service={comp}") if not p["metadata"].get("deletionTimestamp")]


def events(backend: SimBackend, reason: str, ns: str = NS) -> list[dict]:
    return [e for e in backend.api.list("Event", ns) if e["reason"] == reason]


def scheduled_message(pod: dict) -> str:
    return next(c["message"] for c in pod["status"]["conditions"] if c["type"] == "PodScheduled")


def patch_template(backend: SimBackend, name: str, spec: dict) -> None:
    backend.api.patch("Deployment", name, NS, {"spec": {"template": {"spec": spec}}}, "strategic")


def pending_new_pod(backend: SimBackend, comp: str) -> dict:
    pending = [p for p in live_pods(backend, comp) if not p["spec"].get("nodeName")]
    assert pending, f"no pending {comp} pod"
    return pending[0]


# --------------------------------------------------------------------------- scheduler predicates
def test_node_selector_matching_no_node(backend: SimBackend) -> None:
    patch_template(backend, "geo", {"nodeSelector": {"kubernetes.io/hostname": "worker-4"}})
    backend.advance(20)
    msg = scheduled_message(pending_new_pod(backend, "geo"))
    assert msg == (
        f"0/4 nodes are available: {TAINT}, 3 node(s) didn't match Pod's node affinity/selector. "
        "preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling."
    )
    # the rolling update keeps the old pod serving while the new one cannot be placed
    assert any(p["spec"].get("nodeName") for p in live_pods(backend, "geo"))


def test_required_node_affinity_is_a_filter(backend: SimBackend) -> None:
    affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchExpressions": [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["worker-2"]}]}]}}}
    patch_template(backend, "search", {"affinity": affinity})
    backend.advance(30)
    nodes = {p["spec"].get("nodeName") for p in live_pods(backend, "search")}
    assert nodes == {"worker-2"}


def test_unsatisfiable_anti_affinity(backend: SimBackend) -> None:
    term = {"labelSelector": {"matchExpressions": [{"key": "io.kompose.service", "operator": "Exists"}]}, "topologyKey": "kubernetes.io/hostname"}
    patch_template(backend, "rate", {"affinity": {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}})
    backend.advance(20)
    msg = scheduled_message(pending_new_pod(backend, "rate"))
    assert msg == (
        f"0/4 nodes are available: {TAINT}, 3 node(s) didn't match pod anti-affinity rules. "
        "preemption: 0/4 nodes are available: 1 Preemption is not helpful for scheduling, 3 No preemption victims found for incoming pod."
    )


def test_request_larger_than_any_node(backend: SimBackend) -> None:
    patch_template(backend, "profile", {"containers": [{"name": "hotel-reserv-profile", "resources": {"requests": {"cpu": "12"}, "limits": {"cpu": "12"}}}]})
    backend.advance(20)
    pod = pending_new_pod(backend, "profile")
    assert scheduled_message(pod) == (
        f"0/4 nodes are available: {TAINT}, 3 Insufficient cpu. "
        "preemption: 0/4 nodes are available: 1 Preemption is not helpful for scheduling, 3 No preemption victims found for incoming pod."
    )
    out = sh(backend, f"kubectl describe pod {pod['metadata']['name']}")
    assert "FailedScheduling" in out and "3 Insufficient cpu" in out


def test_requests_default_to_limits(backend: SimBackend) -> None:
    patch_template(backend, "user", {"containers": [{"name": "hotel-reserv-user", "resources": {"limits": {"cpu": "1000m", "memory": "256Mi"}, "requests": None}}]})
    backend.advance(20)
    pod = live_pods(backend, "user")[-1]
    assert pod["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "1000m", "memory": "256Mi"}


# --------------------------------------------------------------------------- taints
def test_noexecute_taint_evicts_and_pins_local_volumes(backend: SimBackend) -> None:
    api = backend.api
    mongo = live_pods(backend, "mongodb-rate")[0]
    node = mongo["spec"]["nodeName"]
    api.patch("Node", node, None, {"spec": {"taints": [{"key": "maintenance", "value": "true", "effect": "NoExecute"}]}}, "merge")
    backend.advance(30)
    evicted = [e for e in events(backend, "TaintManagerEviction") if e["involvedObject"]["name"] == mongo["metadata"]["name"]]
    assert evicted and evicted[0]["message"] == f"Marking for deletion Pod {NS}/{mongo['metadata']['name']}"
    assert evicted[0]["source"]["component"] == "taint-eviction-controller"
    replacement = live_pods(backend, "mongodb-rate")[0]
    assert not replacement["spec"].get("nodeName")
    msg = scheduled_message(replacement)
    assert "1 node(s) had untolerated taint {maintenance: true}" in msg and "2 node(s) had volume node affinity conflict" in msg
    # stateless pods moved to the other workers
    assert all(p["spec"]["nodeName"] != node for p in api.list("Pod", NS) if p["spec"].get("nodeName"))
    api.patch("Node", node, None, {"spec": {"taints": None}}, "merge")
    backend.advance(40)
    assert live_pods(backend, "mongodb-rate")[0]["spec"].get("nodeName") == node


# --------------------------------------------------------------------------- priority and preemption
def test_builtin_priority_classes_and_admission(backend: SimBackend) -> None:
    out = sh(backend, "kubectl get priorityclass")
    assert out.splitlines()[0].split() == ["NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"]
    assert "system-cluster-critical   2000000000   false" in out
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x", "namespace": NS}, "spec": {"priorityClassName": "nope", "containers": [{"name": "c", "image": "busybox:1.36"}]}}
    with pytest.raises(ApiError) as err:
        backend.api.create(pod)
    assert err.value.message == 'pods "x" is forbidden: no PriorityClass with name nope was found'
    coredns = backend.api.list("Pod", "kube-system", "k8s-app=kube-dns")
    backend.api.delete("Pod", coredns[0]["metadata"]["name"], "kube-system")
    backend.advance(15)
    fresh = [p for p in backend.api.list("Pod", "kube-system", "k8s-app=kube-dns") if p["metadata"]["name"] != coredns[0]["metadata"]["name"]]
    assert any(p["spec"].get("priority") == 2000000000 for p in fresh)


def _hog(cpu: str, priority_class: str | None, name: str = "hog") -> dict:
    spec: dict = {"containers": [{"name": "hog", "image": "busybox:1.36", "resources": {"requests": {"cpu": cpu}}}]}
    if priority_class:
        spec["priorityClassName"] = priority_class
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def test_preemption_evicts_lower_priority_pods(backend: SimBackend) -> None:
    api = backend.api
    api.create({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "urgent"}, "value": 1000, "preemptionPolicy": "PreemptLowerPriority"})
    api.create(_hog("7800m", "urgent"))
    backend.advance(5)
    hog = api.get("Pod", "hog", "default")
    node = hog["status"].get("nominatedNodeName")
    assert node and not hog["spec"].get("nodeName")
    preempted = events(backend, "Preempted")
    assert preempted and all(e["message"] == f"Preempted by pod {hog['metadata']['uid']} on node {node}" for e in preempted)
    assert all(e["source"]["component"] == "default-scheduler" for e in preempted)
    backend.advance(15)
    assert api.get("Pod", "hog", "default")["spec"].get("nodeName") == node
    # the victims' replacements cannot come back and cannot preempt a higher priority
    pending = [p for p in api.list("Pod", NS) if not p["spec"].get("nodeName") and not p["metadata"].get("deletionTimestamp")]
    assert pending
    assert "Insufficient cpu" in scheduled_message(pending[0])
    out = sh(backend, f"kubectl get events -n {NS} --field-selector reason=Preempted")
    assert f"on node {node}" in out


def test_equal_priority_does_not_preempt(backend: SimBackend) -> None:
    backend.api.create(_hog("7800m", None))
    backend.advance(10)
    hog = backend.api.get("Pod", "hog", "default")
    assert not hog["spec"].get("nodeName") and not events(backend, "Preempted")
    assert scheduled_message(hog).endswith("preemption: 0/4 nodes are available: 1 Preemption is not helpful for scheduling, 3 No preemption victims found for incoming pod.")


def test_scheduling_queue_prefers_higher_priority(backend: SimBackend) -> None:
    api = backend.api
    api.create({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "low"}, "value": -10, "preemptionPolicy": "Never"})
    # both want nearly all of one worker; created first, the low one still waits for the other
    api.create(_hog("7000m", "low", "batch"))
    api.create(_hog("7000m", None, "web"))
    backend.advance(5)
    placed = {n: api.get("Pod", n, "default")["spec"].get("nodeName") for n in ("batch", "web")}
    assert placed["web"]


# --------------------------------------------------------------------------- quota
QUOTA = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "compute", "namespace": NS}, "spec": {"hard": {"pods": "40", "requests.cpu": "1"}}}


def test_quota_refuses_replacement_pods_with_the_api_error(backend: SimBackend) -> None:
    api = backend.api
    api.create(copy.deepcopy(QUOTA))
    backend.advance(5)
    quota = api.get("ResourceQuota", "compute", NS)
    assert quota["status"]["used"]["requests.cpu"] == "1900m" and quota["status"]["hard"]["requests.cpu"] == "1"
    old = live_pods(backend, "geo")[0]
    api.delete("Pod", old["metadata"]["name"], NS)
    backend.advance(15)
    assert not live_pods(backend, "geo")
    rs = api.list("ReplicaSet", NS, "io.kompose.service=geo")[0]
    failed = [e for e in events(backend, "FailedCreate") if e["involvedObject"]["name"] == rs["metadata"]["name"]]
    assert failed[0]["message"] == (
        f'Error creating: pods "{rs["metadata"]["name"]}-" is forbidden: exceeded quota: compute, '
        "requested: requests.cpu=100m, used: requests.cpu=1800m, limited: requests.cpu=1"
    )
    assert failed[0]["source"]["component"] == "replicaset-controller"
    assert any(c["type"] == "ReplicaFailure" for c in api.get("ReplicaSet", rs["metadata"]["name"], NS)["status"]["conditions"])
    out = sh(backend, "kubectl get quota")
    assert out.splitlines()[0].split() == ["NAME", "AGE", "REQUEST", "LIMIT"]
    assert "pods: 18/40, requests.cpu: 1800m/1" in out
    desc = sh(backend, "kubectl describe resourcequota compute")
    assert "requests.cpu  1800m  1" in desc and "Resource      Used   Hard" in desc
    assert "Resource Quotas" in sh(backend, f"kubectl describe namespace {NS}")
    # raising the quota lets the controller's retry through at once
    sh(backend, "kubectl patch resourcequota compute --type=merge -p '{\"spec\":{\"hard\":{\"requests.cpu\":\"4\"}}}'")
    backend.advance(30)
    assert live_pods(backend, "geo") and live_pods(backend, "geo")[0]["spec"].get("nodeName")


def test_quota_requires_requests_it_tracks(backend: SimBackend) -> None:
    api = backend.api
    q = copy.deepcopy(QUOTA)
    q["spec"]["hard"] = {"requests.memory": "10Gi"}
    api.create(q)
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "tool", "namespace": NS}, "spec": {"containers": [{"name": "tool", "image": "busybox:1.36"}]}}
    with pytest.raises(ApiError) as err:
        api.create(pod)
    assert err.value.message == 'pods "tool" is forbidden: failed quota: compute: must specify requests.memory for: tool'


# --------------------------------------------------------------------------- HPA
def _hpa(name: str, target: int = 50) -> dict:
    return {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
            "minReplicas": 1,
            "maxReplicas": 4,
            "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": target}}}],
        },
    }


def test_hpa_without_cpu_requests_reports_unknown(backend: SimBackend) -> None:
    api = backend.api
    api.patch("Deployment", "frontend", NS, [{"op": "replace", "path": "/spec/template/spec/containers/0/resources", "value": {}}], "json")
    backend.advance(20)
    api.create(_hpa("frontend"))
    backend.advance(45)
    out = sh(backend, "kubectl get hpa")
    assert out.splitlines()[0].split() == ["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"]
    assert "Deployment/frontend   cpu: <unknown>/50%   1         4         1" in out
    pod = live_pods(backend, "frontend")[0]["metadata"]["name"]
    msg = f"failed to get cpu utilization: missing request for cpu in container hotel-reserv-frontend of Pod {pod}"
    assert [e["message"] for e in events(backend, "FailedGetResourceMetric")] == [msg]
    desc = sh(backend, "kubectl describe hpa frontend")
    assert "<unknown> / 50%" in desc and "FailedGetResourceMetric" in desc and "ScalingActive" in desc
    assert api.get("Deployment", "frontend", NS)["spec"]["replicas"] == 1


def test_hpa_scales_on_cpu_utilisation(backend: SimBackend, world: World) -> None:
    api = backend.api
    api.create(_hpa("frontend"))
    world.set_load_factor(APP.name, 4.0)
    backend.advance(60)
    hpa = api.get("HorizontalPodAutoscaler", "frontend", NS)
    assert hpa["status"]["currentMetrics"][0]["resource"]["current"]["averageUtilization"] > 50
    assert api.get("Deployment", "frontend", NS)["spec"]["replicas"] == 4
    rescale = events(backend, "SuccessfulRescale")
    assert rescale and rescale[0]["message"] == "New size: 4; reason: cpu resource utilization (percentage of request) above target"
    assert "cpu: " in sh(backend, "kubectl get hpa frontend") and "<unknown>" not in sh(backend, "kubectl get hpa frontend")


def test_priority_class_value_is_immutable(backend: SimBackend) -> None:
    out = sh(backend, "kubectl patch priorityclass system-cluster-critical --type=merge -p '{\"value\":5}'")
    # kubectl prints a refused write from the Status's details: kind and name
    assert out == 'The PriorityClass "system-cluster-critical" is invalid: value: Forbidden: may not be changed in an update.\n'


def test_refused_creates_surface_on_the_deployment(backend: SimBackend) -> None:
    api = backend.api
    api.create(copy.deepcopy(QUOTA))
    old = live_pods(backend, "search")[0]
    api.delete("Pod", old["metadata"]["name"], NS)
    backend.advance(20)
    out = sh(backend, "kubectl describe deployment search")
    assert "ReplicaFailure   True    FailedCreate" in out
    # back-off: the refusals are retried, folded into one event with a growing count
    backend.advance(120)
    failed = [e for e in events(backend, "FailedCreate") if e["involvedObject"]["name"].startswith("search-")]
    assert len(failed) == 1 and 3 <= failed[0]["count"] <= 6


def test_imperative_create_commands(backend: SimBackend) -> None:
    assert sh(backend, "kubectl create priorityclass batch-low --value=-100 --preemption-policy=Never") == "priorityclass.scheduling.k8s.io/batch-low created\n"
    pc = backend.api.get("PriorityClass", "batch-low")
    assert pc["value"] == -100 and pc["preemptionPolicy"] == "Never" and pc["globalDefault"] is False
    assert sh(backend, "kubectl create quota compute --hard=pods=40,requests.cpu=4") == "resourcequota/compute created\n"
    assert backend.api.get("ResourceQuota", "compute", NS)["spec"]["hard"] == {"pods": "40", "requests.cpu": "4"}
    assert sh(backend, "kubectl autoscale deployment/frontend --min=1 --max=3") == "horizontalpodautoscaler.autoscaling/frontend autoscaled\n"
    hpa = backend.api.get("HorizontalPodAutoscaler", "frontend", NS)
    assert hpa["spec"]["maxReplicas"] == 3 and hpa["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"] == 80
    assert "cpu: <unknown>/80%" in sh(backend, "kubectl get hpa")
    assert "not found" in sh(backend, "kubectl autoscale deployment/nope --max=3")


def test_get_all_lists_autoscalers(backend: SimBackend) -> None:
    backend.api.create(_hpa("geo"))
    out = sh(backend, "kubectl get all")
    assert "horizontalpodautoscaler.autoscaling/geo   Deployment/geo" in out
