"""Which Endpoints addresses serve a Service port."""

from __future__ import annotations

from sre_env.kube.endpoints import service_port_backends


def _addr(uid: str, ip: str) -> dict:
    return {"ip": ip, "targetRef": {"kind": "Pod", "uid": uid}}


EP = {
    "subsets": [
        {"addresses": [_addr("a", "10.0.0.1"), _addr("b", "10.0.0.2")], "ports": [{"name": "http", "port": 8080}, {"name": "metrics", "port": 9090}]},
        {"addresses": [_addr("c", "10.0.0.3")], "notReadyAddresses": [_addr("d", "10.0.0.4")], "ports": [{"name": "http", "port": 8081}]},
    ]
}


def test_ports_are_matched_by_name_and_only_ready_addresses_serve() -> None:
    assert service_port_backends(EP, {"name": "http", "port": 80}) == [("a", "10.0.0.1", 8080), ("b", "10.0.0.2", 8080), ("c", "10.0.0.3", 8081)]
    assert service_port_backends(EP, {"name": "metrics", "port": 9090}) == [("a", "10.0.0.1", 9090), ("b", "10.0.0.2", 9090)]
    assert service_port_backends(EP, {"name": "grpc", "port": 50051}) == []


def test_a_lone_port_serves_an_unnamed_service_port() -> None:
    ep = {"subsets": [{"addresses": [_addr("a", "10.0.0.1")], "ports": [{"name": "web", "port": 8080}]}]}
    assert service_port_backends(ep, {"port": 80}) == [("a", "10.0.0.1", 8080)]
    assert service_port_backends(ep, {"name": "http", "port": 80}) == []
    assert service_port_backends(ep, {"name": "http", "port": 80}, lone_port_any_name=True) == [("a", "10.0.0.1", 8080)]


def test_no_endpoints_no_backends() -> None:
    assert service_port_backends(None, {"port": 80}) == []
    assert service_port_backends({"subsets": [{"addresses": [{"ip": "10.0.0.9"}], "ports": [{"port": 80}]}]}, {"port": 80}) == []
