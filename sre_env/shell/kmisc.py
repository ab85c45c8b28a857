"""kubectl verbs that read from workloads or the client: logs, exec, top, debug, version, config, api-resources, explain, auth."""

from __future__ import annotations

import re
from typing import Any

from sre_env.kube.kinds import KINDS, resolve_kind
from sre_env.kube.quantity import format_memory
from sre_env.kube.rbac import ApiRbacObjects, allows

from ..errors import ApiError
from .kctx import K, resolve_type
from .spec import KubectlError, UsageError
from .tabwriter import tabwrite

__all__ = [
    "cmd_logs", "cmd_exec", "cmd_top_pod", "cmd_top_node", "cmd_debug", "cmd_version", "cmd_config_current_context",
    "cmd_config_get_contexts", "cmd_config_view", "cmd_config_use_context", "cmd_config_set_context",
    "cmd_api_resources", "cmd_explain", "cmd_auth_can_i", "parse_duration", "CONTEXT", "VERSION",
]

Obj = dict[str, Any]
CONTEXT = "sre-env"
VERSION = "v1.32.2"
_DUR = re.compile(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)")
_UNIT = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(text: str, flag: str) -> float:
    """Go's time.ParseDuration, with its error wording."""
    s = text.strip()
    if s in ("0", ""):
        return 0.0
    pos, total = 0, 0.0
    while pos < len(s):
        m = _DUR.match(s, pos)
        if not m:
            rest = s[pos:]
            unit = re.match(r"\d*\.?\d*([^\d]*)", rest)
            if unit and unit.group(1) and re.match(r"\d", rest):
                raise KubectlError(f'invalid argument "{text}" for "{flag}" flag: time: unknown unit "{unit.group(1)}" in duration "{text}"')
            if re.fullmatch(r"\d+", rest):
                raise KubectlError(f'invalid argument "{text}" for "{flag}" flag: time: missing unit in duration "{text}"')
            raise KubectlError(f'invalid argument "{text}" for "{flag}" flag: time: invalid duration "{text}"')
        total += float(m.group(1)) * _UNIT[m.group(2)]
        pos = m.end()
    return total


def _pod_for(k: K, target: str, verb: str) -> Obj:
    """A pod name, ``pod/NAME``, or ``deploy/NAME`` etc. (kubectl picks the first matching pod)."""
    if "/" not in target:
        return k.api.get("Pod", target, k.namespace)
    t, _, name = target.partition("/")
    info = resolve_type(t)
    if info.kind == "Pod":
        return k.api.get("Pod", name, k.namespace)
    if info.kind not in ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Service"):
        raise KubectlError(f"cannot {verb} from {info.kind.lower()}/{name}: not a workload")
    obj = k.api.get(info.kind, name, k.namespace)
    if info.kind == "Service":
        sel = (obj.get("spec") or {}).get("selector") or {}
    else:
        sel = ((obj.get("spec") or {}).get("selector") or {}).get("matchLabels") or {}
    selector = ",".join(f"{a}={b}" for a, b in sorted(sel.items()))
    pods = k.api.list("Pod", k.namespace, selector) if selector else []
    if not pods:
        raise KubectlError("timed out waiting for the condition")
    running = [p for p in pods if (p.get("status") or {}).get("phase") == "Running"] or pods
    if len(pods) > 1:
        k.err.append(f"Found {len(pods)} pods, using pod/{running[0]['metadata']['name']}\n")
    return running[0]


def _default_container(k: K, pod: Obj, container: str | None, all_containers: bool = False) -> str | None:
    cs = [c.get("name") for c in (pod.get("spec") or {}).get("containers") or []]
    if container:
        inits = [c.get("name") for c in (pod.get("spec") or {}).get("initContainers") or []]
        if container not in cs and container not in inits:
            raise KubectlError(f"container {container} is not valid for pod {pod['metadata']['name']}", raw=False)
        return container
    ann = (pod["metadata"].get("annotations") or {}).get("kubectl.kubernetes.io/default-container")
    if ann:
        return ann
    if len(cs) > 1 and not all_containers:
        inits = [f"{c.get('name')} (init)" for c in (pod.get("spec") or {}).get("initContainers") or []]
        k.err.append(f'Defaulted container "{cs[0]}" out of: {", ".join(cs + inits)}\n')
    return cs[0] if cs else None


def cmd_logs(k: K) -> None:
    p = k.p
    assert p is not None
    o = p.opts
    if o.get("follow"):
        raise KubectlError("--follow (-f) is not supported: this session is not interactive; use --tail=N or --since=DURATION to read recent lines")
    since = parse_duration(o["since"], "--since") if o.get("since") else None
    tail = o.get("tail")
    if tail is not None and tail < 0:
        tail = None
    pods: list[Obj]
    if o.get("selector"):
        if p.args:
            raise KubectlError("only a selector (-l) or a POD name is allowed")
        try:
            pods = list(k.api.list("Pod", k.namespace, o["selector"]))[: int(o.get("max-log-requests") or 5)]
        except ValueError as exc:
            raise KubectlError(str(exc)) from None
        if not pods:
            k.err.append(f"No resources found in {k.namespace} namespace.\n")
            return
        if tail is None:
            tail = 10  # kubectl's default for selector-based logs
    else:
        if not p.args:
            raise UsageError("expected POD or TYPE/NAME is a required argument for the logs command", "logs", flag_error=False)
        target = p.args[0]
        if len(p.args) == 2 and not o.get("container"):
            o["container"] = p.args[1]
        elif len(p.args) > 2:
            raise UsageError("expected a POD and optionally a container", "logs", flag_error=False)
        pods = [_pod_for(k, target, "logs")]
    multi = len(pods) > 1
    for pod in pods:
        name = pod["metadata"]["name"]
        if o.get("all-containers"):
            containers = [c.get("name") for c in (pod.get("spec") or {}).get("containers") or []]
        else:
            containers = [_default_container(k, pod, o.get("container"))]
        for c in containers:
            text = k.api.logs(name, k.namespace, c, previous=bool(o.get("previous")), tail=tail, since_seconds=since, timestamps=bool(o.get("timestamps")))
            if o.get("prefix") or multi:
                text = "".join(f"[pod/{name}/{c}] {ln}\n" for ln in text.splitlines())
            elif text and not text.endswith("\n"):
                text += "\n"
            k.out.append(text)
    k.cost = 3.0


def cmd_exec(k: K) -> None:
    p = k.p
    assert p is not None
    if not p.args or p.dash == 0:
        raise UsageError("pod, type/name or --filename must be specified", "exec", flag_error=False)
    if p.dash < 0:
        if len(p.args) > 1:
            raise KubectlError("exec [POD] [COMMAND] is not supported anymore. Use exec [POD] -- [COMMAND] instead")
        raise KubectlError("you must specify at least one command for the container")
    if p.dash > 1:
        raise KubectlError("exec [POD] [COMMAND] is not supported anymore. Use exec [POD] -- [COMMAND] instead")
    argv = p.args[p.dash :]
    if not argv:
        raise KubectlError("you must specify at least one command for the container")
    pod = _pod_for(k, p.args[0], "exec")
    phase = (pod.get("status") or {}).get("phase")
    if phase in ("Succeeded", "Failed"):
        raise KubectlError(f"cannot exec into a container in a completed pod; current phase is {phase}")
    # a named container is checked by the API server (BadRequest), not by kubectl as for logs
    c = p.opts.get("container") or _default_container(k, pod, None)
    try:
        res = k.api.exec(pod["metadata"]["name"], k.namespace, c, argv)
    except ApiError as err:
        if err.message.startswith("unable to upgrade connection: "):
            raise KubectlError(err.message) from None  # the kubelet's plain-text refusal, not a Status
        raise
    out = res.output
    if out and not out.endswith("\n"):
        out += "\n"
    k.out.append(out)
    if res.exit_code:
        k.err.append(f"command terminated with exit code {res.exit_code}\n")
        k.code = res.exit_code
    k.cost = 6.0


def _cpu(m: int) -> str:
    return f"{m}m"




#: how the Metrics API answers where kubectl top finds no metrics.k8s.io among the served groups:
#: the aggregator leaves an APIService out of discovery while it is not Available, and requests
#: to it fail with 503 (404 when none is registered)
_NO_METRICS_API = (404, 503)


def cmd_top_pod(k: K) -> None:
    p = k.p
    assert p is not None
    o = p.opts
    all_ns = bool(o.get("all-namespaces"))
    try:
        rows = k.api.top_pods(None if all_ns else k.namespace)
    except ApiError as exc:
        if exc.code not in _NO_METRICS_API:
            raise
        k.fail("error: Metrics API not available")
        return
    if o.get("selector") or p.args:
        try:
            allowed = {(x["metadata"].get("namespace"), x["metadata"]["name"]) for x in k.api.list("Pod", None if all_ns else k.namespace, o.get("selector") or None)}
        except ValueError as exc:
            raise KubectlError(str(exc)) from None
        rows = [r for r in rows if (r[0], r[1]) in allowed]
    if p.args:
        rows = [r for r in rows if r[1] == p.args[0]]
        if not rows:
            raise ApiError(404, "NotFound", f'podmetrics.metrics.k8s.io "{k.namespace}/{p.args[0]}" not found')
    if not rows:
        k.err.append("No resources found\n" if all_ns else f"No resources found in {k.namespace} namespace.\n")
        return
    sort = o.get("sort-by")
    if sort == "cpu":
        rows = sorted(rows, key=lambda r: -r[2])
    elif sort == "memory":
        rows = sorted(rows, key=lambda r: -r[3])
    elif sort:
        raise KubectlError("--sort-by accepts only cpu or memory")
    lines = [] if o.get("no-headers") else [("NAMESPACE\t" if all_ns else "") + "NAME\tCPU(cores)\tMEMORY(bytes)\t"]
    for ns, name, cpu, mem in rows:
        # kubectl top terminates every cell with a tab, so the last column is padded too
        lines.append((f"{ns}\t" if all_ns else "") + f"{name}\t{_cpu(cpu)}\t{format_memory(mem)}\t")
    k.out.append(tabwrite("\n".join(lines) + "\n", 6, 3))


def cmd_top_node(k: K) -> None:
    p = k.p
    assert p is not None
    try:
        rows = k.api.top_nodes()
    except ApiError as exc:
        if exc.code not in _NO_METRICS_API:
            raise
        k.fail("error: Metrics API not available")
        return
    if p.args:
        rows = [r for r in rows if r[0] == p.args[0]]
        if not rows:
            raise ApiError(404, "NotFound", f'nodemetrics.metrics.k8s.io "{p.args[0]}" not found')
    if p.opts.get("selector"):
        names = {n["metadata"]["name"] for n in k.api.list("Node", None, p.opts["selector"])}
        rows = [r for r in rows if r[0] in names]
    if p.opts.get("sort-by") == "cpu":
        rows = sorted(rows, key=lambda r: -r[1])
    elif p.opts.get("sort-by") == "memory":
        rows = sorted(rows, key=lambda r: -r[3])
    lines = [] if p.opts.get("no-headers") else ["NAME\tCPU(cores)\tCPU(%)\tMEMORY(bytes)\tMEMORY(%)\t"]
    for name, cpu, cpu_cap, mem, mem_cap in rows:
        cpct = int(cpu * 100 / cpu_cap) if cpu_cap else 0
        mpct = int(mem * 100 / mem_cap) if mem_cap else 0
        lines.append(f"{name}\t{_cpu(cpu)}\t{cpct}%\t{format_memory(mem)}\t{mpct}%\t")
    k.out.append(tabwrite("\n".join(lines) + "\n", 6, 3))


_ALPHA = "bcdfghjklmnpqrstvwxz2456789"


def _suffix(seed: str) -> str:
    import zlib

    x = zlib.crc32(seed.encode())
    out = []
    for _ in range(5):
        x = (x * 1103515245 + 12345) & 0x7FFFFFFF
        out.append(_ALPHA[x % len(_ALPHA)])
    return "".join(out)


def host_argv(argv: list[str]) -> list[str]:
    """The debug pod mounts the host at /host: ``chroot /host CMD`` and ``/host/x`` paths run on the node."""
    if len(argv) >= 2 and argv[0] == "chroot" and argv[1] in ("/host", "/host/"):
        argv = argv[2:]
    return [("/" + a[len("/host/") :]) if a.startswith("/host/") else ("/" if a == "/host" else a) for a in argv]


def cmd_debug(k: K) -> None:
    p = k.p
    assert p is not None
    if not p.args or p.dash == 0:
        raise UsageError("NAME is required for debug", "debug", flag_error=False)
    target = p.args[0]
    argv = p.args[p.dash :] if p.dash > 0 else p.args[1:]
    if not target.startswith(("node/", "nodes/", "no/")):
        raise KubectlError(
            "debugging pods (ephemeral containers, --copy-to) is not supported in this environment; "
            "use 'kubectl exec POD -- CMD' for a pod, or 'kubectl debug node/NAME --image=busybox -- CMD' for a node"
        )
    node_name = target.split("/", 1)[1]
    node = k.api.get("Node", node_name)
    if not argv and (p.opts.get("stdin") or p.opts.get("tty")):
        raise KubectlError(
            f"interactive sessions are not supported in this environment; pass the command after --, e.g. "
            f"kubectl debug node/{node_name} -it --image=busybox -- chroot /host journalctl -u kubelet"
        )
    image = p.opts.get("image") or "busybox"
    existing = sum(1 for x in k.api.list("Pod", k.namespace) if x["metadata"]["name"].startswith(f"node-debugger-{node_name}-"))
    pod_name = f"node-debugger-{node_name}-{_suffix(f'{node_name}/{k.now}/{existing}')}"
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": pod_name, "namespace": k.namespace},
        "spec": {
            "containers": [
                {
                    "name": "debugger",
                    "image": image,
                    "imagePullPolicy": "IfNotPresent",
                    "stdin": bool(p.opts.get("stdin")),
                    "tty": bool(p.opts.get("tty")),
                    "terminationMessagePolicy": "File",
                    "volumeMounts": [{"mountPath": "/host", "name": "host-root"}],
                    **({"command": argv} if argv else {}),
                }
            ],
            "hostIPC": True,
            "hostNetwork": True,
            "hostPID": True,
            "nodeName": node["metadata"]["name"],
            "restartPolicy": "Never",
            "tolerations": [{"operator": "Exists"}],
            "volumes": [{"hostPath": {"path": "/"}, "name": "host-root"}],
        },
    }
    k.create(pod)
    k.err.append(f"Creating debugging pod {pod_name} with container debugger on node {node_name}.\n")
    k.cost = 8.0
    if not argv:
        return
    res = k.backend.nodes.exec(node_name, host_argv(argv))
    out = res.output
    if out and not out.endswith("\n"):
        out += "\n"
    k.out.append(out)
    if res.exit_code:
        k.code = res.exit_code


def cmd_version(k: K) -> None:
    o = k.opts.get("output")
    if o in ("json", "yaml"):
        from .printers import to_json, to_yaml

        doc = {
            "clientVersion": {"major": "1", "minor": "32", "gitVersion": VERSION, "platform": "linux/amd64"},
            "kustomizeVersion": "v5.5.0",
            "serverVersion": {"major": "1", "minor": "32", "gitVersion": VERSION, "platform": "linux/amd64"},
        }
        k.out.append(to_json(doc) + "\n" if o == "json" else to_yaml(doc))
        return
    k.line(f"Client Version: {VERSION}")
    if k.opts.get("client"):
        k.line("Kustomize Version: v5.5.0")
        return
    k.line("Kustomize Version: v5.5.0")
    k.line(f"Server Version: {VERSION}")


def cmd_config_current_context(k: K) -> None:
    k.line(CONTEXT)


def cmd_config_get_contexts(k: K) -> None:
    if k.opts.get("output") == "name":
        k.line(CONTEXT)
        return
    k.out.append(tabwrite(f"CURRENT\tNAME\tCLUSTER\tAUTHINFO\tNAMESPACE\n*\t{CONTEXT}\t{CONTEXT}\t{CONTEXT}\t{k.ctx.namespace}\n", 6, 3))


def cmd_config_view(k: K) -> None:
    k.out.append(
        "apiVersion: v1\nclusters:\n- cluster:\n    certificate-authority-data: DATA+OMITTED\n    server: https://127.0.0.1:6443\n"
        f"  name: {CONTEXT}\ncontexts:\n- context:\n    cluster: {CONTEXT}\n    namespace: {k.ctx.namespace}\n    user: {CONTEXT}\n  name: {CONTEXT}\n"
        f"current-context: {CONTEXT}\nkind: Config\npreferences: {{}}\nusers:\n- name: {CONTEXT}\n  user:\n    client-certificate-data: DATA+OMITTED\n    client-key-data: DATA+OMITTED\n"
    )


def cmd_config_use_context(k: K) -> None:
    assert k.p is not None
    if len(k.p.args) != 1:
        raise UsageError("Unexpected args: " + str(k.p.args), "config use-context", flag_error=False)
    if k.p.args[0] != CONTEXT:
        raise KubectlError(f'no context exists with the name: "{k.p.args[0]}"')
    k.line(f'Switched to context "{CONTEXT}".')


def cmd_config_set_context(k: K) -> None:
    p = k.p
    assert p is not None
    name = p.args[0] if p.args else (CONTEXT if p.opts.get("current") else "")
    if not name:
        raise KubectlError("you must specify a non-empty context name or --current")
    if name != CONTEXT:
        raise KubectlError(f"only the context {CONTEXT!r} exists in this environment")
    if "namespace" in p.set_flags:
        k.ctx.namespace = p.opts["namespace"]
    k.line(f'Context "{CONTEXT}" modified.')


def cmd_api_resources(k: K) -> None:
    wide_ns = k.opts.get("namespaced")
    rows = ["NAME\tSHORTNAMES\tAPIVERSION\tNAMESPACED\tKIND"]
    for info in sorted(KINDS, key=lambda i: (i.group, i.plural)):
        if wide_ns is not None and "namespaced" in (k.p.set_flags if k.p else ()) and info.namespaced != wide_ns:
            continue
        if k.opts.get("output") == "name":
            rows.append(info.resource)
            continue
        rows.append(f"{info.plural}\t{','.join(info.short_names)}\t{info.api_version}\t{'true' if info.namespaced else 'false'}\t{info.kind}")
    if k.opts.get("output") == "name":
        k.out.append("\n".join(rows[1:]) + "\n")
        return
    k.out.append(tabwrite("\n".join(rows) + "\n", 6, 3))


_DESCR = {
    "Pod": "Pod is a collection of containers that can run on a host. This resource is created by clients and scheduled onto hosts.",
    "Deployment": "Deployment enables declarative updates for Pods and ReplicaSets.",
    "ReplicaSet": "ReplicaSet ensures that a specified number of pod replicas are running at any given time.",
    "StatefulSet": "StatefulSet represents a set of pods with consistent identities.",
    "DaemonSet": "DaemonSet represents the configuration of a daemon set.",
    "Service": "Service is a named abstraction of software service (for example, mysql) consisting of local port (for example 3306) that the proxy listens on, and the selector that determines which pods will answer requests sent through the proxy.",
    "Node": "Node is a worker node in Kubernetes. Each node will have a unique identifier in the cache (i.e. in etcd).",
    "ConfigMap": "ConfigMap holds configuration data for pods to consume.",
    "Secret": "Secret holds secret data of a certain type. The total bytes of the values in the Data field must be less than MaxSecretSize bytes.",
}


def cmd_explain(k: K) -> None:
    p = k.p
    assert p is not None
    if not p.args:
        raise KubectlError("You must specify the type of resource to explain. Use \"kubectl api-resources\" for a complete list of supported resources.", raw=False)
    head, _, rest = p.args[0].partition(".")
    info = resolve_kind(head)
    if info is None:
        raise KubectlError(f'the server doesn\'t have a resource type "{head}"')
    k.line(f"GROUP:      {info.group}" if info.group else f"KIND:       {info.kind}")
    if info.group:
        k.line(f"KIND:       {info.kind}")
    k.line(f"VERSION:    {info.api_version.split('/')[-1]}")
    k.line("")
    if rest:
        k.line(f"FIELD: {rest.split('.')[-1]} <Object>")
        k.line("")
        k.line("DESCRIPTION:")
        k.line(f"    See the Kubernetes API reference for {info.kind}.{rest}.")
        return
    k.line("DESCRIPTION:")
    k.line("    " + _DESCR.get(info.kind, f"{info.kind} is a Kubernetes {info.api_version} resource."))
    k.line("    ")
    k.line("FIELDS:")
    k.line("  apiVersion\t<string>".replace("\t", "\t"))
    k.line("  kind\t<string>")
    k.line("  metadata\t<ObjectMeta>")
    if info.kind not in ("ConfigMap", "Secret", "Event"):
        k.line("  spec\t<Object>")
        k.line("  status\t<Object>")
    text = "".join(k.out)
    k.out.clear()
    k.seq.clear()
    k.out.append(tabwrite(text, 0, 2))


def cmd_auth_can_i(k: K) -> None:
    if k.opts.get("list"):
        k.out.append(tabwrite("Resources\tNon-Resource URLs\tResource Names\tVerbs\n*.*\t[]\t[]\t[*]\n\t[*]\t[]\t[*]\n", 6, 3))
        return
    assert k.p is not None
    if len(k.p.args) < 2 and not k.opts.get("list"):
        raise UsageError("you must specify two arguments: verb resource or verb resource/resourceName.", "auth can-i", flag_error=False)
    user = k.opts.get("as")
    if not user:
        k.line("yes")  # the agent's kubeconfig is cluster-admin
        return
    verb, target = k.p.args[0], k.p.args[1]
    resource, _, name = target.partition("/")
    info = resolve_kind(resource)
    plural, group = (info.plural, info.group) if info is not None else (resource.split(".", 1)[0], resource.split(".", 1)[1] if "." in resource else "")
    ns = None if (info is not None and not info.namespaced) or k.opts.get("all-namespaces") else k.namespace
    if allows(ApiRbacObjects(k.api), user, verb, plural, group, ns, name or None):
        k.line("yes")
    else:
        k.line("no")
        k.code = 1
