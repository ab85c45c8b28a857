"""kubectl's human-readable table columns for each kind (pkg/printers/internalversion/printers.go).

One row function per kind, returning the cells kubectl would print, with the
same derived values (pod STATUS from container states, node STATUS from the
Ready condition, service PORT(S), endpoint lists capped at three ...).
"""

from __future__ import annotations

import calendar
import json
from functools import lru_cache
from typing import Any, Callable

import yaml

from sre_env.kube.kinds import KindInfo
from sre_env.kube.timefmt import EPOCH, human_age, parse_iso

from .knet import NET_COLUMNS
from .koperator import OPERATOR_COLUMNS
from .ksched import SCHED_COLUMNS

__all__ = ["COLUMNS", "pod_status", "age", "format_labels", "table", "to_yaml", "to_json", "qualified"]

Obj = dict[str, Any]
RowFn = Callable[[Obj, float, bool], list[str]]
_EPOCH_S = calendar.timegm(EPOCH.utctimetuple())

try:  # the C dumper is ~10x faster; fall back to pure Python where libyaml is absent
    _Dumper: Any = yaml.CSafeDumper
except AttributeError:  # pragma: no cover
    _Dumper = yaml.SafeDumper


@lru_cache(maxsize=8192)
def _seconds(ts: str) -> float:
    """parse_iso, cached: the same few timestamps recur on every listing, and strptime is slow."""
    if len(ts) == 20 and ts[4] == "-" and ts[10] == "T" and ts[19] == "Z":
        try:
            return calendar.timegm((int(ts[0:4]), int(ts[5:7]), int(ts[8:10]), int(ts[11:13]), int(ts[14:16]), int(ts[17:19]), 0, 0, 0)) - _EPOCH_S
        except ValueError:
            pass
    return parse_iso(ts)


def age(ts: str | None, now: float) -> str:
    if not ts:
        return "<unknown>"
    try:
        return human_age(now - _seconds(ts))
    except ValueError:
        return "<invalid>"


def format_labels(labels: dict[str, str] | None) -> str:
    if not labels:
        return "<none>"
    return ",".join(f"{k}={v}" for k, v in sorted(labels.items()))


def qualified(info: KindInfo) -> str:
    """``pod``, ``deployment.apps``: the prefix of ``-o name`` and multi-kind tables."""
    return f"{info.singular}.{info.group}" if info.group else info.singular


# --------------------------------------------------------------------------- pods
def pod_status(pod: Obj, now: float) -> tuple[str, str, str]:
    """(READY, STATUS, RESTARTS) exactly as kubectl's printPod derives them."""
    spec = pod.get("spec") or {}
    st = pod.get("status") or {}
    phase = st.get("phase") or ""
    reason = st.get("reason") or phase
    conds = st.get("conditions") or ()
    ready = 0
    restarts = 0
    last_restart = ""
    inits = spec.get("initContainers")
    total = len(spec.get("containers") or ())
    initializing = False
    init_statuses = st.get("initContainerStatuses")
    for cond in conds:
        if cond.get("type") == "PodScheduled" and cond.get("reason") == "SchedulingGated":
            reason = "SchedulingGated"
    side_restarts = 0
    side_last = ""
    if inits:
        restartable = {c.get("name") for c in inits if c.get("restartPolicy") == "Always"}
        total += len(restartable)
        for i, cs in enumerate(init_statuses or ()):
            restarts += cs.get("restartCount") or 0
            term_last = ((cs.get("lastState") or {}).get("terminated") or {}).get("finishedAt") or ""
            if term_last > last_restart:
                last_restart = term_last
            is_side = cs.get("name") in restartable
            if is_side:
                side_restarts += cs.get("restartCount") or 0
                if term_last > side_last:
                    side_last = term_last
            state = cs.get("state") or {}
            term = state.get("terminated")
            wait = state.get("waiting")
            if term is not None and term.get("exitCode", 0) == 0:
                continue
            if is_side and cs.get("started"):
                if cs.get("ready"):
                    ready += 1
                continue
            if term is not None:
                if not term.get("reason"):
                    reason = f"Init:Signal:{term['signal']}" if term.get("signal") else f"Init:ExitCode:{term.get('exitCode', 0)}"
                else:
                    reason = "Init:" + term["reason"]
            elif wait is not None and wait.get("reason") and wait.get("reason") != "PodInitializing":
                reason = "Init:" + wait["reason"]
            else:
                reason = f"Init:{i}/{len(inits)}"
            initializing = True
            break
    if not initializing or any(c.get("type") == "Initialized" and c.get("status") == "True" for c in conds):
        restarts = side_restarts
        last_restart = side_last
        has_running = False
        for cs in reversed(st.get("containerStatuses") or ()):
            rc = cs.get("restartCount")
            if rc:
                restarts += rc
            last = cs.get("lastState")
            if last:
                term_last = (last.get("terminated") or {}).get("finishedAt") or ""
                if term_last > last_restart:
                    last_restart = term_last
            state = cs.get("state") or {}
            wait = state.get("waiting")
            term = state.get("terminated")
            if wait is not None and wait.get("reason"):
                reason = wait["reason"]
            elif term is not None and term.get("reason"):
                reason = term["reason"]
            elif term is not None:
                reason = f"Signal:{term['signal']}" if term.get("signal") else f"ExitCode:{term.get('exitCode', 0)}"
            elif cs.get("ready") and state.get("running") is not None:
                has_running = True
                ready += 1
        if reason == "Completed" and has_running:
            ready_cond = any(c.get("type") == "Ready" and c.get("status") == "True" for c in conds)
            reason = "Running" if ready_cond else "NotReady"
    if pod["metadata"].get("deletionTimestamp"):
        if st.get("reason") == "NodeLost":
            reason = "Unknown"
        elif phase not in ("Succeeded", "Failed"):
            reason = "Terminating"
    if restarts and last_restart:
        return f"{ready}/{total}", reason, f"{restarts} ({age(last_restart, now)} ago)"
    return f"{ready}/{total}", reason, str(restarts)


def _pod(o: Obj, now: float, wide: bool) -> list[str]:
    ready, status, restarts = pod_status(o, now)
    row = [ready, status, restarts, age(o["metadata"].get("creationTimestamp"), now)]
    if wide:
        st = o.get("status") or {}
        ips = st.get("podIPs") or []
        ip = (ips[0].get("ip") if ips else st.get("podIP")) or "<none>"
        gates = (o.get("spec") or {}).get("readinessGates") or []
        if gates:
            conds = {c.get("type"): c.get("status") for c in st.get("conditions") or []}
            gate_str = f"{sum(1 for g in gates if conds.get(g.get('conditionType')) == 'True')}/{len(gates)}"
        else:
            gate_str = "<none>"
        row += [ip, (o.get("spec") or {}).get("nodeName") or "<none>", st.get("nominatedNodeName") or "<none>", gate_str]
    return row


# --------------------------------------------------------------------------- workloads
def _containers_images(o: Obj) -> list[str]:
    cs = (((o.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers") or []
    return [",".join(c.get("name", "") for c in cs), ",".join(c.get("image", "") for c in cs)]


def _selector(o: Obj) -> str:
    sel = (o.get("spec") or {}).get("selector") or {}
    parts = [f"{k}={v}" for k, v in sorted((sel.get("matchLabels") or {}).items())]
    for e in sel.get("matchExpressions") or []:
        op = e.get("operator", "")
        if op in ("In", "NotIn"):
            parts.append(f"{e.get('key')} {op.lower()} ({','.join(sorted(e.get('values') or []))})")
        elif op == "Exists":
            parts.append(e.get("key", ""))
        else:
            parts.append("!" + e.get("key", ""))
    return ",".join(parts) or "<none>"


def _deploy(o: Obj, now: float, wide: bool) -> list[str]:
    sp, st = o.get("spec") or {}, o.get("status") or {}
    desired = sp.get("replicas", 1)
    row = [f"{st.get('readyReplicas', 0)}/{desired}", str(st.get("updatedReplicas", 0)), str(st.get("availableReplicas", 0)), age(o["metadata"].get("creationTimestamp"), now)]
    if wide:
        row += _containers_images(o) + [_selector(o)]
    return row


def _rs(o: Obj, now: float, wide: bool) -> list[str]:
    sp, st = o.get("spec") or {}, o.get("status") or {}
    row = [str(sp.get("replicas", 1)), str(st.get("replicas", 0)), str(st.get("readyReplicas", 0)), age(o["metadata"].get("creationTimestamp"), now)]
    if wide:
        row += _containers_images(o) + [_selector(o)]
    return row


def _sts(o: Obj, now: float, wide: bool) -> list[str]:
    sp, st = o.get("spec") or {}, o.get("status") or {}
    row = [f"{st.get('readyReplicas', 0)}/{sp.get('replicas', 1)}", age(o["metadata"].get("creationTimestamp"), now)]
    if wide:
        row += _containers_images(o)
    return row


def _ds(o: Obj, now: float, wide: bool) -> list[str]:
    st = o.get("status") or {}
    nsel = (((o.get("spec") or {}).get("template") or {}).get("spec") or {}).get("nodeSelector")
    row = [str(st.get(k, 0)) for k in ("desiredNumberScheduled", "currentNumberScheduled", "numberReady", "updatedNumberScheduled", "numberAvailable")]
    row += [format_labels(nsel), age(o["metadata"].get("creationTimestamp"), now)]
    if wide:
        row += _containers_images(o) + [_selector(o)]
    return row


# --------------------------------------------------------------------------- networking
def service_ports(o: Obj) -> str:
    ports = (o.get("spec") or {}).get("ports") or []
    out = []
    for p in ports:
        proto = p.get("protocol", "TCP")
        out.append(f"{p.get('port')}:{p['nodePort']}/{proto}" if p.get("nodePort") else f"{p.get('port')}/{proto}")
    return ",".join(out) or "<none>"


def _external_ip(o: Obj) -> str:
    sp = o.get("spec") or {}
    typ = sp.get("type", "ClusterIP")
    ext = sp.get("externalIPs") or []
    if typ in ("ClusterIP", "NodePort"):
        return ",".join(ext) or "<none>"
    if typ == "LoadBalancer":
        ing = ((o.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
        ips = [i.get("ip") or i.get("hostname") for i in ing if i.get("ip") or i.get("hostname")]
        ips += ext
        return ",".join(ips) or "<pending>"
    if typ == "ExternalName":
        return sp.get("externalName", "")
    return "<unknown>"


def _svc(o: Obj, now: float, wide: bool) -> list[str]:
    sp = o.get("spec") or {}
    row = [sp.get("type", "ClusterIP"), sp.get("clusterIP") or "<none>", _external_ip(o), service_ports(o), age(o["metadata"].get("creationTimestamp"), now)]
    if wide:
        row.append(format_labels(sp.get("selector")))
    return row


def format_endpoints(o: Obj, limit: int = 3) -> str:
    items: list[str] = []
    count = 0
    for ss in o.get("subsets") or []:
        addrs = ss.get("addresses") or []
        ports = ss.get("ports") or []
        if not ports:
            for a in addrs:
                if len(items) < limit:
                    items.append(a.get("ip", ""))
                count += 1
        for p in ports:
            for a in addrs:
                if len(items) < limit:
                    items.append(f"{a.get('ip')}:{p.get('port')}")
                count += 1
    if not items:
        return "<none>"
    s = ",".join(items)
    return f"{s} + {count - limit} more..." if count > limit else s


def _ep(o: Obj, now: float, wide: bool) -> list[str]:
    return [format_endpoints(o), age(o["metadata"].get("creationTimestamp"), now)]


# --------------------------------------------------------------------------- nodes
def node_status(o: Obj) -> str:
    status = []
    for c in (o.get("status") or {}).get("conditions") or []:
        if c.get("type") == "Ready":
            status.append("Ready" if c.get("status") == "True" else "NotReady")
    if not status:
        status.append("Unknown")
    if (o.get("spec") or {}).get("unschedulable"):
        status.append("SchedulingDisabled")
    return ",".join(status)


def node_roles(o: Obj) -> str:
    roles = set()
    for k, v in (o["metadata"].get("labels") or {}).items():
        if k.startswith("node-role.kubernetes.io/"):
            roles.add(k.split("/", 1)[1])
        elif k == "kubernetes.io/role" and v:
            roles.add(v)
    return ",".join(sorted(r for r in roles if r)) or "<none>"


def _node(o: Obj, now: float, wide: bool) -> list[str]:
    st = o.get("status") or {}
    info = st.get("nodeInfo") or {}
    row = [node_status(o), node_roles(o), age(o["metadata"].get("creationTimestamp"), now), info.get("kubeletVersion", "")]
    if wide:
        addrs = st.get("addresses") or []
        internal = next((a["address"] for a in addrs if a.get("type") == "InternalIP"), "<none>")
        external = next((a["address"] for a in addrs if a.get("type") == "ExternalIP"), "<none>")
        row += [internal, external, info.get("osImage", "<unknown>"), info.get("kernelVersion", "<unknown>"), info.get("containerRuntimeVersion", "<unknown>")]
    return row


# --------------------------------------------------------------------------- config & storage
def _ns(o: Obj, now: float, wide: bool) -> list[str]:
    return [(o.get("status") or {}).get("phase", "Active"), age(o["metadata"].get("creationTimestamp"), now)]


def _cm(o: Obj, now: float, wide: bool) -> list[str]:
    return [str(len(o.get("data") or {}) + len(o.get("binaryData") or {})), age(o["metadata"].get("creationTimestamp"), now)]


def _secret(o: Obj, now: float, wide: bool) -> list[str]:
    return [o.get("type", "Opaque"), str(len(o.get("data") or {}) + len(o.get("stringData") or {})), age(o["metadata"].get("creationTimestamp"), now)]


def _sa(o: Obj, now: float, wide: bool) -> list[str]:
    return [str(len(o.get("secrets") or [])), age(o["metadata"].get("creationTimestamp"), now)]


_MODES = {"ReadWriteOnce": "RWO", "ReadOnlyMany": "ROX", "ReadWriteMany": "RWX", "ReadWriteOncePod": "RWOP"}


def access_modes(modes: list[str] | None) -> str:
    return ",".join(_MODES.get(m, m) for m in modes or [])


def _pvc(o: Obj, now: float, wide: bool) -> list[str]:
    sp, st = o.get("spec") or {}, o.get("status") or {}
    phase = st.get("phase", "Pending")
    if (o.get("metadata") or {}).get("deletionTimestamp"):
        phase = "Terminating"
    bound = bool(sp.get("volumeName"))
    cap = (st.get("capacity") or {}).get("storage", "") if bound else ""
    row = [phase, sp.get("volumeName", ""), cap, access_modes(st.get("accessModes")) if bound else "", sp.get("storageClassName") or "<unset>", sp.get("volumeAttributesClassName") or "<unset>", age(o["metadata"].get("creationTimestamp"), now)]
    if wide:
        row.append(sp.get("volumeMode", "Filesystem"))
    return row


def _pv(o: Obj, now: float, wide: bool) -> list[str]:
    sp, st = o.get("spec") or {}, o.get("status") or {}
    ref = sp.get("claimRef") or {}
    claim = f"{ref.get('namespace')}/{ref.get('name')}" if ref else ""
    row = [(sp.get("capacity") or {}).get("storage", ""), access_modes(sp.get("accessModes")), sp.get("persistentVolumeReclaimPolicy", "Retain"), st.get("phase", "Available"), claim, sp.get("storageClassName", ""), sp.get("volumeAttributesClassName") or "<unset>", st.get("reason", ""), age(o["metadata"].get("creationTimestamp"), now)]
    if wide:
        row.append(sp.get("volumeMode", "Filesystem"))
    return row


def _sc(o: Obj, now: float, wide: bool) -> list[str]:
    return [o.get("provisioner", ""), o.get("reclaimPolicy", "Delete"), o.get("volumeBindingMode", "Immediate"), "true" if o.get("allowVolumeExpansion") else "false", age(o["metadata"].get("creationTimestamp"), now)]


def _event(o: Obj, now: float, wide: bool) -> list[str]:
    first = age(o.get("firstTimestamp") or o.get("eventTime"), now)
    last = age(o.get("lastTimestamp"), now) if o.get("lastTimestamp") else first
    inv = o.get("involvedObject") or {}
    target = f"{inv.get('kind', '').lower()}/{inv['name']}" if inv.get("name") else inv.get("kind", "").lower()
    msg = (o.get("message") or "").strip()
    if wide:
        src = o.get("source") or {}
        source = src.get("component", "") + (f", {src['host']}" if src.get("host") else "")
        return [last, o.get("type", ""), o.get("reason", ""), target, inv.get("fieldPath", ""), source, msg, first, str(o.get("count") or 1), o["metadata"]["name"]]
    return [last, o.get("type", ""), o.get("reason", ""), target, msg]


#: kind -> (headers, extra wide headers, row function). NAME is always the first column.
COLUMNS: dict[str, tuple[list[str], list[str], RowFn]] = {
    "Pod": (["READY", "STATUS", "RESTARTS", "AGE"], ["IP", "NODE", "NOMINATED NODE", "READINESS GATES"], _pod),
    "Deployment": (["READY", "UP-TO-DATE", "AVAILABLE", "AGE"], ["CONTAINERS", "IMAGES", "SELECTOR"], _deploy),
    "ReplicaSet": (["DESIRED", "CURRENT", "READY", "AGE"], ["CONTAINERS", "IMAGES", "SELECTOR"], _rs),
    "StatefulSet": (["READY", "AGE"], ["CONTAINERS", "IMAGES"], _sts),
    "DaemonSet": (["DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE", "NODE SELECTOR", "AGE"], ["CONTAINERS", "IMAGES", "SELECTOR"], _ds),
    "Service": (["TYPE", "CLUSTER-IP", "EXTERNAL-IP", "PORT(S)", "AGE"], ["SELECTOR"], _svc),
    "Endpoints": (["ENDPOINTS", "AGE"], [], _ep),
    "Node": (["STATUS", "ROLES", "AGE", "VERSION"], ["INTERNAL-IP", "EXTERNAL-IP", "OS-IMAGE", "KERNEL-VERSION", "CONTAINER-RUNTIME"], _node),
    "Namespace": (["STATUS", "AGE"], [], _ns),
    "ConfigMap": (["DATA", "AGE"], [], _cm),
    "Secret": (["TYPE", "DATA", "AGE"], [], _secret),
    "ServiceAccount": (["SECRETS", "AGE"], [], _sa),
    "PersistentVolumeClaim": (["STATUS", "VOLUME", "CAPACITY", "ACCESS MODES", "STORAGECLASS", "VOLUMEATTRIBUTESCLASS", "AGE"], ["VOLUMEMODE"], _pvc),
    "PersistentVolume": (["CAPACITY", "ACCESS MODES", "RECLAIM POLICY", "STATUS", "CLAIM", "STORAGECLASS", "VOLUMEATTRIBUTESCLASS", "REASON", "AGE"], ["VOLUMEMODE"], _pv),
    "StorageClass": (["PROVISIONER", "RECLAIMPOLICY", "VOLUMEBINDINGMODE", "ALLOWVOLUMEEXPANSION", "AGE"], [], _sc),
}
# networking.k8s.io kinds (sre_env.shell.knet)
COLUMNS.update(NET_COLUMNS)
# quotas, priority classes, autoscalers (sre_env.shell.ksched)
COLUMNS.update(SCHED_COLUMNS)
# custom resources of modelled operators (sre_env.shell.koperator)
COLUMNS.update(OPERATOR_COLUMNS)
_EVENT_HEADERS = ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
_EVENT_WIDE = ["LAST SEEN", "TYPE", "REASON", "OBJECT", "SUBOBJECT", "SOURCE", "MESSAGE", "FIRST SEEN", "COUNT", "NAME"]


def table(
    kind: str,
    objs: list[Obj],
    now: float,
    *,
    wide: bool = False,
    namespace_col: bool = False,
    show_labels: bool = False,
    headers: bool = True,
    name_prefix: str = "",
) -> str:
    """Render a kubectl table (without trailing newline) for one kind."""
    if kind == "Event":
        head = list(_EVENT_WIDE if wide else _EVENT_HEADERS)
        fn: RowFn = _event
        named = False
    else:
        base, extra, fn = COLUMNS[kind]
        head = ["NAME", *base, *(extra if wide else [])]
        named = True
    if namespace_col:
        head.insert(0, "NAMESPACE")
    if show_labels:
        head.append("LABELS")
    rows: list[list[str]] = [head] if headers else []
    for o in objs:
        meta = o["metadata"]
        cells = fn(o, now, wide)
        if named:
            cells = [name_prefix + meta.get("name", ""), *cells]
        if namespace_col:
            cells = [meta.get("namespace", ""), *cells]
        if show_labels:
            cells.append(format_labels(meta.get("labels")))
        rows.append(cells)
    return _align(rows)


def _align(rows: list[list[str]]) -> str:
    """tabwriter(minwidth 6, padding 3) for a uniform table, without the split/join round trip."""
    if not rows:
        return ""
    n = len(rows[0]) - 1
    widths = [6] * n
    for r in rows:
        for j in range(n):
            w = len(r[j]) + 3
            if w > widths[j]:
                widths[j] = w
    return "\n".join("".join([r[j].ljust(widths[j]) for j in range(n)]) + r[n] for r in rows)


_YAML_CACHE: dict[str, str] = {}


def to_yaml(obj: Any) -> str:
    """YAML as kubectl prints it (keys sorted, block style).

    PyYAML's representer is slow; the text is cached by the object's exact JSON
    (cheap to compute), so identical objects across steps and episodes render once
    and a changed object can never be served stale text.
    """
    try:
        key = json.dumps(obj, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError):
        return _dump_yaml(obj)
    text = _YAML_CACHE.get(key)
    if text is None:
        if len(_YAML_CACHE) > 1024:
            _YAML_CACHE.clear()
        text = _YAML_CACHE[key] = _dump_yaml(obj)
    return text


_OTHER_SCALARS = frozenset(f"tag:yaml.org,2002:{t}" for t in ("int", "float", "bool", "null", "timestamp"))


def _str_block(dumper: Any, value: str) -> Any:
    """Multi-line strings as literal blocks (``|``), as kubectl's go-yaml prints ConfigMap files."""
    if "\n" in value:
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style="|")
    if value in ("", "y", "Y", "n", "N") or dumper.resolve(yaml.ScalarNode, value, (True, False)) in _OTHER_SCALARS:
        # go-yaml double-quotes a string that would read back as another type: value: "1", "true", ""
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style='"')
    return dumper.represent_scalar("tag:yaml.org,2002:str", value)


yaml.add_representer(str, _str_block, Dumper=_Dumper)


def _dump_yaml(obj: Any) -> str:
    return yaml.dump(obj, Dumper=_Dumper, sort_keys=True, default_flow_style=False, width=1 << 20, allow_unicode=True)


def to_json(obj: Any) -> str:
    return json.dumps(obj, indent=4, sort_keys=True, ensure_ascii=False)


# control-plane kinds (Jobs, CronJobs, webhooks, RBAC) live in their own module
from .printers_cp import COLUMNS_CP as _COLUMNS_CP  # noqa: E402

COLUMNS.update(_COLUMNS_CP)
