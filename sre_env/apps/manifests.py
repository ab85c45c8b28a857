"""An app's Kubernetes manifests, generated from its :class:`AppSpec`.

Manifests take the shape of the public projects' Kubernetes manifests (labels
``io.kompose.service`` or Helm's, container names, ports), so ``kubectl get deploy
-o yaml`` looks like the real thing; the simulator creates them through its API
and the real-cluster backend applies them.
"""

from __future__ import annotations

import base64
from typing import Any

from sre_env.apps.base import AppSpec, Component

__all__ = ["app_manifests", "component_labels", "namespace_object"]


def namespace_object(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "kind": "Namespace",
        "apiVersion": "v1",
        "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name, **(labels or {})}},
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }


def _container(c: Component) -> dict[str, Any]:
    ctr: dict[str, Any] = {"name": c.container, "image": c.image}
    if c.command:
        ctr["command"] = list(c.command)
    if c.args:
        ctr["args"] = list(c.args)
    if c.env or c.secret_env:
        ctr["env"] = [{"name": k, "value": v} for k, v in c.env] + [
            {"name": k, "valueFrom": {"secretKeyRef": {"name": sec, "key": key}}} for k, sec, key in c.secret_env
        ]
    if c.env_from:
        ctr["envFrom"] = [{"configMapRef" if src == "configMap" else "secretRef": {"name": name}} for src, name in c.env_from]
    ports = [{"containerPort": p, "protocol": proto} | ({"name": n} if n else {}) for n, p, proto in c.container_ports]
    if ports:
        ctr["ports"] = ports
    res: dict[str, Any] = {}
    limits = {k: v for k, v in (("cpu", c.cpu_limit), ("memory", c.memory_limit)) if v}
    requests = {k: v for k, v in (("cpu", c.cpu_request), ("memory", c.memory_request)) if v}
    if limits:
        res["limits"] = limits
    if requests:
        res["requests"] = requests
    ctr["resources"] = res
    ctr["imagePullPolicy"] = "IfNotPresent"
    ctr["terminationMessagePath"] = "/dev/termination-log"
    ctr["terminationMessagePolicy"] = "File"
    if c.volume_claim:
        ctr["volumeMounts"] = [{"name": c.volume_claim.removesuffix("-pvc") + "-storage" if c.volume_claim.endswith("-pvc") else c.volume_claim, "mountPath": c.data_path}]
    if c.config_files:
        ctr.setdefault("volumeMounts", []).extend({"name": f"{c.name}-config", "mountPath": path, "subPath": key} for key, path, _ in c.config_files)
    return ctr


def component_labels(c: Component, label_key: str = "io.kompose.service") -> dict[str, str]:
    labels = {label_key: c.name}
    labels.update(dict(c.labels))
    return labels


def app_manifests(app: AppSpec) -> list[dict[str, Any]]:
    """Namespace, PVCs, workloads and services of an app, in creation order."""
    objs: list[dict[str, Any]] = [namespace_object(app.namespace)]
    for name, data in app.config_maps:
        objs.append({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": name, "namespace": app.namespace}, "data": dict(data)})
    for name, data in app.secrets:
        encoded = {k: base64.b64encode(v.encode()).decode() for k, v in data}
        objs.append({"kind": "Secret", "apiVersion": "v1", "metadata": {"name": name, "namespace": app.namespace}, "type": "Opaque", "data": encoded})
    helm = app.manifest_style == "helm"
    for c in app.components:
        if c.config_files:
            objs.append({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": c.name, "namespace": app.namespace}, "data": {key: content for key, _, content in c.config_files}})
        if c.volume_claim:
            objs.append(
                {
                    "kind": "PersistentVolumeClaim",
                    "apiVersion": "v1",
                    "metadata": {"name": c.volume_claim, "namespace": app.namespace, "labels": component_labels(c, app.label_key)},
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": c.storage}},
                        "storageClassName": "local-path",
                        "volumeMode": "Filesystem",
                    },
                }
            )
    for c in app.components:
        labels = component_labels(c, app.label_key)
        template: dict[str, Any] = {
            "metadata": {"labels": {**labels, **dict(c.template_labels)}, "annotations": {} if helm else {"sidecar.istio.io/statsInject": "false"}},
            "spec": {
                "containers": [_container(c)],
                "restartPolicy": "Always",
                "terminationGracePeriodSeconds": 30,
                "dnsPolicy": "ClusterFirst",
                "schedulerName": "default-scheduler",
            },
        }
        if c.volume_claim:
            vol_name = _container(c)["volumeMounts"][0]["name"]
            template["spec"]["volumes"] = [{"name": vol_name, "persistentVolumeClaim": {"claimName": c.volume_claim}}]
        if c.config_files:
            template["spec"].setdefault("volumes", []).append({"name": f"{c.name}-config", "configMap": {"name": c.name, "defaultMode": 420}})
        if helm:
            template["spec"]["hostname"] = c.name
        spec: dict[str, Any] = {
            "replicas": c.replicas,
            "selector": {"matchLabels": dict(labels)},
            "template": template,
            "revisionHistoryLimit": 10,
        }
        if c.kind == "Deployment":
            spec["strategy"] = (
                {"type": "Recreate"}
                if c.volume_claim
                else {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}
            )
            spec["progressDeadlineSeconds"] = 600
        else:
            spec["serviceName"] = c.name
            spec["podManagementPolicy"] = "OrderedReady"
            spec["updateStrategy"] = {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
        objs.append(
            {
                "kind": c.kind,
                "apiVersion": "apps/v1",
                "metadata": {
                    "name": c.name,
                    "namespace": app.namespace,
                    "labels": dict(labels),
                    "annotations": {} if helm else {"kompose.cmd": "kompose convert", "kompose.version": "1.22.0 (955b78124)"},
                },
                "spec": spec,
            }
        )
        if c.service_ports:
            objs.append(
                {
                    "kind": "Service",
                    "apiVersion": "v1",
                    "metadata": {"name": c.name, "namespace": app.namespace, **({} if helm else {"labels": dict(labels)})},
                    "spec": {
                        "type": "ClusterIP",
                        "selector": dict(labels),
                        "ports": [
                            {"name": n, "port": p, "targetPort": tp, "protocol": proto}
                            for n, p, tp, proto in c.service_ports
                        ],
                        "sessionAffinity": "None",
                        "ipFamilies": ["IPv4"],
                        "ipFamilyPolicy": "SingleStack",
                        "internalTrafficPolicy": "Cluster",
                    },
                }
            )
    if app.customize is not None:
        objs = app.customize(app, objs)
    return objs
