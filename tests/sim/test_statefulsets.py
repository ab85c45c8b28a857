"""StatefulSet semantics: ordered start, stable names and claims, ordered scale-down, rolling update."""

from __future__ import annotations

import pytest

from sre_env.apps.hotel_reservation import HOTEL_RESERVATION
from sre_env.sim.backend import SimBackend
from sre_env.sim.episodes import healthy_world


def _sts(replicas: int = 3, image: str = "nginx:1.25") -> dict:
    return {
        "kind": "StatefulSet",
        "apiVersion": "apps/v1",
        "metadata": {"name": "cache", "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "serviceName": "cache",
            "selector": {"matchLabels": {"app": "cache"}},
            "template": {
                "metadata": {"labels": {"app": "cache"}},
                "spec": {"containers": [{"name": "cache", "image": image, "ports": [{"containerPort": 6379}], "readinessProbe": {"tcpSocket": {"port": 6379}}}]},
            },
            "volumeClaimTemplates": [
                {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "local-path", "resources": {"requests": {"storage": "1Gi"}}}}
            ],
        },
    }


@pytest.fixture()
def backend() -> SimBackend:
    return SimBackend(healthy_world(HOTEL_RESERVATION))


def _pods(b: SimBackend) -> list[str]:
    return [p["metadata"]["name"] for p in b.api.list("Pod", "default")]


def test_ordered_start_and_claims(backend: SimBackend) -> None:
    backend.api.create(_sts())
    seen_orders = []
    for _ in range(12):
        backend.advance(5)
        seen_orders.append(_pods(backend))
    # pod i never exists before pod i-1 is Ready, so the sets grow one name at a time
    assert seen_orders[0] == ["cache-0"]
    assert any(names == ["cache-0", "cache-1"] for names in seen_orders)
    assert seen_orders[-1] == ["cache-0", "cache-1", "cache-2"]
    claims = [c["metadata"]["name"] for c in backend.api.list("PersistentVolumeClaim", "default")]
    assert claims == ["data-cache-0", "data-cache-1", "data-cache-2"]
    status = backend.api.get("StatefulSet", "cache", "default")["status"]
    assert status["readyReplicas"] == 3 and status["currentRevision"] == status["updateRevision"]


def test_scale_down_highest_first_keeps_claims(backend: SimBackend) -> None:
    backend.api.create(_sts())
    backend.advance(60)
    backend.api.scale("StatefulSet", "cache", "default", 1)
    backend.advance(10)
    assert "cache-2" not in _pods(backend)
    backend.advance(20)
    assert _pods(backend) == ["cache-0"]
    assert len(backend.api.list("PersistentVolumeClaim", "default")) == 3


def test_deleted_pod_comes_back_with_the_same_name_and_node(backend: SimBackend) -> None:
    backend.api.create(_sts())
    backend.advance(60)
    node = backend.api.get("Pod", "cache-1", "default")["spec"]["nodeName"]
    backend.api.delete("Pod", "cache-1", "default")
    backend.advance(30)
    pod = backend.api.get("Pod", "cache-1", "default")
    assert pod["spec"]["nodeName"] == node  # its local volume pins it


def test_rolling_update_replaces_from_the_highest_ordinal(backend: SimBackend) -> None:
    backend.api.create(_sts())
    backend.advance(60)
    old = {p["metadata"]["name"]: p["metadata"]["uid"] for p in backend.api.list("Pod", "default")}
    backend.api.patch("StatefulSet", "cache", "default", {"spec": {"template": {"metadata": {"annotations": {"rev": "2"}}}}}, "strategic")
    backend.advance(10)
    now = {p["metadata"]["name"]: p["metadata"]["uid"] for p in backend.api.list("Pod", "default")}
    assert now.get("cache-0") == old["cache-0"]  # lowest ordinal still untouched
    backend.advance(120)
    now = {p["metadata"]["name"]: p["metadata"]["uid"] for p in backend.api.list("Pod", "default")}
    assert all(now[n] != old[n] for n in old)
    status = backend.api.get("StatefulSet", "cache", "default")["status"]
    assert status["updatedReplicas"] == 3 and status["currentRevision"] == status["updateRevision"]


def test_a_refused_create_is_the_controllers_event(backend: SimBackend) -> None:
    backend.api.create({"kind": "ResourceQuota", "apiVersion": "v1", "metadata": {"name": "none", "namespace": "default"}, "spec": {"hard": {"pods": "0"}}})
    backend.advance(5)
    backend.api.create(_sts())
    backend.advance(10)
    assert _pods(backend) == []
    failed = [e for e in backend.api.list("Event", "default") if e["reason"] == "FailedCreate"]
    assert failed and failed[0]["message"] == (
        'create Pod cache-0 in StatefulSet cache failed error: pods "cache-0" is forbidden: exceeded quota: none, '
        "requested: pods=1, used: pods=0, limited: pods=0"
    )
    assert failed[0]["type"] == "Warning" and failed[0]["source"]["component"] == "statefulset-controller"
