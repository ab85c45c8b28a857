"""kubectl describe layouts."""

from __future__ import annotations


def test_describe_pod_layout_and_events(sh):
    r = sh("kubectl describe pod web-5f6a8b-fghij")
    out = r.output
    assert r.exit_code == 0
    assert out.startswith("Name:             web-5f6a8b-fghij\nNamespace:        shop\n")
    assert "Controlled By:  ReplicaSet/web-5f6a8b" in out
    assert "    State:          Waiting\n      Reason:       CrashLoopBackOff" in out
    assert "    Last State:     Terminated\n      Reason:       Error\n      Exit Code:    1" in out
    assert "    Restart Count:  5" in out
    assert "Events:\n  Type     Reason   Age                  From     Message\n  ----     ------   ----                 ----     -------" in out
    assert "  Warning  BackOff  100s (x7 over 100s)  kubelet  Back-off restarting failed container" in out


def test_describe_deploy_svc_node(sh):
    out = sh("kubectl describe deploy web").output
    assert "Replicas:               2 desired | 2 updated | 2 total | 1 available | 0 unavailable" in out
    assert "NewReplicaSet:" in out and "web-5f6a8b (2/2 replicas created)" in out
    # kubectl 1.32 lists every old ReplicaSet, the scaled-down ones too (checked against the real binary)
    assert out.endswith("OldReplicaSets:  web-7d4b9c (0/0 replicas created)\nNewReplicaSet:   web-5f6a8b (2/2 replicas created)\nEvents:          <none>\n")
    out = sh("kubectl describe svc web").output
    assert "Endpoints:" in out and "10.244.1.5:8080" in out and "TargetPort:" in out
    out = sh("kubectl describe node node-2").output
    assert "Non-terminated Pods:" in out and "kube-proxy-x7k2p" in out and "Allocated resources:" in out


def test_describe_other_kinds(sh):
    for cmd in ("describe rs web-5f6a8b", "describe cm web-config", "describe ep web", "describe ns shop", "describe ds kube-proxy -n kube-system"):
        r = sh("kubectl " + cmd)
        assert r.exit_code == 0, (cmd, r.output)
        assert "Name:" in r.output or "name:" in r.output


def test_describe_not_found(sh):
    r = sh("kubectl describe pod nope")
    assert r.output == 'Error from server (NotFound): pods "nope" not found\n' and r.exit_code == 1
