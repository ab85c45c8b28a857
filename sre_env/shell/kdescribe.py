"""``kubectl describe``: the describer layouts of kubectl (pkg/describe/describe.go).

Lines are built with tabs exactly where kubectl writes them and aligned by the
tabwriter port, so section alignment matches the real tool, including the
Events table (sorted by last timestamp, ``Age (xN over M)`` for repeats).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Callable

from ..errors import ApiError
from .kctx import K, resource_args
from .printers import access_modes, age, node_roles
from .spec import KubectlError
from .tabwriter import tabwrite

__all__ = ["cmd_describe", "rfc1123"]
from sre_env.kube.node_lease import node_lease
from sre_env.kube.quantity import (
    canonical,
    cpu_millicores,
    format_bytes,
    format_millicores,
    memory_bytes,
)

from .kdescribe_cp import DESCRIBERS_CP
from .kdescribe_ds import DESCRIBERS_DS
from .knet import NET_DESCRIBERS
from .koperator import OPERATOR_DESCRIBERS
from .ksched import SCHED_DESCRIBERS, quota_section

Obj = dict[str, Any]


def rfc1123(ts: str | None) -> str:
    if not ts:
        return "<unset>"
    try:
        return datetime.strptime(ts, "%Y-%m-%dT%H:%M:%SZ").strftime("%a, %d %b %Y %H:%M:%S +0000")
    except ValueError:
        return ts


class _W:
    """Accumulates describe lines; ``kv`` writes ``indent key:\\tvalue``."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def raw(self, level: int, text: str) -> None:
        self.lines.append("  " * level + text)

    def kv(self, level: int, key: str, value: Any) -> None:
        self.lines.append(f"{'  ' * level}{key}:\t{value}")

    def labels(self, level: int, title: str, labels: dict[str, str] | None) -> None:
        ind = "  " * level
        if not labels:
            self.lines.append(f"{ind}{title}:\t<none>")
            return
        for i, key in enumerate(sorted(labels)):
            self.lines.append(f"{ind}{title}:\t{key}={labels[key]}" if i == 0 else f"{ind}\t{key}={labels[key]}")

    def annotations(self, level: int, title: str, ann: dict[str, str] | None) -> None:
        ind = "  " * level
        ann = {k: v for k, v in (ann or {}).items() if k != "kubectl.kubernetes.io/last-applied-configuration"}
        if not ann:
            self.lines.append(f"{ind}{title}:\t<none>")
            return
        for i, key in enumerate(sorted(ann)):
            v = str(ann[key])
            if len(v) > 140:
                v = v[:140] + "..."
            if "\n" in v:
                v = v.replace("\n", " ")
            self.lines.append(f"{ind}{title}:\t{key}: {v}" if i == 0 else f"{ind}\t{key}: {v}")

    def render(self) -> str:
        return tabwrite("\n".join(self.lines), 0, 2)


def _events_block(k: K, obj: Obj) -> str:
    uid = obj["metadata"].get("uid")
    ns = obj["metadata"].get("namespace")
    try:
        evs = [e for e in k.api.list("Event", ns) if (e.get("involvedObject") or {}).get("uid") == uid]
    except ApiError:
        evs = []
    if not evs:
        return "Events:\t<none>"
    evs.sort(key=lambda e: e.get("lastTimestamp") or e.get("firstTimestamp") or "")
    rows = ["Events:", "  Type\tReason\tAge\tFrom\tMessage", "  ----\t------\t----\t----\t-------"]
    for e in evs:
        first = age(e.get("firstTimestamp"), k.now)
        count = e.get("count") or 1
        interval = f"{age(e.get('lastTimestamp'), k.now)} (x{count} over {first})" if count > 1 else first
        src = (e.get("source") or {}).get("component") or e.get("reportingComponent") or ""
        rows.append(f"  {e.get('type', '')}\t{e.get('reason', '')}\t{interval}\t{src}\t{(e.get('message') or '').strip()}")
    return tabwrite("\n".join(rows), 0, 2)


def _finish(k: K, w: _W, obj: Obj, events: bool = True) -> str:
    body = w.render()
    if events:
        ev = _events_block(k, obj)
        if ev.startswith("Events:\t"):  # a single "<none>" line joins the last block's alignment
            w.lines.append(ev)
            return w.render() + "\n"
        return body + "\n" + ev + "\n"
    return body + "\n"


# --------------------------------------------------------------------------- pods
def _state(w: _W, title: str, state: dict[str, Any]) -> None:
    if "running" in state:
        w.kv(2, title, "Running")
        w.kv(3, "Started", rfc1123((state["running"] or {}).get("startedAt")))
    elif "waiting" in state:
        # kubectl prints a waiting state's reason only (its message shows in the events)
        w.kv(2, title, "Waiting")
        if (state["waiting"] or {}).get("reason"):
            w.kv(3, "Reason", state["waiting"]["reason"])
    elif "terminated" in state:
        t = state["terminated"] or {}
        w.kv(2, title, "Terminated")
        if t.get("reason"):
            w.kv(3, "Reason", t["reason"])
        if t.get("message"):
            w.kv(3, "Message", t["message"].strip())
        w.kv(3, "Exit Code", t.get("exitCode", 0))
        if t.get("signal"):
            w.kv(3, "Signal", t["signal"])
        w.kv(3, "Started", rfc1123(t.get("startedAt")))
        w.kv(3, "Finished", rfc1123(t.get("finishedAt")))
    else:
        w.kv(2, title, "Waiting")


def _probe(p: dict[str, Any]) -> str:
    if "httpGet" in p:
        h = p["httpGet"]
        target = f"{h.get('scheme', 'HTTP').lower()}://{h.get('host', '')}:{h.get('port')}{h.get('path', '')}"
        kind = f"http-get {target}"
    elif "tcpSocket" in p:
        kind = f"tcp-socket :{p['tcpSocket'].get('port')}"
    elif "exec" in p:
        kind = "exec [" + " ".join((p["exec"] or {}).get("command") or []) + "]"
    elif "grpc" in p:
        kind = f"grpc <pod>:{p['grpc'].get('port')} {p['grpc'].get('service', '')}"
    else:
        kind = "unknown"
    return (
        f"{kind} delay={p.get('initialDelaySeconds', 0)}s timeout={p.get('timeoutSeconds', 1)}s period={p.get('periodSeconds', 10)}s "
        f"#success={p.get('successThreshold', 1)} #failure={p.get('failureThreshold', 3)}"
    )


def _env_value(e: dict[str, Any]) -> str:
    if "value" in e:
        return str(e["value"])
    vf = e.get("valueFrom") or {}
    if "configMapKeyRef" in vf:
        r = vf["configMapKeyRef"]
        return f"<set to the key '{r.get('key')}' of config map '{r.get('name')}'>\tOptional: {str(bool(r.get('optional'))).lower()}"
    if "secretKeyRef" in vf:
        r = vf["secretKeyRef"]
        return f"<set to the key '{r.get('key')}' in secret '{r.get('name')}'>\tOptional: {str(bool(r.get('optional'))).lower()}"
    if "fieldRef" in vf:
        r = vf["fieldRef"]
        return f" ({r.get('apiVersion', 'v1')}:{r.get('fieldPath')})"
    if "resourceFieldRef" in vf:
        return f"{vf['resourceFieldRef'].get('resource')}"
    return ""


def _container(w: _W, c: dict[str, Any], status: dict[str, Any] | None, template: bool) -> None:
    lvl = 1 if not template else 1
    w.raw(lvl, f"{c.get('name')}:") if not template else w.raw(0, f"   {c.get('name')}:")
    if status is not None:
        w.kv(2, "Container ID", status.get("containerID", ""))
    w.kv(2, "Image", c.get("image", ""))
    if status is not None:
        w.kv(2, "Image ID", status.get("imageID", ""))
    ports = c.get("ports") or []
    if not ports:
        w.kv(2, "Port", "<none>")
        w.kv(2, "Host Port", "<none>")
    else:
        w.kv(2, "Port" if len(ports) == 1 else "Ports", ", ".join(f"{p.get('containerPort')}/{p.get('protocol', 'TCP')}" for p in ports))
        w.kv(2, "Host Port" if len(ports) == 1 else "Host Ports", ", ".join(f"{p.get('hostPort', 0)}/{p.get('protocol', 'TCP')}" for p in ports))
    for title, key in (("Command", "command"), ("Args", "args")):
        if c.get(key):
            w.raw(2, f"{title}:")
            for a in c[key]:
                for ln in str(a).split("\n"):
                    w.raw(3, ln)
    if status is not None:
        _state(w, "State", status.get("state") or {})
        last = status.get("lastState") or {}
        if last.get("terminated"):
            _state(w, "Last State", last)
        w.kv(2, "Ready", "True" if status.get("ready") else "False")
        w.kv(2, "Restart Count", status.get("restartCount", 0))
    res = c.get("resources") or {}
    for title, key in (("Limits", "limits"), ("Requests", "requests")):
        if res.get(key):
            w.raw(2, f"{title}:")
            for rk in sorted(res[key]):
                w.kv(3, rk, canonical(res[key][rk]))
    for title, key in (("Liveness", "livenessProbe"), ("Readiness", "readinessProbe"), ("Startup", "startupProbe")):
        if c.get(key):
            w.kv(2, title, _probe(c[key]))
    env = c.get("env") or []
    env_from = c.get("envFrom") or []
    if env_from:
        w.raw(2, "Environment Variables from:")
        for ef in env_from:
            # kubectl: "%s\t%s\tOptional: %t" (no colon after the name), " with prefix '%s'" when set
            ref, src = (ef["configMapRef"], "ConfigMap") if "configMapRef" in ef else (ef.get("secretRef") or {}, "Secret")
            if ef.get("prefix"):
                src += f" with prefix '{ef['prefix']}'"
            w.raw(3, f"{ref.get('name')}\t{src}\tOptional: {str(bool(ref.get('optional'))).lower()}")
    if not env:
        w.kv(2, "Environment", "<none>")
    else:
        w.raw(2, "Environment:")
        for e in env:
            val = _env_value(e)
            if "\n" in val:
                val = val.replace("\n", "\n" + "  " * 3 + " ")
            w.kv(3, e.get("name"), val)
    mounts = c.get("volumeMounts") or []
    if not mounts:
        w.kv(2, "Mounts", "<none>")
    else:
        w.raw(2, "Mounts:")
        for m in sorted(mounts, key=lambda m: m.get("mountPath", "")):
            flags = ["ro" if m.get("readOnly") else "rw"]
            if m.get("subPath"):
                flags.append(f"path=\"{m['subPath']}\"")
            w.raw(3, f"{m.get('mountPath')} from {m.get('name')} ({','.join(flags)})")


def _volumes(w: _W, vols: list[dict[str, Any]], level: int = 0) -> None:
    if not vols:
        w.kv(level, "Volumes", "<none>")
        return
    w.raw(level, "Volumes:")
    for v in vols:
        # kubectl: LEVEL_1 name (one extra space inside a pod template), LEVEL_2 details
        w.raw(1, f"{' ' if level else ''}{v.get('name')}:")
        l2 = 2
        if "configMap" in v:
            w.kv(l2, "Type", "ConfigMap (a volume populated by a ConfigMap)")
            w.kv(l2, "Name", v["configMap"].get("name"))
            w.kv(l2, "Optional", str(bool(v["configMap"].get("optional"))).lower())
        elif "secret" in v:
            w.kv(l2, "Type", "Secret (a volume populated by a Secret)")
            w.kv(l2, "SecretName", v["secret"].get("secretName"))
            w.kv(l2, "Optional", str(bool(v["secret"].get("optional"))).lower())
        elif "persistentVolumeClaim" in v:
            w.kv(l2, "Type", "PersistentVolumeClaim (a reference to a PersistentVolumeClaim in the same namespace)")
            w.kv(l2, "ClaimName", v["persistentVolumeClaim"].get("claimName"))
            w.kv(l2, "ReadOnly", str(bool(v["persistentVolumeClaim"].get("readOnly"))).lower())
        elif "emptyDir" in v:
            ed = v["emptyDir"] or {}
            w.kv(l2, "Type", "EmptyDir (a temporary directory that shares a pod's lifetime)")
            w.kv(l2, "Medium", ed.get("medium", ""))
            w.kv(l2, "SizeLimit", ed.get("sizeLimit", "<unset>"))
        elif "hostPath" in v:
            w.kv(l2, "Type", "HostPath (bare host directory volume)")
            w.kv(l2, "Path", v["hostPath"].get("path"))
            w.kv(l2, "HostPathType", v["hostPath"].get("type", ""))
        elif "projected" in v:
            w.kv(l2, "Type", "Projected (a volume that contains injected data from multiple sources)")
            w.kv(l2, "TokenExpirationSeconds", 3607)
            w.kv(l2, "ConfigMapName", "kube-root-ca.crt")
            w.kv(l2, "Optional", "false")
            w.kv(l2, "DownwardAPI", "true")
        else:
            w.kv(l2, "Type", "<unknown>")


def _qos(pod: Obj) -> str:
    q = (pod.get("status") or {}).get("qosClass")
    if q:
        return q
    cs = (pod.get("spec") or {}).get("containers") or []
    reqs = [((c.get("resources") or {}).get("requests") or {}) for c in cs]
    lims = [((c.get("resources") or {}).get("limits") or {}) for c in cs]
    if not any(reqs) and not any(lims):
        return "BestEffort"
    if all(l.get("cpu") and l.get("memory") and (r.get("cpu", l["cpu"]) == l["cpu"]) and r.get("memory", l["memory"]) == l["memory"] for r, l in zip(reqs, lims)):
        return "Guaranteed"
    return "Burstable"


def _tolerations(ts: list[dict[str, Any]]) -> list[str]:
    out = []
    for t in ts:
        s = t.get("key", "")
        if t.get("value"):
            s += "=" + t["value"]
        if t.get("effect"):
            s += ":" + t["effect"]
        if t.get("operator") == "Exists" and not t.get("value"):
            s += " op=Exists"
        if t.get("tolerationSeconds") is not None:
            s += f" for {t['tolerationSeconds']}s"
        out.append(s.strip())
    return out


def _multi(w: _W, level: int, title: str, items: list[str]) -> None:
    if not items:
        w.kv(level, title, "<none>")
        return
    for i, it in enumerate(items):
        w.lines.append(f"{'  ' * level}{title}:\t{it}" if i == 0 else f"{'  ' * level}\t{it}")


def _controller(obj: Obj) -> str | None:
    for ref in obj["metadata"].get("ownerReferences") or []:
        if ref.get("controller"):
            return f"{ref.get('kind')}/{ref.get('name')}"
    return None


def describe_pod(k: K, pod: Obj) -> str:
    w = _W()
    m, sp, st = pod["metadata"], pod.get("spec") or {}, pod.get("status") or {}
    w.kv(0, "Name", m["name"])
    w.kv(0, "Namespace", m.get("namespace"))
    w.kv(0, "Priority", sp.get("priority", 0))
    if sp.get("priorityClassName"):
        w.kv(0, "Priority Class Name", sp["priorityClassName"])
    w.kv(0, "Service Account", sp.get("serviceAccountName", "default"))
    node = sp.get("nodeName")
    w.kv(0, "Node", f"{node}/{st.get('hostIP', '')}" if node else "<none>")
    if st.get("startTime"):
        w.kv(0, "Start Time", rfc1123(st["startTime"]))
    w.labels(0, "Labels", m.get("labels"))
    w.annotations(0, "Annotations", m.get("annotations"))
    if m.get("deletionTimestamp"):
        w.kv(0, "Status", f"Terminating (lasts {age(m['deletionTimestamp'], k.now)})")
        w.kv(0, "Termination Grace Period", f"{sp.get('terminationGracePeriodSeconds', 30)}s")
    else:
        w.kv(0, "Status", st.get("phase", "Pending"))
    if st.get("reason"):
        w.kv(0, "Reason", st["reason"])
    if st.get("message"):
        w.kv(0, "Message", st["message"])
    w.kv(0, "IP", st.get("podIP", ""))
    ips = st.get("podIPs") or ([{"ip": st["podIP"]}] if st.get("podIP") else [])
    if ips:
        w.raw(0, "IPs:")
        for ip in ips:
            w.kv(1, "IP", ip.get("ip"))
    else:
        w.kv(0, "IPs", "<none>")
    ctl = _controller(pod)
    if ctl:
        w.kv(0, "Controlled By", ctl)
    if sp.get("nodeName") is None and st.get("nominatedNodeName"):
        w.kv(0, "NominatedNodeName", st["nominatedNodeName"])
    if sp.get("initContainers"):
        w.raw(0, "Init Containers:")
        statuses = {s.get("name"): s for s in st.get("initContainerStatuses") or []}
        for c in sp["initContainers"]:
            _container(w, c, statuses.get(c.get("name")), False)
    w.raw(0, "Containers:")
    statuses = {s.get("name"): s for s in st.get("containerStatuses") or []}
    # a container without a status yet (an unscheduled pod) shows its spec only, as kubectl does
    for c in sp.get("containers") or []:
        _container(w, c, statuses.get(c.get("name")), False)
    conds = st.get("conditions") or []
    if conds:
        w.raw(0, "Conditions:")
        w.raw(1, "Type\tStatus")
        for c in conds:
            w.raw(1, f"{c.get('type')} \t{c.get('status')} ")
    _volumes(w, sp.get("volumes") or [])
    w.kv(0, "QoS Class", _qos(pod))
    w.kv(0, "Node-Selectors", ",".join(f"{a}={b}" for a, b in sorted((sp.get("nodeSelector") or {}).items())) or "<none>")
    _multi(w, 0, "Tolerations", _tolerations(sp.get("tolerations") or []))
    return _finish(k, w, pod)


# --------------------------------------------------------------------------- workloads
def _pod_template(w: _W, tpl: dict[str, Any]) -> None:
    w.raw(0, "Pod Template:")
    w.labels(1, "Labels", (tpl.get("metadata") or {}).get("labels"))
    ann = (tpl.get("metadata") or {}).get("annotations")
    if ann:
        w.annotations(1, "Annotations", ann)
    sp = tpl.get("spec") or {}
    if sp.get("serviceAccountName"):
        w.kv(1, "Service Account", sp["serviceAccountName"])
    if sp.get("initContainers"):
        w.raw(1, "Init Containers:")
        for c in sp["initContainers"]:
            _container(w, c, None, True)
    w.raw(1, "Containers:")
    for c in sp.get("containers") or []:
        _container(w, c, None, True)
    _volumes(w, sp.get("volumes") or [], 1)
    if sp.get("priorityClassName"):
        w.kv(1, "Priority Class Name", sp["priorityClassName"])
    w.kv(1, "Node-Selectors", ",".join(f"{a}={b}" for a, b in sorted((sp.get("nodeSelector") or {}).items())) or "<none>")
    _multi(w, 1, "Tolerations", _tolerations(sp.get("tolerations") or []))


def _selector_str(obj: Obj) -> str:
    sel = ((obj.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
    return ",".join(f"{a}={b}" for a, b in sorted(sel.items())) or "<none>"


def _owned_rs(k: K, dep: Obj) -> list[Obj]:
    uid = dep["metadata"].get("uid")
    return [rs for rs in k.api.list("ReplicaSet", dep["metadata"].get("namespace")) if any(r.get("uid") == uid for r in rs["metadata"].get("ownerReferences") or [])]


def describe_deploy(k: K, d: Obj) -> str:
    w = _W()
    m, sp, st = d["metadata"], d.get("spec") or {}, d.get("status") or {}
    w.kv(0, "Name", m["name"])
    w.kv(0, "Namespace", m.get("namespace"))
    w.kv(0, "CreationTimestamp", rfc1123(m.get("creationTimestamp")))
    w.labels(0, "Labels", m.get("labels"))
    w.annotations(0, "Annotations", m.get("annotations"))
    w.kv(0, "Selector", _selector_str(d))
    replicas = sp.get("replicas", 1)
    w.kv(0, "Replicas", f"{replicas} desired | {st.get('updatedReplicas', 0)} updated | {st.get('replicas', 0)} total | {st.get('availableReplicas', 0)} available | {st.get('unavailableReplicas', 0)} unavailable")
    strat = sp.get("strategy") or {}
    w.kv(0, "StrategyType", strat.get("type", "RollingUpdate"))
    w.kv(0, "MinReadySeconds", sp.get("minReadySeconds", 0))
    if strat.get("type", "RollingUpdate") == "RollingUpdate":
        ru = strat.get("rollingUpdate") or {}
        w.kv(0, "RollingUpdateStrategy", f"{ru.get('maxUnavailable', '25%')} max unavailable, {ru.get('maxSurge', '25%')} max surge")
    if sp.get("paused"):
        w.kv(0, "Paused", "true")
    _pod_template(w, sp.get("template") or {})
    conds = st.get("conditions") or []
    if conds:
        w.raw(0, "Conditions:")
        w.raw(1, "Type\tStatus\tReason")
        w.raw(1, "----\t------\t------")
        for c in conds:
            w.raw(1, f"{c.get('type')} \t{c.get('status')}\t{c.get('reason', '')}")
    rss = _owned_rs(k, d)
    tpl = sp.get("template")
    new = [r for r in rss if (r.get("spec") or {}).get("template", {}).get("spec") == (tpl or {}).get("spec")]
    old = [r for r in rss if r not in new]  # kubectl lists every old ReplicaSet, scaled down or not

    def fmt(r: Obj) -> str:
        return f"{r['metadata']['name']} ({(r.get('status') or {}).get('replicas', 0)}/{(r.get('spec') or {}).get('replicas', 0)} replicas created)"

    w.kv(0, "OldReplicaSets", ", ".join(fmt(r) for r in old) or "<none>")
    w.kv(0, "NewReplicaSet", fmt(new[0]) if new else "<none>")
    return _finish(k, w, d)


def describe_rs(k: K, rs: Obj) -> str:
    w = _W()
    m, sp, st = rs["metadata"], rs.get("spec") or {}, rs.get("status") or {}
    w.kv(0, "Name", m["name"])
    w.kv(0, "Namespace", m.get("namespace"))
    w.kv(0, "Selector", _selector_str(rs))
    w.labels(0, "Labels", m.get("labels"))
    w.annotations(0, "Annotations", m.get("annotations"))
    ctl = _controller(rs)
    if ctl:
        w.kv(0, "Controlled By", ctl)
    w.kv(0, "Replicas", f"{st.get('replicas', 0)} current / {sp.get('replicas', 1)} desired")
    w.kv(0, "Pods Status", _pods_status(k, rs))
    _pod_template(w, sp.get("template") or {})
    conds = st.get("conditions") or []
    if conds:  # e.g. ReplicaFailure/FailedCreate when a quota or admission refuses its pods
        w.raw(0, "Conditions:")
        w.raw(1, "Type\tStatus\tReason")
        w.raw(1, "----\t------\t------")
        for c in conds:
            w.raw(1, f"{c.get('type')} \t{c.get('status')}\t{c.get('reason', '')}")
    return _finish(k, w, rs)


def _pods_status(k: K, owner: Obj) -> str:
    uid = owner["metadata"].get("uid")
    counts = {"Running": 0, "Pending": 0, "Succeeded": 0, "Failed": 0}
    for p in k.api.list("Pod", owner["metadata"].get("namespace")):
        if any(r.get("uid") == uid for r in p["metadata"].get("ownerReferences") or []):
            ph = (p.get("status") or {}).get("phase", "Pending")
            counts[ph] = counts.get(ph, 0) + 1
    return f"{counts['Running']} Running / {counts['Pending']} Waiting / {counts['Succeeded']} Succeeded / {counts['Failed']} Failed"


def describe_sts(k: K, s: Obj) -> str:
    w = _W()
    m, sp, st = s["metadata"], s.get("spec") or {}, s.get("status") or {}
    w.kv(0, "Name", m["name"])
    w.kv(0, "Namespace", m.get("namespace"))
    w.kv(0, "CreationTimestamp", rfc1123(m.get("creationTimestamp")))
    w.kv(0, "Selector", _selector_str(s))
    w.labels(0, "Labels", m.get("labels"))
    w.annotations(0, "Annotations", m.get("annotations"))
    w.kv(0, "Replicas", f"{sp.get('replicas', 1)} desired | {st.get('replicas', 0)} total")
    w.kv(0, "Update Strategy", (sp.get("updateStrategy") or {}).get("type", "RollingUpdate"))
    w.kv(0, "Pods Status", _pods_status(k, s))
    _pod_template(w, sp.get("template") or {})
    vcts = sp.get("volumeClaimTemplates") or []
    w.kv(0, "Volume Claims", "<none>" if not vcts else "")
    for v in vcts:
        w.kv(1, "Name", v["metadata"]["name"])
        w.kv(1, "StorageClass", (v.get("spec") or {}).get("storageClassName", ""))
        w.kv(1, "Capacity", (((v.get("spec") or {}).get("resources") or {}).get("requests") or {}).get("storage", ""))
        w.kv(1, "Access Modes", access_modes((v.get("spec") or {}).get("accessModes")))
    return _finish(k, w, s)


# --------------------------------------------------------------------------- networking
def describe_svc(k: K, s: Obj) -> str:
    w = _W()
    m, sp = s["metadata"], s.get("spec") or {}
    w.kv(0, "Name", m["name"])
    w.kv(0, "Namespace", m.get("namespace"))
    w.labels(0, "Labels", m.get("labels"))
    w.annotations(0, "Annotations", m.get("annotations"))
    w.kv(0, "Selector", ",".join(f"{a}={b}" for a, b in sorted((sp.get("selector") or {}).items())) or "<none>")
    w.kv(0, "Type", sp.get("type", "ClusterIP"))
    w.kv(0, "IP Family Policy", sp.get("ipFamilyPolicy", "SingleStack"))
    w.kv(0, "IP Families", ",".join(sp.get("ipFamilies") or ["IPv4"]))
    w.kv(0, "IP", sp.get("clusterIP", "None"))
    w.kv(0, "IPs", ",".join(sp.get("clusterIPs") or [sp.get("clusterIP", "None")]))
    try:
        ep: Obj | None = k.api.get("Endpoints", m["name"], m.get("namespace"))
    except ApiError:
        ep = None
    for port in sp.get("ports") or []:
        pname = port.get("name") or "<unset>"
        proto = port.get("protocol", "TCP")
        w.kv(0, "Port", f"{pname}\t{port.get('port')}/{proto}")
        tp = port.get("targetPort", port.get("port"))
        w.kv(0, "TargetPort", f"{tp}/{proto}")
        if port.get("nodePort"):
            w.kv(0, "NodePort", f"{pname}\t{port['nodePort']}/{proto}")
        # kubectl reads the EndpointSlices (one per subset): ready endpoints, at most three then "+ N more...",
        # and "<none>" when the Service has no slice at all
        addrs: list[str] = []
        more, count = False, 0
        for ss in (ep or {}).get("subsets") or []:
            for p in ss.get("ports") or []:
                if (p.get("name") or "") == (port.get("name") or ""):
                    for a, ready in [(a, True) for a in ss.get("addresses") or []] + [(a, False) for a in ss.get("notReadyAddresses") or []]:
                        more = more or len(addrs) == 3
                        if ready:
                            if not more:
                                addrs.append(f"{a.get('ip')}:{p.get('port')}")
                            count += 1
        shown = ",".join(addrs) + (f" + {count - 3} more..." if more else "")
        w.kv(0, "Endpoints", shown if ep is not None else "<none>")
    w.kv(0, "Session Affinity", sp.get("sessionAffinity", "None"))
    if sp.get("type") in ("NodePort", "LoadBalancer"):
        w.kv(0, "External Traffic Policy", sp.get("externalTrafficPolicy", "Cluster"))
    w.kv(0, "Internal Traffic Policy", sp.get("internalTrafficPolicy", "Cluster"))
    return _finish(k, w, s)


def describe_ep(k: K, e: Obj) -> str:
    w = _W()
    m = e["metadata"]
    w.kv(0, "Name", m["name"])
    w.kv(0, "Namespace", m.get("namespace"))
    w.labels(0, "Labels", m.get("labels"))
    w.annotations(0, "Annotations", m.get("annotations"))
    w.raw(0, "Subsets:")
    for ss in e.get("subsets") or []:
        w.kv(1, "Addresses", ",".join(a.get("ip", "") for a in ss.get("addresses") or []) or "<none>")
        w.kv(1, "NotReadyAddresses", ",".join(a.get("ip", "") for a in ss.get("notReadyAddresses") or []) or "<none>")
        if ss.get("ports"):
            w.raw(1, "Ports:")
            w.raw(2, "Name\tPort\tProtocol")
            w.raw(2, "----\t----\t--------")
            for p in ss["ports"]:
                w.raw(2, f"{p.get('name') or '<unset>'}\t{p.get('port')}\t{p.get('protocol', 'TCP')}")
        w.raw(0, "")
    return _finish(k, w, e)


# --------------------------------------------------------------------------- nodes
def describe_node(k: K, n: Obj) -> str:
    w = _W()
    m, sp, st = n["metadata"], n.get("spec") or {}, n.get("status") or {}
    w.kv(0, "Name", m["name"])
    roles = node_roles(n)
    w.kv(0, "Roles", roles)
    w.labels(0, "Labels", m.get("labels"))
    w.annotations(0, "Annotations", m.get("annotations"))
    w.kv(0, "CreationTimestamp", rfc1123(m.get("creationTimestamp")))
    taints = [f"{t.get('key')}{'=' + t['value'] if t.get('value') else ''}:{t.get('effect')}" for t in sp.get("taints") or []]
    _multi(w, 0, "Taints", taints)
    w.kv(0, "Unschedulable", "true" if sp.get("unschedulable") else "false")
    lease = node_lease(n, k.now)["spec"]
    w.raw(0, "Lease:")
    w.kv(1, "HolderIdentity", lease["holderIdentity"])
    w.kv(1, "AcquireTime", "<unset>")
    w.kv(1, "RenewTime", rfc1123(lease["renewTime"][:19] + "Z"))
    conds = st.get("conditions") or []
    w.raw(0, "Conditions:")
    w.raw(1, "Type\tStatus\tLastHeartbeatTime\tLastTransitionTime\tReason\tMessage")
    w.raw(1, "----\t------\t-----------------\t------------------\t------\t-------")
    for c in conds:
        w.raw(1, f"{c.get('type')} \t{c.get('status')} \t{rfc1123(c.get('lastHeartbeatTime'))} \t{rfc1123(c.get('lastTransitionTime'))} \t{c.get('reason', '')} \t{c.get('message', '')}")
    w.raw(0, "Addresses:")
    for a in st.get("addresses") or []:
        w.kv(1, a.get("type"), a.get("address"))
    for title, key in (("Capacity", "capacity"), ("Allocatable", "allocatable")):
        if st.get(key):
            w.raw(0, f"{title}:")
            for rk in sorted(st[key]):
                w.kv(1, rk, canonical(st[key][rk]))
    info = st.get("nodeInfo") or {}
    w.raw(0, "System Info:")
    for title, key in (("Machine ID", "machineID"), ("System UUID", "systemUUID"), ("Boot ID", "bootID"), ("Kernel Version", "kernelVersion"), ("OS Image", "osImage"), ("Operating System", "operatingSystem"), ("Architecture", "architecture"), ("Container Runtime Version", "containerRuntimeVersion"), ("Kubelet Version", "kubeletVersion"), ("Kube-Proxy Version", "kubeProxyVersion")):
        w.kv(1, title, info.get(key, ""))
    if sp.get("podCIDR"):
        w.kv(0, "PodCIDR", sp["podCIDR"])
        w.kv(0, "PodCIDRs", ",".join(sp.get("podCIDRs") or [sp["podCIDR"]]))
    if sp.get("providerID"):
        w.kv(0, "ProviderID", sp["providerID"])
    pods = [p for p in k.api.list("Pod", None, None, None) if (p.get("spec") or {}).get("nodeName") == m["name"] and (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed")]
    alloc = st.get("allocatable") or {}
    cpu_cap = _milli(alloc.get("cpu", "0"))
    mem_cap = _bytes(alloc.get("memory", "0"))
    w.lines.append(f"Non-terminated Pods:\t({len(pods)} in total)")
    # kubectl leaves an empty column after Name ("%s\t%s\t\t..."): two more spaces of padding
    w.raw(1, "Namespace\tName\t\tCPU Requests\tCPU Limits\tMemory Requests\tMemory Limits\tAge")
    w.raw(1, "---------\t----\t\t------------\t----------\t---------------\t-------------\t---")
    tot = [0, 0, 0, 0]
    for p in pods:
        vals = [0, 0, 0, 0]
        for c in (p.get("spec") or {}).get("containers") or []:
            r = c.get("resources") or {}
            vals[0] += _milli((r.get("requests") or {}).get("cpu", "0"))
            vals[1] += _milli((r.get("limits") or {}).get("cpu", "0"))
            vals[2] += _bytes((r.get("requests") or {}).get("memory", "0"))
            vals[3] += _bytes((r.get("limits") or {}).get("memory", "0"))
        tot = [a + b for a, b in zip(tot, vals)]
        cells = [
            format_millicores(vals[0]) + f" ({_pct(vals[0], cpu_cap)}%)",
            format_millicores(vals[1]) + f" ({_pct(vals[1], cpu_cap)}%)",
            format_bytes(vals[2]) + f" ({_pct(vals[2], mem_cap)}%)",
            format_bytes(vals[3]) + f" ({_pct(vals[3], mem_cap)}%)",
        ]
        w.raw(1, f"{p['metadata'].get('namespace')}\t{p['metadata']['name']}\t\t" + "\t".join(cells) + f"\t{age(p['metadata'].get('creationTimestamp'), k.now)}")
    w.raw(0, "Allocated resources:")
    w.raw(1, "(Total limits may be over 100 percent, i.e., overcommitted.)")
    w.raw(1, "Resource\tRequests\tLimits")
    w.raw(1, "--------\t--------\t------")
    w.raw(1, f"cpu\t{format_millicores(tot[0])} ({_pct(tot[0], cpu_cap)}%)\t{format_millicores(tot[1])} ({_pct(tot[1], cpu_cap)}%)")
    w.raw(1, f"memory\t{format_bytes(tot[2])} ({_pct(tot[2], mem_cap)}%)\t{format_bytes(tot[3])} ({_pct(tot[3], mem_cap)}%)")
    # then ephemeral-storage and hugepages-*, when the node reports them allocatable
    for res_name in ["ephemeral-storage"] * ("ephemeral-storage" in alloc) + sorted(r for r in alloc if r.startswith("hugepages-")):
        cap = _bytes(alloc[res_name])
        rq = sum(_bytes(((c.get("resources") or {}).get("requests") or {}).get(res_name, "0")) for p in pods for c in (p.get("spec") or {}).get("containers") or [])
        lm = sum(_bytes(((c.get("resources") or {}).get("limits") or {}).get(res_name, "0")) for p in pods for c in (p.get("spec") or {}).get("containers") or [])
        w.raw(1, f"{res_name}\t{format_bytes(rq)} ({_pct(rq, cap)}%)\t{format_bytes(lm)} ({_pct(lm, cap)}%)")
    return _finish(k, w, n)


def _milli(q: Any) -> int:
    try:
        return cpu_millicores(q)
    except ValueError:
        return 0


def _bytes(q: Any) -> int:
    try:
        return memory_bytes(q)
    except ValueError:
        return 0


def _pct(v: int, cap: int) -> int:
    return int(v * 100 / cap) if cap else 0


# --------------------------------------------------------------------------- config & storage
def describe_ns(k: K, n: Obj) -> str:
    w = _W()
    m = n["metadata"]
    w.kv(0, "Name", m["name"])
    w.labels(0, "Labels", m.get("labels"))
    w.annotations(0, "Annotations", m.get("annotations"))
    w.kv(0, "Status", (n.get("status") or {}).get("phase", "Active"))
    w.raw(0, "")
    for line in quota_section(k, m["name"]):
        w.raw(0, line)
    w.raw(0, "")
    w.raw(0, "No LimitRange resource.")
    return w.render() + "\n"


def describe_cm(k: K, c: Obj) -> str:
    m = c["metadata"]
    w = _W()
    w.kv(0, "Name", m["name"])
    w.kv(0, "Namespace", m.get("namespace"))
    w.labels(0, "Labels", m.get("labels"))
    w.annotations(0, "Annotations", m.get("annotations"))
    head = w.render()
    parts = [head, "", "Data", "===="]
    for key in sorted(c.get("data") or {}):
        parts += [f"{key}:", "----", str(c["data"][key]).rstrip("\n"), ""]
    parts += ["", "BinaryData", "===="]
    for key in sorted(c.get("binaryData") or {}):
        parts.append(f"{key}: {len(c['binaryData'][key]) * 3 // 4} bytes")
    parts.append("")
    ev = _events_block(k, c)
    return "\n".join(parts) + "\n" + ev.replace("Events:\t<none>", "Events:  <none>") + "\n"


def describe_secret(k: K, s: Obj) -> str:
    m = s["metadata"]
    w = _W()
    w.kv(0, "Name", m["name"])
    w.kv(0, "Namespace", m.get("namespace"))
    w.labels(0, "Labels", m.get("labels"))
    w.annotations(0, "Annotations", m.get("annotations"))
    w.raw(0, "")
    w.kv(0, "Type", s.get("type", "Opaque"))
    w.raw(0, "")
    w.raw(0, "Data")
    w.raw(0, "====")
    for key in sorted(s.get("data") or {}):
        w.lines.append(f"{key}:\t{len(s['data'][key]) * 3 // 4 - s['data'][key].count('=')} bytes")
    return w.render() + "\n"


def describe_pvc(k: K, c: Obj) -> str:
    w = _W()
    m, sp, st = c["metadata"], c.get("spec") or {}, c.get("status") or {}
    w.kv(0, "Name", m["name"])
    w.kv(0, "Namespace", m.get("namespace"))
    w.kv(0, "StorageClass", sp.get("storageClassName", ""))
    w.kv(0, "Status", st.get("phase", "Pending"))
    w.kv(0, "Volume", sp.get("volumeName", ""))
    w.labels(0, "Labels", m.get("labels"))
    w.annotations(0, "Annotations", m.get("annotations"))
    w.kv(0, "Finalizers", "[" + " ".join(m.get("finalizers") or []) + "]")
    w.kv(0, "Capacity", (st.get("capacity") or {}).get("storage", ""))
    w.kv(0, "Access Modes", access_modes(st.get("accessModes")))
    w.kv(0, "VolumeMode", sp.get("volumeMode", "Filesystem"))
    users = [p["metadata"]["name"] for p in k.api.list("Pod", m.get("namespace")) if any((v.get("persistentVolumeClaim") or {}).get("claimName") == m["name"] for v in (p.get("spec") or {}).get("volumes") or [])]
    w.kv(0, "Used By", "<none>" if not users else users[0])
    for u in users[1:]:
        w.lines.append(f"\t{u}")
    return _finish(k, w, c)


def describe_pv(k: K, v: Obj) -> str:
    w = _W()
    m, sp, st = v["metadata"], v.get("spec") or {}, v.get("status") or {}
    ref = sp.get("claimRef") or {}
    w.kv(0, "Name", m["name"])
    w.labels(0, "Labels", m.get("labels"))
    w.annotations(0, "Annotations", m.get("annotations"))
    w.kv(0, "Finalizers", "[" + " ".join(m.get("finalizers") or []) + "]")
    w.kv(0, "StorageClass", sp.get("storageClassName", ""))
    w.kv(0, "Status", st.get("phase", "Available"))
    w.kv(0, "Claim", f"{ref.get('namespace')}/{ref.get('name')}" if ref else "")
    w.kv(0, "Reclaim Policy", sp.get("persistentVolumeReclaimPolicy", "Retain"))
    w.kv(0, "Access Modes", access_modes(sp.get("accessModes")))
    w.kv(0, "VolumeMode", sp.get("volumeMode", "Filesystem"))
    w.kv(0, "Capacity", (sp.get("capacity") or {}).get("storage", ""))
    terms = (((sp.get("nodeAffinity") or {}).get("required") or {}).get("nodeSelectorTerms")) or []
    if not terms:
        w.kv(0, "Node Affinity", "<none>")
    else:
        w.kv(0, "Node Affinity", "")
        w.kv(1, "Required Terms", "")
        for i, term in enumerate(terms):
            exprs = [f"{e.get('key')} {e.get('operator', '').lower()} [{', '.join(e.get('values') or [])}]" for e in term.get("matchExpressions") or []]
            exprs += [f"{f.get('key')} {f.get('operator', '').lower()} [{', '.join(f.get('values') or [])}]" for f in term.get("matchFields") or []]
            w.kv(2, f"Term {i}", exprs[0] if exprs else "<none>")
            for e in exprs[1:]:
                w.lines.append(f"    \t{e}")
    w.kv(0, "Message", st.get("message", ""))
    w.raw(0, "Source:")
    # kubectl writes the volume source at LEVEL_2 (four spaces)
    if "hostPath" in sp:
        w.kv(2, "Type", "HostPath (bare host directory volume)")
        w.kv(2, "Path", sp["hostPath"].get("path"))
        w.kv(2, "HostPathType", sp["hostPath"].get("type", ""))
    elif "local" in sp:
        w.kv(2, "Type", "LocalVolume (a persistent volume backed by local storage on a node)")
        w.kv(2, "Path", sp["local"].get("path"))
    elif "csi" in sp:
        w.kv(2, "Type", "CSI (a Container Storage Interface (CSI) volume source)")
        w.kv(2, "Driver", sp["csi"].get("driver"))
        w.kv(2, "FSType", sp["csi"].get("fsType", ""))
        w.kv(2, "VolumeHandle", sp["csi"].get("volumeHandle"))
        w.kv(2, "ReadOnly", str(bool(sp["csi"].get("readOnly"))).lower())
        w.kv(2, "VolumeAttributes", "<none>")
    return _finish(k, w, v)


DESCRIBERS: dict[str, Callable[[K, Obj], str]] = {
    "Pod": describe_pod,
    "Deployment": describe_deploy,
    "ReplicaSet": describe_rs,
    "StatefulSet": describe_sts,
    "Service": describe_svc,
    "Endpoints": describe_ep,
    "Node": describe_node,
    "Namespace": describe_ns,
    "ConfigMap": describe_cm,
    "Secret": describe_secret,
    "PersistentVolumeClaim": describe_pvc,
    "PersistentVolume": describe_pv,
}
# networking.k8s.io kinds (NetworkPolicy, Ingress, IngressClass)
DESCRIBERS.update(NET_DESCRIBERS)
DESCRIBERS.update(SCHED_DESCRIBERS)
DESCRIBERS.update(DESCRIBERS_CP)
DESCRIBERS.update(DESCRIBERS_DS)
DESCRIBERS.update(OPERATOR_DESCRIBERS)


def cmd_describe(k: K) -> None:
    p = k.p
    assert p is not None
    if not p.args:
        raise KubectlError(
            'You must specify the type of resource to describe. Use "kubectl api-resources" for a complete list of supported resources.',
            raw=True,
        )
    groups = resource_args(p.args, allow_all=True)
    docs: list[str] = []
    sel = p.opts.get("selector")
    all_ns = p.opts.get("all-namespaces")
    for kinds, names in groups:
        for info in kinds:
            fn = DESCRIBERS.get(info.kind)
            ns = k.namespace if info.namespaced else None
            if names:
                objs = []
                for n in names:
                    try:
                        objs.append(k.api.get(info.kind, n, ns))
                    except ApiError as exc:
                        if exc.reason == "NotFound" and len(names) == 1 and len(groups) == 1:
                            # kubectl describe falls back to a prefix match on names
                            pref = [o for o in k.api.list(info.kind, ns) if o["metadata"]["name"].startswith(n)]
                            if pref:
                                objs.extend(pref)
                                continue
                        k.fail(str(exc))
            else:
                try:
                    objs = list(k.api.list(info.kind, None if all_ns else ns, sel or None))
                except ValueError as exc:
                    raise KubectlError(str(exc)) from None
                if not objs and not k.err:
                    k.err.append(f"No resources found in {k.namespace} namespace.\n" if info.namespaced and not all_ns else "No resources found\n")
            for o in objs:
                if fn is None:
                    from .printers import to_yaml

                    docs.append(to_yaml(o))
                else:
                    docs.append(fn(k, o))
    # kubectl prints each description (ending in a newline) and "\n\n" before the next: two blank lines between
    k.out.append("\n\n".join(d.rstrip("\n") + "\n" for d in docs))
    k.cost = 3.0
