"""``kubectl apply`` (client- and server-side), ``diff``, ``explain`` and field validation, with the real kubectl.

kubectl 1.32 reads ``/openapi/v3`` before it writes; the server publishes the
served kinds' documents (``kube_openapi``), validates fields itself
(``kube_fields``), and runs dry runs and server-side apply (``kube_apply``).
"""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from _kubectl import run_kubectl

import sre_env
from sre_env.kube.patching import strategic_merge
from sre_env.serve.kube_api import handle
from sre_env.serve.kube_apply import apply_fields, ssa_merge
from sre_env.kube.decoding import decode, go_format

aiohttp = pytest.importorskip("aiohttp", reason="the [serve] extra (aiohttp) is not installed")
KUBECTL = shutil.which("kubectl")
needs_kubectl = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")

from sre_env.serve.server import IncidentServer

NS = "hotel-reservation"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory):
    env = sre_env.SREEnv("TargetPortMisconfig")
    env.reset(seed=0)
    server = IncidentServer(env.backend, speed=0, prom_port=None).start()
    cfg = server.write_kubeconfig(tmp_path_factory.mktemp("kube") / "kubeconfig", NS)
    yield env, server, cfg
    server.stop()


def kubectl(cfg: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return run_kubectl(KUBECTL, cfg, *args, stdin=stdin)


def manifest(cfg: Path, kind: str, name: str) -> dict:
    """What a user saves with ``kubectl get -o yaml`` and edits: without status and server-set metadata."""
    obj = yaml.safe_load(kubectl(cfg, "get", kind, name, "-o", "yaml").stdout)
    obj.pop("status", None)
    for key in ("creationTimestamp", "resourceVersion", "uid", "generation", "managedFields"):
        obj["metadata"].pop(key, None)
    obj["metadata"].get("annotations", {}).pop("deployment.kubernetes.io/revision", None)  # the controller's
    return obj


def apply(cfg: Path, obj: dict | list[dict], *flags: str) -> subprocess.CompletedProcess:
    docs = obj if isinstance(obj, list) else [obj]
    return kubectl(cfg, "apply", *flags, "-f", "-", stdin=yaml.safe_dump_all(docs))


# ---------------------------------------------------------------- with the real kubectl
@needs_kubectl
def test_apply_of_an_edited_deployment_changes_it_and_a_rollout_follows(served) -> None:
    env, server, cfg = served
    dep = manifest(cfg, "deploy", "search")
    dep["spec"]["template"]["spec"]["containers"][0].setdefault("env", []).append({"name": "LOG_LEVEL", "value": "debug"})
    out = apply(cfg, dep)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "deployment.apps/search configured"
    with server.lock:
        env.backend.advance(120)
        api = env.backend.api
        live = api.get("Deployment", "search", NS)
        assert {"name": "LOG_LEVEL", "value": "debug"} in live["spec"]["template"]["spec"]["containers"][0]["env"]
        assert "kubectl.kubernetes.io/last-applied-configuration" in live["metadata"]["annotations"]
        assert live["status"]["observedGeneration"] == live["metadata"]["generation"] == 2
        pods = api.list("Pod", NS, "io.kompose.service=search")
        rs = api.list("ReplicaSet", NS, "io.kompose.service=search")
    assert len(rs) == 2  # the rollout made a new ReplicaSet and its pods carry the new variable
    assert pods and all(any(e["name"] == "LOG_LEVEL" for e in p["spec"]["containers"][0].get("env") or ()) for p in pods)
    again = apply(cfg, dep)
    assert (again.returncode, again.stdout.strip()) == (0, "deployment.apps/search unchanged")


@needs_kubectl
def test_apply_creates_new_objects_and_is_idempotent(served) -> None:
    env, server, cfg = served
    objs = [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "applied-cm"}, "data": {"mode": "fast"}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "applied-svc"}, "spec": {"selector": {"app": "x"}, "ports": [{"port": 80, "targetPort": 8080}]}},
    ]
    first = apply(cfg, objs)
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines() == ["configmap/applied-cm created", "service/applied-svc created"]
    second = apply(cfg, objs)
    assert second.stdout.splitlines() == ["configmap/applied-cm unchanged", "service/applied-svc unchanged"]
    objs[0]["data"]["mode"] = "safe"
    third = apply(cfg, objs)
    assert third.stdout.splitlines() == ["configmap/applied-cm configured", "service/applied-svc unchanged"]
    with server.lock:
        assert env.backend.api.get("ConfigMap", "applied-cm", NS)["data"] == {"mode": "safe"}
        assert env.backend.api.get("Service", "applied-svc", NS)["spec"]["clusterIP"].startswith("10.96.")


@needs_kubectl
def test_server_side_apply_merges_by_key_and_removes_what_it_no_longer_applies(served) -> None:
    env, server, cfg = served
    partial = {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "profile"},
        "spec": {"replicas": 2, "template": {"spec": {"containers": [{"name": "hotel-reserv-profile", "env": [{"name": "EXTRA", "value": "1"}]}]}}},
    }
    out = apply(cfg, partial, "--server-side")
    assert (out.returncode, out.stdout.strip()) == (0, "deployment.apps/profile serverside-applied"), out.stderr
    with server.lock:
        live = env.backend.api.get("Deployment", "profile", NS)
    ctr = live["spec"]["template"]["spec"]["containers"][0]
    names = [e["name"] for e in ctr["env"]]
    assert live["spec"]["replicas"] == 2 and names[-1] == "EXTRA" and len(names) > 1 and ctr["image"]  # merged, not replaced
    mine = [m for m in live["metadata"]["managedFields"] if m["manager"] == "kubectl" and m["operation"] == "Apply"]
    assert mine and 'k:{"name":"EXTRA"}' in mine[0]["fieldsV1"]["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"hotel-reserv-profile"}']["f:env"]
    partial["spec"]["template"]["spec"]["containers"][0]["env"] = []
    assert apply(cfg, partial, "--server-side").returncode == 0
    with server.lock:
        env_names = [e["name"] for e in env.backend.api.get("Deployment", "profile", NS)["spec"]["template"]["spec"]["containers"][0]["env"]]
    assert env_names == names[:-1]  # only the variable this manager applied before went away
    created = apply(cfg, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa-cm"}, "data": {"k": "v"}}, "--server-side")
    assert created.stdout.strip() == "configmap/ssa-cm serverside-applied"
    shown = yaml.safe_load(kubectl(cfg, "get", "cm", "ssa-cm", "-o", "yaml", "--show-managed-fields").stdout)
    assert shown["metadata"]["managedFields"][0]["fieldsV1"] == {"f:data": {"f:k": {}}}
    rv = shown["metadata"]["resourceVersion"]
    apply(cfg, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "ssa-cm"}, "data": {"k": "v"}}, "--server-side")
    assert kubectl(cfg, "get", "cm", "ssa-cm", "-o", "jsonpath={.metadata.resourceVersion}").stdout == rv  # no change, no write


@needs_kubectl
def test_diff_shows_the_change_without_making_it(served) -> None:
    env, server, cfg = served
    dep = manifest(cfg, "deploy", "rate")
    dep["spec"]["replicas"] = 3
    out = kubectl(cfg, "diff", "-f", "-", stdin=yaml.safe_dump(dep))
    assert out.returncode == 1, out.stderr  # 1: differences found
    assert "-  replicas: 1\n" in out.stdout and "+  replicas: 3\n" in out.stdout
    new = kubectl(cfg, "diff", "-f", "-", stdin=yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "diffed"}, "data": {"a": "1"}}))
    assert new.returncode == 1 and "+  name: diffed" in new.stdout
    same = kubectl(cfg, "diff", "-f", "-", stdin=yaml.safe_dump(manifest(cfg, "deploy", "rate")))
    assert (same.returncode, same.stdout) == (0, "")
    dry = apply(cfg, dep, "--dry-run=server")
    assert dry.stdout.strip() == "deployment.apps/rate configured (server dry run)"
    with server.lock:
        assert env.backend.api.get("Deployment", "rate", NS)["spec"]["replicas"] == 1
        assert env.backend.world.store.find("ConfigMap", "diffed", NS) is None


@needs_kubectl
def test_invalid_manifests_get_the_api_servers_errors(served) -> None:
    env, server, cfg = served
    bad = {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "typo"},
        "spec": {"replicas": 1, "foo": "bar", "selector": {"matchLabels": {"app": "typo"}}, "template": {"metadata": {"labels": {"app": "typo"}}, "spec": {"containers": [{"name": "c", "image": "nginx", "imagee": "x"}]}}},
    }
    out = apply(cfg, bad)
    assert out.returncode == 1
    assert out.stderr.strip() == (
        'Error from server (BadRequest): error when creating "STDIN": Deployment in version "v1" cannot be handled as a Deployment: '
        'strict decoding error: unknown field "spec.foo", unknown field "spec.template.spec.containers[0].imagee"'
    )
    wrong = copy.deepcopy(bad)
    del wrong["spec"]["foo"], wrong["spec"]["template"]["spec"]["containers"][0]["imagee"]
    wrong["spec"]["replicas"] = "two"
    out = apply(cfg, wrong)
    assert out.stderr.strip().endswith("cannot be handled as a Deployment: json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32")
    ssa = apply(cfg, bad, "--server-side")
    assert "failed to create typed patch object (apps/v1, Kind=Deployment) hotel-reservation/typo: errors:" in ssa.stderr
    assert '.spec.template.spec.containers[name="c"].imagee: field not declared in schema' in ssa.stderr
    warned = apply(cfg, bad, "--validate=warn")
    assert warned.returncode == 0 and 'Warning: unknown field "spec.foo"' in warned.stderr
    with server.lock:
        created = env.backend.api.get("Deployment", "typo", NS)
    assert "foo" not in created["spec"] and "imagee" not in created["spec"]["template"]["spec"]["containers"][0]  # dropped
    dep = manifest(cfg, "deploy", "user")
    dep["spec"]["foo"] = 1
    out = apply(cfg, dep)
    assert out.returncode == 1 and 'The request is invalid: patch: Invalid value: "map[' in out.stderr
    assert out.stderr.rstrip().endswith('strict decoding error: unknown field "spec.foo"')
    unknown_kind = apply(cfg, {"apiVersion": "example.com/v1", "kind": "Foo", "metadata": {"name": "x"}})
    assert 'no matches for kind "Foo" in version "example.com/v1"' in unknown_kind.stderr
    listed = apply(cfg, {"apiVersion": "v1", "kind": "List", "items": [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "in-list"}, "bogus": 1}]})
    assert listed.stderr.strip().endswith('ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "bogus"')
    patched = kubectl(cfg, "patch", "deploy", "user", "-p", '{"spec":{"foo":1}}')
    assert patched.stdout.strip() == "deployment.apps/user patched (no change)" and 'Warning: unknown field "spec.foo"' in patched.stderr


@needs_kubectl
def test_explain_reads_the_published_schemas(served) -> None:
    cfg = served[2]
    out = kubectl(cfg, "explain", "deployment.spec.replicas")
    assert out.returncode == 0, out.stderr
    assert "KIND:       Deployment" in out.stdout and "FIELD: replicas <integer>" in out.stdout and "desired pods" in out.stdout
    fields = kubectl(cfg, "explain", "pod.spec.containers.env")
    assert "FIELD: env <[]EnvVar>" in fields.stdout and "valueFrom\t<EnvVarSource>" in fields.stdout


# ---------------------------------------------------------------- the handlers
def test_openapi_v3_lists_every_served_group_version_with_field_validation() -> None:
    env = sre_env.SREEnv("TargetPortMisconfig")
    env.reset(seed=0)
    index = handle(env.backend, "GET", "/openapi/v3", "", {}, b"").body
    assert {"api/v1", "apis/apps/v1", "apis/batch/v1", "apis/pingcap.com/v1alpha1"} <= set(index["paths"])
    url = index["paths"]["apis/apps/v1"]["serverRelativeURL"]
    path, _, query = url.partition("?")
    doc = json.loads(handle(env.backend, "GET", path, query, {}, b"").text())
    patch = doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"]
    assert patch["x-kubernetes-group-version-kind"] == {"group": "apps", "kind": "Deployment", "version": "v1"}
    assert "fieldValidation" in {p["name"] for p in patch["parameters"]}
    assert "application/strategic-merge-patch+json" not in patch["requestBody"]["content"]  # kubectl uses its compiled-in types
    schema = doc["components"]["schemas"]["io.k8s.api.apps.v1.Deployment"]
    assert schema["x-kubernetes-group-version-kind"] == [{"group": "apps", "kind": "Deployment", "version": "v1"}]
    assert handle(env.backend, "GET", "/openapi/v3/apis/nope/v1", "", {}, b"").status == 404


@pytest.mark.parametrize("scenario", ["TargetPortMisconfig", "MissingService"])
def test_every_object_the_simulator_stores_decodes_strictly(scenario: str) -> None:
    """kubectl edit/replace send back what they read: the simulator must store no field the API lacks."""
    env = sre_env.SREEnv(scenario)
    env.reset(seed=0)
    env.backend.advance(60)
    store = env.backend.world.store
    unknown = {(kind, p) for kind in store.kinds() for o in store.iter(kind) for p in decode(copy.deepcopy(o)).unknown}
    assert unknown == set()


def test_writes_honour_dry_run_status_and_field_validation() -> None:
    env = sre_env.SREEnv("TargetPortMisconfig")
    env.reset(seed=0)
    deploy = f"/apis/apps/v1/namespaces/{NS}/deployments/geo"
    merge = {"Content-Type": "application/merge-patch+json"}
    before = env.backend.api.get("Deployment", "geo", NS)
    r = handle(env.backend, "PATCH", deploy, "dryRun=All", merge, b'{"spec":{"replicas":4}}')
    assert r.status == 200 and r.body["spec"]["replicas"] == 4 and r.body["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
    assert env.backend.api.get("Deployment", "geo", NS)["spec"]["replicas"] == before["spec"]["replicas"]
    r = handle(env.backend, "PATCH", deploy, "", merge, b'{"status":{"replicas":9}}')
    assert r.status == 200 and r.body["status"] == before["status"]  # status is the status subresource's
    r = handle(env.backend, "PATCH", deploy, "fieldValidation=Strict", merge, b'{"spec":{"foo":1}}')
    assert (r.status, r.body["reason"], r.body["details"]["causes"][0]["field"]) == (422, "Invalid", "patch")
    assert r.body["message"] == ' "" is invalid: patch: Invalid value: "map[spec:map[foo:1]]": strict decoding error: unknown field "spec.foo"'
    r = handle(env.backend, "PATCH", deploy, "", merge, b'{"spec":{"foo":1}}')
    assert r.status == 200 and r.warnings == ('unknown field "spec.foo"',) and "foo" not in r.body["spec"]
    r = handle(env.backend, "POST", f"/api/v1/namespaces/{NS}/configmaps", "fieldValidation=Ignore", {}, b'{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"x"},"bogus":1}')
    assert r.status == 201 and "bogus" not in r.body and r.warnings == ()
    r = handle(env.backend, "POST", f"/api/v1/namespaces/{NS}/configmaps", "fieldValidation=Sloppy", {}, b'{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"y"}}')
    assert (r.status, r.body["reason"]) == (400, "BadRequest")


def test_server_side_apply_merge_semantics() -> None:
    live = {"spec": {"ports": [{"port": 80, "protocol": "TCP", "targetPort": 8080}], "selector": {"a": "b"}, "containers": [{"name": "c", "image": "i", "env": [{"name": "A", "value": "1"}]}]}}
    applied = {"spec": {"ports": [{"port": 80, "targetPort": 9090}], "containers": [{"name": "c", "env": [{"name": "B", "value": "2"}]}]}}
    merged = ssa_merge(copy.deepcopy(live), applied)
    assert merged["spec"]["ports"] == [{"port": 80, "protocol": "TCP", "targetPort": 9090}]  # the key's protocol defaults to TCP
    assert merged["spec"]["containers"] == [{"name": "c", "image": "i", "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]}]
    assert apply_fields(applied)["f:spec"]["f:ports"] == {'k:{"port":80,"protocol":"TCP"}': {".": {}, "f:port": {}, "f:targetPort": {}}}
    assert go_format({"spec": {"b": [1, {"x": None}], "a": True}}) == "map[spec:map[a:true b:[1 map[x:<nil>]]]]"


def test_client_side_apply_directives_of_the_strategic_merge_patch() -> None:
    """kubectl apply's patch switches a union: ``$retainKeys`` drops the old member (rollingUpdate)."""
    live = {"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%"}}, "replicas": 1}}
    patch = {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}, "$setElementOrder/containers": [{"name": "c"}]}}
    assert strategic_merge(live, patch) == {"spec": {"strategy": {"type": "Recreate"}, "replicas": 1}}
