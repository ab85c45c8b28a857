"""Protobuf request bodies (``sre_env.serve.kube_protobuf``): the real kubectl's generators against serve.

kubectl's typed clients send built-in kinds as ``application/vnd.kubernetes.protobuf``. The
oracle for the decoder is kubectl itself: ``--dry-run=client -o json`` prints the object it
would send, so the object decoded from the protobuf body of the same command must equal it.
"""

from __future__ import annotations

import base64
import json
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from _kubectl import run_kubectl

import sre_env
from sre_env.errors import ApiError
from sre_env.serve import kube_protobuf
from sre_env.serve.kube_api import handle
from sre_env.serve.kube_protobuf import (
    MAGIC,
    UNKNOWN_FORMAT,
    as_requested,
    decode,
    hpa_v1_to_v2,
)
from sre_env.serve.server import IncidentServer

KUBECTL = shutil.which("kubectl")
needs_kubectl = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")

NS = "hotel-reservation"


# ---------------------------------------------------------------- a tiny encoder (proto2 wire format)
def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1  # negative ints: two's complement over 64 bits, as Go writes them
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def v(num: int, n: int) -> bytes:
    """A varint field."""
    return _varint(num << 3) + _varint(n)


def ld(num: int, *parts: bytes | str) -> bytes:
    """A length-delimited field: a string, bytes, or a message from its encoded fields."""
    raw = b"".join(p.encode() if isinstance(p, str) else p for p in parts)
    return _varint(num << 3 | 2) + _varint(len(raw)) + raw


def entry(num: int, key: str, value: bytes | str) -> bytes:
    """One map entry."""
    return ld(num, ld(1, key), ld(2, value))


def meta(name: str, **extra: bytes) -> bytes:
    """ObjectMeta as Go writes it: every non-pointer field, empty or not."""
    return ld(1, ld(1, name), ld(2, ""), ld(3, ""), ld(4, ""), ld(5, ""), ld(6, ""), v(7, 0), ld(8), *extra.values())


def body(api_version: str, kind: str, raw: bytes) -> bytes:
    """The ``k8s\\x00`` envelope: a runtime.Unknown around the object's encoding."""
    return MAGIC + ld(1, ld(1, api_version), ld(2, kind)) + ld(2, raw) + ld(3, "") + ld(4, "")


def refused(data: bytes) -> ApiError:
    with pytest.raises(ApiError) as err:
        decode(data)
    assert err.value.code == 415 and err.value.reason == "UnsupportedMediaType" and err.value.message == UNKNOWN_FORMAT
    return err.value


# ---------------------------------------------------------------- decoder units
def test_configmap_maps_and_sparse_meta() -> None:
    raw = meta("cfg", labels=entry(11, "app", "web")) + entry(2, "a", "b") + entry(2, "k", "") + entry(3, "bin", b"\x00\xff")
    obj = decode(body("v1", "ConfigMap", raw))
    assert obj == {
        "kind": "ConfigMap",
        "apiVersion": "v1",
        "metadata": {"name": "cfg", "labels": {"app": "web"}},  # empty strings, generation 0 and the zero time dropped
        "data": {"a": "b", "k": ""},
        "binaryData": {"bin": "AP8="},
    }


def test_secret_data_is_base64_as_the_api_stores_it() -> None:
    obj = decode(body("v1", "Secret", meta("s") + entry(2, "password", b"hunter2") + ld(3, "Opaque") + entry(4, "plain", "text")))
    assert obj["data"] == {"password": base64.b64encode(b"hunter2").decode()}
    assert obj["type"] == "Opaque" and obj["stringData"] == {"plain": "text"}


def test_deployment_pointers_intorstring_quantities_and_inlined_refs() -> None:
    container = ld(
        2,
        ld(1, "app"), ld(2, "nginx:1.27"), ld(3, "sleep"), ld(4, "5"),
        ld(6, ld(1, ""), v(2, 0), v(3, 80), ld(4, "TCP"), ld(5, "")),
        ld(7, ld(1, "PASSWORD"), ld(2, ""), ld(3, ld(4, ld(1, ld(1, "db-secret")), ld(2, "pw")))),
        ld(8, entry(1, "cpu", ld(1, "500m")), entry(2, "memory", ld(1, "64Mi"))),
        v(16, 0),
    )
    spec = ld(
        2,
        v(1, 0),  # replicas: a pointer, set to 0: kept
        ld(2, entry(1, "app", "web")),
        ld(3, ld(1, ld(11, entry(1, "app", "web"))), ld(2, container, ld(3, "Always"), ld(6, "ClusterFirst"))),
        ld(4, ld(1, "RollingUpdate"), ld(2, ld(1, v(1, 1), ld(3, "25%")), ld(2, v(1, 0), v(2, 2)))),
        v(5, 0),  # minReadySeconds: omitempty, 0: dropped
    )
    obj = decode(body("apps/v1", "Deployment", meta("web") + spec + ld(3)))
    s = obj["spec"]
    assert s["replicas"] == 0 and "minReadySeconds" not in s
    assert s["selector"] == {"matchLabels": {"app": "web"}}
    assert s["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": 2}}
    c = s["template"]["spec"]["containers"][0]
    assert c["command"] == ["sleep"] and c["args"] == ["5"]
    assert c["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    assert c["env"] == [{"name": "PASSWORD", "valueFrom": {"secretKeyRef": {"name": "db-secret", "key": "pw"}}}]
    assert c["resources"] == {"limits": {"cpu": "500m"}, "requests": {"memory": "64Mi"}}
    assert obj["status"] == {}


def test_negative_ints_times_and_non_omitempty_zeros() -> None:
    obj = decode(body("scheduling.k8s.io/v1", "PriorityClass", meta("low") + v(2, -5) + v(3, 0) + ld(4, "")))
    assert obj["value"] == -5 and "globalDefault" not in obj and "description" not in obj
    assert decode(body("scheduling.k8s.io/v1", "PriorityClass", meta("zero") + v(2, 0)))["value"] == 0  # `json:"value"`: kept
    stamped = decode(body("v1", "Namespace", ld(1, ld(1, "ns"), ld(8, v(1, 1700000000), v(2, 5)))))
    assert stamped["metadata"] == {"name": "ns", "creationTimestamp": "2023-11-14T22:13:20Z"}


def test_rbac_and_ingress_and_pdb() -> None:
    rule = ld(2, ld(1, "get"), ld(1, "list"), ld(2, ""), ld(3, "pods"), ld(4, "x"))
    assert decode(body("rbac.authorization.k8s.io/v1", "Role", meta("r") + rule))["rules"] == [
        {"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["x"]}
    ]
    binding = meta("rb") + ld(2, ld(1, "User"), ld(2, "rbac.authorization.k8s.io"), ld(3, "alice"), ld(4, "")) + ld(3, ld(1, "rbac.authorization.k8s.io"), ld(2, "Role"), ld(3, "r"))
    rb = decode(body("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", binding))
    assert rb["subjects"] == [{"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "alice"}]
    assert rb["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"}
    backend = ld(2, ld(4, ld(1, "svc"), ld(2, ld(1, ""), v(2, 8080))))
    path = ld(1, ld(1, "/api"), backend, ld(3, "Prefix"))
    ing = decode(body("networking.k8s.io/v1", "Ingress", meta("i") + ld(2, ld(3, ld(1, "foo.com"), ld(2, ld(1, path))), ld(4, "nginx"))))
    assert ing["spec"] == {
        "rules": [{"host": "foo.com", "http": {"paths": [{"path": "/api", "backend": {"service": {"name": "svc", "port": {"number": 8080}}}, "pathType": "Prefix"}]}}],
        "ingressClassName": "nginx",
    }
    pdb = decode(body("policy/v1", "PodDisruptionBudget", meta("p") + ld(2, ld(1, v(1, 0), v(2, 1)), ld(2, entry(1, "app", "web")))))
    assert pdb["spec"] == {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}


def test_autoscaling_v1_becomes_the_served_v2_and_answers_as_v1() -> None:
    spec = ld(2, ld(1, ld(1, "Deployment"), ld(2, "web"), ld(3, "apps/v1")), v(2, 2), v(3, 5), v(4, 50))
    obj = decode(body("autoscaling/v1", "HorizontalPodAutoscaler", meta("web") + spec + ld(3, v(3, 0), v(4, 0))))
    assert obj["apiVersion"] == "autoscaling/v2"
    assert obj["spec"] == {
        "scaleTargetRef": {"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"},
        "minReplicas": 2,
        "maxReplicas": 5,
        "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}}],
    }
    back = as_requested(obj, "/apis/autoscaling/v1/namespaces/x/horizontalpodautoscalers")
    assert back["apiVersion"] == "autoscaling/v1" and back["spec"]["targetCPUUtilizationPercentage"] == 50 and "metrics" not in back["spec"]
    assert as_requested(obj, "/apis/autoscaling/v2/namespaces/x/horizontalpodautoscalers") is obj
    assert hpa_v1_to_v2({"apiVersion": "autoscaling/v1", "spec": {"maxReplicas": 3}})["spec"] == {"maxReplicas": 3}


def test_what_cannot_be_named_is_refused_not_dropped() -> None:
    refused(body("v1", "ConfigMap", meta("c") + ld(99, "x")))  # an unknown field number in a known message
    refused(body("v1", "ConfigMap", meta("c") + v(2, 1)))  # a map field with a varint wire type
    refused(body("v1", "PodTemplate", meta("c")))  # a kind not modelled
    refused(body("example.com/v1", "ConfigMap", meta("c")))  # a known kind name in another group
    refused(body("v1", "ConfigMap", meta("c"))[:-9])  # truncated
    refused(MAGIC + ld(1, ld(1, "v1"), ld(2, "ConfigMap")) + ld(2, meta("c")) + ld(3, "gzip"))  # an encoded raw
    refused(body("v1", "ConfigMap", ld(1, ld(1, b"\xff\xfe"))))  # a string that is not UTF-8


def test_the_refusal_is_the_apiservers_status() -> None:
    env = sre_env.SREEnv("TargetPortMisconfig")
    env.reset(seed=0)
    data = body("v1", "ConfigMap", meta("c") + ld(42, "?"))
    resp = handle(env.backend, "POST", f"/api/v1/namespaces/{NS}/configmaps", "", {"Content-Type": "application/vnd.kubernetes.protobuf"}, data)
    assert resp.status == 415
    assert resp.body == {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": UNKNOWN_FORMAT,
        "reason": "UnsupportedMediaType", "code": 415,
    }
    ok = handle(env.backend, "POST", f"/api/v1/namespaces/{NS}/configmaps", "", {}, body("v1", "ConfigMap", meta("c") + entry(2, "a", "b")))
    assert ok.status == 201 and env.backend.api.get("ConfigMap", "c", NS)["data"] == {"a": "b"}


# ---------------------------------------------------------------- the real kubectl against serve
@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    """A served sim whose protobuf decodes are recorded (kube_api looks ``decode`` up at each request)."""
    pytest.importorskip("aiohttp", reason="the [serve] extra (aiohttp) is not installed")
    env = sre_env.SREEnv("TargetPortMisconfig")
    env.reset(seed=0)
    server = IncidentServer(env.backend, speed=0).start()
    tmp = tmp_path_factory.mktemp("kubepb")
    cfg = server.write_kubeconfig(tmp / "kubeconfig", NS)
    (tmp / "blob.bin").write_bytes(bytes(range(256)))
    seen: list[dict[str, Any]] = []
    original = kube_protobuf.decode

    def recording(data: bytes) -> dict[str, Any]:
        obj = original(data)
        seen.append(json.loads(json.dumps(obj)))
        return obj

    kube_protobuf.decode = recording
    try:
        yield env, server, cfg, tmp, seen
    finally:
        kube_protobuf.decode = original
        server.stop()


def kubectl(cfg: Path, *args: str) -> subprocess.CompletedProcess:
    return run_kubectl(KUBECTL, cfg, *args)


def _no_nulls(obj: Any) -> Any:
    """kubectl's JSON writes the zero time as ``null`` (``creationTimestamp``); the protobuf has no such field."""
    if isinstance(obj, dict):
        return {k: _no_nulls(x) for k, x in obj.items() if x is not None}
    if isinstance(obj, list):
        return [_no_nulls(x) for x in obj]
    return obj


#: (generator arguments, resource, name): each sends a protobuf body
GENERATORS = [
    ("create configmap pb-cm --from-literal=a=b --from-literal=k=v --from-file=blob={tmp}/blob.bin", "configmap", "pb-cm"),
    ("create secret generic pb-s --from-literal=a=b", "secret", "pb-s"),
    ("create secret docker-registry pb-reg --docker-server=r.io --docker-username=u --docker-password=p", "secret", "pb-reg"),
    ("create namespace pb-ns", "namespace", "pb-ns"),
    ("create serviceaccount pb-sa", "serviceaccount", "pb-sa"),
    ("create deployment pb-web --image=nginx --replicas=2 --port=80", "deployment", "pb-web"),
    ("create deployment pb-zero --image=nginx --image=redis:7 --replicas=0", "deployment", "pb-zero"),
    ("create service clusterip pb-cip --tcp=80:8080", "service", "pb-cip"),
    ("create service clusterip pb-headless --clusterip=None", "service", "pb-headless"),
    ("create service nodeport pb-np --tcp=80:8080 --node-port=30080", "service", "pb-np"),
    ("create service externalname pb-en --external-name=example.com", "service", "pb-en"),
    ("create job pb-job --image=busybox -- echo hi", "job", "pb-job"),
    ("create cronjob pb-cron --image=busybox --schedule=*/5_*_*_*_* --restart=OnFailure -- date", "cronjob", "pb-cron"),
    ("create job pb-job2 --from=cronjob/pb-cron", "job", "pb-job2"),
    ("create role pb-role --verb=get,list --resource=pods,deployments.apps,pods/log --resource-name=x", "role", "pb-role"),
    ("create rolebinding pb-rb --role=pb-role --user=alice --group=devs --serviceaccount=hotel-reservation:pb-sa", "rolebinding", "pb-rb"),
    ("create clusterrole pb-cr --verb=get --non-resource-url=/logs/*", "clusterrole", "pb-cr"),
    ("create clusterrole pb-agg --aggregation-rule=rbac.example.com/aggregate=true", "clusterrole", "pb-agg"),
    ("create clusterrolebinding pb-crb --clusterrole=pb-cr --user=bob", "clusterrolebinding", "pb-crb"),
    ("create quota pb-q -n pb-ns --hard=cpu=1,memory=1Gi,pods=2 --scopes=BestEffort", "resourcequota", "pb-q"),
    ("create priorityclass pb-pc --value=1000 --description=high --preemption-policy=Never", "priorityclass", "pb-pc"),
    ("create priorityclass pb-pc0 --value=0", "priorityclass", "pb-pc0"),
    ("create ingress pb-ing --class=nginx --rule=foo.com/bar=svc1:8080 --rule=bar.com/*=svc2:http,tls=my-cert --default-backend=defsvc:80 --annotation=a=b", "ingress", "pb-ing"),
    ("autoscale deployment pb-web --min=2 --max=5 --cpu-percent=50", "hpa", "pb-web"),
]


def _args(command: str, tmp: Path) -> list[str]:
    return [a.replace("_", " ") if a.startswith("--schedule=") else a for a in shlex.split(command.format(tmp=tmp))]


@needs_kubectl
def test_every_generator_creates_what_kubectl_meant(served) -> None:
    """Each generator's protobuf body decodes to the very object kubectl prints for ``--dry-run=client -o json``."""
    _, _, cfg, tmp, seen = served
    for command, resource, name in GENERATORS:
        args = _args(command, tmp)
        split = args.index("--") if "--" in args else len(args)
        dry = kubectl(cfg, *args[:split], "--dry-run=client", "-o", "json", *args[split:])
        assert dry.returncode == 0, (command, dry.stderr)
        before = len(seen)
        real = kubectl(cfg, *args)
        assert real.returncode == 0 and not real.stderr, (command, real.stderr)
        assert len(seen) == before + 1, f"{command}: no protobuf body"
        want = _no_nulls(json.loads(dry.stdout))
        if want["apiVersion"] == "autoscaling/v1":
            want = hpa_v1_to_v2(want)
        assert seen[-1] == want, command
        got = kubectl(cfg, "get", resource, name, "-o", "json", *(["-n", "pb-ns"] if " -n pb-ns" in command else []))
        assert got.returncode == 0, (command, got.stderr)


@needs_kubectl
def test_generated_objects_behave(served) -> None:
    env, server, cfg, tmp, _ = served
    for command, _, _ in GENERATORS:
        if "pb-web" in command or "pb-s " in command or "pb-cm" in command:
            kubectl(cfg, *_args(command, tmp))  # idempotent here: AlreadyExists when the other test ran first
    # a Deployment whose pods run
    with server.lock:
        env.backend.advance(120)
    pods = json.loads(kubectl(cfg, "get", "pods", "-l", "app=pb-web", "-o", "json").stdout)["items"]
    assert len(pods) == 2 and all(p["status"]["phase"] == "Running" for p in pods)
    assert [p["containerPort"] for p in pods[0]["spec"]["containers"][0]["ports"]] == [80]
    # Secret data is base64, as the API stores it
    secret = json.loads(kubectl(cfg, "get", "secret", "pb-s", "-o", "json").stdout)
    assert secret["data"] == {"a": "Yg=="}
    cm = json.loads(kubectl(cfg, "get", "configmap", "pb-cm", "-o", "json").stdout)
    assert cm["data"] == {"a": "b", "k": "v"} and base64.b64decode(cm["binaryData"]["blob"]) == bytes(range(256))
    # autoscale: the served v2 HPA carries the CPU target; kubectl printed the name it read back
    hpa = json.loads(kubectl(cfg, "get", "hpa", "pb-web", "-o", "json").stdout)
    assert hpa["spec"]["metrics"][0]["resource"]["target"] == {"type": "Utilization", "averageUtilization": 50}
    assert hpa["spec"]["minReplicas"] == 2 and hpa["spec"]["maxReplicas"] == 5
    again = kubectl(cfg, "autoscale", "deployment", "pb-web", "--name=pb-web2", "--max=3")
    assert again.stdout.strip() == "horizontalpodautoscaler.autoscaling/pb-web2 autoscaled"
    assert "50%" in kubectl(cfg, "get", "hpa", "pb-web").stdout


@needs_kubectl
def test_run_and_expose(served) -> None:
    """``kubectl run`` and ``kubectl expose`` (JSON bodies in 1.32) make a Pod and a Service with Endpoints."""
    env, server, cfg, _, _ = served
    run = kubectl(cfg, "run", "pb-t", "--image=busybox", "--restart=Never", "--", "sleep", "5")
    assert run.returncode == 0 and run.stdout.strip() == "pod/pb-t created", run.stderr
    pod = json.loads(kubectl(cfg, "get", "pod", "pb-t", "-o", "json").stdout)
    assert pod["spec"]["containers"][0]["args"] == ["sleep", "5"] and pod["spec"]["restartPolicy"] == "Never"
    exposed = kubectl(cfg, "expose", "deployment/geo", "--port=18083", "--target-port=8083", "--name=pb-geo")
    assert exposed.returncode == 0 and exposed.stdout.strip() == "service/pb-geo exposed", exposed.stderr
    deploy = json.loads(kubectl(cfg, "get", "deployment", "geo", "-o", "json").stdout)
    svc = json.loads(kubectl(cfg, "get", "service", "pb-geo", "-o", "json").stdout)
    assert svc["spec"]["selector"] == deploy["spec"]["selector"]["matchLabels"]
    assert [(p["port"], p["targetPort"]) for p in svc["spec"]["ports"]] == [(18083, 8083)]
    with server.lock:
        env.backend.advance(10)
    ep = json.loads(kubectl(cfg, "get", "endpoints", "pb-geo", "-o", "json").stdout)
    assert ep["subsets"][0]["addresses"] and ep["subsets"][0]["ports"][0]["port"] == 8083


def test_protobuf_strings_are_not_time_shifted() -> None:
    """The served clock's shift rewrites JSON timestamps; inside a protobuf string it must not (the data is the user's)."""
    env = sre_env.SREEnv("TargetPortMisconfig")
    env.reset(seed=0)
    text = '{"creationTimestamp":"2024-01-01T00:00:00Z"}'
    data = body("v1", "ConfigMap", meta("obj-json") + entry(2, "obj.json", text))
    resp = handle(env.backend, "POST", f"/api/v1/namespaces/{NS}/configmaps", "", {}, data, offset=3600)
    assert resp.status == 201
    assert env.backend.api.get("ConfigMap", "obj-json", NS)["data"] == {"obj.json": text}


#: a CronJob whose job template uses the PodSpec messages no generator writes: ``kubectl create job --from``
#: sends the whole template back as protobuf (volumes, probes, env sources, tolerations, init containers)
RICH_CRONJOB = {'apiVersion': 'batch/v1',
 'kind': 'CronJob',
 'metadata': {'name': 'rich', 'labels': {'a': 'b'}},
 'spec': {'schedule': '0 * * * *',
          'jobTemplate': {'metadata': {'labels': {'j': 'k'}},
                          'spec': {'backoffLimit': 0,
                                   'parallelism': 1,
                                   'completions': 2,
                                   'activeDeadlineSeconds': 60,
                                   'ttlSecondsAfterFinished': 30,
                                   'template': {'metadata': {'labels': {'p': 'q'}, 'annotations': {'x': 'y'}},
                                                'spec': {'restartPolicy': 'Never',
                                                         'terminationGracePeriodSeconds': 0,
                                                         'serviceAccountName': 'default',
                                                         'nodeSelector': {'kubernetes.io/os': 'linux'},
                                                         'priorityClassName': '',
                                                         'automountServiceAccountToken': False,
                                                         'enableServiceLinks': False,
                                                         'hostNetwork': True,
                                                         'imagePullSecrets': [{'name': 'reg'}],
                                                         'tolerations': [{'key': 'k', 'operator': 'Equal', 'value': 'v', 'effect': 'NoSchedule'},
                                                                         {'operator': 'Exists', 'effect': 'NoExecute', 'tolerationSeconds': 30}],
                                                         'volumes': [{'name': 'cfg',
                                                                      'configMap': {'name': 'c1',
                                                                                    'items': [{'key': 'a', 'path': 'a.txt', 'mode': 420}],
                                                                                    'defaultMode': 420,
                                                                                    'optional': True}},
                                                                     {'name': 'sec', 'secret': {'secretName': 's1', 'defaultMode': 256}},
                                                                     {'name': 'tmp', 'emptyDir': {'medium': 'Memory', 'sizeLimit': '64Mi'}},
                                                                     {'name': 'data',
                                                                      'persistentVolumeClaim': {'claimName': 'pvc', 'readOnly': True}},
                                                                     {'name': 'host', 'hostPath': {'path': '/var/log', 'type': 'Directory'}}],
                                                         'initContainers': [{'name': 'init', 'image': 'busybox', 'command': ['sh', '-c', 'true']}],
                                                         'containers': [{'name': 'main',
                                                                         'image': 'busybox:1.36',
                                                                         'imagePullPolicy': 'IfNotPresent',
                                                                         'workingDir': '/w',
                                                                         'command': ['sleep'],
                                                                         'args': ['5'],
                                                                         'stdin': True,
                                                                         'tty': True,
                                                                         'ports': [{'name': 'http',
                                                                                    'containerPort': 8080,
                                                                                    'protocol': 'TCP',
                                                                                    'hostPort': 0}],
                                                                         'env': [{'name': 'A', 'value': '1'},
                                                                                 {'name': 'POD',
                                                                                  'valueFrom': {'fieldRef': {'apiVersion': 'v1',
                                                                                                             'fieldPath': 'metadata.name'}}},
                                                                                 {'name': 'MEM',
                                                                                  'valueFrom': {'resourceFieldRef': {'containerName': 'main',
                                                                                                                     'resource': 'limits.memory',
                                                                                                                     'divisor': '1Mi'}}},
                                                                                 {'name': 'C',
                                                                                  'valueFrom': {'configMapKeyRef': {'name': 'c1',
                                                                                                                    'key': 'a',
                                                                                                                    'optional': True}}},
                                                                                 {'name': 'S',
                                                                                  'valueFrom': {'secretKeyRef': {'name': 's1', 'key': 'a'}}}],
                                                                         'envFrom': [{'prefix': 'P_', 'configMapRef': {'name': 'c1'}},
                                                                                     {'secretRef': {'name': 's1', 'optional': False}}],
                                                                         'resources': {'limits': {'cpu': '1', 'memory': '128Mi'},
                                                                                       'requests': {'cpu': '100m', 'memory': '64Mi'}},
                                                                         'volumeMounts': [{'name': 'cfg', 'mountPath': '/cfg', 'readOnly': True},
                                                                                          {'name': 'tmp', 'mountPath': '/tmp', 'subPath': 'x'}],
                                                                         'livenessProbe': {'httpGet': {'path': '/healthz',
                                                                                                       'port': 8080,
                                                                                                       'scheme': 'HTTP',
                                                                                                       'httpHeaders': [{'name': 'X', 'value': '1'}]},
                                                                                           'initialDelaySeconds': 5,
                                                                                           'periodSeconds': 10,
                                                                                           'timeoutSeconds': 1,
                                                                                           'successThreshold': 1,
                                                                                           'failureThreshold': 3},
                                                                         'readinessProbe': {'tcpSocket': {'port': 'http'}, 'periodSeconds': 5},
                                                                         'startupProbe': {'exec': {'command': ['cat', '/tmp/ok']},
                                                                                          'failureThreshold': 30},
                                                                         'terminationMessagePath': '/dev/termination-log',
                                                                         'terminationMessagePolicy': 'File'},
                                                                        {'name': 'side',
                                                                         'image': 'envoy',
                                                                         'livenessProbe': {'grpc': {'port': 9000, 'service': 'health'}}}]}}}}}}


@needs_kubectl
def test_job_from_a_rich_cronjob_carries_every_pod_field(served) -> None:
    _, _, cfg, tmp, seen = served
    (tmp / "rich.json").write_text(json.dumps(RICH_CRONJOB))
    applied = kubectl(cfg, "apply", "-f", str(tmp / "rich.json"))
    assert applied.returncode == 0, applied.stderr
    dry = kubectl(cfg, "create", "job", "pb-rich", "--from=cronjob/rich", "--dry-run=client", "-o", "json")
    before = len(seen)
    real = kubectl(cfg, "create", "job", "pb-rich", "--from=cronjob/rich")
    assert real.returncode == 0 and len(seen) == before + 1, real.stderr
    assert seen[-1] == _no_nulls(json.loads(dry.stdout))
    pod = seen[-1]["spec"]["template"]["spec"]
    want = RICH_CRONJOB["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    assert pod["volumes"] == want["volumes"] and pod["tolerations"] == want["tolerations"]
    assert pod["containers"][0]["env"] == want["containers"][0]["env"]
    assert pod["containers"][0]["envFrom"] == [{"prefix": "P_", "configMapRef": {"name": "c1"}}, {"secretRef": {"name": "s1", "optional": False}}]
    main = pod["containers"][0]  # the stored template is defaulted (probe thresholds): the original's fields are a subset
    for probe in ("livenessProbe", "readinessProbe", "startupProbe"):
        assert want["containers"][0][probe].items() <= main[probe].items()
    assert main["readinessProbe"]["tcpSocket"] == {"port": "http"} and main["startupProbe"]["exec"] == {"command": ["cat", "/tmp/ok"]}
    assert main["resources"] == want["containers"][0]["resources"] and main["volumeMounts"] == want["containers"][0]["volumeMounts"]
    assert pod["initContainers"][0]["command"] == ["sh", "-c", "true"] and pod["imagePullSecrets"] == [{"name": "reg"}]
    assert pod["containers"][1]["livenessProbe"]["grpc"] == {"port": 9000, "service": "health"}
    assert pod["terminationGracePeriodSeconds"] == 0 and pod["automountServiceAccountToken"] is False
