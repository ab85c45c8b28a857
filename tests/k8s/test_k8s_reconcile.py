"""Reset on a live cluster: reconcile the app namespace to the recorded baseline, touch nothing else."""

from __future__ import annotations

from sre_env.k8s.oracles import _CleanupView, record_live_baseline
from sre_env.k8s.reconcile import reconcile
from sre_env.rewards.cleanup import cluster_changes

NS = "hotel-reservation"


def test_reconcile_undoes_drift_and_leftovers_in_the_namespace_only(paused) -> None:
    backend = paused.backend()
    api = backend.api
    try:
        baseline = record_live_baseline(backend, NS)
        assert baseline.client_success > 0.99 and ("Deployment", "geo", 1) in baseline.workloads
        # what a fault and an agent leave: drift, a deleted object, new objects, a cordon
        api.scale("Deployment", "geo", NS, 0)
        api.patch("Service", "rate", NS, [{"op": "replace", "path": "/spec/ports/0/targetPort", "value": 9999}], "json")
        api.patch("Deployment", "profile", NS, {"spec": {"template": {"spec": {"containers": [{"name": "hotel-reserv-profile", "env": [{"name": "CONSUL_ADDRESS", "value": "localhost:8500"}]}]}}}}, "strategic")
        api.delete("Service", "user", NS)
        api.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "scratch", "namespace": NS}, "data": {"x": "1"}})
        api.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "scratch", "namespace": "default"}, "data": {"x": "1"}})
        api.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "harness", "namespace": NS, "labels": {"app.kubernetes.io/managed-by": "sre-env"}}})
        api.patch("Node", "worker-2", None, {"spec": {"unschedulable": True}}, "merge")
        assert cluster_changes(baseline, _CleanupView(backend))
        done = reconcile(api, baseline, NS)
        assert "recreated service/user" in done and "restored deployment/geo" in done and "restored service/rate" in done
        assert "deleted configmap/scratch (created after the baseline)" in done and "uncordoned node/worker-2" in done
        left = cluster_changes(baseline, _CleanupView(backend))
        # outside the namespace nothing is deleted, even what appeared after the baseline
        assert [(k, ns, n, c) for k, ns, n, c, _ in left] == [("ConfigMap", "default", "scratch", "created")]
        assert api.get("ConfigMap", "harness", NS)  # the harness's own objects are not the app's
        assert api.get("Deployment", "geo", NS)["spec"]["replicas"] == 1
        assert api.get("Service", "rate", NS)["spec"]["ports"][0]["targetPort"] == 8084
        # cluster-scoped objects are never reconciled away (the webhook configurations, cluster roles)
        assert api.list("ValidatingWebhookConfiguration") and api.list("ClusterRole")
        assert reconcile(api, baseline, NS) == []  # idempotent
    finally:
        backend.close()
