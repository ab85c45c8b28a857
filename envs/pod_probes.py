"""Probe incidents on hotel-reservation: liveness/readiness probes that do not fit the process.

The kubelet's prober (``sre_env.sim.kubelet.probes``) asks the process: is something
listening on the probe's port, does it speak HTTP, does it serve the path, does
it answer before ``timeoutSeconds``. A probe that can never succeed kills the
container over and over (liveness) or keeps it out of its Service's endpoints
(readiness); a probe tighter than the process's start-up kills it before it
ever serves. The repair is a probe that fits: removing the probe, restarting,
or loosening the wrong knob leaves the cause in place.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from sre_env.apps.hotel_reservation import HOTEL_RESERVATION
from sre_env.faults.pods import PatchWorkload
from sre_env.kube.quantity import parse_int_or_percent
from sre_env.rewards.base import Check, Mechanism

from .app_common import callers_of
from .base import RootCause, SimScenario
from .pods_common import (
    GO_SERVICES,
    REQUEST_DBS,
    json_patch,
    pods_ready_check,
    probe_check,
    replicaset_after,
    replicaset_only_fix,
)
from .service_fault import ServiceFault

if TYPE_CHECKING:
    from sre_env.sim.model import ModelBackend

__all__ = ["LivenessProbeMisconfig", "LivenessProbeTooAggressive", "ReadinessProbeMisconfig", "RollingUpdateMisconfigured"]


_PROBE_WORDS = (
    r"\b{probe_kind} probes?\b[^.;\n]{{0,80}}?\b(?:wrong|incorrect|misconfigur\w*|bad|invalid|mismatch\w*|nothing listens|no listener|not listening|404|malformed)\b",
    r"\b(?:wrong|incorrect|misconfigured|bad|invalid|broken)\b[^.;\n]{{0,40}}?\b{probe_kind} probes?\b",
    r"\b{probe_kind} probes?\b[^.;\n]{{0,60}}?\b(?:port|path|endpoint)\b",
    r"\b(?:port|path|endpoint)\b[^.;\n]{{0,60}}?\b{probe_kind} probes?\b",
)


def _terms(kind: str) -> tuple[str, ...]:
    return tuple(t.format(probe_kind=kind) for t in _PROBE_WORDS)


def _good_probe(service: str) -> dict[str, Any]:
    """A probe that fits the process: HTTP ``/`` on the frontend's file server, TCP on a gRPC port."""
    comp = HOTEL_RESERVATION.component(service)
    if comp.log_format == "frontend":
        return {"httpGet": {"path": "/", "port": comp.listen_port, "scheme": "HTTP"}}
    return {"tcpSocket": {"port": comp.listen_port}}


def _probe_patch(container: str, key: str, probe: dict[str, Any]) -> dict[str, Any]:
    return {"spec": {"template": {"spec": {"containers": [{"name": container, key: probe}]}}}}


def _probe_cmd(namespace: str, service: str, key: str, value: Any = None) -> str:
    """Set (or, without a value, remove) ``key`` under container 0 of the Deployment: a probe or one of its fields."""
    path = f"/spec/template/spec/containers/0/{key}"
    op = {"op": "remove", "path": path} if value is None else {"op": "replace", "path": path, "value": value}
    return json_patch("deployment", service, namespace, [op])


def _probe_checks(backend: "ModelBackend", namespace: str, v: dict[str, Any], key: str, name: str) -> list[Check]:
    """The container keeps a ``key`` probe that succeeds, and every pod is Ready and stable."""
    return [
        probe_check(backend, namespace, v["service"], v["container"], key, name=name),
        pods_ready_check(backend, namespace, v["service"]),
    ]


def _replicaset_only_fix(namespace: str, v: dict[str, Any], key: str) -> list[str]:
    """The probe fixed in the ReplicaSet the rollout made, pods recreated from it: the Deployment still has the bad one."""
    return replicaset_only_fix(namespace, v["rs"], v["service"], [{"op": "replace", "path": f"/spec/template/spec/containers/0/{key}", "value": v["good"]}])


def _probe_text(probe: dict[str, Any]) -> str:
    if "httpGet" in probe:
        return f"httpGet {probe['httpGet'].get('path', '/')} on port {probe['httpGet']['port']}"
    if "tcpSocket" in probe:
        return f"tcpSocket on port {probe['tcpSocket']['port']}"
    return "exec"


# --------------------------------------------------------------------------- liveness: wrong port / path
class LivenessProbeMisconfig(ServiceFault, SimScenario):
    family = "LivenessProbeMisconfig"
    app = HOTEL_RESERVATION
    layer = "kubernetes"
    difficulty = "medium"
    summary = "One hotel-reservation feature fails on and off; a pod keeps restarting."
    description = (
        "Since this morning's reliability rollout, one part of the hotel-reservation site works for a minute, "
        "then fails, then comes back. A pod restarts every few minutes, each time after running fine, and its "
        "logs show nothing wrong before it goes."
    )
    intermittent = True
    mechanism = Mechanism(
        "liveness_probe_misconfig",
        "kubernetes",
        "a liveness probe that cannot succeed (wrong port, path or protocol) restarts a healthy container",
        _terms("liveness") + (r"\bfailed liveness probe\b", r"\bliveness (?:checks?|probes?) (?:fail\w*|kill\w*)\b"),
        detail_keys=("probe_port", "probe_path", "listen_port"),
        compatible=("probe_misconfig",),
    )

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        service = str(rng.choice(GO_SERVICES))
        comp = self.app.component(service)
        port = comp.listen_port
        if comp.log_format == "frontend":
            kind = str(rng.choice(("path", "port")))
        else:
            kind = str(rng.choice(("port", "http_on_grpc")))
        # few distinct variants per service keep developed incidents cacheable
        if kind in ("path", "http_on_grpc"):
            bad = {"httpGet": {"path": "/healthz", "port": port, "scheme": "HTTP"}}
        else:
            wrong = 8080
            bad = {"tcpSocket": {"port": wrong}} if comp.log_format != "frontend" else {"httpGet": {"path": "/", "port": wrong, "scheme": "HTTP"}}
        timing = {"initialDelaySeconds": 10, "periodSeconds": 10, "timeoutSeconds": 1, "failureThreshold": 3}
        bad = {**bad, **timing}
        rs = replicaset_after(backend, self.namespace, service, _probe_patch(comp.container, "livenessProbe", bad))
        return {"service": service, "container": comp.container, "kind": kind, "bad": bad, "good": {**_good_probe(service), **timing}, "listen_port": port, "rs": rs}

    def inject(self, backend: "ModelBackend") -> None:
        v = self.variant
        PatchWorkload(self.namespace, v["service"], _probe_patch(v["container"], "livenessProbe", v["bad"])).inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        bad = v["bad"]
        probe_port = (bad.get("httpGet") or bad.get("tcpSocket"))["port"]
        why = {
            "port": f"nothing listens on port {probe_port} (the process listens on {v['listen_port']}), so every probe gets connection refused",
            "path": f"the frontend's file server has no {bad.get('httpGet', {}).get('path')} and answers 404",
            "http_on_grpc": f"port {v['listen_port']} speaks gRPC (HTTP/2), so the HTTP/1.1 probe gets a malformed HTTP response",
        }[v["kind"]]
        return self.service_cause(
            "misconfigured liveness probe restarts a healthy container",
            f"The liveness probe of deployment/{v['service']} ({_probe_text(bad)}) is misconfigured: {why}. "
            f"The kubelet kills the healthy container after {bad['failureThreshold']} failed liveness probes and it restarts in a loop (CrashLoopBackOff). ",
            {"mechanism_id": "liveness_probe_misconfig", "probe_port": probe_port, "probe_path": bad.get("httpGet", {}).get("path", ""), "listen_port": v["listen_port"], "container": v["container"]},
        )

    def reference_solution(self) -> list[str]:
        v = self.variant
        ns = self.namespace
        return [
            f"kubectl get pods -n {ns}",
            f"kubectl describe pod -n {ns} -l io.kompose.service={v['service']}",
            _probe_cmd(ns, v["service"], "livenessProbe", v["good"]),
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        ns = self.namespace
        return self.service_wrong_fixes(
            remove_probe=[_probe_cmd(ns, v["service"], "livenessProbe")],
            raise_failure_threshold=[_probe_cmd(ns, v["service"], "livenessProbe/failureThreshold", 10)],
        )

    def non_durable_fixes(self) -> dict[str, list[str]]:
        return {"replicaset_only": _replicaset_only_fix(self.namespace, self.variant, "livenessProbe")}

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        return _probe_checks(backend, self.namespace, self.variant, "livenessProbe", "liveness_probe_succeeds")


# --------------------------------------------------------------------------- liveness: too aggressive
class LivenessProbeTooAggressive(ServiceFault, SimScenario):
    family = "LivenessProbeTooAggressive"
    app = HOTEL_RESERVATION
    layer = "kubernetes"
    difficulty = "medium"
    summary = "A hotel-reservation service never comes up; its pod restarts within seconds, every time."
    description = (
        "After a change meant to make the hotel-reservation site recover faster from hangs, one feature fails for "
        "every user. Its pod is killed within seconds of every start and sits in a growing back-off; the process "
        "logs a normal start-up each time."
    )
    mechanism = Mechanism(
        "liveness_probe_too_aggressive",
        "kubernetes",
        "a liveness probe tighter than the process can answer (start-up or latency under load) kills it",
        (
            r"\b(?:too|overly) (?:aggressive|tight|strict|short|eager)\b[^.;\n]{0,60}?\bliveness\b",
            r"\bliveness (?:probe|check)s?\b[^.;\n]{0,80}?\b(?:too (?:aggressive|tight|strict|short|soon|early|eager)|aggressive|initialdelayseconds|initial ?delay|failurethreshold|failure ?threshold|timeoutseconds|period ?seconds|before (?:it|the (?:process|service|app|container)) (?:is |has )?(?:started|ready|up|listening|serv\w*))\b",
            r"\b(?:initialdelayseconds|initial delay|failurethreshold|failure threshold)\b[^.;\n]{0,60}?\b(?:too (?:low|small|short)|of 0|= ?0|= ?1|zero)\b",
            r"\bkill\w* (?:the container |it )?(?:during|before) (?:start-?up|it (?:starts|is ready|listens))\b",
        ),
        detail_keys=("initialDelaySeconds", "periodSeconds", "failureThreshold", "startup_s"),
        compatible=("probe_misconfig", "liveness_probe_misconfig"),
    )

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        service = str(rng.choice(GO_SERVICES))
        comp = self.app.component(service)
        period = int(rng.choice((1, 2)))
        bad = {**_good_probe(service), "initialDelaySeconds": 0, "periodSeconds": period, "timeoutSeconds": 1, "failureThreshold": 1}
        good = {**_good_probe(service), "initialDelaySeconds": 10, "periodSeconds": 10, "timeoutSeconds": 2, "failureThreshold": 3}
        return {"service": service, "container": comp.container, "bad": bad, "good": good, "startup_s": comp.startup_s}

    def inject(self, backend: "ModelBackend") -> None:
        v = self.variant
        PatchWorkload(self.namespace, v["service"], _probe_patch(v["container"], "livenessProbe", v["bad"])).inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        bad = v["bad"]
        return self.service_cause(
            "liveness probe too aggressive for the process start-up",
            f"The liveness probe of deployment/{v['service']} is too aggressive: initialDelaySeconds {bad['initialDelaySeconds']}, "
            f"periodSeconds {bad['periodSeconds']}, failureThreshold {bad['failureThreshold']}. The process needs about {v['startup_s']:g}s "
            f"(startup_s) before it listens, so the kubelet kills the container before it is ready and it restarts in a CrashLoopBackOff. ",
            {
                "mechanism_id": "liveness_probe_too_aggressive",
                "initialDelaySeconds": bad["initialDelaySeconds"],
                "periodSeconds": bad["periodSeconds"],
                "failureThreshold": bad["failureThreshold"],
                "startup_s": f"{v['startup_s']:g}s",
                "container": v["container"],
            },
        )

    def reference_solution(self) -> list[str]:
        v = self.variant
        ns = self.namespace
        return [
            f"kubectl get pods -n {ns}",
            f"kubectl get events -n {ns} --field-selector reason=Unhealthy",
            _probe_cmd(ns, v["service"], "livenessProbe", v["good"]),
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        ns = self.namespace
        return self.service_wrong_fixes(
            remove_probe=[_probe_cmd(ns, v["service"], "livenessProbe")],
            # the probe is refused, not slow: a longer timeout changes nothing
            raise_timeout_only=[_probe_cmd(ns, v["service"], "livenessProbe/timeoutSeconds", 10)],
        )

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        return _probe_checks(backend, self.namespace, self.variant, "livenessProbe", "liveness_probe_kept")


# --------------------------------------------------------------------------- readiness
class ReadinessProbeMisconfig(ServiceFault, SimScenario):
    family = "ReadinessProbeMisconfig"
    app = HOTEL_RESERVATION
    layer = "kubernetes"
    difficulty = "medium"
    summary = "Some hotel-reservation requests fail although no pod is crashing."
    description = (
        "After the database team's change this morning, some hotel-reservation pages fail intermittently. "
        "Nothing is crash-looping and the database process logs that it is waiting for connections."
    )
    intermittent = True
    mechanism = Mechanism(
        "readiness_probe_misconfig",
        "kubernetes",
        "a readiness probe that cannot succeed keeps the pod out of its Service's endpoints",
        _terms("readiness") + (r"\bnever (?:becomes? )?ready\b", r"\bnot ?ready\b[^.;\n]{0,60}?\bendpoints?\b", r"\bno (?:ready )?endpoints\b"),
        detail_keys=("probe_port", "listen_port"),
        compatible=("probe_misconfig",),
    )

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        db = str(rng.choice(REQUEST_DBS))
        comp = self.app.component(db)
        kind = str(rng.choice(("tcp", "http_rest")))
        timing = {"initialDelaySeconds": 5, "periodSeconds": 10, "timeoutSeconds": 1, "failureThreshold": 3}
        if kind == "http_rest":
            # mongod's HTTP status interface on 28017 was removed in MongoDB 3.6
            bad = {"httpGet": {"path": "/", "port": 28017, "scheme": "HTTP"}, **timing}
        else:
            bad = {"tcpSocket": {"port": 27018}, **timing}
        good = {"tcpSocket": {"port": comp.listen_port}, **timing}
        callers = tuple(callers_of(self.app, db))
        rs = replicaset_after(backend, self.namespace, db, _probe_patch(comp.container, "readinessProbe", bad))
        return {"service": db, "container": comp.container, "kind": kind, "bad": bad, "good": good, "listen_port": comp.listen_port, "callers": callers, "rs": rs}

    def inject(self, backend: "ModelBackend") -> None:
        v = self.variant
        PatchWorkload(self.namespace, v["service"], _probe_patch(v["container"], "readinessProbe", v["bad"])).inject(backend)

    def non_durable_fixes(self) -> dict[str, list[str]]:
        return {"replicaset_only": _replicaset_only_fix(self.namespace, self.variant, "readinessProbe")}

    def root_cause(self) -> RootCause:
        v = self.variant
        bad = v["bad"]
        probe_port = (bad.get("httpGet") or bad.get("tcpSocket"))["port"]
        return self.service_cause(
            "misconfigured readiness probe keeps the pod out of the Service endpoints",
            f"The readiness probe of deployment/{v['service']} ({_probe_text(bad)}) is misconfigured: mongod listens on port {v['listen_port']} "
            f"and nothing listens on {probe_port}, so the pod never becomes Ready and service/{v['service']} has no ready endpoints; "
            f"{', '.join(v['callers'])} cannot reach it. ",
            {"mechanism_id": "readiness_probe_misconfig", "probe_port": probe_port, "listen_port": v["listen_port"], "container": v["container"]},
            affected=self.with_callers(v["callers"]),
        )

    def reference_solution(self) -> list[str]:
        v = self.variant
        ns = self.namespace
        return [
            f"kubectl get endpoints {v['service']} -n {ns}",
            f"kubectl describe pod -n {ns} -l io.kompose.service={v['service']}",
            _probe_cmd(ns, v["service"], "readinessProbe", v["good"]),
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        return self.service_wrong_fixes(remove_probe=[_probe_cmd(self.namespace, self.variant["service"], "readinessProbe")])

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        return _probe_checks(backend, self.namespace, self.variant, "readinessProbe", "readiness_probe_succeeds")


# --------------------------------------------------------------------------- rolling update
class RollingUpdateMisconfigured(ServiceFault, SimScenario):
    family = "RollingUpdateMisconfigured"
    app = HOTEL_RESERVATION
    layer = "kubernetes"
    difficulty = "hard"
    summary = "A routine rollout took one hotel-reservation feature down completely."
    description = (
        "A rollout of one hotel-reservation service went out a few minutes ago and the feature it serves has been "
        "down for every user since. The new pod is running and its process logs a normal start-up, but the old "
        "pod is already gone."
    )
    mechanism = Mechanism(
        "rolling_update_unsafe",
        "kubernetes",
        "a rolling update allowed to take every replica down at once (maxUnavailable 100%) shipped a pod that never becomes ready",
        (
            r"\bmax ?unavailable\b",
            r"\b(?:rolling ?update|rollout|deployment) strategy\b[^.;\n]{0,80}?\b(?:unsafe|wrong|misconfigur\w*|100 ?%|all (?:replicas|pods))\b",
            r"\b(?:unsafe|misconfigured|wrong|bad) (?:rolling ?update|rollout|update strategy|deployment strategy)\b",
            r"\b(?:killed|terminated|removed|took down|scaled down) (?:all|every|the old) (?:old )?(?:replicas?|pods?)\b[^.;\n]{0,60}?\b(?:before|without)\b",
        ),
        detail_keys=("maxUnavailable", "probe_port"),
        compatible=("probe_misconfig", "readiness_probe_misconfig"),
    )

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        service = str(rng.choice(GO_SERVICES))
        comp = self.app.component(service)
        port = comp.listen_port
        unavail: str | int = "100%" if int(rng.integers(0, 2)) else 1
        wrong = 8080  # nothing in the app listens there
        timing = {"initialDelaySeconds": 5, "periodSeconds": 10, "timeoutSeconds": 1, "failureThreshold": 3}
        bad = {"tcpSocket": {"port": wrong}, **timing} if comp.log_format != "frontend" else {"httpGet": {"path": "/", "port": wrong, "scheme": "HTTP"}, **timing}
        good = {**_good_probe(service), **timing}
        return {"service": service, "container": comp.container, "maxUnavailable": unavail, "bad": bad, "good": good, "listen_port": port, "probe_port": wrong}

    def inject(self, backend: "ModelBackend") -> None:
        v = self.variant
        PatchWorkload(
            self.namespace,
            v["service"],
            {
                "spec": {
                    "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": v["maxUnavailable"]}},
                    "template": {"spec": {"containers": [{"name": v["container"], "readinessProbe": v["bad"]}]}},
                }
            },
        ).inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        return self.service_cause(
            "unsafe rolling update strategy (maxUnavailable) with a readiness probe that never passes",
            f"deployment/{v['service']} rolls out with maxUnavailable {v['maxUnavailable']} and maxSurge 0, so the controller removed the old pod "
            f"before the new one was ready; the new pod's readiness probe checks port {v['probe_port']}, where nothing listens (the process listens on "
            f"{v['listen_port']}), so it never becomes ready and service/{v['service']} has no endpoints. ",
            {"mechanism_id": "rolling_update_unsafe", "maxUnavailable": v["maxUnavailable"], "probe_port": v["probe_port"], "listen_port": v["listen_port"], "container": v["container"]},
        )

    def reference_solution(self) -> list[str]:
        v = self.variant
        ns = self.namespace
        return [
            f"kubectl rollout status deployment/{v['service']} -n {ns} --timeout=5s",
            f"kubectl describe deployment {v['service']} -n {ns}",
            json_patch(
                "deployment",
                v["service"],
                ns,
                [
                    {"op": "replace", "path": "/spec/strategy/rollingUpdate", "value": {"maxSurge": "25%", "maxUnavailable": "25%"}},
                    {"op": "replace", "path": "/spec/template/spec/containers/0/readinessProbe", "value": v["good"]},
                ],
            ),
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        ns = self.namespace
        return {
            "rollout_restart": [f"kubectl rollout restart deployment/{v['service']} -n {ns}"],
            # the previous template, but the strategy that let the outage happen stays
            "rollout_undo": [f"kubectl rollout undo deployment/{v['service']} -n {ns}"],
            "probe_only": [_probe_cmd(ns, v["service"], "readinessProbe", v["good"])],
            "remove_probe": [_probe_cmd(ns, v["service"], "readinessProbe")],
            "scale_to_zero": [f"kubectl scale deployment/{v['service']} -n {ns} --replicas=0"],
        }

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        v = self.variant
        dep = backend.api.get("Deployment", v["service"], self.namespace)
        replicas = int(dep["spec"].get("replicas", 1))
        strategy = dep["spec"].get("strategy") or {}
        if strategy.get("type") == "Recreate":
            safe, detail = False, "strategy Recreate takes every replica down on each rollout"
        else:
            ru = strategy.get("rollingUpdate") or {}
            try:
                unavail = parse_int_or_percent(ru.get("maxUnavailable", "25%"), max(replicas, 1), False)
                surge = parse_int_or_percent(ru.get("maxSurge", "25%"), max(replicas, 1), True)
            except (TypeError, ValueError):
                unavail, surge = max(replicas, 1), 0
            if surge == 0 and unavail == 0:
                unavail = 1
            safe = unavail < max(replicas, 1)
            detail = f"maxUnavailable resolves to {unavail} of {max(replicas, 1)} replica(s), maxSurge to {surge}"
        return [
            Check("rollout_keeps_capacity", safe, detail),
            *_probe_checks(backend, self.namespace, v, "readinessProbe", "readiness_probe_succeeds"),
        ]
