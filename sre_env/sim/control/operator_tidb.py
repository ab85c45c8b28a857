"""A modelled TiDB Operator: TidbCluster custom resources -> StatefulSets and Services.

The real controller-manager watches ``TidbCluster`` objects and the StatefulSets
and Services it owns, and on every change (and a periodic resync) makes the
owned objects match what the custom resource asks for: an edit made directly
to ``basic-tikv`` is overwritten on the next sync, and only a change to the
custom resource sticks. It only does so while its own pod runs: with the
controller-manager down (a bad image, scaled to zero) the custom resource and
the cluster drift apart and nothing reconciles.

Here the reconcile runs from the app model's per-tick hook, only when a
TidbCluster, a StatefulSet or a Service was written or the operator's
readiness changed, so an idle cluster costs one tuple comparison per tick and
worlds without the TiDB app never run it.
"""

from __future__ import annotations

import copy
import zlib
from typing import TYPE_CHECKING, Any

from sre_env.kube.selectors import has_labels
from sre_env.kube.timefmt import iso
from sre_env.sim.control.apiserver import create
from sre_env.sim.control.controllers import pod_is_ready
from sre_env.sim.logs.streams import container_raw_log

if TYPE_CHECKING:
    from sre_env.apps.base import AppSpec
    from sre_env.sim.kernel.world import World

__all__ = ["COMPONENTS", "PORTS", "TidbOperatorModel", "desired_statefulset", "operator_running"]

Obj = dict[str, Any]
OPERATOR_NAMESPACE = "tidb-admin"
OPERATOR_SELECTOR = {"app.kubernetes.io/component": "controller-manager", "app.kubernetes.io/name": "tidb-operator"}
COMPONENTS = ("pd", "tikv", "tidb")
#: container ports per component, as the operator renders them
PORTS: dict[str, tuple[tuple[str, int], ...]] = {"pd": (("server", 2380), ("client", 2379)), "tikv": (("server", 20160),), "tidb": (("server", 4000), ("status", 10080))}
_DATA_DIR = {"pd": "/var/lib/pd", "tikv": "/var/lib/tikv"}
#: the periodic resync of the informers (the chart's default ``-resync-duration=30s``)
RESYNC_S = 30.0


def operator_running(world: "World") -> bool:
    """Whether a controller-manager pod is running and ready (leader election: one is enough)."""
    for pod in world.store.list("Pod", OPERATOR_NAMESPACE):
        labels = pod["metadata"].get("labels") or {}
        if has_labels(OPERATOR_SELECTOR, labels) and not pod["metadata"].get("deletionTimestamp") and pod_is_ready(pod):
            return True
    return False


def _labels(cluster: str, component: str) -> dict[str, str]:
    return {
        "app.kubernetes.io/component": component,
        "app.kubernetes.io/instance": cluster,
        "app.kubernetes.io/managed-by": "tidb-operator",
        "app.kubernetes.io/name": "tidb-cluster",
    }


def _image(spec: Obj, comp: str) -> str:
    cs = spec.get(comp) or {}
    if cs.get("image"):
        return str(cs["image"])
    version = cs.get("version") or spec.get("version") or "latest"
    return f"{cs.get('baseImage') or 'pingcap/' + comp}:{version}"


def desired_statefulset(tc: Obj, comp: str) -> Obj:
    """The StatefulSet the operator renders for one component of a TidbCluster."""
    meta, spec = tc["metadata"], tc.get("spec") or {}
    cluster, ns = meta["name"], meta["namespace"]
    cs = spec.get(comp) or {}
    labels = _labels(cluster, comp)
    requests = {k: v for k, v in (cs.get("requests") or {}).items() if k != "storage"}
    limits = {k: v for k, v in (cs.get("limits") or {}).items() if k != "storage"}
    env = [{"name": "NAMESPACE", "value": ns}, {"name": "CLUSTER_NAME", "value": cluster}, {"name": "TZ", "value": spec.get("timezone", "UTC")}]
    if comp in ("tikv", "tidb"):
        env.append({"name": "PD_ADDRESS", "value": f"{cluster}-pd:2379"})
    if comp == "tidb":
        env.append({"name": "TIKV_ADDRESS", "value": f"{cluster}-tikv-peer:20160"})
    container: Obj = {
        "name": comp,
        "image": _image(spec, comp),
        "imagePullPolicy": cs.get("imagePullPolicy") or spec.get("imagePullPolicy") or "IfNotPresent",
        "command": ["/bin/sh", f"/usr/local/bin/{comp}_start_script.sh"],
        "ports": [{"name": n, "containerPort": p, "protocol": "TCP"} for n, p in PORTS[comp]],
        "env": env,
        "resources": {k: v for k, v in (("requests", requests), ("limits", limits)) if v},
    }
    pod_spec: Obj = {"containers": [container], "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst", "schedulerName": spec.get("schedulerName") or "default-scheduler"}
    if comp in _DATA_DIR:
        container["volumeMounts"] = [{"name": comp, "mountPath": _DATA_DIR[comp]}]
    for key, field in (("affinity", "affinity"), ("nodeSelector", "nodeSelector"), ("tolerations", "tolerations"), ("podSecurityContext", "securityContext"), ("priorityClassName", "priorityClassName")):
        value = cs.get(key, spec.get(key))
        if value:
            pod_spec[field] = copy.deepcopy(value)
    sts_spec: Obj = {
        "replicas": int(cs.get("replicas", 1)),
        "selector": {"matchLabels": dict(labels)},
        "serviceName": f"{cluster}-{comp}-peer",
        "podManagementPolicy": "Parallel",
        "updateStrategy": {"type": spec.get("statefulSetUpdateStrategy") or "RollingUpdate", **({"rollingUpdate": {"partition": 0}} if (spec.get("statefulSetUpdateStrategy") or "RollingUpdate") == "RollingUpdate" else {})},
        "revisionHistoryLimit": 10,
        "template": {"metadata": {"labels": dict(labels), "annotations": {"prometheus.io/scrape": "true"}}, "spec": pod_spec},
    }
    if comp in _DATA_DIR:
        claim: Obj = {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": (cs.get("requests") or {}).get("storage", "1Gi")}}, "volumeMode": "Filesystem"}
        # the DefaultStorageClass admission plugin fills in the default class when none is named
        claim["storageClassName"] = cs.get("storageClassName") or spec.get("storageClassName") or "local-path"
        sts_spec["volumeClaimTemplates"] = [{"metadata": {"name": comp}, "spec": claim}]
    return {
        "kind": "StatefulSet",
        "apiVersion": "apps/v1",
        "metadata": {"name": f"{cluster}-{comp}", "namespace": ns, "labels": dict(labels), "ownerReferences": [_owner(tc)]},
        "spec": sts_spec,
    }


def _owner(tc: Obj) -> Obj:
    return {"apiVersion": "pingcap.com/v1alpha1", "kind": "TidbCluster", "name": tc["metadata"]["name"], "uid": tc["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}


def desired_services(tc: Obj) -> list[Obj]:
    """Client and headless peer Services of each component."""
    cluster, ns = tc["metadata"]["name"], tc["metadata"]["namespace"]
    out = []

    def svc(name: str, comp: str, ports: list[tuple[str, int]], headless: bool) -> Obj:
        spec: Obj = {"selector": _labels(cluster, comp), "ports": [{"name": n, "port": p, "targetPort": p, "protocol": "TCP"} for n, p in ports], "type": "ClusterIP"}
        if headless:
            spec["clusterIP"] = "None"
            spec["publishNotReadyAddresses"] = True
        return {"kind": "Service", "apiVersion": "v1", "metadata": {"name": name, "namespace": ns, "labels": {**_labels(cluster, comp), "app.kubernetes.io/used-by": "peer" if headless else "end-user"}, "ownerReferences": [_owner(tc)]}, "spec": spec}

    out.append(svc(f"{cluster}-pd", "pd", [("client", 2379)], False))
    out.append(svc(f"{cluster}-pd-peer", "pd", [("tcp-peer-2380", 2380), ("tcp-peer-2379", 2379)], True))
    out.append(svc(f"{cluster}-tikv-peer", "tikv", [("peer", 20160)], True))
    out.append(svc(f"{cluster}-tidb", "tidb", [("mysql-client", 4000), ("status", 10080)], False))
    out.append(svc(f"{cluster}-tidb-peer", "tidb", [("status", 10080)], True))
    return out


#: StatefulSet fields the operator owns (it reverts any other writer's changes to them)
_MANAGED = ("replicas", "template", "updateStrategy", "podManagementPolicy", "serviceName", "selector")


class TidbOperatorModel:
    """Per-world operator state: what it last saw, so idle ticks do nothing."""

    def __init__(self) -> None:
        self._seen: tuple = ()
        self._next_resync = 0.0
        self._pod_rev = -1
        self._running = False

    # -- the app-model protocol (sre_env.sim.kernel.world) ------------------------------------
    def tick(self, world: "World", app: "AppSpec", plan: Any, res: Any, dt: float) -> None:
        kr = world.store.kind_revision
        pod_rev = kr.get("Pod", 0)
        if pod_rev != self._pod_rev:
            self._pod_rev = pod_rev
            self._running = operator_running(world)
        key = (kr.get("TidbCluster", 0), kr.get("StatefulSet", 0), kr.get("Service", 0), self._running)
        now = world.clock.now
        if key == self._seen and now < self._next_resync:
            return
        self._next_resync = now + RESYNC_S
        if self._running:
            for tc in world.store.list("TidbCluster"):
                if not tc["metadata"].get("deletionTimestamp"):
                    sync_cluster(world, tc)
        # our own writes moved the revisions: remember them so the next idle tick is a no-op
        self._seen = (kr.get("TidbCluster", 0), kr.get("StatefulSet", 0), kr.get("Service", 0), self._running)

    def request_log_fields(self, world: "World", comp: str, failed: bool, latency: float, variant: int) -> Obj | None:
        return None

    def container_tool(self, world: "World", pod: Obj, spec: Obj, env: dict[str, str]) -> None:
        return None


def _operator_log(world: "World", line: str) -> None:
    """A klog line in the controller-manager's log (its first running pod)."""
    for pod in world.store.list("Pod", OPERATOR_NAMESPACE):
        rt = world.runtimes.get(pod["metadata"]["uid"])
        if rt is None:
            continue
        for ctr in rt.containers.values():
            if ctr.state == "running":
                t = world.clock.now
                stamp = iso(t)
                head = f"I{stamp[5:7]}{stamp[8:10]} {stamp[11:19]}.{zlib.crc32(line.encode()) % 1_000_000:06d}       1"
                container_raw_log(world, pod, ctr, t, f"{head} {line}")
                return


def sync_cluster(world: "World", tc: Obj) -> None:
    """One reconcile of a TidbCluster: create or restore its StatefulSets and Services, then its status."""
    store = world.store
    ns, cluster = tc["metadata"]["namespace"], tc["metadata"]["name"]
    for svc in desired_services(tc):
        cur = store.find("Service", svc["metadata"]["name"], ns)
        if cur is None:
            create(world, svc)
            world.event(tc, "Normal", "SuccessfulCreate", f"create Service {svc['metadata']['name']} in TidbCluster {cluster} successful", "tidb-controller-manager")
        elif cur["spec"].get("selector") != svc["spec"]["selector"] or [(p.get("port"), p.get("targetPort")) for p in cur["spec"].get("ports") or ()] != [(p["port"], p["targetPort"]) for p in svc["spec"]["ports"]]:
            new = copy.deepcopy(cur)
            new["spec"]["selector"] = svc["spec"]["selector"]
            new["spec"]["ports"] = copy.deepcopy(svc["spec"]["ports"])
            store.replace(new)
            world.event(tc, "Normal", "SuccessfulUpdate", f"update Service {svc['metadata']['name']} in TidbCluster {cluster} successful", "tidb-controller-manager")
    for comp in COMPONENTS:
        want = desired_statefulset(tc, comp)
        name = want["metadata"]["name"]
        cur = store.find("StatefulSet", name, ns)
        if cur is None:
            create(world, want)
            world.event(tc, "Normal", "SuccessfulCreate", f"create StatefulSet {name} in TidbCluster {cluster} successful", "tidb-controller-manager")
            _operator_log(world, f'tidb_cluster_control.go:128] TidbCluster: [{ns}/{cluster}] created StatefulSet {name}')
            continue
        if all(cur["spec"].get(f) == want["spec"].get(f) for f in _MANAGED):
            continue
        new = copy.deepcopy(cur)
        for f in _MANAGED:
            new["spec"][f] = copy.deepcopy(want["spec"][f])
        store.replace(new)
        world.event(tc, "Normal", "SuccessfulUpdate", f"update StatefulSet {name} in TidbCluster {cluster} successful", "tidb-controller-manager")
        _operator_log(world, f'{comp}_member_manager.go:312] TidbCluster: [{ns}/{cluster}] updated StatefulSet {name} to match the TidbCluster spec')
    _write_status(world, tc)


def _write_status(world: "World", tc: Obj) -> None:
    store = world.store
    ns, cluster = tc["metadata"]["namespace"], tc["metadata"]["name"]
    spec = tc.get("spec") or {}
    status: Obj = {"clusterID": str(7_000_000_000_000_000_000 + zlib.crc32(f"{ns}/{cluster}".encode()))}
    all_ready = True
    for comp in COMPONENTS:
        sts = store.find("StatefulSet", f"{cluster}-{comp}", ns)
        st = (sts or {}).get("status") or {}
        want = int((spec.get(comp) or {}).get("replicas", 1))
        ready = int(st.get("readyReplicas", 0))
        all_ready = all_ready and ready >= want and sts is not None
        cstatus: Obj = {"phase": "Normal" if ready >= want else ("Upgrade" if st.get("updateRevision") != st.get("currentRevision") else "Scale"), "image": _image(spec, comp), "statefulSet": {k: st.get(k, 0) for k in ("replicas", "readyReplicas", "currentReplicas", "updatedReplicas")} | {"currentRevision": st.get("currentRevision", ""), "updateRevision": st.get("updateRevision", "")}, "synced": ready >= want}
        status[comp] = cstatus
    old = tc.get("status") or {}
    prev = next((c for c in old.get("conditions") or () if c.get("type") == "Ready"), None)
    cond_status = "True" if all_ready else "False"
    transition = prev["lastTransitionTime"] if prev and prev.get("status") == cond_status else iso(world.clock.now)
    status["conditions"] = [
        {
            "type": "Ready",
            "status": cond_status,
            "lastUpdateTime": transition,
            "lastTransitionTime": transition,
            "reason": "Ready" if all_ready else "NotReady",
            "message": "TiDB cluster is fully up and running" if all_ready else "some components are not ready: " + ", ".join(c for c in COMPONENTS if not status[c]["synced"]),
        }
    ]
    if status != old:
        tc["status"] = status
        store.touch(tc)
