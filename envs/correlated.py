"""Correlated failures: one cause, many broken parts. Fix the cause once, not each symptom.

``Correlated-KubeletConfig``: configuration management pushed a kubelet config to
every worker that points ``clientCAFile`` at a certificate that was never
distributed, and restarted the kubelets. None of them comes back: every worker
goes NotReady and the whole app drops out of its Services. Each node looks like
its own incident; the cause is one line in one pushed file.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from sre_env.apps.hotel_reservation import HOTEL_RESERVATION
from sre_env.rewards.base import Check, Mechanism
from sre_env.sim.kubelet.eviction import KUBELET_CONFIG

from .base import RootCause, SimScenario
from .briefs import user_report

if TYPE_CHECKING:
    from sre_env.sim.model import ModelBackend

__all__ = ["CorrelatedKubeletConfig"]

_GOOD_CA = "/etc/kubernetes/pki/ca.crt"


class CorrelatedKubeletConfig(SimScenario):
    family = "Correlated"
    app = HOTEL_RESERVATION
    layer = "compound"
    difficulty = "hard"
    evacuation_repair = False
    summary = "All of hotel-reservation is down at once."
    description = (
        "hotel-reservation stopped answering entirely a few minutes ago: every page fails. The platform team "
        "rolled out a routine security-hardening change to the node fleet this morning; the app teams deployed nothing."
    )
    mechanism = Mechanism(
        "kubelet_config_push",
        "os",
        "a kubelet configuration pushed to every node stops the kubelets from starting",
        (
            r"\bclient ?ca ?file\b",
            r"\bkubelet\b[^.;\n]{0,60}?\bconfig\w*\b[^.;\n]{0,40}?\b(?:bad|wrong|broken|invalid|push\w*|change\w*|missing)\b",
            r"\b(?:bad|wrong|broken|invalid|pushed)\b[^.;\n]{0,30}?\bkubelet (?:config\w*|settings?)\b",
            r"\bunable to load client ca\b",
            r"\bkubelets?\b[^.;\n]{0,40}?\b(?:fail\w* to start|won't start|not starting|crash\w*|down)\b",
        ),
        detail_keys=("clientCAFile", "path"),
        compatible=("node_failure", "kubelet_stopped"),
    )

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        nodes = tuple(n for n in backend.nodes.names() if n.startswith("worker"))
        ca = str(rng.choice(("/etc/kubernetes/pki/ca-2026.crt", "/etc/kubernetes/pki/client-ca.pem", "/etc/pki/kubernetes/ca.crt")))
        return {"nodes": nodes, "ca": ca}

    def inject(self, backend: "ModelBackend") -> None:
        v = self.variant
        for node in v["nodes"]:
            res = backend.nodes.exec(node, ["bash", "-c", f"sed -i 's#clientCAFile: .*#clientCAFile: {v['ca']}#' {KUBELET_CONFIG} && systemctl restart kubelet"])
            if res.exit_code != 0:
                raise RuntimeError(f"config push failed on {node}: {res.output}")

    def root_cause(self) -> RootCause:
        v = self.variant
        nodes = ", ".join(v["nodes"])
        return RootCause(
            component=f"node/{v['nodes'][0]}",
            namespace=self.namespace,
            layer="os",
            mechanism="a pushed kubelet config names a client CA file that does not exist, so no kubelet starts",
            summary=(
                f"A kubelet config change pushed to every worker ({nodes}) sets the kubelet's clientCAFile to {v['ca']} in {KUBELET_CONFIG}, "
                f"a file that does not exist; the kubelets fail to start (unable to load client CA file), all workers go NotReady and every "
                f"hotel-reservation pod drops out of its Service. Impact: every request to hotel-reservation fails for all users."
            ),
            details={"clientCAFile": v["ca"], "path": KUBELET_CONFIG, "nodes": list(v["nodes"])},
            affected=(*(f"node/{n}" for n in v["nodes"][1:]), f"deployment/{self.app.entrypoint}"),
        )

    def brief(self) -> str:
        return user_report(self.app, self.app.entrypoint, intermittent=False)

    def reference_solution(self) -> list[str]:
        v = self.variant
        steps = ["kubectl get nodes", f"ssh {v['nodes'][0]} journalctl -u kubelet --no-pager | tail -3"]
        for node in v["nodes"]:
            steps.append(f"ssh {node} \"sed -i 's#clientCAFile: .*#clientCAFile: {_GOOD_CA}#' {KUBELET_CONFIG}\"")
            steps.append(f"ssh {node} systemctl restart kubelet")
        return [*steps, "sleep 60", "kubectl get nodes"]

    def wrong_fixes(self) -> dict[str, list[str]]:
        v = self.variant
        ns = self.namespace
        first = v["nodes"][0]
        return {
            "restart_kubelets": [f"ssh {n} systemctl restart kubelet" for n in v["nodes"]],
            "fix_one_node": [f"ssh {first} \"sed -i 's#clientCAFile: .*#clientCAFile: {_GOOD_CA}#' {KUBELET_CONFIG}\"", f"ssh {first} systemctl restart kubelet"],
            "restart_app": [f"kubectl rollout restart deployment/{self.app.entrypoint} -n {ns}"],
            "delete_pods": [f"kubectl delete pods -n {ns} --all"],
        }

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        down = [n for n in self.variant["nodes"] if not backend.model.host(n).kubelet_connected()]
        return [Check("kubelets_running", not down, f"kubelet not running on {', '.join(down)}" if down else "every worker's kubelet is up")]
