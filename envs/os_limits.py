"""Per-process kernel limits set too low for the work: ephemeral ports and open files.

EphemeralPortExhaustion -- astronomy-shop's shipping service builds a new HTTP
client for every quote, so each call to the quote service is a new TCP
connection that leaves a socket in TIME_WAIT for 60 s. A hardening change gave
its pods a narrow ``net.ipv4.ip_local_port_range``: fewer ports than the
TIME_WAIT sockets its calls leave, so most connects fail with "cannot assign
requested address" and checkout fails. The evidence is inside the pod's
network namespace (``/proc/sys/net/ipv4/ip_local_port_range``,
``/proc/net/sockstat``, ``netstat -tan``), in the shipping logs and in the
Deployment's security context; the node's own sysctl is not the pod's.

FileDescriptorExhaustion -- hotel-reservation's frontend now starts through a
shell that runs ``ulimit -n`` before exec'ing the binary. Its clients' keep-alive
connections need more descriptors than that: ``accept()`` fails with EMFILE,
new connections wait in the backlog until clients give up. ``kubectl exec``
gets the runtime's default limit, so only ``/proc/1/limits`` (and the
frontend's "http: Accept error ... too many open files" lines) show it.

In both, restarting changes nothing (the limit is in the pod spec) and the
repair is to give the process the limit its work needs, in the Deployment.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import numpy as np

from sre_env.apps.astronomy_shop import ASTRONOMY_SHOP
from sre_env.apps.hotel_reservation import HOTEL_RESERVATION
from sre_env.faults.os_limits import ContainerUlimit, PodSysctl, ReportingDashboards
from sre_env.rewards.base import AllowedChange, Check, Mechanism
from sre_env.sim.runtime.oslimits import TIME_WAIT_S, nofile_limit, port_range
from sre_env.sim.runtime.pg_reports import (
    DEFAULTS,
    dsm_bytes,
    memory_limit,
    pg_settings,
    shm_bytes,
)

from .base import RootCause, SimScenario
from .blind import rollback_repairs
from .briefs import impact, user_report

if TYPE_CHECKING:
    from sre_env.backend import Backend
    from sre_env.sim.model import ModelBackend

__all__ = ["DevShmExhaustion", "EphemeralPortExhaustion", "FileDescriptorExhaustion"]

_PORT_RANGE = "net.ipv4.ip_local_port_range"


def _live_pods(backend: "Backend", namespace: str, selector: str) -> list[dict[str, Any]]:
    return [p for p in backend.api.list("Pod", namespace, selector) if not p["metadata"].get("deletionTimestamp")]


class EphemeralPortExhaustion(SimScenario):
    family = "EphemeralPortExhaustion"
    app = ASTRONOMY_SHOP
    layer = "os"
    difficulty = "hard"
    summary = "Most astronomy-shop checkouts fail; the rest of the shop works."
    description = (
        "Since this morning most orders in the astronomy shop fail at checkout with an error page, while browsing, "
        "the cart and ads work. Pods are Running and nothing restarts. A batch of pod-hardening changes from the "
        "security team was merged into several services' manifests last night."
    )
    accepted_blind = rollback_repairs("last night's hardening change that narrowed the local port range")
    mechanism = Mechanism(
        "ephemeral_port_exhaustion",
        "os",
        "the pod's ephemeral (local) port range is too narrow for the TIME_WAIT sockets its connections leave",
        (
            r"\bephemeral[- ](?:source )?ports?\b",
            r"\bip_local_port_range\b",
            r"\blocal port range\b",
            r"\b(?:source|local|client) ports?\b[^.;\n]{0,30}?\b(?:exhaust\w*|ran out|run out|used up)\b",
            r"\bport exhaustion\b",
            r"\btime[_ -]?wait\b",
            r"\bcannot assign requested address\b",
            r"\beaddrnotavail\b",
        ),
        detail_keys=("service", "range"),
        compatible=("network_fault", "resource_exhaustion"),
    )

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        caller, callee = "shipping", "quote"
        rate = backend.model.connection_rate(self.app, caller, callee)
        lo = int(rng.choice((50000, 60000, 61000)))
        ports = int(rng.choice((128, 192, 256)))
        return {
            "service": caller,
            "container": self.app.component(caller).container,
            "callee": callee,
            "range": f"{lo} {lo + ports - 1}",
            "ports": ports,
            "time_wait": int(rate * TIME_WAIT_S),
        }

    def split_key(self, variant: dict[str, Any]) -> str:
        # one client reconnects per call: generalise over the narrowed ranges
        return str(variant["range"])

    def inject(self, backend: "ModelBackend") -> None:
        v = self.variant
        PodSysctl(self.namespace, v["service"], _PORT_RANGE, v["range"]).inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        return RootCause(
            component=f"deployment/{v['service']}",
            namespace=self.namespace,
            layer="os",
            mechanism="ephemeral port exhaustion: net.ipv4.ip_local_port_range narrowed in the pod's security context",
            summary=(
                f"deployment/{v['service']} sets the pod sysctl {_PORT_RANGE} to \"{v['range']}\" (range {v['range']}), only {v['ports']} local ports. "
                f"The {v['service']} service opens a new connection to {v['callee']} for every quote and closes it, and each closed socket "
                f"stays in TIME_WAIT for 60 s: it needs ~{v['time_wait']} ephemeral ports, so the port range is exhausted and most connects "
                f"fail with EADDRNOTAVAIL (cannot assign requested address). " + impact(self.app, v["service"])
            ),
            details={"service": v["service"], "range": v["range"], "sysctl": _PORT_RANGE, "callee": v["callee"]},
            affected=(f"deployment/{v['service']}", "deployment/checkout", f"deployment/{self.app.entrypoint}"),
        )

    def brief(self) -> str:
        return user_report(self.app, self.variant["service"], intermittent=True)

    def _deploy(self) -> str:
        return f"deployment/{self.variant['service']}"

    def reference_solution(self) -> list[str]:
        ns, d = self.namespace, self._deploy()
        return [
            f"kubectl logs {d} -n {ns} --tail=5",
            f"kubectl exec {d} -n {ns} -- cat /proc/net/sockstat",
            f"kubectl exec {d} -n {ns} -- cat /proc/sys/net/ipv4/ip_local_port_range",
            f"kubectl get {d} -n {ns} -o jsonpath='{{.spec.template.spec.securityContext}}'",
            f"kubectl patch {d} -n {ns} --type=json -p '[{{\"op\":\"remove\",\"path\":\"/spec/template/spec/securityContext/sysctls\"}}]'",
            f"kubectl rollout status {d} -n {ns}",
            "sleep 30",
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v, ns, d = self.variant, self.namespace, self._deploy()
        sel = f"opentelemetry.io/name={v['service']}"
        node = "worker-1"
        both = [{"name": _PORT_RANGE, "value": v["range"]}, {"name": "net.ipv4.tcp_fin_timeout", "value": "10"}]
        return {
            "rollout_restart": [f"kubectl rollout restart {d} -n {ns}", "sleep 60"],
            "delete_pods": [f"kubectl delete pod -n {ns} -l {sel}", "sleep 60"],
            "scale_to_zero": [f"kubectl scale {d} -n {ns} --replicas=0"],
            # more pods, each with its own few ports: left above the baseline (and still short for narrow ranges)
            "scale_out": [f"kubectl scale {d} -n {ns} --replicas=3", "sleep 60"],
            # FIN_WAIT_2's timeout, not TIME_WAIT's: sockets still hold their ports for 60 s
            "shorter_fin_timeout": [
                f"kubectl patch {d} -n {ns} -p '{json.dumps({'spec': {'template': {'spec': {'securityContext': {'sysctls': both}}}}})}'",
                "sleep 60",
            ],
            # the node's namespace is not the pod's
            "widen_on_the_node": [f"ssh {node} sysctl -w {_PORT_RANGE}='1024 65535'", f"kubectl rollout restart {d} -n {ns}", "sleep 60"],
            "restart_callee": ["kubectl rollout restart deployment/quote -n " + ns, "sleep 60"],
        }

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        v = self.variant
        pods = _live_pods(backend, self.namespace, f"opentelemetry.io/name={v['service']}")
        need = backend.model.connection_rate(self.app, v["service"], v["callee"]) * TIME_WAIT_S / max(len(pods), 1)
        short = []
        for pod in pods:
            lo, hi = port_range(pod)
            if hi - lo + 1 < 4 * need:
                short.append(f"{pod['metadata']['name']}: {lo}-{hi}")
        ok = bool(pods) and not short
        return [Check("ephemeral_ports_suffice", ok, "; ".join(short) if short else f"every {v['service']} pod has at least 4x the ~{int(need)} ports its TIME_WAIT sockets hold")]

    def allowed_changes(self) -> list[AllowedChange]:
        return [AllowedChange("Deployment", self.namespace, self.variant["service"], "modified")]


class FileDescriptorExhaustion(SimScenario):
    family = "FileDescriptorExhaustion"
    app = HOTEL_RESERVATION
    layer = "os"
    difficulty = "medium"
    summary = "A share of hotel-reservation page loads hang and time out; the services behind look healthy."
    description = (
        "Since yesterday's release window a share of hotel-reservation page loads hang and time out, across every "
        "feature, while others are fast. All pods are Running without restarts and the back-end services report no "
        "errors. The platform team added crash-dump settings to some containers during the window."
    )
    accepted_blind = rollback_repairs("the start command with the ulimit added in yesterday's release window")
    mechanism = Mechanism(
        "fd_exhaustion",
        "os",
        "the process's open-files limit (RLIMIT_NOFILE, ulimit -n) is below the descriptors its connections need",
        (
            r"\btoo many open files\b",
            r"\bemfile\b",
            r"\bfile[- ]descriptors?\b",
            r"\bulimit\b",
            r"\bnofile\b",
            r"\brlimit_nofile\b",
            r"\bopen[- ]files? limit\b",
            r"\bfds? (?:limit|exhaust\w*)\b",
        ),
        detail_keys=("service", "limit"),
        compatible=("resource_exhaustion", "network_fault"),
    )

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        comp = self.app.component(self.app.entrypoint)
        limit = int(rng.choice((512, 768, 1024)))
        demand = backend.model.fd_demand(self.app, comp, comp.replicas)
        return {"service": comp.name, "container": comp.container, "argv": list(comp.command), "limit": limit, "demand": demand}

    def split_key(self, variant: dict[str, Any]) -> str:
        return str(variant["limit"])

    def inject(self, backend: "ModelBackend") -> None:
        v = self.variant
        ContainerUlimit(self.namespace, v["service"], v["container"], tuple(v["argv"]), v["limit"]).inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        return RootCause(
            component=f"deployment/{v['service']}",
            namespace=self.namespace,
            layer="os",
            mechanism="file descriptor exhaustion: ulimit -n in the container's start command",
            summary=(
                f"deployment/{v['service']} now starts through sh -c '... ulimit -n {v['limit']} && exec {' '.join(v['argv'])}', so its process "
                f"may hold only {v['limit']} open files (RLIMIT_NOFILE, limit {v['limit']}) while its clients' connections need ~{v['demand']} "
                f"file descriptors. accept() fails with EMFILE (\"http: Accept error ... too many open files\"), new connections wait in the "
                f"backlog and time out. " + impact(self.app, v["service"])
            ),
            details={"service": v["service"], "limit": v["limit"], "container": v["container"]},
            affected=(f"deployment/{v['service']}",),
        )

    def brief(self) -> str:
        return user_report(self.app, self.variant["service"], intermittent=True)

    def reference_solution(self) -> list[str]:
        v, ns = self.variant, self.namespace
        d = f"deployment/{v['service']}"
        return [
            f"kubectl logs {d} -n {ns} --tail=5",
            f"kubectl exec {d} -n {ns} -- cat /proc/1/limits",
            f"kubectl exec {d} -n {ns} -- sh -c 'ls /proc/1/fd | wc -l'",
            f"kubectl get {d} -n {ns} -o jsonpath='{{.spec.template.spec.containers[0].command}}'",
            f"kubectl patch {d} -n {ns} --type=json -p '[{{\"op\":\"replace\",\"path\":\"/spec/template/spec/containers/0/command\",\"value\":{json.dumps(v['argv'])}}}]'",
            f"kubectl rollout status {d} -n {ns}",
            "sleep 30",
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v, ns = self.variant, self.namespace
        d = f"deployment/{v['service']}"
        return {
            **self.blind_fixes(v["service"]),
            # the exec'd shell gets the runtime's default limit; PID 1 keeps its own
            "ulimit_in_exec": [f"kubectl exec {d} -n {ns} -- sh -c 'ulimit -n 65536'", "sleep 30"],
            "more_cpu_and_memory": [f"kubectl set resources {d} -n {ns} -c {v['container']} --limits=cpu=2,memory=1Gi", "sleep 60"],
            # fewer connections per replica, but replicas left above the baseline
            "scale_out": [f"kubectl scale {d} -n {ns} --replicas=3", "sleep 60"],
        }

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        v = self.variant
        pods = _live_pods(backend, self.namespace, f"{self.app.label_key}={v['service']}")
        comp = self.app.component(v["service"])
        need = backend.model.fd_demand(self.app, comp, max(len(pods), 1))
        low = []
        for pod in pods:
            ctr = next((c for c in pod["spec"].get("containers") or () if c.get("name") == v["container"]), None)
            limit = nofile_limit(ctr) if ctr is not None else 0
            if limit < 2 * need:
                low.append(f"{pod['metadata']['name']}: nofile {limit}")
        ok = bool(pods) and not low
        return [Check("open_files_limit_fits", ok, "; ".join(low) if low else f"every {v['service']} process may open at least twice the ~{need} descriptors it needs")]

    def allowed_changes(self) -> list[AllowedChange]:
        return [AllowedChange("Deployment", self.namespace, self.variant["service"], "modified")]


class DevShmExhaustion(SimScenario):
    """The database's parallel reports need more dynamic shared memory than the container's /dev/shm holds.

    The BI dashboards (outside the cluster) run parallel hash joins; with the server's
    ``work_mem`` and parallel workers raised for them, each needs ~100-300 MiB of
    POSIX shared memory while the container's /dev/shm is the runtime's 64 MiB. The
    repair gives PostgreSQL a memory-backed emptyDir at /dev/shm sized for it, and the
    memory limit to hold it (tmpfs pages count against the container's cgroup); or
    brings the server's shared-memory use back under 64 MiB.
    """

    family = "DevShmExhaustion"
    app = ASTRONOMY_SHOP
    layer = "os"
    difficulty = "hard"
    summary = "The finance team's dashboards on the shop's accounting database fail on every refresh."
    description = (
        "Finance connected their BI dashboards to the astronomy shop's accounting database this week. Since this "
        "morning every revenue panel shows a database error on each refresh; the shop itself works and orders are "
        "recorded. The DBA says the server was given the settings the BI vendor recommends."
    )
    accepted_blind = rollback_repairs("the BI vendor's server settings, which need more /dev/shm than the container has")
    mechanism = Mechanism(
        "dev_shm_exhaustion",
        "os",
        "the container's /dev/shm (64 MiB by default) is too small for the shared memory the process needs",
        (
            r"/dev/shm\b",
            r"\bshm\b",
            r"\b(?:dynamic |posix )?shared memory\b",
            r"\bshared[- ]memory segments?\b",
            r"\bdsm\b",
            r"\bemptydir\b[^.;\n]{0,40}?\bmemory\b",
        ),
        detail_keys=("service", "work_mem"),
        compatible=("resource_exhaustion",),
    )

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        work_mem = str(rng.choice(("16MB", "24MB", "32MB")))
        workers = int(rng.choice((2, 3, 4)))
        need = dsm_bytes({**DEFAULTS, "work_mem": work_mem, "max_parallel_workers_per_gather": str(workers)})
        comp = self.app.component("postgresql")
        return {"service": comp.name, "container": comp.container, "work_mem": work_mem, "workers": workers, "need_mib": need // 2**20}

    def split_key(self, variant: dict[str, Any]) -> str:
        return f"{variant['work_mem']}/{variant['workers']}"

    def inject(self, backend: "ModelBackend") -> None:
        v = self.variant
        ReportingDashboards(self.namespace, self.app.name, v["service"], v["container"], v["work_mem"], v["workers"]).inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        return RootCause(
            component=f"deployment/{v['service']}",
            namespace=self.namespace,
            layer="os",
            mechanism="/dev/shm exhaustion: the container's 64 MiB /dev/shm is too small for PostgreSQL's parallel queries",
            summary=(
                f"deployment/{v['service']} has no memory-backed emptyDir at /dev/shm, so the container gets the runtime's 64 MiB shm. "
                f"The server runs with work_mem={v['work_mem']} (work_mem {v['work_mem']}) and max_parallel_workers_per_gather={v['workers']} for "
                f"the BI dashboards, whose parallel hash joins need ~{v['need_mib']} MiB of dynamic shared memory in /dev/shm "
                f"(dynamic_shared_memory_type=posix): /dev/shm fills up and the queries fail with \"could not resize shared memory "
                f"segment ... No space left on device\". The shop's own traffic is unaffected; the dashboards fail on every refresh."
            ),
            details={"service": v["service"], "work_mem": v["work_mem"], "workers": v["workers"], "shm": "64Mi"},
            affected=(f"deployment/{v['service']}",),
        )

    def brief(self) -> str:
        return (
            f"PAGE: the finance team reports that their BI dashboards, which query the accounting database of the "
            f"{self.app.name} site (PostgreSQL, namespace {self.namespace}), show a database error on every refresh; the "
            "shop itself works. The problem started about 3 minutes ago. Find the root cause, repair it durably, and "
            "submit your diagnosis."
        )

    def _deploy(self) -> str:
        return f"deployment/{self.variant['service']}"

    def _shm_patch(self, size: str, memory: str | None) -> str:
        ops: list[dict[str, Any]] = [
            {"op": "add", "path": "/spec/template/spec/volumes", "value": [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": size}}]},
            {"op": "add", "path": "/spec/template/spec/containers/0/volumeMounts", "value": [{"name": "dshm", "mountPath": "/dev/shm"}]},
        ]
        if memory is not None:
            ops.append({"op": "replace", "path": "/spec/template/spec/containers/0/resources/limits/memory", "value": memory})
        return f"kubectl patch {self._deploy()} -n {self.namespace} --type=json -p '{json.dumps(ops)}'"

    def reference_solution(self) -> list[str]:
        ns, d = self.namespace, self._deploy()
        return [
            f"kubectl logs {d} -n {ns} --tail=6",
            f"kubectl exec {d} -n {ns} -- df -h /dev/shm",
            f"kubectl get {d} -n {ns} -o jsonpath='{{.spec.template.spec.containers[0].args}}'",
            self._shm_patch("512Mi", "1Gi"),
            f"kubectl rollout status {d} -n {ns}",
            "sleep 120",
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        ns, d = self.namespace, self._deploy()
        return {
            "rollout_restart": [f"kubectl rollout restart {d} -n {ns}", "sleep 120"],
            "delete_pods": [f"kubectl delete pod -n {ns} -l opentelemetry.io/name={self.variant['service']}", "sleep 120"],
            "scale_to_zero": [f"kubectl scale {d} -n {ns} --replicas=0"],
            # a bigger memory limit does not make /dev/shm bigger
            "raise_memory_only": [f"kubectl set resources {d} -n {ns} -c {self.variant['container']} --limits=memory=1Gi", "sleep 120"],
            # a big /dev/shm under the old memory limit: the tmpfs pages get the container OOM-killed
            "shm_without_memory": [self._shm_patch("512Mi", None), "sleep 180"],
            # the dashboards reconnect on their next refresh and fail the same way
            "terminate_dashboard_sessions": [
                f"kubectl exec {d} -n {ns} -- psql -U root -d otel -c \"SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'Metabase v0.50.30'\"",
                "sleep 120",
            ],
        }

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        v = self.variant
        pods = _live_pods(backend, self.namespace, f"opentelemetry.io/name={v['service']}")
        comp = self.app.component(v["service"])
        bad = []
        for pod in pods:
            spec = next((c for c in pod["spec"].get("containers") or () if c.get("name") == v["container"]), None)
            if spec is None:
                bad.append(f"{pod['metadata']['name']}: no {v['container']} container")
                continue
            need, shm, limit = dsm_bytes(pg_settings(spec)), shm_bytes(pod, spec), memory_limit(spec)
            if need > shm:
                bad.append(f"{pod['metadata']['name']}: parallel queries need {need // 2**20} MiB of /dev/shm, it has {shm // 2**20} MiB")
            elif limit is not None and comp.memory_mib * 2**20 + need > limit:
                bad.append(f"{pod['metadata']['name']}: {need // 2**20} MiB of shared memory does not fit the {limit // 2**20} MiB memory limit")
        ok = bool(pods) and not bad
        return [Check("shared_memory_fits", ok, "; ".join(bad) if bad else "the reports' shared memory fits /dev/shm and the memory limit")]

    def allowed_changes(self) -> list[AllowedChange]:
        return [AllowedChange("Deployment", self.namespace, self.variant["service"], "modified")]
