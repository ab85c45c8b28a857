"""Faults that live on one node: its OS configuration (kubelet, clock, conntrack) or its hardware.

The evidence is where it would be on a real node — ``systemctl``, ``journalctl``,
``chronyc``, ``sysctl``, ``dmesg``, ``ip -s link``, node conditions and events,
node-exporter metrics — while the app only shows the consequences: pods not
ready, timeouts, crashes. The classic wrong move is to blame and restart the
app; the repair happens on the node, or by moving the app off it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from sre_env.apps.hotel_reservation import HOTEL_RESERVATION
from sre_env.faults import node as node_fault
from sre_env.rewards.base import AllowedChange, Check, Mechanism
from sre_env.sim.node.faults import conntrack_demand, conntrack_limit

from .base import RootCause, Scenario, SimScenario
from .briefs import impact, user_report
from .node_isolation import (
    LocalVolume,
    app_pods_on,
    evacuation_commands,
    isolation_allowed_changes,
    local_volumes_on,
    node_cause,
    off_node_check,
)

if TYPE_CHECKING:
    from sre_env.backend import Backend
    from sre_env.sim.model import ModelBackend

__all__ = ["KubeletDown", "NodeClockDrift", "ConntrackExhaustion", "NicPacketCorruption", "NicLinkFlap", "MemoryEccErrors", "ClocksourceUnstable"]

_WORKERS = ("worker-1", "worker-2", "worker-3")
_NODE_KINDS = ("Deployment", "StatefulSet")


def _workloads_on(backend: "Backend", scenario: Scenario, node: str) -> tuple[str, ...]:
    """Workloads of the app with a pod on ``node`` (``deployment/geo``...), by pod name prefix."""
    names = {c.name: c.kind for c in scenario.app.components}
    found = set()
    for pod in app_pods_on(backend, scenario.app, node):
        base = pod.rsplit("-", 2)[0]
        for cand in (base, pod.rsplit("-", 1)[0]):
            if cand in names:
                found.add(f"{names[cand].lower()}/{cand}")
                break
    return tuple(sorted(found))


class NodeScenario(Scenario):
    """Shared parts: the node is drawn among workers that run the app's services."""

    app = HOTEL_RESERVATION
    #: node-level faults show up after the kubelet/kernel notices them
    develop_s = 180.0
    #: the node's software is at fault, its data is fine (hardware subclasses say otherwise)
    evacuation_repair = False
    min_services: ClassVar[int] = 1

    def draw_node(self, backend: "Backend", rng: np.random.Generator) -> tuple[str, tuple[str, ...]]:
        options = []
        for node in _WORKERS:
            if node not in backend.nodes.names():
                continue
            workloads = _workloads_on(backend, self, node)
            services = [w for w in workloads if self.app.component(w.split("/", 1)[1]).role in ("service", "frontend")]
            if len(services) >= self.min_services:
                options.append((node, workloads))
        node, workloads = options[int(rng.integers(0, len(options)))]
        return node, workloads

    def _first_service(self) -> str:
        for w in self.variant["workloads"]:
            name = w.split("/", 1)[1]
            if self.app.component(name).role in ("service", "frontend"):
                return name
        return self.app.entrypoint

    def brief(self) -> str:
        return user_report(self.app, self._first_service(), intermittent=self.intermittent)

    intermittent: ClassVar[bool] = True

    def _affected(self) -> tuple[str, ...]:
        return tuple(self.variant["workloads"])

    def _names(self) -> str:
        return ", ".join(w.split("/", 1)[1] for w in self.variant["workloads"])

    def node_cause(self, mechanism: str, summary: str, **details: Any) -> RootCause:
        """The ground truth: the node, ``summary`` then what users lose; its workloads affected."""
        return node_cause(self, mechanism, summary + impact(self.app, self._first_service()), details, self._affected())

    def app_fixes(self, *names: str) -> dict[str, list[str]]:
        """The named wrong fixes that act on the app, not the node (restart or move its pods, scale it)."""
        n, ns, service = self.variant["node"], self.namespace, self._first_service()
        known = {
            "restart_app_pods": [f"kubectl delete pods -n {ns} --field-selector spec.nodeName={n}"],
            "drain_node": [f"kubectl drain {n} --ignore-daemonsets --delete-emptydir-data"],
            "cordon_only": [f"kubectl cordon {n}"],
            "rollout_restart": [f"kubectl rollout restart deployment/{service} -n {ns}"],
            "scale_up": [f"kubectl scale deployment/{service} -n {ns} --replicas=3"],
        }
        return {name: known[name] for name in names}


# ----------------------------------------------------------------------------- OS
class KubeletDown(NodeScenario, SimScenario):
    family = "KubeletDown"
    layer = "os"
    difficulty = "medium"
    intermittent = False
    summary = "Several hotel-reservation features stopped working at once; no deploys today."
    description = (
        "A handful of hotel-reservation features fail for every user while others are fine. Nothing was "
        "deployed; the platform team did some node maintenance this morning and says it went smoothly."
    )
    mechanism = Mechanism(
        "kubelet_stopped",
        "os",
        "the kubelet on a node is stopped (and disabled)",
        (
            r"\bkubelet\b[^.;\n]{0,40}?\b(?:stopped|down|disabled|not running|inactive|dead|was stopped|is off)\b",
            r"\b(?:stopped|disabled|inactive)\b[^.;\n]{0,30}?\bkubelet\b",
            r"\bkubelet\.service\b",
        ),
        detail_keys=("node", "unit"),
        compatible=("node_failure",),
    )

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        node, workloads = self.draw_node(backend, rng)
        return {"node": node, "workloads": workloads}

    def inject(self, backend: "ModelBackend") -> None:
        node_fault.KubeletDisabled(self.variant["node"]).inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        return self.node_cause(
            "the kubelet is stopped and disabled on the node",
            f"The kubelet on {v['node']} was stopped and disabled (systemctl disable --now kubelet) during maintenance. "
            f"The node went NotReady, its pods ({self._names()}) were marked not ready and dropped out of their Services. ",
            unit="kubelet.service",
        )

    def reference_solution(self) -> list[str]:
        n = self.variant["node"]
        return ["kubectl get nodes", f"ssh {n} systemctl status kubelet", f"ssh {n} systemctl enable --now kubelet", "sleep 30", "kubectl get nodes"]

    def wrong_fixes(self) -> dict[str, list[str]]:
        return self.app_fixes("restart_app_pods", "drain_node", "rollout_restart")

    def non_durable_fixes(self) -> dict[str, list[str]]:
        # running again, but still disabled: the next reboot brings the outage back
        return {"start_without_enable": [f"ssh {self.variant['node']} systemctl start kubelet"]}

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        host = backend.model.host(self.variant["node"])
        # whether it stays running after a reboot is the durability gate's question
        ok = host.kubelet_running
        return [Check("kubelet_running", ok, f"kubelet on {host.name}: {'active' if host.kubelet_running else 'inactive'}, {'disabled' if 'kubelet' in host.disabled_units else 'enabled'}")]


class NodeClockDrift(NodeScenario, SimScenario):
    family = "NodeClockDrift"
    layer = "os"
    difficulty = "hard"
    intermittent = False
    summary = "Part of hotel-reservation is down; one node looks unhealthy but nothing was changed."
    description = (
        "Some hotel-reservation features fail for every user. The on-call engineer sees a node in a bad state "
        "but says nobody touched Kubernetes; a hypervisor migration of a few VMs happened overnight."
    )
    mechanism = Mechanism(
        "clock_skew",
        "os",
        "the node's clock is wrong (NTP off), so certificates look expired or not yet valid",
        (
            r"\bclocks? (?:skew|drift|is wrong|was wrong|offset|out of sync|is off|jump\w*)\b",
            r"\b(?:skewed|drifted|wrong|incorrect|unsynchroni[sz]ed) (?:system )?(?:clock|time)\b",
            r"\btime (?:sync\w*|drift|skew|is wrong)\b",
            r"\bntp\b",
            r"\bchrony\w*\b",
            r"\bnot yet valid\b",
        ),
        detail_keys=("node", "offset_days"),
        # the kubelet's x509 errors are a consequence people rightly quote
        compatible=("node_failure", "webhook_tls_mismatch", "expired_certificate"),
    )

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        node, workloads = self.draw_node(backend, rng)
        days = int(rng.choice((-90, -45, 400)))
        return {"node": node, "workloads": workloads, "offset_days": days}

    def inject(self, backend: "ModelBackend") -> None:
        v = self.variant
        node_fault.ClockSkew(v["node"], v["offset_days"] * 86400.0).inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        d = v["offset_days"]
        direction = f"{-d} days slow" if d < 0 else f"{d} days fast"
        validity = "not yet valid" if d < 0 else "expired"
        return self.node_cause(
            "clock skew: NTP (chrony) is off and the node clock is wrong",
            f"The clock of {v['node']} is {direction} (offset_days {d}): chrony was disabled and the system and hardware clocks set wrong. "
            f"The kubelet sees the API server's certificate as {validity} (x509), stops posting status, and the node goes NotReady; "
            f"its pods ({self._names()}) leave their Services. ",
            offset_days=d,
            unit="chrony.service",
        )

    def reference_solution(self) -> list[str]:
        n = self.variant["node"]
        return ["kubectl get nodes", f"ssh {n} journalctl -u kubelet --no-pager | tail -5", f"ssh {n} timedatectl", f"ssh {n} systemctl enable --now chrony", f"ssh {n} chronyc tracking", "sleep 30", "kubectl get nodes"]

    def wrong_fixes(self) -> dict[str, list[str]]:
        n = self.variant["node"]
        return {
            "restart_kubelet": [f"ssh {n} systemctl restart kubelet"],
            # the clock is right until the next boot reads the wrong hardware clock again
            "start_chrony_without_enable": [f"ssh {n} systemctl start chrony"],
            **self.app_fixes("restart_app_pods", "drain_node"),
        }

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        host = backend.model.host(self.variant["node"])
        ok = abs(host.clock_offset_s) < 1.0 and host.chrony_running
        return [Check("clock_synchronised", ok, f"{host.name}: offset {host.clock_offset_s:+.0f}s, chrony {'active' if host.chrony_running else 'inactive'}/{'disabled' if 'chrony' in host.disabled_units else 'enabled'}")]


class ConntrackExhaustion(NodeScenario, SimScenario):
    family = "ConntrackExhaustion"
    layer = "os"
    difficulty = "hard"
    min_services = 2
    summary = "Intermittent timeouts across several hotel-reservation features."
    description = (
        "Users of hotel-reservation see some requests time out or fail, spread over several features, "
        "while most succeed. Pods are all Running. A fleet-wide kernel tuning change rolled out this week."
    )
    mechanism = Mechanism(
        "conntrack_exhaustion",
        "os",
        "the connection-tracking table is full (nf_conntrack_max too low), new connections are dropped",
        (
            r"\bconntrack\w*\b",
            r"\bconnection[- ]tracking\b",
            r"\btable full\b",
        ),
        detail_keys=("node", "limit", "path"),
        compatible=("network_fault",),
    )

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        node, workloads = self.draw_node(backend, rng)
        return {"node": node, "workloads": workloads, "limit": int(rng.choice((512, 640, 768))), "path": "/etc/sysctl.d/90-net-tuning.conf"}

    def inject(self, backend: "ModelBackend") -> None:
        v = self.variant
        node_fault.ConntrackLimit(v["node"], v["limit"], v["path"]).inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        return self.node_cause(
            "conntrack table exhaustion: nf_conntrack_max set too low",
            f"{v['path']} on {v['node']} sets net.netfilter.nf_conntrack_max = {v['limit']} (limit {v['limit']}), below the node's tracked connections, "
            f"so the conntrack table is full and the kernel drops new connections (dmesg: nf_conntrack: table full, dropping packet). "
            f"Calls to and from its pods ({self._names()}) time out intermittently. ",
            limit=v["limit"],
            path=v["path"],
            sysctl="net.netfilter.nf_conntrack_max",
        )

    def reference_solution(self) -> list[str]:
        v = self.variant
        n = v["node"]
        return [
            f"ssh {n} dmesg | tail -5",
            f"ssh {n} sysctl net.netfilter.nf_conntrack_count net.netfilter.nf_conntrack_max",
            f"ssh {n} grep -r conntrack /etc/sysctl.d/",
            f"ssh {n} \"sed -i 's/^net.netfilter.nf_conntrack_max.*/net.netfilter.nf_conntrack_max = 262144/' {v['path']}\"",
            f"ssh {n} sysctl --system",
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        return self.app_fixes("restart_app_pods", "rollout_restart", "scale_up")

    def non_durable_fixes(self) -> dict[str, list[str]]:
        # right value, but only until the next boot re-applies the file
        v = self.variant
        return {"runtime_only": [f"ssh {v['node']} dmesg | tail -3", f"ssh {v['node']} sysctl -w net.netfilter.nf_conntrack_max=262144"]}

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        host = backend.model.host(self.variant["node"])
        n_pods = sum(1 for p in backend.api.list("Pod") if p["spec"].get("nodeName") == host.name)
        limit, demand = conntrack_limit(host), conntrack_demand(host.name, backend.now, n_pods)
        return [Check("conntrack_headroom", limit >= 4 * demand, f"{host.name}: nf_conntrack_max {limit}, tracked connections ~{demand}")]


# ----------------------------------------------------------------------------- hardware
class _IsolateNode(NodeScenario):
    """Hardware that cannot be fixed from software: take the node out and move the app."""

    layer = "hardware"
    difficulty = "hard"
    evacuation_repair = True

    def draw_variant(self, backend: "Backend", rng: np.random.Generator) -> dict[str, Any]:
        node, workloads = self.draw_node(backend, rng)
        volumes = local_volumes_on(backend, self.app, node)
        return {"node": node, "workloads": workloads, "volumes": tuple((v.workload, v.claim, v.selector, v.storage, v.storage_class) for v in volumes), **self.draw_hardware(rng)}

    def draw_hardware(self, rng: np.random.Generator) -> dict[str, Any]:
        return {}

    def _volumes(self) -> tuple[LocalVolume, ...]:
        return tuple(LocalVolume(*v) for v in self.variant["volumes"])

    def reference_solution(self) -> list[str]:
        return [*self.evidence_commands(), *evacuation_commands(self.namespace, self.variant["node"], self._volumes())]

    def evidence_commands(self) -> list[str]:
        return [f"ssh {self.variant['node']} dmesg | tail -20"]

    def wrong_fixes(self) -> dict[str, list[str]]:
        return self.app_fixes("restart_app_pods", "cordon_only", "rollout_restart", "scale_up")

    def allowed_changes(self) -> list[AllowedChange]:
        return isolation_allowed_changes(self.namespace, self.variant["node"], self._volumes())

    def cause_checks(self, backend: "Backend") -> list[Check]:
        return [off_node_check(backend, self.app, self.variant["node"])]


class NicPacketCorruption(_IsolateNode):
    family = "NicPacketCorruption"
    summary = "Intermittent timeouts in hotel-reservation that no recent change explains."
    description = (
        "A small but steady share of hotel-reservation requests time out, across several features. "
        "Nothing was deployed; retries usually succeed. The application teams cannot reproduce it locally."
    )
    mechanism = Mechanism(
        "nic_packet_corruption",
        "hardware",
        "a faulty NIC or link corrupts frames (CRC errors), so packets are dropped",
        (
            r"\bcrc errors?\b",
            r"\b(?:frame|packet) (?:checksum|corruption)\b",
            r"\bcorrupt\w* (?:packets?|frames?)\b",
            r"\bbad (?:frame )?checksums?\b",
            r"\brx errors?\b",
            r"\b(?:nic|network (?:card|interface|adapter)|ethernet|eth0)\b[^.;\n]{0,40}?\b(?:corrupt\w*|fault\w*|failing|broken|errors?)\b",
            r"\b(?:faulty|failing|bad|broken|defective) (?:nic|network (?:card|interface|adapter)|cable)\b",
        ),
        detail_keys=("node", "interface"),
        compatible=("network_fault",),
    )

    def draw_hardware(self, rng: np.random.Generator) -> dict[str, Any]:
        return {"fraction": float(rng.choice((0.01, 0.02, 0.03))), "interface": "eth0"}

    def inject(self, backend: "Backend") -> None:
        node_fault.NicCrcErrors(self.variant["node"], self.variant["fraction"]).inject(backend)

    def evidence_commands(self) -> list[str]:
        n = self.variant["node"]
        return [f"ssh {n} ip -s link show eth0", f"ssh {n} dmesg | tail -20"]

    def root_cause(self) -> RootCause:
        v = self.variant
        return self.node_cause(
            "NIC packet corruption: frames fail their CRC on the node's network interface",
            f"The network interface eth0 of {v['node']} corrupts about {v['fraction']:.0%} of frames (CRC errors, rx errors in ip -s link, bad checksums in dmesg). "
            f"Dropped and retransmitted packets make calls to and from its pods ({self._names()}) time out. ",
            interface="eth0", fraction=v["fraction"],
        )


class NicLinkFlap(_IsolateNode):
    family = "NicLinkFlap"
    summary = "Bursts of hotel-reservation errors every minute or so."
    description = (
        "Every minute or two hotel-reservation returns a short burst of errors and timeouts, then recovers. "
        "The bursts hit several features. Nothing was deployed and the pods look healthy."
    )
    mechanism = Mechanism(
        "nic_link_flap",
        "hardware",
        "the node's network link keeps going down and up (a flapping NIC/port)",
        (
            r"\blink (?:is )?(?:flap\w*|down|bouncing|unstable|going down)\b",
            r"\bflapp?ing\b",
            r"\blink (?:goes|went|keeps going) down\b",
            r"\b(?:nic|network interface|eth0|port|transceiver)\b[^.;\n]{0,30}?\b(?:down|flap\w*|bounc\w*)\b",
        ),
        detail_keys=("node", "interface"),
        compatible=("network_fault",),
    )

    def draw_hardware(self, rng: np.random.Generator) -> dict[str, Any]:
        return {"down_s": float(rng.choice((4.0, 6.0, 9.0))), "interface": "eth0"}

    def inject(self, backend: "Backend") -> None:
        node_fault.NicLinkFlap(self.variant["node"], self.variant["down_s"]).inject(backend)

    def evidence_commands(self) -> list[str]:
        n = self.variant["node"]
        return [f"ssh {n} dmesg | grep -i link | tail -6"]

    def root_cause(self) -> RootCause:
        v = self.variant
        return self.node_cause(
            "NIC link flapping: the node's link goes down for seconds at a time",
            f"The network link eth0 of {v['node']} is flapping: it goes down for about {v['down_s']:.0f} s every minute (dmesg: Link is Down / Link is Up). "
            f"While it is down, calls to and from its pods ({self._names()}) fail. ",
            interface="eth0",
        )


class MemoryEccErrors(_IsolateNode):
    family = "MemoryEccErrors"
    summary = "hotel-reservation pods on one machine crash now and then for no visible reason."
    description = (
        "Different hotel-reservation services have restarted a few times today, each time without an error "
        "in their own logs; users see occasional failed requests around the restarts. No deploys."
    )
    mechanism = Mechanism(
        "memory_ecc_errors",
        "hardware",
        "a failing DIMM: ECC memory errors, uncorrectable ones kill processes (SIGBUS)",
        (
            r"\becc\b",
            r"\bedac\b",
            r"\bmachine check\b",
            r"\bmce\b",
            r"\bhardware memory (?:corruption|errors?)\b",
            r"\b(?:dimm|ram|memory module)s?\b[^.;\n]{0,30}?\b(?:errors?|fail\w*|fault\w*|bad|corrupt\w*)\b",
            r"\b(?:bad|failing|faulty|defective) (?:dimm|ram|memory module|memory)\b",
            r"\buncorrectable (?:memory )?errors?\b",
            r"\bsigbus\b",
        ),
        detail_keys=("node", "dimm"),
        compatible=("application_bug",),
    )

    def draw_hardware(self, rng: np.random.Generator) -> dict[str, Any]:
        slot = int(rng.integers(0, 4))
        return {"per_hour": float(rng.choice((20.0, 40.0))), "dimm": f"CPU_SrcID#0_MC#0_Chan#{slot}_DIMM#0"}

    def inject(self, backend: "Backend") -> None:
        v = self.variant
        node_fault.MemoryEccErrors(v["node"], v["per_hour"], v["dimm"]).inject(backend)

    def evidence_commands(self) -> list[str]:
        n = self.variant["node"]
        return [f"kubectl get pods -n {self.namespace} -o wide", f"ssh {n} dmesg | grep -i -e edac -e sigbus | tail -8"]

    def root_cause(self) -> RootCause:
        v = self.variant
        return self.node_cause(
            "memory ECC errors: a failing DIMM, uncorrectable errors kill processes with SIGBUS",
            f"DIMM {v['dimm']} of {v['node']} is failing: EDAC reports corrected and uncorrectable ECC errors, and each uncorrectable one kills the process "
            f"owning the page (Memory failure ... Sending SIGBUS, exit code 135). Its pods ({self._names()}) restart at random. ",
            dimm=v["dimm"],
        )


class ClocksourceUnstable(_IsolateNode, SimScenario):
    family = "ClocksourceUnstable"
    summary = "hotel-reservation is slow and timing out; one machine runs hot with no more traffic than usual."
    description = (
        "Since early this morning part of hotel-reservation is very slow and many requests time out. "
        "Traffic is normal and nothing was deployed; a monitoring dashboard shows one machine's CPU pinned."
    )
    mechanism = Mechanism(
        "clocksource_unstable",
        "hardware",
        "an unstable TSC: the kernel switched to the slow HPET clocksource and everything burns CPU reading the clock",
        (
            r"\bclocksource\b",
            r"\b(?:tsc|time ?stamp counter)\b[^.;\n]{0,40}?\b(?:unstable|skew\w*|drift\w*)\b",
            r"\bhpet\b",
            r"\bunstable (?:tsc|clock)\b",
        ),
        detail_keys=("node", "clocksource"),
        compatible=("resource_exhaustion",),
    )

    def draw_node(self, backend: "ModelBackend", rng: np.random.Generator) -> tuple[str, tuple[str, ...]]:
        from sre_env.sim.kernel.hosts import HPET_CPU_EFFICIENCY

        model = backend.model
        serving = model.serving(self.namespace)
        options = []
        for node in _WORKERS:
            workloads = _workloads_on(backend, self, node)
            hot = []
            for w in workloads:
                comp = self.app.component(w.split("/", 1)[1])
                if comp.role not in ("service", "frontend"):
                    continue
                cap = model.serving_capacity(comp, serving.get(comp.name, ()))
                if cap * HPET_CPU_EFFICIENCY < model.load(comp.name):
                    hot.append(comp.name)
            if hot:
                options.append((node, workloads))
        return options[int(rng.integers(0, len(options)))]

    def draw_hardware(self, rng: np.random.Generator) -> dict[str, Any]:
        return {"clocksource": "hpet", "cpu": int(rng.integers(0, 8))}

    def inject(self, backend: "ModelBackend") -> None:
        backend.nodes.inject_hardware_fault(self.variant["node"], "tsc_unstable", cpu=self.variant["cpu"])

    def evidence_commands(self) -> list[str]:
        n = self.variant["node"]
        return ["kubectl top nodes", f"ssh {n} dmesg | grep -i clocksource", f"ssh {n} cat /sys/devices/system/clocksource/clocksource0/current_clocksource"]

    def root_cause(self) -> RootCause:
        v = self.variant
        return self.node_cause(
            "unstable TSC: the kernel fell back to the HPET clocksource",
            f"The kernel on {v['node']} marked the TSC clocksource unstable (clocksource watchdog: skew too large) and switched to hpet, a slow "
            f"hardware clock. Every clock read now costs a hardware access, so its pods ({self._names()}) burn their CPU on timekeeping, "
            f"queue requests and time out. ",
            clocksource="hpet",
        )

