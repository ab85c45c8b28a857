"""kubectl verbs that change cluster state: patch, set, scale, rollout, delete, label/annotate, apply/create.

Every change goes through the ClusterAPI (create/replace/patch/scale/delete),
never by editing a returned object in place: the API may hand back its own
stored dict, so objects are deep-copied before modification.
"""

from __future__ import annotations

import copy
import fnmatch
import json
from typing import Any

import yaml

from sre_env.kube.decoding import DecodeError, decode, decode_error, strict_message
from sre_env.kube.kinds import KindInfo, resolve_kind
from sre_env.kube.limits import MAX_DEPTH, SIM_MAX_DEPTH, load_yaml, load_yaml_all, nesting_depth
from sre_env.kube.patching import PatchError, json_merge, json_patch, strategic_merge
from sre_env.kube.timefmt import iso

from ..errors import ApiError
from .kctx import K, kind_label, resource_args
from .spec import KubectlError, UsageError

__all__ = [
    "cmd_patch", "cmd_set_env", "cmd_set_image", "cmd_set_resources", "cmd_scale", "cmd_rollout_status",
    "cmd_rollout_restart", "cmd_rollout_undo", "cmd_rollout_history", "cmd_rollout_pause", "cmd_rollout_resume",
    "cmd_delete", "cmd_label", "cmd_annotate", "cmd_apply", "cmd_create", "cmd_create_configmap",
    "cmd_create_secret_generic", "cmd_create_namespace", "parse_structured", "single_target",
]

Obj = dict[str, Any]
_VOLATILE = ("resourceVersion", "generation", "managedFields")


def _same(a: Obj, b: Obj) -> bool:
    def strip(o: Obj) -> Obj:
        o = dict(o)
        o["metadata"] = {k: v for k, v in (o.get("metadata") or {}).items() if k not in _VOLATILE}
        return o

    return strip(a) == strip(b)


def _yaml_depth_error(text: str) -> str | None:
    """kubectl's YAML-to-JSON error for a text nested too deep (``yaml: line 7: exceeded max depth of 10000``), or None.

    The simulator refuses at :data:`SIM_MAX_DEPTH` what kubectl refuses at
    :data:`MAX_DEPTH` (``sre_env.kube.limits``); measured without parsing.
    """
    depth, line = nesting_depth(text, yaml=True, limit=SIM_MAX_DEPTH)
    if depth <= SIM_MAX_DEPTH:
        return None
    limit = MAX_DEPTH if depth > MAX_DEPTH else SIM_MAX_DEPTH
    line = nesting_depth(text, yaml=True, limit=limit)[1]
    return "yaml: " + (f"line {line}: " if line > 1 else "") + f"exceeded max depth of {limit}"


def parse_structured(text: str, what: str) -> Any:
    """JSON, or YAML as kubectl also accepts, with kubectl's error wording."""
    deep = _yaml_depth_error(text)
    if deep is not None:  # kubectl converts the text with its YAML decoder first
        raise KubectlError(f'unable to parse "{text}": {deep}')
    try:
        return json.loads(text)
    except ValueError:
        pass
    try:
        return load_yaml(text)
    except yaml.YAMLError as exc:
        raise KubectlError(f'unable to parse "{text}": yaml: {str(exc).splitlines()[0].removeprefix("yaml: ")}') from None


def single_target(k: K, args: list[str], verb: str) -> tuple[KindInfo, str]:
    """``TYPE NAME`` or ``TYPE/NAME``, exactly one object."""
    if not args:
        raise UsageError("you must provide one or more resources by argument or filename", verb, flag_error=False)
    groups = resource_args(args)
    pairs = [(info, n) for kinds, names in groups for info in kinds for n in names]
    if not pairs:
        raise UsageError("resource(s) were provided, but no name was specified", verb, flag_error=False)
    return pairs[0]


def _targets(k: K, args: list[str], verb: str, selector: str | None = None, allow_all: bool = False, field_selector: str | None = None) -> list[tuple[KindInfo, Obj]]:
    """Resolve ``TYPE NAME...``, ``TYPE/NAME...`` or ``TYPE -l sel`` to objects (NotFound printed)."""
    if not args:
        raise UsageError("you must provide one or more resources by argument or filename", verb, flag_error=False)
    out: list[tuple[KindInfo, Obj]] = []
    for kinds, names in resource_args(args):
        for info in kinds:
            ns = k.namespace if info.namespaced else None
            if names:
                for n in names:
                    try:
                        out.append((info, k.api.get(info.kind, n, ns)))
                    except ApiError as exc:
                        k.fail(str(exc))
            elif selector is not None or allow_all or field_selector is not None:
                try:
                    out += [(info, o) for o in k.api.list(info.kind, ns, selector or None, field_selector or None)]
                except ValueError as exc:
                    raise KubectlError(str(exc)) from None
                except ApiError as exc:
                    raise KubectlError(exc.message) from None
            else:
                raise UsageError("resource(s) were provided, but no name was specified", verb, flag_error=False)
    return out


# --------------------------------------------------------------------------- patch
def cmd_patch(k: K) -> None:
    o = k.opts
    info, name = single_target(k, k.p.args if k.p else [], "patch")
    text = o.get("patch")
    if not text:
        raise KubectlError("must specify --patch or --patch-file containing the contents of the patch")
    ptype = o.get("type") or "strategic"
    if ptype not in ("json", "merge", "strategic"):
        raise KubectlError(f'--type must be one of [json merge strategic], not "{ptype}"')
    patch = parse_structured(text, "patch")
    ns = k.namespace if info.namespaced else None
    cur = k.api.get(info.kind, name, ns)
    try:
        if ptype == "json":
            local = json_patch(cur, patch)
        elif ptype == "merge":
            local = json_merge(cur, patch)
        else:
            if not isinstance(patch, dict):
                raise KubectlError(f'unable to parse "{text}": json: cannot unmarshal {type(patch).__name__} into Go value of type map[string]interface {{}}')
            local = strategic_merge(cur, patch)
    except PatchError as exc:
        if ptype == "json":
            raise KubectlError(f"unable to apply patch: {exc}", raw=False) from None
        raise ApiError(422, "Invalid", f'{info.resource} "{name}" is invalid: {exc}') from None
    if isinstance(local, dict) and _same(local, cur):
        k.line(f"{kind_label(info)}/{name} patched (no change)")
        return
    res = k.patch(info.kind, name, ns, patch, ptype)
    # kubectl compares what the server returns with what it read: a patch of status alone changes nothing
    k.line(f"{kind_label(info)}/{name} patched" + (" (no change)" if _same(res, cur) else ""))
    k.cost = 5.0


# --------------------------------------------------------------------------- set
def _pod_spec(obj: Obj) -> dict[str, Any]:
    if obj.get("kind") == "Pod":
        return obj.setdefault("spec", {})
    return obj.setdefault("spec", {}).setdefault("template", {}).setdefault("spec", {})


def _pick_containers(k: K, obj: Obj, which: str | None) -> list[dict[str, Any]]:
    cs = _pod_spec(obj).get("containers") or []
    if not which or which == "*":
        return cs
    sel = [c for c in cs if c.get("name") == which]
    if not sel:
        raise KubectlError(f'unable to find container named "{which}"')
    return sel


def _env_containers(obj: Obj, which: str | None) -> list[dict[str, Any]]:
    """``set env``'s containers: the app containers, then the init containers (kubectl selects both)."""
    spec = _pod_spec(obj)
    cs = list(spec.get("containers") or []) + list(spec.get("initContainers") or [])
    if not which or which == "*":
        return cs
    return [c for c in cs if fnmatch.fnmatchcase(str(c.get("name", "")), which)]


def _set_targets(k: K, verb: str) -> list[tuple[KindInfo, Obj]]:
    p = k.p
    assert p is not None
    objs: list[tuple[KindInfo, Obj]] = []
    kv_args = [a for a in p.args if "=" in a or (a.endswith("-") and "/" not in a)]
    res_args = [a for a in p.args if a not in kv_args]
    if not res_args:
        raise UsageError("one or more resources must be specified as <resource> <name> or <resource>/<name>", f"set {verb}", flag_error=False)
    for info, obj in _targets(k, res_args, f"set {verb}", p.opts.get("selector"), bool(p.opts.get("all"))):
        if info.kind not in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Pod"):
            raise KubectlError(f"{kind_label(info)}/{obj['metadata']['name']} has no pod template or containers")
        objs.append((info, copy.deepcopy(obj)))
    return objs


def cmd_set_env(k: K) -> None:
    p = k.p
    assert p is not None
    assigns: list[tuple[str, str]] = []
    removes: list[str] = []
    for a in p.args + list(p.opts.get("env") or []):
        if "=" in a and "/" not in a.split("=", 1)[0]:
            key, _, val = a.partition("=")
            if not key:
                raise KubectlError(f"invalid env: {a}")
            assigns.append((key, val))
        elif a.endswith("-") and "/" not in a:
            removes.append(a[:-1])
    targets = _set_targets(k, "env")
    if p.opts.get("list"):
        for info, obj in targets:
            for c in _env_containers(obj, p.opts.get("container")):
                k.line(f"# {obj['kind']} {obj['metadata']['name']}, container {c.get('name')}")
                for e in c.get("env") or []:
                    if "value" in e:
                        k.line(f"{e['name']}={e['value']}")
                    else:
                        src = e.get("valueFrom") or {}
                        ref = next(iter(src.values()), {}) if src else {}
                        kind = next(iter(src), "")
                        label = {"configMapKeyRef": "configmap", "secretKeyRef": "secret"}.get(kind, "field path")
                        k.line(f"# {e['name']} from {label} {ref.get('name', ref.get('fieldPath', ''))}" + (f", key {ref['key']}" if ref.get("key") else ""))
        return
    if not assigns and not removes:
        raise KubectlError("at least one environment variable must be provided")
    for info, obj in targets:
        chosen = _env_containers(obj, p.opts.get("container"))
        if not chosen:
            k.err.append(f'warning: {kind_label(info)}/{obj["metadata"]["name"]} does not have any containers matching "{p.opts.get("container")}"\n')
            continue
        for c in chosen:
            env = [e for e in (c.get("env") or []) if e.get("name") not in removes]
            for key, val in assigns:
                for e in env:
                    if e.get("name") == key:
                        e.clear()
                        e.update({"name": key, "value": val})
                        break
                else:
                    env.append({"name": key, "value": val})
            if env:
                c["env"] = env
            else:
                c.pop("env", None)
        if _patch_template(k, obj, "failed to patch env update to pod template: "):
            k.line(f"{kind_label(info)}/{obj['metadata']['name']} env updated")
    k.cost = 5.0


def _patch_template(k: K, obj: Obj, failed: str) -> bool:
    """``kubectl set``'s write: a refusal is reported as kubectl wraps it (the Status message, not its details)."""
    try:
        k.replace(obj)
    except ApiError as exc:
        k.fail(f"error: {failed}{exc.message}")
        return False
    return True


def cmd_set_image(k: K) -> None:
    p = k.p
    assert p is not None
    pairs = [a for a in p.args if "=" in a]
    if not pairs:
        raise UsageError("at least one image update is required", "set image", flag_error=False)
    targets = _set_targets(k, "image")
    for info, obj in targets:
        conts = _pod_spec(obj).get("containers") or []
        inits = _pod_spec(obj).get("initContainers") or []
        for pair in pairs:
            cname, _, image = pair.partition("=")
            hit = [c for c in conts + inits if cname == "*" or c.get("name") == cname]
            if not hit:
                k.fail(f'error: unable to find container named "{cname}"')
                return
            for c in hit:
                c["image"] = image
        if _patch_template(k, obj, "failed to patch image update to pod template: "):
            k.line(f"{kind_label(info)}/{obj['metadata']['name']} image updated")
    k.cost = 5.0


def _res_list(spec: str | None) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in (spec or "").split(","):
        if not part:
            continue
        key, eq, val = part.partition("=")
        if not eq or key not in ("cpu", "memory", "ephemeral-storage") and "/" not in key:
            raise KubectlError(f"invalid resource specification: {spec}")
        out[key] = val
    return out


def cmd_set_resources(k: K) -> None:
    p = k.p
    assert p is not None
    limits = _res_list(p.opts.get("limits"))
    requests = _res_list(p.opts.get("requests"))
    if not limits and not requests:
        raise KubectlError("you must specify an update to requests or limits (in the form of --requests/--limits)")
    for info, obj in _set_targets(k, "resources"):
        for c in _pick_containers(k, obj, p.opts.get("containers")):
            res = c.setdefault("resources", {})
            if limits:
                res.setdefault("limits", {}).update(limits)
            if requests:
                res.setdefault("requests", {}).update(requests)
        if _patch_template(k, obj, "failed to patch resources update to pod template "):  # kubectl's wording, no colon
            k.line(f"{kind_label(info)}/{obj['metadata']['name']} resource requirements updated")
    k.cost = 5.0


# --------------------------------------------------------------------------- scale
def cmd_scale(k: K) -> None:
    p = k.p
    assert p is not None
    if "replicas" not in p.set_flags:
        raise KubectlError('required flag(s) "replicas" not set')
    n = p.opts["replicas"]
    if n < 0:
        raise KubectlError("The --replicas=COUNT flag is required, and COUNT must be greater than or equal to 0")
    for info, obj in _targets(k, p.args, "scale", p.opts.get("selector"), bool(p.opts.get("all"))):
        if info.kind not in ("Deployment", "StatefulSet", "ReplicaSet"):
            k.fail(f"error: no scaler has been implemented for {{\"{info.group}\" \"{info.kind}\"}}")
            continue
        k.api.scale(info.kind, obj["metadata"]["name"], obj["metadata"].get("namespace") or k.namespace, n)
        k.mutated = True
        k.line(f"{kind_label(info)}/{obj['metadata']['name']} scaled")
    k.cost = 5.0


# --------------------------------------------------------------------------- rollout
def _rollout_target(k: K, verb: str) -> tuple[KindInfo, Obj]:
    assert k.p is not None
    info, name = single_target(k, k.p.args, f"rollout {verb}")
    obj = k.api.get(info.kind, name, k.namespace if info.namespaced else None)
    return info, obj


def _revisions(k: K, dep: Obj) -> list[tuple[int, Obj]]:
    uid = dep["metadata"].get("uid")
    out = []
    for rs in k.api.list("ReplicaSet", dep["metadata"].get("namespace")):
        if any(r.get("uid") == uid for r in rs["metadata"].get("ownerReferences") or []):
            rev = (rs["metadata"].get("annotations") or {}).get("deployment.kubernetes.io/revision")
            try:
                out.append((int(rev), rs))
            except (TypeError, ValueError):
                continue
    return sorted(out, key=lambda t: t[0])


def cmd_rollout_status(k: K) -> None:
    info, d = _rollout_target(k, "status")
    name = d["metadata"]["name"]
    if info.kind != "Deployment":
        if info.kind in ("StatefulSet", "DaemonSet"):
            st = d.get("status") or {}
            want = (d.get("spec") or {}).get("replicas", 1) if info.kind == "StatefulSet" else st.get("desiredNumberScheduled", 0)
            ready = st.get("readyReplicas", 0) if info.kind == "StatefulSet" else st.get("numberReady", 0)
            if ready >= want:
                if info.kind == "StatefulSet":
                    k.line(f"statefulset rolling update complete {ready} pods at revision {st.get('currentRevision', '')}...")
                else:
                    k.line(f'daemon set "{name}" successfully rolled out')
            else:
                k.line(f"Waiting for {ready} pods to be ready...")
                raise KubectlError("the rollout is still in progress; this session cannot watch, re-run the command later to check again")
            return
        raise KubectlError(f"no status viewer has been implemented for {info.kind}")
    sp, st = d.get("spec") or {}, d.get("status") or {}
    replicas = sp.get("replicas", 1)
    if (d["metadata"].get("generation") or 0) > (st.get("observedGeneration") or 0):
        k.line("Waiting for deployment spec update to be observed...")
        raise KubectlError("the rollout is still in progress; this session cannot watch, re-run the command later to check again")
    for c in st.get("conditions") or []:
        if c.get("type") == "Progressing" and c.get("reason") == "ProgressDeadlineExceeded":
            raise KubectlError(f'deployment "{name}" exceeded its progress deadline')
    updated = st.get("updatedReplicas", 0)
    total = st.get("replicas", 0)
    avail = st.get("availableReplicas", 0)
    if updated < replicas:
        msg = f'Waiting for deployment "{name}" rollout to finish: {updated} out of {replicas} new replicas have been updated...'
    elif total > updated:
        msg = f'Waiting for deployment "{name}" rollout to finish: {total - updated} old replicas are pending termination...'
    elif avail < updated:
        msg = f'Waiting for deployment "{name}" rollout to finish: {avail} of {updated} updated replicas are available...'
    else:
        k.line(f'deployment "{name}" successfully rolled out')
        return
    k.line(msg)
    raise KubectlError("the rollout is still in progress; this session cannot watch, re-run the command later to check again")


def cmd_rollout_restart(k: K) -> None:
    info, d = _rollout_target(k, "restart")
    if info.kind not in ("Deployment", "StatefulSet", "DaemonSet"):
        raise KubectlError(f'restarting is not supported for {info.kind.lower()}s')
    if (d.get("spec") or {}).get("paused"):
        raise KubectlError("can't restart paused deployment (run rollout resume first)")
    patch = {"spec": {"template": {"metadata": {"annotations": {"kubectl.kubernetes.io/restartedAt": iso(k.now)}}}}}
    k.patch(info.kind, d["metadata"]["name"], d["metadata"].get("namespace"), patch, "strategic")
    k.line(f"{kind_label(info)}/{d['metadata']['name']} restarted")
    k.cost = 5.0


def cmd_rollout_undo(k: K) -> None:
    info, d = _rollout_target(k, "undo")
    if info.kind != "Deployment":
        raise KubectlError(f"no rollbacker has been implemented for {info.kind}")
    to = k.opts.get("to-revision") or 0
    revs = _revisions(k, d)
    name = d["metadata"]["name"]
    if not revs:
        raise KubectlError(f'no rollout history found for deployment "{name}"')
    cur = int((d["metadata"].get("annotations") or {}).get("deployment.kubernetes.io/revision", revs[-1][0]))
    if to == 0:
        older = [t for t in revs if t[0] < cur]
        if not older:
            raise KubectlError(f'no rollout history found for deployment "{name}"')
        target = older[-1][1]
    else:
        found = [rs for r, rs in revs if r == to]
        if not found:
            raise KubectlError(f"unable to find specified revision {to} in history")
        target = found[0]
    tpl = copy.deepcopy((target.get("spec") or {}).get("template") or {})
    labels = (tpl.get("metadata") or {}).get("labels") or {}
    labels.pop("pod-template-hash", None)
    new = copy.deepcopy(d)
    if _strip_hash(new["spec"].get("template")) == tpl:
        k.line(f"{kind_label(info)}/{name} skipped rollback (current template already matches revision {to or 'previous'})")
        return
    new["spec"]["template"] = tpl
    k.replace(new)
    k.line(f"{kind_label(info)}/{name} rolled back")
    k.cost = 5.0


def _strip_hash(tpl: Any) -> Any:
    tpl = copy.deepcopy(tpl or {})
    ((tpl.get("metadata") or {}).get("labels") or {}).pop("pod-template-hash", None)
    return tpl


def cmd_rollout_history(k: K) -> None:
    info, d = _rollout_target(k, "history")
    if info.kind != "Deployment":
        raise KubectlError(f"no history viewer has been implemented for {info.kind}")
    revs = _revisions(k, d)
    want = k.opts.get("revision") or 0
    label = f"{kind_label(info)}/{d['metadata']['name']}"
    if want:
        found = [rs for r, rs in revs if r == want]
        if not found:
            raise KubectlError("unable to find the specified revision")
        from .kdescribe import _W, _pod_template

        w = _W()
        _pod_template(w, _strip_hash(found[0]["spec"].get("template")))
        k.line(f"{label} with revision #{want}")
        k.out.append(w.render() + "\n")
        return
    if not revs:
        k.line("No rollout history found.")
        return
    from .tabwriter import tabwrite

    rows = ["REVISION\tCHANGE-CAUSE"]
    for r, rs in revs:
        rows.append(f"{r}\t{(rs['metadata'].get('annotations') or {}).get('kubernetes.io/change-cause', '<none>')}")
    k.out.append(f"{label} \n" + tabwrite("\n".join(rows), 6, 2) + "\n\n")


def cmd_rollout_pause(k: K) -> None:
    _pause(k, True)


def cmd_rollout_resume(k: K) -> None:
    _pause(k, False)


def _pause(k: K, paused: bool) -> None:
    info, d = _rollout_target(k, "pause" if paused else "resume")
    verb = "paused" if paused else "resumed"
    if bool((d.get("spec") or {}).get("paused")) == paused:
        raise KubectlError(f"{kind_label(info)}/{d['metadata']['name']} is {'already' if paused else 'not'} paused")
    k.patch(info.kind, d["metadata"]["name"], d["metadata"].get("namespace"), {"spec": {"paused": paused or None}}, "merge")
    k.line(f"{kind_label(info)}/{d['metadata']['name']} {verb}")


# --------------------------------------------------------------------------- delete
def cmd_delete(k: K) -> None:
    p = k.p
    assert p is not None
    o = p.opts
    if o.get("filename"):
        docs = _read_manifests(k, o["filename"])
        targets = [(_kind_of(d), d) for d in docs]
    else:
        if not p.args:
            raise UsageError("You must provide one or more resources by argument or filename.\nExample resource specifications include:\n   '-f rsrc.yaml'\n   '--filename=rsrc.json'\n   '<resource> <name>'\n   '<resource>'", "delete", flag_error=False)
        if len(p.args) == 1 and "/" not in p.args[0] and not o.get("selector") and not o.get("all") and not o.get("field-selector"):
            raise KubectlError("resource(s) were provided, but no name was specified")
        targets = _targets(k, p.args, "delete", o.get("selector"), bool(o.get("all")), o.get("field-selector"))
        if not targets and not k.err and (o.get("selector") or o.get("all") or o.get("field-selector")):
            k.err.append("No resources found\n")
    force = bool(o.get("force")) and o.get("grace-period") in (0, "0")
    if o.get("force") and not force:
        force = True
    if force:
        k.err.append("Warning: Immediate deletion does not wait for confirmation that the running resource has been terminated. The resource may continue to run on the cluster indefinitely.\n")
    for info, obj in targets:
        name = obj["metadata"]["name"]
        ns = obj["metadata"].get("namespace") or (k.namespace if info.namespaced else None)
        try:
            k.api.delete(info.kind, name, ns, force=force)
        except ApiError as exc:
            k.fail(str(exc))
            continue
        k.mutated = True
        k.line(f'{kind_label(info)} "{name}" {"force deleted" if force else "deleted"}')
    k.cost = 5.0


# --------------------------------------------------------------------------- label / annotate
def _kv_changes(args: list[str]) -> tuple[list[str], dict[str, str], list[str]]:
    """Split ``TYPE NAME... k=v k2-`` into resources, assignments and removals."""
    res: list[str] = []
    sets: dict[str, str] = {}
    removes: list[str] = []
    for i, a in enumerate(args):
        if i > 0 and "=" in a:
            key, _, val = a.partition("=")
            sets[key] = val
        elif i > 0 and a.endswith("-") and len(a) > 1:
            removes.append(a[:-1])
        else:
            res.append(a)
    return res, sets, removes


def _meta_update(k: K, field: str, verb: str) -> None:
    p = k.p
    assert p is not None
    res, sets, removes = _kv_changes(p.args)
    if not sets and not removes and not p.opts.get("list"):
        raise UsageError(f"at least one {field[:-1]} update is required", verb, flag_error=False)
    targets = _targets(k, res, verb, p.opts.get("selector"), bool(p.opts.get("all")))
    for info, obj in targets:
        cur = obj["metadata"].get(field) or {}
        if p.opts.get("list"):
            for key in sorted(cur):
                k.line(f"{key}={cur[key]}")
            continue
        if not p.opts.get("overwrite"):
            for key, val in sets.items():
                if key in cur and cur[key] != val:
                    raise KubectlError(f"'{key}' already has a value ({cur[key]}), and --overwrite is false")
        patch: dict[str, Any] = {key: val for key, val in sets.items()}
        for key in removes:
            if key in cur:
                patch[key] = None
        name = obj["metadata"]["name"]
        if patch:
            k.patch(info.kind, name, obj["metadata"].get("namespace"), {"metadata": {field: patch}}, "merge")
        past = "labeled" if field == "labels" else "annotated"
        if field == "labels" and not sets and removes:
            past = "unlabeled"
        if not patch:
            past = "not labeled" if field == "labels" else "not annotated"
        k.line(f"{kind_label(info)}/{name} {past}")
    k.cost = 5.0


def cmd_label(k: K) -> None:
    _meta_update(k, "labels", "label")


def cmd_annotate(k: K) -> None:
    _meta_update(k, "annotations", "annotate")


# --------------------------------------------------------------------------- apply / create
def _kind_of(doc: Obj) -> KindInfo:
    info = resolve_kind(str(doc.get("kind") or ""))
    if info is None:
        name = (doc.get("metadata") or {}).get("name", "")
        ns = (doc.get("metadata") or {}).get("namespace", "")
        raise KubectlError(
            f'resource mapping not found for name: "{name}" namespace: "{ns}" from "STDIN": no matches for kind "{doc.get("kind")}" in version "{doc.get("apiVersion", "")}"\nensure CRDs are installed first'
        )
    return info


def _read_manifests(k: K, files: list[str]) -> list[Obj]:
    docs: list[Obj] = []
    for f in files:
        if f != "-":
            if f.startswith(("http://", "https://")):
                raise KubectlError(f'unable to read URL "{f}", server reported 404 Not Found, status code=404')
            raise KubectlError(f'the path "{f}" does not exist')
        if not k.stdin:
            raise KubectlError("no objects passed to " + (k.path or "apply"))
        deep = _yaml_depth_error(k.stdin)
        if deep is not None:  # kubectl's YAML-to-JSON conversion refuses deeper documents
            raise KubectlError(f"error parsing STDIN: error converting YAML to JSON: {deep}")
        try:
            loaded = load_yaml_all(k.stdin)  # aliases bounded as go-yaml bounds them (sre_env.kube.limits)
        except yaml.YAMLError as exc:
            msg = str(exc).replace("\n", " ").removeprefix("yaml: ")
            raise KubectlError(f"error parsing STDIN: error converting YAML to JSON: yaml: {msg}") from None
        for d in loaded:
            if d is None:
                continue
            if not isinstance(d, dict):
                raise KubectlError("error validating data: invalid object to validate; if you choose to ignore these errors, turn validation off with --validate=false")
            if d.get("kind") == "List" and isinstance(d.get("items"), list):
                docs.extend(x for x in d["items"] if isinstance(x, dict))
            else:
                docs.append(d)
    if not docs:
        raise KubectlError("no objects passed to " + (k.path or "apply"))
    for d in docs:
        if isinstance(d.get("metadata"), dict):
            try:  # kubectl decodes each object's metadata before it sends anything
                decode({"kind": "ConfigMap", "metadata": copy.deepcopy(d["metadata"])}, prune=False)
            except DecodeError as exc:
                raise KubectlError(f'unable to decode "STDIN": {exc}') from None
        if not d.get("kind"):
            raise KubectlError("error validating data: kind not set; if you choose to ignore these errors, turn validation off with --validate=false")
        if not d.get("apiVersion"):
            raise KubectlError("error validating data: apiVersion not set; if you choose to ignore these errors, turn validation off with --validate=false")
        if not isinstance(d.get("metadata"), dict) or not (d["metadata"].get("name") or d["metadata"].get("generateName")):
            raise KubectlError('error when retrieving current configuration of:\nResource: "", GroupVersionKind: ""\nName: "", Namespace: ""\nfrom server for: "STDIN": resource name may not be empty')
    return docs


def _field_validation(k: K, doc: Obj) -> Obj:
    """``--validate`` (strict by default): the server refuses unknown fields, or drops them (``warn`` says so)."""
    mode = str(k.opts.get("validate") or "strict").lower()
    checked = copy.deepcopy(doc)
    try:
        unknown = decode(checked, prune=mode not in ("strict", "true")).unknown
    except DecodeError as exc:
        raise decode_error(str(doc.get("kind")), str(doc.get("apiVersion", "")), str(exc)) from None
    if unknown and mode in ("strict", "true"):
        raise decode_error(str(doc.get("kind")), str(doc.get("apiVersion", "")), strict_message(unknown))
    if unknown and mode == "warn":
        for path in unknown:
            k.err.append(f'Warning: unknown field "{path}"\n')
    return checked


def _report(k: K, failures: list[tuple[ApiError, str]]) -> None:
    """kubectl's last word on a manifest's failures: one invalid object from its details, otherwise each Status."""
    if len(failures) == 1 and failures[0][0].reason == "Invalid" and (failures[0][0].details or {}).get("causes"):
        k.fail(str(failures[0][0]))
        return
    for exc, where in failures:
        k.fail(f"Error from server{f' ({exc.reason})' if exc.reason else ''}: {where}{exc.message}")


def _prep(k: K, doc: Obj, info: KindInfo) -> Obj:
    doc = copy.deepcopy(doc)
    meta = doc["metadata"]
    if info.namespaced:
        ns = meta.get("namespace")
        if ns and k.p and "namespace" in k.p.set_flags and ns != k.namespace:
            raise KubectlError(f'the namespace from the provided object "{ns}" does not match the namespace "{k.namespace}". You must pass \'--namespace={ns}\' to perform this operation.')
        meta["namespace"] = ns or k.namespace
    else:
        meta.pop("namespace", None)
    doc.pop("status", None) if info.kind not in ("Pod",) else None
    return doc


def cmd_apply(k: K) -> None:
    o = k.opts
    if not o.get("filename"):
        raise KubectlError("must specify one of -f and -k")
    docs = _read_manifests(k, o["filename"])
    failures: list[tuple[ApiError, str]] = []
    for raw in docs:
        info = _kind_of(raw)
        doc = _prep(k, raw, info)
        name = doc["metadata"].get("name", "")
        label = f"{kind_label(info)}/{name}"
        try:
            cur = k.api.get(info.kind, name, doc["metadata"].get("namespace"))
        except ApiError as exc:
            if exc.reason != "NotFound":
                raise
            cur = None
        last = json.dumps(raw, sort_keys=True, separators=(",", ":"))
        if cur is None:
            doc["metadata"].setdefault("annotations", {})["kubectl.kubernetes.io/last-applied-configuration"] = last + "\n"
            try:
                k.create(_field_validation(k, doc))
            except ApiError as exc:
                failures.append((exc, 'error when creating "STDIN": '))
                continue
            k.line(f"{label} created")
            continue
        try:
            doc = _field_validation(k, doc)
        except ApiError as exc:
            failures.append((exc, f'error when applying patch:\n{last}\n\nto:\nResource: "{info.resource}", Name: "{name}"\nfor: "STDIN": '))
            continue
        merged = strategic_merge(cur, {kk: v for kk, v in doc.items() if kk != "metadata"})
        merged["metadata"] = strategic_merge(cur["metadata"], {kk: v for kk, v in doc["metadata"].items() if kk not in ("annotations",)})
        ann = dict(cur["metadata"].get("annotations") or {})
        ann.update((doc["metadata"].get("annotations") or {}))
        prev_last = ann.get("kubectl.kubernetes.io/last-applied-configuration")
        ann["kubectl.kubernetes.io/last-applied-configuration"] = last + "\n"
        merged["metadata"]["annotations"] = ann
        if _same(merged, cur) or (prev_last == last + "\n" and _same({**merged, "metadata": cur["metadata"]}, cur)):
            k.line(f"{label} unchanged")
            continue
        try:
            k.replace(merged)
        except ApiError as exc:
            failures.append((exc, f'error when applying patch:\n{last}\n\nto:\nResource: "{info.resource}", Name: "{name}"\nfor: "STDIN": '))
            continue
        k.line(f"{label} configured")
    _report(k, failures)
    k.cost = 5.0


def cmd_create(k: K) -> None:
    o = k.opts
    if not o.get("filename"):
        raise UsageError("must specify one of -f and -k", "create", flag_error=False)
    failures: list[tuple[ApiError, str]] = []
    for raw in _read_manifests(k, o["filename"]):
        info = _kind_of(raw)
        doc = _prep(k, raw, info)
        try:
            res = k.create(_field_validation(k, doc))
        except ApiError as exc:
            failures.append((exc, 'error when creating "STDIN": '))
            continue
        k.line(f"{kind_label(info)}/{res['metadata']['name']} created")
    _report(k, failures)
    k.cost = 5.0


def _literals(k: K) -> dict[str, str]:
    data: dict[str, str] = {}
    for lit in k.opts.get("from-literal") or []:
        key, eq, val = lit.partition("=")
        if not eq or not key:
            raise KubectlError(f'invalid literal source {lit}, expected key=value')
        data[key] = val
    if k.opts.get("from-file") or k.opts.get("from-env-file"):
        raise KubectlError("--from-file/--from-env-file are not available here: there is no local filesystem; use --from-literal=key=value")
    return data


def _one_name(k: K, verb: str) -> str:
    assert k.p is not None
    if len(k.p.args) != 1:
        raise UsageError(f"exactly one NAME is required, got {len(k.p.args)}", verb, flag_error=False)
    return k.p.args[0]


def cmd_create_configmap(k: K) -> None:
    name = _one_name(k, "create configmap")
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": k.namespace}, "data": _literals(k)}
    k.create(obj)
    k.line(f"configmap/{name} created")
    k.cost = 5.0


def cmd_create_secret_generic(k: K) -> None:
    import base64

    name = _one_name(k, "create secret generic")
    data = {kk: base64.b64encode(v.encode()).decode() for kk, v in _literals(k).items()}
    obj = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": name, "namespace": k.namespace}, "type": k.opts.get("type") or "Opaque", "data": data}
    k.create(obj)
    k.line(f"secret/{name} created")
    k.cost = 5.0


def cmd_create_namespace(k: K) -> None:
    name = _one_name(k, "create namespace")
    k.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}, "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}})
    k.line(f"namespace/{name} created")
    k.cost = 5.0
