"""Pod Security Standards: the ``baseline`` and ``restricted`` checks, worded as Pod Security admission words them.

The checks that keep a pod away from its node and the other tenants of it, as
``k8s.io/pod-security-admission/policy`` implements them (same reasons, details,
order and pluralisation):

* ``baseline``: host namespaces (``hostNetwork``/``hostPID``/``hostIPC``),
  ``hostPort``, ``privileged``, non-default capabilities, ``hostPath`` volumes;
* ``restricted`` adds: ``allowPrivilegeEscalation=false``, capabilities dropped
  (``ALL``, only ``NET_BIND_SERVICE`` added), restricted volume types,
  ``runAsNonRoot``, ``runAsUser!=0``, a ``RuntimeDefault``/``Localhost``
  seccomp profile (replacing baseline's capabilities and hostPath checks, as
  the evaluator's overlapping checks do).

Left out: AppArmor, SELinux options, ``procMount``, sysctls, Windows host
processes, host probes, and baseline's ``Unconfined`` seccomp check. A refusal
reads ``pods "x" is forbidden: violates PodSecurity "restricted:latest":
allowPrivilegeEscalation != false (container "x" must set
securityContext.allowPrivilegeEscalation=false), ...``.

Pod specs come from Pods and from the templates of the workload kinds
(:func:`pod_spec_of`); everything is a function of API objects.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["LEVELS", "forbidden_message", "new_violations", "pod_spec_of", "violations"]

Obj = dict[str, Any]
Violation = tuple[str, str]

LEVELS = ("privileged", "baseline", "restricted")
_BASELINE_CAPABILITIES = frozenset({"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD", "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"})
_RESTRICTED_VOLUMES = ("configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret")
#: where each kind keeps its pod spec
_SPEC_PATHS: dict[str, tuple[str, ...]] = {
    "Pod": ("spec",),
    "PodTemplate": ("template", "spec"),
    "Deployment": ("spec", "template", "spec"),
    "ReplicaSet": ("spec", "template", "spec"),
    "StatefulSet": ("spec", "template", "spec"),
    "DaemonSet": ("spec", "template", "spec"),
    "ReplicationController": ("spec", "template", "spec"),
    "Job": ("spec", "template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
}


def pod_spec_of(obj: Any) -> Obj | None:
    """The pod spec a Pod or a workload's template holds (None: not a pod-making kind, or no spec)."""
    if not isinstance(obj, dict):
        return None
    path = _SPEC_PATHS.get(str(obj.get("kind", "")))
    node: Any = obj
    for key in path or ():
        node = node.get(key) if isinstance(node, dict) else None
    return node if path and isinstance(node, dict) else None


def _dict(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _containers(spec: Obj) -> list[Obj]:
    """Init containers, containers, ephemeral containers: the order the checks visit them in."""
    return [c for key in ("initContainers", "containers", "ephemeralContainers") for c in _list(spec.get(key)) if isinstance(c, dict)]


def _ctx(container: Obj) -> Obj:
    return _dict(container.get("securityContext"))


def _quote(items: list[str]) -> str:
    return '"' + '", "'.join(items) + '"' if items else ""


def _plural(singular: str, plural: str, count: int) -> str:
    return singular if count == 1 else plural


def _named(containers: list[Obj]) -> str:
    names = [str(c.get("name", "")) for c in containers]
    return f"{_plural('container', 'containers', len(names))} {_quote(names)}"


# ---------------------------------------------------------------- baseline
def _host_namespaces(spec: Obj) -> Violation | None:
    used = sorted(k for k in ("hostIPC", "hostNetwork", "hostPID") if spec.get(k) is True)
    return ("host namespaces", ", ".join(used)) if used else None


def _host_ports(spec: Obj) -> Violation | None:
    bad, ports = [], set()
    for c in _containers(spec):
        used = {str(p["hostPort"]) for p in _list(c.get("ports")) if isinstance(p, dict) and p.get("hostPort") not in (None, 0)}
        if used:
            bad.append(c)
            ports |= used
    if not bad:
        return None
    return "hostPort", f"{_named(bad)} {_plural('uses', 'use', len(bad))} {_plural('hostPort', 'hostPorts', len(ports))} {', '.join(sorted(ports))}"


def _privileged(spec: Obj) -> Violation | None:
    bad = [c for c in _containers(spec) if _ctx(c).get("privileged") is True]
    return ("privileged", f"{_named(bad)} must not set securityContext.privileged=true") if bad else None


def _capabilities_baseline(spec: Obj) -> Violation | None:
    bad, caps = [], set()
    for c in _containers(spec):
        extra = {str(x) for x in _list(_dict(_ctx(c).get("capabilities")).get("add"))} - _BASELINE_CAPABILITIES
        if extra:
            bad.append(c)
            caps |= extra
    return ("non-default capabilities", f"{_named(bad)} must not include {_quote(sorted(caps))} in securityContext.capabilities.add") if bad else None


def _host_path_volumes(spec: Obj) -> Violation | None:
    names = [str(v.get("name", "")) for v in _list(spec.get("volumes")) if isinstance(v, dict) and v.get("hostPath") is not None]
    return ("hostPath volumes", f"{_plural('volume', 'volumes', len(names))} {_quote(names)}") if names else None


# ---------------------------------------------------------------- restricted
def _allow_privilege_escalation(spec: Obj) -> Violation | None:
    bad = [c for c in _containers(spec) if _ctx(c).get("allowPrivilegeEscalation") is not False]
    return ("allowPrivilegeEscalation != false", f"{_named(bad)} must set securityContext.allowPrivilegeEscalation=false") if bad else None


def _capabilities_restricted(spec: Obj) -> Violation | None:
    missing, adding, caps = [], [], set()
    for c in _containers(spec):
        capabilities = _ctx(c).get("capabilities")
        if not isinstance(capabilities, dict):
            missing.append(c)
            continue
        if "ALL" not in _list(capabilities.get("drop")):
            missing.append(c)
        extra = {str(x) for x in _list(capabilities.get("add")) if x != "NET_BIND_SERVICE"}
        if extra:
            adding.append(c)
            caps |= extra
    details = []
    if missing:
        details.append(f'{_named(missing)} must set securityContext.capabilities.drop=["ALL"]')
    if adding:
        details.append(f"{_named(adding)} must not include {_quote(sorted(caps))} in securityContext.capabilities.add")
    return ("unrestricted capabilities", "; ".join(details)) if details else None


def _restricted_volumes(spec: Obj) -> Violation | None:
    names = sorted({str(v.get("name", "")) for v in _list(spec.get("volumes")) if isinstance(v, dict) and not any(v.get(k) is not None for k in _RESTRICTED_VOLUMES)})
    return ("restricted volume types", "volumes [" + " ".join(f'"{n}"' for n in names) + "] have restricted types") if names else None


def _explicit_then_implicit(spec: Obj, field: str, good: Callable[[Any], bool], reason: str, must_not: Callable[[list[str]], str], must: str) -> Violation | None:
    """The shape runAsNonRoot and seccompProfile share: explicit bad values (pod and containers), else containers
    neither set nor covered by a good pod-level value."""
    pod_value = _dict(spec.get("securityContext")).get(field)
    setters, bad_values = [], []
    pod_ok = False
    if pod_value is not None:
        if good(pod_value):
            pod_ok = True
        else:
            setters.append("pod")
            bad_values.append(pod_value)
    explicit, implicit = [], []
    for c in _containers(spec):
        value = _ctx(c).get(field)
        if value is not None:
            if not good(value):
                explicit.append(c)
                bad_values.append(value)
        elif not pod_ok:
            implicit.append(c)
    if explicit:
        setters.append(_named(explicit))
    if setters:
        return reason, f"{' and '.join(setters)} {must_not(bad_values)}"
    if implicit:
        return reason, f"pod or {_named(implicit)} {must}"
    return None


def _run_as_non_root(spec: Obj) -> Violation | None:
    return _explicit_then_implicit(spec, "runAsNonRoot", lambda v: v is True, "runAsNonRoot != true", lambda _: "must not set securityContext.runAsNonRoot=false", "must set securityContext.runAsNonRoot=true")


def _run_as_user(spec: Obj) -> Violation | None:
    setters = ["pod"] if _dict(spec.get("securityContext")).get("runAsUser") == 0 else []
    bad = [c for c in _containers(spec) if _ctx(c).get("runAsUser") == 0]
    if bad:
        setters.append(_named(bad))
    return ("runAsUser=0", f"{' and '.join(setters)} must not set runAsUser=0") if setters else None


def _seccomp_restricted(spec: Obj) -> Violation | None:
    def profile_type(value: Any) -> str:
        return str(_dict(value).get("type", ""))

    return _explicit_then_implicit(
        spec,
        "seccompProfile",
        lambda v: profile_type(v) in ("RuntimeDefault", "Localhost"),
        "seccompProfile",
        lambda values: f"must not set securityContext.seccompProfile.type to {_quote(sorted({profile_type(v) for v in values}))}",
        'must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"',
    )


#: the evaluator's order: baseline checks, then the overlapping baseline ones (baseline level) or the restricted ones
_BASELINE = (_host_namespaces, _host_ports, _privileged)
_BASELINE_ONLY = (_capabilities_baseline, _host_path_volumes)
_RESTRICTED = (_allow_privilege_escalation, _capabilities_restricted, _restricted_volumes, _run_as_non_root, _run_as_user, _seccomp_restricted)


def violations(spec: Obj, level: str) -> list[Violation]:
    """(reason, detail) for every check of ``level`` the pod spec fails, in Pod Security admission's order."""
    if level not in LEVELS:
        raise ValueError(f"unknown Pod Security level {level!r} (one of {', '.join(LEVELS)})")
    if level == "privileged":
        return []
    checks = _BASELINE + (_BASELINE_ONLY if level == "baseline" else _RESTRICTED)
    return [v for check in checks if (v := check(spec)) is not None]


def new_violations(spec: Obj, before: Obj | None, level: str) -> list[Violation]:
    """The violations of ``spec`` whose reason the previous spec ``before`` did not already have (an update may keep
    what was there; it may not add to it)."""
    had = {reason for reason, _ in violations(before, level)} if before is not None else set()
    return [v for v in violations(spec, level) if v[0] not in had]


def forbidden_message(resource: str, name: str, level: str, found: list[Violation]) -> str:
    """``<resource> "<name>" is forbidden: violates PodSecurity "<level>:latest": reason (detail), ...``."""
    detail = ", ".join(f"{reason} ({what})" if what else reason for reason, what in found)
    named = f' "{name}"' if name else ""
    return f'{resource}{named} is forbidden: violates PodSecurity "{level}:latest": {detail}'
