"""Behaviour of the simulated control plane, driven the way kubectl drives a cluster.

Every test forks one warmed-up healthy hotel-reservation cluster, acts through
``SimBackend(world).api`` and lets cluster time pass with ``world.advance``;
assertions are about what the API then serves (pods, ReplicaSets, Events,
Endpoints, logs), compared with what a real cluster does.
"""

from __future__ import annotations

import copy

import pytest

from sre_env.apps.hotel_reservation import HOTEL_RESERVATION as APP
from sre_env.errors import ApiError
from sre_env.sim.backend import SimBackend
from sre_env.sim.control.controllers import pod_is_ready
from sre_env.sim.engine import advance, build_world
from sre_env.sim.episodes import healthy_world
from sre_env.sim.kernel.clock import TICK_S
from sre_env.sim.kernel.world import World

NS = APP.namespace
REVISION = "deployment.kubernetes.io/revision"
TAINT = "1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }"
WORKERS = ("worker-1", "worker-2", "worker-3")


# --------------------------------------------------------------------------- fixtures and helpers
@pytest.fixture(scope="module")
def base() -> World:
    return healthy_world(APP)


@pytest.fixture
def world(base: World) -> World:
    return base.fork()


@pytest.fixture
def api(world: World):
    return SimBackend(world).api


def pods(api, comp: str) -> list[dict]:
    return api.list("Pod", NS, label_selector=f"io.kompose.service={comp}")


def live(api, comp: str) -> list[dict]:
    return [p for p in pods(api, comp) if not p["metadata"].get("deletionTimestamp")]


def replicasets(api, comp: str) -> list[dict]:
    return api.list("ReplicaSet", NS, label_selector=f"io.kompose.service={comp}")


def rs_by_revision(api, comp: str) -> dict[int, dict]:
    return {int(r["metadata"]["annotations"][REVISION]): r for r in replicasets(api, comp)}


def cstatus(pod: dict) -> dict:
    return pod["status"]["containerStatuses"][0]


def events(api, prefix: str, reason: str | None = None) -> list[dict]:
    return [
        e
        for e in api.list("Event", NS)
        if e["involvedObject"]["name"].startswith(prefix) and (reason is None or e["reason"] == reason)
    ]


def container(dep: dict) -> dict:
    return dep["spec"]["template"]["spec"]["containers"][0]


def patch_container(api, comp: str, **fields) -> None:
    name = container(api.get("Deployment", comp, NS))["name"]
    api.patch("Deployment", comp, NS, {"spec": {"template": {"spec": {"containers": [{"name": name, **fields}]}}}})


def remove_env(api, comp: str, var: str) -> None:
    env = container(api.get("Deployment", comp, NS))["env"]
    idx = [e["name"] for e in env].index(var)
    api.patch("Deployment", comp, NS, [{"op": "remove", "path": f"/spec/template/spec/containers/0/env/{idx}"}], "json")


def cordon(api, *nodes: str, on: bool = True) -> None:
    for n in nodes:
        api.patch("Node", n, None, {"spec": {"unschedulable": True if on else None}})


def scheduling_message(pod: dict) -> str:
    cond = next(c for c in pod["status"]["conditions"] if c["type"] == "PodScheduled")
    assert cond["status"] == "False" and cond["reason"] == "Unschedulable"
    return cond["message"]


def client_success(world: World) -> float:
    return world.last_traffic[APP.name].client_success


def settle(world: World, seconds: float = 60.0) -> None:
    advance(world, seconds)


# --------------------------------------------------------------------------- 1. healthy cluster
def test_healthy_cluster_is_running_ready_and_serving(world, api):
    deps = api.list("Deployment", NS)
    assert {d["metadata"]["name"] for d in deps} == {c.name for c in APP.components}
    for dep in deps:
        st = dep["status"]
        want = dep["spec"]["replicas"]
        assert st.get("availableReplicas") == want and st.get("readyReplicas") == want and st.get("updatedReplicas") == want, dep["metadata"]["name"]
        assert st["observedGeneration"] == dep["metadata"]["generation"]
        assert {c["type"]: c["status"] for c in st["conditions"]} == {"Available": "True", "Progressing": "True"}
        assert dep["metadata"]["annotations"][REVISION] == "1"
    app_pods = api.list("Pod", NS)
    assert len(app_pods) == sum(c.replicas for c in APP.components)
    for pod in app_pods:
        assert pod["status"]["phase"] == "Running", pod["metadata"]["name"]
        assert pod_is_ready(pod), pod["metadata"]["name"]
        assert all(cs["ready"] and "running" in cs["state"] for cs in pod["status"]["containerStatuses"])
        assert pod["spec"]["nodeName"] in WORKERS  # the control plane is tainted
    for svc in api.list("Service", NS):
        ep = api.get("Endpoints", svc["metadata"]["name"], NS)
        subsets = ep.get("subsets") or []
        assert subsets and all(s.get("addresses") and not s.get("notReadyAddresses") for s in subsets), svc["metadata"]["name"]
    for pvc in api.list("PersistentVolumeClaim", NS):
        assert pvc["status"]["phase"] == "Bound"
        assert api.get("PersistentVolume", pvc["spec"]["volumeName"])["status"]["phase"] == "Bound"
    assert client_success(world) == pytest.approx(1.0, abs=1e-6)
    advance(world, 60)  # and it stays that way
    assert client_success(world) == pytest.approx(1.0, abs=1e-6)
    assert not [e for e in api.list("Event", NS) if e["type"] == "Warning"]


# --------------------------------------------------------------------------- 2. rolling update
def test_rolling_update_respects_max_surge_and_max_unavailable(world, api):
    api.scale("Deployment", "search", NS, 4)
    settle(world)
    assert len(live(api, "search")) == 4 and all(map(pod_is_ready, live(api, "search")))
    gen = api.get("Deployment", "search", NS)["metadata"]["generation"]
    patch_container(api, "search", env=[{"name": "JAEGER_SAMPLE_RATIO", "value": "0.5"}])
    assert api.get("Deployment", "search", NS)["metadata"]["generation"] == gen + 1
    max_pods, min_ready, saw_both = 0, 4, False
    for _ in range(40):
        advance(world, TICK_S)
        ps = live(api, "search")
        max_pods = max(max_pods, len(ps))
        min_ready = min(min_ready, sum(map(pod_is_ready, ps)))
        saw_both |= len({p["metadata"]["labels"]["pod-template-hash"] for p in ps}) == 2
    # replicas 4, 25 %/25 %: maxSurge rounds up to 1, maxUnavailable down to 1
    assert max_pods == 5
    assert min_ready >= 3
    assert saw_both
    revs = rs_by_revision(api, "search")
    assert sorted(revs) == [1, 2]
    new, old = revs[2], revs[1]
    assert new["spec"]["replicas"] == 4 and new["status"]["availableReplicas"] == 4
    assert old["spec"]["replicas"] == 0 and old["status"]["replicas"] == 0
    dep = api.get("Deployment", "search", NS)
    assert dep["metadata"]["annotations"][REVISION] == "2"
    assert dep["status"]["updatedReplicas"] == 4 and dep["status"]["availableReplicas"] == 4
    assert dep["status"]["observedGeneration"] == dep["metadata"]["generation"]
    progressing = next(c for c in dep["status"]["conditions"] if c["type"] == "Progressing")
    assert progressing["reason"] == "NewReplicaSetAvailable" and new["metadata"]["name"] in progressing["message"]
    for p in live(api, "search"):
        assert p["metadata"]["labels"]["pod-template-hash"] == new["metadata"]["labels"]["pod-template-hash"]
        assert p["metadata"]["ownerReferences"][0]["uid"] == new["metadata"]["uid"]
        assert {"name": "JAEGER_SAMPLE_RATIO", "value": "0.5"} in p["spec"]["containers"][0]["env"]
    scaled = [e["message"] for e in events(api, "search", "ScalingReplicaSet")]
    assert f"Scaled up replica set {new['metadata']['name']} from 0 to 1" in scaled
    assert f"Scaled down replica set {old['metadata']['name']} from 1 to 0" in scaled
    assert client_success(world) == pytest.approx(1.0, abs=1e-6)


def test_rolling_update_with_unpullable_image_stalls_within_budget(world, api):
    api.scale("Deployment", "search", NS, 4)
    settle(world)
    patch_container(api, "search", image="yinfangchen/hotelreservation:does-not-exist")
    for _ in range(24):
        advance(world, TICK_S)
        ps = live(api, "search")
        assert len(ps) <= 5
        assert sum(map(pod_is_ready, ps)) >= 3
    revs = rs_by_revision(api, "search")
    # the deployment controller's fixed point: new = surge + unavailable, old = desired - unavailable
    assert revs[2]["spec"]["replicas"] == 2 and revs[1]["spec"]["replicas"] == 3
    assert revs[1]["status"]["availableReplicas"] == 3
    dep = api.get("Deployment", "search", NS)
    assert dep["status"]["unavailableReplicas"] == 2 and dep["status"]["availableReplicas"] == 3
    assert next(c for c in dep["status"]["conditions"] if c["type"] == "Available")["status"] == "True"
    assert client_success(world) == pytest.approx(1.0, abs=1e-6)


def test_recreate_strategy_stops_old_pods_before_starting_new(world, api):
    dep = api.get("Deployment", "mongodb-geo", NS)
    assert dep["spec"]["strategy"]["type"] == "Recreate"
    old_hash = live(api, "mongodb-geo")[0]["metadata"]["labels"]["pod-template-hash"]
    api.patch("Deployment", "mongodb-geo", NS, {"spec": {"template": {"metadata": {"annotations": {"kubectl.kubernetes.io/restartedAt": "2026-03-02T09:20:00Z"}}}}})
    seen_gap = False
    for _ in range(12):
        advance(world, TICK_S)
        hashes = {p["metadata"]["labels"]["pod-template-hash"] for p in pods(api, "mongodb-geo")}
        assert len(hashes) <= 1, "old and new pods of a Recreate deployment never coexist"
        seen_gap |= not hashes
    assert seen_gap
    revs = rs_by_revision(api, "mongodb-geo")
    assert revs[1]["spec"]["replicas"] == 0 and revs[2]["spec"]["replicas"] == 1
    (pod,) = live(api, "mongodb-geo")
    assert pod["metadata"]["labels"]["pod-template-hash"] != old_hash and pod_is_ready(pod)
    msgs = [e["message"] for e in events(api, "mongodb-geo", "ScalingReplicaSet")]
    down = msgs.index(f"Scaled down replica set {revs[1]['metadata']['name']} from 1 to 0")
    up = msgs.index(f"Scaled up replica set {revs[2]['metadata']['name']} from 0 to 1")
    assert down < up


# --------------------------------------------------------------------------- 3. rollout undo
def test_rollout_undo_makes_the_old_replicaset_the_newest_revision(world, api):
    patch_container(api, "search", env=[{"name": "JAEGER_SAMPLE_RATIO", "value": "0.5"}])
    settle(world)
    revs = rs_by_revision(api, "search")
    assert sorted(revs) == [1, 2]
    first = revs[1]
    first_name, first_hash = first["metadata"]["name"], first["metadata"]["labels"]["pod-template-hash"]
    # kubectl rollout undo: the previous ReplicaSet's template, minus pod-template-hash, into the deployment
    template = copy.deepcopy(first["spec"]["template"])
    del template["metadata"]["labels"]["pod-template-hash"]
    api.patch("Deployment", "search", NS, [{"op": "replace", "path": "/spec/template", "value": template}], "json")
    settle(world)
    revs = rs_by_revision(api, "search")
    assert sorted(revs) == [2, 3]
    assert revs[3]["metadata"]["name"] == first_name  # no new ReplicaSet: the old one is reused
    assert revs[3]["spec"]["replicas"] == 1 and revs[2]["spec"]["replicas"] == 0
    assert api.get("Deployment", "search", NS)["metadata"]["annotations"][REVISION] == "3"
    (pod,) = live(api, "search")
    assert pod["metadata"]["labels"]["pod-template-hash"] == first_hash and pod_is_ready(pod)
    assert len(replicasets(api, "search")) == 2


# --------------------------------------------------------------------------- 4. crash loop
def test_missing_required_env_crash_loops_with_growing_back_off(world, api):
    api.scale("Deployment", "geo", NS, 0)
    settle(world, 15)
    remove_env(api, "geo", "GEO_MONGO_ADDRESS")
    api.scale("Deployment", "geo", NS, 1)
    restarts: list[tuple[float, int]] = []
    messages: set[str] = set()
    last = -1
    for _ in range(int(1300 / TICK_S)):
        advance(world, TICK_S)
        (pod,) = live(api, "geo")
        cs = cstatus(pod)
        if cs["restartCount"] != last:
            restarts.append((world.clock.now, cs["restartCount"]))
            last = cs["restartCount"]
        waiting = cs["state"].get("waiting")
        if waiting:
            assert waiting["reason"] == "CrashLoopBackOff"
            messages.add(waiting["message"].split(" restarting")[0])
    counts = [n for _, n in restarts]
    assert counts == list(range(counts[0], counts[0] + len(counts)))  # +1 at a time
    assert counts[-1] >= 8
    # the first restart is immediate, then 10 s, 20 s, 40 s ... capped at 5 min
    # (each gap also holds the second the process lives and at most one tick of observation)
    gaps = [b[0] - a[0] for a, b in zip(restarts[1:], restarts[2:])]
    want = [10, 20, 40, 80, 160, 300, 300]
    for gap, delay in zip(gaps, want):
        assert delay <= gap <= delay + TICK_S + 1, (gaps, want)
    assert {"back-off 10s", "back-off 20s", "back-off 40s", "back-off 1m20s", "back-off 2m40s", "back-off 5m0s"} <= messages
    assert not any(m.startswith("back-off 10m") or m == "back-off 5m20s" for m in messages)
    (pod,) = live(api, "geo")
    cs = cstatus(pod)
    assert cs["ready"] is False and pod["status"]["phase"] == "Running"
    term = cs["lastState"]["terminated"]
    assert term["exitCode"] == 1 and term["reason"] == "Error"
    prev = api.logs(pod["metadata"]["name"], NS, previous=True)
    fatal = [line for line in prev.splitlines() if "GEO_MONGO_ADDRESS" in line]
    assert fatal and ("FTL" in fatal[-1] or "fatal" in fatal[-1].lower())
    backoff = events(api, pod["metadata"]["name"], "BackOff")
    assert backoff and backoff[0]["type"] == "Warning" and backoff[0]["message"].startswith("Back-off restarting failed container hotel-reserv-geo")
    assert not api.get("Endpoints", "geo", NS).get("subsets", [{}])[0].get("addresses")
    # restoring the variable rolls out a healthy pod
    patch_container(api, "geo", env=[{"name": "GEO_MONGO_ADDRESS", "value": "mongodb-geo:27017"}])
    settle(world)
    (pod,) = live(api, "geo")
    assert pod_is_ready(pod) and cstatus(pod)["restartCount"] == 0
    assert client_success(world) == pytest.approx(1.0, abs=1e-6)


# --------------------------------------------------------------------------- 5. image pulls
def test_unknown_image_tag_err_image_pull_then_back_off_then_recovers(world, api):
    good = container(api.get("Deployment", "search", NS))["image"]
    (old,) = live(api, "search")
    bad = good.rsplit(":", 1)[0] + ":v9.9.9-missing"
    patch_container(api, "search", image=bad)
    reasons = []
    for _ in range(12):
        advance(world, TICK_S)
        for p in live(api, "search"):
            if p["metadata"]["name"] != old["metadata"]["name"]:
                w = cstatus(p)["state"].get("waiting", {})
                reasons.append(w.get("reason"))
                assert p["status"]["phase"] == "Pending" and not pod_is_ready(p)
    assert "ErrImagePull" in reasons and "ImagePullBackOff" in reasons
    assert reasons.index("ErrImagePull") < reasons.index("ImagePullBackOff")
    new = next(p for p in live(api, "search") if p["metadata"]["name"] != old["metadata"]["name"])
    failed = [e["message"] for e in events(api, new["metadata"]["name"], "Failed")]
    assert any(m.startswith(f'Failed to pull image "{bad}"') and "not found" in m for m in failed)
    assert "Error: ErrImagePull" in failed and "Error: ImagePullBackOff" in failed
    assert all(e["type"] == "Warning" for e in events(api, new["metadata"]["name"], "Failed"))
    assert [e["message"] for e in events(api, new["metadata"]["name"], "BackOff")] == [f'Back-off pulling image "{bad}"']
    # maxUnavailable rounds down to 0 for one replica: the old pod keeps serving
    assert pod_is_ready(api.get("Pod", old["metadata"]["name"], NS))
    assert client_success(world) == pytest.approx(1.0, abs=1e-6)
    patch_container(api, "search", image=good)
    settle(world, 30)
    (pod,) = live(api, "search")
    assert pod_is_ready(pod) and cstatus(pod)["image"] == good
    assert rs_by_revision(api, "search")[2]["spec"]["replicas"] == 0


def test_unknown_image_on_fresh_pod_recovers_when_fixed(world, api):
    patch_container(api, "user", image="yinfangchen/hotelreservation:nope")
    (old,) = live(api, "user")
    api.delete("Pod", old["metadata"]["name"], NS)  # the old pod goes; only the broken template remains
    advance(world, 60)
    assert all(cstatus(p)["state"].get("waiting", {}).get("reason") in ("ErrImagePull", "ImagePullBackOff") for p in live(api, "user"))
    assert client_success(world) < 0.999
    patch_container(api, "user", image="yinfangchen/hotelreservation:latest")
    settle(world)
    assert [pod_is_ready(p) for p in live(api, "user")] == [True]
    assert client_success(world) == pytest.approx(1.0, abs=1e-6)


# --------------------------------------------------------------------------- 6. start errors, OOM
def test_binary_missing_from_image_is_start_error_and_crash_loop(world, api):
    patch_container(api, "rate", command=["rate-server"])
    advance(world, 60)
    new = [p for p in live(api, "rate") if p["metadata"]["labels"]["pod-template-hash"] == rs_by_revision(api, "rate")[2]["metadata"]["labels"]["pod-template-hash"]]
    (pod,) = new
    cs = cstatus(pod)
    assert cs["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    term = cs["lastState"]["terminated"]
    assert term["reason"] == "StartError" and term["exitCode"] == 128
    assert 'exec: "rate-server": executable file not found in $PATH' in term["message"]
    assert cs["restartCount"] >= 2 and not cs["ready"]
    failed = [e["message"] for e in events(api, pod["metadata"]["name"], "Failed")]
    assert any(m.startswith("Error: failed to create containerd task") and "rate-server" in m for m in failed)
    # the kubelet serves the last terminated container's log: a process that never ran printed nothing
    assert api.logs(pod["metadata"]["name"], NS) == ""


def test_memory_limit_below_working_set_is_oom_killed(world, api):
    patch_container(api, "profile", resources={"limits": {"memory": "16Mi"}, "requests": {"cpu": "100m", "memory": "16Mi"}})
    advance(world, 90)
    rev2 = rs_by_revision(api, "profile")[2]["metadata"]["labels"]["pod-template-hash"]
    (pod,) = [p for p in live(api, "profile") if p["metadata"]["labels"]["pod-template-hash"] == rev2]
    cs = cstatus(pod)
    term = cs["lastState"]["terminated"]
    assert term["reason"] == "OOMKilled" and term["exitCode"] == 137
    assert cs["restartCount"] >= 2
    assert "running" in cs["state"] or cs["state"]["waiting"]["reason"] == "CrashLoopBackOff"
    # fixing the limit recovers
    patch_container(api, "profile", resources={"limits": {"memory": "256Mi"}, "requests": {"cpu": "100m", "memory": "64Mi"}})
    settle(world, 90)
    (pod,) = live(api, "profile")
    assert pod_is_ready(pod) and cstatus(pod)["restartCount"] == 0
    assert client_success(world) == pytest.approx(1.0, abs=1e-6)


# --------------------------------------------------------------------------- 7. scheduler
def _replace_pod(world, api, comp: str) -> dict:
    (old,) = live(api, comp)
    api.delete("Pod", old["metadata"]["name"], NS)
    advance(world, 2 * TICK_S)
    (pod,) = live(api, comp)
    assert pod["metadata"]["name"] != old["metadata"]["name"]
    return pod


def test_all_workers_cordoned_leaves_new_pods_pending(world, api):
    cordon(api, *WORKERS)
    pod = _replace_pod(world, api, "frontend")
    assert pod["status"]["phase"] == "Pending" and not pod["spec"].get("nodeName")
    want = f"0/4 nodes are available: {TAINT}, 3 node(s) were unschedulable. preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling."
    assert scheduling_message(pod) == want
    ev = events(api, pod["metadata"]["name"], "FailedScheduling")
    assert [(e["type"], e["message"]) for e in ev] == [("Warning", want)]
    assert client_success(world) == 0.0
    # uncordon one worker: the pod is bound there and starts
    cordon(api, "worker-2", on=False)
    advance(world, 30)
    pod = api.get("Pod", pod["metadata"]["name"], NS)
    assert pod["spec"]["nodeName"] == "worker-2" and pod_is_ready(pod)
    assert events(api, pod["metadata"]["name"], "Scheduled")[0]["message"] == f"Successfully assigned {NS}/{pod['metadata']['name']} to worker-2"
    assert client_success(world) == pytest.approx(1.0, abs=1e-6)


def test_node_selector_on_missing_label(world, api):
    api.patch("Deployment", "search", NS, {"spec": {"template": {"spec": {"nodeSelector": {"disktype": "ssd"}}}}})
    advance(world, 3 * TICK_S)
    rev2 = rs_by_revision(api, "search")[2]["metadata"]["labels"]["pod-template-hash"]
    (pod,) = [p for p in live(api, "search") if p["metadata"]["labels"]["pod-template-hash"] == rev2]
    assert scheduling_message(pod) == (
        f"0/4 nodes are available: {TAINT}, 3 node(s) didn't match Pod's node affinity/selector. "
        "preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling."
    )
    assert len(live(api, "search")) == 2  # the old pod stays (maxUnavailable 0)
    api.patch("Node", "worker-3", None, {"metadata": {"labels": {"disktype": "ssd"}}})
    advance(world, 30)
    (pod,) = live(api, "search")
    assert pod["spec"]["nodeName"] == "worker-3" and pod_is_ready(pod)


def test_huge_cpu_request_is_insufficient_cpu(world, api):
    patch_container(api, "search", resources={"requests": {"cpu": "64"}, "limits": {"cpu": "64"}})
    advance(world, 3 * TICK_S)
    rev2 = rs_by_revision(api, "search")[2]["metadata"]["labels"]["pod-template-hash"]
    (pod,) = [p for p in live(api, "search") if p["metadata"]["labels"]["pod-template-hash"] == rev2]
    assert scheduling_message(pod) == (
        f"0/4 nodes are available: {TAINT}, 3 Insufficient cpu. "
        "preemption: 0/4 nodes are available: 1 Preemption is not helpful for scheduling, 3 No preemption victims found for incoming pod."
    )


def test_cpu_and_memory_both_short_are_both_reported(world, api):
    # the limits go up too: a request above its limit is refused by validation
    patch_container(api, "search", resources={"requests": {"cpu": "64", "memory": "512Gi"}, "limits": {"cpu": "64", "memory": "512Gi"}})
    advance(world, 3 * TICK_S)
    rev2 = rs_by_revision(api, "search")[2]["metadata"]["labels"]["pod-template-hash"]
    (pod,) = [p for p in live(api, "search") if p["metadata"]["labels"]["pod-template-hash"] == rev2]
    assert scheduling_message(pod).startswith(f"0/4 nodes are available: {TAINT}, 3 Insufficient cpu, 3 Insufficient memory. ")


def test_local_volume_on_cordoned_node_is_a_volume_node_affinity_conflict(world, api):
    pvc = api.get("PersistentVolumeClaim", "geo-pvc", NS)
    node = api.get("PersistentVolume", pvc["spec"]["volumeName"])["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0]["values"][0]
    cordon(api, node)
    pod = _replace_pod(world, api, "mongodb-geo")
    assert scheduling_message(pod) == (
        f"0/4 nodes are available: {TAINT}, 1 node(s) were unschedulable, 2 node(s) had volume node affinity conflict. "
        "preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling."
    )
    cordon(api, node, on=False)
    advance(world, 30)
    pod = api.get("Pod", pod["metadata"]["name"], NS)
    assert pod["spec"]["nodeName"] == node and pod_is_ready(pod)


# --------------------------------------------------------------------------- 8. lifecycle, GC, volumes
def test_deleted_pod_is_replaced_by_its_replicaset(world, api):
    (old,) = live(api, "profile")
    api.delete("Pod", old["metadata"]["name"], NS)
    assert api.get("Pod", old["metadata"]["name"], NS)["metadata"].get("deletionTimestamp")  # graceful
    advance(world, 30)
    (pod,) = live(api, "profile")
    assert pod["metadata"]["name"] != old["metadata"]["name"]
    assert pod["metadata"]["ownerReferences"][0]["uid"] == old["metadata"]["ownerReferences"][0]["uid"]
    assert pod_is_ready(pod) and cstatus(pod)["restartCount"] == 0
    with pytest.raises(ApiError):
        api.get("Pod", old["metadata"]["name"], NS)
    rs = rs_by_revision(api, "profile")[1]
    assert f"Created pod: {pod['metadata']['name']}" in [e["message"] for e in events(api, rs["metadata"]["name"], "SuccessfulCreate")]
    assert api.get("Endpoints", "profile", NS)["subsets"][0]["addresses"][0]["targetRef"]["name"] == pod["metadata"]["name"]


def test_force_delete_removes_pod_at_once(world, api):
    (old,) = live(api, "profile")
    api.delete("Pod", old["metadata"]["name"], NS, force=True)
    with pytest.raises(ApiError):
        api.get("Pod", old["metadata"]["name"], NS)
    advance(world, 30)
    assert [pod_is_ready(p) for p in live(api, "profile")] == [True]


def test_evict_behaves_like_delete(world, api):
    (old,) = live(api, "reservation")
    api.evict(old["metadata"]["name"], NS)
    assert api.get("Pod", old["metadata"]["name"], NS)["metadata"].get("deletionTimestamp")
    advance(world, 30)
    (pod,) = live(api, "reservation")
    assert pod["metadata"]["name"] != old["metadata"]["name"] and pod_is_ready(pod)


def test_deleting_a_deployment_garbage_collects_replicasets_and_pods(world, api):
    rs_names = [r["metadata"]["name"] for r in replicasets(api, "search")]
    assert rs_names
    api.delete("Deployment", "search", NS)
    advance(world, 2 * TICK_S)
    assert replicasets(api, "search") == [] and pods(api, "search") == []
    for name in rs_names:
        with pytest.raises(ApiError):
            api.get("ReplicaSet", name, NS)
    # the Service stays, with nothing behind it
    assert not api.get("Endpoints", "search", NS).get("subsets")
    assert client_success(world) < 0.5


def test_scale_to_zero_and_back(world, api):
    api.scale("Deployment", "recommendation", NS, 0)
    advance(world, 3 * TICK_S)
    assert pods(api, "recommendation") == []
    dep = api.get("Deployment", "recommendation", NS)
    assert dep["spec"]["replicas"] == 0 and not dep["status"].get("replicas") and not dep["status"].get("availableReplicas")
    assert not api.get("Endpoints", "recommendation", NS).get("subsets")
    assert client_success(world) < 0.999
    with pytest.raises(ApiError):
        api.scale("Deployment", "recommendation", NS, -1)
    api.scale("Deployment", "recommendation", NS, 2)
    settle(world)
    ps = live(api, "recommendation")
    assert len(ps) == 2 and all(map(pod_is_ready, ps))
    assert api.get("Deployment", "recommendation", NS)["status"]["availableReplicas"] == 2
    assert len(replicasets(api, "recommendation")) == 1  # scaling is not a new revision
    assert len(api.get("Endpoints", "recommendation", NS)["subsets"][0]["addresses"]) == 2
    assert client_success(world) == pytest.approx(1.0, abs=1e-6)


def test_pvc_protection_then_reclaim_then_reprovision(world, api):
    pvc = api.get("PersistentVolumeClaim", "rate-pvc", NS)
    pv_name = pvc["spec"]["volumeName"]
    old_node = pvc["metadata"]["annotations"]["volume.kubernetes.io/selected-node"]
    api.delete("PersistentVolumeClaim", "rate-pvc", NS)
    advance(world, 30)
    pvc = api.get("PersistentVolumeClaim", "rate-pvc", NS)  # in use: kept
    assert pvc["metadata"].get("deletionTimestamp")
    assert pvc["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]
    assert api.get("PersistentVolume", pv_name)["status"]["phase"] == "Bound"
    assert all(map(pod_is_ready, live(api, "mongodb-rate")))
    # the pod goes: the claim goes, and the Delete reclaim policy removes its volume
    (pod,) = live(api, "mongodb-rate")
    api.delete("Pod", pod["metadata"]["name"], NS)
    advance(world, 2 * TICK_S)
    with pytest.raises(ApiError):
        api.get("PersistentVolumeClaim", "rate-pvc", NS)
    with pytest.raises(ApiError):
        api.get("PersistentVolume", pv_name)
    (pod,) = live(api, "mongodb-rate")
    assert not pod["spec"].get("nodeName")
    assert 'persistentvolumeclaim "rate-pvc"' in scheduling_message(pod)
    # a new claim (WaitForFirstConsumer) is provisioned where the waiting pod lands
    cordon(api, old_node)
    api.create({
        "kind": "PersistentVolumeClaim", "apiVersion": "v1",
        "metadata": {"name": "rate-pvc", "namespace": NS},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}, "storageClassName": "local-path"},
    })
    advance(world, 30)
    pvc = api.get("PersistentVolumeClaim", "rate-pvc", NS)
    assert pvc["status"]["phase"] == "Bound" and pvc["spec"]["volumeName"] != pv_name
    node = pvc["metadata"]["annotations"]["volume.kubernetes.io/selected-node"]
    assert node in WORKERS and node != old_node
    pv = api.get("PersistentVolume", pvc["spec"]["volumeName"])
    assert pv["spec"]["claimRef"]["uid"] == pvc["metadata"]["uid"]
    assert pv["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"][0]["values"] == [node]
    (pod,) = live(api, "mongodb-rate")
    assert pod["spec"]["nodeName"] == node and pod_is_ready(pod)


def test_unused_pvc_is_deleted_at_once(world, api):
    api.create({
        "kind": "PersistentVolumeClaim", "apiVersion": "v1",
        "metadata": {"name": "scratch", "namespace": NS},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
    })
    advance(world, TICK_S)
    assert api.get("PersistentVolumeClaim", "scratch", NS)["status"]["phase"] == "Pending"  # WaitForFirstConsumer
    api.delete("PersistentVolumeClaim", "scratch", NS)
    advance(world, TICK_S)
    with pytest.raises(ApiError):
        api.get("PersistentVolumeClaim", "scratch", NS)


# --------------------------------------------------------------------------- 10. determinism
def _state(world: World) -> dict[str, list]:
    return {kind: copy.deepcopy(world.store.list(kind)) for kind in world.store.kinds()}


def _script(world: World) -> None:
    api = SimBackend(world).api
    api.scale("Deployment", "search", NS, 3)
    advance(world, 40)
    remove_env(api, "geo", "CONSUL_ADDRESS")
    (pod,) = live(api, "profile")
    api.delete("Pod", pod["metadata"]["name"], NS)
    advance(world, 125)


def test_identical_worlds_evolve_identically():
    a, b = build_world((APP,), seed=0), build_world((APP,), seed=0)
    for w in (a, b):
        advance(w, 300)
        _script(w)
    assert _state(a) == _state(b)
    assert sorted(p["metadata"]["name"] for p in a.store.list("Pod")) == sorted(p["metadata"]["name"] for p in b.store.list("Pod"))
    assert a.runtimes == b.runtimes
    assert a.last_traffic == b.last_traffic


def test_fork_evolves_like_its_origin(world):
    twin = world.fork()
    assert _state(twin) == _state(world)
    for w in (world, twin):
        _script(w)
    assert _state(twin) == _state(world)
    assert twin.runtimes == world.runtimes
    assert World.restore(world.snapshot()).runtimes == world.runtimes


def test_different_seeds_differ():
    a, b = build_world((APP,), seed=0), build_world((APP,), seed=1)
    advance(a, 60)
    advance(b, 60)
    assert sorted(p["metadata"]["name"] for p in a.store.list("Pod")) != sorted(p["metadata"]["name"] for p in b.store.list("Pod"))


# --------------------------------------------------------------------------- 11. probes
def test_readiness_probe_on_wrong_port_keeps_pod_out_of_endpoints(world, api):
    patch_container(api, "geo", readinessProbe={"tcpSocket": {"port": 9999}, "periodSeconds": 5})
    advance(world, 90)
    rev2 = rs_by_revision(api, "geo")[2]["metadata"]["labels"]["pod-template-hash"]
    (pod,) = [p for p in live(api, "geo") if p["metadata"]["labels"]["pod-template-hash"] == rev2]
    cs = cstatus(pod)
    assert pod["status"]["phase"] == "Running" and "running" in cs["state"]
    assert not pod_is_ready(pod) and not cs["ready"] and cs["restartCount"] == 0
    ready = next(c for c in pod["status"]["conditions"] if c["type"] == "Ready")
    assert ready["reason"] == "ContainersNotReady"
    (subset,) = api.get("Endpoints", "geo", NS)["subsets"]
    assert pod["status"]["podIP"] in [a["ip"] for a in subset["notReadyAddresses"]]
    assert pod["status"]["podIP"] not in [a["ip"] for a in subset.get("addresses", [])]
    unhealthy = events(api, pod["metadata"]["name"], "Unhealthy")
    assert [e["message"] for e in unhealthy] == [f"Readiness probe failed: dial tcp {pod['status']['podIP']}:9999: connect: connection refused"]
    count = unhealthy[0]["count"]
    advance(world, 180)
    assert events(api, pod["metadata"]["name"], "Unhealthy")[0]["count"] > count  # the prober keeps failing
    # the rollout stalls on it: the old pod keeps serving
    assert len(live(api, "geo")) == 2 and client_success(world) == pytest.approx(1.0, abs=1e-6)
    patch_container(api, "geo", readinessProbe={"tcpSocket": {"port": 8083}, "periodSeconds": 5})
    settle(world)
    (pod,) = live(api, "geo")
    assert pod_is_ready(pod)
    assert pod["status"]["podIP"] in [a["ip"] for a in api.get("Endpoints", "geo", NS)["subsets"][0]["addresses"]]


def test_liveness_probe_on_wrong_port_restarts_the_container(world, api):
    patch_container(api, "user", livenessProbe={"httpGet": {"path": "/healthz", "port": 9999}, "initialDelaySeconds": 5, "periodSeconds": 10, "failureThreshold": 3})
    advance(world, 200)
    rev2 = rs_by_revision(api, "user")[2]["metadata"]["labels"]["pod-template-hash"]
    (pod,) = [p for p in live(api, "user") if p["metadata"]["labels"]["pod-template-hash"] == rev2]
    cs = cstatus(pod)
    assert cs["restartCount"] >= 2
    assert cs["lastState"]["terminated"]["reason"] == "Error"
    assert cs["lastState"]["terminated"]["exitCode"] == 143
    ip = pod["status"]["podIP"]
    unhealthy = events(api, pod["metadata"]["name"], "Unhealthy")
    assert [e["message"] for e in unhealthy] == [f'Liveness probe failed: Get "http://{ip}:9999/healthz": dial tcp {ip}:9999: connect: connection refused']
    assert unhealthy[0]["type"] == "Warning" and unhealthy[0]["count"] >= 3
    killing = [e for e in events(api, pod["metadata"]["name"], "Killing") if "liveness" in e["message"]]
    assert killing[0]["message"] == "Container hotel-reserv-user failed liveness probe, will be restarted"
    # every kill is followed by a restart, unless the container is waiting out its back-off now
    assert killing[0]["count"] == cs["restartCount"] + (1 if "waiting" in cs["state"] else 0)
    (started,) = events(api, pod["metadata"]["name"], "Started")
    assert started["count"] == cs["restartCount"] + 1


def test_relabelled_pod_is_orphaned_and_readopted(world, api):
    (old,) = live(api, "search")
    rs = rs_by_revision(api, "search")[1]
    api.patch("Pod", old["metadata"]["name"], NS, {"metadata": {"labels": {"io.kompose.service": "quarantine"}}})
    advance(world, 30)
    orphan = api.get("Pod", old["metadata"]["name"], NS)
    assert not orphan["metadata"].get("ownerReferences")  # released by the ReplicaSet
    (new,) = live(api, "search")
    assert new["metadata"]["name"] != old["metadata"]["name"] and pod_is_ready(new)
    # label it back: adopted again, and the ReplicaSet is one over: it deletes one
    api.patch("Pod", old["metadata"]["name"], NS, {"metadata": {"labels": {"io.kompose.service": "search"}}})
    advance(world, 2 * TICK_S)
    ps = live(api, "search")
    assert len(ps) == 1 and ps[0]["metadata"]["ownerReferences"][0]["uid"] == rs["metadata"]["uid"]
    assert [e["message"] for e in events(api, rs["metadata"]["name"], "SuccessfulDelete")]
