"""Scheduling predicates on labels: node selectors/affinity and inter-pod (anti-)affinity.

Only the *required* (``requiredDuringSchedulingIgnoredDuringExecution``) terms
filter nodes, as in kube-scheduler's NodeAffinity and InterPodAffinity plugins;
preferred terms only score, and scoring by them does not change which nodes
fit, so they are ignored here. The reasons are the plugins' own strings.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sre_env.kube.selectors import (
    has_labels,
    label_selector_matches,
    requirement_matches,
)

__all__ = [
    "AFFINITY_REASON",
    "ANTI_AFFINITY_REASON",
    "EXISTING_ANTI_AFFINITY_REASON",
    "NODE_AFFINITY_REASON",
    "inter_pod_reason",
    "node_matches",
]

Obj = dict[str, Any]
NODE_AFFINITY_REASON = "node(s) didn't match Pod's node affinity/selector"
ANTI_AFFINITY_REASON = "node(s) didn't match pod anti-affinity rules"
AFFINITY_REASON = "node(s) didn't match pod affinity rules"
EXISTING_ANTI_AFFINITY_REASON = "node(s) didn't satisfy existing pods anti-affinity rules"


def node_matches(pod: Obj, node: Obj) -> bool:
    """nodeSelector and required node affinity (terms are ORed, expressions ANDed)."""
    spec = pod.get("spec") or {}
    labels = node["metadata"].get("labels") or {}
    if not has_labels(spec.get("nodeSelector") or {}, labels):
        return False
    required = (((spec.get("affinity") or {}).get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    terms = required.get("nodeSelectorTerms")
    if not terms:
        return True
    fields = {"metadata.name": node["metadata"]["name"]}
    for term in terms:
        exprs = term.get("matchExpressions") or []
        fexprs = term.get("matchFields") or []
        if not exprs and not fexprs:
            continue  # an empty term matches nothing
        if all(requirement_matches(e, labels) for e in exprs) and all(requirement_matches(e, fields) for e in fexprs):
            return True
    return False


def _term_pods(term: Obj, owner_ns: str, pods: Iterable[Obj]) -> list[Obj]:
    namespaces = set(term.get("namespaces") or ()) or ({owner_ns} if term.get("namespaceSelector") is None else None)
    out = []
    for p in pods:
        if namespaces is not None and p["metadata"]["namespace"] not in namespaces:
            continue
        if label_selector_matches(term.get("labelSelector"), p["metadata"].get("labels") or {}):
            out.append(p)
    return out


def _domain(node: Obj | None, key: str) -> str | None:
    if node is None:
        return None
    return (node["metadata"].get("labels") or {}).get(key)


def _required(pod: Obj, kind: str) -> list[Obj]:
    return list((((pod.get("spec") or {}).get("affinity") or {}).get(kind) or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or ())


def inter_pod_reason(pod: Obj, node: Obj, nodes: dict[str, Obj], placed: list[Obj]) -> str | None:
    """Why ``pod`` may not go to ``node`` given the pods already ``placed`` (bound, not terminating)."""
    ns = pod["metadata"]["namespace"]
    labels = pod["metadata"].get("labels") or {}
    # existing pods' anti-affinity against the incoming pod
    for other in placed:
        for term in _required(other, "podAntiAffinity"):
            key = term.get("topologyKey", "")
            if not _term_pods(term, other["metadata"]["namespace"], [pod]):
                continue
            if _domain(node, key) is not None and _domain(node, key) == _domain(nodes.get(other["spec"].get("nodeName", "")), key):
                return EXISTING_ANTI_AFFINITY_REASON
    for term in _required(pod, "podAntiAffinity"):
        key = term.get("topologyKey", "")
        here = _domain(node, key)
        if here is None:
            continue
        for other in _term_pods(term, ns, placed):
            if _domain(nodes.get(other["spec"].get("nodeName", "")), key) == here:
                return ANTI_AFFINITY_REASON
    for term in _required(pod, "podAffinity"):
        key = term.get("topologyKey", "")
        here = _domain(node, key)
        matches = _term_pods(term, ns, placed)
        if not matches and label_selector_matches(term.get("labelSelector"), labels):
            continue  # the first pod of a self-affine group may go anywhere
        if here is None or not any(_domain(nodes.get(o["spec"].get("nodeName", "")), key) == here for o in matches):
            return AFFINITY_REASON
    return None
