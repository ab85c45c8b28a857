"""OPA Gatekeeper, installed in every simulated cluster as a platform team would run it.

Names, labels, ports, args and webhook configurations follow the upstream Helm
chart (``gatekeeper-system``, ``gatekeeper-controller-manager``,
``gatekeeper-webhook-service`` 443 -> ``webhook-server`` 8443, the
``validation.gatekeeper.sh`` and ``mutation.gatekeeper.sh`` webhooks). Two
operator choices are ours and common in production: validation fails closed
(``failurePolicy: Fail``) and the serving certificate is provisioned at install
(``--disable-cert-rotation``), so nothing rewrites a webhook's ``caBundle``
behind the operator's back. The pods run on the control-plane node, and the
system namespaces carry the ``admission.gatekeeper.sh/ignore`` label, so only
application namespaces are subject to admission.

The webhook configurations are registered once the webhook service has a ready
endpoint (``helm install --wait`` then the webhook manifests), so a cluster
that is still starting never fails closed on its own policy engine.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sre_env.kube.tls import b64, pem_certificate, pem_private_key

if TYPE_CHECKING:
    from sre_env.sim.kernel.world import World

__all__ = [
    "CERT_SECRET",
    "IMAGE",
    "MUTATING",
    "NAMESPACE",
    "VALIDATING",
    "WEBHOOK_SERVICE",
    "bootstrap_webhooks",
    "gatekeeper_ca",
    "install_gatekeeper",
    "rotate_certificates",
]

Obj = dict[str, Any]
NAMESPACE = "gatekeeper-system"
IMAGE = "openpolicyagent/gatekeeper:v3.18.2"
WEBHOOK_SERVICE = "gatekeeper-webhook-service"
CERT_SECRET = "gatekeeper-webhook-server-cert"
VALIDATING = "gatekeeper-validating-webhook-configuration"
MUTATING = "gatekeeper-mutating-webhook-configuration"
IGNORE_LABEL = "admission.gatekeeper.sh/ignore"
_SYSTEM_NS = ("kube-system", "kube-public", "kube-node-lease", "local-path-storage")
_ISSUED = "2026-01-12T08:14:03Z"
_EXPIRES = "2036-01-10T08:14:03Z"


def gatekeeper_ca(issued: str = _ISSUED, expires: str = _EXPIRES) -> str:
    """The CA certificate (PEM) the install generated for the webhook's serving certificate."""
    return pem_certificate("CN=gatekeeper-ca,O=gatekeeper", "CN=gatekeeper-ca,O=gatekeeper", 1, issued, expires)


def _labels(operation: str) -> dict[str, str]:
    return {"app": "gatekeeper", "chart": "gatekeeper", "control-plane": "audit-controller" if operation == "audit" else "controller-manager", "gatekeeper.sh/operation": operation, "gatekeeper.sh/system": "yes", "heritage": "Helm", "release": "gatekeeper"}


def _deployment(name: str, operation: str, args: list[str], ports: list[tuple[str, int]]) -> Obj:
    labels = _labels(operation)
    container: Obj = {
        "name": "manager",
        "image": IMAGE,
        "imagePullPolicy": "IfNotPresent",
        "command": ["/manager"],
        "args": args,
        "ports": [{"name": n, "containerPort": p, "protocol": "TCP"} for n, p in ports],
        "env": [
            {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}},
            {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
            {"name": "CONTAINER_NAME", "value": "manager"},
        ],
        "resources": {"limits": {"memory": "512Mi"}, "requests": {"cpu": "100m", "memory": "256Mi"}},
        "securityContext": {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
            "readOnlyRootFilesystem": True,
            "runAsGroup": 999,
            "runAsNonRoot": True,
            "runAsUser": 1000,
        },
        "volumeMounts": [{"mountPath": "/certs", "name": "cert", "readOnly": True}],
    }
    return {
        "kind": "Deployment",
        "apiVersion": "apps/v1",
        "metadata": {"name": name, "namespace": NAMESPACE, "labels": dict(labels)},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {k: labels[k] for k in ("app", "control-plane", "gatekeeper.sh/operation", "gatekeeper.sh/system", "release")}},
            "template": {
                "metadata": {"labels": dict(labels), "annotations": {"container.seccomp.security.alpha.kubernetes.io/manager": "runtime/default"}},
                "spec": {
                    "containers": [container],
                    "nodeSelector": {"kubernetes.io/os": "linux", "node-role.kubernetes.io/control-plane": ""},
                    "tolerations": [{"key": "node-role.kubernetes.io/control-plane", "operator": "Exists", "effect": "NoSchedule"}],
                    "priorityClassName": "system-cluster-critical",
                    "serviceAccountName": "gatekeeper-admin",
                    "terminationGracePeriodSeconds": 60,
                    "volumes": [{"name": "cert", "secret": {"defaultMode": 420, "secretName": CERT_SECRET}}],
                },
            },
        },
    }


def install_gatekeeper(world: World) -> None:
    """Namespace, certificate, controller-manager, audit and the webhook Service (configurations follow)."""
    from sre_env.apps.manifests import namespace_object

    store = world.store
    for ns in _SYSTEM_NS:
        obj = store.find("Namespace", ns)
        if obj is not None:
            obj["metadata"].setdefault("labels", {})[IGNORE_LABEL] = "true"
            store.touch(obj)
    world.create(namespace_object(NAMESPACE, {IGNORE_LABEL: "no-self-managing", "control-plane": "controller-manager", "gatekeeper.sh/system": "yes"}))
    world.images.add(IMAGE)
    host = f"{WEBHOOK_SERVICE}.{NAMESPACE}.svc"
    world.create(
        {
            "kind": "Secret",
            "apiVersion": "v1",
            "metadata": {"name": CERT_SECRET, "namespace": NAMESPACE, "labels": {"app": "gatekeeper", "release": "gatekeeper"}},
            "type": "Opaque",
            "data": {
                "ca.crt": b64(gatekeeper_ca()),
                "ca.key": b64(pem_private_key("gatekeeper-ca")),
                "tls.crt": b64(pem_certificate(f"CN={host}", "CN=gatekeeper-ca,O=gatekeeper", 2, _ISSUED, _EXPIRES)),
                "tls.key": b64(pem_private_key(host)),
            },
        }
    )
    world.create({"kind": "ServiceAccount", "apiVersion": "v1", "metadata": {"name": "gatekeeper-admin", "namespace": NAMESPACE, "labels": {"app": "gatekeeper", "release": "gatekeeper"}}})
    common = ["--logtostderr", "--log-level=INFO", "--exempt-namespace=gatekeeper-system", "--disable-opa-builtin={http.send}", "--disable-cert-rotation"]
    world.create(
        _deployment(
            "gatekeeper-controller-manager",
            "webhook",
            ["--port=8443", "--health-addr=:9090", "--prometheus-port=8888", "--operation=webhook", "--operation=mutation-webhook", *common],
            [("webhook-server", 8443), ("metrics", 8888), ("healthz", 9090)],
        )
    )
    world.create(
        _deployment(
            "gatekeeper-audit",
            "audit",
            ["--audit-interval=60", "--constraint-violations-limit=20", "--audit-from-cache=false", "--health-addr=:9090", "--prometheus-port=8888", "--operation=audit", "--operation=status", "--operation=mutation-status", *common],
            [("metrics", 8888), ("healthz", 9090)],
        )
    )
    world.create(
        {
            "kind": "Service",
            "apiVersion": "v1",
            "metadata": {"name": WEBHOOK_SERVICE, "namespace": NAMESPACE, "labels": {"app": "gatekeeper", "chart": "gatekeeper", "gatekeeper.sh/system": "yes", "heritage": "Helm", "release": "gatekeeper"}},
            "spec": {
                "type": "ClusterIP",
                "selector": {"app": "gatekeeper", "control-plane": "controller-manager", "gatekeeper.sh/operation": "webhook", "gatekeeper.sh/system": "yes"},
                "ports": [{"name": "https-webhook-server", "port": 443, "protocol": "TCP", "targetPort": "webhook-server"}],
            },
        }
    )
    world.__dict__["gatekeeper_pending"] = True


def _client(path: str) -> Obj:
    return {"caBundle": b64(gatekeeper_ca()), "service": {"name": WEBHOOK_SERVICE, "namespace": NAMESPACE, "path": path, "port": 443}}


_NS_SELECTOR = {"matchExpressions": [{"key": IGNORE_LABEL, "operator": "DoesNotExist"}, {"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": [NAMESPACE]}]}
_ALL_RESOURCES = ["*", "pods/ephemeralcontainers", "pods/exec", "pods/log", "pods/eviction", "pods/portforward", "pods/proxy", "pods/attach", "pods/binding", "deployments/scale", "replicasets/scale", "statefulsets/scale", "replicationcontrollers/scale", "services/proxy", "nodes/proxy", "services/status"]


def webhook_configurations() -> list[Obj]:
    meta = lambda name: {"name": name, "labels": {"app": "gatekeeper", "chart": "gatekeeper", "gatekeeper.sh/system": "yes", "heritage": "Helm", "release": "gatekeeper"}}
    return [
        {
            "kind": "ValidatingWebhookConfiguration",
            "apiVersion": "admissionregistration.k8s.io/v1",
            "metadata": meta(VALIDATING),
            "webhooks": [
                {
                    "admissionReviewVersions": ["v1", "v1beta1"],
                    "clientConfig": _client("/v1/admit"),
                    "failurePolicy": "Fail",
                    "matchPolicy": "Exact",
                    "name": "validation.gatekeeper.sh",
                    "namespaceSelector": _NS_SELECTOR,
                    "objectSelector": {},
                    "rules": [{"apiGroups": ["*"], "apiVersions": ["*"], "operations": ["CREATE", "UPDATE"], "resources": list(_ALL_RESOURCES), "scope": "*"}],
                    "sideEffects": "None",
                    "timeoutSeconds": 3,
                },
                {
                    "admissionReviewVersions": ["v1", "v1beta1"],
                    "clientConfig": _client("/v1/admitlabel"),
                    "failurePolicy": "Fail",
                    "matchPolicy": "Exact",
                    "name": "check-ignore-label.gatekeeper.sh",
                    "namespaceSelector": {"matchExpressions": [{"key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": [NAMESPACE]}]},
                    "objectSelector": {},
                    "rules": [{"apiGroups": [""], "apiVersions": ["*"], "operations": ["CREATE", "UPDATE"], "resources": ["namespaces"], "scope": "*"}],
                    "sideEffects": "None",
                    "timeoutSeconds": 3,
                },
            ],
        },
        {
            "kind": "MutatingWebhookConfiguration",
            "apiVersion": "admissionregistration.k8s.io/v1",
            "metadata": meta(MUTATING),
            "webhooks": [
                {
                    "admissionReviewVersions": ["v1", "v1beta1"],
                    "clientConfig": _client("/v1/mutate"),
                    "failurePolicy": "Ignore",
                    "matchPolicy": "Exact",
                    "name": "mutation.gatekeeper.sh",
                    "namespaceSelector": _NS_SELECTOR,
                    "objectSelector": {},
                    "reinvocationPolicy": "Never",
                    "rules": [{"apiGroups": ["*"], "apiVersions": ["*"], "operations": ["CREATE", "UPDATE"], "resources": ["*", "pods/ephemeralcontainers"], "scope": "*"}],
                    "sideEffects": "None",
                    "timeoutSeconds": 1,
                }
            ],
        },
    ]


def bootstrap_webhooks(world: World) -> None:
    """Register the webhook configurations once the webhook service has a ready endpoint."""
    if not world.__dict__.get("gatekeeper_pending"):
        return
    ep = world.store.find("Endpoints", WEBHOOK_SERVICE, NAMESPACE)
    if not any(s.get("addresses") for s in (ep or {}).get("subsets") or ()):
        return
    for obj in webhook_configurations():
        if world.store.find(obj["kind"], obj["metadata"]["name"]) is None:
            world.store.create(obj)
    world.__dict__["gatekeeper_pending"] = False


# --------------------------------------------------------------------------- cert-controller
_ROTATION_FLAG = "--disable-cert-rotation"
#: the rotator renews certificates this long before they expire (Gatekeeper's lookahead)
_LOOKAHEAD_S = 90 * 86400


def _rotation_enabled(world: World) -> bool:
    """A running controller-manager pod started without ``--disable-cert-rotation``."""
    for pod in world.store.list("Pod", NAMESPACE, "gatekeeper.sh/operation=webhook"):
        rt = world.runtimes.get(pod["metadata"]["uid"])
        if rt is None or not any(c.state == "running" for c in rt.containers.values()):
            continue
        args = [a for c in pod["spec"].get("containers") or () for a in c.get("args") or ()]
        if _ROTATION_FLAG not in args and f"{_ROTATION_FLAG}=true" not in args:
            return True
    return False


def rotate_certificates(world: World) -> bool:
    """Gatekeeper's cert-controller: renew an expired or foreign CA/serving pair and inject the caBundle.

    Runs when a controller-manager pod with rotation enabled is up. Returns True when it changed anything.
    """
    from datetime import timedelta

    from sre_env.kube.timefmt import EPOCH, iso
    from sre_env.kube.tls import parse_certificate, unb64

    if not _rotation_enabled(world):
        return False
    store = world.store
    now = world.clock.now
    secret = store.find("Secret", CERT_SECRET, NAMESPACE)
    data = dict((secret or {}).get("data") or {})
    ca = parse_certificate(unb64(data.get("ca.crt", "")))
    cert = parse_certificate(unb64(data.get("tls.crt", "")))
    limit = EPOCH + timedelta(seconds=int(now) + _LOOKAHEAD_S)
    changed = False
    if ca is None or cert is None or cert.not_after <= limit or ca.not_after <= limit or cert.issuer.split(",")[0] != ca.subject.split(",")[0]:
        issued = iso(now)
        expires = iso(now + 10 * 365 * 86400)
        host = f"{WEBHOOK_SERVICE}.{NAMESPACE}.svc"
        serial = int(now) + 3
        data = {
            "ca.crt": b64(gatekeeper_ca(issued, expires)),
            "ca.key": b64(pem_private_key(f"gatekeeper-ca/{issued}")),
            "tls.crt": b64(pem_certificate(f"CN={host}", "CN=gatekeeper-ca,O=gatekeeper", serial, issued, expires)),
            "tls.key": b64(pem_private_key(f"{host}/{issued}")),
        }
        if secret is None:
            store.create({"kind": "Secret", "apiVersion": "v1", "metadata": {"name": CERT_SECRET, "namespace": NAMESPACE}, "type": "Opaque", "data": data})
        else:
            secret["data"] = data
            store.touch(secret)
        changed = True
    for kind, name in (("ValidatingWebhookConfiguration", VALIDATING), ("MutatingWebhookConfiguration", MUTATING)):
        cfg = store.find(kind, name)
        if cfg is None:
            continue
        dirty = False
        for hook in cfg.get("webhooks") or ():
            cc = hook.setdefault("clientConfig", {})
            if cc.get("caBundle") != data["ca.crt"]:
                cc["caBundle"] = data["ca.crt"]
                dirty = True
        if dirty:
            store.touch(cfg)
            changed = True
    return changed
