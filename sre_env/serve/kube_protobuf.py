"""Protobuf request bodies decoded into the JSON-shaped objects the API handlers take.

Why: the real kubectl's generator commands (``kubectl create configmap|deployment|...``,
``kubectl create job --from=cronjob/...``, ``kubectl autoscale``) go through client-go's typed
clients, which send built-in kinds as ``application/vnd.kubernetes.protobuf`` (kubectl 1.32's
``run`` and ``expose`` send JSON). The body is
the magic ``k8s\\x00`` then a ``runtime.Unknown`` message (1 TypeMeta{1 apiVersion, 2 kind},
2 raw, 3 contentEncoding, 4 contentType) whose ``raw`` is the typed object's encoding per
k8s.io/api's ``generated.proto``.

The reader below is a minimal proto2 wire-format reader; the message tables name, per
message, each field number's JSON name and type, for exactly the messages those commands
emit (recursively). Go's generated marshallers write every non-pointer scalar, zero or not,
and pointer fields only when set, so the JSON shape needs one more bit per scalar field: a
zero is dropped where the Go JSON tag says ``omitempty`` and kept for pointers (a set
``--replicas=0``) and for fields whose JSON has no ``omitempty`` (``PriorityClass.value``):
the object comes out as kubectl's own JSON body for the same command would. A field number a known message does not name, a wire type that does not
fit, or a kind not modelled is refused as the apiserver refuses a body it cannot decode
(415), never silently dropped.
"""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from typing import Any

from sre_env.errors import ApiError
from sre_env.kube.protowire import _LEN, _VARINT, MAGIC, Unsupported, fields

#: the apiserver's answer to a body it cannot decode
UNKNOWN_FORMAT = "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml, application/vnd.kubernetes.protobuf"


def unsupported() -> ApiError:
    """The apiserver's 415 for an undecodable body."""
    return ApiError(415, "UnsupportedMediaType", UNKNOWN_FORMAT)


def _signed(v: int) -> int:
    """Go's int32/int64 varints are two's complement over 64 bits."""
    return v - (1 << 64) if v >= 1 << 63 else v


# ---------------------------------------------------------------- message tables
#: a field: (JSON name, type, sub-message for message-typed fields)
Field = tuple[str, str, str | None]


def _m(**spec: str) -> dict[int, Field]:
    """A message table from ``jsonName="N type[:Sub]"`` entries (keyword order is irrelevant)."""
    table: dict[int, Field] = {}
    for name, desc in spec.items():
        num, kind = desc.split(" ", 1)
        kind, _, sub = kind.partition(":")
        table[int(num)] = (name.rstrip("_"), kind, sub or None)
    return table


# types: str/int/bool (omitempty: zero dropped), str?/int?/bool? (pointer or no omitempty: zero kept), bytes (base64),
# msg/msgs/inline (a message, a list of them, one whose fields the JSON inlines), strs (list of strings),
# map/bmap/qmap (string to string/base64 bytes/Quantity), ios (IntOrString), qty (Quantity), time (Time)
MESSAGES: dict[str, dict[int, Field]] = {
    # --- meta/v1 and runtime
    "Unknown": _m(typeMeta="1 msg:TypeMeta", raw="2 bytes", contentEncoding="3 str", contentType="4 str"),
    "TypeMeta": _m(apiVersion="1 str", kind="2 str"),
    "ObjectMeta": _m(
        name="1 str", generateName="2 str", namespace="3 str", selfLink="4 str", uid="5 str", resourceVersion="6 str",
        generation="7 int", creationTimestamp="8 time", deletionTimestamp="9 time", deletionGracePeriodSeconds="10 int?",
        labels="11 map", annotations="12 map", ownerReferences="13 msgs:OwnerReference", finalizers="14 strs",
    ),
    "OwnerReference": _m(kind="1 str?", name="3 str?", uid="4 str?", apiVersion="5 str?", controller="6 bool?", blockOwnerDeletion="7 bool?"),
    "LabelSelector": _m(matchLabels="1 map", matchExpressions="2 msgs:LabelSelectorRequirement"),
    "LabelSelectorRequirement": _m(key="1 str?", operator="2 str?", values="3 strs"),
    "DeleteOptions": _m(
        gracePeriodSeconds="1 int?", preconditions="2 msg:Preconditions", orphanDependents="3 bool?", propagationPolicy="4 str?",
        dryRun="5 strs", ignoreStoreReadErrorWithClusterBreakingPotential="6 bool?",
    ),
    "Preconditions": _m(uid="1 str?", resourceVersion="2 str?"),
    # --- core/v1: config and identity
    "ConfigMap": _m(metadata="1 msg:ObjectMeta", data="2 map", binaryData="3 bmap", immutable="4 bool?"),
    "Secret": _m(metadata="1 msg:ObjectMeta", data="2 bmap", type="3 str", stringData="4 map", immutable="5 bool?"),
    "Namespace": _m(metadata="1 msg:ObjectMeta", spec="2 msg:NamespaceSpec", status="3 msg:NamespaceStatus"),
    "NamespaceSpec": _m(finalizers="1 strs"),
    "NamespaceStatus": _m(phase="1 str"),
    "ServiceAccount": _m(
        metadata="1 msg:ObjectMeta", secrets="2 msgs:ObjectReference", imagePullSecrets="3 msgs:LocalObjectReference",
        automountServiceAccountToken="4 bool?",
    ),
    "ObjectReference": _m(kind="1 str", namespace="2 str", name="3 str", uid="4 str", apiVersion="5 str", resourceVersion="6 str", fieldPath="7 str"),
    "LocalObjectReference": _m(name="1 str"),
    "TypedLocalObjectReference": _m(apiGroup="1 str?", kind="2 str?", name="3 str?"),
    "ResourceQuota": _m(metadata="1 msg:ObjectMeta", spec="2 msg:ResourceQuotaSpec", status="3 msg:ResourceQuotaStatus"),
    "ResourceQuotaSpec": _m(hard="1 qmap", scopes="2 strs", scopeSelector="3 msg:ScopeSelector"),
    "ScopeSelector": _m(matchExpressions="1 msgs:ScopedResourceSelectorRequirement"),
    "ScopedResourceSelectorRequirement": _m(scopeName="1 str?", operator="2 str?", values="3 strs"),
    "ResourceQuotaStatus": _m(hard="1 qmap", used="2 qmap"),
    # --- core/v1: workloads
    "Pod": _m(metadata="1 msg:ObjectMeta", spec="2 msg:PodSpec", status="3 msg:PodStatus"),
    "PodStatus": _m(phase="1 str"),
    "PodTemplateSpec": _m(metadata="1 msg:ObjectMeta", spec="2 msg:PodSpec"),
    "PodSpec": _m(
        volumes="1 msgs:Volume", containers="2 msgs:Container", restartPolicy="3 str", terminationGracePeriodSeconds="4 int?",
        activeDeadlineSeconds="5 int?", dnsPolicy="6 str", nodeSelector="7 map", serviceAccountName="8 str", serviceAccount="9 str",
        nodeName="10 str", hostNetwork="11 bool", hostPID="12 bool", hostIPC="13 bool", imagePullSecrets="15 msgs:LocalObjectReference",
        hostname="16 str", subdomain="17 str", schedulerName="19 str", initContainers="20 msgs:Container",
        automountServiceAccountToken="21 bool?", tolerations="22 msgs:Toleration", priorityClassName="24 str", priority="25 int?",
        shareProcessNamespace="27 bool?", runtimeClassName="29 str?", enableServiceLinks="30 bool?", preemptionPolicy="31 str?",
    ),
    "Toleration": _m(key="1 str", operator="2 str", value="3 str", effect="4 str", tolerationSeconds="5 int?"),
    "Container": _m(
        name="1 str?", image="2 str", command="3 strs", args="4 strs", workingDir="5 str", ports="6 msgs:ContainerPort",
        env="7 msgs:EnvVar", resources="8 msg:ResourceRequirements", volumeMounts="9 msgs:VolumeMount",
        livenessProbe="10 msg:Probe", readinessProbe="11 msg:Probe", terminationMessagePath="13 str", imagePullPolicy="14 str",
        stdin="16 bool", stdinOnce="17 bool", tty="18 bool", envFrom="19 msgs:EnvFromSource", terminationMessagePolicy="20 str",
        startupProbe="22 msg:Probe", restartPolicy="24 str?",
    ),
    "ContainerPort": _m(name="1 str", hostPort="2 int", containerPort="3 int?", protocol="4 str", hostIP="5 str"),
    "EnvVar": _m(name="1 str?", value="2 str", valueFrom="3 msg:EnvVarSource"),
    "EnvVarSource": _m(
        fieldRef="1 msg:ObjectFieldSelector", resourceFieldRef="2 msg:ResourceFieldSelector",
        configMapKeyRef="3 msg:ConfigMapKeySelector", secretKeyRef="4 msg:SecretKeySelector",
    ),
    "ObjectFieldSelector": _m(apiVersion="1 str", fieldPath="2 str?"),
    "ResourceFieldSelector": _m(containerName="1 str", resource="2 str?", divisor="3 qty"),
    "ConfigMapKeySelector": _m(localObjectReference="1 inline:LocalObjectReference", key="2 str?", optional="3 bool?"),
    "SecretKeySelector": _m(localObjectReference="1 inline:LocalObjectReference", key="2 str?", optional="3 bool?"),
    "EnvFromSource": _m(prefix="1 str", configMapRef="2 msg:ConfigMapEnvSource", secretRef="3 msg:SecretEnvSource"),
    "ConfigMapEnvSource": _m(localObjectReference="1 inline:LocalObjectReference", optional="2 bool?"),
    "SecretEnvSource": _m(localObjectReference="1 inline:LocalObjectReference", optional="2 bool?"),
    "ResourceRequirements": _m(limits="1 qmap", requests="2 qmap", claims="3 msgs:ResourceClaim"),
    "ResourceClaim": _m(name="1 str", request="2 str"),
    "VolumeMount": _m(name="1 str?", readOnly="2 bool", mountPath="3 str?", subPath="4 str", mountPropagation="5 str?", subPathExpr="6 str", recursiveReadOnly="7 str?"),
    "Volume": _m(name="1 str?", volumeSource="2 inline:VolumeSource"),
    "VolumeSource": _m(
        hostPath="1 msg:HostPathVolumeSource", emptyDir="2 msg:EmptyDirVolumeSource", secret="6 msg:SecretVolumeSource",
        persistentVolumeClaim="10 msg:PersistentVolumeClaimVolumeSource", configMap="19 msg:ConfigMapVolumeSource",
    ),
    "HostPathVolumeSource": _m(path="1 str", type="2 str?"),
    "EmptyDirVolumeSource": _m(medium="1 str", sizeLimit="2 qty"),
    "SecretVolumeSource": _m(secretName="1 str", items="2 msgs:KeyToPath", defaultMode="3 int?", optional="4 bool?"),
    "PersistentVolumeClaimVolumeSource": _m(claimName="1 str", readOnly="2 bool"),
    "ConfigMapVolumeSource": _m(localObjectReference="1 inline:LocalObjectReference", items="2 msgs:KeyToPath", defaultMode="3 int?", optional="4 bool?"),
    "KeyToPath": _m(key="1 str?", path="2 str?", mode="3 int?"),
    "Probe": _m(
        handler="1 inline:ProbeHandler", initialDelaySeconds="2 int", timeoutSeconds="3 int", periodSeconds="4 int",
        successThreshold="5 int", failureThreshold="6 int", terminationGracePeriodSeconds="7 int?",
    ),
    "ProbeHandler": _m(exec_="1 msg:ExecAction", httpGet="2 msg:HTTPGetAction", tcpSocket="3 msg:TCPSocketAction", grpc="4 msg:GRPCAction"),
    "ExecAction": _m(command="1 strs"),
    "HTTPGetAction": _m(path="1 str", port="2 ios", host="3 str", scheme="4 str", httpHeaders="5 msgs:HTTPHeader"),
    "HTTPHeader": _m(name="1 str?", value="2 str?"),
    "TCPSocketAction": _m(port="1 ios", host="2 str"),
    "GRPCAction": _m(port="1 int?", service="2 str?"),
    # --- core/v1: services
    "Service": _m(metadata="1 msg:ObjectMeta", spec="2 msg:ServiceSpec", status="3 msg:ServiceStatus"),
    "ServiceSpec": _m(
        ports="1 msgs:ServicePort", selector="2 map", clusterIP="3 str", type="4 str", externalIPs="5 strs", sessionAffinity="7 str",
        loadBalancerIP="8 str", loadBalancerSourceRanges="9 strs", externalName="10 str", externalTrafficPolicy="11 str",
        healthCheckNodePort="12 int", publishNotReadyAddresses="13 bool", ipFamilyPolicy="17 str?", clusterIPs="18 strs",
        ipFamilies="19 strs", allocateLoadBalancerNodePorts="20 bool?", loadBalancerClass="21 str?", internalTrafficPolicy="22 str?",
    ),
    "ServicePort": _m(name="1 str", protocol="2 str", port="3 int?", targetPort="4 ios", nodePort="5 int", appProtocol="6 str?"),
    "ServiceStatus": _m(loadBalancer="1 msg:LoadBalancerStatus"),
    "LoadBalancerStatus": _m(ingress="1 msgs:LoadBalancerIngress"),
    "LoadBalancerIngress": _m(ip="1 str", hostname="2 str"),
    # --- apps/v1
    "Deployment": _m(metadata="1 msg:ObjectMeta", spec="2 msg:DeploymentSpec", status="3 msg:DeploymentStatus"),
    "DeploymentSpec": _m(
        replicas="1 int?", selector="2 msg:LabelSelector", template="3 msg:PodTemplateSpec", strategy="4 msg:DeploymentStrategy",
        minReadySeconds="5 int", revisionHistoryLimit="6 int?", paused="7 bool", progressDeadlineSeconds="9 int?",
    ),
    "DeploymentStrategy": _m(type="1 str", rollingUpdate="2 msg:RollingUpdateDeployment"),
    "RollingUpdateDeployment": _m(maxUnavailable="1 ios", maxSurge="2 ios"),
    "DeploymentStatus": _m(
        observedGeneration="1 int", replicas="2 int", updatedReplicas="3 int", availableReplicas="4 int", unavailableReplicas="5 int",
        readyReplicas="7 int",
    ),
    # --- batch/v1
    "Job": _m(metadata="1 msg:ObjectMeta", spec="2 msg:JobSpec", status="3 msg:JobStatus"),
    "JobSpec": _m(
        parallelism="1 int?", completions="2 int?", activeDeadlineSeconds="3 int?", selector="4 msg:LabelSelector", manualSelector="5 bool?",
        template="6 msg:PodTemplateSpec", backoffLimit="7 int?", ttlSecondsAfterFinished="8 int?", completionMode="9 str?", suspend="10 bool?",
    ),
    "JobStatus": _m(active="4 int", succeeded="5 int", failed="6 int", completedIndexes="7 str", ready="9 int?", failedIndexes="10 str?", terminating="11 int?"),
    "CronJob": _m(metadata="1 msg:ObjectMeta", spec="2 msg:CronJobSpec", status="3 msg:CronJobStatus"),
    "CronJobSpec": _m(
        schedule="1 str?", startingDeadlineSeconds="2 int?", concurrencyPolicy="3 str", suspend="4 bool?", jobTemplate="5 msg:JobTemplateSpec",
        successfulJobsHistoryLimit="6 int?", failedJobsHistoryLimit="7 int?", timeZone="8 str?",
    ),
    "JobTemplateSpec": _m(metadata="1 msg:ObjectMeta", spec="2 msg:JobSpec"),
    "CronJobStatus": _m(lastScheduleTime="4 time", lastSuccessfulTime="5 time"),
    # --- rbac/v1
    "Role": _m(metadata="1 msg:ObjectMeta", rules="2 msgs:PolicyRule"),
    "ClusterRole": _m(metadata="1 msg:ObjectMeta", rules="2 msgs:PolicyRule", aggregationRule="3 msg:AggregationRule"),
    "AggregationRule": _m(clusterRoleSelectors="1 msgs:LabelSelector"),
    "PolicyRule": _m(verbs="1 strs", apiGroups="2 strs", resources="3 strs", resourceNames="4 strs", nonResourceURLs="5 strs"),
    "RoleBinding": _m(metadata="1 msg:ObjectMeta", subjects="2 msgs:Subject", roleRef="3 msg:RoleRef"),
    "Subject": _m(kind="1 str?", apiGroup="2 str", name="3 str?", namespace="4 str"),
    "RoleRef": _m(apiGroup="1 str?", kind="2 str?", name="3 str?"),
    # --- autoscaling
    "HorizontalPodAutoscalerV1": _m(metadata="1 msg:ObjectMeta", spec="2 msg:HPASpecV1", status="3 msg:HPAStatus"),
    "HPASpecV1": _m(scaleTargetRef="1 msg:CrossVersionObjectReference", minReplicas="2 int?", maxReplicas="3 int?", targetCPUUtilizationPercentage="4 int?"),
    "HorizontalPodAutoscaler": _m(metadata="1 msg:ObjectMeta", spec="2 msg:HPASpec", status="3 msg:HPAStatus"),
    "HPASpec": _m(scaleTargetRef="1 msg:CrossVersionObjectReference", minReplicas="2 int?", maxReplicas="3 int?", metrics="4 msgs:MetricSpec"),
    "HPAStatus": _m(observedGeneration="1 int?", lastScaleTime="2 time", currentReplicas="3 int?", desiredReplicas="4 int?"),
    "CrossVersionObjectReference": _m(kind="1 str?", name="2 str?", apiVersion="3 str"),
    "MetricSpec": _m(type="1 str?", resource="4 msg:ResourceMetricSource", containerResource="7 msg:ContainerResourceMetricSource"),
    "ResourceMetricSource": _m(name="1 str?", target="2 msg:MetricTarget"),
    "ContainerResourceMetricSource": _m(name="1 str?", target="2 msg:MetricTarget", container="3 str?"),
    "MetricTarget": _m(type="1 str?", value="2 qty", averageValue="3 qty", averageUtilization="4 int?"),
    # --- policy/v1
    "PodDisruptionBudget": _m(metadata="1 msg:ObjectMeta", spec="2 msg:PodDisruptionBudgetSpec", status="3 msg:PodDisruptionBudgetStatus"),
    "PodDisruptionBudgetSpec": _m(minAvailable="1 ios", selector="2 msg:LabelSelector", maxUnavailable="3 ios", unhealthyPodEvictionPolicy="4 str?"),
    "PodDisruptionBudgetStatus": _m(
        observedGeneration="1 int", disruptionsAllowed="3 int?", currentHealthy="4 int?", desiredHealthy="5 int?", expectedPods="6 int?",
    ),
    "Eviction": _m(metadata="1 msg:ObjectMeta", deleteOptions="2 msg:DeleteOptions"),
    # --- scheduling/v1
    "PriorityClass": _m(metadata="1 msg:ObjectMeta", value="2 int?", globalDefault="3 bool", description="4 str", preemptionPolicy="5 str?"),
    # --- networking/v1
    "Ingress": _m(metadata="1 msg:ObjectMeta", spec="2 msg:IngressSpec", status="3 msg:IngressStatus"),
    "IngressSpec": _m(defaultBackend="1 msg:IngressBackend", tls="2 msgs:IngressTLS", rules="3 msgs:IngressRule", ingressClassName="4 str?"),
    "IngressBackend": _m(resource="3 msg:TypedLocalObjectReference", service="4 msg:IngressServiceBackend"),
    "IngressServiceBackend": _m(name="1 str?", port="2 msg:ServiceBackendPort"),
    "ServiceBackendPort": _m(name="1 str", number="2 int"),
    "IngressTLS": _m(hosts="1 strs", secretName="2 str"),
    "IngressRule": _m(host="1 str", ingressRuleValue="2 inline:IngressRuleValue"),
    "IngressRuleValue": _m(http="1 msg:HTTPIngressRuleValue"),
    "HTTPIngressRuleValue": _m(paths="1 msgs:HTTPIngressPath"),
    "HTTPIngressPath": _m(path="1 str", backend="2 msg:IngressBackend", pathType="3 str?"),
    "IngressStatus": _m(loadBalancer="1 msg:IngressLoadBalancerStatus"),
    "IngressLoadBalancerStatus": _m(ingress="1 msgs:IngressLoadBalancerIngress"),
    "IngressLoadBalancerIngress": _m(ip="1 str", hostname="2 str"),
}

#: (apiVersion, kind) of a body -> its message
KINDS: dict[tuple[str, str], str] = {
    ("v1", "ConfigMap"): "ConfigMap", ("v1", "Secret"): "Secret", ("v1", "Namespace"): "Namespace",
    ("v1", "ServiceAccount"): "ServiceAccount", ("v1", "Pod"): "Pod", ("v1", "Service"): "Service",
    ("v1", "ResourceQuota"): "ResourceQuota", ("v1", "DeleteOptions"): "DeleteOptions",
    ("meta.k8s.io/v1", "DeleteOptions"): "DeleteOptions",
    ("apps/v1", "Deployment"): "Deployment",
    ("batch/v1", "Job"): "Job", ("batch/v1", "CronJob"): "CronJob",
    **{("rbac.authorization.k8s.io/v1", k): k for k in ("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding")},
    ("autoscaling/v1", "HorizontalPodAutoscaler"): "HorizontalPodAutoscalerV1",
    ("autoscaling/v2", "HorizontalPodAutoscaler"): "HorizontalPodAutoscaler",
    ("policy/v1", "PodDisruptionBudget"): "PodDisruptionBudget", ("policy/v1", "Eviction"): "Eviction",
    ("scheduling.k8s.io/v1", "PriorityClass"): "PriorityClass",
    ("networking.k8s.io/v1", "Ingress"): "Ingress",
}
MESSAGES["ClusterRoleBinding"] = MESSAGES["RoleBinding"]


# ---------------------------------------------------------------- decoding
def _text(raw: Any, wt: int) -> str:
    if wt != _LEN:
        raise Unsupported("string field with a non-length wire type")
    try:
        return bytes(raw).decode("utf-8")
    except UnicodeDecodeError:
        raise Unsupported("invalid UTF-8 in a string field") from None


def _int(raw: Any, wt: int) -> int:
    if wt != _VARINT:
        raise Unsupported("integer field with a non-varint wire type")
    return _signed(raw)


def _b64(raw: Any, wt: int) -> str:
    if wt != _LEN:
        raise Unsupported("bytes field with a non-length wire type")
    return base64.b64encode(raw).decode("ascii")


def _quantity(raw: Any, wt: int) -> str:
    """resource.Quantity: ``{1 string}``, its canonical text."""
    out = ""
    for num, fwt, val in fields(raw if wt == _LEN else b"\x00"):
        if num != 1:
            raise Unsupported(f"Quantity field {num}")
        out = _text(val, fwt)
    return out


def _int_or_string(raw: Any, wt: int) -> int | str:
    """intstr.IntOrString: ``{1 type, 2 intVal, 3 strVal}`` (type 1 is a string)."""
    if wt != _LEN:
        raise Unsupported("IntOrString with a non-length wire type")
    kind, ival, sval = 0, 0, ""
    for num, fwt, val in fields(raw):
        if num == 1:
            kind = _int(val, fwt)
        elif num == 2:
            ival = _int(val, fwt)
        elif num == 3:
            sval = _text(val, fwt)
        else:
            raise Unsupported(f"IntOrString field {num}")
    return sval if kind == 1 else ival


def _time(raw: Any, wt: int) -> str | None:
    """metav1.Time: a Timestamp ``{1 seconds, 2 nanos}``; the zero time is an empty message (JSON ``null``)."""
    if wt != _LEN:
        raise Unsupported("Time with a non-length wire type")
    seconds = None
    for num, fwt, val in fields(raw):
        if num == 1:
            seconds = _int(val, fwt)
        elif num != 2:
            raise Unsupported(f"Timestamp field {num}")
    if seconds is None:
        return None
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _entry(raw: Any, wt: int, value: Any) -> tuple[str, Any]:
    """A map entry ``{1 key, 2 value}``; ``value`` converts the value field."""
    if wt != _LEN:
        raise Unsupported("map entry with a non-length wire type")
    key, val_out = "", None
    for num, fwt, val in fields(raw):
        if num == 1:
            key = _text(val, fwt)
        elif num == 2:
            val_out = value(val, fwt)
        else:
            raise Unsupported(f"map entry field {num}")
    return key, val_out


_MAP_VALUES = {"map": (_text, ""), "bmap": (_b64, ""), "qmap": (_quantity, "")}


def decode_message(name: str, buf: bytes) -> dict[str, Any]:
    """One message of table ``name`` as its JSON object."""
    table = MESSAGES[name]
    out: dict[str, Any] = {}
    for num, wt, raw in fields(buf):
        spec = table.get(num)
        if spec is None:
            raise Unsupported(f"{name} field {num}")
        key, kind, sub = spec
        if kind in ("str", "str?"):
            val = _text(raw, wt)
            if val or kind == "str?":
                out[key] = val
        elif kind in ("int", "int?"):
            val = _int(raw, wt)
            if val or kind == "int?":
                out[key] = val
        elif kind in ("bool", "bool?"):
            val = bool(_int(raw, wt))
            if val or kind == "bool?":
                out[key] = val
        elif kind == "bytes":
            if raw:
                out[key] = _b64(raw, wt)
        elif kind == "strs":
            out.setdefault(key, []).append(_text(raw, wt))
        elif kind in _MAP_VALUES:
            k, v = _entry(raw, wt, _MAP_VALUES[kind][0])
            out.setdefault(key, {})[k] = v if v is not None else _MAP_VALUES[kind][1]
        elif kind == "ios":
            out[key] = _int_or_string(raw, wt)
        elif kind == "qty":
            out[key] = _quantity(raw, wt)
        elif kind == "time":
            stamp = _time(raw, wt)
            if stamp is not None:
                out[key] = stamp
        elif kind in ("msg", "msgs", "inline"):
            if wt != _LEN or sub is None:
                raise Unsupported(f"{name} field {num} is not a message")
            val = decode_message(sub, raw)
            if kind == "msg":
                out[key] = val
            elif kind == "msgs":
                out.setdefault(key, []).append(val)
            else:
                out.update(val)
        else:  # pragma: no cover - a table typo
            raise Unsupported(f"field type {kind}")
    return out


def decode(body: bytes) -> dict[str, Any]:
    """A ``k8s\\x00``-prefixed protobuf body as the JSON object it encodes; a 415 ApiError if it cannot be named."""
    try:
        if not body.startswith(MAGIC):
            raise Unsupported("no protobuf magic")
        unknown = decode_message("Unknown", body[len(MAGIC) :])
        if unknown.get("contentEncoding"):
            raise Unsupported("encoded raw")
        type_meta = unknown.get("typeMeta") or {}
        api_version, kind = type_meta.get("apiVersion", ""), type_meta.get("kind", "")
        message = KINDS.get((api_version, kind))
        if message is None:
            raise Unsupported(f"kind {api_version}/{kind}")
        raw = base64.b64decode(unknown.get("raw", ""))
        obj = {"kind": kind, "apiVersion": api_version, **decode_message(message, raw)}
        return hpa_v1_to_v2(obj) if api_version == "autoscaling/v1" else obj
    except Unsupported:
        raise unsupported() from None


def hpa_v1_to_v2(obj: dict[str, Any]) -> dict[str, Any]:
    """An autoscaling/v1 HPA (what ``kubectl autoscale`` sends) as the served autoscaling/v2 one.

    The apiserver converts between versions; the simulator serves HPAs as v2 only, so the
    v1 CPU target becomes v2's one Resource metric, as the apiserver's conversion does.
    """
    spec = dict(obj.get("spec") or {})
    cpu = spec.pop("targetCPUUtilizationPercentage", None)
    if cpu is not None:
        spec["metrics"] = [{"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": cpu}}}]
    return {**obj, "apiVersion": "autoscaling/v2", "spec": spec}


def as_requested(obj: Any, path: str) -> Any:
    """A stored (autoscaling/v2) HPA as the autoscaling/v1 client that POSTed it reads it back.

    Only the request's own answer: client-go's typed v1 client cannot read a v2 object
    (``kubectl autoscale`` would print ``<unknown>`` for its name).
    """
    if not (path.startswith("/apis/autoscaling/v1/") and isinstance(obj, dict) and obj.get("apiVersion") == "autoscaling/v2"):
        return obj
    spec = {k: v for k, v in (obj.get("spec") or {}).items() if k in ("scaleTargetRef", "minReplicas", "maxReplicas")}
    for m in (obj.get("spec") or {}).get("metrics") or ():
        res = m.get("resource") or {}
        target = res.get("target") or {}
        if m.get("type") == "Resource" and res.get("name") == "cpu" and target.get("averageUtilization") is not None:
            spec["targetCPUUtilizationPercentage"] = target["averageUtilization"]
    status = {k: v for k, v in (obj.get("status") or {}).items() if k in ("observedGeneration", "lastScaleTime", "currentReplicas", "desiredReplicas")}
    return {**obj, "apiVersion": "autoscaling/v1", "spec": spec, "status": status}
