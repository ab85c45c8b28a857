"""Kubernetes label and field selectors: the one place labels are matched.

Three shapes of selector, each written once:

* a ``metav1.LabelSelector`` object (``matchLabels`` + ``matchExpressions``), as
  webhooks, NetworkPolicies, pod (anti-)affinity and Gatekeeper match on:
  :func:`label_selector_matches`, with its requirements (also the
  ``NodeSelectorRequirement`` of node affinity) in :func:`requirement_matches`;
* a plain map selector (a Service's ``spec.selector``, a pod's
  ``nodeSelector``, a workload's ``matchLabels``): :func:`has_labels`;
* the text form kubectl and list calls take (``app=geo,tier!=db``,
  ``env in (a,b)``, ``!k``): :func:`parse_label_selector`, and field selectors.

The semantics are those of k8s.io/apimachinery's ``labels.Requirement`` and
``LabelSelectorAsSelector``: a null selector matches nothing, ``{}`` everything;
``NotIn`` and ``DoesNotExist`` match an object without the key, ``In``,
``Exists``, ``Gt`` and ``Lt`` do not. A caller whose API gives an absent or
empty selector another meaning (an admission webhook's defaulted ``{}``, a
Service without a selector, which selects no pods) says so at its call site.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Callable

__all__ = [
    "has_labels",
    "label_selector_matches",
    "parse_field_selector",
    "parse_label_selector",
    "requirement_matches",
    "selector_from_match_labels",
]

Predicate = Callable[[dict[str, str]], bool]

_SET_RE = re.compile(r"^\s*(!?)\s*([A-Za-z0-9_.\-/]+)\s*(?:(notin|in)\s*\(([^)]*)\))?\s*$")
_EQ_RE = re.compile(r"^\s*([A-Za-z0-9_.\-/]+)\s*(==|=|!=)\s*([A-Za-z0-9_.\-]*)\s*$")


def _split_terms(selector: str) -> list[str]:
    terms, depth, cur = [], 0, []
    for ch in selector:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            terms.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    if cur:
        terms.append("".join(cur))
    return [t for t in terms if t.strip()]


def parse_label_selector(selector: str) -> Predicate:
    """Compile a label selector; raises ValueError with kubectl's wording on bad syntax."""
    preds: list[Predicate] = []
    for term in _split_terms(selector or ""):
        m = _EQ_RE.match(term)
        if m:
            key, op, val = m.groups()
            if op == "!=":
                preds.append(lambda l, k=key, v=val: l.get(k) != v)
            else:
                preds.append(lambda l, k=key, v=val: l.get(k) == v)
            continue
        m = _SET_RE.match(term)
        if m:
            neg, key, op, vals = m.groups()
            if op:
                if neg:
                    raise ValueError(f"unable to parse requirement: {term.strip()}")
                values = {v.strip() for v in vals.split(",") if v.strip()}
                if op == "in":
                    preds.append(lambda l, k=key, vs=values: l.get(k) in vs)
                else:
                    preds.append(lambda l, k=key, vs=values: l.get(k) not in vs)
            elif neg:
                preds.append(lambda l, k=key: k not in l)
            else:
                preds.append(lambda l, k=key: k in l)
            continue
        raise ValueError(f"unable to parse requirement: found '{term.strip()}', expected: in, notin, =, ==, !=, gt, lt")
    return lambda labels: all(p(labels) for p in preds)


def has_labels(match: Mapping[str, Any], labels: Mapping[str, str] | None) -> bool:
    """A map selector: every key/value pair of ``match`` is among ``labels`` (``{}`` matches everything)."""
    return match.items() <= (labels or {}).items()


def requirement_matches(requirement: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    """One ``matchExpressions`` entry against ``labels`` (``labels.Requirement.Matches``).

    ``In``/``NotIn`` compare the value with ``values``; ``Exists``/``DoesNotExist``
    only look at the key; ``Gt``/``Lt`` (node affinity) compare integers and never
    match a missing key or a value that is not a number. An operator the API
    server would refuse matches nothing.
    """
    key, op = requirement.get("key", ""), requirement.get("operator")
    values = [str(v) for v in requirement.get("values") or ()]
    if op == "In":
        return key in labels and labels[key] in values
    if op == "NotIn":
        return key not in labels or labels[key] not in values
    if op == "Exists":
        return key in labels
    if op == "DoesNotExist":
        return key not in labels
    if op in ("Gt", "Lt") and key in labels and values:
        try:
            have, want = int(labels[key]), int(values[0])
        except ValueError:
            return False
        return have > want if op == "Gt" else have < want
    return False


def label_selector_matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str] | None) -> bool:
    """A ``metav1.LabelSelector``: every ``matchLabels`` pair and every requirement holds.

    ``None`` (a null selector) matches nothing and ``{}`` matches everything, as
    ``LabelSelectorAsSelector`` has it.
    """
    if selector is None:
        return False
    labels = labels or {}
    return has_labels(selector.get("matchLabels") or {}, labels) and all(requirement_matches(r, labels) for r in selector.get("matchExpressions") or ())


def selector_from_match_labels(match: dict[str, str]) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted(match.items()))


_FIELD_PATHS = {
    "metadata.name": ("metadata", "name"),
    "metadata.namespace": ("metadata", "namespace"),
    "status.phase": ("status", "phase"),
    "spec.nodeName": ("spec", "nodeName"),
    "spec.restartPolicy": ("spec", "restartPolicy"),
    "spec.schedulerName": ("spec", "schedulerName"),
    "spec.serviceAccountName": ("spec", "serviceAccountName"),
    "spec.hostNetwork": ("spec", "hostNetwork"),
    "status.podIP": ("status", "podIP"),
    "status.nominatedNodeName": ("status", "nominatedNodeName"),
    "spec.clusterIP": ("spec", "clusterIP"),
    "spec.type": ("spec", "type"),
    "status.replicas": ("status", "replicas"),
    "status.successful": ("status", "succeeded"),
    "spec.unschedulable": ("spec", "unschedulable"),
    "involvedObject.name": ("involvedObject", "name"),
    "involvedObject.kind": ("involvedObject", "kind"),
    # the rest of the Event field labels kubectl describe and `get events --field-selector` use
    "involvedObject.namespace": ("involvedObject", "namespace"),
    "involvedObject.uid": ("involvedObject", "uid"),
    "involvedObject.apiVersion": ("involvedObject", "apiVersion"),
    "involvedObject.fieldPath": ("involvedObject", "fieldPath"),
    "involvedObject.resourceVersion": ("involvedObject", "resourceVersion"),
    "source": ("source", "component"),
    "reportingComponent": ("reportingComponent",),
    "type": ("type",),
    "reason": ("reason",),
}


def parse_field_selector(selector: str) -> Callable[[dict[str, Any]], bool]:
    preds = []
    for term in _split_terms(selector or ""):
        m = re.match(r"^\s*([A-Za-z.]+)\s*(==|=|!=)\s*(.*?)\s*$", term)
        if not m or m.group(1) not in _FIELD_PATHS:
            raise ValueError(f'"{term.strip()}" is not a known field selector: only "{", ".join(sorted(_FIELD_PATHS))}"')
        path, op, val = _FIELD_PATHS[m.group(1)], m.group(2), m.group(3)

        def get(obj: dict[str, Any], p: tuple[str, ...] = path) -> str:
            cur: Any = obj
            for part in p:
                cur = cur.get(part) if isinstance(cur, dict) else None
            if cur is None:
                return ""
            return str(cur).lower() if isinstance(cur, bool) else str(cur)

        if op == "!=":
            preds.append(lambda o, g=get, v=val: g(o) != v)
        else:
            preds.append(lambda o, g=get, v=val: g(o) == v)
    return lambda obj: all(p(obj) for p in preds)
