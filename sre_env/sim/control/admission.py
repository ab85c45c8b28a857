"""The API server's admission chain for pods: mutating webhooks, PodSecurity, validating webhooks.

Every pod the API creates passes here — the ones an agent applies and the ones
the ReplicaSet and Job controllers create — in the order kube-apiserver runs
its plugins: mutating admission webhooks, then the built-in PodSecurity check
(the namespace's ``pod-security.kubernetes.io/enforce`` label), then validating
admission webhooks. A webhook is *called*: its Service is resolved through the
same network model pods use, its serving certificate is checked against the
configuration's ``caBundle``, and whatever fails comes back as the apiserver's
own error text. A controller whose create is rejected records ``FailedCreate``
and retries with back-off (``sched_hooks.failed_create``), so fixing the cause
heals the workload without a nudge, as on a real cluster.

The one webhook back end modelled beyond reachability is Gatekeeper's mutation
webhook, which applies ``Assign`` mutators (``mutations.gatekeeper.sh/v1``).
"""

from __future__ import annotations

import base64
import copy
import fnmatch
import functools
import re
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from sre_env.errors import ApiError
from sre_env.kube.selectors import has_labels, label_selector_matches
from sre_env.kube.timefmt import EPOCH
from sre_env.kube.tls import parse_certificate, unb64, x509_time_error
from sre_env.sim.network.netmodel import routing_revision
from sre_env.sim.network.routing import resolve_route

if TYPE_CHECKING:
    from sre_env.sim.kernel.world import World

__all__ = ["admit_pod", "apply_assign_mutators", "call_webhook", "pod_security_violations", "webhook_applies"]

Obj = dict[str, Any]

ENFORCE = "pod-security.kubernetes.io/enforce"
ENFORCE_VERSION = "pod-security.kubernetes.io/enforce-version"


# --------------------------------------------------------------------------- PodSecurity
def _ctx(pod_spec: Obj, ctr: Obj, key: str) -> Any:
    c = (ctr.get("securityContext") or {}).get(key)
    if c is not None:
        return c
    return (pod_spec.get("securityContext") or {}).get(key)


def pod_security_violations(pod_spec: Obj, level: str) -> list[str]:
    """The checks of the Pod Security Standards a pod spec fails, worded as the apiserver words them."""
    out: list[str] = []
    containers = list(pod_spec.get("initContainers") or ()) + list(pod_spec.get("containers") or ())
    names = [c.get("name", "") for c in containers]

    def quoted(ns: list[str]) -> str:
        return ", ".join(f'"{n}"' for n in ns)

    def plural(ns: list[str], what: str = "container") -> str:
        return f"{what}{'s' if len(ns) > 1 else ''} {quoted(ns)}"

    # baseline
    if pod_spec.get("hostNetwork") or pod_spec.get("hostPID") or pod_spec.get("hostIPC"):
        out.append("host namespaces (" + ", ".join(f"{k}=true" for k in ("hostNetwork", "hostPID", "hostIPC") if pod_spec.get(k)) + ")")
    priv = [c.get("name", "") for c in containers if (c.get("securityContext") or {}).get("privileged")]
    if priv:
        out.append(f"privileged ({plural(priv)} must not set securityContext.privileged=true)")
    host_paths = [v.get("name", "") for v in pod_spec.get("volumes") or () if "hostPath" in v]
    if host_paths:
        out.append(f"hostPath volume{'s' if len(host_paths) > 1 else ''} ({quoted(host_paths)})")
    if level != "restricted":
        return out
    # restricted
    ape = [n for c, n in zip(containers, names) if (c.get("securityContext") or {}).get("allowPrivilegeEscalation") is not False]
    if ape:
        out.append(f"allowPrivilegeEscalation != false ({plural(ape)} must set securityContext.allowPrivilegeEscalation=false)")
    caps = [n for c, n in zip(containers, names) if "ALL" not in (((c.get("securityContext") or {}).get("capabilities") or {}).get("drop") or ())]
    if caps:
        out.append(f'unrestricted capabilities ({plural(caps)} must set securityContext.capabilities.drop=["ALL"])')
    non_root = [n for c, n in zip(containers, names) if _ctx(pod_spec, c, "runAsNonRoot") is not True]
    if non_root:
        out.append(f"runAsNonRoot != true (pod or {plural(non_root)} must set securityContext.runAsNonRoot=true)")
    seccomp = [n for c, n in zip(containers, names) if ((_ctx(pod_spec, c, "seccompProfile") or {}).get("type") not in ("RuntimeDefault", "Localhost"))]
    if seccomp:
        out.append(f'seccompProfile (pod or {plural(seccomp)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")')
    return out


def _pod_security(world: World, pod: Obj, ns_obj: Obj | None) -> None:
    labels = (ns_obj or {}).get("metadata", {}).get("labels") or {}
    level = labels.get(ENFORCE, "privileged")
    if level not in ("baseline", "restricted"):
        return
    problems = pod_security_violations(pod.get("spec") or {}, level)
    if problems:
        version = labels.get(ENFORCE_VERSION, "latest")
        raise ApiError.forbidden(f'pods "{pod["metadata"]["name"]}" is forbidden: violates PodSecurity "{level}:{version}": ' + ", ".join(problems))


# --------------------------------------------------------------------------- webhooks
def _rule_matches(rule: Obj, operation: str, group: str, resource: str) -> bool:
    ops = rule.get("operations") or ()
    groups = rule.get("apiGroups") or ()
    resources = rule.get("resources") or ()
    return (
        ("*" in ops or operation in ops)
        and ("*" in groups or group in groups)
        and ("*" in resources or resource in resources or "*/*" in resources)
    )


def webhook_applies(hook: Obj, operation: str, obj: Obj, ns_obj: Obj | None) -> bool:
    if not any(_rule_matches(r, operation, "", "pods") for r in hook.get("rules") or ()):
        return False
    ns_labels = (ns_obj or {}).get("metadata", {}).get("labels") or {}
    # the API server defaults an absent namespaceSelector/objectSelector to {}: every object
    if not label_selector_matches(hook.get("namespaceSelector") or {}, ns_labels):
        return False
    return label_selector_matches(hook.get("objectSelector") or {}, obj["metadata"].get("labels"))


def _pem_body(pem_b64: Any) -> str:
    if not isinstance(pem_b64, str):
        return ""
    return _pem_text(pem_b64) if len(pem_b64) <= 16384 else _pem_text.__wrapped__(pem_b64)


@functools.lru_cache(maxsize=64)
def _pem_text(pem_b64: str) -> str:
    """The certificate blocks of a base64-encoded PEM bundle, normalised for comparison."""
    try:
        text = base64.b64decode(pem_b64 or "", validate=False).decode("ascii", "replace")
    except (ValueError, TypeError):
        return ""
    return "".join(text.split())


@dataclass
class _WebhookAnswers:
    """The last answers of each webhook while nothing they depend on moved (derived; not pickled).

    The apiserver dials a webhook on every pod create; a controller creating a hundred pods
    in a tick gets the same answer each time, so the dial is worked out once.
    """

    key: tuple = ()
    answers: dict[tuple[str, str], str | None] = field(default_factory=dict)

    def __getstate__(self) -> dict:
        return {"key": (), "answers": {}}


def call_webhook(world: World, hook: Obj, path_default: str) -> str | None:
    """Dial the webhook like the apiserver does; None when it answers, else the failure text."""
    kr = world.store.kind_revision
    key = (int(world.clock.now), routing_revision(world), kr.get("Secret", 0), kr.get("Deployment", 0))
    memo = world.slot(_WebhookAnswers)
    if memo.key != key:
        memo.key, memo.answers = key, {}
    hook_key = (repr((hook.get("clientConfig"), hook.get("timeoutSeconds"))), path_default)
    if hook_key not in memo.answers:
        memo.answers[hook_key] = _dial_webhook(world, hook, path_default)
    return memo.answers[hook_key]


def _dial_webhook(world: World, hook: Obj, path_default: str) -> str | None:
    cc = hook.get("clientConfig") or {}
    svc_ref = cc.get("service")
    if svc_ref:
        name, ns = svc_ref.get("name", ""), svc_ref.get("namespace", "default")
        port = int(svc_ref.get("port") or 443)
        path = svc_ref.get("path") or path_default
        host = f"{name}.{ns}.svc"
        url = f"https://{host}:{port}{path}?timeout={int(hook.get('timeoutSeconds') or 10)}s"
        svc = world.store.find("Service", name, ns)
        if svc is None:
            return f'failed to call webhook: Post "{url}": service "{name}" not found'
        ep = world.store.find("Endpoints", name, ns)
        if not any(s.get("addresses") for s in (ep or {}).get("subsets") or ()):
            return f'failed to call webhook: Post "{url}": no endpoints available for service "{name}"'
        route = resolve_route(world, ns, f"{host}:{port}")
        if route.ok <= 0.0:
            return f'failed to call webhook: Post "{url}": {route.error or "connection refused"}'
        secret_name = _serving_secret(world, svc)
        if secret_name is not None:
            secret = world.store.find("Secret", secret_name, ns)
            data = (secret or {}).get("data") or {}
            served_ca = data.get("ca.crt", "")
            if _pem_body(cc.get("caBundle", "")) != _pem_body(served_ca) or not served_ca:
                return f'failed to call webhook: Post "{url}": tls: failed to verify certificate: x509: certificate signed by unknown authority'
            # the server presents the certificate in its Secret (Gatekeeper's cert watcher reloads it)
            info = parse_certificate(unb64(data.get("tls.crt", "")))
            expired = x509_time_error(info, EPOCH + timedelta(seconds=int(world.clock.now))) if info is not None else None
            if expired:
                return f'failed to call webhook: Post "{url}": tls: failed to verify certificate: {expired}'
        return None
    url = cc.get("url", "")
    return f'failed to call webhook: Post "{url}": dial tcp: lookup {url.split("/")[2] if url.count("/") >= 2 else url}: no such host' if url else None


def _serving_secret(world: World, svc: Obj) -> str | None:
    """The Secret whose certificate the webhook's pods serve (the one mounted at their cert dir)."""
    sel = (svc.get("spec") or {}).get("selector") or {}
    if not sel:
        return None
    ns = svc["metadata"]["namespace"]
    for dep in world.store.list("Deployment", ns):
        labels = ((dep["spec"].get("template") or {}).get("metadata") or {}).get("labels") or {}
        if has_labels(sel, labels):
            for vol in (dep["spec"]["template"].get("spec") or {}).get("volumes") or ():
                if "secret" in vol:
                    return vol["secret"].get("secretName")
    return None


def _hooks(world: World, kind: str) -> list[tuple[str, Obj]]:
    out = []
    for cfg in world.store.list(kind):
        for hook in cfg.get("webhooks") or ():
            out.append((cfg["metadata"]["name"], hook))
    return out


def admit_pod(world: World, pod: Obj, operation: str = "CREATE") -> Obj:
    """Run the admission chain on a pod about to be stored; returns the (mutated) pod or raises ApiError."""
    spec = pod.get("spec")
    if isinstance(spec, dict) and not spec.get("serviceAccountName"):
        # the built-in ServiceAccount plugin (and defaulting of the deprecated alias): every stored pod names one
        spec["serviceAccountName"] = spec.get("serviceAccount") or "default"
    if isinstance(spec, dict):
        spec.setdefault("serviceAccount", spec["serviceAccountName"])
    ns_obj = world.store.find("Namespace", pod["metadata"].get("namespace") or "default")
    mutating = _hooks(world, "MutatingWebhookConfiguration") if world.store.kind_revision.get("MutatingWebhookConfiguration") else []
    for _, hook in mutating:
        if not webhook_applies(hook, operation, pod, ns_obj):
            continue
        err = call_webhook(world, hook, "/")
        if err is not None:
            if hook.get("failurePolicy", "Fail") == "Fail":
                raise ApiError(500, "InternalError", f'Internal error occurred: failed calling webhook "{hook.get("name", "")}": {err}')
            continue
        if _is_gatekeeper(hook):
            pod = apply_assign_mutators(world, pod)
    _pod_security(world, pod, ns_obj)
    validating = _hooks(world, "ValidatingWebhookConfiguration") if world.store.kind_revision.get("ValidatingWebhookConfiguration") else []
    for _, hook in validating:
        if not webhook_applies(hook, operation, pod, ns_obj):
            continue
        err = call_webhook(world, hook, "/")
        if err is not None and hook.get("failurePolicy", "Fail") == "Fail":
            raise ApiError(500, "InternalError", f'Internal error occurred: failed calling webhook "{hook.get("name", "")}": {err}')
    return pod


def _is_gatekeeper(hook: Obj) -> bool:
    return str(hook.get("name", "")).endswith("gatekeeper.sh")


# --------------------------------------------------------------------------- Gatekeeper Assign
_LOCATION = re.compile(r"^spec\.containers\[name:(?P<glob>[^\]]+)\]\.(?P<path>[A-Za-z0-9_.]+)$")


def _assign_applies(assign: Obj, pod: Obj) -> bool:
    spec = assign.get("spec") or {}
    if not any("Pod" in (a.get("kinds") or ()) for a in spec.get("applyTo") or ()):
        return False
    match = spec.get("match") or {}
    ns = pod["metadata"].get("namespace", "default")
    namespaces = match.get("namespaces")
    if namespaces and not any(fnmatch.fnmatchcase(ns, p) for p in namespaces):
        return False
    if any(fnmatch.fnmatchcase(ns, p) for p in match.get("excludedNamespaces") or ()):
        return False
    kinds = match.get("kinds")
    if kinds and not any("Pod" in (k.get("kinds") or ()) or "*" in (k.get("kinds") or ()) for k in kinds):
        return False
    # Gatekeeper's match: no labelSelector means every object
    return label_selector_matches(match.get("labelSelector") or {}, pod["metadata"].get("labels"))


def apply_assign_mutators(world: World, pod: Obj) -> Obj:
    """Gatekeeper's mutation webhook: apply every matching ``Assign`` to the pod's containers."""
    assigns = world.store.list("Assign") if world.store.kind_revision.get("Assign") else []
    for assign in assigns:
        if not _assign_applies(assign, pod):
            continue
        spec = assign.get("spec") or {}
        m = _LOCATION.match(str(spec.get("location", "")))
        if not m:
            continue
        params = spec.get("parameters") or {}
        value = (params.get("assign") or {}).get("value")
        if value is None:
            continue
        must_not_exist = any(t.get("condition") == "MustNotExist" for t in params.get("pathTests") or ())
        keys = m.group("path").split(".")
        for ctr in (pod.get("spec") or {}).get("containers") or ():
            if not fnmatch.fnmatchcase(ctr.get("name", ""), m.group("glob")):
                continue
            node = ctr
            for k in keys[:-1]:
                node = node.setdefault(k, {})
                if not isinstance(node, dict):
                    break
            else:
                if must_not_exist and keys[-1] in node:
                    continue
                node[keys[-1]] = copy.deepcopy(value)
    return pod
