"""Control-plane model: admission (PodSecurity, Gatekeeper webhooks and mutators), TLS expiry,
Jobs/CronJobs, and the kubelet's eviction manager — the symptoms each cause produces."""

from __future__ import annotations

import copy

import pytest

from sre_env.apps.hotel_reservation import HOTEL_RESERVATION
from sre_env.errors import ApiError
from sre_env.kube.timefmt import iso
from sre_env.kube.tls import b64, parse_certificate, pem_certificate
from sre_env.shell import ShellContext, run_command
from sre_env.sim.backend import SimBackend
from sre_env.sim.control import gatekeeper as gk
from sre_env.sim.control.admission import pod_security_violations
from sre_env.sim.control.jobs import CronError, next_schedule, parse_cron
from sre_env.sim.episodes import healthy_world
from sre_env.telemetry.metrics_store import metrics_of

NS = HOTEL_RESERVATION.namespace


@pytest.fixture()
def backend() -> SimBackend:
    return SimBackend(healthy_world(HOTEL_RESERVATION))


def sh(backend: SimBackend, cmd: str) -> str:
    ctx = ShellContext(backend=backend, namespace="default")
    return run_command(ctx, cmd).output


def _probe_pod(name: str = "probe") -> dict:
    return {"kind": "Pod", "apiVersion": "v1", "metadata": {"name": name, "namespace": NS, "labels": {"run": name}}, "spec": {"containers": [{"name": "c", "image": "mongo:4.4.6"}]}}


def _restart(backend: SimBackend, deployment: str) -> None:
    backend.api.patch("Deployment", deployment, NS, {"spec": {"template": {"metadata": {"annotations": {"kubectl.kubernetes.io/restartedAt": iso(backend.now)}}}}}, "strategic")


def _failed_create_messages(backend: SimBackend) -> list[str]:
    return [e["message"] for e in backend.api.list("Event", NS) if e["reason"] == "FailedCreate"]


# --------------------------------------------------------------------------- Gatekeeper install
def test_gatekeeper_is_installed_and_admits_app_pods(backend: SimBackend) -> None:
    out = sh(backend, "kubectl get validatingwebhookconfigurations")
    assert out.splitlines()[0].split() == ["NAME", "WEBHOOKS", "AGE"]
    assert out.splitlines()[1].split()[:2] == ["gatekeeper-validating-webhook-configuration", "2"]
    out = sh(backend, "kubectl get mutatingwebhookconfigurations")
    assert out.splitlines()[1].split()[:2] == ["gatekeeper-mutating-webhook-configuration", "1"]
    assert "gatekeeper-controller-manager" in sh(backend, f"kubectl get pods -n {gk.NAMESPACE} -o wide")
    # a healthy webhook admits pods
    backend.api.create(_probe_pod())
    assert backend.api.get("Pod", "probe", NS)


# --------------------------------------------------------------------------- PodSecurity
def test_pod_security_restricted_rejects_the_replicaset_with_the_apiservers_words(backend: SimBackend) -> None:
    backend.api.patch("Namespace", NS, None, {"metadata": {"labels": {"pod-security.kubernetes.io/enforce": "restricted"}}}, "merge")
    _restart(backend, "mongodb-rate")
    backend.advance(60)
    msgs = _failed_create_messages(backend)
    assert msgs, "the ReplicaSet reports FailedCreate"
    assert 'is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "hotel-reserv-rate-mongo" must set securityContext.allowPrivilegeEscalation=false)' in msgs[0]
    assert "runAsNonRoot != true" in msgs[0] and 'seccompProfile (pod or container "hotel-reserv-rate-mongo"' in msgs[0]
    assert not [p for p in backend.api.list("Pod", NS, "io.kompose.service=mongodb-rate") if not p["metadata"].get("deletionTimestamp")]
    # relaxing the level lets the controller's retry through
    backend.api.patch("Namespace", NS, None, {"metadata": {"labels": {"pod-security.kubernetes.io/enforce": "baseline"}}}, "merge")
    backend.advance(200)
    dep = backend.api.get("Deployment", "mongodb-rate", NS)
    assert dep["status"].get("availableReplicas") == 1


def test_pod_security_levels() -> None:
    spec = {"containers": [{"name": "app", "image": "x"}]}
    assert pod_security_violations(spec, "baseline") == []
    assert len(pod_security_violations(spec, "restricted")) == 4
    ok = copy.deepcopy(spec)
    ok["securityContext"] = {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}}
    ok["containers"][0]["securityContext"] = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
    assert pod_security_violations(ok, "restricted") == []
    priv = {"containers": [{"name": "a", "securityContext": {"privileged": True}}], "volumes": [{"name": "h", "hostPath": {"path": "/"}}]}
    assert pod_security_violations(priv, "baseline") == ['privileged (container "a" must not set securityContext.privileged=true)', 'hostPath volume ("h")']


# --------------------------------------------------------------------------- webhooks
def test_webhook_without_endpoints_fails_pod_creates(backend: SimBackend) -> None:
    backend.api.scale("Deployment", "gatekeeper-controller-manager", gk.NAMESPACE, 0)
    backend.advance(60)
    with pytest.raises(ApiError) as err:
        backend.api.create(_probe_pod())
    assert err.value.reason == "InternalError"
    assert str(err.value) == (
        'Error from server (InternalError): Internal error occurred: failed calling webhook "validation.gatekeeper.sh": failed to call webhook: '
        'Post "https://gatekeeper-webhook-service.gatekeeper-system.svc:443/v1/admit?timeout=3s": no endpoints available for service "gatekeeper-webhook-service"'
    )
    # exempt namespaces are not intercepted
    pod = _probe_pod()
    pod["metadata"]["namespace"] = "kube-system"
    backend.api.create(pod)


def test_webhook_service_on_a_closed_port_is_connection_refused(backend: SimBackend) -> None:
    backend.api.patch("Service", gk.WEBHOOK_SERVICE, gk.NAMESPACE, [{"op": "replace", "path": "/spec/ports/0/targetPort", "value": 9443}], "json")
    backend.advance(10)
    _restart(backend, "mongodb-profile")
    backend.advance(30)
    msg = _failed_create_messages(backend)[0]
    assert msg.startswith('Error creating: Internal error occurred: failed calling webhook "validation.gatekeeper.sh": failed to call webhook: Post "https://gatekeeper-webhook-service.gatekeeper-system.svc:443/v1/admit?timeout=3s": dial tcp ')
    assert msg.endswith(":443: connect: connection refused")
    out = sh(backend, f"kubectl describe rs -n {NS} -l io.kompose.service=mongodb-profile")
    assert "FailedCreate" in out and "replicaset-controller" in out


def test_cabundle_mismatch_is_unknown_authority_and_fail_open_lets_pods_through(backend: SimBackend) -> None:
    stale = b64(pem_certificate("CN=gatekeeper-ca", "CN=gatekeeper-ca", 1, "2024-01-01T00:00:00Z", "2034-01-01T00:00:00Z"))
    backend.api.patch("ValidatingWebhookConfiguration", gk.VALIDATING, None, [{"op": "replace", "path": "/webhooks/0/clientConfig/caBundle", "value": stale}], "json")
    with pytest.raises(ApiError, match="tls: failed to verify certificate: x509: certificate signed by unknown authority"):
        backend.api.create(_probe_pod())
    backend.api.patch("ValidatingWebhookConfiguration", gk.VALIDATING, None, [{"op": "replace", "path": "/webhooks/0/failurePolicy", "value": "Ignore"}], "json")
    backend.api.create(_probe_pod())


def test_assign_mutator_injects_limits_only_where_none_is_set(backend: SimBackend) -> None:
    backend.api.create(
        {
            "apiVersion": "mutations.gatekeeper.sh/v1",
            "kind": "Assign",
            "metadata": {"name": "mem"},
            "spec": {
                "applyTo": [{"groups": [""], "kinds": ["Pod"], "versions": ["v1"]}],
                "match": {"scope": "Namespaced", "kinds": [{"apiGroups": ["*"], "kinds": ["Pod"]}], "excludedNamespaces": ["kube-system"]},
                "location": "spec.containers[name:*].resources.limits.memory",
                "parameters": {"pathTests": [{"subPath": "spec.containers[name:*].resources.limits.memory", "condition": "MustNotExist"}], "assign": {"value": "8Mi"}},
            },
        }
    )
    assert "mem" in sh(backend, "kubectl get assign")
    pod = backend.api.create(_probe_pod("p1"))
    assert pod["spec"]["containers"][0]["resources"]["limits"]["memory"] == "8Mi"
    explicit = _probe_pod("p2")
    explicit["spec"]["containers"][0]["resources"] = {"limits": {"memory": "1Gi"}}
    assert backend.api.create(explicit)["spec"]["containers"][0]["resources"]["limits"]["memory"] == "1Gi"
    # a restarted database is admitted with the absurd limit and OOM-killed
    _restart(backend, "mongodb-reservation")
    backend.advance(90)
    out = sh(backend, f"kubectl describe pod -n {NS} -l io.kompose.service=mongodb-reservation")
    assert "memory:  8Mi" in out and "OOMKilled" in out


# --------------------------------------------------------------------------- TLS
def test_expired_serving_certificate_and_gatekeeper_rotation(backend: SimBackend) -> None:
    now = backend.now
    ca = b64(pem_certificate("CN=gatekeeper-ca,O=gatekeeper", "CN=gatekeeper-ca,O=gatekeeper", 1, "2025-01-01T00:00:00Z", "2035-01-01T00:00:00Z"))
    cert = b64(pem_certificate("CN=gatekeeper-webhook-service.gatekeeper-system.svc", "CN=gatekeeper-ca,O=gatekeeper", 2, iso(now - 365 * 86400), iso(now - 60)))
    backend.api.patch("Secret", gk.CERT_SECRET, gk.NAMESPACE, {"data": {"ca.crt": ca, "tls.crt": cert}}, "merge")
    backend.api.patch("ValidatingWebhookConfiguration", gk.VALIDATING, None, [{"op": "replace", "path": "/webhooks/0/clientConfig/caBundle", "value": ca}], "json")
    with pytest.raises(ApiError) as err:
        backend.api.create(_probe_pod())
    assert f"tls: failed to verify certificate: x509: certificate has expired or is not yet valid: current time {iso(now)} is after {iso(now - 60)}" in err.value.message
    out = sh(backend, f"kubectl get secret {gk.CERT_SECRET} -n {gk.NAMESPACE} -o jsonpath='{{.data.tls\\.crt}}' | base64 -d | openssl x509 -noout -enddate -subject")
    assert out.startswith("notAfter=") and out.rstrip().endswith("subject=CN = gatekeeper-webhook-service.gatekeeper-system.svc")
    # a controller-manager restarted with rotation disabled changes nothing
    sh(backend, f"kubectl rollout restart deployment/gatekeeper-controller-manager -n {gk.NAMESPACE}")
    backend.advance(90)
    with pytest.raises(ApiError):
        backend.api.create(_probe_pod())
    # with Gatekeeper's cert-controller on, the new pod reissues the pair and injects the caBundle
    args = backend.api.get("Deployment", "gatekeeper-controller-manager", gk.NAMESPACE)["spec"]["template"]["spec"]["containers"][0]["args"]
    idx = args.index("--disable-cert-rotation")
    backend.api.patch("Deployment", "gatekeeper-controller-manager", gk.NAMESPACE, [{"op": "remove", "path": f"/spec/template/spec/containers/0/args/{idx}"}], "json")
    backend.advance(90)
    info = parse_certificate(__import__("base64").b64decode(backend.api.get("Secret", gk.CERT_SECRET, gk.NAMESPACE)["data"]["tls.crt"]).decode())
    assert info is not None and info.not_after.year >= 2036
    backend.api.create(_probe_pod())


def test_openssl_and_base64_filters(backend: SimBackend) -> None:
    out = sh(backend, f"kubectl get secret {gk.CERT_SECRET} -n {gk.NAMESPACE} -o jsonpath='{{.data.ca\\.crt}}' | base64 -d | openssl x509 -noout -dates")
    assert out == "notBefore=Jan 12 08:14:03 2026 GMT\nnotAfter=Jan 10 08:14:03 2036 GMT\n"
    assert "Unable to load certificate" in sh(backend, "echo hello | openssl x509 -noout -dates")


# --------------------------------------------------------------------------- Jobs and CronJobs
def test_cron_schedule_parsing() -> None:
    assert next_schedule("*/5 * * * *", 900.0) == 1200.0
    assert next_schedule("0 * * * *", 0.0) == 3600.0
    assert parse_cron("@hourly")[0] == frozenset({0})
    with pytest.raises(CronError):
        parse_cron("* * *")


def _cronjob(name: str, containers: list[dict]) -> dict:
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "schedule": "*/5 * * * *",
            "concurrencyPolicy": "Forbid",
            "jobTemplate": {"spec": {"template": {"metadata": {"labels": {"app": name}}, "spec": {"restartPolicy": "OnFailure", "containers": containers}}}},
        },
    }


_MAIN = {"name": "main", "image": "mongo:4.4.6", "command": ["/bin/sh", "-c", "mongodump --uri=mongodb://mongodb-rate:27017 && exit 0"]}


def test_cronjob_runs_complete_and_show_real_columns(backend: SimBackend) -> None:
    backend.api.create(_cronjob("dump", [_MAIN]))
    backend.advance(420)
    jobs = backend.api.list("Job", NS)
    assert [j["metadata"]["name"] for j in jobs] == ["dump-29540720"]
    assert any(c["type"] == "Complete" for c in jobs[0]["status"]["conditions"])
    out = sh(backend, f"kubectl get jobs -n {NS}")
    assert out.splitlines()[0].split() == ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"]
    assert out.splitlines()[1].split()[:3] == ["dump-29540720", "Complete", "1/1"]
    cj = sh(backend, f"kubectl get cronjob dump -n {NS}")
    assert cj.splitlines()[0].split() == ["NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST", "SCHEDULE", "AGE"]
    assert backend.api.get("CronJob", "dump", NS)["status"].get("lastSuccessfulTime")


def test_a_sidecar_keeps_the_job_running_and_forbid_skips_later_runs(backend: SimBackend) -> None:
    shipper = {"name": "fluent-bit", "image": "cr.fluentbit.io/fluent/fluent-bit:3.1.9"}
    backend.api.create(_cronjob("dump", [_MAIN, shipper]))
    backend.advance(700)
    jobs = backend.api.list("Job", NS)
    assert len(jobs) == 1 and not any(c.get("type") == "Complete" for c in jobs[0]["status"].get("conditions") or ())
    pods = sh(backend, f"kubectl get pods -n {NS} -l app=dump")
    assert "1/2     NotReady" in pods
    events = [e["message"] for e in backend.api.list("Event", NS) if e["reason"] == "JobAlreadyActive"]
    assert events == ["Not starting job because prior execution is running and concurrency policy is Forbid"]
    desc = sh(backend, f"kubectl describe cronjob dump -n {NS}")
    assert "Concurrency Policy:            Forbid" in desc and f"Active Jobs:         {jobs[0]['metadata']['name']}" in desc
    assert "Pods Statuses:    1 Active (0 Ready) / 0 Succeeded / 0 Failed" in sh(backend, f"kubectl describe job {jobs[0]['metadata']['name']} -n {NS}")
    # deleting the Job takes its pod along (background propagation through the garbage collector)
    sh(backend, f"kubectl delete job {jobs[0]['metadata']['name']} -n {NS}")
    backend.advance(30)
    assert not backend.api.list("Pod", NS, "app=dump")


# --------------------------------------------------------------------------- eviction manager
def test_eviction_threshold_in_kubelet_config_evicts_healthy_pods(backend: SimBackend) -> None:
    node = "worker-2"
    res = backend.nodes.exec(node, ["bash", "-c", "sed -i 's/nodefs.available: 10%/nodefs.available: 90%/' /var/lib/kubelet/config.yaml && systemctl restart kubelet"])
    assert res.exit_code == 0, res.output
    assert "nodefs.available: 90%" in backend.nodes.exec(node, ["cat", "/var/lib/kubelet/config.yaml"]).output
    backend.advance(120)
    desc = sh(backend, f"kubectl describe node {node}")
    assert "node.kubernetes.io/disk-pressure:NoSchedule" in desc
    assert "DiskPressure     True" in desc and "KubeletHasDiskPressure" in desc
    evicted = [p for p in backend.api.list("Pod", NS) if (p.get("status") or {}).get("reason") == "Evicted"]
    assert evicted
    msg = evicted[0]["status"]["message"]
    assert msg.startswith("The node was low on resource: ephemeral-storage. Threshold quantity: ") and "has larger consumption of ephemeral-storage" in msg
    assert "Eviction manager: pod is evicted successfully" in backend.nodes.exec(node, ["journalctl", "-u", "kubelet", "--no-pager"]).output
    # the default threshold back, the condition clears after the transition period
    backend.nodes.exec(node, ["bash", "-c", "sed -i 's/nodefs.available: 90%/nodefs.available: 10%/' /var/lib/kubelet/config.yaml && systemctl restart kubelet"])
    backend.advance(330)
    assert "node.kubernetes.io/disk-pressure" not in sh(backend, f"kubectl describe node {node}")


def test_a_kubelet_config_that_does_not_parse_keeps_the_kubelet_down(backend: SimBackend) -> None:
    node = "worker-1"
    backend.nodes.exec(node, ["bash", "-c", "echo 'evictionHard: [oops' > /var/lib/kubelet/config.yaml && systemctl restart kubelet"])
    assert not backend.world.hosts[node].kubelet_running
    assert "failed to load kubelet config file, path: /var/lib/kubelet/config.yaml" in backend.nodes.exec(node, ["journalctl", "-u", "kubelet", "--no-pager"]).output


# --------------------------------------------------------------------------- RBAC
def test_rbac_denial_silences_kube_state_metrics(backend: SimBackend) -> None:
    user = "system:serviceaccount:kube-system:kube-state-metrics"
    assert sh(backend, f"kubectl auth can-i list deployments --as={user}") == "yes\n"
    before = metrics_of(backend.world).scrape  # noqa: F841 - the exporter runs on every scrape
    backend.api.patch("ClusterRoleBinding", "kube-state-metrics", None, [{"op": "replace", "path": "/subjects/0/namespace", "value": "monitoring"}], "json")
    ctx = ShellContext(backend=backend, namespace="default")
    res = run_command(ctx, f"kubectl auth can-i list deployments --as={user}")
    assert res.output == "no\n" and res.exit_code == 1
    backend.advance(60)
    logs = sh(backend, "kubectl logs -n kube-system deployment/kube-state-metrics --tail=2")
    assert 'deployments.apps is forbidden: User \\"system:serviceaccount:kube-system:kube-state-metrics\\" cannot list resource \\"deployments\\" in API group \\"apps\\" at the cluster scope' in logs or "cannot list resource" in logs
    assert 'Failed to watch *v1' in logs
    # the kube_* series of denied kinds are no longer exported
    from sre_env.sim.control.kube_state_metrics import denied_kinds

    assert denied_kinds(backend.world) == frozenset({"Node", "Pod", "Deployment", "StatefulSet", "PersistentVolumeClaim", "PersistentVolume"})
    out = sh(backend, "kubectl get clusterrolebinding kube-state-metrics -o wide")
    assert out.splitlines()[0].split() == ["NAME", "ROLE", "AGE", "USERS", "GROUPS", "SERVICEACCOUNTS"]
    assert "monitoring/kube-state-metrics" in out


# --------------------------------------------------------------------------- namespaces and aggregated APIs
def test_namespace_deletion_waits_for_discovery(backend: SimBackend) -> None:
    backend.api.create({"kind": "Namespace", "apiVersion": "v1", "metadata": {"name": "preview"}})
    backend.api.create({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "c", "namespace": "preview"}, "data": {"a": "b"}})
    backend.api.delete("Service", "metrics-server", "kube-system")
    backend.advance(10)
    assert "False (ServiceNotFound)" in sh(backend, "kubectl get apiservice v1beta1.metrics.k8s.io")
    assert sh(backend, "kubectl top pods -n hotel-reservation") == "error: Metrics API not available\n"
    sh(backend, "kubectl delete namespace preview")
    backend.advance(30)
    ns = backend.api.get("Namespace", "preview")
    assert ns["status"]["phase"] == "Terminating"
    cond = ns["status"]["conditions"][0]
    assert cond["type"] == "NamespaceDeletionDiscoveryFailure" and "metrics.k8s.io/v1beta1: stale GroupVersion discovery" in cond["message"]
    assert not backend.api.list("ConfigMap", "preview")
    assert "object is being deleted: namespaces \"preview\" already exists" in sh(backend, "kubectl create namespace preview")
    assert "unable to create new content in namespace preview because it is being terminated" in sh(backend, "kubectl create configmap x -n preview --from-literal=a=b")
    # finalizers cannot be patched away through an update
    sh(backend, "kubectl patch namespace preview --type=merge -p '{\"spec\":{\"finalizers\":[]}}'")
    assert backend.api.get("Namespace", "preview")["spec"]["finalizers"] == ["kubernetes"]
    from sre_env.sim.control.namespaces import metrics_server_objects

    backend.api.create(metrics_server_objects()[0])
    backend.advance(40)
    with pytest.raises(ApiError):
        backend.api.get("Namespace", "preview")
    assert "Terminating" not in sh(backend, "kubectl get ns")
