"""The API server's validation rules per kind, as data (read by :mod:`sre_env.kube.validation`).

Facts from ``pkg/apis/{core,apps,batch,networking,rbac,...}/validation`` of
Kubernetes v1.32, in the order the API server reports them: which fields are
required, which values an enumerated field takes (and what it defaults to
before validation), which numbers must be non-negative, which names follow
which format, which fields an update may not change, and the few rules that
relate two fields (a selector and its template's labels, a volume mount and its
volume). The paths are the API's JSON paths, as the errors print them.

Where the API server leaves something unvalidated, so does this table: a
StatefulSet's pod template is checked for its labels only, so a StatefulSet
whose template has no containers is accepted and its pods are refused when the
controller creates them.
"""

from __future__ import annotations

import base64
import binascii
import copy
import ipaddress
from typing import Any

from .field_errors import FieldError, GoText, duplicate, forbidden, go_label_selector, go_quote, invalid_value, not_found, not_supported, required, too_long
from .limits import MAX_DATA_BYTES
from .names import is_config_map_key, is_dns1123_label, is_dns1123_subdomain, is_label_value, is_percent, is_port_name, is_qualified_name
from .quantity import canonical, parse_quantity
from .validation import (
    Annotations,
    Forbid,
    Immutable,
    KindRules,
    LabelSelectorValid,
    Labels,
    Min,
    Name,
    OneOf,
    Port,
    Range,
    Required,
    Rule,
    SelectorMatches,
    SelectorNotEmpty,
    SelectorRequired,
    Unique,
    UpdateRule,
    is_ip,
    locations,
)

__all__ = ["RULES", "pod_spec_checks"]

Obj = dict[str, Any]

PROTOCOLS = ("SCTP", "TCP", "UDP")
_MAX_INT32 = 2**31 - 1
_VOLUME_SOURCES = (
    "awsElasticBlockStore", "azureDisk", "azureFile", "cephfs", "cinder", "configMap", "csi", "downwardAPI", "emptyDir", "ephemeral",
    "fc", "flexVolume", "flocker", "gcePersistentDisk", "gitRepo", "glusterfs", "hostPath", "image", "iscsi", "nfs",
    "persistentVolumeClaim", "photonPersistentDisk", "portworxVolume", "projected", "quobyte", "rbd", "scaleIO", "secret",
    "storageos", "vsphereVolume",
)
_PROBE_HANDLERS = ("exec", "httpGet", "tcpSocket", "grpc")


def _at(obj: Obj, path: str) -> Any:
    return next(iter(locations(obj, path)))[1]


def _dict(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


# ---------------------------------------------------------------- pod spec
def _volumes(prefix: str) -> Rule:
    def check(obj: Obj) -> list[FieldError]:
        out: list[FieldError] = []
        seen: set[str] = set()
        for i, vol in enumerate(_list(_at(obj, f"{prefix}.volumes"))):
            p = f"{prefix}.volumes[{i}]"
            vol = _dict(vol)
            name = str(vol.get("name") or "")
            if not name:
                out.append(required(f"{p}.name"))
            else:
                out += [invalid_value(f"{p}.name", name, m) for m in is_dns1123_label(name)]
                if name in seen:
                    out.append(duplicate(f"{p}.name", name))
                seen.add(name)
            sources = [s for s in _VOLUME_SOURCES if vol.get(s) is not None]
            for extra in sources[1:]:
                out.append(forbidden(f"{p}.{extra}", "may not specify more than 1 volume type"))
            if "secret" in sources and not _dict(vol["secret"]).get("secretName"):
                out.append(required(f"{p}.secret.secretName"))
            if "configMap" in sources and not _dict(vol["configMap"]).get("name"):
                out.append(required(f"{p}.configMap.name"))
            if "persistentVolumeClaim" in sources and not _dict(vol["persistentVolumeClaim"]).get("claimName"):
                out.append(required(f"{p}.persistentVolumeClaim.claimName"))
        return out

    return Rule(check)


def _resources(path: str) -> Rule:
    """``ValidateResourceRequirements``: quantities not negative, no request above its limit."""

    def check(obj: Obj) -> list[FieldError]:
        out: list[FieldError] = []
        for p, res in locations(obj, path):
            res = _dict(res)
            limits, requests = _dict(res.get("limits")), _dict(res.get("requests"))
            for part, values in (("limits", limits), ("requests", requests)):
                for name, q in values.items():
                    try:
                        value = parse_quantity(q)
                    except ValueError:
                        continue  # refused when decoding
                    if value < 0:
                        out.append(invalid_value(f"{p}.{part}[{name}]", canonical(q), "must be greater than or equal to 0"))
            for name, q in requests.items():
                if name in limits:
                    try:
                        over = parse_quantity(q) > parse_quantity(limits[name])
                    except ValueError:
                        continue
                    if over:
                        out.append(invalid_value(f"{p}.requests", canonical(q), f"must be less than or equal to {name} limit of {canonical(limits[name])}"))
        return out

    return Rule(check)


def _probe(path: str, success_must_be_one: bool) -> tuple[Check, ...]:
    def handler(obj: Obj) -> list[FieldError]:
        out: list[FieldError] = []
        for p, probe in locations(obj, path):
            if not isinstance(probe, dict):
                continue
            given = [h for h in _PROBE_HANDLERS if probe.get(h) is not None]
            if not given:
                out.append(required(p, "must specify a handler type"))
            for extra in given[1:]:
                out.append(forbidden(f"{p}.{extra}", "may not specify more than 1 handler type"))
            if given and given[0] == "exec" and not _dict(probe["exec"]).get("command"):
                out.append(required(f"{p}.exec.command"))
            if given and given[0] == "httpGet":
                scheme = _dict(probe["httpGet"]).get("scheme") or "HTTP"
                if scheme not in ("HTTP", "HTTPS"):
                    out.append(not_supported(f"{p}.httpGet.scheme", scheme, ("HTTP", "HTTPS")))
            if success_must_be_one and probe.get("successThreshold") not in (None, 1):
                out.append(invalid_value(f"{p}.successThreshold", probe["successThreshold"], "must be 1"))
        return out

    return (
        Rule(handler),
        Port(f"{path}.httpGet.port", named=True),
        Port(f"{path}.tcpSocket.port", named=True),
        *(Min(f"{path}.{f}") for f in ("initialDelaySeconds", "timeoutSeconds", "periodSeconds", "successThreshold", "failureThreshold")),
    )


def _mounts(prefix: str, containers: str) -> Rule:
    """Each volume mount names a volume of the pod (``Not found``) and a mount path, each path once."""

    def check(obj: Obj) -> list[FieldError]:
        volumes = {str(_dict(v).get("name")) for v in _list(_at(obj, f"{prefix}.volumes"))}
        out: list[FieldError] = []
        for p, mounts in locations(obj, f"{prefix}.{containers}[*].volumeMounts"):
            paths: set[str] = set()
            for i, m in enumerate(_list(mounts)):
                m = _dict(m)
                name, mount_path = str(m.get("name") or ""), str(m.get("mountPath") or "")
                if not name:
                    out.append(required(f"{p}[{i}].name"))
                elif name not in volumes:
                    out.append(not_found(f"{p}[{i}].name", name))
                if not mount_path:
                    out.append(required(f"{p}[{i}].mountPath"))
                elif mount_path in paths:
                    out.append(invalid_value(f"{p}[{i}].mountPath", mount_path, "must be unique"))
                paths.add(mount_path)
        return out

    return Rule(check)


def _containers(prefix: str, key: str, liveness_rules: bool) -> tuple[Check, ...]:
    c = f"{prefix}.{key}[*]"
    return (
        Name(f"{c}.name", is_dns1123_label, required=True),
        Required(f"{c}.image"),
        OneOf(f"{c}.terminationMessagePolicy", ("File", "FallbackToLogsOnError"), default="File"),
        Port(f"{c}.ports[*].containerPort", required=True),
        Port(f"{c}.ports[*].hostPort"),
        OneOf(f"{c}.ports[*].protocol", PROTOCOLS, default="TCP"),
        Name(f"{c}.ports[*].name", is_port_name),
        Required(f"{c}.env[*].name"),
        Required(f"{c}.envFrom[*].configMapRef?.name"),
        Required(f"{c}.envFrom[*].secretRef?.name"),
        OneOf(f"{c}.imagePullPolicy", ("Always", "IfNotPresent", "Never"), default="IfNotPresent"),
        _resources(f"{c}.resources"),
        *(_probe(f"{c}.livenessProbe", True) if liveness_rules else ()),
        *(_probe(f"{c}.readinessProbe", False) if liveness_rules else ()),
        *(_probe(f"{c}.startupProbe", True) if liveness_rules else ()),
    )


def _tolerations(prefix: str) -> Rule:
    def check(obj: Obj) -> list[FieldError]:
        out: list[FieldError] = []
        for i, t in enumerate(_list(_at(obj, f"{prefix}.tolerations"))):
            p, t = f"{prefix}.tolerations[{i}]", _dict(t)
            key, op, value, effect = str(t.get("key") or ""), str(t.get("operator") or ""), str(t.get("value") or ""), str(t.get("effect") or "")
            if key:
                out += [invalid_value(f"{p}.key", key, m) for m in is_qualified_name(key)]
            if not key and op != "Exists":
                out.append(invalid_value(f"{p}.operator", op, 'operator must be Exists when `key` is empty, which means "match all values and all keys"'))
            if t.get("tolerationSeconds") is not None and effect != "NoExecute":
                out.append(invalid_value(f"{p}.effect", effect, "effect must be 'NoExecute' when `tolerationSeconds` is set"))
            if op in ("Equal", ""):
                problems = is_label_value(value)
                if problems:
                    out.append(invalid_value(f"{p}.operator", value, ";".join(problems)))
            elif op == "Exists":
                if value:
                    out.append(invalid_value(f"{p}.operator", GoText("core.Toleration{...}"), "value must be empty when `operator` is 'Exists'"))
            else:
                out.append(not_supported(f"{p}.operator", op, ("Equal", "Exists")))
            if effect and effect not in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
                out.append(not_supported(f"{p}.effect", effect, ("NoSchedule", "PreferNoSchedule", "NoExecute")))
        return out

    return Rule(check)


def pod_spec_checks(prefix: str, *, pod: bool = False) -> tuple[Check, ...]:
    """``ValidatePodSpec`` under ``prefix`` (``spec`` of a Pod, ``spec.template.spec`` of a workload)."""
    aff = f"{prefix}.affinity"
    return (
        _volumes(prefix),
        Required(f"{prefix}.containers"),
        *_containers(prefix, "containers", True),
        Unique((f"{prefix}.containers",), "name"),
        *_containers(prefix, "initContainers", False),
        Unique((f"{prefix}.containers", f"{prefix}.initContainers"), "name"),
        _mounts(prefix, "containers"),
        _mounts(prefix, "initContainers"),
        OneOf(f"{prefix}.restartPolicy", ("Always", "OnFailure", "Never"), default="Always", required=True),
        OneOf(f"{prefix}.dnsPolicy", ("ClusterFirst", "ClusterFirstWithHostNet", "Default", "None"), default="ClusterFirst", required=True),
        Labels(f"{prefix}.nodeSelector"),
        LabelSelectorValid(f"{aff}.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[*]", node=True),
        LabelSelectorValid(f"{aff}.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[*].labelSelector"),
        LabelSelectorValid(f"{aff}.podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution[*].labelSelector"),
        Range(f"{aff}.podAffinity.preferredDuringSchedulingIgnoredDuringExecution[*].weight", 1, 100),
        Range(f"{aff}.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[*].weight", 1, 100),
        Min(f"{prefix}.topologySpreadConstraints[*].maxSkew", 1, "must be greater than zero"),
        OneOf(f"{prefix}.topologySpreadConstraints[*].whenUnsatisfiable", ("DoNotSchedule", "ScheduleAnyway"), required=True),
        Name(f"{prefix}.serviceAccountName", is_dns1123_subdomain),
        Range(f"{prefix}.activeDeadlineSeconds", 1, _MAX_INT32),
        Name(f"{prefix}.hostname", is_dns1123_label),
        Name(f"{prefix}.subdomain", is_dns1123_label),
        _tolerations(prefix),
        Name(f"{prefix}.priorityClassName", is_dns1123_subdomain),
        *((Rule(_image_whitespace(prefix)),) if pod else ()),
    )


def _image_whitespace(prefix: str) -> Any:
    def check(obj: Obj) -> list[FieldError]:
        return [
            invalid_value(f"{p}", v, "must not have leading or trailing whitespace")
            for key in ("containers", "initContainers")
            for p, v in locations(obj, f"{prefix}.{key}[*].image")
            if isinstance(v, str) and v != v.strip() and v.strip()
        ]

    return check


def _template(path: str) -> tuple[Check, ...]:
    """``ValidatePodTemplateSpec``: the template's labels and annotations, then its pod spec."""
    return (Labels(f"{path}.metadata.labels"), Annotations(f"{path}.metadata.annotations"), *pod_spec_checks(f"{path}.spec"))


def _workload(what: str, *, replicas: bool = True, strategy: tuple[Check, ...] = ()) -> tuple[Check, ...]:
    """Deployment and ReplicaSet (``ValidateDeploymentSpec``, ``ValidateReplicaSetSpec``)."""
    return (
        *((Min("spec.replicas"),) if replicas else ()),
        SelectorRequired("spec.selector"),
        LabelSelectorValid("spec.selector"),
        SelectorNotEmpty("spec.selector", what),
        SelectorMatches("spec.selector", "spec.template.metadata.labels"),
        *_template("spec.template"),
        OneOf("spec.template.spec.restartPolicy", ("Always",), default="Always"),
        Forbid("spec.template.spec.activeDeadlineSeconds", "activeDeadlineSeconds in ReplicaSet is not Supported"),
        *strategy,
        Min("spec.minReadySeconds"),
        Min("spec.revisionHistoryLimit"),
    )


def _rolling_update(obj: Obj) -> list[FieldError]:
    out: list[FieldError] = []
    strategy = _dict(_at(obj, "spec.strategy"))
    kind = strategy.get("type") or "RollingUpdate"
    ru = strategy.get("rollingUpdate")
    if kind == "Recreate":
        if ru is not None:
            out.append(forbidden("spec.strategy.rollingUpdate", "may not be specified when strategy `type` is 'Recreate'"))
        return out
    if kind != "RollingUpdate":
        return out  # reported by the OneOf on spec.strategy.type
    ru = _dict(ru)
    values = {}
    for key, default in (("maxUnavailable", "25%"), ("maxSurge", "25%")):
        v = ru.get(key, default)
        p = f"spec.strategy.rollingUpdate.{key}"
        if isinstance(v, str):
            problems = is_percent(v)
            out += [invalid_value(p, v, m) for m in problems]
            values[key] = int(v[:-1]) if not problems else 0
            if key == "maxUnavailable" and not problems and values[key] > 100:
                out.append(invalid_value(p, v, "must not be greater than 100%"))
        else:
            if isinstance(v, (int, float)) and v < 0:
                out.append(invalid_value(p, v, "must be greater than or equal to 0"))
            values[key] = int(v or 0)
    if values.get("maxUnavailable") == 0 and values.get("maxSurge") == 0:
        out.append(invalid_value("spec.strategy.rollingUpdate.maxUnavailable", ru.get("maxUnavailable", 0), "may not be 0 when `maxSurge` is 0"))
    return out


def _progress_deadline(obj: Obj) -> list[FieldError]:
    spec = _dict(obj.get("spec"))
    deadline = spec.get("progressDeadlineSeconds")
    if isinstance(deadline, int) and not isinstance(deadline, bool) and deadline >= 0 and deadline <= int(spec.get("minReadySeconds") or 0):
        return [invalid_value("spec.progressDeadlineSeconds", deadline, "must be greater than minReadySeconds")]
    return []


_SELECTOR_IMMUTABLE = Immutable("spec.selector", go_label_selector)


# ---------------------------------------------------------------- services
def _service(obj: Obj) -> list[FieldError]:
    spec = _dict(obj.get("spec"))
    out: list[FieldError] = []
    kind = spec.get("type") or "ClusterIP"
    cluster_ip = spec.get("clusterIP") or ""
    headless = cluster_ip == "None"
    ports = _list(spec.get("ports"))
    if not ports and not headless and kind != "ExternalName":
        out.append(required("spec.ports"))
    if kind in ("LoadBalancer", "NodePort") and headless:
        out.append(invalid_value("spec.clusterIP", cluster_ip, f"may not be set to 'None' for {kind} services"))
    if kind == "ExternalName":
        if cluster_ip:
            out.append(forbidden("spec.clusterIP", "must be empty for ExternalName services"))
        if spec.get("externalName"):
            out += [invalid_value("spec.externalName", spec["externalName"], m) for m in is_dns1123_subdomain(str(spec["externalName"]))]
        else:
            out.append(required("spec.externalName"))
    names: set[str] = set()
    for i, port in enumerate(ports):
        p, port = f"spec.ports[{i}]", _dict(port)
        name = str(port.get("name") or "")
        if len(ports) > 1 and not name:
            out.append(required(f"{p}.name"))
        elif name:
            out += [invalid_value(f"{p}.name", name, m) for m in is_dns1123_label(name)]
            if name in names:
                out.append(duplicate(f"{p}.name", name))
            names.add(name)
        number = port.get("port")
        if not isinstance(number, int) or isinstance(number, bool) or not 1 <= number <= 65535:
            out.append(invalid_value(f"{p}.port", number if isinstance(number, int) else 0, "must be between 1 and 65535, inclusive"))
        protocol = port.get("protocol") or "TCP"
        if protocol not in PROTOCOLS:
            out.append(not_supported(f"{p}.protocol", protocol, PROTOCOLS))
        out += Port(f"{p}.targetPort", named=True).errors(obj, None)
        if kind == "ClusterIP" and port.get("nodePort"):
            out.append(forbidden(f"{p}.nodePort", "may not be used when `type` is 'ClusterIP'"))
    out += Labels("spec.selector").errors(obj, None)
    affinity = spec.get("sessionAffinity") or "None"
    if affinity not in ("ClientIP", "None"):
        out.append(not_supported("spec.sessionAffinity", affinity, ("ClientIP", "None")))
    if cluster_ip and not headless and not is_ip(str(cluster_ip)):
        out.append(invalid_value("spec.clusterIPs[0]", cluster_ip, "must be empty, 'None', or a valid IP address"))
    if kind not in ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort"):
        out.append(not_supported("spec.type", kind, ("ClusterIP", "ExternalName", "LoadBalancer", "NodePort")))
    seen: set[tuple[Any, Any]] = set()
    for i, port in enumerate(ports):
        port = _dict(port)
        key = (port.get("protocol") or "TCP", port.get("port"))
        if key in seen:
            out.append(duplicate(f"spec.ports[{i}]", GoText(f'core.ServicePort{{Name:"", Protocol:"{key[0]}", AppProtocol:(*string)(nil), Port:{key[1]}, TargetPort:intstr.IntOrString{{Type:0, IntVal:0, StrVal:""}}, NodePort:0}}')))
        seen.add(key)
    return out


def _service_update(obj: Obj, old: Obj) -> list[FieldError]:
    """A Service's allocated cluster IP stays (unless it is or becomes an ExternalName)."""
    before, after = _dict(old.get("spec")), _dict(obj.get("spec"))
    if not before.get("clusterIP") or "ExternalName" in (before.get("type"), after.get("type")):
        return []
    new_ip = after.get("clusterIP") or ""
    if new_ip and new_ip != before["clusterIP"]:
        ips = _list(after.get("clusterIPs")) or [new_ip]
        return [invalid_value("spec.clusterIPs[0]", GoText("[]string{" + ", ".join(go_quote(str(i)) for i in [new_ip, *ips[1:]]) + "}"), "may not change once set")]
    return []


# ---------------------------------------------------------------- config and secrets
def _config_map(obj: Obj) -> list[FieldError]:
    out: list[FieldError] = []
    data, binary = _dict(obj.get("data")), _dict(obj.get("binaryData"))
    total = 0
    for key, value in data.items():
        out += [invalid_value(f"data[{key}]", key, m) for m in is_config_map_key(str(key))]
        if key in binary:
            out.append(invalid_value(f"data[{key}]", key, "duplicate of key present in binaryData"))
        total += len(str(value).encode())
    for key, value in binary.items():
        out += [invalid_value(f"binaryData[{key}]", key, m) for m in is_config_map_key(str(key))]
        total += len(str(value)) * 3 // 4
    if total > MAX_DATA_BYTES:
        out.append(too_long("[]", MAX_DATA_BYTES))
    return out


_SECRET_KEYS = {
    "kubernetes.io/dockercfg": (".dockercfg",),
    "kubernetes.io/dockerconfigjson": (".dockerconfigjson",),
    "kubernetes.io/tls": ("tls.crt", "tls.key"),
}


def _secret(obj: Obj) -> list[FieldError]:
    out: list[FieldError] = []
    data = _dict(obj.get("data"))
    total = 0
    for key, value in data.items():
        out += [invalid_value(f"data[{key}]", key, m) for m in is_config_map_key(str(key))]
        try:
            total += len(base64.b64decode(str(value), validate=True))
        except (binascii.Error, ValueError):
            total += len(str(value))
    total += sum(len(str(v).encode()) for v in _dict(obj.get("stringData")).values())
    if total > MAX_DATA_BYTES:
        out.append(too_long("data", MAX_DATA_BYTES))
    kind = obj.get("type") or "Opaque"
    if kind == "kubernetes.io/service-account-token" and not _dict(_dict(obj.get("metadata")).get("annotations")).get("kubernetes.io/service-account.name"):
        out.append(required("metadata.annotations[kubernetes.io/service-account.name]"))
    keys = set(data) | set(_dict(obj.get("stringData")))
    for key in _SECRET_KEYS.get(str(kind), ()):
        if key not in keys:
            out.append(required(f"data[{key}]"))
    return out


# ---------------------------------------------------------------- storage
_ACCESS_MODES = ("ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod")


def _pvc(obj: Obj) -> list[FieldError]:
    spec = _dict(obj.get("spec"))
    out: list[FieldError] = []
    modes = _list(spec.get("accessModes"))
    if not modes:
        out.append(required("spec.accessModes", "at least 1 access mode is required"))
    for mode in modes:
        if mode not in _ACCESS_MODES:
            out.append(not_supported("spec.accessModes", mode, _ACCESS_MODES))
    if "storage" not in _dict(_dict(spec.get("resources")).get("requests")):
        out.append(required("spec.resources[storage]"))
    return out


def _pv(obj: Obj) -> list[FieldError]:
    spec = _dict(obj.get("spec"))
    out: list[FieldError] = []
    if not _list(spec.get("accessModes")):
        out.append(required("spec.accessModes"))
    for mode in _list(spec.get("accessModes")):
        if mode not in _ACCESS_MODES:
            out.append(not_supported("spec.accessModes", mode, _ACCESS_MODES))
    if "storage" not in _dict(spec.get("capacity")):
        out.append(required("spec.capacity", "must specify a capacity"))
    sources = [s for s in ("hostPath", "local", "nfs", "csi", "iscsi", "fc", "rbd", "cephfs", "cinder", "gcePersistentDisk", "awsElasticBlockStore", "azureDisk", "azureFile", "glusterfs", "vsphereVolume", "flexVolume", "portworxVolume", "scaleIO", "storageos", "quobyte", "photonPersistentDisk", "flocker") if spec.get(s) is not None]
    if not sources:
        out.append(required("spec", "must specify a volume type"))
    return out


def _pvc_bound(old: Obj) -> bool:
    return bool(_dict(old.get("spec")).get("volumeName"))


def _pvc_spec_view(spec: Any) -> Any:
    spec = _dict(spec)
    return {k: v for k, v in spec.items() if k not in ("resources", "volumeName", "volumeAttributesClassName")}


# ---------------------------------------------------------------- rbac
def _rules_of(path: str) -> tuple[Check, ...]:
    def api_groups(obj: Obj) -> list[FieldError]:
        out = []
        for p, rule in locations(obj, f"{path}[*]"):
            rule = _dict(rule)
            if rule.get("resources") and not rule.get("apiGroups") and "apiGroups" not in rule:
                out.append(required(f"{p}.apiGroups", "resource rules must supply at least one api group"))
            if rule.get("nonResourceURLs") and rule.get("resources"):
                out.append(invalid_value(f"{p}.nonResourceURLs", GoText("[]string{...}"), "rules cannot apply to both regular resources and non-resource URLs"))
        return out

    return (Required(f"{path}[*].verbs"), Rule(api_groups))


def _binding(cluster: bool) -> tuple[Check, ...]:
    kinds = ("ClusterRole",) if cluster else ("ClusterRole", "Role")

    def subjects(obj: Obj) -> list[FieldError]:
        out = []
        for p, s in locations(obj, "subjects[*]"):
            s = _dict(s)
            kind = s.get("kind") or ""
            if kind not in ("Group", "ServiceAccount", "User"):
                out.append(not_supported(f"{p}.kind", kind, ("ServiceAccount", "User", "Group")))
            if kind == "ServiceAccount" and cluster and not s.get("namespace"):
                out.append(required(f"{p}.namespace"))
            if kind in ("User", "Group") and s.get("apiGroup") not in ("rbac.authorization.k8s.io", None, ""):
                out.append(not_supported(f"{p}.apiGroup", s.get("apiGroup"), ("rbac.authorization.k8s.io",)))
        return out

    return (
        OneOf("roleRef.apiGroup", ("rbac.authorization.k8s.io",), required=True),
        OneOf("roleRef.kind", kinds, required=True),
        Required("roleRef.name"),
        Rule(subjects),
    )


def _role_ref(value: Any) -> GoText:
    ref = _dict(value)
    return GoText(f'rbac.RoleRef{{APIGroup:{go_quote(str(ref.get("apiGroup", "")))}, Kind:{go_quote(str(ref.get("kind", "")))}, Name:{go_quote(str(ref.get("name", "")))}}}')


# ---------------------------------------------------------------- batch
def _job_spec(prefix: str) -> tuple[Check, ...]:
    return (
        Min(f"{prefix}.parallelism"),
        Min(f"{prefix}.completions"),
        Min(f"{prefix}.activeDeadlineSeconds"),
        Min(f"{prefix}.backoffLimit"),
        *_template(f"{prefix}.template"),
        OneOf(f"{prefix}.template.spec.restartPolicy", ("OnFailure", "Never"), default="Always"),
    )


def _cron_schedule(obj: Obj) -> list[FieldError]:
    schedule = _dict(obj.get("spec")).get("schedule")
    if not schedule:
        return [required("spec.schedule")]
    fields = str(schedule).split()
    if str(schedule).startswith("@"):
        ok = schedule in ("@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly") or str(schedule).startswith("@every ")
        return [] if ok else [invalid_value("spec.schedule", schedule, f"unrecognized descriptor: {schedule}")]
    if len(fields) != 5:
        return [invalid_value("spec.schedule", schedule, f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]")]
    return []


# ---------------------------------------------------------------- networking, autoscaling
def _ingress(obj: Obj) -> list[FieldError]:
    out: list[FieldError] = []
    for p, path in locations(obj, "spec.rules[*].http.paths[*]"):
        path = _dict(path)
        kind = path.get("pathType")
        if not kind:
            out.append(required(f"{p}.pathType", "pathType must be specified"))
        elif kind not in ("Exact", "ImplementationSpecific", "Prefix"):
            out.append(not_supported(f"{p}.pathType", kind, ("Exact", "Prefix", "ImplementationSpecific")))
        elif kind in ("Exact", "Prefix") and not str(path.get("path") or "").startswith("/"):
            out.append(invalid_value(f"{p}.path", path.get("path", ""), "must be an absolute path"))
        backend = _dict(path.get("backend"))
        if not backend.get("service") and not backend.get("resource"):
            out.append(invalid_value(f"{p}.backend", GoText("networking.IngressBackend{...}"), "cannot set both service and resource backends" if backend.get("service") and backend.get("resource") else "one of service or resource must be specified"))
        svc = _dict(backend.get("service"))
        if backend.get("service") is not None:
            port = _dict(svc.get("port"))
            if not svc.get("name"):
                out.append(required(f"{p}.backend.service.name"))
            if port.get("name") and port.get("number"):
                out.append(invalid_value(f"{p}.backend.service.port", GoText("networking.ServiceBackendPort{...}"), "cannot set both port name & port number"))
            elif not port.get("name") and not port.get("number"):
                out.append(required(f"{p}.backend.service.port", "port name or number is required"))
    for p, host in locations(obj, "spec.rules[*].host"):
        if isinstance(host, str) and host:
            name = host[2:] if host.startswith("*.") else host
            out += [invalid_value(p, host, m) for m in is_dns1123_subdomain(name)]
    return out


def _hpa(obj: Obj) -> list[FieldError]:
    spec = _dict(obj.get("spec"))
    out: list[FieldError] = []
    lo = spec.get("minReplicas", 1)
    if isinstance(lo, int) and lo < 1:
        out.append(invalid_value("spec.minReplicas", lo, "must be greater than or equal to 1"))
    hi = spec.get("maxReplicas", 0)
    if not isinstance(hi, int) or hi < 1:
        out.append(invalid_value("spec.maxReplicas", hi if isinstance(hi, int) else 0, "must be greater than 0"))
    elif isinstance(lo, int) and hi < lo:
        out.append(invalid_value("spec.maxReplicas", hi, "must be greater than or equal to `minReplicas`"))
    ref = _dict(spec.get("scaleTargetRef"))
    if not ref.get("kind"):
        out.append(required("spec.scaleTargetRef.kind"))
    if not ref.get("name"):
        out.append(required("spec.scaleTargetRef.name"))
    for i, metric in enumerate(_list(spec.get("metrics"))):
        metric = _dict(metric)
        p = f"spec.metrics[{i}]"
        kind = metric.get("type")
        if kind not in ("ContainerResource", "External", "Object", "Pods", "Resource"):
            out.append(not_supported(f"{p}.type", kind or "", ("ContainerResource", "External", "Object", "Pods", "Resource")) if kind else required(f"{p}.type"))
            continue
        source = _dict(metric.get({"ContainerResource": "containerResource"}.get(kind, kind.lower())))
        if not source:
            out.append(required(f"{p}.{ {'ContainerResource': 'containerResource'}.get(kind, kind.lower()) }", f"must populate information for the given metric source"))
            continue
        target = _dict(source.get("target"))
        ttype = target.get("type")
        sub = f"{p}.{ {'ContainerResource': 'containerResource'}.get(kind, kind.lower()) }.target"
        if ttype not in ("AverageValue", "Utilization", "Value"):
            out.append(not_supported(f"{sub}.type", ttype or "", ("Utilization", "Value", "AverageValue")) if ttype else required(f"{sub}.type"))
        util = target.get("averageUtilization")
        if isinstance(util, int) and util < 1:
            out.append(invalid_value(f"{sub}.averageUtilization", util, "must be greater than 0"))
    return out


def _network_policy(obj: Obj) -> list[FieldError]:
    out: list[FieldError] = []
    for p, kind in locations(obj, "spec.policyTypes[*]"):
        if kind not in ("Ingress", "Egress"):
            out.append(not_supported(p, kind, ("Ingress", "Egress")))
    for rule in ("ingress[*].from", "egress[*].to"):
        for p, peer in locations(obj, f"spec.{rule}[*]"):
            block = _dict(peer).get("ipBlock")
            if block is not None:
                cidr = str(_dict(block).get("cidr") or "")
                if not cidr:
                    out.append(required(f"{p}.ipBlock.cidr"))
                else:
                    try:
                        ipaddress.ip_network(cidr, strict=False)
                    except ValueError:
                        out.append(invalid_value(f"{p}.ipBlock.cidr", cidr, "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"))
    for rule in ("ingress", "egress"):
        for p, port in locations(obj, f"spec.{rule}[*].ports[*]"):
            proto = _dict(port).get("protocol") or "TCP"
            if proto not in PROTOCOLS:
                out.append(not_supported(f"{p}.protocol", proto, PROTOCOLS))
    return out


def _webhooks(obj: Obj) -> list[FieldError]:
    out: list[FieldError] = []
    for p, hook in locations(obj, "webhooks[*]"):
        hook = _dict(hook)
        name = str(hook.get("name") or "")
        if name:
            out += [invalid_value(f"{p}.name", name, m) for m in is_qualified_name(name)]
        effects = hook.get("sideEffects")
        if effects and effects not in ("None", "NoneOnDryRun"):
            out.append(not_supported(f"{p}.sideEffects", effects, ("None", "NoneOnDryRun")))
        policy = hook.get("failurePolicy")
        if policy and policy not in ("Fail", "Ignore"):
            out.append(not_supported(f"{p}.failurePolicy", policy, ("Fail", "Ignore")))
        cfg = _dict(hook.get("clientConfig"))
        if bool(cfg.get("url")) == bool(cfg.get("service")):
            out.append(required(f"{p}.clientConfig", "exactly one of url or service is required"))
    return out


def _node(obj: Obj) -> list[FieldError]:
    out: list[FieldError] = []
    for p, taint in locations(obj, "spec.taints[*]"):
        taint = _dict(taint)
        effect = taint.get("effect")
        if not effect:
            out.append(required(f"{p}.effect"))
        elif effect not in ("NoSchedule", "PreferNoSchedule", "NoExecute"):
            out.append(not_supported(f"{p}.effect", effect, ("NoSchedule", "PreferNoSchedule", "NoExecute")))
        key = str(taint.get("key") or "")
        out += [invalid_value(f"{p}.key", key, m) for m in is_qualified_name(key)] if key else [required(f"{p}.key")]
    return out


def _quota(obj: Obj) -> list[FieldError]:
    out: list[FieldError] = []
    for name, q in _dict(_dict(obj.get("spec")).get("hard")).items():
        try:
            if parse_quantity(q) < 0:
                out.append(invalid_value(f"spec.hard[{name}]", canonical(q), "must be greater than or equal to 0"))
        except ValueError:
            continue
    return out


# ---------------------------------------------------------------- the table
_POD_UPDATE = "pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"


def _pod_spec_view(spec: Any) -> Any:
    """A pod spec with the fields an update may change blanked out."""
    view = copy.deepcopy(_dict(spec))
    for key in ("containers", "initContainers"):
        for ctr in _list(view.get(key)):
            if isinstance(ctr, dict):
                ctr.pop("image", None)
    for key in ("activeDeadlineSeconds", "tolerations", "terminationGracePeriodSeconds"):
        view.pop(key, None)
    return view


def _pod_update(obj: Obj, old: Obj) -> list[FieldError]:
    if _pod_spec_view(obj.get("spec")) == _pod_spec_view(old.get("spec")):
        return []
    return [forbidden("spec", _POD_UPDATE)]


def _sts_update(obj: Obj, old: Obj) -> list[FieldError]:
    mutable = ("replicas", "ordinals", "template", "updateStrategy", "persistentVolumeClaimRetentionPolicy", "minReadySeconds", "revisionHistoryLimit")
    view = lambda o: {k: v for k, v in _dict(o.get("spec")).items() if k not in mutable}  # noqa: E731
    if view(obj) != view(old):
        return [forbidden("spec", "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden")]
    return []


def _pvc_update(obj: Obj, old: Obj) -> list[FieldError]:
    if not _pvc_bound(old):
        return []
    new_spec = {**_dict(obj.get("spec"))}
    new_spec.setdefault("volumeName", _dict(old.get("spec")).get("volumeName"))
    if _pvc_spec_view(new_spec) != _pvc_spec_view(old.get("spec")):
        return [forbidden("spec", "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims")]
    return []


_APPS = ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet")

RULES: dict[str, KindRules] = {
    "Pod": KindRules(checks=(*pod_spec_checks("spec", pod=True),), immutable=(UpdateRule(_pod_update),)),
    "Deployment": KindRules(
        checks=(
            *_workload("deployment", strategy=(OneOf("spec.strategy.type", ("Recreate", "RollingUpdate"), default="RollingUpdate"), Rule(_rolling_update))),
            Min("spec.progressDeadlineSeconds"),
            Rule(_progress_deadline),
        ),
        immutable=(_SELECTOR_IMMUTABLE,),
    ),
    "ReplicaSet": KindRules(checks=_workload("deployment"), immutable=(_SELECTOR_IMMUTABLE,)),
    "StatefulSet": KindRules(
        checks=(
            OneOf("spec.podManagementPolicy", ("OrderedReady", "Parallel"), default="OrderedReady", required=True, detail="must be 'OrderedReady' or 'Parallel'"),
            OneOf("spec.updateStrategy.type", ("RollingUpdate", "OnDelete"), default="RollingUpdate", required=True, detail="must be 'RollingUpdate' or 'OnDelete'"),
            OneOf("spec.persistentVolumeClaimRetentionPolicy.whenDeleted", ("Retain", "Delete"), default="Retain"),
            OneOf("spec.persistentVolumeClaimRetentionPolicy.whenScaled", ("Retain", "Delete"), default="Retain"),
            Min("spec.replicas"),
            Min("spec.minReadySeconds"),
            SelectorRequired("spec.selector"),
            LabelSelectorValid("spec.selector"),
            SelectorNotEmpty("spec.selector", "statefulset"),
            SelectorMatches("spec.selector", "spec.template.metadata.labels"),
            Labels("spec.template.metadata.labels"),
            Annotations("spec.template.metadata.annotations"),
            OneOf("spec.template.spec.restartPolicy", ("Always",), default="Always"),
            Forbid("spec.template.spec.activeDeadlineSeconds", "activeDeadlineSeconds in StatefulSet is not Supported"),
        ),
        immutable=(UpdateRule(_sts_update),),
        skip_schema=("spec.template.spec",),
    ),
    "DaemonSet": KindRules(
        checks=(
            LabelSelectorValid("spec.selector"),
            SelectorMatches("spec.selector", "spec.template.metadata.labels", skip_empty=False),
            SelectorNotEmpty("spec.selector", "daemonset"),
            *_template("spec.template"),
            OneOf("spec.template.spec.restartPolicy", ("Always",), default="Always"),
            Forbid("spec.template.spec.activeDeadlineSeconds", "activeDeadlineSeconds in DaemonSet is not Supported"),
            Min("spec.minReadySeconds"),
            OneOf("spec.updateStrategy.type", ("RollingUpdate", "OnDelete"), default="RollingUpdate"),
            Min("spec.revisionHistoryLimit"),
        ),
        immutable=(_SELECTOR_IMMUTABLE,),
    ),
    "Job": KindRules(
        checks=_job_spec("spec"),
        immutable=(Immutable("spec.completions"), Immutable("spec.selector", go_label_selector), Immutable("spec.template", lambda v: GoText("core.PodTemplateSpec{...}"))),
    ),
    "CronJob": KindRules(
        checks=(
            Rule(_cron_schedule),
            Min("spec.startingDeadlineSeconds"),
            OneOf("spec.concurrencyPolicy", ("Allow", "Forbid", "Replace"), default="Allow", required=True),
            *_job_spec("spec.jobTemplate.spec"),
            Forbid("spec.jobTemplate.spec.selector", "`selector` will be auto-generated"),
            Min("spec.successfulJobsHistoryLimit"),
            Min("spec.failedJobsHistoryLimit"),
        ),
    ),
    "Service": KindRules(
        checks=(Rule(_service),),
        immutable=(UpdateRule(_service_update),),
    ),
    "ConfigMap": KindRules(checks=(Rule(_config_map),)),
    "Secret": KindRules(checks=(Rule(_secret),), immutable=(Immutable("type"),)),
    "PersistentVolumeClaim": KindRules(
        checks=(Rule(_pvc), OneOf("spec.volumeMode", ("Block", "Filesystem"), default="Filesystem")),
        immutable=(UpdateRule(_pvc_update),),
    ),
    "PersistentVolume": KindRules(
        checks=(Rule(_pv), OneOf("spec.persistentVolumeReclaimPolicy", ("Delete", "Recycle", "Retain"), default="Retain")),
    ),
    "Node": KindRules(checks=(Rule(_node),)),
    "Endpoints": KindRules(
        checks=(Name("subsets[*].addresses[*].ip", lambda v: [] if is_ip(v) else ["must be a valid IP address"], required=True), Port("subsets[*].ports[*].port", required=True), OneOf("subsets[*].ports[*].protocol", PROTOCOLS, default="TCP")),
    ),
    "NetworkPolicy": KindRules(checks=(LabelSelectorValid("spec.podSelector"), Rule(_network_policy))),
    "Ingress": KindRules(checks=(Rule(_ingress),)),
    "IngressClass": KindRules(checks=(Required("spec.controller"),), immutable=(Immutable("spec.controller"),)),
    "HorizontalPodAutoscaler": KindRules(checks=(Rule(_hpa),)),
    "ResourceQuota": KindRules(checks=(Rule(_quota),)),
    "PriorityClass": KindRules(
        checks=(OneOf("preemptionPolicy", ("Never", "PreemptLowerPriority"), default="PreemptLowerPriority"),),
        immutable=(Immutable("value", detail="may not be changed in an update.", as_forbidden=True),),
    ),
    "Role": KindRules(checks=_rules_of("rules")),
    "ClusterRole": KindRules(checks=_rules_of("rules")),
    "RoleBinding": KindRules(checks=_binding(False), immutable=(Immutable("roleRef", _role_ref, "cannot change roleRef"),)),
    "ClusterRoleBinding": KindRules(checks=_binding(True), immutable=(Immutable("roleRef", _role_ref, "cannot change roleRef"),)),
    "StorageClass": KindRules(
        checks=(Required("provisioner"), OneOf("reclaimPolicy", ("Delete", "Retain"), default="Delete"), OneOf("volumeBindingMode", ("Immediate", "WaitForFirstConsumer"), default="Immediate")),
        immutable=(
            Immutable("parameters", detail="updates to parameters are forbidden.", as_forbidden=True),
            Immutable("provisioner", detail="updates to provisioner are forbidden.", as_forbidden=True),
            Immutable("reclaimPolicy", detail="updates to reclaimPolicy are forbidden.", as_forbidden=True),
            Immutable("volumeBindingMode", detail="field is immutable"),
        ),
    ),
    "ValidatingWebhookConfiguration": KindRules(checks=(Rule(_webhooks),)),
    "MutatingWebhookConfiguration": KindRules(checks=(Rule(_webhooks),)),
    "ServiceAccount": KindRules(),
    "Namespace": KindRules(),
    "Event": KindRules(),
}
