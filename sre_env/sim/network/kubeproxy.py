"""kube-proxy: each node's Service rules, kept current only while its kube-proxy runs.

In iptables mode kube-proxy programs a node's ClusterIP -> endpoint rules and
rewrites them whenever Services or Endpoints change. When the node's
kube-proxy stops (its pod is deleted, its new image cannot be pulled) the
rules it last wrote stay in the kernel — *stale*: endpoints that moved are
still targeted, Services created since have no rule at all. A reboot flushes
them, leaving nothing. Connections from that node's pods to a ClusterIP then
go to dead pod IPs or nowhere, and time out.

The rules a node holds are captured the first time a route is computed after
its proxy stopped (routes are recomputed on every such change), and dropped as
soon as a kube-proxy serves on the node again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sre_env.kube.endpoints import service_port_backends

if TYPE_CHECKING:
    from sre_env.sim.kernel.world import World

__all__ = ["KUBE_PROXY_IMAGE", "proxy_live", "service_rules", "on_reboot", "kube_proxy_objects"]

Obj = dict[str, Any]
KUBE_PROXY_IMAGE = "registry.k8s.io/kube-proxy:v1.32.2"
#: (namespace, service, port, protocol) -> ((pod uid, pod ip, target port), ...)
Rules = dict[tuple[str, str, int, str], tuple[tuple[str, str, int], ...]]


@dataclass
class _ProxyState:
    """Each node's kube-proxy: whether it serves, and the rules it froze when it stopped."""

    #: node -> the Service rules its kube-proxy last programmed (kept while it is down)
    frozen: dict[str, Rules] = field(default_factory=dict)
    #: the revisions ``live`` was computed at
    cache_rev: tuple | None = None
    #: node -> whether a kube-proxy serves there
    live: dict[str, bool] = field(default_factory=dict)


def _state(world: "World") -> _ProxyState:
    return world.slot(_ProxyState)


def proxy_live(world: "World", node: str) -> bool:
    """Whether a kube-proxy process serves on ``node`` (True in worlds without a kube-proxy DaemonSet)."""
    st = _state(world)
    rev = (world.store.bound_pod_revision, world.runtime_epoch, world.store.kind_revision.get("DaemonSet", 0))
    if st.cache_rev != rev:
        st.cache_rev = rev
        live: dict[str, bool] = {}
        has_ds = world.store.find("DaemonSet", "kube-proxy", "kube-system") is not None
        if has_ds:
            now = world.clock.now
            for name in world.hosts:
                live[name] = False
            for pod in world.store.iter("Pod"):
                meta = pod["metadata"]
                if meta["namespace"] != "kube-system" or (meta.get("labels") or {}).get("k8s-app") != "kube-proxy" or meta.get("deletionTimestamp"):
                    continue
                rt = world.runtimes.get(meta["uid"])
                if rt is not None and any(c.serving(now) for c in rt.containers.values()):
                    live[pod["spec"].get("nodeName", "")] = True
        st.live = live
        for name, ok in live.items():
            if ok:
                st.frozen.pop(name, None)
    return st.live.get(node, True)


def _current_rules(world: "World") -> Rules:
    rules: Rules = {}
    for ep in world.store.iter("Endpoints"):
        ns, name = ep["metadata"]["namespace"], ep["metadata"]["name"]
        svc = world.store.find("Service", name, ns)
        if svc is None:
            continue
        for sp in svc["spec"].get("ports") or ():
            rules[(ns, name, int(sp.get("port", 0)), sp.get("protocol", "TCP"))] = tuple(service_port_backends(ep, sp))
    return rules


def service_rules(world: "World", node: str) -> Rules | None:
    """The frozen rules of a node whose kube-proxy is not running (None while it runs: rules are live)."""
    if proxy_live(world, node):
        return None
    frozen = _state(world).frozen
    if node not in frozen:
        frozen[node] = _current_rules(world)
    return frozen[node]


def on_reboot(world: "World", node: str) -> None:
    """A reboot flushes the kernel's rules; a kube-proxy that does not come back leaves none."""
    _state(world).frozen[node] = {}
    _state(world).cache_rev = None


def kube_proxy_objects() -> list[Obj]:
    """kubeadm's kube-proxy ConfigMap and DaemonSet (iptables mode)."""
    labels = {"k8s-app": "kube-proxy"}
    config = (
        "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nbindAddress: 0.0.0.0\nclientConnection:\n  kubeconfig: /var/lib/kube-proxy/kubeconfig.conf\n"
        "clusterCIDR: 10.244.0.0/16\nconntrack:\n  maxPerCore: 0\n  tcpCloseWaitTimeout: 1h0m0s\n  tcpEstablishedTimeout: 24h0m0s\n"
        "iptables:\n  masqueradeAll: false\n  minSyncPeriod: 1s\n  syncPeriod: 30s\nkind: KubeProxyConfiguration\nmetricsBindAddress: 0.0.0.0:10249\nmode: iptables\n"
    )
    kubeconfig = (
        "apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    certificate-authority: /var/run/secrets/kubernetes.io/serviceaccount/ca.crt\n"
        "    server: https://sre-env-control-plane:6443\n  name: default\ncontexts:\n- context:\n    cluster: default\n    namespace: default\n    user: default\n"
        "  name: default\ncurrent-context: default\nusers:\n- name: default\n  user:\n    tokenFile: /var/run/secrets/kubernetes.io/serviceaccount/token\n"
    )
    cm = {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"name": "kube-proxy", "namespace": "kube-system", "labels": {"app": "kube-proxy"}}, "data": {"config.conf": config, "kubeconfig.conf": kubeconfig}}
    ds = {
        "kind": "DaemonSet",
        "apiVersion": "apps/v1",
        "metadata": {"name": "kube-proxy", "namespace": "kube-system", "labels": dict(labels), "generation": 1},
        "spec": {
            "selector": {"matchLabels": dict(labels)},
            "revisionHistoryLimit": 10,
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}},
            "template": {
                "metadata": {"labels": dict(labels)},
                "spec": {
                    "containers": [
                        {
                            "name": "kube-proxy",
                            "image": KUBE_PROXY_IMAGE,
                            "command": ["/usr/local/bin/kube-proxy", "--config=/var/lib/kube-proxy/config.conf", "--hostname-override=$(NODE_NAME)"],
                            "env": [{"name": "NODE_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}}}],
                            "imagePullPolicy": "IfNotPresent",
                            "securityContext": {"privileged": True},
                            "volumeMounts": [
                                {"name": "kube-proxy", "mountPath": "/var/lib/kube-proxy"},
                                {"name": "xtables-lock", "mountPath": "/run/xtables.lock"},
                                {"name": "lib-modules", "mountPath": "/lib/modules", "readOnly": True},
                            ],
                        }
                    ],
                    "dnsPolicy": "ClusterFirst",
                    "hostNetwork": True,
                    "nodeSelector": {"kubernetes.io/os": "linux"},
                    "priorityClassName": "system-node-critical",
                    "restartPolicy": "Always",
                    "serviceAccountName": "kube-proxy",
                    "terminationGracePeriodSeconds": 30,
                    "tolerations": [{"operator": "Exists"}],
                    "volumes": [
                        {"name": "kube-proxy", "configMap": {"name": "kube-proxy", "defaultMode": 420}},
                        {"name": "xtables-lock", "hostPath": {"path": "/run/xtables.lock", "type": "FileOrCreate"}},
                        {"name": "lib-modules", "hostPath": {"path": "/lib/modules", "type": ""}},
                    ],
                },
            },
        },
    }
    return [cm, ds]
