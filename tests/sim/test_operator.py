"""The modelled TiDB Operator: TidbCluster -> StatefulSets/Services, reverting drift, idle when its pod is down."""

from __future__ import annotations

import pytest

from sre_env.apps.tidb import TIDB
from sre_env.shell import ShellContext, run_command
from sre_env.sim.backend import SimBackend
from sre_env.sim.episodes import healthy_world

NS = "tidb-cluster"


@pytest.fixture()
def backend() -> SimBackend:
    return SimBackend(healthy_world(TIDB))


def sh(backend: SimBackend, command: str) -> str:
    return run_command(ShellContext(backend, NS), command).output


def success(backend: SimBackend) -> float:
    return backend.world.client_history[TIDB.name][-1][1]


def test_operator_creates_the_cluster_from_the_custom_resource(backend: SimBackend) -> None:
    names = sorted(s["metadata"]["name"] for s in backend.api.list("StatefulSet", NS))
    assert names == ["basic-pd", "basic-tidb", "basic-tikv"]
    tikv = backend.api.get("StatefulSet", "basic-tikv", NS)
    assert tikv["metadata"]["ownerReferences"][0]["kind"] == "TidbCluster"
    assert tikv["spec"]["template"]["spec"]["containers"][0]["image"] == "pingcap/tikv:v8.5.2"
    assert tikv["spec"]["volumeClaimTemplates"][0]["metadata"]["name"] == "tikv"
    assert {s["metadata"]["name"] for s in backend.api.list("Service", NS)} >= {"basic-pd", "basic-tidb", "basic-tikv-peer"}
    assert {p["metadata"]["name"] for p in backend.api.list("PersistentVolumeClaim", NS)} == {"pd-basic-pd-0", "tikv-basic-tikv-0"}
    assert success(backend) == 1.0
    out = sh(backend, "kubectl get tc")
    header, row = out.splitlines()[:2]
    assert header.split()[:3] == ["NAME", "READY", "PD"] and "DESIRE" in header
    assert row.split()[:3] == ["basic", "True", "pingcap/pd:v8.5.2"]
    assert sh(backend, "kubectl get tidbclusters.pingcap.com basic -o jsonpath={.spec.version}").strip() == "v8.5.2"


def test_custom_resource_change_is_rolled_out(backend: SimBackend) -> None:
    sh(backend, """kubectl patch tc basic --type=merge -p '{"spec":{"tidb":{"replicas":2}}}'""")
    backend.advance(120)
    assert backend.api.get("StatefulSet", "basic-tidb", NS)["spec"]["replicas"] == 2
    assert sorted(p["metadata"]["name"] for p in backend.api.list("Pod", NS, "app.kubernetes.io/component=tidb")) == ["basic-tidb-0", "basic-tidb-1"]
    events = sh(backend, "kubectl get events --field-selector involvedObject.kind=TidbCluster")
    assert "update StatefulSet basic-tidb in TidbCluster basic successful" in events
    assert "updated StatefulSet basic-tidb" in sh(backend, "kubectl logs -n tidb-admin deploy/tidb-controller-manager")


def test_direct_statefulset_edits_are_reverted(backend: SimBackend) -> None:
    sh(backend, "kubectl scale statefulset basic-tikv --replicas=0")
    sh(backend, "kubectl set image statefulset/basic-tidb tidb=pingcap/tidb:v7.5.0")
    backend.advance(60)
    assert backend.api.get("StatefulSet", "basic-tikv", NS)["spec"]["replicas"] == 1
    assert backend.api.get("StatefulSet", "basic-tidb", NS)["spec"]["template"]["spec"]["containers"][0]["image"] == "pingcap/tidb:v8.5.2"
    backend.advance(120)
    assert success(backend) == 1.0


def test_nothing_reconciles_while_the_operator_is_down(backend: SimBackend) -> None:
    sh(backend, "kubectl scale deployment tidb-controller-manager -n tidb-admin --replicas=0")
    backend.advance(60)
    sh(backend, "kubectl scale statefulset basic-tikv --replicas=0")
    sh(backend, """kubectl patch tc basic --type=merge -p '{"spec":{"tidb":{"replicas":2}}}'""")
    backend.advance(120)
    assert backend.api.get("StatefulSet", "basic-tikv", NS)["spec"]["replicas"] == 0
    assert backend.api.get("StatefulSet", "basic-tidb", NS)["spec"]["replicas"] == 1
    assert success(backend) == 0.0  # TiDB has no TiKV to read from
    sh(backend, "kubectl scale deployment tidb-controller-manager -n tidb-admin --replicas=1")
    backend.advance(180)
    assert backend.api.get("StatefulSet", "basic-tikv", NS)["spec"]["replicas"] == 1
    assert backend.api.get("StatefulSet", "basic-tidb", NS)["spec"]["replicas"] == 2
    assert success(backend) == 1.0


def test_bad_affinity_in_the_custom_resource_leaves_the_pod_pending(backend: SimBackend) -> None:
    patch = '{"spec":{"pd":{"affinity":{"nodeAffinity":{"requiredDuringSchedulingIgnoredDuringExecution":{"nodeSelectorTerms":[{"matchExpressions":[{"key":"dedicated","operator":"In","values":["pd"]}]}]}}}}}}'
    sh(backend, f"kubectl patch tc basic --type=merge -p '{patch}'")
    backend.advance(120)
    pod = backend.api.get("Pod", "basic-pd-0", NS)
    assert pod["status"]["phase"] == "Pending" and not pod["spec"].get("nodeName")
    assert "didn't match Pod's node affinity/selector" in sh(backend, "kubectl describe pod basic-pd-0")
    assert success(backend) == 0.0
    assert sh(backend, "kubectl get tc basic").splitlines()[1].split()[1] == "False"


def test_the_operator_costs_nothing_elsewhere() -> None:
    from sre_env.apps.hotel_reservation import HOTEL_RESERVATION

    world = healthy_world(HOTEL_RESERVATION)
    assert "tidb-cluster" not in world.app_models
    assert not world.store.list("TidbCluster")


def test_run_as_non_root_on_a_root_image_is_refused_by_the_kubelet(backend: SimBackend) -> None:
    sh(backend, """kubectl patch tc basic --type=merge -p '{"spec":{"tidb":{"podSecurityContext":{"runAsNonRoot":true}}}}'""")
    backend.advance(120)
    out = sh(backend, "kubectl get pod basic-tidb-0")
    assert "CreateContainerConfigError" in out
    described = sh(backend, "kubectl describe pod basic-tidb-0")
    assert 'container has runAsNonRoot and image will run as root (pod: "basic-tidb-0_tidb-cluster(' in described
    assert success(backend) == 0.0
    # an explicit non-root user satisfies the policy
    sh(backend, """kubectl patch tc basic --type=merge -p '{"spec":{"tidb":{"podSecurityContext":{"runAsNonRoot":true,"runAsUser":1000}}}}'""")
    backend.advance(30)
    sh(backend, "kubectl delete pod basic-tidb-0")
    backend.advance(120)
    assert "Running" in sh(backend, "kubectl get pod basic-tidb-0")
    assert success(backend) == 1.0


def test_custom_resource_describe_and_patch_types(backend: SimBackend) -> None:
    out = sh(backend, """kubectl patch tc basic -p '{"spec":{"tidb":{"replicas":2}}}'""")
    assert out.startswith("Error from server (UnsupportedMediaType): the body of the request was in an unknown format")
    described = sh(backend, "kubectl describe tidbcluster basic")
    assert "API Version:  pingcap.com/v1alpha1" in described and "Kind:         TidbCluster" in described
    assert "  Pv Reclaim Policy:" in described and "Message:               TiDB cluster is fully up and running" in described


def test_tidb_logs_the_unreachable_store_in_its_own_format(backend: SimBackend) -> None:
    assert "server is running MySQL protocol" in sh(backend, "kubectl logs basic-tidb-0")
    sh(backend, """kubectl patch tc basic --type=merge -p '{"spec":{"tikv":{"replicas":0}}}'""")
    backend.advance(120)
    tail = sh(backend, "kubectl logs basic-tidb-0 --tail=20")
    assert '[WARN] [region_request.go:1496] ["send request failed"] [addr=basic-tikv-peer:20160]' in tail
    assert '["command dispatched failed"]' in tail and "[sql=\"SELECT c FROM sbtest1 WHERE id=?\"]" in tail


def test_tikv_runs_on_its_dedicated_node_and_a_wrong_toleration_strands_it(backend: SimBackend) -> None:
    assert backend.api.get("Pod", "basic-tikv-0", NS)["spec"]["nodeName"] == "worker-3"
    assert all(p["spec"].get("nodeName") != "worker-3" for p in backend.api.list("Pod", NS) if p["metadata"]["name"] != "basic-tikv-0")
    bad = '[{"key":"dedicated","operator":"Equal","value":"TiKV","effect":"NoSchedule"}]'
    sh(backend, f"""kubectl patch tc basic --type=merge -p '{{"spec":{{"tikv":{{"tolerations":{bad}}}}}}}'""")
    backend.advance(120)
    described = sh(backend, "kubectl describe pod basic-tikv-0")
    assert "1 node(s) had untolerated taint {dedicated: tikv}" in described
    assert "2 node(s) didn't match Pod's node affinity/selector" in described
    assert success(backend) == 0.0
