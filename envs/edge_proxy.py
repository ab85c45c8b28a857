"""EdgeFilterCpu on the astronomy shop: a security rule in frontend-proxy's envoy config burns CPU.

A "block bad requests" route was added in front of the catch-all route of
envoy's route table (ConfigMap ``frontend-proxy-config``): a header match with
a ``safe_regex`` whose nested counted repetitions compile to a huge RE2 program.
Envoy rejects such programs by default, so the author also raised
``re2.max_program_size.error_level`` in the runtime layer. Every request now
runs that regex on RE2's NFA and spends tens of milliseconds of CPU in the
proxy: frontend-proxy saturates, requests queue and time out, and every
back end looks idle. Restarting or scaling the proxy reloads the same file
(more replicas only spread the waste); dropping only the raised limit makes
envoy refuse the file and crash-loop. The fix reverts the rule and rolls the
proxy (static config is read at start).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from sre_env.apps.astronomy_shop import ASTRONOMY_SHOP, ENVOY_CONFIG
from sre_env.faults.astronomy import EnvoyConfigChange
from sre_env.rewards.base import AllowedChange, Check
from sre_env.sim.runtime.envoy import re2_program_size, request_cost_ms

from .base import RootCause, SimScenario
from .briefs import impact, user_report
from .edge_filter import EdgeFilterCpu as _NginxEdgeFilter

if TYPE_CHECKING:
    from sre_env.sim.model import ModelBackend

__all__ = ["EnvoyEdgeFilterCpu", "with_rule"]

_ANCHOR = '                        - match: { prefix: "/" }\n                          route: { cluster: frontend }\n'
#: (change ticket, header matched, RE2 pattern)
_RULES: tuple[tuple[str, str, str], ...] = (
    ("block crawlers", "user-agent", r"^(?:(?:[A-Za-z0-9 ._/;:()-]{1,64}){1,32}\s?){1,12}(?:bot|crawl|spider)"),
    ("block path traversal", ":path", r"^(?:/[A-Za-z0-9._~%!$&()*+,;=:@-]{1,255}){1,80}/\.\./"),
    ("block SQL injection probes", ":path", r"(?:[?&](?:[A-Za-z0-9_]{1,64}=[^&]{0,255}){1,40}){1,2}(?:union|select|sleep)\("),
)
_RUNTIME = "layered_runtime:\n  layers:\n    - name: static_layer_0\n      static_layer:\n        re2.max_program_size.error_level: 200000\n"


def _rule_yaml(ticket: str, header: str, pattern: str) -> str:
    quoted = "'" + pattern.replace("'", "''") + "'"
    return (
        f"                        # {ticket}\n"
        "                        - match:\n"
        '                            prefix: "/"\n'
        "                            headers:\n"
        f"                              - name: {header}\n"
        "                                string_match:\n"
        "                                  safe_regex:\n"
        f"                                    regex: {quoted}\n"
        "                          direct_response:\n"
        "                            status: 403\n"
    )


def with_rule(ticket: str, header: str, pattern: str, *, runtime: bool = True) -> str:
    """The demo's envoy.yaml with the rule in front of the catch-all route (and the raised RE2 limit)."""
    return ENVOY_CONFIG.replace(_ANCHOR, _rule_yaml(ticket, header, pattern) + _ANCHOR) + (_RUNTIME if runtime else "")


def _configmap(text: str) -> str:
    body = "".join("    " + line + "\n" if line else "\n" for line in text.splitlines())
    return (
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: frontend-proxy-config\n  labels:\n"
        "    app.kubernetes.io/version: 2.1.3\n    app.kubernetes.io/part-of: opentelemetry-demo\n"
        "data:\n  envoy.yaml: |\n" + body
    )


class EnvoyEdgeFilterCpu(SimScenario):
    family = "EdgeFilterCpu"
    app = ASTRONOMY_SHOP
    layer = "application"
    difficulty = "hard"
    mechanism = _NginxEdgeFilter.mechanism
    summary = "The whole astronomy shop is slow and many requests time out; the services look idle."
    description = (
        "Since a security change this morning nearly every page of the astronomy shop is very slow and many requests "
        "fail with timeouts, for browsing and checkout alike. All pods are Running and Ready, nothing restarts, and the "
        "back-end services report low latency and little traffic."
    )

    def extra_components(self) -> tuple[str, ...]:
        return ("frontend-proxy-config",)

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        idx = int(rng.integers(0, len(_RULES)))
        ticket, header, pattern = _RULES[idx]
        return {"ticket": ticket, "variable": header, "rule": pattern, "program_size": re2_program_size(pattern)}

    def inject(self, backend: "ModelBackend") -> None:
        v = self.variant
        EnvoyConfigChange(self.namespace, with_rule(v["ticket"], v["variable"], v["rule"]), ENVOY_CONFIG).inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        return RootCause(
            component="configmap/frontend-proxy-config",
            namespace=self.namespace,
            layer="application",
            mechanism="expensive regex rule at the edge proxy saturates its CPU",
            summary=(
                f"ConfigMap frontend-proxy-config (the envoy config of frontend-proxy) got a new '{v['ticket']}' rule: a safe_regex "
                f"match on the {v['variable']} header, {v['rule']}, whose nested counted repetitions compile to an RE2 program of about "
                f"{v['program_size']} instructions (re2.max_program_size.error_level was raised to allow it). This expensive regex runs on "
                "every request and burns CPU in envoy, so frontend-proxy saturates and requests are slow and time out. "
                + impact(self.app, "frontend-proxy")
            ),
            details={"rule": v["rule"], "variable": v["variable"], "program_size": v["program_size"], "configmap": "frontend-proxy-config"},
            affected=("deployment/frontend-proxy",),
        )

    def brief(self) -> str:
        return user_report(self.app, "frontend-proxy", intermittent=True)

    def reference_solution(self) -> list[str]:
        ns = self.namespace
        return [
            f"kubectl top pods -n {ns}",
            f"kubectl get configmap frontend-proxy-config -n {ns} -o yaml",
            f"kubectl apply -n {ns} -f - <<'EOF'\n{_configmap(ENVOY_CONFIG)}EOF",
            f"kubectl rollout restart deployment/frontend-proxy -n {ns}",
            "sleep 20",
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        ns = self.namespace
        v = self.variant
        return {
            "restart_proxy": [f"kubectl rollout restart deployment/frontend-proxy -n {ns}"],
            "scale_up_proxy": [f"kubectl scale deployment/frontend-proxy -n {ns} --replicas=4"],
            "delete_proxy_pods": [f"kubectl delete pod -n {ns} -l opentelemetry.io/name=frontend-proxy"],
            "restart_frontend": [f"kubectl rollout restart deployment/frontend -n {ns}"],
            "drop_only_the_raised_limit": [
                f"kubectl apply -n {ns} -f - <<'EOF'\n{_configmap(with_rule(v['ticket'], v['variable'], v['rule'], runtime=False))}EOF",
                f"kubectl rollout restart deployment/frontend-proxy -n {ns}",
            ],
        }

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        model = backend.model.app_model(self.app.name)
        serving = backend.model.serving(self.namespace).get("frontend-proxy", ())
        costly = []
        for uid in serving:
            seen = model.edge_configs.get(uid)
            if seen is None or seen[1].error or request_cost_ms(seen[1]) > 1.0:
                costly.append(uid)
        ok = bool(serving) and not costly
        return [Check("edge_rule_cheap", ok, "every frontend-proxy runs a config whose route matches are cheap" if ok else
                      (f"{len(costly)} of {len(serving)} frontend-proxy pods spend {model.edge_cost_ms:.0f} ms of regex per request" if serving else "no frontend-proxy pod serves"))]

    def allowed_changes(self) -> list[AllowedChange]:
        return [AllowedChange("ConfigMap", self.namespace, "frontend-proxy-config", "modified")]
