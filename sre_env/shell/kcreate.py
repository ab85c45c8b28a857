"""Imperative object generators: ``create deployment|service|job``, ``run`` and ``expose``.

Each builder returns the object exactly as kubectl 1.32 generates it client-side
(what ``--dry-run=client -o yaml`` prints: ``creationTimestamp: null``,
``resources: {}``, ``status: {}``); ``emit`` then prints it for a dry run or sends
it through the API (``k.create``) so that risk and cleanup grading see the write.
"""

from __future__ import annotations

import copy
import json
import zlib
from typing import Any

from sre_env.kube.kinds import KindInfo

from ..errors import ApiError
from .kctx import K, resolve_type, resource_args
from .printers import to_json, to_yaml
from .spec import KubectlError, UsageError

__all__ = ["cmd_create_deployment", "cmd_create_job", "cmd_create_service", "cmd_expose", "cmd_run", "emit"]

Obj = dict[str, Any]
_ALPHA = "bcdfghjklmnpqrstvwxz2456789"
_SERVICE_HELP = """Create a service using a specified subcommand.

Aliases:
service, svc

Available Commands:
  clusterip      Create a ClusterIP service
  externalname   Create an ExternalName service
  loadbalancer   Create a LoadBalancer service
  nodeport       Create a NodePort service

Usage:
  kubectl create service [flags] [options]

Use "kubectl create service <command> --help" for more information about a given command.
Use "kubectl options" for a list of global command-line options (applies to all commands).
"""
_RESOURCES = {"Deployment": "deployments.apps", "Job": "jobs.batch", "Service": "services", "Pod": "pods"}
_SHELLS = ("sh", "bash", "ash", "zsh", "dash")
_POD_RUNNING_TIMEOUT_S = 60.0  # kubectl run's --pod-running-timeout default (1m0s)
_SVC_TYPES = {"clusterip": "ClusterIP", "nodeport": "NodePort", "loadbalancer": "LoadBalancer", "externalname": "ExternalName"}


def _dry_run(k: K) -> str:
    val = str(k.opts.get("dry-run") or "none")
    if val not in ("none", "client", "server"):
        raise KubectlError(f'Invalid dry-run value ({val}). Must be "none", "server", or "client".')
    return val


def _strip_nulls(obj: Any) -> Any:
    """What the server stores: no ``creationTimestamp: null`` and no empty ``status``."""
    if isinstance(obj, dict):
        return {key: _strip_nulls(v) for key, v in obj.items() if v is not None and not (key == "status" and v in ({}, {"loadBalancer": {}}))}
    if isinstance(obj, list):
        return [_strip_nulls(v) for v in obj]
    return obj


def emit(k: K, obj: Obj, info_label: str, verb: str = "created") -> None:
    """Print a generated object (dry run, ``-o``) or create it and print ``TYPE/NAME created``."""
    dry = _dry_run(k)
    fmt = k.opts.get("output")
    if fmt not in (None, "", "yaml", "json", "name"):
        raise KubectlError(f'unable to match a printer suitable for the output format "{fmt}", allowed formats are: json,name,yaml')
    name = obj["metadata"]["name"]
    shown = obj
    if dry == "server":  # the server runs admission without storing: a name clash is still refused
        kind = str(obj.get("kind"))
        try:
            k.api.get(kind, name, k.namespace)
        except ApiError:
            pass
        else:
            raise ApiError.already_exists(_RESOURCES.get(kind, kind.lower() + "s"), name)
    if dry == "none":
        sent = _strip_nulls(copy.deepcopy(obj))
        if (k.namespace and "namespace" not in sent["metadata"]) and obj.get("kind") != "Namespace":
            sent["metadata"]["namespace"] = k.namespace
        shown = k.create(sent)
    k.cost = 5.0
    if fmt == "yaml":
        k.out.append(to_yaml(shown))
    elif fmt == "json":
        # a generated object keeps its Go struct field order; a stored one prints as `get -o json` does
        k.out.append((json.dumps(shown, indent=4, ensure_ascii=False) if dry != "none" else to_json(shown)) + "\n")
    else:
        suffix = {"client": " (dry run)", "server": " (server dry run)"}.get(dry, "")
        k.line(f"{info_label}/{name}" + ("" if fmt == "name" else f" {verb}{suffix}"))


def _name_arg(k: K, path: str) -> str:
    assert k.p is not None
    args = k.p.args if k.p.dash < 0 else k.p.args[: k.p.dash]
    if len(args) != 1:
        raise UsageError(f"exactly one NAME is required, got {len(args)}", path, flag_error=False)
    return args[0]


def _after_dash(k: K) -> list[str]:
    assert k.p is not None
    return list(k.p.args[k.p.dash :]) if k.p.dash >= 0 else []


# --------------------------------------------------------------------------- create deployment
def _container_name(image: str, taken: set[str]) -> str:
    """kubectl's name for a container from its image: last path part, no tag or digest."""
    name = image.split("/")[-1].split(":")[0].split("@")[0]
    if "_" in name or "." in name:
        name = name.replace("_", "-").replace(".", "-")
        x = zlib.crc32(f"{image}/{len(taken)}".encode())
        suffix = []
        for _ in range(5):
            x = (x * 1103515245 + 12345) & 0x7FFFFFFF
            suffix.append(_ALPHA[x % len(_ALPHA)])
        name = f"{name}-{''.join(suffix)}"
    taken.add(name)
    return name


def cmd_create_deployment(k: K) -> None:
    name = _name_arg(k, "create deployment")
    images = [i for img in k.opts.get("image") or [] for i in img.split(",") if i]
    if not images:
        raise KubectlError('required flag(s) "image" not set')
    command = _after_dash(k)
    if len(images) > 1 and command:
        raise KubectlError("cannot specify multiple --image options and command")
    port = k.opts.get("port", -1)
    replicas = k.opts.get("replicas", 1)
    taken: set[str] = set()
    containers: list[Obj] = []
    for img in images:
        c: Obj = {"name": _container_name(img, taken), "image": img}
        if command:
            c["command"] = command
        if port is not None and port >= 0 and not containers:
            c["ports"] = [{"containerPort": port}]  # kubectl puts --port on the first container only
        c["resources"] = {}
        containers.append(c)
    labels = {"app": name}
    dep = {
        "kind": "Deployment", "apiVersion": "apps/v1",
        "metadata": {"name": name, "creationTimestamp": None, "labels": dict(labels)},
        "spec": {"replicas": replicas, "selector": {"matchLabels": dict(labels)},
                 "template": {"metadata": {"creationTimestamp": None, "labels": dict(labels)}, "spec": {"containers": containers}}, "strategy": {}},
        "status": {},
    }
    emit(k, dep, "deployment.apps")


# --------------------------------------------------------------------------- create service
def _service_ports(specs: list[str], node_port: int) -> list[Obj]:
    ports: list[Obj] = []
    for spec in specs:
        for item in spec.split(","):
            port_s, _, target_s = item.partition(":")
            try:
                port = int(port_s)
                if port < 0 or port > 0xFFFFFFFF or not port_s.isdigit():
                    raise ValueError
            except ValueError:
                raise KubectlError(f'strconv.ParseUint: parsing "{port_s}": invalid syntax') from None
            target: int | str = port
            if target_s:
                target = int(target_s) if target_s.lstrip("-").isdigit() else target_s
            entry: Obj = {"name": item.replace(":", "-") if target_s else port_s, "protocol": "TCP", "port": port, "targetPort": target}
            if node_port > 0:
                entry["nodePort"] = node_port
            ports.append(entry)
    return ports


def cmd_create_service(k: K) -> None:
    """``create service clusterip|nodeport|loadbalancer|externalname NAME --tcp=PORT[:TARGET]``."""
    assert k.p is not None
    args = k.p.args
    if not args or args[0] not in _SVC_TYPES:
        if args:
            raise UsageError(f'unknown command "{" ".join(args)}"', "create service", flag_error=False)
        k.out.append(_SERVICE_HELP)  # kubectl prints the group's help and exits 1
        k.code = 1
        return
    stype = _SVC_TYPES[args[0]]
    k.p.args = args[1:]
    k.p.dash = k.p.dash - 1 if k.p.dash > 0 else k.p.dash
    path = f"create service {args[0]}"
    name = _name_arg(k, path)
    cluster_ip = k.opts.get("clusterip") or ""
    if stype != "ClusterIP" and "clusterip" in k.p.set_flags:
        raise UsageError("unknown flag: --clusterip", path)
    if stype != "NodePort" and "node-port" in k.p.set_flags:
        raise UsageError("unknown flag: --node-port", path)
    if stype != "ExternalName" and "external-name" in k.p.set_flags:
        raise UsageError("unknown flag: --external-name", path)
    external = k.opts.get("external-name") or ""
    if stype == "ExternalName" and not external:
        raise KubectlError('required flag(s) "external-name" not set')
    tcp = list(k.opts.get("tcp") or [])
    if not tcp and cluster_ip != "None" and stype != "ExternalName":
        raise KubectlError("at least one tcp port specifier must be provided")
    ports = _service_ports(tcp, int(k.opts.get("node-port") or 0))
    spec: Obj = {}
    if ports:
        spec["ports"] = ports
    spec["selector"] = {"app": name}
    if cluster_ip:
        spec["clusterIP"] = cluster_ip
    spec["type"] = stype
    if external:
        spec["externalName"] = external  # ServiceSpec order: ports, selector, clusterIP, type, externalName
        spec = {kk: spec[kk] for kk in ("ports", "selector", "clusterIP", "type", "externalName") if kk in spec}
    svc = {"kind": "Service", "apiVersion": "v1", "metadata": {"name": name, "creationTimestamp": None, "labels": {"app": name}},
           "spec": spec, "status": {"loadBalancer": {}}}
    emit(k, svc, "service")


# --------------------------------------------------------------------------- create job
def cmd_create_job(k: K) -> None:
    name = _name_arg(k, "create job")
    image = k.opts.get("image")
    source = k.opts.get("from")
    if bool(image) == bool(source):
        raise KubectlError("either --image or --from must be specified")
    command = _after_dash(k)
    if source and command:
        raise KubectlError("cannot specify --from and command")
    if image:
        c: Obj = {"name": name, "image": image}
        if command:
            c["command"] = command
        c["resources"] = {}
        job = {"kind": "Job", "apiVersion": "batch/v1", "metadata": {"name": name, "creationTimestamp": None},
               "spec": {"template": {"metadata": {"creationTimestamp": None}, "spec": {"containers": [c], "restartPolicy": "Never"}}}, "status": {}}
        emit(k, job, "job.batch")
        return
    if "/" not in str(source):
        resolve_type(str(source))
        raise KubectlError("arguments in resource/name form must have a single resource and name")
    groups = resource_args([source])
    src_name = groups[0][1][0]
    info: KindInfo = groups[0][0][0]
    src = k.api.get(info.kind, src_name, k.namespace if info.namespaced else None)
    if info.kind != "CronJob":
        raise KubectlError(f"unknown object type *v1.{info.kind}")
    tpl = copy.deepcopy((src.get("spec") or {}).get("jobTemplate") or {})
    meta: Obj = {"name": name, "creationTimestamp": None}
    tmeta = tpl.get("metadata") or {}
    if tmeta.get("labels"):
        meta["labels"] = dict(tmeta["labels"])
    meta["annotations"] = {"cronjob.kubernetes.io/instantiate": "manual", **(tmeta.get("annotations") or {})}
    meta["ownerReferences"] = [{"apiVersion": "batch/v1", "kind": "CronJob", "name": src["metadata"]["name"], "uid": src["metadata"].get("uid", ""), "controller": True}]
    job = {"kind": "Job", "apiVersion": "batch/v1", "metadata": meta, "spec": tpl.get("spec") or {}, "status": {}}
    emit(k, job, "job.batch")


# --------------------------------------------------------------------------- run
def _kv_list(text: str, what: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in text.split(","):
        key, eq, val = part.partition("=")
        if not eq or not key:
            raise KubectlError(f"unexpected label spec: {part}" if what in ("label", "selector") else f"invalid {what}: {part}")
        out[key] = val
    return out


def cmd_run(k: K) -> None:
    assert k.p is not None
    o = k.opts
    args = k.p.args if k.p.dash < 0 else k.p.args[: k.p.dash]
    if not args:
        raise UsageError("NAME is required for run", "run", flag_error=False)
    name = args[0]
    extra = args[1:] + _after_dash(k)
    image = o.get("image")
    if not image:
        raise KubectlError('required flag(s) "image" not set')
    restart = o.get("restart") or "Always"
    if restart not in ("Always", "OnFailure", "Never"):
        raise UsageError(f"invalid restart policy: {restart}", "run", flag_error=False)
    attach = bool(o.get("stdin") or o.get("tty") or o.get("attach"))
    if o.get("rm") and not attach:
        raise UsageError("--rm should only be used for attached containers", "run", flag_error=False)
    if attach and (not extra or (len(extra) == 1 and extra[0].rsplit("/", 1)[-1] in _SHELLS)):
        raise KubectlError(
            "interactive sessions are not supported in this environment: the session is not interactive; "
            f"pass the command after --, e.g. kubectl run {name} --rm -i --restart=Never --image={image} -- wget -qO- http://SERVICE:PORT, "
            "or run it in an existing pod with 'kubectl exec POD -- CMD'"
        )
    if attach and _dry_run(k) != "none":
        raise KubectlError("--dry-run can't be used with attached containers options (--attach, --stdin, or --tty)")
    if o.get("overrides"):
        raise KubectlError("--overrides is not supported in this environment; pipe a full manifest into 'kubectl apply -f -' instead")
    labels = _kv_list(o["labels"], "label") if o.get("labels") else {"run": name}
    c: Obj = {"name": name, "image": image}
    if extra:
        c["command" if o.get("command") else "args"] = extra
    env_list: list[Obj] = []
    for e in o.get("env") or []:
        key, eq, val = e.partition("=")
        if not eq or not key:
            raise KubectlError(f"invalid env: {e}")
        env_list.append({"name": key, "value": val})
    port = o.get("port")
    if port not in (None, "", "-1"):
        try:
            c["ports"] = [{"containerPort": int(port)}]
        except ValueError:
            raise KubectlError(f'strconv.Atoi: parsing "{port}": invalid syntax') from None
    if env_list:
        c["env"] = env_list
    c["resources"] = {}
    if o.get("image-pull-policy"):
        c["imagePullPolicy"] = o["image-pull-policy"]
    if o.get("privileged"):
        c["securityContext"] = {"privileged": True}
    meta: Obj = {"name": name, "creationTimestamp": None, "labels": labels}
    if o.get("annotations"):
        meta["annotations"] = {kk: vv for a in o["annotations"] for kk, vv in _kv_list(a, "annotation").items()}
    pod = {"kind": "Pod", "apiVersion": "v1", "metadata": meta,
           "spec": {"containers": [c], "restartPolicy": restart, "dnsPolicy": "ClusterFirst"}, "status": {}}
    if attach:
        _run_attached(k, pod, extra, restart)
        return
    emit(k, pod, "pod")


def _wait_gone(k: K, name: str, ns: str) -> None:
    waited = 0.0
    while waited < 120.0:
        try:
            k.api.get("Pod", name, ns)
        except ApiError:
            return
        k.backend.advance(5.0)
        waited += 5.0


def _run_attached(k: K, pod: Obj, argv: list[str], restart: str) -> None:
    """``run -i [--rm] -- CMD``: start the pod, wait for its container, show what CMD prints, clean up.

    The command runs in the started container through the same exec path as
    ``kubectl exec`` (the cluster's DNS, services and network policies apply).
    Waiting for the pod to start lets simulated time pass, as ``wait`` does.
    """
    name = pod["metadata"]["name"]
    ns = k.namespace
    sent = _strip_nulls(copy.deepcopy(pod))
    sent["metadata"]["namespace"] = ns
    k.create(sent)
    if k.opts.get("tty"):
        k.err.append("Unable to use a TTY - input is not a terminal or the right kind of file\n")
    waited = 0.0
    while True:
        cur = k.api.get("Pod", name, ns)
        states = [cs.get("state") or {} for cs in (cur.get("status") or {}).get("containerStatuses") or []]
        if states and "running" in states[0]:
            break
        if waited >= _POD_RUNNING_TIMEOUT_S:
            raise KubectlError("timed out waiting for the condition")
        k.backend.advance(5.0)
        waited += 5.0
    try:
        res = k.api.exec(name, ns, name, argv)
    except ApiError as exc:
        raise KubectlError(exc.message) from None
    out = res.output
    if out and not out.endswith("\n"):
        out += "\n"
    k.out.append(out)
    k.cost = 6.0
    if k.opts.get("rm"):
        k.api.delete("Pod", name, ns)
        _wait_gone(k, name, ns)  # --rm deletes with kubectl delete's default --wait=true
        k.line(f'pod "{name}" deleted')
    if res.exit_code and restart in ("Never", "OnFailure"):
        k.err.append(f"pod {ns}/{name} terminated (Error)\n")
        k.code = res.exit_code


# --------------------------------------------------------------------------- expose
def _selector_of(info: KindInfo, obj: Obj) -> dict[str, str]:
    spec = obj.get("spec") or {}
    if info.kind == "Pod":
        return dict(obj["metadata"].get("labels") or {})
    if info.kind == "Service":
        sel = spec.get("selector") or {}
        if not sel:
            raise KubectlError("invalid service provided as object to expose: it has no selector")  # kubectl: "couldn't retrieve selectors via --selector flag or introspection"
        return dict(sel)
    sel = spec.get("selector") or {}
    if sel.get("matchExpressions"):
        raise KubectlError("couldn't convert expressions - \"" + ",".join(str(e.get("key")) for e in sel["matchExpressions"]) + "\" to map: operator not supported")
    return dict(sel.get("matchLabels") or {})


def _ports_of(info: KindInfo, obj: Obj) -> list[tuple[int, str]]:
    """(port, protocol) the object exposes: container ports, or a service's ports."""
    spec = obj.get("spec") or {}
    if info.kind == "Service":
        return [(int(p.get("port") or 0), p.get("protocol") or "TCP") for p in spec.get("ports") or []]
    pod_spec = spec if info.kind == "Pod" else ((spec.get("template") or {}).get("spec") or {})
    return [(int(p.get("containerPort") or 0), p.get("protocol") or "TCP") for c in pod_spec.get("containers") or [] for p in c.get("ports") or []]


def cmd_expose(k: K) -> None:
    assert k.p is not None
    o = k.opts
    if not k.p.args:
        raise UsageError("You must provide one or more resources by argument or filename.\nExample resource specifications include:\n   '-f rsrc.yaml'\n   '--filename=rsrc.json'\n   '<resource> <name>'\n   '<resource>'", "expose", flag_error=False)
    groups = resource_args(k.p.args)
    pairs = [(info, n) for kinds, names in groups for info in kinds for n in names]
    if not pairs:
        raise KubectlError("resource(s) were provided, but no name was specified")
    for info, name in pairs:
        obj = k.api.get(info.kind, name, k.namespace if info.namespaced else None)
        if info.kind not in ("Pod", "Service", "Deployment", "ReplicaSet", "ReplicationController"):
            raise KubectlError(f"cannot expose a {info.kind}.{info.group}" if info.group else f"cannot expose a {info.kind}")
        if o.get("selector"):
            selector = _kv_list(o["selector"], "selector")
        else:
            selector = _selector_of(info, obj)
            if not selector:
                raise KubectlError("couldn't retrieve selectors via --selector flag or introspection")
        ports: list[tuple[int, str]]
        if o.get("port"):
            try:
                ports = [(int(o["port"]), o.get("protocol") or "")]
            except ValueError:
                raise KubectlError(f'strconv.Atoi: parsing "{o["port"]}": invalid syntax') from None
        else:
            ports = _ports_of(info, obj)
            if not ports:
                raise UsageError("couldn't find port via --port flag or introspection", "expose", flag_error=False)
            if o.get("protocol"):
                ports = [(p, o["protocol"]) for p, _ in ports]
        target = o.get("target-port") or ""
        sports: list[Obj] = []
        for i, (port, proto) in enumerate(ports):
            entry: Obj = {}
            if len(ports) > 1:
                entry["name"] = f"port-{i + 1}"
            entry["protocol"] = proto or "TCP"
            entry["port"] = port
            entry["targetPort"] = (int(target) if target.isdigit() else target) if target else port
            sports.append(entry)
        labels = _kv_list(o["labels"], "label") if o.get("labels") else dict(obj["metadata"].get("labels") or {})
        meta: Obj = {"name": o.get("name") or name, "creationTimestamp": None}
        if labels:
            meta["labels"] = labels
        spec: Obj = {"ports": sports, "selector": selector}
        if o.get("cluster-ip"):
            spec["clusterIP"] = o["cluster-ip"]
        stype = o.get("type") or ""
        if stype:
            if stype not in ("ClusterIP", "NodePort", "LoadBalancer", "ExternalName"):
                raise ApiError(422, "Invalid", f'Service "{meta["name"]}" is invalid: spec.type: Unsupported value: "{stype}": supported values: "ClusterIP", "ExternalName", "LoadBalancer", "NodePort"')
            spec["type"] = stype
        svc = {"kind": "Service", "apiVersion": "v1", "metadata": meta, "spec": spec, "status": {"loadBalancer": {}}}
        emit(k, svc, "service", "exposed")

