"""kubectl get: columns and values as kubectl v1.32 prints them."""

from __future__ import annotations


def _rows(out: str) -> list[list[str]]:
    import re

    return [re.split(r"\s{2,}", ln.strip()) for ln in out.strip().splitlines()]


def test_get_pods_columns_and_crashloop(sh):
    r = sh("kubectl get pods")
    assert r.exit_code == 0 and not r.mutating
    lines = r.output.splitlines()
    assert lines[0].split() == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert lines[0].startswith("NAME               READY   STATUS")
    rows = _rows(r.output)
    assert rows[1] == ["web-5f6a8b-abcde", "1/1", "Running", "0", "60m"]
    assert rows[2] == ["web-5f6a8b-fghij", "0/1", "CrashLoopBackOff", "5 (2m ago)", "60m"]
    assert 2.0 <= r.cost_s <= 5.0


def test_get_pods_wide_all_namespaces(sh):
    r = sh("kubectl get pods -o wide -A")
    head = r.output.splitlines()[0]
    assert head.split() == ["NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE", "IP", "NODE", "NOMINATED", "NODE", "READINESS", "GATES"]
    rows = _rows(r.output)
    assert rows[1][:2] == ["kube-system", "kube-proxy-x7k2p"]
    assert rows[3] == ["shop", "web-5f6a8b-fghij", "0/1", "CrashLoopBackOff", "5 (2m ago)", "60m", "10.244.2.7", "node-2", "<none>", "<none>"]


def test_get_deploy_svc_nodes(sh):
    r = sh("kubectl get deploy")
    assert _rows(r.output) == [["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"], ["web", "1/2", "2", "1", "60m"]]
    r = sh("kubectl get svc -o wide")
    assert _rows(r.output)[1] == ["web", "ClusterIP", "10.96.0.10", "<none>", "80/TCP", "60m", "app=web"]
    r = sh("kubectl get nodes")
    assert _rows(r.output)[1:] == [["node-1", "Ready", "control-plane", "60m", "v1.32.2"], ["node-2", "Ready", "<none>", "60m", "v1.32.2"]]


def test_get_multiple_kinds_prefixes_names(sh):
    out = sh("kubectl get deploy,svc").output
    assert "deployment.apps/web" in out and "service/web" in out
    assert "\n\n" in out


def test_get_single_name_and_not_found(sh):
    r = sh("kubectl get pod web-5f6a8b-abcde nope")
    assert "web-5f6a8b-abcde" in r.output
    assert 'Error from server (NotFound): pods "nope" not found' in r.output
    assert r.exit_code == 1


def test_empty_list_message(sh):
    r = sh("kubectl get pods -n default")
    assert r.output == "No resources found in default namespace.\n" and r.exit_code == 0
    assert sh("kubectl get pv").output == "No resources found\n"


def test_label_and_field_selectors(sh):
    out = sh("kubectl get pods -A -l k8s-app=kube-proxy --no-headers").output
    assert out.startswith("kube-system") and out.count("\n") == 1
    out = sh("kubectl get pods --field-selector spec.nodeName=node-1 -o name").output
    assert out == "pod/web-5f6a8b-abcde\n"


def test_show_labels(sh):
    out = sh("kubectl get deploy --show-labels").output
    assert out.splitlines()[0].endswith("LABELS") and out.splitlines()[1].endswith("app=web")


def test_output_yaml_json_name(sh):
    y = sh("kubectl get deploy web -o yaml").output
    assert y.startswith("apiVersion: apps/v1\nkind: Deployment\n")
    j = sh("kubectl get pods -o json").output
    import json

    doc = json.loads(j)
    assert doc["kind"] == "List" and len(doc["items"]) == 2
    assert sh("kubectl get deploy -o name").output == "deployment.apps/web\n"


def test_jsonpath_forms(sh):
    assert sh("kubectl get pods -o jsonpath='{.items[*].metadata.name}'").output == "web-5f6a8b-abcde web-5f6a8b-fghij"
    out = sh("""kubectl get pods -o jsonpath='{range .items[*]}{.metadata.name}{"\\t"}{.spec.nodeName}{"\\n"}{end}'""").output
    assert out == "web-5f6a8b-abcde\tnode-1\nweb-5f6a8b-fghij\tnode-2\n"
    out = sh("""kubectl get pods -o jsonpath='{.items[?(@.spec.nodeName=="node-2")].metadata.name}'""").output
    assert out == "web-5f6a8b-fghij"
    assert sh("kubectl get deploy web -o jsonpath={.spec.replicas}").output == "2"
    assert sh("kubectl get deploy web -o jsonpath='{.spec.missing}'").output == ""


def test_custom_columns_and_sort_by(sh):
    out = sh("kubectl get pods -o custom-columns=NAME:.metadata.name,NODE:.spec.nodeName").output
    assert out.splitlines()[0].split() == ["NAME", "NODE"]
    out = sh("kubectl get pods --sort-by=.status.containerStatuses[0].restartCount -o name").output
    assert out.splitlines() == ["pod/web-5f6a8b-abcde", "pod/web-5f6a8b-fghij"]


def test_get_events_and_all(sh):
    out = sh("kubectl get events").output
    assert out.splitlines()[0].split() == ["LAST", "SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    assert "pod/web-5f6a8b-fghij" in out and "BackOff" in out
    out = sh("kubectl get all").output
    assert "pod/web-5f6a8b-abcde" in out and "deployment.apps/web" in out and "replicaset.apps/web-5f6a8b" in out


def test_get_endpoints_configmaps_namespaces(sh):
    assert ["web", "10.244.1.5:8080", "60m"] in _rows(sh("kubectl get ep").output)
    assert ["web-config", "2", "60m"] in _rows(sh("kubectl get cm").output)
    assert ["shop", "Active", "60m"] in _rows(sh("kubectl get ns").output)
