"""EdgeFilterCpu: a filter rule with a backtracking regex at the edge proxy saturates its CPU.

A "block bad requests" rule was pushed into nginx-thrift's nginx.conf (its
ConfigMap) and the gateway rolled. The rule's regex has a nested quantifier,
so every request spends milliseconds backtracking in the nginx worker: the
gateway's service time jumps, one replica serves a fraction of the offered
load, and most requests time out while every back-end service is idle and
fast. Restarting or deleting the gateway reloads the same file; adding
replicas is not enough and leaves residue. The fix is the rule: revert it (or
make the regex linear) and roll the gateway, since a ``subPath`` mount never
sees a ConfigMap edit in a running pod.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import numpy as np

from sre_env.apps.social_network import SOCIAL_NETWORK
from sre_env.faults.edge_filter import NginxFilterRule
from sre_env.rewards.base import AllowedChange, Check, Mechanism
from sre_env.sim.runtime.social import GATEWAY, NGINX_CONF_KEY

from .base import RootCause, SimScenario

if TYPE_CHECKING:
    from sre_env.sim.model import ModelBackend

__all__ = ["EdgeFilterCpu"]

_ANCHOR = "    lua_need_request_body on;\n"
#: (what the change ticket called it, the variable it matches, the backtracking regex, the action)
_RULES: tuple[tuple[str, str, str, str], ...] = (
    ("block crawlers", "http_user_agent", r"^(\w+\s?)*(bot|crawl|spider)$", "return 403;"),
    ("block SQL injection probes", "args", r"(.*=.*)*(union|select|sleep)\(", "return 403;"),
    ("block path traversal", "request_uri", r"^(/[a-z0-9_.-]+)+/\.\./", "return 400;"),
)


class EdgeFilterCpu(SimScenario):
    family = "EdgeFilterCpu"
    app = SOCIAL_NETWORK
    layer = "application"
    difficulty = "hard"
    summary = "The whole social network is slow and most requests time out; back ends look idle."
    description = (
        "Since this morning nearly every page of the social network is extremely slow and most requests "
        "time out: timelines and posting alike. Pods are Running and Ready, nothing restarts, and the "
        "back-end services report low latency. A security hardening change went out earlier today."
    )
    mechanism = Mechanism(
        "edge_filter_cpu",
        "application",
        "a pathological regex rule at the edge proxy burns CPU on every request",
        (
            r"\bcatastrophic backtracking\b",
            r"\bbacktrack\w*\b",
            r"\bredos\b",
            r"\b(?:pathological|nested|exponential|expensive|slow|bad)\b[^.;\n]{0,30}?\b(?:regex|regexp|regular expression|pcre)\w*\b",
            r"\b(?:regex|regexp|regular expression)\w*\b[^.;\n]{0,60}?\b(?:cpu|slow|saturat\w*|expensive|backtrack\w*)\b",
            r"\b(?:waf|filter|security) rule\b[^.;\n]{0,60}?\b(?:cpu|slow|saturat\w*|regex\w*)\b",
        ),
        detail_keys=("rule", "variable"),
        compatible=("resource_exhaustion",),
    )

    def draw_variant(self, backend: "ModelBackend", rng: np.random.Generator) -> dict[str, Any]:
        idx = int(rng.integers(0, len(_RULES)))
        ticket, var, pattern, action = _RULES[idx]
        cm = backend.api.get("ConfigMap", GATEWAY, self.namespace)
        return {
            "rule_index": idx,
            "ticket": ticket,
            "variable": var,
            "pattern": pattern,
            "rule": f'    # {ticket} (SEC-{1400 + 37 * idx})\n    if (${var} ~* "{pattern}") {{\n      {action}\n    }}\n\n',
            "original_conf": cm["data"][NGINX_CONF_KEY],
        }

    def _fault(self) -> NginxFilterRule:
        v = self.variant
        return NginxFilterRule(self.namespace, GATEWAY, NGINX_CONF_KEY, GATEWAY, _ANCHOR, v["rule"])

    def inject(self, backend: "ModelBackend") -> None:
        self._fault().inject(backend)

    def root_cause(self) -> RootCause:
        v = self.variant
        return RootCause(
            component=f"configmap/{GATEWAY}",
            namespace=self.namespace,
            layer="application",
            mechanism="pathological regex filter rule at the edge proxy saturates its CPU",
            summary=(
                f"A '{v['ticket']}' rule added to nginx.conf in configmap/{GATEWAY} matches ${v['variable']} against "
                f"the regex {v['pattern']}, whose nested quantifier backtracks catastrophically: every request burns CPU "
                f"in the {GATEWAY} workers, the gateway serves a fraction of the load and most requests time out, while "
                "the back ends stay fast. Impact: home timeline, user timelines and posting time out for users of social-network."
            ),
            details={"rule": v["pattern"], "variable": "$" + v["variable"], "configmap": GATEWAY, "key": NGINX_CONF_KEY},
            affected=(f"configmap/{GATEWAY}", f"deployment/{GATEWAY}"),
        )

    def brief(self) -> str:
        return (
            f"PAGE: users of the {self.app.name} site (namespace {self.namespace}) report that nearly every request "
            "(home timeline, user timelines, posting) is very slow or times out. The problem started a few minutes "
            "ago. Find the root cause, repair it durably, and submit your diagnosis."
        )

    def reference_solution(self) -> list[str]:
        ns = self.namespace
        original = self.variant["original_conf"]
        patch = json.dumps({"data": {NGINX_CONF_KEY: original}}).replace("'", "'\\''")
        return [
            f"kubectl top pods -n {ns}",
            f"kubectl rollout history deployment/{GATEWAY} -n {ns}",
            f"kubectl get configmap {GATEWAY} -n {ns} -o yaml",
            # put the file back as it was before the push, then let new workers load it
            f"kubectl patch configmap {GATEWAY} -n {ns} --type merge -p '{patch}'",
            f"kubectl rollout restart deployment/{GATEWAY} -n {ns}",
        ]

    def wrong_fixes(self) -> dict[str, list[str]]:
        ns = self.namespace
        return {
            "rollout_restart_gateway": [f"kubectl rollout restart deployment/{GATEWAY} -n {ns}"],
            "delete_gateway_pod": [f"kubectl delete pod -n {ns} -l {self.app.label_key}={GATEWAY}"],
            "scale_gateway_up": [f"kubectl scale deployment/{GATEWAY} -n {ns} --replicas=3"],
            "restart_backends": [f"kubectl rollout restart deployment/{d} -n {ns}" for d in ("home-timeline-service", "user-timeline-service", "compose-post-service")],
            "scale_gateway_to_zero": [f"kubectl scale deployment/{GATEWAY} -n {ns} --replicas=0"],
        }

    def allowed_changes(self) -> list[AllowedChange]:
        # rewriting the rule with a linear regex (instead of deleting it) is a correct repair too
        return [AllowedChange("ConfigMap", self.namespace, GATEWAY, "modified")]

    def cause_checks(self, backend: "ModelBackend") -> list[Check]:
        key = self.app.label_key
        uids = [p["metadata"]["uid"] for p in backend.api.list("Pod", self.namespace) if (p["metadata"].get("labels") or {}).get(key) == GATEWAY and not p["metadata"].get("deletionTimestamp")]
        bad = []
        for uid in uids:
            for rule in backend.model.gateway_rules(self.app.name, uid):
                if rule.catastrophic:
                    bad.append(f"{rule.subject} ~ {rule.pattern}")
        detail = ("the gateway still evaluates backtracking regexes: " + ", ".join(sorted(set(bad)))) if bad else "no backtracking regex in the running gateway's config"
        return [Check("gateway_regex_linear", not bad and bool(uids), detail if uids else f"no running {GATEWAY} pod")]
