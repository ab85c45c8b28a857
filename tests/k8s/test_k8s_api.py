"""KubeApi (the official client behind the ClusterAPI seam) against ``sre-env serve``."""

from __future__ import annotations

import pytest

from sre_env.backend import ClusterAPI
from sre_env.errors import ApiError

NS = "hotel-reservation"


@pytest.fixture()
def api(paused):
    from kubernetes import config

    from sre_env.k8s.api import KubeApi

    return KubeApi(config.new_client_from_config(config_file=str(paused.kubeconfig)))


def test_it_is_a_cluster_api(api) -> None:
    assert isinstance(api, ClusterAPI)


def test_reads_carry_kind_and_api_version_and_honour_selectors(api) -> None:
    deps = api.list("Deployment", NS)
    assert {d["metadata"]["name"] for d in deps} >= {"frontend", "geo", "mongodb-geo"}
    assert all(d["kind"] == "Deployment" and d["apiVersion"] == "apps/v1" for d in deps)
    pods = api.list("Pod", NS, "io.kompose.service=geo")
    assert [p["metadata"]["labels"]["io.kompose.service"] for p in pods] == ["geo"]
    geo = api.get("Service", "geo", NS)
    assert geo["kind"] == "Service" and geo["spec"]["ports"][0]["port"] == 8083
    assert {n["metadata"]["name"] for n in api.list("Node")} >= {"worker-1", "worker-2"}


def test_errors_are_the_servers_status(api) -> None:
    with pytest.raises(ApiError) as err:
        api.get("Pod", "nope", NS)
    assert (err.value.code, err.value.reason, err.value.message) == (404, "NotFound", 'pods "nope" not found')
    with pytest.raises(ApiError) as err:
        api.list("Frob", NS)
    assert err.value.code == 404 and not api.serves("Frob") and api.serves("Deployment")
    with pytest.raises(ApiError) as err:
        api.patch("Deployment", "geo", NS, {}, "yaml")
    assert err.value.code == 415


def test_writes_change_the_served_cluster(api, paused) -> None:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "probe", "namespace": NS}, "data": {"a": "1"}}
    assert api.create(cm)["metadata"]["uid"]
    with pytest.raises(ApiError) as err:
        api.create(cm)
    assert err.value.code == 409 and err.value.reason == "AlreadyExists"
    api.patch("ConfigMap", "probe", NS, {"data": {"b": "2"}}, "merge")
    api.patch("ConfigMap", "probe", NS, [{"op": "replace", "path": "/data/a", "value": "3"}], "json")
    api.patch("Deployment", "geo", NS, {"metadata": {"labels": {"team": "maps"}}}, "strategic")
    current = api.get("ConfigMap", "probe", NS)
    current["data"]["c"] = "4"
    api.replace(current)
    with paused.server.lock:
        assert paused.sim.api.get("ConfigMap", "probe", NS)["data"] == {"a": "3", "b": "2", "c": "4"}
        assert paused.sim.api.get("Deployment", "geo", NS)["metadata"]["labels"]["team"] == "maps"
    assert api.scale("Deployment", "geo", NS, 2)["spec"]["replicas"] == 2
    api.delete("ConfigMap", "probe", NS)
    with pytest.raises(ApiError):
        api.get("ConfigMap", "probe", NS)


def test_logs_and_top(api) -> None:
    pod = api.list("Pod", NS, "io.kompose.service=frontend")[0]["metadata"]["name"]
    text = api.logs(pod, NS, tail=3)
    assert len(text.splitlines()) == 3
    top = api.top_pods(NS)
    assert any(name == pod and cpu > 0 and mem > 0 for _, name, cpu, mem in top)
    nodes = api.top_nodes()
    assert all(cap_cpu > 0 and cap_mem > 0 for _, _, cap_cpu, _, cap_mem in nodes)


def test_exec_over_the_websocket(api) -> None:
    pytest.importorskip("sre_env.serve.kube_exec", reason="this checkout's serve has no exec endpoint")
    pod = api.list("Pod", NS, "io.kompose.service=geo")[0]["metadata"]["name"]
    ok = api.exec(pod, NS, None, ["printenv", "CONSUL_ADDRESS"])
    assert (ok.output, ok.exit_code) == ("consul:8500\n", 0)
    failed = api.exec(pod, NS, None, ["cat", "/nope"])
    assert failed.exit_code == 1 and "No such file or directory" in failed.output
    with pytest.raises(ApiError) as err:
        api.exec("nope", NS, None, ["ls"])
    assert (err.value.code, err.value.message) == (404, 'pods "nope" not found')
