"""Malformed objects through the built-in shell: refused as the API server refuses them, the world unchanged.

Each of these once got past ``kubectl apply``/``create`` and made the next tick
raise (or printed an internal error); now each gets the real error text, nothing
is stored, and the episode goes on and is graded.
"""

from __future__ import annotations

import pytest

import sre_env
from sre_env.shell import ShellContext, run_command

NS = "default"


def heredoc(text: str, verb: str = "apply") -> str:
    return f"kubectl {verb} -f - <<'EOF'\n{text}\nEOF"


DEPLOYMENT_EMPTY_SPEC = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: empty\nspec: {}"
JOB_NULL_SPEC = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: nulljob\nspec: null"
JOB_NO_SPEC = "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: nospec"
SERVICE_NULL_SPEC = "apiVersion: v1\nkind: Service\nmetadata:\n  name: nullsvc\nspec: null"
BIG_CONFIG_MAP = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: big\ndata:\n  k: " + "x" * (1100 * 1024)
#: 1.7 MB of environment values: no field limit applies, but etcd stores at most 1.5 MiB
HUGE_DEPLOYMENT = (
    "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: huge\nspec:\n  selector:\n    matchLabels: {app: huge}\n"
    "  template:\n    metadata:\n      labels: {app: huge}\n    spec:\n      containers:\n      - name: c\n        image: nginx\n        env:\n"
    + "".join(f"        - name: V{i}\n          value: {'x' * 1000}\n" for i in range(1700))
)
DEEP_FLOW = "[" * 10001 + "]" * 10001
DEEP_BLOCK = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\ndata:\n  a:\n" + "".join("  " * i + "b:\n" for i in range(2, 10010))
#: the "billion laughs": nine levels of ten aliases each expand to 10**9 strings
ALIAS_BOMB = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: laughs\nx0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"x{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]\n" for i in range(1, 9)
)

JOB_ERRORS = (
    "\n* spec.template.spec.containers: Required value"
    '\n* spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: "OnFailure", "Never"'
)
#: (manifest, verb, what kubectl prints, the kind that must not gain an object)
REFUSED = {
    "deployment-empty-spec": (
        DEPLOYMENT_EMPTY_SPEC, "apply",
        'The Deployment "empty" is invalid: \n* spec.selector: Required value'
        "\n* spec.template.metadata.labels: Invalid value: map[string]string(nil): `selector` does not match template `labels`"
        "\n* spec.template.spec.containers: Required value",
        "Deployment",
    ),
    "job-null-spec": (JOB_NULL_SPEC, "apply", 'The Job "nulljob" is invalid: ' + JOB_ERRORS, "Job"),
    "job-no-spec": (JOB_NO_SPEC, "create", 'The Job "nospec" is invalid: ' + JOB_ERRORS, "Job"),
    "service-null-spec": (SERVICE_NULL_SPEC, "apply", 'The Service "nullsvc" is invalid: spec.ports: Required value', "Service"),
    # apply also stores the manifest in an annotation, which is over its own limit
    "configmap-over-1MiB-apply": (
        BIG_CONFIG_MAP, "apply",
        'The ConfigMap "big" is invalid: \n* metadata.annotations: Too long: may not be more than 262144 bytes\n* []: Too long: may not be more than 1048576 bytes',
        "ConfigMap",
    ),
    "configmap-over-1MiB-create": (BIG_CONFIG_MAP, "create", 'The ConfigMap "big" is invalid: []: Too long: may not be more than 1048576 bytes', "ConfigMap"),
    "deployment-over-1.5MiB-create": (HUGE_DEPLOYMENT, "create", 'Error from server: error when creating "STDIN": etcdserver: request is too large', "Deployment"),
    "yaml-10001-flow-levels": (DEEP_FLOW, "apply", "error: error parsing STDIN: error converting YAML to JSON: yaml: exceeded max depth of 10000", "ConfigMap"),
    "yaml-alias-bomb": (ALIAS_BOMB, "apply", "error: error parsing STDIN: error converting YAML to JSON: yaml: document contains excessive aliasing", "ConfigMap"),
    "yaml-10009-block-levels": (DEEP_BLOCK, "apply", "error: error parsing STDIN: error converting YAML to JSON: yaml: line 10005: exceeded max depth of 10000", "ConfigMap"),
}


@pytest.fixture(scope="module")
def env():
    e = sre_env.SREEnv("MissingEnvVar")
    e.reset(seed=0)
    yield e
    e.close()


def _names(env, kind: str) -> list[str]:
    return sorted(o["metadata"]["name"] for o in env.backend.api.list(kind))


#: over the env's action limit: these go to the shell itself, as a script's input would
_BIG = 16_384


@pytest.mark.parametrize("case", list(REFUSED))
def test_malformed_objects_get_the_api_servers_errors_and_change_nothing(env, case: str) -> None:
    text, verb, expected, kind = REFUSED[case]
    before = _names(env, kind)
    command = heredoc(text, verb)
    if len(command) > _BIG:
        result = run_command(ShellContext(backend=env.backend), command)
        output, code = result.output, result.exit_code
    else:
        obs, _, _, _, info = env.step(command)
        output, code = obs["output"], info["exit_code"]
    assert code == 1
    assert output.strip() == expected
    assert _names(env, kind) == before
    obs, _, terminated, truncated, info = env.step("kubectl get pods")
    assert info["exit_code"] == 0 and not (terminated or truncated)


def test_null_replicas_are_unset_and_defaulted_to_one(env) -> None:
    manifest = (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: nullreplicas\nspec:\n  replicas: null\n"
        "  selector:\n    matchLabels: {app: nullreplicas}\n  template:\n    metadata:\n      labels: {app: nullreplicas}\n"
        "    spec:\n      containers:\n      - name: c\n        image: nginx"
    )
    obs, _, _, _, info = env.step(heredoc(manifest))
    assert obs["output"] == "deployment.apps/nullreplicas created\n"
    env.step("sleep 30")
    dep = env.backend.api.get("Deployment", "nullreplicas", NS)
    assert dep["spec"]["replicas"] == 1 and dep["status"].get("readyReplicas") == 1


def test_a_node_without_status_is_stored_and_never_chosen() -> None:
    e = sre_env.SREEnv("MissingEnvVar")
    e.reset(seed=0)
    obs, _, _, _, info = e.step(heredoc("apiVersion: v1\nkind: Node\nmetadata:\n  name: ghost"))
    assert obs["output"] == "node/ghost created\n"
    assert e.backend.api.get("Node", "ghost")["spec"] == {}  # the spec is a struct: stored as `spec: {}`
    obs, _, _, _, info = e.step("kubectl run probe --image=nginx")
    assert obs["output"] == "pod/probe created\n"
    e.step("sleep 20")
    pod = e.backend.api.get("Pod", "probe", NS)
    assert pod["spec"]["nodeName"] != "ghost" and pod["status"]["phase"] == "Running"
    for cmd in ("kubectl get nodes", "kubectl describe node ghost", "kubectl get nodes -o wide", "kubectl cordon ghost"):
        assert e.step(cmd)[4]["exit_code"] == 0, cmd
    _, _, terminated, _, info = e.step("submit done")
    assert terminated and info["submitted"] and "is_success" in info and info["oracles"]  # graded
    e.close()


def test_invalid_names_and_negative_scale_are_refused(env) -> None:
    obs = env.step("kubectl create deployment Bad_Name --image=nginx")[0]
    assert obs["output"].startswith('The Deployment "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain must consist of')
    obs = env.step("kubectl scale deployment nullreplicas --replicas=-1")[0]
    assert obs["output"] == "error: The --replicas=COUNT flag is required, and COUNT must be greater than or equal to 0\n"


def test_updates_may_not_change_immutable_fields(env) -> None:
    env.step("kubectl create deployment imm --image=nginx")
    obs = env.step("kubectl patch deploy imm -p '{\"spec\":{\"selector\":{\"matchLabels\":{\"tier\":\"web\"}},\"template\":{\"metadata\":{\"labels\":{\"tier\":\"web\"}}}}}'")[0]
    assert obs["output"] == (
        'The Deployment "imm" is invalid: spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"imm", "tier":"web"}, '
        "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable\n"
    )
    env.step("kubectl expose deploy imm --port=80")
    ip = env.backend.api.get("Service", "imm", NS)["spec"]["clusterIP"]
    obs = env.step("kubectl patch svc imm --type=merge -p '{\"spec\":{\"clusterIP\":\"10.96.9.9\"}}'")[0]
    assert obs["output"] == 'The Service "imm" is invalid: spec.clusterIPs[0]: Invalid value: []string{"10.96.9.9"}: may not change once set\n'
    assert env.backend.api.get("Service", "imm", NS)["spec"]["clusterIP"] == ip


def test_every_allocated_cluster_ip_is_a_valid_address(env) -> None:
    import ipaddress

    from sre_env.sim.control.apiserver import _allocate_service_ip

    world = env.backend.fork().world
    ips = [ipaddress.ip_address(_allocate_service_ip(world)) for _ in range(2000)]
    assert all(ip in ipaddress.ip_network("10.96.0.0/12") for ip in ips)
    assert any(ip in ipaddress.ip_network("10.97.0.0/16") for ip in ips)  # past 10.96.255.x the range goes on


def test_a_write_to_the_main_resource_keeps_the_stored_status(env) -> None:
    before = env.backend.api.get("Node", "worker-1")["status"]
    obs = env.step("kubectl patch node worker-1 --type=merge -p '{\"status\":{\"allocatable\":{\"cpu\":\"0\"},\"conditions\":null}}'")[0]
    assert obs["output"] == "node/worker-1 patched (no change)\n"
    assert env.backend.api.get("Node", "worker-1")["status"]["allocatable"] == before["allocatable"]


def test_a_patch_nested_too_deep_is_refused_by_kubectl(env) -> None:
    deep = '{"a":' * 150 + "1" + "}" * 150
    obs = env.step(f"kubectl patch deploy imm -p '{{\"metadata\":{{\"labels\":{deep}}}}}'")[0]
    assert obs["output"].startswith('error: unable to parse "{"metadata"')
    assert obs["output"].endswith('": yaml: exceeded max depth of 100\n')


def test_kubectl_set_reports_a_refused_update_as_kubectl_wraps_it(env) -> None:
    env.step("kubectl create deployment setres --image=nginx")
    obs = env.step("kubectl set resources deploy setres --limits=cpu=100m --requests=cpu=1")[0]
    assert obs["output"] == (
        'error: failed to patch resources update to pod template Deployment.apps "setres" is invalid: '
        'spec.template.spec.containers[0].resources.requests: Invalid value: "1": must be less than or equal to cpu limit of 100m\n'
    )


def _template(app: str, **spec) -> dict:
    container = {"name": "c", "image": "nginx", "command": None, "args": None, "ports": None, "env": None, "resources": None}
    return {"metadata": {"labels": {"app": app}}, "spec": {"containers": [container], **spec}}


#: objects that pass admission with every optional field null or missing: no controller may trip on them
MINIMAL = [
    {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "m-dep"}, "spec": {"selector": {"matchLabels": {"app": "m-dep"}}, "template": _template("m-dep"), "replicas": None, "strategy": None, "revisionHistoryLimit": None}},
    {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "m-dep2"}, "spec": {"selector": {"matchLabels": {"app": "m-dep2"}}, "template": _template("m-dep2"), "strategy": {"type": "RollingUpdate", "rollingUpdate": None}}},
    {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "m-rs"}, "spec": {"selector": {"matchLabels": {"app": "m-rs"}}, "template": _template("m-rs"), "replicas": None}},
    {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "m-sts"}, "spec": {"selector": {"matchLabels": {"app": "m-sts"}}, "template": _template("m-sts"), "serviceName": None, "volumeClaimTemplates": None, "updateStrategy": None}},
    {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "m-ds"}, "spec": {"selector": {"matchLabels": {"app": "m-ds"}}, "template": _template("m-ds"), "updateStrategy": None}},
    {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "m-job"}, "spec": {"template": _template("m-job", restartPolicy="Never"), "backoffLimit": None, "completions": None, "parallelism": None}},
    {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "m-cron"}, "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": _template("m-cron", restartPolicy="Never")}}, "concurrencyPolicy": None}},
    {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "m-svc"}, "spec": {"ports": [{"port": 80}], "selector": None, "type": None}},
    {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "m-headless"}, "spec": {"ports": [{"port": 80}], "clusterIP": "None", "selector": {"app": "m-sts"}}},
    {"apiVersion": "v1", "kind": "Endpoints", "metadata": {"name": "m-svc"}, "subsets": None},
    {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "m-node"}, "spec": None, "status": None},
    {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "m-hpa"}, "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "m-dep"}, "maxReplicas": 3, "metrics": None, "minReplicas": None}},
    {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": {"name": "m-np"}, "spec": {"podSelector": {}, "ingress": [{"from": None, "ports": None}], "policyTypes": None}},
    {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "m-pvc"}, "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}, "storageClassName": None}},
]


def test_objects_with_null_optional_fields_never_crash_a_controller() -> None:
    import json

    e = sre_env.SREEnv("MissingEnvVar")
    e.reset(seed=0)
    for obj in MINIMAL:
        obs, _, _, _, info = e.step(heredoc(json.dumps(obj)))
        assert info["exit_code"] == 0, obs["output"]
    for cmd in ("sleep 120", "kubectl get all", "kubectl describe node m-node", "kubectl scale sts m-sts --replicas=2", "kubectl rollout restart deploy m-dep2", "sleep 60"):
        obs, _, _, _, info = e.step(cmd)
        assert not obs["output"].startswith("error: internal"), (cmd, obs["output"])
    assert e.backend.api.get("Deployment", "m-dep", NS)["status"].get("readyReplicas") == 1
    _, _, terminated, _, info = e.step("submit done")
    assert terminated and info["oracles"]
    e.close()


def test_a_patch_whose_result_does_not_decode_is_refused_on_the_patch_field(env) -> None:
    env.step("kubectl create deployment typed --image=nginx")
    obs = env.step("kubectl patch deploy typed -p '{\"spec\":{\"replicas\":\"two\"}}'")[0]
    assert obs["output"] == (
        'The request is invalid: patch: Invalid value: "map[spec:map[replicas:two]]": '
        "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32\n"
    )
