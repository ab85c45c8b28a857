"""Imperative verbs (create deployment|service|job, run, expose), wait, diff and events.

Exact kubectl 1.32 text (checked against the real binary; see the served fidelity test at the end),
the objects the API ends up holding, and ``wait`` letting simulated time pass.
"""

from __future__ import annotations

import shutil
import subprocess

import pytest

import sre_env
from sre_env.errors import ApiError
from sre_env.shell import ShellContext, command_reference, run_command
from sre_env.shell.kubectl import _OTHER_VERBS, COMMANDS


# --------------------------------------------------------------------------- create deployment
def test_create_deployment_dry_run_yaml_matches_kubectl(sh, backend):
    r = sh("kubectl create deployment api --image=nginx:1.27 --replicas=2 --port=8080 --dry-run=client -o yaml")
    assert r.exit_code == 0 and not r.mutating
    assert r.output == (
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  creationTimestamp: null\n  labels:\n    app: api\n  name: api\n"
        "spec:\n  replicas: 2\n  selector:\n    matchLabels:\n      app: api\n  strategy: {}\n  template:\n    metadata:\n"
        "      creationTimestamp: null\n      labels:\n        app: api\n    spec:\n      containers:\n      - image: nginx:1.27\n"
        "        name: nginx\n        ports:\n        - containerPort: 8080\n        resources: {}\nstatus: {}\n"
    )
    assert sh("kubectl create deployment api --image=nginx --dry-run=client").output == "deployment.apps/api created (dry run)\n"
    with pytest.raises(ApiError):
        backend.store.get("Deployment", "api", "shop")


def test_create_deployment_creates_through_the_api(sh, backend):
    r = sh("kubectl create deploy api --image=registry.local/api:2.0 --replicas=3 -- /bin/api --serve")
    assert r.output == "deployment.apps/api created\n" and r.mutating and r.exit_code == 0
    d = backend.store.get("Deployment", "api", "shop")
    assert d["spec"]["replicas"] == 3 and d["spec"]["selector"] == {"matchLabels": {"app": "api"}}
    c = d["spec"]["template"]["spec"]["containers"]
    assert c == [{"name": "api", "image": "registry.local/api:2.0", "command": ["/bin/api", "--serve"], "resources": {}}]
    assert "creationTimestamp" not in d["spec"]["template"]["metadata"] or d["spec"]["template"]["metadata"]["creationTimestamp"]
    r = sh("kubectl create deployment api --image=nginx")
    assert r.output == 'Error from server (AlreadyExists): deployments.apps "api" already exists\n' and r.exit_code == 1


def test_create_deployment_errors(sh):
    assert sh("kubectl create deployment api").output == 'error: required flag(s) "image" not set\n'
    assert sh("kubectl create deployment --image=nginx").output == "error: exactly one NAME is required, got 0\nSee 'kubectl create deployment -h' for help and examples\n"
    assert sh("kubectl create deployment api --image=nginx --dry-run=maybe").output == 'error: Invalid dry-run value (maybe). Must be "none", "server", or "client".\n'


# --------------------------------------------------------------------------- create service / job
def test_create_service_nodeport_and_headless(sh, backend):
    r = sh("kubectl create service nodeport s1 --tcp=80:8080 --tcp=443 --node-port=30080 --dry-run=client -o yaml")
    assert r.output == (
        "apiVersion: v1\nkind: Service\nmetadata:\n  creationTimestamp: null\n  labels:\n    app: s1\n  name: s1\nspec:\n  ports:\n"
        "  - name: 80-8080\n    nodePort: 30080\n    port: 80\n    protocol: TCP\n    targetPort: 8080\n  - name: \"443\"\n    nodePort: 30080\n"
        "    port: 443\n    protocol: TCP\n    targetPort: 443\n  selector:\n    app: s1\n  type: NodePort\nstatus:\n  loadBalancer: {}\n"
    )
    r = sh("kubectl create service clusterip db --clusterip=None")
    assert r.output == "service/db created\n" and r.mutating
    svc = backend.store.get("Service", "db", "shop")
    assert svc["spec"]["clusterIP"] == "None" and svc["spec"]["selector"] == {"app": "db"}
    r = sh("kubectl create svc clusterip web2 --tcp=80:8080")
    assert r.output == "service/web2 created\n"
    assert backend.store.get("Service", "web2", "shop")["spec"]["ports"] == [{"name": "80-8080", "protocol": "TCP", "port": 80, "targetPort": 8080}]


def test_create_service_errors(sh):
    assert sh("kubectl create service clusterip s1").output == "error: at least one tcp port specifier must be provided\n"
    assert sh("kubectl create service clusterip s1 --tcp=abc").output == 'error: strconv.ParseUint: parsing "abc": invalid syntax\n'
    r = sh("kubectl create service externalname ext --external-name=db.example.com")
    assert r.output == "service/ext created\n"
    assert sh("kubectl get svc ext -o jsonpath='{.spec.type} {.spec.externalName}'").output == "ExternalName db.example.com"
    assert sh("kubectl create service externalname ext2").output == 'error: required flag(s) "external-name" not set\n'
    r = sh("kubectl create service")
    assert r.exit_code == 1 and r.output.startswith("Create a service using a specified subcommand.\n")
    r = sh("kubectl create service headless s1")
    assert r.output == "error: unknown command \"headless s1\"\nSee 'kubectl create service -h' for help and examples\n" and r.exit_code == 1


def test_create_job_from_image_and_from_cronjob(sh, backend):
    r = sh("kubectl create job smoke --image=busybox --dry-run=client -o yaml -- sh -c 'echo hi'")
    assert r.output == (
        "apiVersion: batch/v1\nkind: Job\nmetadata:\n  creationTimestamp: null\n  name: smoke\nspec:\n  template:\n    metadata:\n"
        "      creationTimestamp: null\n    spec:\n      containers:\n      - command:\n        - sh\n        - -c\n        - echo hi\n"
        "        image: busybox\n        name: smoke\n        resources: {}\n      restartPolicy: Never\nstatus: {}\n"
    )
    cj = backend.store.create({
        "kind": "CronJob", "apiVersion": "batch/v1", "metadata": {"name": "backup", "namespace": "shop"},
        "spec": {"schedule": "0 * * * *", "jobTemplate": {"metadata": {"labels": {"app": "backup"}}, "spec": {"backoffLimit": 2, "template": {"spec": {
            "containers": [{"name": "dump", "image": "registry.local/backup:1"}], "restartPolicy": "OnFailure"}}}}},
    })
    r = sh("kubectl create job backup-now --from=cronjob/backup")
    assert r.output == "job.batch/backup-now created\n" and r.mutating
    job = backend.store.get("Job", "backup-now", "shop")
    assert job["metadata"]["annotations"] == {"cronjob.kubernetes.io/instantiate": "manual"}
    assert job["metadata"]["labels"] == {"app": "backup"} and job["spec"]["backoffLimit"] == 2
    assert job["metadata"]["ownerReferences"][0]["uid"] == cj["metadata"]["uid"] and job["metadata"]["ownerReferences"][0]["kind"] == "CronJob"
    assert sh("kubectl create job x --from=cronjob/nope").output == 'Error from server (NotFound): cronjobs.batch "nope" not found\n'
    assert sh("kubectl create job x --from=deploy/web").output == "error: unknown object type *v1.Deployment\n"
    assert sh("kubectl create job x").output == "error: either --image or --from must be specified\n"


# --------------------------------------------------------------------------- run
def test_run_pod_dry_run_and_create(sh, backend):
    r = sh("kubectl run x --image=busybox --restart=Never --env=A=1 --labels=app=x,tier=t --port=80 --command --dry-run=client -o yaml -- sh -c 'echo hi'")
    assert r.output == (
        "apiVersion: v1\nkind: Pod\nmetadata:\n  creationTimestamp: null\n  labels:\n    app: x\n    tier: t\n  name: x\nspec:\n  containers:\n"
        "  - command:\n    - sh\n    - -c\n    - echo hi\n    env:\n    - name: A\n      value: \"1\"\n    image: busybox\n    name: x\n    ports:\n"
        "    - containerPort: 80\n    resources: {}\n  dnsPolicy: ClusterFirst\n  restartPolicy: Never\nstatus: {}\n"
    )
    r = sh("kubectl run probe --image=busybox --restart=Never -- sleep 3600")
    assert r.output == "pod/probe created\n" and r.mutating
    pod = backend.store.get("Pod", "probe", "shop")
    assert pod["metadata"]["labels"] == {"run": "probe"}
    assert pod["spec"]["containers"][0]["args"] == ["sleep", "3600"] and pod["spec"]["restartPolicy"] == "Never"


def test_run_errors_and_interactive_refusal(sh):
    assert sh("kubectl run --image=busybox").output == "error: NAME is required for run\nSee 'kubectl run -h' for help and examples\n"
    assert sh("kubectl run x").output == 'error: required flag(s) "image" not set\n'
    assert sh("kubectl run x --image=b --restart=Foo").output == "error: invalid restart policy: Foo\nSee 'kubectl run -h' for help and examples\n"
    assert sh("kubectl run x --image=b --rm").output == "error: --rm should only be used for attached containers\nSee 'kubectl run -h' for help and examples\n"
    r = sh("kubectl run tmp --rm -it --image=busybox --restart=Never -- sh")
    assert r.exit_code == 1 and not r.mutating and "not interactive" in r.output and "kubectl exec POD -- CMD" in r.output
    r = sh("kubectl run tmp --rm -it --image=busybox")
    assert r.exit_code == 1 and not r.mutating and "not interactive" in r.output
    r = sh("kubectl run tmp --rm -i --image=busybox --dry-run=client -- ls")
    assert r.output == "error: --dry-run can't be used with attached containers options (--attach, --stdin, or --tty)\n"


# --------------------------------------------------------------------------- expose
def test_expose_infers_selector_labels_and_ports(sh, backend):
    r = sh("kubectl expose deploy web --dry-run=client -o yaml")
    assert r.output == (
        "apiVersion: v1\nkind: Service\nmetadata:\n  creationTimestamp: null\n  labels:\n    app: web\n  name: web\nspec:\n  ports:\n"
        "  - port: 8080\n    protocol: TCP\n    targetPort: 8080\n  selector:\n    app: web\nstatus:\n  loadBalancer: {}\n"
    )
    r = sh("kubectl expose deployment web --port=80 --target-port=8080 --name=web-np --type=NodePort")
    assert r.output == "service/web-np exposed\n" and r.mutating
    svc = backend.store.get("Service", "web-np", "shop")
    assert svc["spec"]["selector"] == {"app": "web"} and svc["spec"]["type"] == "NodePort"
    assert svc["spec"]["ports"][0]["port"] == 80 and svc["spec"]["ports"][0]["targetPort"] == 8080
    r = sh("kubectl expose pod web-5f6a8b-abcde --port=9090 --name=one-pod")
    assert r.output == "service/one-pod exposed\n"
    assert backend.store.get("Service", "one-pod", "shop")["spec"]["selector"] == {"app": "web", "pod-template-hash": "5f6a8b"}
    r = sh("kubectl expose svc web --name=web-copy --dry-run=client -o yaml")
    assert "  - port: 80\n    protocol: TCP\n    targetPort: 80\n" in r.output  # kubectl copies the port, not the target port


def test_expose_errors(sh):
    r = sh("kubectl expose deploy web")
    assert r.output == 'Error from server (AlreadyExists): services "web" already exists\n' and r.exit_code == 1
    sh("kubectl create deployment noport --image=nginx")
    r = sh("kubectl expose deployment noport")
    assert r.output == "error: couldn't find port via --port flag or introspection\nSee 'kubectl expose -h' for help and examples\n" and r.exit_code == 1
    assert sh("kubectl expose deployment nothere --port=80").output == 'Error from server (NotFound): deployments.apps "nothere" not found\n'
    assert sh("kubectl expose deployment").output == "error: resource(s) were provided, but no name was specified\n"


# --------------------------------------------------------------------------- events
def test_events_layout_filters_and_empty(sh):
    r = sh("kubectl events")
    assert r.output == (
        "LAST SEEN             TYPE      REASON    OBJECT                 MESSAGE\n"
        "10m                   Normal    Pulled    Pod/web-5f6a8b-fghij   Container image \"registry.local/web:1.1\" already present on machine\n"
        "100s (x7 over 100s)   Warning   BackOff   Pod/web-5f6a8b-fghij   Back-off restarting failed container web in pod web-5f6a8b-fghij_shop(uid)\n"
    )
    r = sh("kubectl events -A --types=Warning")
    assert r.output.splitlines()[0].split() == ["NAMESPACE", "LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert len(r.output.splitlines()) == 2 and r.output.splitlines()[1].startswith("shop ")
    assert sh("kubectl events --for deploy/web").output == "No events found in shop namespace.\n"
    assert sh("kubectl events --types=Foo").output == "error: valid --types are Normal or Warning\n"


# --------------------------------------------------------------------------- diff
_CM = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-config\ndata:\n  MODE: {mode}\n"


def test_diff_shows_unified_diff_and_exit_codes(sh, backend):
    r = sh("kubectl diff -f - <<'EOF'\n" + _CM.format(mode="safe") + "EOF")
    assert r.exit_code == 1 and not r.mutating
    lines = r.output.splitlines()
    assert lines[0].startswith("diff -u -N /tmp/LIVE-") and lines[0].endswith("/v1.ConfigMap.shop.web-config")
    assert lines[1].startswith("--- /tmp/LIVE-") and lines[1].endswith("\t2026-03-02 10:00:00.000000000 +0000")
    assert lines[2].startswith("+++ /tmp/MERGED-")
    assert "-  MODE: prod" in lines and "+  MODE: safe" in lines and lines[3].startswith("@@ -1,")
    assert backend.store.get("ConfigMap", "web-config", "shop")["data"]["MODE"] == "prod"  # nothing written
    assert sh("kubectl apply -f - <<'EOF'\n" + _CM.format(mode="safe") + "EOF").exit_code == 0
    r = sh("kubectl diff -f - <<'EOF'\n" + _CM.format(mode="safe") + "EOF")
    assert r.output == "" and r.exit_code == 0
    r = sh("kubectl diff -f - <<'EOF'\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: brand-new\ndata:\n  A: x\nEOF")
    assert r.exit_code == 1 and "@@ -0,0 +1," in r.output and "+  A: x" in r.output
    r = sh("kubectl diff -f manifest.yaml")
    assert r.output == 'error: the path "manifest.yaml" does not exist\n' and r.exit_code == 2  # errors exit 2: 1 means "differs"


# --------------------------------------------------------------------------- wait (simulated cluster)
@pytest.fixture()
def sim():
    env = sre_env.SREEnv("TargetPortMisconfig")
    env.reset(seed=0)
    ctx = ShellContext(backend=env.backend, namespace=env.scenario.namespace)
    return env, ctx


def test_wait_lets_time_pass_until_the_condition_holds(sim):
    env, ctx = sim
    assert run_command(ctx, "kubectl create deployment probe --image=nginx").exit_code == 0
    t0 = env.backend.now
    r = run_command(ctx, "kubectl wait --for=condition=Available deployment/probe --timeout=120s")
    assert r.output == "deployment.apps/probe condition met\n" and r.exit_code == 0
    assert 0 < env.backend.now - t0 < 120
    r = run_command(ctx, "kubectl wait --for=condition=Ready pod -l app=probe --timeout=60s")
    assert r.exit_code == 0 and r.output.startswith("pod/probe-") and r.output.endswith(" condition met\n")
    r = run_command(ctx, "kubectl wait --for=jsonpath='{.status.readyReplicas}'=1 deploy/probe")
    assert r.output == "deployment.apps/probe condition met\n"


def test_wait_times_out_after_the_timeout_in_simulated_time(sim):
    env, ctx = sim
    t0 = env.backend.now
    r = run_command(ctx, "kubectl wait --for=condition=Progressing=False deploy/geo --timeout=20s")
    assert r.output == "error: timed out waiting for the condition on deployments/geo\n" and r.exit_code == 1
    assert env.backend.now - t0 == pytest.approx(20, abs=5)
    r = run_command(ctx, "kubectl wait --for=condition=Foo deploy/geo --timeout=0")
    assert r.output == "error: condition not met for deployments/geo\n"
    assert run_command(ctx, "kubectl wait --for=condition=Available deploy/nope").output == 'Error from server (NotFound): deployments.apps "nope" not found\n'
    assert run_command(ctx, "kubectl wait --for=bogus deploy/geo").output == 'error: unrecognized condition: "bogus"\n'
    assert run_command(ctx, "kubectl wait --for=condition=Available deploy -l app=none").output == "error: no matching resources found\n"
    r = run_command(ctx, "kubectl wait --for=condition=Available deploy/nope deploy/geo --timeout=0")
    assert r.output == 'Error from server (NotFound): deployments.apps "nope" not found\ndeployment.apps/geo condition met\n' and r.exit_code == 1
    r = run_command(ctx, "kubectl wait --for=condition=Available deploy/geo --timeout=abc")
    assert r.output == "error: invalid argument \"abc\" for \"--timeout\" flag: time: invalid duration \"abc\"\nSee 'kubectl wait --help' for usage.\n"


def test_wait_for_delete(sim):
    _, ctx = sim
    run_command(ctx, "kubectl run probe --image=busybox --restart=Never -- sleep 3600")
    run_command(ctx, "kubectl wait --for=condition=Ready pod/probe --timeout=60s")
    assert run_command(ctx, "kubectl delete pod probe").exit_code == 0
    r = run_command(ctx, "kubectl wait --for=delete pod/probe --timeout=60s")
    assert r.exit_code == 0 and r.output in ("", "pod/probe condition met\n")
    assert run_command(ctx, "kubectl wait --for=delete pod/never-was --timeout=5s").output == ""


def test_run_attached_runs_the_command_in_a_new_pod(sim):
    env, ctx = sim
    ns = env.scenario.namespace
    t0 = env.backend.now
    r = run_command(ctx, "kubectl run tmp --rm -i --restart=Never --image=busybox -- nslookup geo")
    assert r.exit_code == 0 and r.mutating and env.backend.now > t0  # time passed while the pod started
    assert f"Name:\tgeo.{ns}.svc.cluster.local\n" in r.output and r.output.endswith('pod "tmp" deleted\n')
    assert run_command(ctx, "kubectl get pod tmp").output == 'Error from server (NotFound): pods "tmp" not found\n'
    r = run_command(ctx, "kubectl run tmp -it --rm --restart=Never --image=busybox -- wget -qO- -T 2 http://geo:8083")
    assert r.exit_code == 1  # the scenario's broken target port resets the connection
    assert r.output == (
        "Unable to use a TTY - input is not a terminal or the right kind of file\n"
        "wget: error getting response: Connection reset by peer\n"
        'pod "tmp" deleted\n'
        f"pod {ns}/tmp terminated (Error)\n"
    )


# --------------------------------------------------------------------------- help / reference
def test_new_verbs_are_listed_and_no_longer_refused():
    for path in ("run", "expose", "wait", "diff", "events", "create deployment", "create service", "create job"):
        assert path in COMMANDS
    for verb in ("run", "expose", "wait", "events"):
        assert verb not in _OTHER_VERBS
    ref = command_reference()
    for text in ("kubectl expose", "kubectl run NAME", "kubectl wait --for", "kubectl diff -f -", "kubectl events", "kubectl create deployment", "kubectl create service", "kubectl create job"):
        assert text in ref


def test_help_for_new_verbs(sh):
    r = sh("kubectl expose --help")
    assert r.exit_code == 0 and "--target-port" in r.output
    assert "wait" in sh("kubectl help").output


# --------------------------------------------------------------------------- fidelity against the real kubectl
KUBECTL = shutil.which("kubectl")
_DRY = (
    "create deployment web --image=nginx --replicas=2 --port=8080 --dry-run=client -o yaml",
    "create deployment web --image=nginx --image=busybox --dry-run=client -o json",
    "run x --image=busybox --restart=Never --env=A=1 --labels=app=x,tier=t --port=80 --command --dry-run=client -o yaml -- sh -c 'echo hi'",
    "run x --image=busybox --env=A=1 --image-pull-policy=Never --dry-run=client -o json -- a b",
    "run x --image=busybox --restart=Foo --dry-run=client",
    "expose deployment consul --name=c2 --dry-run=client -o yaml",
    "expose svc consul --name=c3 --dry-run=client -o yaml",
    "expose deployment geo --port=80 --target-port=8083 --name=geo2 --type=NodePort --dry-run=client -o yaml",
    "expose deployment geo --port=90 --protocol=UDP --selector=a=b --labels=x=y --dry-run=client -o yaml",
    "expose deployment nothere --port=80",
    "create service nodeport s1 --tcp=80:8080 --tcp=443 --node-port=30080 --dry-run=client -o yaml",
    "create service clusterip s1 --clusterip=None --dry-run=client -o json",
    "create job j1 --image=busybox --dry-run=client -o yaml -- sh -c 'echo hi'",
    "create job j1 --from=cronjob/nope --dry-run=client -o yaml",
    "wait --for=condition=Available deployment/geo --timeout=5s",
    "wait --for=jsonpath={.spec.replicas}=1 deployment/geo",
    "wait --for=condition=Foo deployment/geo --timeout=0",
    "events --types=Foo",
    "events --for=frob/x",
    "create service externalname ext --external-name=db.example.com --tcp=5432 --dry-run=client -o json",
    "create service",
    "create job x --from=foo",
    "expose deploy geo --port=80 --selector=bad --dry-run=client",
    "diff -f x.yaml",
)


@pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed")
def test_generated_objects_match_the_real_kubectl(tmp_path):
    pytest.importorskip("aiohttp", reason="the [serve] extra (aiohttp) is not installed")
    from sre_env.serve.server import IncidentServer

    served = sre_env.SREEnv("TargetPortMisconfig")
    served.reset(seed=0)
    ns = served.scenario.namespace
    server = IncidentServer(served.backend, speed=0, prom_port=None).start()
    try:
        cfg = server.write_kubeconfig(tmp_path / "kubeconfig", ns)
        ours = sre_env.SREEnv("TargetPortMisconfig")
        ours.reset(seed=0)
        ctx = ShellContext(backend=ours.backend, namespace=ns)
        for cmd in _DRY:
            real = subprocess.run(f"{KUBECTL} --kubeconfig={cfg} {cmd}", shell=True, capture_output=True, text=True, timeout=60, check=False)
            got = run_command(ctx, "kubectl " + cmd)
            assert (got.output, got.exit_code) == (real.stderr + real.stdout, real.returncode), cmd
    finally:
        server.stop()


def test_the_env_reports_the_time_a_wait_let_pass() -> None:
    """`info["cost_s"]` is the simulated time the step took, including what `kubectl wait` waited."""
    env = sre_env.SREEnv("ScalePodZero")
    env.reset(seed=0)
    t0 = env.backend.now
    obs, _, _, _, info = env.step("kubectl wait --for=jsonpath={.status.readyReplicas}=5 deploy/geo -n hotel-reservation --timeout=30s")
    assert "timed out waiting for the condition" in obs["output"]
    # the clock moves in whole ticks; the rest of the command's own cost carries over to the next step
    assert 30.0 <= env.backend.now - t0 <= info["cost_s"] < env.backend.now - t0 + 5.0
