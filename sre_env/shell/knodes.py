"""Node maintenance verbs: cordon, uncordon, drain (cordon + evictions), taint."""

from __future__ import annotations

from typing import Any

from ..errors import ApiError
from .kctx import K, resolve_type
from .spec import KubectlError, UsageError

__all__ = ["cmd_cordon", "cmd_uncordon", "cmd_drain", "cmd_taint"]

Obj = dict[str, Any]


def _nodes(k: K, verb: str) -> list[Obj]:
    p = k.p
    assert p is not None
    names = [a.split("/", 1)[1] if a.startswith(("node/", "nodes/", "no/")) else a for a in p.args]
    if p.opts.get("selector"):
        return list(k.api.list("Node", None, p.opts["selector"]))
    if not names:
        raise UsageError("USAGE: " + verb + " NODE [flags]", verb, flag_error=False)
    out = []
    for n in names:
        out.append(k.api.get("Node", n))
    return out


def _set_unschedulable(k: K, node: Obj, value: bool) -> str:
    name = node["metadata"]["name"]
    cur = bool((node.get("spec") or {}).get("unschedulable"))
    if cur == value:
        return f"node/{name} already {'cordoned' if value else 'uncordoned'}"
    k.patch("Node", name, None, {"spec": {"unschedulable": True if value else None}}, "merge")
    return f"node/{name} {'cordoned' if value else 'uncordoned'}"


def cmd_cordon(k: K) -> None:
    for n in _nodes(k, "cordon"):
        k.line(_set_unschedulable(k, n, True))
    k.cost = 4.0


def cmd_uncordon(k: K) -> None:
    for n in _nodes(k, "uncordon"):
        k.line(_set_unschedulable(k, n, False))
    k.cost = 4.0


def _controller(pod: Obj) -> dict[str, Any] | None:
    for r in pod["metadata"].get("ownerReferences") or []:
        if r.get("controller"):
            return r
    return None


def cmd_drain(k: K) -> None:
    o = k.opts
    nodes = _nodes(k, "drain")
    for node in nodes:
        name = node["metadata"]["name"]
        k.line(_set_unschedulable(k, node, True).replace("already cordoned", "already cordoned"))
        pods = [p for p in k.api.list("Pod", None, o.get("pod-selector") or None) if (p.get("spec") or {}).get("nodeName") == name]
        evict: list[Obj] = []
        ds_pods: list[str] = []
        errs: dict[str, list[str]] = {}
        warns: dict[str, list[str]] = {}
        for p in pods:
            ref = f"{p['metadata'].get('namespace')}/{p['metadata']['name']}"
            phase = (p.get("status") or {}).get("phase")
            if "kubernetes.io/config.mirror" in (p["metadata"].get("annotations") or {}):
                continue
            ctl = _controller(p)
            if phase in ("Succeeded", "Failed"):
                evict.append(p)
                continue
            if ctl and ctl.get("kind") == "DaemonSet":
                if o.get("ignore-daemonsets"):
                    ds_pods.append(ref)
                else:
                    errs.setdefault("cannot delete DaemonSet-managed Pods (use --ignore-daemonsets to ignore)", []).append(ref)
                continue
            if ctl is None:
                if o.get("force"):
                    warns.setdefault("deleting Pods that declare no controller", []).append(ref)
                else:
                    errs.setdefault("cannot delete Pods that declare no controller (use --force to override)", []).append(ref)
                    continue
            if any("emptyDir" in v for v in (p.get("spec") or {}).get("volumes") or []):
                if o.get("delete-emptydir-data"):
                    warns.setdefault("deleting Pods with local storage", []).append(ref)
                else:
                    errs.setdefault("cannot delete Pods with local storage (use --delete-emptydir-data to override)", []).append(ref)
                    continue
            evict.append(p)
        if errs:
            detail = "; ".join(f"{msg}: {', '.join(refs)}" for msg, refs in errs.items())
            k.fail(f'error: unable to drain node "{name}" due to error: {detail}, continuing command...')
            k.fail(f"There are pending nodes to be drained:\n {name}")
            for msg, refs in errs.items():
                k.fail(f"{msg}: {', '.join(refs)}")
            continue
        if ds_pods:
            warns = {"ignoring DaemonSet-managed Pods": ds_pods, **warns}
        if warns:
            k.err.append("Warning: " + "; ".join(f"{m}: {', '.join(r)}" for m, r in warns.items()) + "\n")
        for p in evict:
            k.line(f"evicting pod {p['metadata'].get('namespace')}/{p['metadata']['name']}")
        for p in evict:
            try:
                k.api.evict(p["metadata"]["name"], p["metadata"].get("namespace") or "default")
                k.mutated = True
            except ApiError as exc:
                k.fail(f"error when evicting pods/\"{p['metadata']['name']}\" -n \"{p['metadata'].get('namespace')}\" (will retry after 5s): {exc}")
                continue
            k.line(f"pod/{p['metadata']['name']} evicted")
        if k.code == 0:
            k.line(f"node/{name} drained")
    k.cost = 10.0


def cmd_taint(k: K) -> None:
    p = k.p
    assert p is not None
    args = list(p.args)
    if not args:
        raise UsageError("at least one taint update is required", "taint", flag_error=False)
    if args[0] in ("node", "nodes", "no"):
        args = args[1:]
    elif "/" in args[0] and args[0].split("/")[0] in ("node", "nodes", "no"):
        args[0] = args[0].split("/", 1)[1]
    else:
        resolve_type(args[0].split("/", 1)[0])  # unknown type -> "the server doesn't have a resource type"
        raise KubectlError(f"invalid resource type {args[0].split('/', 1)[0]}, only node types are supported")
    if not args:
        raise UsageError("at least one taint update is required", "taint", flag_error=False)
    name, specs = args[0], args[1:]
    if not specs:
        raise UsageError("at least one taint update is required", "taint", flag_error=False)
    add: list[dict[str, str]] = []
    remove: list[tuple[str, str | None]] = []
    for s in specs:
        if s.endswith("-"):
            body = s[:-1]
            key, _, effect = body.partition(":")
            key = key.split("=", 1)[0]
            remove.append((key, effect or None))
            continue
        kv, colon, effect = s.partition(":")
        if not colon or effect not in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
            raise KubectlError(f'invalid taint spec: {s}, unknown taint effect "{effect}"' if colon else f"invalid taint spec: {s}")
        key, eq, val = kv.partition("=")
        t = {"key": key, "effect": effect}
        if eq:
            t["value"] = val
        add.append(t)
    node = k.api.get("Node", name)
    cur = list((node.get("spec") or {}).get("taints") or [])
    for key, effect in remove:
        matched = [t for t in cur if t.get("key") == key and (effect is None or t.get("effect") == effect)]
        if not matched:
            raise KubectlError(f"taint \"{key}{':' + effect if effect else ''}\" not found")
        cur = [t for t in cur if t not in matched]
    for t in add:
        same = [c for c in cur if c.get("key") == t["key"] and c.get("effect") == t["effect"]]
        if same and not p.opts.get("overwrite"):
            raise KubectlError(f"node {name} already has {t['key']} taint(s) with same effect(s) and --overwrite is false")
        cur = [c for c in cur if c not in same] + [t]
    k.patch("Node", name, None, {"spec": {"taints": cur or None}}, "merge")
    k.line(f"node/{name} {'tainted' if add else 'untainted'}")
    k.cost = 4.0
