"""Incidents inside one pod on hotel-reservation: a hung init container, two processes on one port.

An init container that waits for something absent keeps the pod in
``Init:0/1`` for ever; the repair is to bring back what it waits for. Two
containers of a pod share its network namespace, so two processes configured
for one port cannot both listen: the one that binds second exits with
``bind: address already in use`` and crash-loops, and the pod never becomes
ready. The repair gives them distinct ports; deleting the container that
fails, restarting, or scaling away leaves the cause in place.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from sre_env.apps.hotel_reservation import HOTEL_RESERVATION
from sre_env.faults.pods import DeleteObject, PatchWorkload
from sre_env.rewards.base import AllowedChange, Check, Mechanism

from .app_common import callers_of
from .base import RootCause, SimScenario
from .briefs import impact, user_report
from .pods_common import (
    GO_SERVICES,
    REQUEST_DBS,
    json_patch,
    live_pods,
    pods_ready_check,
)
from .service_fault import ServiceFault

if TYPE_CHECKING:
    from sre_env.sim.model import ModelBackend

__all__ = ["InitContainerHang", "SidecarPortConflict", "ServicePortConflict"]

#: Go services whose database sits on a request path, and that database
_DB_OF = {"rate": "mongodb-rate", "profile": "mongodb-profile", "reservation": "mongodb-reservation"}
_BIND = r"\b(?:address already in use|eaddrinuse|bind(?:ing)?\b[^.;\n]{0,30}?\bfail\w*|fail\w* to (?:bind|listen))\b"
#: how people describe two processes of one pod wanting one port, whichever containers they are
_PORT_CONFLICT = (_BIND, r"\bport (?:conflict|collision|clash)\b", r"\b(?:same|one) port\b")


def _service_yaml(svc: dict[str, Any]) -> str:
    """The Service as an operator would re-apply it from the app's manifests."""
    meta = svc["metadata"]
    spec = svc["spec"]
    lines = ["apiVersion: v1", "kind: Service", "metadata:", f"  name: {meta['name']}", f"  namespace: {meta['namespace']}", "  labels:"]
    lines += [f"    {k}: {v}" for k, v in sorted((meta.get("labels") or {}).items())]
    lines += ["spec:", f"  type: {spec.get('type', 'ClusterIP')}", "  selector:"]
    lines += [f"    {k}: {v}" for k, v in sorted((spec.get("selector") or {}).items())]
    lines.append("  ports:")
    for p in spec.get("ports") or ():
        lines.append(f"  - name: {p['name']}" if p.get("name") else "  -")
        lines += [f"    port: {p['port']}", f"    targetPort: {p.get('targetPort', p['port'])}", f"    protocol: {p.get('protocol', 'TCP')}"]
    for key in ("sessionAffinity", "ipFamilyPolicy", "internalTrafficPolicy"):
        if spec.get(key):
            lines.append(f"  {key}: {spec[key]}")
    if spec.get("ipFamilies"):
        lines.append("  ipFamilies: [" + ", ".join(spec["ipFamilies"]) + "]")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- init container
class InitContainerHang(ServiceFault, SimScenario):
    family = "InitContainerHang"
    app = HOTEL_RESERVATION
    layer = "kubernetes"
    difficulty = "medium"
    summary = "A hotel-reservation rollout never finishes and some requests fail."
    description = (
        "A release of one hotel-reservation service has been rolling out for a while and its new pod never starts; "
        "meanwhile some pages fail intermittently. A namespace tidy-up ran earlier today."
    )
    mechanism = Mechanism(
        "init_container_waits",
        "kubernetes",
        "an init container waits for a dependency that does not exist, so the pod never initializes",
        (
            r"\binit[ -]?containers?\b[^.;\n]{0,100}?\b(?:wait\w*|hang\w*|hung|stuck|block\w*|loop\w*|never (?:completes?|finish\w*|exits?))\b",
            r"\b(?:wait\w*|hang\w*|hung|stuck|block\w*)\b[^.;\n]{0,60}?\binit[ -]?containers?\b",
            r"\b(?:stuck|hung|hangs?) (?:in )?(?:init|podinitializing)\b",
            r"\binit:0/1\b",
            r"\b{waits_for_service}\b[^.;\n]{0,60}?\b(?:deleted|missing|removed|gone|absent|does ?n[o']t exist|not found|no longer exists)\b",
        ),
        detail_keys=("waits_for", "init_container"),
    )

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        service = str(rng.choice(sorted(_DB_OF)))
        db = _DB_OF[service]
        port = self.app.component(db).listen_port
        svc = backend.api.get("Service", db, self.namespace)
        return {
            "service": service,
            "container": self.app.component(service).container,
            "db": db,
            "port": port,
            "init": "wait-for-mongodb",
            "script": f'until nc -z -w 2 {db} {port}; do echo "waiting for {db}:{port}"; sleep 2; done',
            "service_yaml": _service_yaml(svc),
        }

    def inject(self, backend: "ModelBackend") -> None:
        v = self.variant
        DeleteObject("Service", self.namespace, v["db"]).inject(backend)
        init = {"name": v["init"], "image": "busybox:1.36", "command": ["sh", "-c", v["script"]]}
        PatchWorkload(self.namespace, v["service"], {"spec": {"template": {"spec": {"initContainers": [init]}}}}).inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        return RootCause(
            component=f"service/{v['db']}",
            namespace=self.namespace,
            layer="kubernetes",
            mechanism="init container waits for a Service that was deleted",
            summary=(
                f"service/{v['db']} was deleted. The new pod of deployment/{v['service']} has an init container ({v['init']}) that waits "
                f"until {v['db']}:{v['port']} answers ('nc: bad address'), so it hangs in Init:0/1 and the rollout never completes; "
                f"the old {v['service']} pod cannot reach {v['db']} on cache misses either. " + impact(self.app, v["db"])
            ),
            details={"mechanism_id": "init_container_waits", "waits_for": f"{v['db']}:{v['port']}", "waits_for_service": v["db"], "init_container": v["init"]},
            affected=(f"service/{v['db']}", f"deployment/{v['service']}", f"deployment/{self.app.entrypoint}"),
        )

    def brief(self) -> str:
        return user_report(self.app, self.variant["db"], intermittent=True)

    def reference_solution(self) -> list[str]:
        v = self.variant
        ns = self.namespace
        return [
            f"kubectl get pods -n {ns}",
            f"kubectl logs -n {ns} -l io.kompose.service={v['service']} -c {v['init']} --tail=5",
            f"kubectl get svc {v['db']} -n {ns}",
            f"kubectl apply -f - <<'EOF'\n{v['service_yaml']}EOF",
            "sleep 30",
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        return self.service_wrong_fixes(remove_init_container=[json_patch("deployment", self.variant["service"], self.namespace, [{"op": "remove", "path": "/spec/template/spec/initContainers"}])])

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        v = self.variant
        route = backend.model.route(self.namespace, f"{v['db']}:{v['port']}")
        return [
            Check("dependency_present", route.ok >= 0.999, f"{v['db']}:{v['port']} reaches a listening pod in {route.ok:.0%} of connections" + (f" ({route.error})" if route.error else "")),
            pods_ready_check(backend, self.namespace, v["service"]),
        ]

    def allowed_changes(self) -> list[AllowedChange]:
        v = self.variant
        return [AllowedChange("Deployment", self.namespace, v["service"], "modified"), AllowedChange("Service", self.namespace, v["db"], "*")]


# --------------------------------------------------------------------------- ports
def _port_checks(backend: "ModelBackend", namespace: str, component: str, containers: tuple[str, ...], app_port: int) -> list[Check]:
    """Every named container runs, no two processes want one port, and the app's port is served by the app."""
    model = backend.model
    pods = live_pods(backend, namespace, component)
    bad = []
    for pod in pods:
        names = [c["name"] for c in pod["spec"].get("containers") or ()]
        missing = [c for c in containers if c not in names]
        if missing:
            bad.append(f"{pod['metadata']['name']} has no container {', '.join(missing)}")
            continue
        rt = model.runtime(pod["metadata"]["uid"])
        ports: dict[int, list[str]] = {}
        for ctr in (rt.containers.values() if rt else ()):
            if ctr.state == "running" and ctr.listen_port is not None:
                ports.setdefault(ctr.listen_port, []).append(ctr.name)
            elif ctr.name in containers:
                bad.append(f"{pod['metadata']['name']}/{ctr.name} is not running")
        for port, owners in sorted(ports.items()):
            if len(owners) > 1:
                bad.append(f"{pod['metadata']['name']}: {', '.join(owners)} all want port {port}")
        if not model.pod_listens(pod["metadata"]["uid"], app_port):
            bad.append(f"{pod['metadata']['name']}: nothing serves port {app_port}")
    if not pods:
        bad.append(f"no pod of {component} exists")
    return [Check("distinct_ports", not bad, "; ".join(bad) if bad else f"every container of {component} runs on its own port, {app_port} is served")]


class _PortConflict(ServiceFault, SimScenario):
    """Two processes of one pod want the service's port; ``second`` names the container that is not the app."""

    #: the variant key naming the second container
    second_key: ClassVar[str] = "second"

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        v = self.variant
        return _port_checks(backend, self.namespace, v["service"], (v["container"], v[self.second_key]), v["port"]) + [pods_ready_check(backend, self.namespace, v["service"])]


class SidecarPortConflict(_PortConflict):
    family = "SidecarPortConflict"
    app = HOTEL_RESERVATION
    layer = "kubernetes"
    difficulty = "medium"
    summary = "One hotel-reservation feature went down when a metrics change rolled out."
    description = (
        "The observability team rolled out metrics collection to a hotel-reservation service this morning; since then "
        "one feature fails for users. The pod shows one container restarting over and over; the metrics team insists "
        "their collector must stay."
    )
    second_key = "sidecar"
    mechanism = Mechanism(
        "sidecar_port_conflict",
        "kubernetes",
        "a sidecar configured to listen on the app container's port: two processes in one pod bind one port",
        (
            *_PORT_CONFLICT,
            r"\bsidecar\b[^.;\n]{0,80}?\b(?:port|listen\w*)\b",
            r"\b(?:port|listen\w*)\b[^.;\n]{0,80}?\bsidecar\b",
        ),
        detail_keys=("port", "sidecar"),
    )

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        service = str(rng.choice(GO_SERVICES))
        comp = self.app.component(service)
        return {"service": service, "container": comp.container, "port": comp.listen_port, "sidecar": "statsd-exporter", "image": "prom/statsd-exporter:v0.26.1", "sidecar_port": 9102}

    def _sidecar(self, port: int) -> dict[str, Any]:
        v = self.variant
        return {
            "name": v["sidecar"],
            "image": v["image"],
            "args": [f"--web.listen-address=:{port}", "--statsd.listen-udp=:9125"],
            "ports": [{"containerPort": 9102, "name": "metrics", "protocol": "TCP"}, {"containerPort": 9125, "name": "statsd-udp", "protocol": "UDP"}],
        }

    def inject(self, backend: "ModelBackend") -> None:
        v = self.variant
        PatchWorkload(self.namespace, v["service"], {"spec": {"template": {"spec": {"containers": [{"name": v["container"]}, self._sidecar(v["port"])]}}}}).inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        return self.service_cause(
            "sidecar and app container bind the same port",
            f"The {v['sidecar']} sidecar added to deployment/{v['service']} is configured with --web.listen-address=:{v['port']}, the port the "
            f"{v['service']} process serves on. Containers of a pod share one network namespace, so the process that binds port {v['port']} second "
            f"exits with 'bind: address already in use' and crash-loops; the pod never becomes ready and service/{v['service']} has no endpoints. "
            f"The sidecar belongs on its own port ({v['sidecar_port']}). ",
            {"mechanism_id": "sidecar_port_conflict", "port": v["port"], "sidecar": v["sidecar"], "sidecar_port": v["sidecar_port"], "container": v["container"]},
        )

    def reference_solution(self) -> list[str]:
        v = self.variant
        ns = self.namespace
        return [
            f"kubectl get pods -n {ns} -l io.kompose.service={v['service']}",
            f"kubectl logs -n {ns} deployment/{v['service']} --all-containers --tail=5",
            json_patch("deployment", v["service"], ns, [{"op": "replace", "path": "/spec/template/spec/containers/1/args", "value": [f"--web.listen-address=:{v['sidecar_port']}", "--statsd.listen-udp=:9125"]}]),
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        ns = self.namespace
        return self.service_wrong_fixes(
            remove_sidecar=[json_patch("deployment", v["service"], ns, [{"op": "remove", "path": "/spec/template/spec/containers/1"}])],
            # the declared containerPort is documentation: the process still binds what its flags say
            change_declared_port=[json_patch("deployment", v["service"], ns, [{"op": "replace", "path": "/spec/template/spec/containers/1/ports/0/containerPort", "value": 9103}])],
        )


class ServicePortConflict(_PortConflict):
    family = "ServicePortConflict"
    app = HOTEL_RESERVATION
    layer = "kubernetes"
    difficulty = "hard"
    summary = "Some hotel-reservation requests fail since a database change; the database pod is half ready."
    description = (
        "The database team changed one of hotel-reservation's MongoDB deployments this morning to prepare a replica "
        "set. Since then some pages fail intermittently; the database pod shows 1/2 containers ready and one of them "
        "keeps restarting."
    )
    intermittent = True
    mechanism = Mechanism(
        "service_port_conflict",
        "kubernetes",
        "two service containers in one pod configured for the same port",
        (
            *_PORT_CONFLICT,
            r"\b(?:two|both|second) (?:mongod|containers?|process(?:es)?|instances?)\b[^.;\n]{0,60}?\bport\b",
        ),
        detail_keys=("port", "second_container"),
    )

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        db = str(rng.choice(REQUEST_DBS))
        comp = self.app.component(db)
        callers = tuple(callers_of(self.app, db))
        return {"service": db, "container": comp.container, "port": comp.listen_port, "second": f"{db}-arbiter", "free_port": 27018, "image": comp.image, "callers": callers}

    def inject(self, backend: "ModelBackend") -> None:
        v = self.variant
        arbiter = {"name": v["second"], "image": v["image"], "command": ["mongod", "--replSet", "rs0", "--bind_ip_all"], "ports": [{"containerPort": v["port"], "protocol": "TCP"}]}
        PatchWorkload(self.namespace, v["service"], {"spec": {"template": {"spec": {"containers": [{"name": v["container"]}, arbiter]}}}}).inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        return self.service_cause(
            "two containers of one pod bind the same port",
            f"deployment/{v['service']} now runs a second mongod container ({v['second']}) with the default port {v['port']}, the port the main "
            f"mongod serves. Both processes share the pod's network namespace, so the second one fails with 'Address already in use' (exit 48) and "
            f"crash-loops; the pod never becomes Ready and service/{v['service']} has no endpoints, so {', '.join(v['callers'])} fail on it. "
            f"The second mongod needs its own port (--port {v['free_port']}). ",
            {"mechanism_id": "service_port_conflict", "port": v["port"], "second_container": v["second"], "container": v["container"]},
            affected=self.with_callers(v["callers"]),
        )

    def reference_solution(self) -> list[str]:
        v = self.variant
        ns = self.namespace
        return [
            f"kubectl get pods -n {ns} -l io.kompose.service={v['service']}",
            f"kubectl logs -n {ns} deployment/{v['service']} -c {v['second']} --previous --tail=5",
            json_patch(
                "deployment",
                v["service"],
                ns,
                [
                    {"op": "replace", "path": "/spec/template/spec/containers/1/command", "value": ["mongod", "--replSet", "rs0", "--bind_ip_all", "--port", str(v["free_port"])]},
                    {"op": "replace", "path": "/spec/template/spec/containers/1/ports/0/containerPort", "value": v["free_port"]},
                ],
            ),
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        ns = self.namespace
        return self.service_wrong_fixes(
            remove_failing_container=[json_patch("deployment", v["service"], ns, [{"op": "remove", "path": "/spec/template/spec/containers/1"}])],
            retarget_service=[json_patch("service", v["service"], ns, [{"op": "replace", "path": "/spec/ports/0/targetPort", "value": v["free_port"]}])],
        )
