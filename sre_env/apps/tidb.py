"""A TiDB cluster managed by TiDB Operator, as data.

What is taken from the real deployment (pingcap/tidb-operator's
``examples/basic/tidb-cluster.yaml`` and its Helm chart):

* the operator: Deployment ``tidb-controller-manager`` in namespace
  ``tidb-admin``, image ``pingcap/tidb-operator:v1.6.1``, labels
  ``app.kubernetes.io/name: tidb-operator``, ``app.kubernetes.io/component:
  controller-manager``;
* the custom resource: ``TidbCluster`` (``pingcap.com/v1alpha1``, short name
  ``tc``) named ``basic`` in namespace ``tidb-cluster``, ``spec.version:
  v8.5.2``, one replica each of PD, TiKV and TiDB, ``baseImage`` ``pingcap/pd``,
  ``pingcap/tikv``, ``pingcap/tidb``, 1Gi of storage for PD and TiKV;
* what the operator makes of it: StatefulSets ``basic-pd``, ``basic-tikv``,
  ``basic-tidb`` (containers ``pd``, ``tikv``, ``tidb``), Services
  ``basic-pd`` (2379), ``basic-pd-peer``, ``basic-tikv-peer`` (20160),
  ``basic-tidb`` (4000 mysql-client, 10080 status) and ``basic-tidb-peer``;
  volume claims ``pd-basic-pd-0`` and ``tikv-basic-tikv-0``; the
  ``app.kubernetes.io/{name,instance,component,managed-by}`` labels;
* TiKV on a dedicated node, as the operator's deployment guide recommends:
  worker-3 is labelled and tainted ``dedicated=tikv:NoSchedule`` and the
  TidbCluster gives TiKV the matching ``nodeSelector`` and ``tolerations``.

Our modelling choices: TiDB finds PD and TiKV through the env vars
``PD_ADDRESS`` and ``TIKV_ADDRESS`` the operator writes into its pod template
(the real one passes ``--path=basic-pd:2379`` and learns TiKV stores from PD);
SQL clients are the load generator, entering at ``basic-tidb:4000``. The
StatefulSets and Services are not part of the install: the modelled operator
(``sre_env.sim.control.operator_tidb``) creates them from the custom resource.
"""

from __future__ import annotations

from typing import Any

from sre_env.apps.base import AppSpec, Call, Component, Dependency, RequestType

__all__ = ["CLUSTER", "NAMESPACE", "OPERATOR_IMAGE", "OPERATOR_NAME", "OPERATOR_NAMESPACE", "TIDB", "VERSION", "operator_objects", "tidb_cluster_cr"]

NAMESPACE = "tidb-cluster"
CLUSTER = "basic"
VERSION = "v8.5.2"
OPERATOR_NAMESPACE = "tidb-admin"
OPERATOR_NAME = "tidb-controller-manager"
OPERATOR_IMAGE = "pingcap/tidb-operator:v1.6.1"
LABEL_KEY = "app.kubernetes.io/component"

_PD = Component(
    name="pd",
    image=f"pingcap/pd:{VERSION}",
    container="pd",
    role="database",
    kind="StatefulSet",
    container_ports=(("client", 2379, "TCP"), ("server", 2380, "TCP")),
    service_ports=(("client", 2379, 2379, "TCP"),),
    listen_port=2379,
    cpu_request="",
    cpu_limit="",
    memory_mib=180.0,
    capacity_rps=4000.0,
    latency_ms=0.5,
    startup_s=10.0,
    log_format="tidb",
)
_TIKV = Component(
    name="tikv",
    image=f"pingcap/tikv:{VERSION}",
    container="tikv",
    role="database",
    kind="StatefulSet",
    container_ports=(("server", 20160, "TCP"),),
    service_ports=(("peer", 20160, 20160, "TCP"),),
    listen_port=20160,
    dependencies=(Dependency("pd", 2379, address_env="PD_ADDRESS"),),
    cpu_request="",
    cpu_limit="",
    memory_mib=900.0,
    capacity_rps=3000.0,
    latency_ms=1.5,
    startup_s=15.0,
    log_format="tidb",
)
_TIDB = Component(
    name="tidb",
    image=f"pingcap/tidb:{VERSION}",
    container="tidb",
    role="frontend",
    kind="StatefulSet",
    container_ports=(("server", 4000, "TCP"), ("status", 10080, "TCP")),
    service_ports=(("mysql-client", 4000, 4000, "TCP"), ("status", 10080, 10080, "TCP")),
    listen_port=4000,
    dependencies=(Dependency("pd", 2379, address_env="PD_ADDRESS"), Dependency("tikv", 20160, address_env="TIKV_ADDRESS")),
    cpu_request="",
    cpu_limit="",
    memory_mib=400.0,
    capacity_rps=2500.0,
    latency_ms=1.0,
    startup_s=10.0,
    log_format="tidb",
)

REQUESTS = (
    RequestType(
        "point_select",
        "QUERY",
        "SELECT c FROM sbtest1 WHERE id=?",
        0.7,
        (Call("tidb", "pd", 1.0, "GetTS"), Call("tidb", "tikv", 1.0, "kv_get")),
        feature="reads",
    ),
    RequestType(
        "update_index",
        "QUERY",
        "UPDATE sbtest1 SET k=k+1 WHERE id=?",
        0.3,
        (Call("tidb", "pd", 2.0, "GetTS"), Call("tidb", "tikv", 1.0, "kv_prewrite"), Call("tidb", "tikv", 1.0, "kv_commit")),
        feature="writes",
    ),
)


def tidb_cluster_cr() -> dict[str, Any]:
    """The ``basic`` TidbCluster as the example applies it."""
    return {
        "apiVersion": "pingcap.com/v1alpha1",
        "kind": "TidbCluster",
        "metadata": {"name": CLUSTER, "namespace": NAMESPACE},
        "spec": {
            "version": VERSION,
            "timezone": "UTC",
            "pvReclaimPolicy": "Retain",
            "enableDynamicConfiguration": True,
            "configUpdateStrategy": "RollingUpdate",
            "imagePullPolicy": "IfNotPresent",
            "discovery": {},
            "helper": {"image": "alpine:3.16.0"},
            "pd": {"baseImage": "pingcap/pd", "maxFailoverCount": 0, "replicas": 1, "requests": {"storage": "1Gi"}, "config": {}},
            "tikv": {
                "baseImage": "pingcap/tikv",
                "maxFailoverCount": 0,
                "evictLeaderTimeout": "1m",
                "replicas": 1,
                "requests": {"storage": "1Gi"},
                "config": {},
                # TiKV on a dedicated node, as TiDB Operator's deployment guide recommends
                "nodeSelector": {"dedicated": "tikv"},
                "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "tikv", "effect": "NoSchedule"}],
            },
            "tidb": {"baseImage": "pingcap/tidb", "maxFailoverCount": 0, "replicas": 1, "service": {"type": "ClusterIP"}, "config": {}},
        },
    }


def operator_objects() -> list[dict[str, Any]]:
    """Namespace, ServiceAccount and the controller-manager Deployment of the tidb-operator chart."""
    labels = {"app.kubernetes.io/name": "tidb-operator", "app.kubernetes.io/instance": "tidb-operator", "app.kubernetes.io/component": "controller-manager"}
    return [
        {"kind": "Namespace", "apiVersion": "v1", "metadata": {"name": OPERATOR_NAMESPACE, "labels": {"kubernetes.io/metadata.name": OPERATOR_NAMESPACE}}},
        {"kind": "ServiceAccount", "apiVersion": "v1", "metadata": {"name": "tidb-controller-manager", "namespace": OPERATOR_NAMESPACE, "labels": dict(labels)}},
        {
            "kind": "Deployment",
            "apiVersion": "apps/v1",
            "metadata": {"name": OPERATOR_NAME, "namespace": OPERATOR_NAMESPACE, "labels": dict(labels)},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": dict(labels)},
                "template": {
                    "metadata": {"labels": dict(labels)},
                    "spec": {
                        "serviceAccountName": "tidb-controller-manager",
                        "containers": [
                            {
                                "name": "tidb-operator",
                                "image": OPERATOR_IMAGE,
                                "imagePullPolicy": "IfNotPresent",
                                "command": ["/usr/local/bin/tidb-controller-manager", "-tidb-backup-manager-image=pingcap/tidb-backup-manager:v1.6.1", "-tidb-discovery-image=pingcap/tidb-operator:v1.6.1", "-cluster-scoped=true", "-v=2"],
                                "resources": {"requests": {"cpu": "80m", "memory": "50Mi"}, "limits": {"cpu": "250m", "memory": "150Mi"}},
                                "env": [{"name": "NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}}, {"name": "TZ", "value": "UTC"}],
                            }
                        ],
                    },
                },
            },
        },
    ]


def _customize(app: AppSpec, objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The install is the operator and the custom resource; the operator makes the workloads."""
    kept = [o for o in objects if o["kind"] not in ("StatefulSet", "Service", "PersistentVolumeClaim")]
    return kept + operator_objects() + [tidb_cluster_cr()]


TIDB = AppSpec(
    name="tidb-cluster",
    namespace=NAMESPACE,
    components=(_PD, _TIKV, _TIDB),
    requests=REQUESTS,
    entrypoint="tidb",
    entry_port=4000,
    entry_service=f"{CLUSTER}-tidb",
    rps=300.0,
    client_timeout_s=10.0,
    description=(
        "A TiDB cluster (PD, TiKV, TiDB, one replica each) described by a TidbCluster custom resource "
        "and run by TiDB Operator; sysbench-style SQL clients read and update rows through the TiDB server."
    ),
    extra_images=(OPERATOR_IMAGE,),
    customize=_customize,
    model="tidb-operator",
    label_key=LABEL_KEY,
    manifest_style="helm",
    node_setup=(("worker-3", (("dedicated", "tikv"),), ((("key", "dedicated"), ("value", "tikv"), ("effect", "NoSchedule")),)),),
)
