"""Pods, probes and volumes in the simulator: what the prober, init containers, shared ports and volumes produce.

Each test forks the warmed-up hotel-reservation cluster, changes an object the
way an engineer would (through the API), lets time pass and reads back what
kubectl, the events, the logs and the traffic model show.
"""

from __future__ import annotations

import pytest

from sre_env.apps.hotel_reservation import HOTEL_RESERVATION as APP
from sre_env.shell import ShellContext, run_command
from sre_env.sim.backend import SimBackend
from sre_env.sim.control.controllers import pod_is_ready
from sre_env.sim.engine import advance
from sre_env.sim.episodes import healthy_world
from sre_env.sim.kernel.world import World
from sre_env.sim.kubelet.initcontainers import parse_wait_loop
from sre_env.sim.kubelet.probes import process_latency_ms, run_probe
from sre_env.sim.network.routing import resolve_route
from sre_env.telemetry.metrics_store import client_error_ratio

NS = APP.namespace


@pytest.fixture(scope="module")
def base() -> World:
    return healthy_world(APP)


@pytest.fixture
def backend(base: World) -> SimBackend:
    return SimBackend(base.fork())


def kubectl(backend: SimBackend, command: str) -> str:
    return run_command(ShellContext(backend=backend, namespace=NS), command).output


def live(backend: SimBackend, comp: str) -> list[dict]:
    return [p for p in backend.api.list("Pod", NS, f"io.kompose.service={comp}") if not p["metadata"].get("deletionTimestamp")]


def newest(backend: SimBackend, comp: str) -> dict:
    return max(live(backend, comp), key=lambda p: (p["metadata"]["creationTimestamp"], p["metadata"]["name"]))


def events(backend: SimBackend, pod: dict, reason: str) -> list[dict]:
    return [e for e in backend.api.list("Event", NS) if e["involvedObject"]["name"] == pod["metadata"]["name"] and e["reason"] == reason]


def patch_containers(backend: SimBackend, comp: str, *containers: dict, **pod_fields) -> None:
    backend.api.patch("Deployment", comp, NS, {"spec": {"template": {"spec": {"containers": list(containers), **pod_fields}}}})


def client_success(backend: SimBackend) -> float:
    return backend.world.last_traffic[APP.name].client_success


# --------------------------------------------------------------------------- probes
def test_http_probe_on_a_path_the_frontend_does_not_serve_gets_404_and_restarts(backend: SimBackend) -> None:
    patch_containers(backend, "frontend", {"name": "hotel-reserv-frontend", "livenessProbe": {"httpGet": {"path": "/healthz", "port": 5000}, "periodSeconds": 10, "failureThreshold": 3}})
    backend.advance(240)
    pod = newest(backend, "frontend")
    cs = pod["status"]["containerStatuses"][0]
    assert cs["restartCount"] >= 2 and cs["lastState"]["terminated"]["exitCode"] == 143
    (unhealthy,) = events(backend, pod, "Unhealthy")
    assert unhealthy["message"] == "Liveness probe failed: HTTP probe failed with statuscode: 404"
    assert "failed liveness probe, will be restarted" in events(backend, pod, "Killing")[0]["message"]
    # the frontend's file server does serve "/", and its handlers answer 400 without their parameters
    rt = backend.world.runtimes[pod["metadata"]["uid"]]
    spec = pod["spec"]["containers"][0]
    ctr = rt.containers["hotel-reserv-frontend"]
    backend.advance(400)
    ctr = backend.world.runtimes[pod["metadata"]["uid"]].containers["hotel-reserv-frontend"]
    now = backend.world.clock.now
    if ctr.serving(now):
        assert run_probe(backend.world, pod, rt, ctr, spec, {"httpGet": {"path": "/", "port": 5000}}, now).ok
        assert run_probe(backend.world, pod, rt, ctr, spec, {"httpGet": {"path": "/hotels", "port": 5000}}, now).output == "HTTP probe failed with statuscode: 400"


def test_http_probe_on_a_grpc_port_reads_a_malformed_response(backend: SimBackend) -> None:
    patch_containers(backend, "geo", {"name": "hotel-reserv-geo", "livenessProbe": {"httpGet": {"path": "/health", "port": 8083}, "initialDelaySeconds": 10, "periodSeconds": 10}})
    backend.advance(120)
    pod = newest(backend, "geo")
    ip = pod["status"]["podIP"]
    msg = events(backend, pod, "Unhealthy")[0]["message"]
    assert msg.startswith(f'Liveness probe failed: Get "http://{ip}:8083/health": net/http: HTTP/1.x transport connection broken: malformed HTTP response "\\x00\\x00\\x06\\x04')
    # a TCP probe on the same port is what fits a gRPC server
    backend.api.patch("Deployment", "geo", NS, [{"op": "replace", "path": "/spec/template/spec/containers/0/livenessProbe", "value": {"tcpSocket": {"port": 8083}, "initialDelaySeconds": 10, "periodSeconds": 10}}], "json")
    backend.advance(300)
    pod = newest(backend, "geo")
    assert pod_is_ready(pod) and pod["status"]["containerStatuses"][0]["restartCount"] == 0


def test_probe_latency_comes_from_the_pods_queue(backend: SimBackend) -> None:
    """An HTTP probe waits behind the pod's requests: under overload it times out, at normal load it does not."""
    world = backend.world
    comp = APP.component("frontend")
    (pod,) = live(backend, "frontend")
    uid = pod["metadata"]["uid"]
    rt = world.runtimes[uid]
    ctr = rt.containers["hotel-reserv-frontend"]
    spec = pod["spec"]["containers"][0]
    probe = {"httpGet": {"path": "/", "port": 5000}, "timeoutSeconds": 1}
    normal = process_latency_ms(world, uid, comp)
    assert comp.latency_ms <= normal < 10.0
    assert run_probe(world, pod, rt, ctr, spec, probe, world.clock.now).ok
    world.set_load_factor(APP.name, comp.capacity_rps / APP.rps * 1.2)  # more than the pod can serve
    advance(world, 30)
    assert process_latency_ms(world, uid, comp) > 1000.0
    result = run_probe(world, pod, rt, ctr, spec, probe, world.clock.now)
    ip = rt.ip
    assert not result.ok and result.output == f'Get "http://{ip}:5000/": context deadline exceeded (Client.Timeout exceeded while awaiting headers)'
    # a TCP probe only needs the kernel to accept: it passes while the process is swamped
    assert run_probe(world, pod, rt, ctr, spec, {"tcpSocket": {"port": 5000}}, world.clock.now).ok


def test_liveness_probe_tighter_than_start_up_kills_before_serving(backend: SimBackend) -> None:
    tight = {"tcpSocket": {"port": 8082}, "initialDelaySeconds": 0, "periodSeconds": 1, "failureThreshold": 1}
    patch_containers(backend, "search", {"name": "hotel-reserv-search", "livenessProbe": tight})
    backend.advance(180)
    pod = newest(backend, "search")
    cs = pod["status"]["containerStatuses"][0]
    assert cs["restartCount"] >= 3
    assert events(backend, pod, "Unhealthy")[0]["message"] == f"Liveness probe failed: dial tcp {pod['status']['podIP']}:8082: connect: connection refused"
    assert client_error_ratio(backend.world, APP.name, 120) > 0.3
    backend.api.patch("Deployment", "search", NS, [{"op": "replace", "path": "/spec/template/spec/containers/0/livenessProbe", "value": {**tight, "initialDelaySeconds": 10, "periodSeconds": 10, "failureThreshold": 3}}], "json")
    backend.advance(300)
    pod = newest(backend, "search")
    assert pod_is_ready(pod) and pod["status"]["containerStatuses"][0]["restartCount"] == 0
    assert client_success(backend) == pytest.approx(1.0, abs=1e-3)


def test_readiness_probe_on_a_dead_port_empties_the_service(backend: SimBackend) -> None:
    patch_containers(backend, "mongodb-rate", {"name": "hotel-reserv-rate-mongo", "readinessProbe": {"httpGet": {"path": "/", "port": 28017}, "periodSeconds": 10}})
    backend.advance(120)
    pod = newest(backend, "mongodb-rate")
    assert pod["status"]["phase"] == "Running" and not pod_is_ready(pod)
    ep = backend.api.get("Endpoints", "mongodb-rate", NS)
    assert [a["ip"] for s in ep["subsets"] for a in s.get("notReadyAddresses", [])] == [pod["status"]["podIP"]]
    assert not any(s.get("addresses") for s in ep["subsets"])
    assert "connection refused" in resolve_route(backend.world, NS, "mongodb-rate:27017").error
    assert "Readiness probe failed:" in events(backend, pod, "Unhealthy")[0]["message"]
    assert kubectl(backend, "kubectl get pods -l io.kompose.service=mongodb-rate").splitlines()[1].split()[1:3] == ["0/1", "Running"]


# --------------------------------------------------------------------------- init containers
def test_init_container_waits_for_a_missing_service_then_completes(backend: SimBackend) -> None:
    api = backend.api
    saved = api.get("Service", "mongodb-rate", NS)
    api.delete("Service", "mongodb-rate", NS)
    script = 'until nc -z -w 2 mongodb-rate 27017; do echo "waiting for mongodb-rate"; sleep 2; done'
    backend.api.patch("Deployment", "rate", NS, {"spec": {"template": {"spec": {"initContainers": [{"name": "wait-for-db", "image": "busybox:1.36", "command": ["sh", "-c", script]}]}}}})
    backend.advance(90)
    pod = next(p for p in live(backend, "rate") if p["spec"].get("initContainers"))
    name = pod["metadata"]["name"]
    row = next(line for line in kubectl(backend, "kubectl get pods").splitlines() if line.startswith(name))
    assert row.split()[1:3] == ["0/1", "Init:0/1"]
    conds = {c["type"]: c for c in pod["status"]["conditions"]}
    assert conds["Initialized"]["status"] == "False" and conds["Initialized"]["reason"] == "ContainersNotInitialized"
    assert conds["Initialized"]["message"] == "containers with incomplete status: [wait-for-db]"
    assert pod["status"]["phase"] == "Pending"
    assert pod["status"]["containerStatuses"][0]["state"] == {"waiting": {"reason": "PodInitializing"}}
    tail = kubectl(backend, f"kubectl logs {name} -c wait-for-db --tail=2").splitlines()
    assert tail == ["nc: bad address 'mongodb-rate'", "waiting for mongodb-rate"]
    assert "is waiting to start: PodInitializing" in kubectl(backend, f"kubectl logs {name}")
    describe = kubectl(backend, f"kubectl describe pod {name}")
    assert "Init Containers:\n  wait-for-db:" in describe and "Initialized                 False" in describe
    # the old pod still serves, but its cache misses cannot reach the database
    assert client_success(backend) < 0.999
    saved["metadata"] = {k: saved["metadata"][k] for k in ("name", "namespace", "labels")}
    saved["spec"].pop("clusterIP")
    saved["spec"].pop("clusterIPs")
    saved.pop("status", None)
    api.create(saved)
    backend.advance(60)
    pod = api.get("Pod", name, NS)
    assert pod_is_ready(pod)
    (init,) = pod["status"]["initContainerStatuses"]
    assert init["state"]["terminated"]["reason"] == "Completed" and init["state"]["terminated"]["exitCode"] == 0 and init["ready"]
    assert kubectl(backend, "kubectl get pods").count("Init:") == 0


def test_wait_loops_are_parsed_from_the_script() -> None:
    loop = parse_wait_loop({"command": ["sh", "-c", "until nslookup consul.hotel-reservation.svc.cluster.local; do echo waiting; sleep 3; done"]})
    assert loop is not None and (loop.tool, loop.host, loop.interval_s, loop.message) == ("nslookup", "consul.hotel-reservation.svc.cluster.local", 3.0, "waiting")
    loop = parse_wait_loop({"command": ["sh", "-c"], "args": ["until wget -q -O- http://consul:8500/v1/status/leader; do sleep 2; done"]})
    assert loop is not None and (loop.tool, loop.host, loop.port) == ("wget", "consul", 8500)
    assert parse_wait_loop({"command": ["sh", "-c", "cp /config/* /data/"]}) is None


# --------------------------------------------------------------------------- one network namespace per pod
def test_two_processes_cannot_bind_one_port_in_a_pod(backend: SimBackend) -> None:
    sidecar = {"name": "statsd-exporter", "image": "prom/statsd-exporter:v0.26.1", "args": ["--web.listen-address=:8083"]}
    patch_containers(backend, "geo", {"name": "hotel-reserv-geo"}, sidecar)
    backend.advance(180)
    pod = newest(backend, "geo")
    rt = backend.world.runtimes[pod["metadata"]["uid"]]
    statuses = {s["name"]: s for s in pod["status"]["containerStatuses"]}
    # the app's image was on the node, the exporter's had to be pulled: the app bound first
    assert statuses["hotel-reserv-geo"]["ready"] and statuses["hotel-reserv-geo"]["restartCount"] == 0
    assert statuses["statsd-exporter"]["restartCount"] >= 2 and statuses["statsd-exporter"]["lastState"]["terminated"]["exitCode"] == 1
    logs = "".join(line for _, line in rt.containers["statsd-exporter"].prev_log)
    assert 'msg="error starting HTTP server" err="listen tcp :8083: bind: address already in use"' in logs
    assert not pod_is_ready(pod)
    row = next(line for line in kubectl(backend, "kubectl get pods").splitlines() if line.startswith(pod["metadata"]["name"]))
    assert row.split()[1] == "1/2"
    # distinct ports: both run
    patch_containers(backend, "geo", {"name": "hotel-reserv-geo"}, {**sidecar, "args": ["--web.listen-address=:9102"]})
    backend.advance(240)
    pod = newest(backend, "geo")
    assert pod_is_ready(pod) and all(s["ready"] for s in pod["status"]["containerStatuses"])
    ports = sorted(c.listen_port for c in backend.world.runtimes[pod["metadata"]["uid"]].containers.values())
    assert ports == [8083, 9102]


def test_whichever_binds_second_loses(backend: SimBackend) -> None:
    """With the exporter's image already on every node it binds in half a second, before the app does."""
    for host in backend.world.hosts.values():
        host.image_cache.add("prom/statsd-exporter:v0.26.1")
    sidecar = {"name": "statsd-exporter", "image": "prom/statsd-exporter:v0.26.1", "args": ["--web.listen-address=:8083"]}
    patch_containers(backend, "geo", {"name": "hotel-reserv-geo"}, sidecar)
    backend.advance(120)
    pod = newest(backend, "geo")
    statuses = {s["name"]: s for s in pod["status"]["containerStatuses"]}
    assert statuses["statsd-exporter"]["restartCount"] == 0 and statuses["hotel-reserv-geo"]["restartCount"] >= 2
    assert statuses["hotel-reserv-geo"]["lastState"]["terminated"]["exitCode"] == 1
    prev = backend.api.logs(pod["metadata"]["name"], NS, "hotel-reserv-geo", previous=True)
    assert prev.rstrip().endswith("FTL services/geo/server.go:88 > failed to listen: listen tcp :8083: bind: address already in use")
    # the pod is not ready while the app crash-loops: callers of geo fail
    assert client_success(backend) < 0.9


def test_a_second_mongod_on_the_default_port_exits_48(backend: SimBackend) -> None:
    arbiter = {"name": "arbiter", "image": "mongo:4.4.6", "command": ["mongod", "--replSet", "rs0"]}
    patch_containers(backend, "mongodb-profile", {"name": "hotel-reserv-profile-mongo"}, arbiter)
    backend.advance(120)
    pod = newest(backend, "mongodb-profile")
    st = {s["name"]: s for s in pod["status"]["containerStatuses"]}
    assert st["arbiter"]["lastState"]["terminated"]["exitCode"] == 48 and st["hotel-reserv-profile-mongo"]["ready"]
    prev = backend.api.logs(pod["metadata"]["name"], NS, "arbiter", previous=True)
    assert '"msg":"Failed to set up listener","attr":{"error":{"code":9001,"codeName":"SocketException","errmsg":"Address already in use"}}' in prev
    assert not backend.api.get("Endpoints", "mongodb-profile", NS)["subsets"][0].get("addresses")
    patch_containers(backend, "mongodb-profile", {"name": "hotel-reserv-profile-mongo"}, {**arbiter, "command": ["mongod", "--replSet", "rs0", "--port", "27018"]})
    backend.advance(180)
    pod = newest(backend, "mongodb-profile")
    assert pod_is_ready(pod)


# --------------------------------------------------------------------------- volumes
def test_two_mongods_on_one_volume_the_second_cannot_lock_it(backend: SimBackend) -> None:
    api = backend.api
    api.patch("Deployment", "mongodb-reservation", NS, [{"op": "replace", "path": "/spec/template/spec/volumes/0/persistentVolumeClaim/claimName", "value": "user-pvc"}], "json")
    backend.advance(120)
    pod = newest(backend, "mongodb-reservation")
    (user_pod,) = live(backend, "mongodb-user")
    assert pod["spec"]["nodeName"] == user_pod["spec"]["nodeName"]  # the local volume pins it there
    cs = pod["status"]["containerStatuses"][0]
    assert cs["lastState"]["terminated"]["exitCode"] == 100 and cs["restartCount"] >= 2
    prev = api.logs(pod["metadata"]["name"], NS, previous=True)
    assert "DBPathInUse: Unable to lock the lock file: /data/db/mongod.lock (Resource temporarily unavailable)" in prev
    assert pod_is_ready(user_pod)  # the holder is unaffected
    # once the holder is gone, the lock is free
    api.scale("Deployment", "mongodb-user", NS, 0)
    backend.advance(360)
    assert pod_is_ready(newest(backend, "mongodb-reservation"))


def test_missing_claim_and_pv_node_affinity_keep_the_pod_pending(backend: SimBackend) -> None:
    api = backend.api
    api.patch("Deployment", "mongodb-rate", NS, [{"op": "replace", "path": "/spec/template/spec/volumes/0/persistentVolumeClaim/claimName", "value": "rate-data"}], "json")
    pvc = api.get("PersistentVolumeClaim", "profile-pvc", NS)
    pv_node = api.get("PersistentVolume", pvc["spec"]["volumeName"])["metadata"]["annotations"]["local.path.provisioner/selected-node"]
    other = next(w for w in ("worker-1", "worker-2", "worker-3") if w != pv_node)
    api.patch("Deployment", "mongodb-profile", NS, {"spec": {"template": {"spec": {"nodeSelector": {"kubernetes.io/hostname": other}}}}})
    backend.advance(60)
    rate = newest(backend, "mongodb-rate")
    msg = events(backend, rate, "FailedScheduling")[-1]["message"]
    assert msg.startswith('0/4 nodes are available: persistentvolumeclaim "rate-data" not found.')
    profile = newest(backend, "mongodb-profile")
    msg = events(backend, profile, "FailedScheduling")[-1]["message"]
    assert "1 node(s) had volume node affinity conflict" in msg and "2 node(s) didn't match Pod's node affinity/selector" in msg
    assert not live(backend, "mongodb-profile")[0]["spec"].get("nodeName")


def test_rwo_block_volume_used_on_two_nodes_is_a_multi_attach_error(backend: SimBackend) -> None:
    api = backend.api
    api.create(
        {
            "kind": "PersistentVolume",
            "apiVersion": "v1",
            "metadata": {"name": "pv-ebs-reports"},
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "capacity": {"storage": "10Gi"},
                "csi": {"driver": "ebs.csi.aws.com", "volumeHandle": "vol-0a1b2c3d4e5f60718", "fsType": "ext4"},
                "persistentVolumeReclaimPolicy": "Retain",
                "storageClassName": "",
            },
        }
    )
    api.create({"kind": "PersistentVolumeClaim", "apiVersion": "v1", "metadata": {"name": "reports", "namespace": NS}, "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "", "volumeName": "pv-ebs-reports", "resources": {"requests": {"storage": "10Gi"}}}})
    backend.advance(10)
    assert api.get("PersistentVolumeClaim", "reports", NS)["status"]["phase"] == "Bound"

    def pod(name: str, node: str) -> dict:
        return {
            "kind": "Pod",
            "apiVersion": "v1",
            "metadata": {"name": name, "namespace": NS},
            "spec": {
                "nodeName": node,
                "containers": [{"name": "report", "image": "busybox:1.36", "command": ["sleep", "3600"], "volumeMounts": [{"name": "data", "mountPath": "/data"}]}],
                "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "reports"}}],
            },
        }

    api.create(pod("report-a", "worker-1"))
    backend.advance(20)
    api.create(pod("report-b", "worker-2"))
    api.create(pod("report-c", "worker-1"))  # same node: an attached RWO volume serves every pod there
    backend.advance(60)
    a, b, c = (api.get("Pod", n, NS) for n in ("report-a", "report-b", "report-c"))
    assert a["status"]["phase"] == "Running" and c["status"]["phase"] == "Running"
    assert b["status"]["phase"] == "Pending" and b["status"]["containerStatuses"][0]["state"]["waiting"]["reason"] == "ContainerCreating"
    attach = max(events(backend, b, "FailedAttachVolume"), key=lambda e: e["lastTimestamp"])
    assert attach["message"] == 'Multi-Attach error for volume "pv-ebs-reports" Volume is already used by pod(s) report-a, report-c'
    assert attach["source"]["component"] == "attachdetach-controller" and attach["type"] == "Warning"
    assert "unattached volumes=[data]" in events(backend, b, "FailedMount")[0]["message"]
    # the volume follows its users: once they are gone it attaches to worker-2
    api.delete("Pod", "report-a", NS)
    api.delete("Pod", "report-c", NS)
    backend.advance(30)
    assert api.get("Pod", "report-b", NS)["status"]["phase"] == "Running"
