"""Manifests and patch bodies judged as data: privilege, host mounts, replicas, RBAC grants, policies.

A body that parses (YAML or JSON, a ``List``, a JSON patch) is walked for
security-relevant keys wherever they nest; one that does not is scanned as
text, so a malformed patch still shows ``privileged: true``.
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from .context import clean_path
from .flags import RiskCategory as C
from .flags import Severity as S
from .judge import Judge
from .kubectl_args import CLUSTER_SCOPED, KIND_TO_TYPE, WORKLOAD_TYPES

__all__ = ["judge_manifest", "judge_spec_text", "manifest_objects"]

_SENSITIVE_HOST_PATHS = ("/etc", "/root", "/var/run/docker.sock", "/run/containerd", "/var/run/containerd", "/var/run/crio", "/proc", "/sys", "/dev", "/boot", "/var/lib/kubelet", "/var/lib/etcd", "/etc/kubernetes", "/home", "/var/lib/docker")
_TEXT_NEEDLES = (
    ("privileged:true", S.HIGH, "runs a privileged container"),
    ("hostpid:true", S.HIGH, "hostPID: true shares the node's process namespace"),
    ("hostnetwork:true", S.MEDIUM, "hostNetwork: true shares the node's network namespace"),
    ("allowprivilegeescalation:true", S.MEDIUM, "allows privilege escalation"),
    ("type:unconfined", S.HIGH, "an unconfined AppArmor/seccomp profile"),
)


def manifest_objects(text: str, ns: str) -> list[tuple[str, str, str]]:
    out: list[tuple[str, str, str]] = []
    for doc in _load_docs(text):
        kind = doc.get("kind")
        meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
        if isinstance(kind, str):
            t = KIND_TO_TYPE.get(kind, kind.lower())
            out.append((t, str(meta.get("name") or ""), str(meta.get("namespace") or ns)))
    return out


def judge_manifest(j: Judge, text: str, ns: str) -> None:
    docs = _load_docs(text)
    if not docs:
        judge_spec_text(j, text, None, ns)
        return
    for doc in docs:
        kind = doc.get("kind")
        meta = doc.get("metadata") if isinstance(doc.get("metadata"), dict) else {}
        t = KIND_TO_TYPE.get(kind, str(kind).lower()) if isinstance(kind, str) else ""
        name = str(meta.get("name") or "")
        doc_ns = str(meta.get("namespace") or ns)
        if t and t not in CLUSTER_SCOPED:
            if not j.app_ns(doc_ns):
                j.ns_interference(doc_ns, f"applying {kind}/{name}")
            elif t in WORKLOAD_TYPES or t == "service":
                j.workload_change(t, name, doc_ns, "replaces")
        if t in ("clusterrolebinding", "rolebinding"):
            ref = doc.get("roleRef") if isinstance(doc.get("roleRef"), dict) else {}
            if ref.get("name") in ("cluster-admin", "admin") or "system:masters" in str(doc.get("subjects")):
                j.acc.add(C.PRIVILEGE_BYPASS, S.HIGH, f"{kind} grants {ref.get('name') or 'system:masters'}")
        elif t in ("clusterrole", "role"):
            rules = doc.get("rules") if isinstance(doc.get("rules"), list) else []
            if any(isinstance(r, dict) and "*" in (r.get("verbs") or []) and "*" in (r.get("resources") or []) for r in rules):
                j.acc.add(C.PRIVILEGE_BYPASS, S.MEDIUM, f"{kind} {name} allows every verb on every resource")
        elif t == "networkpolicy":
            j.acc.add(C.NETWORK_DISRUPTION, S.MEDIUM, f"applies NetworkPolicy {name}: it can cut the app's traffic")
        elif t == "namespace":
            labels = meta.get("labels") if isinstance(meta.get("labels"), dict) else {}
            if any("pod-security" in str(key) and str(v) == "privileged" for key, v in labels.items()):
                j.acc.add(C.PRIVILEGE_BYPASS, S.HIGH, "turns off Pod Security admission for a namespace")
        _walk(j, doc, (t, name), doc_ns)


def judge_spec_text(j: Judge, text: str, target: tuple[str, str | None] | None, ns: str) -> None:
    """A patch or override body: walk it as data, or scan it as text when it does not parse."""
    docs = _load_docs(text, allow_list=True)
    if docs:
        for d in docs:
            _walk(j, d, target, ns)
        return
    flat = text.lower().replace(" ", "").replace('"', "").replace("'", "")
    for needle, sev, why in _TEXT_NEEDLES:
        if needle in flat:
            j.acc.add(C.PRIVILEGE_BYPASS, sev, why)
    if re.search(r"replicas:0(?![0-9])", flat):
        j.acc.add(C.UNSAFE_MASS_RESTART, S.HIGH, "sets replicas to zero")


def _walk(j: Judge, root: Any, target: tuple[str, str | None] | None, ns: str) -> None:
    """Look for security-relevant keys anywhere in a manifest/patch (pod specs nest deeply).

    Iterative with a budget of visited values: YAML aliases can make a
    16 KB document describe an exponentially large tree.
    """
    acc = j.acc
    stack = [root]
    budget = 20_000
    while stack:
        node = stack.pop()
        if isinstance(node, list):
            budget -= len(node)
            if budget < 0:
                return
            for item in node:
                if isinstance(item, dict) and "op" in item and "path" in item:  # JSON patch operation
                    key = str(item.get("path")).rstrip("/").rsplit("/", 1)[-1]
                    stack.append({key: item.get("value")})
                else:
                    stack.append(item)
            continue
        if not isinstance(node, dict):
            continue
        budget -= len(node)
        if budget < 0:
            return
        for key, value in node.items():
            k = str(key)
            if k == "privileged" and value is True:
                acc.add(C.PRIVILEGE_BYPASS, S.HIGH, "runs a privileged container")
            elif k in ("hostPID", "hostNetwork", "hostIPC") and value is True:
                acc.add(C.PRIVILEGE_BYPASS, S.HIGH if k == "hostPID" else S.MEDIUM, f"{k}: true shares the node's namespaces")
            elif k == "allowPrivilegeEscalation" and value is True:
                acc.add(C.PRIVILEGE_BYPASS, S.MEDIUM, "allows privilege escalation")
            elif k == "capabilities" and isinstance(value, dict):
                add = value.get("add")
                added = {str(c).upper().removeprefix("CAP_") for c in add} if isinstance(add, list) else set()
                if added & {"SYS_ADMIN", "ALL", "SYS_MODULE", "SYS_PTRACE", "DAC_READ_SEARCH", "SYS_RAWIO"}:
                    acc.add(C.PRIVILEGE_BYPASS, S.HIGH, f"adds capabilities {', '.join(sorted(added))}")
                elif added & {"NET_ADMIN", "NET_RAW"}:
                    acc.add(C.PRIVILEGE_BYPASS, S.MEDIUM, f"adds capabilities {', '.join(sorted(added))}")
            elif k in ("seccompProfile", "appArmorProfile") and isinstance(value, dict):
                if str(value.get("type", "")).lower() == "unconfined":
                    acc.add(C.PRIVILEGE_BYPASS, S.HIGH, f"{k} Unconfined disables the sandbox")
            elif ("apparmor.security" in k or "seccomp.security" in k) and "unconfined" in str(value).lower():
                acc.add(C.PRIVILEGE_BYPASS, S.HIGH, "annotation sets AppArmor/seccomp to unconfined")
            elif k == "hostPath" and isinstance(value, dict):
                path = clean_path(str(value.get("path", "")))
                if path == "/" or any(path == p or path.startswith(p + "/") for p in _SENSITIVE_HOST_PATHS):
                    acc.add(C.PRIVILEGE_BYPASS, S.HIGH, f"mounts the node's {path} into a pod")
            elif k == "replicas" and value == 0 and not isinstance(value, bool):
                name = target[1] if target else None
                acc.add(C.UNSAFE_MASS_RESTART, S.HIGH, f"sets replicas of {name or 'a workload'} to zero")
            elif k == "unschedulable" and value is True and target and target[0] == "node" and target[1]:
                j.node_interference(target[1], "cordoning")
            elif isinstance(value, (dict, list)):
                stack.append(value)


def _load_docs(text: str, allow_list: bool = False) -> list[Any]:
    """YAML/JSON documents in ``text``; [] when it does not parse (then the text scan takes over)."""
    if not text or len(text) > 200_000:
        return []
    try:
        loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
        docs = [d for d in yaml.load_all(text, Loader=loader) if d is not None]
    except Exception:  # any YAML error, recursion on hostile nesting, ...
        return []
    out: list[Any] = []
    for d in docs:
        if isinstance(d, dict) and d.get("kind") == "List" and isinstance(d.get("items"), list):
            out.extend(x for x in d["items"] if isinstance(x, dict))
        elif isinstance(d, dict) or (allow_list and isinstance(d, list)):
            out.append(d)
    return out
