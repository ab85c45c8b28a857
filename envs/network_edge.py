"""Edge and node-proxy incidents: a misrouted Ingress, a kube-proxy that cannot start on one node.

*IngressMisroute*: the app's Ingress was edited so requests reach the wrong
backend — a port the Service does not have (503), a Service that does not
exist (503), or a new path rule sending one page to a gRPC backend that does
not speak HTTP/1.1 (502). Restarting the frontend or the controller changes
nothing; the route must be corrected.

*KubeProxyBroken*: a kube-proxy canary (DaemonSet switched to OnDelete, a new
image, one node's pod replaced) pulled an image that does not exist. That
node's Service rules froze when its old kube-proxy stopped; since then a
routine rollout moved a backend to a new pod IP, and pods on that node still
dial the old one. The image must be restored and the node's pod recreated.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

import numpy as np
import yaml

from sre_env.apps.hotel_reservation import HOTEL_RESERVATION
from sre_env.faults.network import IngressEdit, KubeProxyBadImage
from sre_env.kube.timefmt import iso
from sre_env.rewards.base import AllowedChange, Check, Mechanism
from sre_env.sim.network import ingress as ingress_model
from sre_env.sim.network import kubeproxy

from .base import RootCause, SimScenario
from .briefs import impact, user_report
from .net_common import (
    caller_routes_check,
    callers_of,
    component_nodes,
    request_path_callees,
)

if TYPE_CHECKING:
    from sre_env.sim.model import ModelBackend

__all__ = ["IngressMisroute", "KubeProxyBroken"]


class IngressMisroute(SimScenario):
    family = "IngressMisroute"
    app = HOTEL_RESERVATION
    layer = "network"
    difficulty = "easy"
    summary = "The hotel-reservation site answers with gateway errors at its front door."
    description = (
        "Users of the hotel-reservation site get 502/503 error pages from the web server in front of the "
        "application. The application pods are Running and Ready and their logs show little or no traffic. "
        "Someone edited the site's routing configuration during this morning's change window."
    )
    mechanism = Mechanism(
        "ingress_misroute",
        "network",
        "an Ingress routes requests to the wrong backend",
        (
            r"\bingress\b[^.;\n]{0,80}?\b(?:route\w*|backend|path|rule|misrout\w*|points?|sends?|port|service)\b",
            r"\bmisrout\w*\b",
            r"\bwrong (?:backend|upstream|route)\b",
        ),
        detail_keys=("ingress", "path", "backend"),
        compatible=("network_fault",),
    )

    def extra_components(self) -> tuple[str, ...]:
        return (self.variant.get("ingress", ""), "ingress-nginx-controller")

    def extra_namespaces(self) -> tuple[str, ...]:
        return ("ingress-nginx",)

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        ing = ingress_model.app_ingress(self.app)
        kind = str(rng.choice(("port", "service", "path")))
        spec = copy.deepcopy(ing["spec"])
        paths = spec["rules"][0]["http"]["paths"]
        if kind == "port":
            wrong = int(rng.choice((8080, 80, 5001)))
            paths[0]["backend"]["service"]["port"] = {"number": wrong}
            path, backend_text = "/", f"frontend:{wrong}"
        elif kind == "service":
            wrong_svc = str(rng.choice(("frontend-canary", "frontend-v2", "hotel-frontend")))
            paths[0]["backend"]["service"]["name"] = wrong_svc
            path, backend_text = "/", f"{wrong_svc}:{self.app.entry_port}"
        else:
            path = "/recommendations"
            paths.insert(0, {"path": path, "pathType": "Prefix", "backend": {"service": {"name": "recommendation", "port": {"number": 8085}}}})
            backend_text = "recommendation:8085"
        return {"kind": kind, "ingress": ing["metadata"]["name"], "path": path, "backend": backend_text, "spec": spec, "original": ing["spec"]}

    def inject(self, backend: "ModelBackend") -> None:
        v = self.variant
        IngressEdit(self.namespace, v["ingress"], v["spec"], v["original"]).inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        what = {
            "port": f"its / rule sends traffic to port {v['backend'].split(':')[1]} of service frontend, which only exposes port {self.app.entry_port}; ingress-nginx finds no endpoints and answers 503",
            "service": f"its / rule sends traffic to service {v['backend'].split(':')[0]}, which does not exist; ingress-nginx answers 503",
            "path": f"a new {v['path']} path rule sends those requests to recommendation:8085, a gRPC backend that does not speak HTTP/1.1; ingress-nginx answers 502",
        }[v["kind"]]
        return RootCause(
            component=f"ingress/{v['ingress']}",
            namespace=self.namespace,
            layer="network",
            mechanism="Ingress route points at the wrong backend",
            summary=f"Ingress {v['ingress']} misroutes requests: {what}, instead of frontend:{self.app.entry_port}. " + impact(self.app, "frontend" if v["kind"] != "path" else "recommendation"),
            details={"ingress": v["ingress"], "path": v["path"], "backend": v["backend"], "expected_backend": f"frontend:{self.app.entry_port}"},
            affected=(f"ingress/{v['ingress']}", "deployment/frontend"),
        )

    def brief(self) -> str:
        v = self.variant
        return user_report(self.app, "recommendation" if v["kind"] == "path" else "frontend", intermittent=False)

    def reference_solution(self) -> list[str]:
        v = self.variant
        ns = self.namespace
        manifest = yaml.safe_dump({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": v["ingress"], "namespace": ns}, "spec": v["original"]}, sort_keys=False)
        return [
            f"kubectl get ingress -n {ns}",
            f"kubectl describe ingress {v['ingress']} -n {ns}",
            f"kubectl apply -f - <<'EOF'\n{manifest}EOF",
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        ns = self.namespace
        return {
            "restart_frontend": [f"kubectl rollout restart deployment/frontend -n {ns}"],
            "restart_controller": ["kubectl rollout restart deployment/ingress-nginx-controller -n ingress-nginx"],
            "delete_ingress": [f"kubectl delete ingress {v['ingress']} -n {ns}"],
            "scale_frontend_up": [f"kubectl scale deployment/frontend -n {ns} --replicas=3"],
        }

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        routes = backend.model.entry_routes(self.app) or {}
        bad = [f"{name}: {r.error}" for name, r in sorted(routes.items()) if r.ok < 0.999]
        return [Check("edge_routes_to_frontend", bool(routes) and not bad, "; ".join(bad[:3]) if bad else "every request path reaches frontend through the ingress")]

    def allowed_changes(self) -> list[AllowedChange]:
        return [AllowedChange("Ingress", self.namespace, self.variant["ingress"], "modified")]


# --------------------------------------------------------------------------- kube-proxy
_BAD_TAGS = ("v1.32.20", "v1.32.2-rc.0", "v1.23.2")
_PROXY_TARGETS = ("search", "geo", "rate", "profile", "reservation", "recommendation", "user", "memcached-rate", "memcached-profile", "memcached-reserve")


def _proxy_targets(app: Any) -> tuple[str, ...]:
    """Stateless backends a routine deploy restarts (hotel-reservation: the curated list)."""
    if app is HOTEL_RESERVATION:
        return _PROXY_TARGETS
    callees = {callee for _, callee in request_path_callees(app)}
    return tuple(sorted(c.name for c in app.components if c.name in callees and c.kind == "Deployment" and not c.volume_claim and c.name != app.entrypoint))


class KubeProxyBroken(SimScenario):
    family = "KubeProxyBroken"
    app = HOTEL_RESERVATION
    layer = "network"
    difficulty = "hard"
    summary = "After a routine deploy, one hotel-reservation backend is unreachable from part of the cluster."
    description = (
        "A routine restart of one hotel-reservation backend went fine — its new pod is Running and Ready — "
        "but since then calls to it time out from some of its clients while others reach it. The platform "
        "team has been canarying a cluster component upgrade this week."
    )
    mechanism = Mechanism(
        "kube_proxy_down",
        "network",
        "kube-proxy is not running on a node, leaving stale Service rules",
        (
            r"\bkube-?proxy\b",
            r"\bstale (?:iptables|service|proxy) (?:rules|entries)\b",
            r"\bservice rules\b",
        ),
        detail_keys=("node", "image", "service"),
        compatible=("network_fault", "image_error"),
    )

    def extra_components(self) -> tuple[str, ...]:
        return ("kube-proxy",)

    def extra_namespaces(self) -> tuple[str, ...]:
        return ("kube-system",)

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        nodes = component_nodes(backend, self.namespace, self.app.label_key)
        options = []
        for svc in _proxy_targets(self.app):
            for caller in callers_of(self.app, svc):
                for node in nodes.get(caller, ()):
                    if backend.model.host(node).index > 0:
                        options.append((svc, node))
        options = sorted(set(options))
        svc, node = options[int(rng.integers(0, len(options)))]
        callers = tuple(c for c in callers_of(self.app, svc) if node in nodes.get(c, ()))
        tag = str(rng.choice(_BAD_TAGS))
        return {"service": svc, "node": node, "callers": callers, "image": f"registry.k8s.io/kube-proxy:{tag}", "good_image": kubeproxy.KUBE_PROXY_IMAGE}

    def inject(self, backend: "ModelBackend") -> None:
        v = self.variant
        KubeProxyBadImage(v["node"], v["image"], v["good_image"]).inject(backend)
        # the canary was yesterday's; today's routine deploy of a backend moves it to a new pod
        backend.advance(60.0)
        backend.api.patch("Deployment", v["service"], self.namespace, {"spec": {"template": {"metadata": {"annotations": {"kubectl.kubernetes.io/restartedAt": iso(backend.now)}}}}}, "strategic")

    def root_cause(self) -> RootCause:
        v = self.variant
        return RootCause(
            component="daemonset/kube-proxy",
            namespace="kube-system",
            layer="network",
            mechanism="kube-proxy on one node runs an image that cannot be pulled; its Service rules went stale",
            summary=(
                f"daemonset/kube-proxy (kube-system) was switched to OnDelete with image {v['image']}, which does not exist; the kube-proxy pod on "
                f"{v['node']} is stuck in ImagePullBackOff, so that node's iptables Service rules are stale. After the {v['service']} rollout moved it "
                f"to a new pod IP, {', '.join(v['callers'])} on {v['node']} still dial the old endpoint and time out. " + impact(self.app, v["service"])
            ),
            details={"node": v["node"], "image": v["image"], "expected_image": v["good_image"], "service": v["service"]},
            affected=tuple([f"service/{v['service']}"] + [f"deployment/{c}" for c in v["callers"]]),
        )

    def brief(self) -> str:
        return user_report(self.app, self.variant["service"], intermittent=True)

    def reference_solution(self) -> list[str]:
        v = self.variant
        return [
            "kubectl get pods -n kube-system -o wide",
            "kubectl get daemonset kube-proxy -n kube-system -o yaml",
            f"kubectl set image daemonset/kube-proxy -n kube-system kube-proxy={v['good_image']}",
            "kubectl patch daemonset kube-proxy -n kube-system -p '{\"spec\":{\"updateStrategy\":{\"type\":\"RollingUpdate\",\"rollingUpdate\":{\"maxSurge\":0,\"maxUnavailable\":1}}}}'",
            # back on RollingUpdate, the controller replaces the broken (never ready) pod first
            "sleep 30",
            "kubectl get pods -n kube-system -o wide",
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        ns = self.namespace
        return {
            "restart_backend": [f"kubectl rollout restart deployment/{v['service']} -n {ns}"],
            "restart_callers": [f"kubectl rollout restart deployment/{c} -n {ns}" for c in v["callers"]],
            "delete_proxy_pod": [f"kubectl delete pod -n kube-system -l k8s-app=kube-proxy --field-selector spec.nodeName={v['node']}"],
            "restart_proxy_daemonset": ["kubectl rollout restart daemonset/kube-proxy -n kube-system"],
        }

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        v = self.variant
        down = [n for n in sorted(backend.model.hosts()) if not backend.model.kube_proxy_live(n)]
        return [
            Check("kube_proxy_running", not down, ("no kube-proxy serving on " + ", ".join(down)) if down else "kube-proxy serves on every node"),
            caller_routes_check(backend, self.app, v["service"], list(v["callers"])),
        ]

    def allowed_changes(self) -> list[AllowedChange]:
        return [AllowedChange("DaemonSet", "kube-system", "kube-proxy", "modified")]
