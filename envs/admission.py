"""Admission control incidents: PodSecurity labels and Gatekeeper's webhooks.

All four share a shape that real clusters know well: admission sits between a
controller and the pods it wants, so nothing breaks while the pods live, and
the incident starts at the next create — here a routine maintenance restart
of a MongoDB whose Deployment uses the ``Recreate`` strategy, so the old pod
is gone before the new one is refused (or mutated into a crash loop). The
ReplicaSet shows ``FailedCreate`` with the apiserver's own message; blind
restarts only repeat it.
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

import numpy as np

from sre_env.apps.hotel_reservation import HOTEL_RESERVATION
from sre_env.faults.control_plane import (
    CreateObject,
    LabelNamespace,
    PatchObject,
    RestartWorkload,
    ScaleWorkload,
)
from sre_env.kube.quantity import memory_bytes
from sre_env.kube.timefmt import iso
from sre_env.kube.tls import b64, pem_certificate
from sre_env.rewards.base import AllowedChange, Check, Mechanism
from sre_env.sim.control import gatekeeper as gk
from sre_env.sim.control.admission import (
    ENFORCE,
    ENFORCE_VERSION,
    pod_security_violations,
    webhook_applies,
)

from .app_common import callers_of, find
from .base import RootCause, Scenario, SimScenario
from .briefs import impact, user_report

if TYPE_CHECKING:
    from sre_env.backend import Backend
    from sre_env.sim.model import ModelBackend

__all__ = ["AdmissionWebhookOutage", "ExpiredTLS", "MutatingWebhookLimits", "PodSecurityRestricted", "WebhookTlsMismatch"]

#: databases read on a request path, whose Deployments use the Recreate strategy
_DATABASES = ("mongodb-profile", "mongodb-rate", "mongodb-reservation")


def _callers(app: Any, service: str) -> tuple[str, ...]:
    return tuple(callers_of(app, service))


class _RestartBlocked(Scenario):
    """A database restarted during maintenance cannot come back; what stops it differs per family."""

    app = HOTEL_RESERVATION
    layer = "kubernetes"
    develop_s = 180.0

    def _draw_db(self, rng: np.random.Generator) -> dict[str, Any]:
        db = str(rng.choice(_DATABASES))
        return {"database": db, "callers": _callers(self.app, db), "container": self.app.component(db).container}

    def _restart(self, backend: "Backend") -> None:
        # the maintenance window's restart, a minute after the change that breaks admission
        backend.advance(60.0)
        RestartWorkload(self.namespace, "Deployment", self.variant["database"], iso(backend.now)).inject(backend)

    def _affected(self) -> tuple[str, ...]:
        v = self.variant
        return (f"deployment/{v['database']}", *(f"deployment/{c}" for c in v["callers"]))

    def brief(self) -> str:
        return user_report(self.app, self.variant["database"], intermittent=False)

    def _db_wrong_fixes(self) -> dict[str, list[str]]:
        v, ns = self.variant, self.namespace
        return {
            "rollout_restart": [f"kubectl rollout restart deployment/{v['database']} -n {ns}", "sleep 60"],
            "delete_pods": [f"kubectl delete pod -n {ns} -l io.kompose.service={v['database']}", "sleep 60"],
            "scale_to_zero": [f"kubectl scale deployment/{v['database']} -n {ns} --replicas=0"],
        }


# --------------------------------------------------------------------------- PodSecurity
class PodSecurityRestricted(_RestartBlocked):
    family = "PodSecurityRestricted"
    difficulty = "medium"
    summary = "After a security change, a hotel-reservation database did not come back from a maintenance restart."
    description = (
        "The security team rolled out a cluster hardening change this morning. Shortly after, a routine maintenance "
        "restart of one of hotel-reservation's databases was run, and since then some features of the site fail for "
        "every user. There is no pod for that database at all; nothing is crash-looping."
    )
    mechanism = Mechanism(
        "pod_security_admission",
        "kubernetes",
        "Pod Security admission rejects the pods (namespace enforce label)",
        (
            r"\bpod ?security\b",
            r"\bpod-security\.kubernetes\.io/enforce\b",
            r"\bpsa\b",
            r"\bpod security (?:admission|standards?)\b",
            r"\brestricted (?:profile|level|policy|standard|pod security)\b",
            r"\benforce(?:d|s|ment)?\b[^.;\n]{0,30}\brestricted\b",
            r"\bviolates podsecurity\b",
        ),
        detail_keys=("label", "level"),
    )

    def extra_components(self) -> tuple[str, ...]:
        return (self.namespace,)

    def draw_variant(self, backend: "Backend", rng: np.random.Generator) -> dict[str, Any]:
        return self._draw_db(rng)

    def inject(self, backend: "Backend") -> None:
        LabelNamespace(self.namespace, ((ENFORCE, "restricted"), (ENFORCE_VERSION, "latest"))).inject(backend)
        self._restart(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        return RootCause(
            component=f"namespace/{self.namespace}",
            namespace=self.namespace,
            layer="kubernetes",
            mechanism="Pod Security admission enforces the restricted level",
            summary=(
                f"namespace/{self.namespace} was labelled {ENFORCE}=restricted; the app's pods do not meet the restricted Pod Security "
                f"standard (no runAsNonRoot, seccompProfile, dropped capabilities), so after its maintenance restart the ReplicaSet of "
                f"deployment/{v['database']} cannot create a pod (FailedCreate: violates PodSecurity \"restricted:latest\") and "
                f"{', '.join(v['callers'])} fail on it. " + impact(self.app, v["database"])
            ),
            details={"label": ENFORCE, "level": "restricted", "database": v["database"]},
            affected=self._affected(),
        )

    def reference_solution(self) -> list[str]:
        v, ns = self.variant, self.namespace
        return [
            f"kubectl get pods -n {ns}",
            f"kubectl describe rs -n {ns} -l io.kompose.service={v['database']}",
            f"kubectl get ns {ns} --show-labels",
            # the app meets the baseline standard: enforce that, keep warning on restricted
            f"kubectl label ns {ns} {ENFORCE}=baseline --overwrite",
            "sleep 180",
            f"kubectl get pods -n {ns}",
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v, ns = self.variant, self.namespace
        ctx = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}, "runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}}
        import json

        patch = json.dumps({"spec": {"template": {"spec": {"containers": [{"name": v["container"], "securityContext": ctx}]}}}})
        return {
            **self._db_wrong_fixes(),
            # only the one database made compliant: every other Deployment is still refused on its next rollout
            "patch_one_deployment": [f"kubectl patch deployment {v['database']} -n {ns} -p '{patch}'", "sleep 180"],
        }

    def cause_checks(self, backend: "Backend") -> list[Check]:
        ns_obj = backend.api.get("Namespace", self.namespace)
        level = (ns_obj["metadata"].get("labels") or {}).get(ENFORCE, "privileged")
        bad = []
        if level in ("baseline", "restricted"):
            for dep in backend.api.list("Deployment", self.namespace):
                if pod_security_violations(dep["spec"]["template"].get("spec") or {}, level):
                    bad.append(dep["metadata"]["name"])
        detail = f"the {level} Pod Security level refuses the pods of: {', '.join(bad)}" if bad else f"every Deployment's pods are admitted at the namespace's {level} level"
        return [Check("pods_admitted", not bad, detail)]

    def allowed_changes(self) -> list[AllowedChange]:
        return [AllowedChange("Namespace", "", self.namespace, "modified"), AllowedChange("Deployment", self.namespace, "*", "modified")]


# --------------------------------------------------------------------------- Gatekeeper webhooks
_WEBHOOK_VOCAB = (
    r"\bfailed calling webhook\b",
    r"\bwebhook\b[^.;\n]{0,60}\b(?:unreachable|down|unavailable|not (?:reachable|running|responding|serving)|connection refused|no endpoints|outage|cannot be reached)\b",
    r"\b(?:admission|validating|validation) webhook (?:outage|back ?end|service|server|is down|failure)\b",
    r"\bgatekeeper\b[^.;\n]{0,60}\b(?:down|unavailable|unreachable|scaled (?:down|to zero|to 0)|no endpoints|connection refused|not listening|wrong (?:target ?)?port)\b",
)


def _gatekeeper_policy_in_force(backend: "ModelBackend", namespace: str) -> Check:
    """Gatekeeper's validating webhook still covers the app's pods and its back end answers over TLS
    (the apiserver's own call to it: simulator-only)."""
    cfg = find(backend, "ValidatingWebhookConfiguration", gk.VALIDATING)
    hook = next((h for h in (cfg or {}).get("webhooks") or () if h.get("name") == "validation.gatekeeper.sh"), None)
    if hook is None:
        return Check("admission_policy_in_force", False, f"validatingwebhookconfiguration {gk.VALIDATING} (or its validation.gatekeeper.sh webhook) is gone: pods are no longer checked against the cluster's policies")
    probe = {"metadata": {"name": "probe", "namespace": namespace, "labels": {}}}
    if not webhook_applies(hook, "CREATE", probe, find(backend, "Namespace", namespace)):
        return Check("admission_policy_in_force", False, f"validation.gatekeeper.sh no longer applies to pods in {namespace}")
    err = backend.model.webhook_error(hook, "/")
    if err is not None:
        return Check("admission_policy_in_force", False, f"validation.gatekeeper.sh does not answer: {err}")
    return Check("admission_policy_in_force", True, f"validation.gatekeeper.sh covers {namespace} and answers")


class AdmissionWebhookOutage(_RestartBlocked, SimScenario):
    family = "AdmissionWebhookOutage"
    difficulty = "medium"
    summary = "A hotel-reservation database never came back from a maintenance restart; no pod is even created."
    description = (
        "A routine maintenance restart of one of hotel-reservation's databases was run a few minutes ago and the "
        "database never came back: there is no pod for it, and the features that use it fail for every user. "
        "The platform team did some cleanup in the cluster earlier today."
    )
    mechanism = Mechanism(
        "admission_webhook_outage",
        "kubernetes",
        "a fail-closed admission webhook whose back end is unreachable",
        _WEBHOOK_VOCAB,
        detail_keys=("webhook", "service", "error"),
        # how the back end went away is part of the story, not a rival diagnosis
        # (the error text the agent quotes, "no endpoints available", is the webhook's symptom too)
        compatible=("scaled_to_zero", "scale_to_zero", "service_target_port", "readiness_probe_misconfig"),
    )

    def extra_components(self) -> tuple[str, ...]:
        return ("gatekeeper-controller-manager", gk.WEBHOOK_SERVICE, gk.VALIDATING)

    def extra_namespaces(self) -> tuple[str, ...]:
        return (gk.NAMESPACE,)

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        v = self._draw_db(rng)
        v["how"] = str(rng.choice(("scaled_down", "target_port")))
        return v

    def inject(self, backend: "ModelBackend") -> None:
        if self.variant["how"] == "scaled_down":
            ScaleWorkload(gk.NAMESPACE, "Deployment", "gatekeeper-controller-manager", 0, 1).inject(backend)
        else:
            PatchObject(
                "Service", gk.WEBHOOK_SERVICE, gk.NAMESPACE,
                ({"op": "replace", "path": "/spec/ports/0/targetPort", "value": 9443},),
                ({"op": "replace", "path": "/spec/ports/0/targetPort", "value": "webhook-server"},),
            ).inject(backend)
        self._restart(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        if v["how"] == "scaled_down":
            component = "deployment/gatekeeper-controller-manager"
            what = f"deployment/gatekeeper-controller-manager (namespace {gk.NAMESPACE}) was scaled to 0, so no pod serves {gk.WEBHOOK_SERVICE}"
            error = f'no endpoints available for service "{gk.WEBHOOK_SERVICE}"'
        else:
            component = f"service/{gk.WEBHOOK_SERVICE}"
            what = f"service/{gk.WEBHOOK_SERVICE} (namespace {gk.NAMESPACE}) sends port 443 to targetPort 9443 where nothing listens (the webhook server listens on webhook-server, 8443)"
            error = "connect: connection refused"
        return RootCause(
            component=component,
            namespace=self.namespace,
            layer="kubernetes",
            mechanism="admission webhook back end unreachable while the webhook fails closed",
            summary=(
                f"The Gatekeeper admission webhook is down: {what}. Its validation.gatekeeper.sh webhook has failurePolicy Fail, "
                f"so every pod create in {self.namespace} is rejected (failed calling webhook validation.gatekeeper.sh); after its maintenance restart "
                f"deployment/{v['database']} cannot create a pod and {', '.join(v['callers'])} fail on it. " + impact(self.app, v["database"])
            ),
            details={"webhook": "validation.gatekeeper.sh", "service": gk.WEBHOOK_SERVICE, "error": error, "database": v["database"]},
            affected=tuple(dict.fromkeys((component, f"service/{gk.WEBHOOK_SERVICE}", *self._affected()))),
        )

    def reference_solution(self) -> list[str]:
        v, ns = self.variant, self.namespace
        steps = [
            f"kubectl get pods -n {ns}",
            f"kubectl describe rs -n {ns} -l io.kompose.service={v['database']}",
            "kubectl get validatingwebhookconfigurations",
            f"kubectl get deploy,svc,ep -n {gk.NAMESPACE}",
        ]
        if v["how"] == "scaled_down":
            steps.append(f"kubectl scale deployment/gatekeeper-controller-manager -n {gk.NAMESPACE} --replicas=1")
        else:
            steps.append(f"kubectl patch service {gk.WEBHOOK_SERVICE} -n {gk.NAMESPACE} --type=json -p '[{{\"op\": \"replace\", \"path\": \"/spec/ports/0/targetPort\", \"value\": \"webhook-server\"}}]'")
        steps += ["sleep 180", f"kubectl get pods -n {ns}"]
        return steps

    def wrong_fixes(self) -> dict[str, list[str]]:
        return {
            **self._db_wrong_fixes(),
            # the app recovers, but every pod in the cluster now skips the platform's policies
            "delete_webhook_configuration": [f"kubectl delete validatingwebhookconfiguration {gk.VALIDATING}", "sleep 180"],
            "fail_open": [f"kubectl patch validatingwebhookconfiguration {gk.VALIDATING} --type=json -p '[{{\"op\": \"replace\", \"path\": \"/webhooks/0/failurePolicy\", \"value\": \"Ignore\"}}]'", "sleep 180"],
            "restart_gatekeeper_audit": [f"kubectl rollout restart deployment/gatekeeper-audit -n {gk.NAMESPACE}", "sleep 180"],
        }

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        return [_gatekeeper_policy_in_force(backend, self.namespace)]

    def allowed_changes(self) -> list[AllowedChange]:
        return [AllowedChange("Deployment", self.namespace, "*", "modified")]


_STALE_ISSUED = "2025-02-03T10:41:57Z"
_STALE_EXPIRES = "2035-02-01T10:41:57Z"


class WebhookTlsMismatch(_RestartBlocked, SimScenario):
    family = "WebhookTlsMismatch"
    difficulty = "hard"
    summary = "A hotel-reservation database cannot be recreated after a maintenance restart, although every system pod is healthy."
    description = (
        "After a routine maintenance restart, one of hotel-reservation's databases has no pod and the features that use "
        "it fail for every user. Every pod in the cluster that exists is Running and Ready. Earlier today the platform "
        "team re-synced the cluster's add-on manifests from their Git repository."
    )
    mechanism = Mechanism(
        "webhook_tls_mismatch",
        "kubernetes",
        "a webhook's caBundle does not match the CA of its serving certificate",
        (
            r"\bca ?bundle\b",
            r"\bx509\b",
            r"\bsigned by unknown authority\b",
            r"\bunknown (?:certificate )?authority\b",
            r"\b(?:tls|certificate|cert|ca) (?:mismatch|verification (?:error|failure|failed))\b",
            r"\bwrong (?:ca|certificate authority|ca bundle)\b",
            r"\bstale (?:ca|ca ?bundle|certificate)\b",
        ),
        detail_keys=("webhook", "configuration"),
    )

    def extra_components(self) -> tuple[str, ...]:
        return (gk.VALIDATING, "gatekeeper-controller-manager", gk.WEBHOOK_SERVICE)

    def extra_namespaces(self) -> tuple[str, ...]:
        return (gk.NAMESPACE,)

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        return self._draw_db(rng)

    def _stale(self) -> str:
        return b64(pem_certificate("CN=gatekeeper-ca,O=gatekeeper", "CN=gatekeeper-ca,O=gatekeeper", 1, _STALE_ISSUED, _STALE_EXPIRES))

    def inject(self, backend: "ModelBackend") -> None:
        cfg = backend.api.get("ValidatingWebhookConfiguration", gk.VALIDATING)
        ops = tuple({"op": "replace", "path": f"/webhooks/{i}/clientConfig/caBundle", "value": self._stale()} for i in range(len(cfg["webhooks"])))
        inverse = tuple({"op": "replace", "path": f"/webhooks/{i}/clientConfig/caBundle", "value": h["clientConfig"]["caBundle"]} for i, h in enumerate(cfg["webhooks"]))
        PatchObject("ValidatingWebhookConfiguration", gk.VALIDATING, None, ops, inverse).inject(backend)
        self._restart(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        return RootCause(
            component=f"validatingwebhookconfiguration/{gk.VALIDATING}",
            namespace=self.namespace,
            layer="kubernetes",
            mechanism="webhook caBundle does not match the serving certificate's CA",
            summary=(
                f"validatingwebhookconfiguration/{gk.VALIDATING} carries a stale caBundle (from a re-applied manifest) that is not the CA "
                f"in secret {gk.CERT_SECRET}, so the apiserver cannot verify Gatekeeper's serving certificate: x509: certificate signed by "
                f"unknown authority. The webhook fails closed, so after its maintenance restart deployment/{v['database']} cannot create a pod "
                f"and {', '.join(v['callers'])} fail on it. " + impact(self.app, v["database"])
            ),
            details={"webhook": "validation.gatekeeper.sh", "configuration": gk.VALIDATING, "secret": gk.CERT_SECRET, "database": v["database"]},
            affected=self._affected(),
        )

    def reference_solution(self) -> list[str]:
        v, ns = self.variant, self.namespace
        ca = b64(gk.gatekeeper_ca())
        ops = ", ".join(f'{{"op": "replace", "path": "/webhooks/{i}/clientConfig/caBundle", "value": "{ca}"}}' for i in range(2))
        return [
            f"kubectl describe rs -n {ns} -l io.kompose.service={v['database']}",
            f"kubectl get secret {gk.CERT_SECRET} -n {gk.NAMESPACE} -o jsonpath='{{.data.ca\\.crt}}'",
            f"kubectl get validatingwebhookconfiguration {gk.VALIDATING} -o jsonpath='{{.webhooks[0].clientConfig.caBundle}}'",
            f"kubectl patch validatingwebhookconfiguration {gk.VALIDATING} --type=json -p '[{ops}]'",
            "sleep 180",
            f"kubectl get pods -n {ns}",
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        return {
            **self._db_wrong_fixes(),
            "restart_gatekeeper": [f"kubectl rollout restart deployment/gatekeeper-controller-manager -n {gk.NAMESPACE}", "sleep 180"],
            "delete_webhook_configuration": [f"kubectl delete validatingwebhookconfiguration {gk.VALIDATING}", "sleep 180"],
            "fail_open": [f"kubectl patch validatingwebhookconfiguration {gk.VALIDATING} --type=json -p '[{{\"op\": \"replace\", \"path\": \"/webhooks/0/failurePolicy\", \"value\": \"Ignore\"}}]'", "sleep 180"],
        }

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        return [_gatekeeper_policy_in_force(backend, self.namespace)]

    def allowed_changes(self) -> list[AllowedChange]:
        return [AllowedChange("Deployment", self.namespace, "*", "modified"), AllowedChange("ValidatingWebhookConfiguration", "", gk.VALIDATING, "modified")]


_ASSIGN = "container-default-memory-limit"


class MutatingWebhookLimits(_RestartBlocked, SimScenario):
    family = "MutatingWebhookLimits"
    difficulty = "hard"
    summary = "A hotel-reservation database crash-loops after a maintenance restart; its image and config are unchanged."
    description = (
        "Since a routine maintenance restart a few minutes ago, one of hotel-reservation's databases keeps crashing and "
        "the features that use it fail for every user. Its Deployment, image and configuration have not changed in weeks. "
        "The platform team rolled out new cluster-wide defaults for workloads this morning."
    )
    mechanism = Mechanism(
        "mutating_webhook_limits",
        "kubernetes",
        "a mutating admission webhook injects absurd resource limits",
        (
            r"\bmutat\w*\b[^.;\n]{0,80}\blimits?\b",
            r"\blimits?\b[^.;\n]{0,60}\b(?:injected|mutated|assigned|added) by\b",
            r"\bassign\b[^.;\n]{0,60}\b(?:memory )?limits?\b",
            r"\b(?:injects?|injected|injecting)\b[^.;\n]{0,40}\b(?:memory )?limits?\b",
            r"\bdefault memory limit\b",
        ),
        detail_keys=("assign", "value"),
        compatible=("resource_exhaustion",),
    )

    def extra_components(self) -> tuple[str, ...]:
        return (_ASSIGN, gk.MUTATING, "gatekeeper-controller-manager")

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        v = self._draw_db(rng)
        v["value"] = str(rng.choice(("8Mi", "16Mi", "10Mi")))
        return v

    def _assign(self, value: str) -> dict[str, Any]:
        return {
            "apiVersion": "mutations.gatekeeper.sh/v1",
            "kind": "Assign",
            "metadata": {"name": _ASSIGN, "labels": {"app.kubernetes.io/managed-by": "platform-policies"}},
            "spec": {
                "applyTo": [{"groups": [""], "kinds": ["Pod"], "versions": ["v1"]}],
                "match": {"scope": "Namespaced", "kinds": [{"apiGroups": ["*"], "kinds": ["Pod"]}], "excludedNamespaces": ["kube-system", gk.NAMESPACE]},
                "location": "spec.containers[name:*].resources.limits.memory",
                "parameters": {"pathTests": [{"subPath": "spec.containers[name:*].resources.limits.memory", "condition": "MustNotExist"}], "assign": {"value": value}},
            },
        }

    def inject(self, backend: "ModelBackend") -> None:
        CreateObject(self._assign(self.variant["value"])).inject(backend)
        self._restart(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        return RootCause(
            component=f"assign/{_ASSIGN}",
            namespace=self.namespace,
            layer="kubernetes",
            mechanism="a mutating admission webhook injects an absurd memory limit",
            summary=(
                f"The Gatekeeper mutator assign/{_ASSIGN}, applied by the mutation.gatekeeper.sh mutating webhook, injects a memory limit "
                f"of {v['value']} into every container without one. After its maintenance restart the new pod of deployment/{v['database']} "
                f"got limits.memory={v['value']}, far below mongod's working set, and is OOMKilled in a crash loop; {', '.join(v['callers'])} "
                f"fail on it. " + impact(self.app, v["database"])
            ),
            details={"assign": _ASSIGN, "value": v["value"], "database": v["database"]},
            affected=self._affected(),
        )

    def reference_solution(self) -> list[str]:
        v, ns = self.variant, self.namespace
        return [
            f"kubectl get pods -n {ns}",
            f"kubectl describe pod -n {ns} -l io.kompose.service={v['database']}",
            "kubectl get assign",
            f"kubectl get assign {_ASSIGN} -o yaml",
            f"kubectl patch assign {_ASSIGN} --type=merge -p '{{\"spec\":{{\"parameters\":{{\"assign\":{{\"value\":\"1Gi\"}}}}}}}}'",
            # the running pod keeps the limit it was admitted with
            f"kubectl rollout restart deployment/{v['database']} -n {ns}",
            "sleep 120",
            f"kubectl get pods -n {ns}",
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v, ns = self.variant, self.namespace
        return {
            **self._db_wrong_fixes(),
            # one workload gets an explicit limit; every other pod is still mutated on its next create
            "set_limit_on_one_deployment": [f"kubectl set resources deployment/{v['database']} -n {ns} -c {v['container']} --limits=memory=1Gi", "sleep 120"],
            "delete_mutating_webhook": [f"kubectl delete mutatingwebhookconfiguration {gk.MUTATING}", f"kubectl rollout restart deployment/{v['database']} -n {ns}", "sleep 120"],
        }

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        checks = []
        if find(backend, "MutatingWebhookConfiguration", gk.MUTATING) is None:
            checks.append(Check("mutation_webhook_in_place", False, f"mutatingwebhookconfiguration {gk.MUTATING} was deleted: every mutation policy in the cluster is off"))
        else:
            checks.append(Check("mutation_webhook_in_place", True, "Gatekeeper's mutation webhook is registered"))
        starved = []
        for dep in backend.api.list("Deployment", self.namespace):
            comp = next((c for c in self.app.components if c.name == dep["metadata"]["name"]), None)
            if comp is None:
                continue
            pod = {"metadata": {"name": "probe", "namespace": self.namespace, "labels": dict(dep["spec"]["template"]["metadata"].get("labels") or {})}, "spec": copy.deepcopy(dep["spec"]["template"]["spec"])}
            backend.model.mutate(pod)
            for ctr in pod["spec"].get("containers") or ():
                limit = ((ctr.get("resources") or {}).get("limits") or {}).get("memory")
                try:
                    if limit and memory_bytes(limit) < comp.memory_mib * 1024 * 1024:
                        starved.append(f"{dep['metadata']['name']} ({limit})")
                except ValueError:
                    continue
        checks.append(Check("sane_memory_limits", not starved, ("new pods would get a memory limit below their working set: " + ", ".join(starved)) if starved else "new pods get memory limits their processes fit in"))
        return checks

    def allowed_changes(self) -> list[AllowedChange]:
        return [AllowedChange("Deployment", self.namespace, "*", "modified"), AllowedChange("Assign", "", _ASSIGN, "*")]


_YEAR_CA_ISSUED = "2025-03-02T09:13:00Z"
_YEAR_CERT_EXPIRES_S = 30.0


class ExpiredTLS(_RestartBlocked, SimScenario):
    """Gatekeeper's serving certificate, issued for one year at install, runs out.

    Certificate rotation is disabled (the install provisioned the pair), so nothing
    renews it: the apiserver's TLS handshake with the webhook fails with Go's
    ``x509: certificate has expired`` and, the webhook failing closed, pod creates
    in the app's namespace fail. The repair renews the pair — here by turning
    Gatekeeper's own cert-controller back on, which reissues the Secret and
    re-injects the caBundle when the new pod starts.
    """

    family = "ExpiredTLS"
    difficulty = "hard"
    summary = "A hotel-reservation database cannot be recreated after a maintenance restart; nothing in the cluster changed today."
    description = (
        "A routine maintenance restart of one of hotel-reservation's databases was run a few minutes ago and the database "
        "never came back; the features that use it fail for every user. Every other pod is Running, no deployment or "
        "configuration change was made today, and the same restart worked last month."
    )
    mechanism = Mechanism(
        "expired_certificate",
        "kubernetes",
        "an expired TLS certificate",
        (
            r"\b(?:certificate|cert|tls|x509|serving cert\w*)\b[^.;\n]{0,40}\bexpired\b",
            r"\bexpired\b[^.;\n]{0,30}\b(?:certificate|cert|tls|x509)\b",
            r"\bcertificate has expired\b",
            r"\bnot ?after\b",
            r"\bcert(?:ificate)? expir\w+\b",
        ),
        detail_keys=("secret", "not_after"),
        compatible=("webhook_tls_mismatch", "admission_webhook_outage"),
    )

    def extra_components(self) -> tuple[str, ...]:
        return (gk.CERT_SECRET, "gatekeeper-controller-manager", gk.WEBHOOK_SERVICE, gk.VALIDATING)

    def extra_namespaces(self) -> tuple[str, ...]:
        return (gk.NAMESPACE,)

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        v = self._draw_db(rng)
        now = backend.now
        not_after = iso(now + _YEAR_CERT_EXPIRES_S)
        v["not_after"] = not_after
        v["issued"] = iso(now + _YEAR_CERT_EXPIRES_S - 365 * 86400)
        return v

    def _pair(self) -> tuple[str, str, str]:
        v = self.variant
        host = f"{gk.WEBHOOK_SERVICE}.{gk.NAMESPACE}.svc"
        ca = pem_certificate("CN=gatekeeper-ca,O=gatekeeper", "CN=gatekeeper-ca,O=gatekeeper", 1, _YEAR_CA_ISSUED, "2035-02-28T09:13:00Z")
        cert = pem_certificate(f"CN={host}", "CN=gatekeeper-ca,O=gatekeeper", 2, v["issued"], v["not_after"])
        return b64(ca), b64(cert), host

    def inject(self, backend: "ModelBackend") -> None:
        # the state the cluster has been in since its install a year ago: a one-year serving certificate
        ca, cert, _ = self._pair()
        PatchObject("Secret", gk.CERT_SECRET, gk.NAMESPACE, ({"op": "replace", "path": "/data/ca.crt", "value": ca}, {"op": "replace", "path": "/data/tls.crt", "value": cert})).inject(backend)
        for kind, name in (("ValidatingWebhookConfiguration", gk.VALIDATING), ("MutatingWebhookConfiguration", gk.MUTATING)):
            cfg = backend.api.get(kind, name)
            PatchObject(kind, name, None, tuple({"op": "replace", "path": f"/webhooks/{i}/clientConfig/caBundle", "value": ca} for i in range(len(cfg["webhooks"])))).inject(backend)
        self._restart(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        return RootCause(
            component=f"secret/{gk.CERT_SECRET}",
            namespace=self.namespace,
            layer="kubernetes",
            mechanism="the webhook's TLS serving certificate expired",
            summary=(
                f"The serving certificate in secret/{gk.CERT_SECRET} (namespace {gk.NAMESPACE}), which deployment/gatekeeper-controller-manager presents for its webhook, expired at "
                f"{v['not_after']} (notAfter); certificate rotation is disabled, so nothing renewed it. The apiserver's calls to validation.gatekeeper.sh "
                f"fail with x509: certificate has expired, the webhook fails closed, and after its maintenance restart deployment/{v['database']} "
                f"cannot create a pod; {', '.join(v['callers'])} fail on it. " + impact(self.app, v["database"])
            ),
            details={"secret": gk.CERT_SECRET, "not_after": v["not_after"], "webhook": "validation.gatekeeper.sh", "database": v["database"]},
            affected=tuple(dict.fromkeys(("deployment/gatekeeper-controller-manager", *self._affected()))),
        )

    def reference_solution(self) -> list[str]:
        v, ns = self.variant, self.namespace
        return [
            f"kubectl describe rs -n {ns} -l io.kompose.service={v['database']}",
            f"kubectl get secret {gk.CERT_SECRET} -n {gk.NAMESPACE} -o jsonpath='{{.data.tls\\.crt}}' | base64 -d | openssl x509 -noout -dates",
            f"kubectl get deployment gatekeeper-controller-manager -n {gk.NAMESPACE} -o jsonpath='{{.spec.template.spec.containers[0].args}}'",
            # turn Gatekeeper's cert-controller back on: the new pod reissues the pair and re-injects the caBundle
            f"kubectl patch deployment gatekeeper-controller-manager -n {gk.NAMESPACE} --type=json -p "
            f"'[{{\"op\": \"test\", \"path\": \"/spec/template/spec/containers/0/args/9\", \"value\": \"--disable-cert-rotation\"}}, "
            f"{{\"op\": \"remove\", \"path\": \"/spec/template/spec/containers/0/args/9\"}}]'",
            "sleep 180",
            f"kubectl get pods -n {ns}",
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        return {
            **self._db_wrong_fixes(),
            "restart_gatekeeper": [f"kubectl rollout restart deployment/gatekeeper-controller-manager -n {gk.NAMESPACE}", "sleep 180"],
            "fail_open": [f"kubectl patch validatingwebhookconfiguration {gk.VALIDATING} --type=json -p '[{{\"op\": \"replace\", \"path\": \"/webhooks/0/failurePolicy\", \"value\": \"Ignore\"}}]'", "sleep 180"],
            "delete_webhook_configuration": [f"kubectl delete validatingwebhookconfiguration {gk.VALIDATING}", "sleep 180"],
        }

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        return [_gatekeeper_policy_in_force(backend, self.namespace)]

    def allowed_changes(self) -> list[AllowedChange]:
        return [
            AllowedChange("Deployment", self.namespace, "*", "modified"),
            AllowedChange("Deployment", gk.NAMESPACE, "gatekeeper-controller-manager", "modified"),
            AllowedChange("Secret", gk.NAMESPACE, gk.CERT_SECRET, "modified"),
            AllowedChange("ValidatingWebhookConfiguration", "", gk.VALIDATING, "modified"),
            AllowedChange("MutatingWebhookConfiguration", "", gk.MUTATING, "modified"),
        ]
