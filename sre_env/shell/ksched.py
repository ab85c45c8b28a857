"""kubectl get/describe for ResourceQuota, PriorityClass and HorizontalPodAutoscaler.

Columns follow kubectl's printers (quota ``AGE REQUEST LIMIT`` with
``used/hard`` pairs; ``VALUE GLOBAL-DEFAULT AGE PREEMPTIONPOLICY``; the HPA's
``TARGETS`` as ``cpu: <unknown>/50%`` when utilisation cannot be computed),
and the describers' layouts (quota ``Resource Used Hard`` table, the HPA's
metrics line and conditions table). ``quota_section`` is the "Resource Quotas"
block of ``describe namespace``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sre_env.kube.autoscaling import cpu_target

from .tabwriter import tabwrite

if TYPE_CHECKING:
    from .kctx import K

__all__ = ["SCHED_COLUMNS", "SCHED_DESCRIBERS", "hpa_targets", "quota_section"]

Obj = dict[str, Any]


def _age(o: Obj, now: float) -> str:
    from .printers import age

    return age(o["metadata"].get("creationTimestamp"), now)


def _quota_pairs(o: Obj) -> tuple[str, str]:
    hard = (o.get("spec") or {}).get("hard") or {}
    used = (o.get("status") or {}).get("used") or {}
    req, lim = [], []
    for r in sorted(hard):
        pair = f"{r}: {used.get(r, '0')}/{hard[r]}"
        (lim if r.startswith("limits.") else req).append(pair)
    return ", ".join(req), ", ".join(lim)


def _quota(o: Obj, now: float, wide: bool) -> list[str]:
    req, lim = _quota_pairs(o)
    return [_age(o, now), req, lim]


def _pc(o: Obj, now: float, wide: bool) -> list[str]:
    return [str(o.get("value", 0)), "true" if o.get("globalDefault") else "false", _age(o, now), o.get("preemptionPolicy", "PreemptLowerPriority")]


def _current_utilization(o: Obj) -> int | None:
    for m in (o.get("status") or {}).get("currentMetrics") or ():
        cur = ((m.get("resource") or {}).get("current")) or {}
        if m.get("type") == "Resource" and (m.get("resource") or {}).get("name") == "cpu" and cur.get("averageUtilization") is not None:
            return int(cur["averageUtilization"])
    return None


def hpa_targets(o: Obj) -> str:
    target = cpu_target(o)
    if target is None:
        return "<none>"
    cur = _current_utilization(o)
    return f"cpu: {'<unknown>' if cur is None else f'{cur}%'}/{target}%"


def _hpa(o: Obj, now: float, wide: bool) -> list[str]:
    sp, st = o.get("spec") or {}, o.get("status") or {}
    ref = sp.get("scaleTargetRef") or {}
    return [f"{ref.get('kind', '')}/{ref.get('name', '')}", hpa_targets(o), str(sp.get("minReplicas", 1)), str(sp.get("maxReplicas", "")), str(st.get("currentReplicas", 0)), _age(o, now)]


#: kind -> (headers, extra wide headers, row function), merged into printers.COLUMNS
SCHED_COLUMNS = {
    "ResourceQuota": (["AGE", "REQUEST", "LIMIT"], [], _quota),
    "PriorityClass": (["VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"], [], _pc),
    "HorizontalPodAutoscaler": (["REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"], [], _hpa),
}


def _quota_rows(o: Obj, dashes: str) -> list[str]:
    hard = (o.get("spec") or {}).get("hard") or {}
    used = (o.get("status") or {}).get("used") or {}
    rows = ["Resource\tUsed\tHard", f"--------\t{dashes}\t{dashes}"]
    rows += [f"{r}\t{used.get(r, '0')}\t{hard[r]}" for r in sorted(hard)]
    return rows


def describe_quota(k: "K", o: Obj) -> str:
    m = o["metadata"]
    lines = [f"Name:\t{m['name']}", f"Namespace:\t{m.get('namespace', '')}"]
    scopes = (o.get("spec") or {}).get("scopes")
    if scopes:
        lines.append("Scopes:\t" + ", ".join(scopes))
    lines += _quota_rows(o, "----")
    return tabwrite("\n".join(lines), 0, 2) + "\n"


def quota_section(k: "K", namespace: str) -> list[str]:
    """``describe namespace``'s quota block (lines at indent 0), or the "none" line."""
    quotas = k.api.list("ResourceQuota", namespace)
    if not quotas:
        return ["No resource quota."]
    out = ["Resource Quotas"]
    for q in quotas:
        block = [f"Name:\t{q['metadata']['name']}"] + _quota_rows(q, "---")
        out += ["  " + line for line in tabwrite("\n".join(block), 0, 2).split("\n")]
    return out


def describe_pc(k: "K", o: Obj) -> str:
    from .kdescribe import _W, _finish

    w = _W()
    w.kv(0, "Name", o["metadata"]["name"])
    w.kv(0, "Value", o.get("value", 0))
    w.kv(0, "GlobalDefault", "true" if o.get("globalDefault") else "false")
    w.kv(0, "PreemptionPolicy", o.get("preemptionPolicy", "PreemptLowerPriority"))
    w.kv(0, "Description", o.get("description", ""))
    w.annotations(0, "Annotations", o["metadata"].get("annotations"))
    return _finish(k, w, o)


def describe_hpa(k: "K", o: Obj) -> str:
    from .kdescribe import _W, _finish, rfc1123

    m, sp, st = o["metadata"], o.get("spec") or {}, o.get("status") or {}
    ref = sp.get("scaleTargetRef") or {}
    w = _W()
    w.kv(0, "Name", m["name"])
    w.kv(0, "Namespace", m.get("namespace", ""))
    w.labels(0, "Labels", m.get("labels"))
    w.annotations(0, "Annotations", m.get("annotations"))
    w.kv(0, "CreationTimestamp", rfc1123(m.get("creationTimestamp")))
    w.kv(0, "Reference", f"{ref.get('kind', '')}/{ref.get('name', '')}")
    w.kv(0, "Metrics", "( current / target )")
    target = cpu_target(o)
    if target is not None:
        cur = _current_utilization(o)
        value = next(((((mm.get("resource") or {}).get("current")) or {}).get("averageValue") for mm in st.get("currentMetrics") or () if mm.get("type") == "Resource"), None)
        shown = "<unknown>" if cur is None else f"{cur}% ({value})"
        w.kv(1, "resource cpu on pods  (as a percentage of request)", f"{shown} / {target}%")
    w.kv(0, "Min replicas", sp.get("minReplicas", 1))
    w.kv(0, "Max replicas", sp.get("maxReplicas", ""))
    w.kv(0, f"{ref.get('kind', 'Deployment')} pods", f"{st.get('currentReplicas', 0)} current / {st.get('desiredReplicas', 0)} desired")
    conds = st.get("conditions") or []
    if conds:
        w.raw(0, "Conditions:")
        w.raw(1, "Type\tStatus\tReason\tMessage")
        w.raw(1, "----\t------\t------\t-------")
        for c in conds:
            w.raw(1, f"{c.get('type', '')}\t{c.get('status', '')}\t{c.get('reason', '')}\t{c.get('message', '')}")
    return _finish(k, w, o)


SCHED_DESCRIBERS = {
    "ResourceQuota": describe_quota,
    "PriorityClass": describe_pc,
    "HorizontalPodAutoscaler": describe_hpa,
}


# --------------------------------------------------------------------------- imperative commands
def _name(k: "K", verb: str) -> str:
    from .spec import UsageError

    assert k.p is not None
    if len(k.p.args) != 1:
        raise UsageError(f"exactly one NAME is required, got {len(k.p.args)}", verb, flag_error=False)
    return k.p.args[0]


def cmd_create_priorityclass(k: "K") -> None:
    """``kubectl create priorityclass NAME --value=N [--global-default] [--description=..] [--preemption-policy=..]``."""
    from .spec import KubectlError

    name = _name(k, "create priorityclass")
    policy = k.opts.get("preemption-policy") or "PreemptLowerPriority"
    if policy not in ("PreemptLowerPriority", "Never"):
        raise KubectlError(f'PriorityClass.scheduling.k8s.io "{name}" is invalid: preemptionPolicy: Unsupported value: "{policy}": supported values: "Never", "PreemptLowerPriority"')
    obj = {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": int(k.opts.get("value") or 0),
        "globalDefault": bool(k.opts.get("global-default")),
        "description": k.opts.get("description") or "",
        "preemptionPolicy": policy,
    }
    k.create(obj)
    k.line(f"priorityclass.scheduling.k8s.io/{name} created")
    k.cost = 5.0


def cmd_create_quota(k: "K") -> None:
    """``kubectl create quota NAME --hard=pods=10,requests.cpu=2``."""
    from .spec import KubectlError

    name = _name(k, "create quota")
    hard: dict[str, str] = {}
    for part in (k.opts.get("hard") or "").split(","):
        if not part:
            continue
        key, eq, value = part.partition("=")
        if not eq or not key or not value:
            raise KubectlError(f"invalid resource quota specification {part!r}; expected key=value")
        hard[key.strip()] = value.strip()
    spec: Obj = {"hard": hard}
    if k.opts.get("scopes"):
        spec["scopes"] = [s for s in str(k.opts["scopes"]).split(",") if s]
    k.create({"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": name, "namespace": k.namespace}, "spec": spec})
    k.line(f"resourcequota/{name} created")
    k.cost = 5.0


def cmd_autoscale(k: "K") -> None:
    """``kubectl autoscale deployment/NAME --max=N [--min=N] [--cpu-percent=P] [--name=HPA]``: an autoscaling/v2 HPA."""
    from .kctx import resource_args
    from .spec import KubectlError

    assert k.p is not None
    groups = resource_args(k.p.args)
    targets = [(info, n) for kinds, names in groups for info in kinds for n in names]
    if len(targets) != 1:
        raise KubectlError("exactly one resource (TYPE NAME or TYPE/NAME) is required")
    info, target = targets[0]
    if info.kind not in ("Deployment", "ReplicaSet", "StatefulSet"):
        raise KubectlError(f"cannot autoscale a {info.kind}: {info.resource} is not scalable")
    k.api.get(info.kind, target, k.namespace)
    maximum = int(k.opts.get("max") or -1)
    minimum = int(k.opts.get("min") or -1)
    if maximum < 1:
        raise KubectlError("--max=MAXPODS is required and must be at least 1")
    spec: Obj = {"scaleTargetRef": {"apiVersion": info.api_version, "kind": info.kind, "name": target}, "maxReplicas": maximum}
    if minimum > 0:
        if minimum > maximum:
            raise KubectlError(f"cannot autoscale a resource with --min={minimum} greater than --max={maximum}")
        spec["minReplicas"] = minimum
    else:
        spec["minReplicas"] = 1
    # the API server defaults an autoscaling/v2 HPA without metrics to 80 % CPU
    cpu = int(k.opts.get("cpu-percent") or -1)
    cpu = cpu if cpu > 0 else 80
    if cpu > 0:
        spec["metrics"] = [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": cpu}}}]
    name = k.opts.get("name") or target
    k.create({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": name, "namespace": k.namespace}, "spec": spec})
    k.line(f"horizontalpodautoscaler.autoscaling/{name} autoscaled")
    k.cost = 5.0
