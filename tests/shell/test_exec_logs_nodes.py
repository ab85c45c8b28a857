"""logs, exec, top, debug node, ssh."""

from __future__ import annotations


def test_logs_options_delegate(sh, backend):
    r = sh("kubectl logs web-5f6a8b-fghij --tail=2")
    assert r.output == "connecting to db\nerror: connection refused\n" and r.cost_s == 3.0
    assert sh("kubectl logs web-5f6a8b-fghij -p").output == "starting\npanic: config missing\n"
    sh("kubectl logs web-5f6a8b-fghij -c web --since=5m --timestamps")
    assert backend.api.last_logs_call == dict(name="web-5f6a8b-fghij", container="web", previous=False, tail=None, since=300.0, timestamps=True)
    r = sh("kubectl logs deploy/web --tail 1")
    assert r.output == "Found 2 pods, using pod/web-5f6a8b-abcde\nGET /api 29 200\n"
    assert "not supported" in sh("kubectl logs web-5f6a8b-fghij -f").output
    assert sh("kubectl logs nope").output == 'Error from server (NotFound): pods "nope" not found\n'
    assert "unknown unit" in sh("kubectl logs web-5f6a8b-fghij --since=5x").output


def test_exec(sh, backend):
    r = sh("kubectl exec -it web-5f6a8b-abcde -- env")
    assert r.output == "PATH=/usr/bin\nMODE=prod\n" and r.exit_code == 0
    assert backend.api.exec_calls[-1] == ("shop", "web-5f6a8b-abcde", "web", ["env"])
    r = sh("kubectl exec web-5f6a8b-abcde -- false")
    assert r.output == "command terminated with exit code 1\n" and r.exit_code == 1
    assert sh("kubectl exec web-5f6a8b-abcde ls").output == "error: exec [POD] [COMMAND] is not supported anymore. Use exec [POD] -- [COMMAND] instead\n"
    assert sh("kubectl exec web-5f6a8b-abcde").output == "error: you must specify at least one command for the container\n"
    assert sh("kubectl exec deploy/web -c web -- cat /etc/x").exit_code == 0


def test_top(sh):
    # kubectl top ends every cell with a tab, so even the last column is padded (as the real one prints)
    assert sh("kubectl top pods").output == "NAME               CPU(cores)   MEMORY(bytes)   \nweb-5f6a8b-abcde   12m          34Mi            \nweb-5f6a8b-fghij   1m           5Mi             \n"
    out = sh("kubectl top nodes").output
    assert out.splitlines()[0].split() == ["NAME", "CPU(cores)", "CPU(%)", "MEMORY(bytes)", "MEMORY(%)"]
    assert out.splitlines()[1].split() == ["node-1", "250m", "6%", "2048Mi", "25%"]
    assert sh("kubectl top pods --sort-by=memory -A --no-headers").output.splitlines()[0].split()[1] == "web-5f6a8b-abcde"


def test_debug_node_creates_pod_and_runs_on_host(sh, backend):
    r = sh("kubectl debug node/node-1 -it --image=busybox -- chroot /host journalctl -u kubelet")
    assert r.mutating and r.exit_code == 0
    first = r.output.splitlines()[0]
    assert first.startswith("Creating debugging pod node-debugger-node-1-") and first.endswith(" with container debugger on node node-1.")
    assert backend.nodes.calls[-1] == ("node-1", ["journalctl", "-u", "kubelet"])
    pods = [p for p in backend.store.list("Pod", "shop") if p["metadata"]["name"].startswith("node-debugger-node-1-")]
    assert len(pods) == 1
    spec = pods[0]["spec"]
    assert spec["nodeName"] == "node-1" and spec["hostPID"] and spec["hostNetwork"] and spec["containers"][0]["name"] == "debugger"
    assert sh("kubectl debug node/nope -- ls").output == 'Error from server (NotFound): nodes "nope" not found\n'
    assert "not supported" in sh("kubectl debug web-5f6a8b-abcde -it --image=busybox").output


def test_ssh(sh, backend):
    r = sh("ssh node-1 systemctl status kubelet")
    assert "active (running)" in r.output and r.exit_code == 0
    assert backend.nodes.calls[-1] == ("node-1", ["systemctl", "status", "kubelet"])
    r = sh("ssh node-9 uptime")
    assert r.output == "ssh: Could not resolve hostname node-9: Name or service not known\n" and r.exit_code == 255
    assert sh("ssh root@node-2 'journalctl -u kubelet | tail -n 1'").output == "Mar 02 09:00:19 node-2 kubelet[1]: line 19\n"


def test_misc_client_commands(sh, ctx):
    assert sh("kubectl version").output.startswith("Client Version: v1.32")
    assert sh("kubectl config current-context").output == "sre-env\n"
    assert sh("kubectl auth can-i delete pods").output == "yes\n"
    assert "deployments" in sh("kubectl api-resources").output
    assert sh("kubectl explain pods").output.startswith("KIND:       Pod")
    assert sh("kubectl config set-context --current --namespace=kube-system").exit_code == 0
    assert ctx.namespace == "kube-system"
    assert "kube-proxy-x7k2p" in sh("kubectl get pods").output


def test_help_and_reference(sh):
    from sre_env.shell import command_reference

    out = sh("kubectl get --help").output
    assert out.startswith("Display one or many resources.") and "--all-namespaces" in out and "Usage:" in out
    assert "-n" in sh("kubectl logs -h").output
    ref = command_reference()
    for verb in ("kubectl get", "kubectl describe", "kubectl logs", "kubectl exec", "kubectl rollout undo", "kubectl debug", "ssh NODE"):
        assert verb in ref
