"""Manifests for running a scenario's app on a real cluster, generated from the app spec.

``python -m sre_env.k8s.manifests <dir>`` writes, for hotel-reservation:

* ``hotel-reservation.yaml`` — the app as the simulator models it (the same
  Deployment, Service, container and env names, so scenarios find their
  targets), on the public images, without the MongoDB access control the
  simulator adds (the public images' services do not authenticate);
* ``loadgen.yaml`` — the load generator (``sre_env/k8s/loadgen.py`` in a
  ConfigMap, on ``python:3.12-alpine``) that produces the client series;
* ``monitoring.yaml`` — a Prometheus in ``sre-env-system`` scraping it, with the
  load generator's alert rules.

The committed copies in ``sre_env/k8s/manifests/`` are checked against this
generator by tests/k8s/test_manifests.py.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import yaml

from .nodes import MANAGED_BY, NODE_NAMESPACE

if TYPE_CHECKING:
    from sre_env.apps.base import AppSpec

__all__ = ["MANIFEST_DIR", "app_objects", "loadgen_objects", "monitoring_objects", "render", "write_all"]

MANIFEST_DIR = Path(__file__).parent / "manifests"
LOADGEN_IMAGE = "python:3.12-alpine"
PROMETHEUS_IMAGE = "prom/prometheus:v2.53.2"
#: query strings of the wrk2 ``mixed-workload_type_1.lua`` requests (hotel-reservation)
_QUERIES = {
    "/hotels": "?inDate=2015-04-09&outDate=2015-04-10&lat=38.0235&lon=-122.095",
    "/recommendations": "?require=rate&lat=38.0235&lon=-122.095",
    "/user": "?username=Cornell_1&password=1111111111",
    "/reservation": "?inDate=2015-04-09&outDate=2015-04-10&lat=38.0235&lon=-122.095&hotelId=1&customerName=Cornell_1&username=Cornell_1&password=1111111111&number=1",
}
_AUTH_ENV = ("MONGO_USERNAME", "MONGO_PASSWORD", "MONGO_INITDB_ROOT_USERNAME", "MONGO_INITDB_ROOT_PASSWORD", "MONGO_APP_USERNAME", "MONGO_APP_PASSWORD")


def app_objects(app: "AppSpec") -> list[dict[str, Any]]:
    """The app's objects for a real cluster (see the module docstring for what differs from the simulator)."""
    from sre_env.apps.manifests import app_manifests

    auth_objects = {name for name, _ in app.secrets} | {name for name, _ in app.config_maps if name.endswith("-mongo-config")}
    out = []
    for obj in app_manifests(app):
        obj = copy.deepcopy(obj)
        if obj["kind"] in ("Secret", "ConfigMap") and obj["metadata"]["name"] in auth_objects:
            continue
        if obj["kind"] == "Deployment":
            for ctr in obj["spec"]["template"]["spec"]["containers"]:
                if ctr.get("args") == ["--auth"]:
                    ctr.pop("args")
                if ctr.get("env"):
                    ctr["env"] = [e for e in ctr["env"] if e["name"] not in _AUTH_ENV]
                if ctr.get("envFrom"):
                    ctr["envFrom"] = [e for e in ctr["envFrom"] if (e.get("configMapRef") or {}).get("name") not in auth_objects]
                    if not ctr["envFrom"]:
                        ctr.pop("envFrom")
        out.append(obj)
    return out


def loadgen_objects(app: "AppSpec", *, rps: float = 20.0) -> list[dict[str, Any]]:
    ns = app.namespace
    service = app.entry_service or app.entrypoint
    requests = [[r.method, r.path + _QUERIES.get(r.path, ""), r.weight] for r in app.requests]
    labels = {**MANAGED_BY, "app": "loadgen"}
    script = (Path(__file__).parent / "loadgen.py").read_text()
    env = {"TARGET": f"http://{service}.{ns}.svc.cluster.local:{app.entry_port}", "NAMESPACE": ns, "RPS": str(rps), "TIMEOUT": str(app.client_timeout_s), "REQUESTS": json.dumps(requests)}
    return [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "sre-env-loadgen", "namespace": NODE_NAMESPACE, "labels": labels}, "data": {"loadgen.py": script}},
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": f"loadgen-{ns}", "namespace": NODE_NAMESPACE, "labels": labels},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "loadgen", "target-namespace": ns}},
                "template": {
                    "metadata": {"labels": {**labels, "target-namespace": ns}},
                    "spec": {
                        "containers": [
                            {
                                "name": "loadgen",
                                "image": LOADGEN_IMAGE,
                                "command": ["python", "/opt/loadgen/loadgen.py"],
                                "env": [{"name": k, "value": v} for k, v in env.items()],
                                "ports": [{"containerPort": 9100, "name": "metrics"}],
                                "volumeMounts": [{"name": "script", "mountPath": "/opt/loadgen"}],
                            }
                        ],
                        "volumes": [{"name": "script", "configMap": {"name": "sre-env-loadgen"}}],
                    },
                },
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": f"loadgen-{ns}", "namespace": NODE_NAMESPACE, "labels": labels},
            "spec": {"selector": {"app": "loadgen", "target-namespace": ns}, "ports": [{"name": "metrics", "port": 9100, "targetPort": 9100}]},
        },
    ]


def monitoring_objects(app: "AppSpec") -> list[dict[str, Any]]:
    """Prometheus scraping the load generator (job ``loadgen``), with the load generator's alert rules."""
    from sre_env.telemetry.alerting import RULES

    ns = app.namespace
    labels = {**MANAGED_BY, "app": "prometheus"}
    rules = [
        {"alert": r.name, "expr": r.expr, "for": f"{int(r.for_s)}s", "labels": {"severity": r.severity}, "annotations": {"description": r.description}}
        for r in RULES
        if "loadgen_" in r.expr
    ]
    config = {
        "global": {"scrape_interval": "15s", "evaluation_interval": "15s"},
        "rule_files": ["/etc/prometheus/rules.yml"],
        "scrape_configs": [{"job_name": "loadgen", "honor_labels": True, "static_configs": [{"targets": [f"loadgen-{ns}.{NODE_NAMESPACE}.svc.cluster.local:9100"]}]}],
    }
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NODE_NAMESPACE, "labels": dict(MANAGED_BY)}},
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "sre-env-prometheus", "namespace": NODE_NAMESPACE, "labels": labels},
            "data": {"prometheus.yml": yaml.safe_dump(config, sort_keys=False), "rules.yml": yaml.safe_dump({"groups": [{"name": "sre-env", "rules": rules}]}, sort_keys=False)},
        },
        {
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"name": "prometheus", "namespace": NODE_NAMESPACE, "labels": labels},
            "spec": {
                "replicas": 1,
                "selector": {"matchLabels": {"app": "prometheus"}},
                "template": {
                    "metadata": {"labels": labels},
                    "spec": {
                        "containers": [
                            {
                                "name": "prometheus",
                                "image": PROMETHEUS_IMAGE,
                                "args": ["--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.retention.time=1d"],
                                "ports": [{"containerPort": 9090, "name": "web"}],
                                "volumeMounts": [{"name": "config", "mountPath": "/etc/prometheus"}],
                            }
                        ],
                        "volumes": [{"name": "config", "configMap": {"name": "sre-env-prometheus"}}],
                    },
                },
            },
        },
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": "prometheus", "namespace": NODE_NAMESPACE, "labels": labels},
            "spec": {"selector": {"app": "prometheus"}, "ports": [{"name": "web", "port": 9090, "targetPort": 9090}]},
        },
    ]


def render(objects: list[dict[str, Any]]) -> str:
    header = "# Generated by `python -m sre_env.k8s.manifests` from the app spec; do not edit.\n"
    return header + yaml.safe_dump_all(objects, sort_keys=False, width=1000)


def write_all(dest: str | Path = MANIFEST_DIR) -> list[Path]:
    from sre_env.apps.hotel_reservation import HOTEL_RESERVATION as app

    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    files = {"hotel-reservation.yaml": app_objects(app), "monitoring.yaml": monitoring_objects(app), "loadgen.yaml": loadgen_objects(app)}
    written = []
    for name, objs in files.items():
        path = dest / name
        path.write_text(render(objs))
        written.append(path)
    return written


if __name__ == "__main__":
    for p in write_all(sys.argv[1] if len(sys.argv) > 1 else MANIFEST_DIR):
        print(p)
