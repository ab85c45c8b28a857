"""Service networking and the traffic it carries: Endpoints, routes as a client dials them, client success.

A wrong targetPort keeps Endpoints populated (with the wrong port) but every
connection is refused; a selector that matches nothing leaves no endpoints
(kube-proxy rejects: refused); a deleted Service is a DNS failure. The load
generator's success ratio follows, and recovers once the object is fixed.
"""

from __future__ import annotations

import pytest

from sre_env.apps.hotel_reservation import HOTEL_RESERVATION as APP
from sre_env.errors import ApiError
from sre_env.sim.backend import SimBackend
from sre_env.sim.control.controllers import pod_is_ready
from sre_env.sim.engine import advance
from sre_env.sim.episodes import healthy_world
from sre_env.sim.kernel.clock import TICK_S
from sre_env.sim.kernel.world import World
from sre_env.sim.network.routing import resolve_route

NS = APP.namespace


@pytest.fixture(scope="module")
def base() -> World:
    return healthy_world(APP)


@pytest.fixture
def world(base: World) -> World:
    return base.fork()


@pytest.fixture
def api(world: World):
    return SimBackend(world).api


def success(world: World) -> float:
    return world.last_traffic[APP.name].client_success


def geo_pod(api) -> dict:
    (pod,) = api.list("Pod", NS, label_selector="io.kompose.service=geo")
    return pod


def test_every_dependency_route_is_healthy(world):
    for comp in APP.components:
        for dep in comp.dependencies:
            route = resolve_route(world, NS, f"{dep.service}:{dep.port}")
            assert route.ok == 1.0 and route.error is None, (comp.name, dep.service)
            assert route.servers and abs(sum(s for _, s in route.servers) - 1.0) < 1e-9
    # fully qualified and namespaced names resolve to the same Service
    for name in ("geo", f"geo.{NS}", f"geo.{NS}.svc", f"geo.{NS}.svc.cluster.local"):
        assert resolve_route(world, "default" if "." in name else NS, f"{name}:8083").ok == 1.0, name
    assert success(world) == pytest.approx(1.0, abs=1e-6)


def test_wrong_target_port_keeps_endpoints_but_refuses(world, api):
    svc = api.get("Service", "geo", NS)
    ip = svc["spec"]["clusterIP"]
    api.patch("Service", "geo", NS, [{"op": "replace", "path": "/spec/ports/0/targetPort", "value": 9999}], "json")
    advance(world, TICK_S)
    (subset,) = api.get("Endpoints", "geo", NS)["subsets"]
    assert [p["port"] for p in subset["ports"]] == [9999]
    assert [a["ip"] for a in subset["addresses"]] == [geo_pod(api)["status"]["podIP"]]
    route = resolve_route(world, NS, "geo:8083")
    assert route.ok == 0.0 and route.servers == ()
    assert route.error == f"dial tcp {ip}:8083: connect: connection refused"
    advance(world, 30)
    hit = success(world)
    assert hit < 0.9  # every search request fails
    assert any(edge[1] == "geo" and "connection refused" in edge[3] for edge in world.last_traffic[APP.name].failed_edges)
    # the pod itself is fine: Running, Ready, never restarted
    pod = geo_pod(api)
    assert pod_is_ready(pod) and pod["status"]["containerStatuses"][0]["restartCount"] <= 1
    api.patch("Service", "geo", NS, [{"op": "replace", "path": "/spec/ports/0/targetPort", "value": 8083}], "json")
    advance(world, TICK_S)
    assert resolve_route(world, NS, "geo:8083").ok == 1.0
    advance(world, 30)
    assert success(world) == pytest.approx(1.0, abs=1e-6)


def test_named_target_port_resolves_through_the_pod_spec(world, api):
    api.patch("Deployment", "geo", NS, {"spec": {"template": {"spec": {"containers": [{"name": "hotel-reserv-geo", "ports": [{"containerPort": 8083, "name": "grpc"}]}]}}}})
    advance(world, 60)
    api.patch("Service", "geo", NS, [{"op": "replace", "path": "/spec/ports/0/targetPort", "value": "grpc"}], "json")
    advance(world, TICK_S)
    assert api.get("Endpoints", "geo", NS)["subsets"][0]["ports"][0]["port"] == 8083
    assert resolve_route(world, NS, "geo:8083").ok == 1.0
    # a name no container port carries: the pod is left out of the Endpoints
    api.patch("Service", "geo", NS, [{"op": "replace", "path": "/spec/ports/0/targetPort", "value": "http"}], "json")
    advance(world, TICK_S)
    assert not api.get("Endpoints", "geo", NS).get("subsets")
    assert "connection refused" in resolve_route(world, NS, "geo:8083").error


def test_service_port_not_exposed_times_out(world):
    route = resolve_route(world, NS, "geo:9000")
    assert route.ok == 0.0 and route.error.endswith(":9000: i/o timeout")


def test_selector_matching_no_pods_empties_endpoints(world, api):
    api.patch("Service", "geo", NS, {"spec": {"selector": {"io.kompose.service": "geo-v2"}}})
    advance(world, TICK_S)
    assert not api.get("Endpoints", "geo", NS).get("subsets")
    route = resolve_route(world, NS, "geo:8083")
    assert route.ok == 0.0 and "connection refused" in route.error
    advance(world, 30)
    assert success(world) < 0.9
    api.patch("Service", "geo", NS, {"spec": {"selector": {"io.kompose.service": "geo"}}})
    advance(world, TICK_S)
    assert api.get("Endpoints", "geo", NS)["subsets"][0]["addresses"]
    advance(world, 30)
    assert success(world) == pytest.approx(1.0, abs=1e-6)


def test_relabelled_pod_leaves_the_service_and_is_replaced(world, api):
    old = geo_pod(api)
    api.patch("Pod", old["metadata"]["name"], NS, {"metadata": {"labels": {"io.kompose.service": "debug-geo"}}})
    advance(world, 60)
    # the ReplicaSet no longer counts it either: a new pod takes its place behind the Service
    (new,) = api.list("Pod", NS, label_selector="io.kompose.service=geo")
    assert new["metadata"]["name"] != old["metadata"]["name"] and pod_is_ready(new)
    addrs = [a["targetRef"]["name"] for a in api.get("Endpoints", "geo", NS)["subsets"][0]["addresses"]]
    assert addrs == [new["metadata"]["name"]]
    assert success(world) == pytest.approx(1.0, abs=1e-6)


def test_deleted_service_is_no_such_host(world, api):
    svc = api.get("Service", "geo", NS)
    api.delete("Service", "geo", NS)
    advance(world, TICK_S)
    with pytest.raises(ApiError):
        api.get("Endpoints", "geo", NS)
    route = resolve_route(world, NS, "geo:8083")
    assert route.ok == 0.0
    assert route.error == "dial tcp: lookup geo on 10.96.0.10:53: no such host"
    advance(world, 30)
    assert success(world) < 0.9
    # recreate it as kubectl apply would (cluster IP allocated anew)
    spec = {k: v for k, v in svc["spec"].items() if k not in ("clusterIP", "clusterIPs")}
    api.create({"kind": "Service", "apiVersion": "v1", "metadata": {"name": "geo", "namespace": NS, "labels": svc["metadata"]["labels"]}, "spec": spec})
    advance(world, TICK_S)
    route = resolve_route(world, NS, "geo:8083")
    assert route.ok == 1.0 and route.ip == api.get("Service", "geo", NS)["spec"]["clusterIP"]
    advance(world, 30)
    assert success(world) == pytest.approx(1.0, abs=1e-6)


def test_entrypoint_down_fails_every_request(world, api):
    api.scale("Deployment", "frontend", NS, 0)
    advance(world, 3 * TICK_S)
    assert success(world) == 0.0
    api.scale("Deployment", "frontend", NS, 1)
    advance(world, 60)
    assert success(world) == pytest.approx(1.0, abs=1e-6)


def test_non_critical_dependency_down_does_not_fail_requests(world, api):
    # jaeger is fire-and-forget tracing: losing it costs nothing to clients
    api.scale("Deployment", "jaeger", NS, 0)
    advance(world, 60)
    assert resolve_route(world, NS, "jaeger:6831").ok == 0.0
    assert success(world) == pytest.approx(1.0, abs=1e-6)


def test_two_replicas_share_traffic_evenly(world, api):
    api.scale("Deployment", "geo", NS, 2)
    advance(world, 60)
    route = resolve_route(world, NS, "geo:8083")
    assert route.ok == 1.0 and sorted(s for _, s in route.servers) == [0.5, 0.5]
    pod_rps = world.last_traffic[APP.name].pod_rps
    rps = [pod_rps[uid] for uid, _ in route.servers]
    assert rps[0] == pytest.approx(rps[1]) and rps[0] > 0


def test_relabelled_bare_pod_leaves_endpoints(world, api):
    spec = {k: v for k, v in geo_pod(api)["spec"].items() if k != "nodeName"}
    api.create({"kind": "Pod", "apiVersion": "v1", "metadata": {"name": "geo-debug", "namespace": NS, "labels": {"io.kompose.service": "geo"}}, "spec": spec})
    advance(world, 30)
    assert pod_is_ready(api.get("Pod", "geo-debug", NS))
    # no pod-template-hash: the ReplicaSet does not adopt it, but the Service selects it
    assert not api.get("Pod", "geo-debug", NS)["metadata"].get("ownerReferences")
    names = lambda: sorted(a["targetRef"]["name"] for a in api.get("Endpoints", "geo", NS)["subsets"][0]["addresses"])  # noqa: E731
    assert "geo-debug" in names() and len(names()) == 2
    api.patch("Pod", "geo-debug", NS, {"metadata": {"labels": {"io.kompose.service": "quarantined"}}})
    advance(world, TICK_S)
    assert names() == [geo_pod(api)["metadata"]["name"]]
