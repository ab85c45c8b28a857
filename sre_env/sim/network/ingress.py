"""The app's edge: ingress-nginx and the Ingress objects it serves.

Where an app is exposed through an Ingress (``AppSpec.edge_ingress``), the load
generator's requests enter at the ingress-nginx controller (hostPort 80 on the
control-plane node, as kind's ingress guide sets it up). For each request path
the controller picks the rule nginx would (Exact before Prefix, longest prefix
first, across every Ingress of its class), takes the backend Service's
endpoints and proxies straight to a pod IP — no kube-proxy on this hop, but
NetworkPolicies and host firewalls apply. What clients get when that goes
wrong are nginx's own answers: 404 from the default backend, 503 when the
Service or its endpoints are missing, 502 when the upstream refuses or does
not speak HTTP/1.1, 504 when the connection times out.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sre_env.kube.endpoints import service_port_backends
from sre_env.sim.network import netmodel
from sre_env.sim.network.routing import Route

if TYPE_CHECKING:
    from sre_env.apps.base import AppSpec
    from sre_env.sim.kernel.world import World

__all__ = ["INGRESS_NAMESPACE", "CONTROLLER_IMAGE", "ingress_nginx_objects", "app_ingress", "entry_routes", "match_backend"]

Obj = dict[str, Any]
INGRESS_NAMESPACE = "ingress-nginx"
CONTROLLER_IMAGE = "registry.k8s.io/ingress-nginx/controller:v1.11.2"
INGRESS_CLASS = "nginx"
_LABELS = {
    "app.kubernetes.io/component": "controller",
    "app.kubernetes.io/instance": "ingress-nginx",
    "app.kubernetes.io/name": "ingress-nginx",
}


def ingress_nginx_objects() -> list[Obj]:
    """Namespace, IngressClass, controller Deployment and Service of kind's ingress-nginx deploy manifest."""
    labels = {**_LABELS, "app.kubernetes.io/part-of": "ingress-nginx", "app.kubernetes.io/version": "1.11.2"}
    ns = {"kind": "Namespace", "apiVersion": "v1", "metadata": {"name": INGRESS_NAMESPACE, "labels": {"app.kubernetes.io/instance": "ingress-nginx", "app.kubernetes.io/name": "ingress-nginx", "kubernetes.io/metadata.name": INGRESS_NAMESPACE}}, "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}}
    klass = {"kind": "IngressClass", "apiVersion": "networking.k8s.io/v1", "metadata": {"name": INGRESS_CLASS, "labels": dict(labels)}, "spec": {"controller": "k8s.io/ingress-nginx"}}
    cm = {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "ingress-nginx-controller", "namespace": INGRESS_NAMESPACE, "labels": dict(labels)}, "data": {"allow-snippet-annotations": "false"}}
    dep = {
        "kind": "Deployment",
        "apiVersion": "apps/v1",
        "metadata": {"name": "ingress-nginx-controller", "namespace": INGRESS_NAMESPACE, "labels": dict(labels)},
        "spec": {
            "replicas": 1,
            "revisionHistoryLimit": 10,
            "minReadySeconds": 0,
            "selector": {"matchLabels": dict(_LABELS)},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}},
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {
                    "containers": [
                        {
                            "name": "controller",
                            "image": CONTROLLER_IMAGE,
                            "args": [
                                "/nginx-ingress-controller",
                                "--election-id=ingress-nginx-leader",
                                "--controller-class=k8s.io/ingress-nginx",
                                f"--ingress-class={INGRESS_CLASS}",
                                "--configmap=$(POD_NAMESPACE)/ingress-nginx-controller",
                                "--watch-ingress-without-class=true",
                                "--publish-status-address=localhost",
                            ],
                            "env": [
                                {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
                                {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"fieldPath": "metadata.namespace"}}},
                                {"name": "LD_PRELOAD", "value": "/usr/local/lib/libmimalloc.so"},
                            ],
                            "ports": [
                                {"name": "http", "containerPort": 80, "hostPort": 80, "protocol": "TCP"},
                                {"name": "https", "containerPort": 443, "hostPort": 443, "protocol": "TCP"},
                            ],
                            "resources": {"requests": {"cpu": "100m", "memory": "90Mi"}},
                        }
                    ],
                    "dnsPolicy": "ClusterFirst",
                    "nodeSelector": {"ingress-ready": "true", "kubernetes.io/os": "linux"},
                    "serviceAccountName": "ingress-nginx",
                    "terminationGracePeriodSeconds": 0,
                    "tolerations": [
                        {"key": "node-role.kubernetes.io/master", "operator": "Equal", "effect": "NoSchedule"},
                        {"key": "node-role.kubernetes.io/control-plane", "operator": "Equal", "effect": "NoSchedule"},
                    ],
                },
            },
        },
    }
    svc = {
        "kind": "Service",
        "apiVersion": "v1",
        "metadata": {"name": "ingress-nginx-controller", "namespace": INGRESS_NAMESPACE, "labels": dict(labels)},
        "spec": {
            "type": "NodePort",
            "selector": dict(_LABELS),
            "ports": [
                {"name": "http", "port": 80, "targetPort": "http", "protocol": "TCP", "appProtocol": "http", "nodePort": 31080},
                {"name": "https", "port": 443, "targetPort": "https", "protocol": "TCP", "appProtocol": "https", "nodePort": 31443},
            ],
            "ipFamilies": ["IPv4"],
            "ipFamilyPolicy": "SingleStack",
            "externalTrafficPolicy": "Cluster",
            "internalTrafficPolicy": "Cluster",
        },
    }
    return [ns, klass, cm, dep, svc]


def app_ingress(app: "AppSpec") -> Obj:
    """The Ingress that publishes an app's entrypoint at ``/``."""
    return {
        "kind": "Ingress",
        "apiVersion": "networking.k8s.io/v1",
        "metadata": {"name": f"{app.entrypoint}-ingress", "namespace": app.namespace, "labels": {app.label_key: app.entrypoint}},
        "spec": {
            "ingressClassName": INGRESS_CLASS,
            "rules": [{"http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": {"service": {"name": app.entrypoint, "port": {"number": app.entry_port}}}}]}}],
        },
        "status": {"loadBalancer": {"ingress": [{"hostname": "localhost"}]}},
    }


def _class_of(ing: Obj) -> str | None:
    cls = (ing.get("spec") or {}).get("ingressClassName")
    if cls:
        return cls
    return ((ing.get("metadata") or {}).get("annotations") or {}).get("kubernetes.io/ingress.class")


def match_backend(ingresses: list[Obj], path: str, host: str = "") -> tuple[Obj, Obj] | None:
    """(Ingress, backend) nginx routes ``host`` + ``path`` to: Exact first, then the longest Prefix."""
    best: tuple[int, int, str, Obj, Obj] | None = None
    for ing in ingresses:
        if _class_of(ing) not in (None, INGRESS_CLASS):
            continue
        for rule in (ing.get("spec") or {}).get("rules") or ():
            if rule.get("host") and rule.get("host") != host:
                continue
            for p in ((rule.get("http") or {}).get("paths") or ()):
                want = p.get("path") or "/"
                kind = p.get("pathType") or "Prefix"
                if kind == "Exact":
                    hit, rank = path == want, 2
                else:
                    w = want.rstrip("/") or "/"
                    hit = w == "/" or path == w or path.startswith(w + "/")
                    rank = 1
                if hit:
                    key = (rank, len(want), ing["metadata"]["name"], ing, p.get("backend") or {})
                    if best is None or key[:2] > best[:2]:
                        best = key
    if best is None:
        for ing in ingresses:
            default = (ing.get("spec") or {}).get("defaultBackend")
            if default:
                return ing, default
        return None
    return best[3], best[4]


def _controller_pods(world: "World") -> list[str]:
    now = world.clock.now
    out = []
    for pod in world.store.iter("Pod"):
        meta = pod["metadata"]
        if meta["namespace"] != INGRESS_NAMESPACE or meta.get("deletionTimestamp") or (meta.get("labels") or {}).get("app.kubernetes.io/component") != "controller":
            continue
        rt = world.runtimes.get(meta["uid"])
        if rt is not None and any(c.serving(now) for c in rt.containers.values()):
            out.append(meta["uid"])
    return sorted(out)


def entry_routes(world: "World", app: "AppSpec") -> dict[str, Route] | None:
    """Per request type, how the load generator's request fares at the edge; None: the app has no edge."""
    if not getattr(app, "edge_ingress", False):
        return None
    ns = app.namespace
    ingresses = sorted(world.store.list("Ingress", ns), key=lambda i: i["metadata"]["name"])
    controllers = _controller_pods(world)
    cp_ip = next((h.internal_ip for h in world.hosts.values() if h.index == 0), "172.18.0.2")
    out: dict[str, Route] = {}
    for rt in app.requests:
        target = f"{cp_ip}:80{rt.path}"
        if not controllers:
            out[rt.name] = Route(0.0, f"dial tcp {cp_ip}:80: connect: connection refused", target=target)
            continue
        hit = match_backend(ingresses, rt.path)
        if hit is None:
            out[rt.name] = Route(0.0, "HTTP 404 Not Found (default backend)", target=target)
            continue
        _, backend = hit
        svc_ref = backend.get("service") or {}
        svc = world.store.find("Service", svc_ref.get("name", ""), ns)
        port_ref = svc_ref.get("port") or {}
        sport = None
        if svc is not None:
            for p in svc["spec"].get("ports") or ():
                if ("number" in port_ref and int(p.get("port", -1)) == int(port_ref["number"])) or ("name" in port_ref and p.get("name") == port_ref["name"]):
                    sport = p
        key = f"{ns}/{svc_ref.get('name', '')}"
        if svc is None:
            out[rt.name] = Route(0.0, f"HTTP 503 Service Temporarily Unavailable (no service {key})", target=target)
            continue
        if sport is None:
            out[rt.name] = Route(0.0, f"HTTP 503 Service Temporarily Unavailable (no active endpoint for {key})", target=target)
            continue
        backends = service_port_backends(world.store.find("Endpoints", svc["metadata"]["name"], ns), sport, lone_port_any_name=True)
        if not backends:
            out[rt.name] = Route(0.0, f"HTTP 503 Service Temporarily Unavailable (no active endpoint for {key})", target=target)
            continue
        src = netmodel.client_for(world, controllers[0]) or netmodel.external_client()
        shown = f"{backends[0][1]}:{backends[0][2]}"
        route = netmodel.connect_backends(world, src, backends, "TCP", target, shown)
        if route.ok <= 0.0:
            err = route.error or ""
            code = "504 Gateway Timeout (upstream connect timeout)" if "timeout" in err else "502 Bad Gateway (connect() failed (111: Connection refused) while connecting to upstream)"
            out[rt.name] = Route(0.0, f"HTTP {code}", target=target)
            continue
        # nginx speaks HTTP/1.1 upstream: only the app's web entrypoint answers it
        speaks_http = all(_component_name(world, uid) == app.entrypoint for uid, _ in route.servers)
        if not speaks_http:
            out[rt.name] = Route(0.0, "HTTP 502 Bad Gateway (upstream prematurely closed connection while reading response header from upstream)", target=target)
            continue
        out[rt.name] = Route(route.ok, None if route.ok >= 0.999 else "HTTP 502 Bad Gateway", route.servers, target, route.ip)
    return out


def _component_name(world: "World", uid: str) -> str:
    pod = world.pod_by_uid(uid)
    comp = world.component_for(pod) if pod is not None else None
    return comp.name if comp is not None else ""
