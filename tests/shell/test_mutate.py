"""Verbs that change state go through the API and print kubectl's messages."""

from __future__ import annotations


def _dep(backend):
    return backend.store.get("Deployment", "web", "shop")


def test_patch_three_types(sh, backend):
    r = sh("""kubectl patch deploy web -p '{"spec":{"replicas":4}}'""")
    assert r.output == "deployment.apps/web patched\n" and r.mutating and r.cost_s == 5.0
    assert _dep(backend)["spec"]["replicas"] == 4
    r = sh("""kubectl patch deployment web --type merge -p '{"metadata":{"labels":{"team":"sre"}}}'""")
    assert r.exit_code == 0 and _dep(backend)["metadata"]["labels"]["team"] == "sre"
    r = sh("""kubectl patch deploy/web --type=json -p='[{"op":"replace","path":"/spec/replicas","value":1}]'""")
    assert r.exit_code == 0 and _dep(backend)["spec"]["replicas"] == 1
    r = sh("""kubectl patch deploy web --type merge -p '{"spec":{"replicas":1}}'""")
    assert r.output == "deployment.apps/web patched (no change)\n" and not r.mutating
    r = sh("kubectl patch deploy web -p 'spec:\n  replicas: 2'")
    assert r.exit_code == 0 and _dep(backend)["spec"]["replicas"] == 2


def test_patch_strategic_merges_containers_by_name(sh, backend):
    r = sh("""kubectl patch deploy web -p '{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"x:2"}]}}}}'""")
    assert r.exit_code == 0
    c = _dep(backend)["spec"]["template"]["spec"]["containers"]
    assert len(c) == 1 and c[0]["image"] == "x:2" and c[0]["env"] == [{"name": "MODE", "value": "prod"}]


def test_patch_errors(sh):
    assert sh("kubectl patch deploy web").output == "error: must specify --patch or --patch-file containing the contents of the patch\n"
    assert sh("kubectl patch deploy web --type foo -p '{}'").output == 'error: --type must be one of [json merge strategic], not "foo"\n'
    r = sh("""kubectl patch deploy nope -p '{"spec":{}}'""")
    assert r.output == 'Error from server (NotFound): deployments.apps "nope" not found\n'


def test_set_env_add_remove_and_list(sh, backend):
    r = sh("kubectl set env deploy/web LOG_LEVEL=debug MODE-")
    assert r.output == "deployment.apps/web env updated\n" and r.mutating
    env = _dep(backend)["spec"]["template"]["spec"]["containers"][0]["env"]
    assert env == [{"name": "LOG_LEVEL", "value": "debug"}]
    assert sh("kubectl set env deploy/web --list").output == "# Deployment web, container web\nLOG_LEVEL=debug\n"


def test_set_env_writes_init_containers_too_unless_c_picks_one(sh, backend):
    """kubectl selects init containers as well as app containers (-c narrows it, wildcards allowed)."""
    dep = _dep(backend)
    dep["spec"]["template"]["spec"]["initContainers"] = [{"name": "wait", "image": "busybox"}]
    backend.store.replace(dep)
    assert sh("kubectl set env deploy/web A=1").exit_code == 0
    spec = _dep(backend)["spec"]["template"]["spec"]
    assert {"name": "A", "value": "1"} in spec["containers"][0]["env"] and spec["initContainers"][0]["env"] == [{"name": "A", "value": "1"}]
    assert sh("kubectl set env deploy/web -c w* B=2").exit_code == 0
    spec = _dep(backend)["spec"]["template"]["spec"]
    assert {"name": "B", "value": "2"} in spec["containers"][0]["env"] and {"name": "B", "value": "2"} in spec["initContainers"][0]["env"]
    assert sh("kubectl set env deploy/web -c web C=3").exit_code == 0
    spec = _dep(backend)["spec"]["template"]["spec"]
    assert {"name": "C", "value": "3"} in spec["containers"][0]["env"] and not any(e["name"] == "C" for e in spec["initContainers"][0]["env"])
    r = sh("kubectl set env deploy/web -c nope D=4")
    assert 'does not have any containers matching "nope"' in r.output and not r.mutating
    assert sh("kubectl set env deploy/web --list").output.splitlines()[0] == "# Deployment web, container web"


def test_set_image_and_resources(sh, backend):
    assert sh("kubectl set image deploy/web web=registry.local/web:2.0").output == "deployment.apps/web image updated\n"
    assert _dep(backend)["spec"]["template"]["spec"]["containers"][0]["image"] == "registry.local/web:2.0"
    assert "unable to find container named" in sh("kubectl set image deploy/web nope=x").output
    r = sh("kubectl set resources deploy/web -c web --limits=memory=512Mi --requests=cpu=200m")
    assert r.output == "deployment.apps/web resource requirements updated\n"
    res = _dep(backend)["spec"]["template"]["spec"]["containers"][0]["resources"]
    assert res["limits"]["memory"] == "512Mi" and res["requests"]["cpu"] == "200m" and res["limits"]["cpu"] == "500m"


def test_scale(sh, backend):
    assert sh("kubectl scale deploy/web --replicas=5").output == "deployment.apps/web scaled\n"
    assert _dep(backend)["spec"]["replicas"] == 5
    assert sh("kubectl scale deploy web").output == 'error: required flag(s) "replicas" not set\n'
    assert "invalid argument" in sh("kubectl scale deploy web --replicas=x").output


def test_rollout_restart_undo_history(sh, backend):
    backend.clock.now = 4000
    assert sh("kubectl rollout restart deploy/web").output == "deployment.apps/web restarted\n"
    ann = _dep(backend)["spec"]["template"]["metadata"]["annotations"]
    assert ann["kubectl.kubernetes.io/restartedAt"] == "2026-03-02T10:06:40Z"
    assert sh("kubectl rollout history deploy/web").output == "deployment.apps/web \nREVISION  CHANGE-CAUSE\n1         <none>\n2         <none>\n\n"
    r = sh("kubectl rollout undo deploy/web")
    assert r.output == "deployment.apps/web rolled back\n" and r.mutating
    tpl = _dep(backend)["spec"]["template"]
    assert tpl["spec"]["containers"][0]["image"] == "registry.local/web:1.0"
    assert "pod-template-hash" not in tpl["metadata"]["labels"]
    assert sh("kubectl rollout undo deploy/web --to-revision=9").output == "error: unable to find specified revision 9 in history\n"


def test_rollout_status_reports_progress(sh, backend):
    r = sh("kubectl rollout status deploy/web")
    assert r.output.startswith('Waiting for deployment "web" rollout to finish: 1 of 2 updated replicas are available...\n')
    assert r.exit_code == 1
    backend.store.get("Deployment", "web", "shop")["status"]["availableReplicas"] = 2
    assert sh("kubectl rollout status deploy/web").output == 'deployment "web" successfully rolled out\n'


def test_delete(sh, backend):
    r = sh("kubectl delete pod web-5f6a8b-abcde")
    assert r.output == 'pod "web-5f6a8b-abcde" deleted\n' and r.mutating
    r = sh("kubectl delete pod web-5f6a8b-fghij --force --grace-period=0")
    assert r.output.startswith("Warning: Immediate deletion does not wait") and r.output.endswith('pod "web-5f6a8b-fghij" force deleted\n')
    assert backend.store.find("Pod", "web-5f6a8b-fghij", "shop") is None
    assert sh("kubectl delete pod nope").output == 'Error from server (NotFound): pods "nope" not found\n'
    assert sh("kubectl delete cm -l app=nothing").output == "No resources found\n"
    assert sh("kubectl delete configmap web-config").output == 'configmap "web-config" deleted\n'


def test_cordon_drain_uncordon(sh, backend):
    assert sh("kubectl cordon node-2").output == "node/node-2 cordoned\n"
    assert backend.store.get("Node", "node-2")["spec"]["unschedulable"] is True
    assert sh("kubectl cordon node-2").output == "node/node-2 already cordoned\n"
    r = sh("kubectl drain node-2")
    assert r.exit_code == 1 and "cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore): kube-system/kube-proxy-x7k2p" in r.output
    r = sh("kubectl drain node-2 --ignore-daemonsets --delete-emptydir-data")
    assert r.exit_code == 0
    assert r.output == (
        "node/node-2 already cordoned\nWarning: ignoring DaemonSet-managed Pods: kube-system/kube-proxy-x7k2p\n"
        "evicting pod shop/web-5f6a8b-fghij\npod/web-5f6a8b-fghij evicted\nnode/node-2 drained\n"
    )
    assert backend.api.evicted == [("shop", "web-5f6a8b-fghij")]
    assert sh("kubectl uncordon node-2").output == "node/node-2 uncordoned\n"
    assert "unschedulable" not in backend.store.get("Node", "node-2")["spec"]


def test_label_annotate_taint(sh, backend):
    assert sh("kubectl label pod web-5f6a8b-abcde tier=frontend").output == "pod/web-5f6a8b-abcde labeled\n"
    assert sh("kubectl label pod web-5f6a8b-abcde tier=backend").output == "error: 'tier' already has a value (frontend), and --overwrite is false\n"
    assert sh("kubectl label pod web-5f6a8b-abcde tier=backend --overwrite").exit_code == 0
    assert sh("kubectl label pod web-5f6a8b-abcde tier-").output == "pod/web-5f6a8b-abcde unlabeled\n"
    assert sh("kubectl annotate deploy web owner=sre").output == "deployment.apps/web annotated\n"
    assert _dep(backend)["metadata"]["annotations"]["owner"] == "sre"
    assert sh("kubectl taint nodes node-1 dedicated=db:NoSchedule").output == "node/node-1 tainted\n"
    assert backend.store.get("Node", "node-1")["spec"]["taints"] == [{"key": "dedicated", "value": "db", "effect": "NoSchedule"}]
    assert "already has dedicated taint" in sh("kubectl taint nodes node-1 dedicated=x:NoSchedule").output
    assert sh("kubectl taint nodes node-1 dedicated:NoSchedule-").output == "node/node-1 untainted\n"


def test_apply_heredoc_create_and_configure(sh, backend):
    manifest = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\ndata:\n  A: '1'\n---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web-config\ndata:\n  MODE: safe\n"
    r = sh(f"kubectl apply -f - <<'EOF'\n{manifest}EOF")
    assert r.output == "configmap/extra created\nconfigmap/web-config configured\n" and r.mutating
    assert backend.store.get("ConfigMap", "extra", "shop")["data"] == {"A": "1"}
    assert backend.store.get("ConfigMap", "web-config", "shop")["data"]["MODE"] == "safe"
    r = sh(f"kubectl apply -f - <<EOF\n{manifest}EOF\n")
    assert r.output == "configmap/extra unchanged\nconfigmap/web-config unchanged\n" and not r.mutating


def test_apply_from_echo_pipe_and_errors(sh, backend):
    r = sh("""echo 'apiVersion: v1
kind: ConfigMap
metadata:
  name: piped
data:
  k: v' | kubectl apply -f -""")
    assert r.output == "configmap/piped created\n"
    assert sh("kubectl apply -f app.yaml").output == 'error: the path "app.yaml" does not exist\n'
    r = sh("echo 'kind: Widget\napiVersion: v9\nmetadata:\n  name: w' | kubectl apply -f -")
    assert 'no matches for kind "Widget" in version "v9"' in r.output and r.exit_code == 1
    r = sh("echo 'a: [' | kubectl apply -f -")
    assert r.output.startswith("error: error parsing STDIN: error converting YAML to JSON: yaml:")


def test_create_literals(sh, backend):
    assert sh("kubectl create configmap c1 --from-literal=a=1 --from-literal=b=2").output == "configmap/c1 created\n"
    assert backend.store.get("ConfigMap", "c1", "shop")["data"] == {"a": "1", "b": "2"}
    assert sh("kubectl create secret generic s1 --from-literal=password=x").output == "secret/s1 created\n"
    assert backend.store.get("Secret", "s1", "shop")["data"] == {"password": "eA=="}
    assert sh("kubectl create configmap c1").output == 'Error from server (AlreadyExists): configmaps "c1" already exists\n'
