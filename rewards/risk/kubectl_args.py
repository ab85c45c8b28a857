"""Reading one kubectl invocation the way pflag does, leniently: verb, subcommand, flags, targets.

Flags may come anywhere (``-nX``, ``--x=y``, grouped booleans); the verb
tables of :mod:`sre_env.shell.kubectl` say which flags take values, and verbs
this environment does not implement are read with a few extra names, so an
invocation is never a usage error here. Also the resource-type vocabulary
(aliases, kinds, which types are cluster-scoped).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sre_env.shell.kubectl import COMMANDS
from sre_env.shell.spec import GLOBAL_FLAGS, Cmd

__all__ = [
    "KubectlCall",
    "parse_kubectl",
    "first_positional",
    "parse_targets",
    "canon_type",
    "truthy",
    "KIND_TO_TYPE",
    "CLUSTER_SCOPED",
    "WORKLOAD_TYPES",
    "READ_VERBS",
    "MUTATING_HINT",
]

_GLOBAL_VALUED_LONG = frozenset(f.name for f in GLOBAL_FLAGS if f.kind != "bool")
_GLOBAL_VALUED_SHORT = frozenset(f.short for f in GLOBAL_FLAGS if f.kind != "bool" and f.short)
#: long flags that take a value on verbs this environment does not implement (run, create rolebinding, ...)
_EXTRA_VALUED = frozenset(
    {
        "namespace", "selector", "output", "container", "filename", "patch", "env", "image", "overrides", "port",
        "restart", "clusterrole", "role", "user", "serviceaccount", "group", "labels", "replicas", "type",
        "field-selector", "grace-period", "timeout", "to-revision", "target-port", "name", "profile", "from-literal",
        "limits", "requests", "pod-selector", "min", "max", "verb", "resource",
    }
)
_EXTRA_SHORT = {"n": "namespace", "l": "selector", "o": "output", "c": "container", "f": "filename", "p": "patch", "e": "env"}
_SHORT_BOOL_NAMES = {"A": "all-namespaces", "i": "stdin", "t": "tty", "q": "quiet", "w": "watch", "h": "help"}

_GROUPS: dict[str, dict[str, str]] = {
    "rollout": {s: s for s in ("status", "restart", "undo", "history", "pause", "resume")},
    "set": {s: s for s in ("env", "image", "resources", "selector", "serviceaccount", "subject")},
    "top": {"pod": "pod", "pods": "pod", "po": "pod", "node": "node", "nodes": "node", "no": "node"},
    "config": {},
    "auth": {},
    "certificate": {"approve": "approve", "deny": "deny"},
    "create": {
        "configmap": "configmap", "cm": "configmap", "namespace": "namespace", "ns": "namespace", "secret": "secret generic",
        "clusterrolebinding": "clusterrolebinding", "rolebinding": "rolebinding", "clusterrole": "clusterrole", "role": "role",
        "deployment": "deployment", "deploy": "deployment", "service": "service", "svc": "service", "job": "job",
        "cronjob": "cronjob", "serviceaccount": "serviceaccount", "sa": "serviceaccount", "token": "token",
        "priorityclass": "priorityclass", "quota": "quota", "ingress": "ingress", "poddisruptionbudget": "pdb", "pdb": "pdb",
    },
}

_TYPES: dict[str, str] = {}
for _canon, _aliases in {
    "pod": ("po", "pod", "pods"),
    "deployment": ("deploy", "deployment", "deployments"),
    "statefulset": ("sts", "statefulset", "statefulsets"),
    "daemonset": ("ds", "daemonset", "daemonsets"),
    "replicaset": ("rs", "replicaset", "replicasets"),
    "service": ("svc", "service", "services"),
    "endpoints": ("ep", "endpoints", "endpoint", "endpointslice", "endpointslices"),
    "pvc": ("pvc", "pvcs", "persistentvolumeclaim", "persistentvolumeclaims"),
    "pv": ("pv", "pvs", "persistentvolume", "persistentvolumes"),
    "namespace": ("ns", "namespace", "namespaces"),
    "node": ("no", "node", "nodes"),
    "networkpolicy": ("netpol", "networkpolicy", "networkpolicies"),
    "configmap": ("cm", "configmap", "configmaps"),
    "secret": ("secret", "secrets"),
    "all": ("all",),
    "clusterrolebinding": ("clusterrolebinding", "clusterrolebindings"),
    "rolebinding": ("rolebinding", "rolebindings"),
    "clusterrole": ("clusterrole", "clusterroles"),
    "role": ("role", "roles"),
    "serviceaccount": ("sa", "serviceaccount", "serviceaccounts"),
    "storageclass": ("sc", "storageclass", "storageclasses"),
    "crd": ("crd", "crds", "customresourcedefinition", "customresourcedefinitions"),
    "webhook": ("validatingwebhookconfiguration", "validatingwebhookconfigurations", "mutatingwebhookconfiguration", "mutatingwebhookconfigurations"),
    "psp": ("psp", "podsecuritypolicy", "podsecuritypolicies"),
    "job": ("job", "jobs"),
    "cronjob": ("cj", "cronjob", "cronjobs"),
}.items():
    for _a in _aliases:
        _TYPES[_a] = _canon

KIND_TO_TYPE = {
    "Pod": "pod", "Deployment": "deployment", "StatefulSet": "statefulset", "DaemonSet": "daemonset", "ReplicaSet": "replicaset",
    "Service": "service", "Endpoints": "endpoints", "EndpointSlice": "endpoints", "PersistentVolumeClaim": "pvc",
    "PersistentVolume": "pv", "Namespace": "namespace", "Node": "node", "NetworkPolicy": "networkpolicy", "ConfigMap": "configmap",
    "Secret": "secret", "ClusterRoleBinding": "clusterrolebinding", "RoleBinding": "rolebinding", "ClusterRole": "clusterrole",
    "Role": "role", "ServiceAccount": "serviceaccount", "StorageClass": "storageclass", "CustomResourceDefinition": "crd",
    "ValidatingWebhookConfiguration": "webhook", "MutatingWebhookConfiguration": "webhook", "PodSecurityPolicy": "psp",
    "Job": "job", "CronJob": "cronjob",
}
CLUSTER_SCOPED = frozenset({"pv", "namespace", "node", "clusterrolebinding", "clusterrole", "storageclass", "crd", "webhook", "psp"})
WORKLOAD_TYPES = frozenset({"deployment", "statefulset", "daemonset", "replicaset"})
READ_VERBS = frozenset(
    {
        "get", "describe", "logs", "top", "events", "explain", "api-resources", "api-versions", "version", "cluster-info",
        "auth", "diff", "wait", "port-forward", "proxy", "help", "completion", "options", "plugin", "kustomize", "attach",
    }
)
MUTATING_HINT = frozenset({"create", "apply", "replace", "delete", "patch", "scale", "set", "rollout", "label", "annotate", "taint", "cordon", "drain", "run", "expose", "autoscale", "edit", "cp"})


def canon_type(t: str) -> str:
    t = t.lower()
    return _TYPES.get(t) or _TYPES.get(t.split(".", 1)[0], t.split(".", 1)[0])


def truthy(v: Any) -> bool:
    return v is True or (isinstance(v, str) and v.lower() in ("true", "1", "t", "yes"))


@dataclass
class KubectlCall:
    """One kubectl invocation, read leniently (never a usage error)."""

    verb: str
    sub: str
    opts: dict[str, Any]
    args: list[str]
    dash: list[str] | None
    ns: str
    ns_given: bool


def first_positional(argv: list[str], start: int = 0) -> int:
    i = start
    while i < len(argv):
        a = argv[i]
        if a == "--":
            return -1
        if a.startswith("--") and len(a) > 2:
            name = a[2:].split("=", 1)[0]
            i += 2 if (name in _GLOBAL_VALUED_LONG and "=" not in a) else 1
            continue
        if a.startswith("-") and len(a) > 1:
            i += 2 if (a[1] in _GLOBAL_VALUED_SHORT and len(a) == 2) else 1
            continue
        return i
    return -1


def parse_kubectl(argv: list[str], default_ns: str) -> KubectlCall | None:
    pos = first_positional(argv)
    if pos < 0:
        return None
    verb = argv[pos]
    rest = argv[:pos] + argv[pos + 1 :]
    sub = ""
    group = _GROUPS.get(verb)
    if group is not None:
        p2 = first_positional(rest)
        if p2 >= 0 and (not group or rest[p2] in group or verb in ("config", "auth")):
            sub = group.get(rest[p2], rest[p2])
            rest = rest[:p2] + rest[p2 + 1 :]
    cmd: Cmd | None = COMMANDS.get(f"{verb} {sub}" if sub else verb)
    opts, args, dash = _kopts(rest, cmd)
    ns_val = opts.get("namespace")
    ns_given = isinstance(ns_val, str) and ns_val != ""
    return KubectlCall(verb, sub, opts, args, dash, ns_val if ns_given else default_ns, ns_given)


def _kopts(argv: list[str], cmd: Cmd | None) -> tuple[dict[str, Any], list[str], list[str] | None]:
    """pflag's reading (flags anywhere, ``-nX``, ``--x=y``, grouped booleans) that tolerates unknown flags."""
    long = cmd.long if cmd is not None else {}
    shorts = cmd.shorts if cmd is not None else {}
    opts: dict[str, Any] = {}
    args: list[str] = []
    i, n = 0, len(argv)
    while i < n:
        a = argv[i]
        i += 1
        if a == "--":
            return opts, args, argv[i:]
        if len(a) < 2 or a[0] != "-":
            args.append(a)
            continue
        if a[1] == "-":
            name, eq, val = a[2:].partition("=")
            f = long.get(name)
            key = f.name if f is not None else name
            valued = (f.kind != "bool") if f is not None else name in _EXTRA_VALUED
            if eq:
                opts[key] = val
            elif valued and i < n:
                opts[key] = argv[i]
                i += 1
            else:
                opts[key] = True
            continue
        j = 1
        while j < len(a):
            ch = a[j]
            f = shorts.get(ch)
            if f is not None:
                key, valued = f.name, f.kind != "bool"
            else:
                key = _EXTRA_SHORT.get(ch) or _SHORT_BOOL_NAMES.get(ch, ch)
                valued = ch in _EXTRA_SHORT
            tail = a[j + 1 :]
            if not valued:
                if tail.startswith("="):
                    opts[key] = tail[1:]
                    break
                opts[key] = True
                j += 1
                continue
            if tail:
                opts[key] = tail[1:] if tail.startswith("=") else tail
            elif i < n:
                opts[key] = argv[i]
                i += 1
            else:
                opts[key] = ""
            break
    return opts, args, None


def parse_targets(args: list[str]) -> list[tuple[str, str | None]]:
    """``deploy/x``, ``deployment x y``, ``pods,svc`` -> [(type, name or None)]; KEY=VAL words are skipped."""
    if not args:
        return []
    first = args[0]
    if "/" in first:
        out = []
        for a in args:
            if "/" in a and "=" not in a:
                t, _, name = a.partition("/")
                out.append((canon_type(t), name or None))
        return out
    types = [canon_type(t) for t in first.split(",") if t]
    names = [a for a in args[1:] if "=" not in a and ":" not in a and not a.endswith("-")]
    if not names:
        return [(t, None) for t in types]
    return [(t, nm) for t in types for nm in names]
