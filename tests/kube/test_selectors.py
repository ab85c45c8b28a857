"""The one label matcher, against the selector semantics the Kubernetes documentation gives.

Sources: "Labels and Selectors" (equality- and set-based requirements, empty and
null selectors), the LabelSelector API reference, and "Assigning Pods to Nodes"
(node affinity's ``Gt``/``Lt`` and ORed terms).
"""

from __future__ import annotations

import pytest

from sre_env.kube.affinity import node_matches
from sre_env.kube.selectors import (
    has_labels,
    label_selector_matches,
    requirement_matches,
)

POD = {"app": "geo", "tier": "backend", "environment": "production"}


def test_empty_selector_selects_everything() -> None:
    assert label_selector_matches({}, POD)
    assert label_selector_matches({}, {})
    assert label_selector_matches({"matchLabels": {}, "matchExpressions": []}, None)


def test_null_selector_selects_nothing() -> None:
    assert not label_selector_matches(None, POD)
    assert not label_selector_matches(None, {})


def test_match_labels_is_key_in_one_value() -> None:
    assert label_selector_matches({"matchLabels": {"app": "geo"}}, POD)
    assert not label_selector_matches({"matchLabels": {"app": "rate"}}, POD)
    assert not label_selector_matches({"matchLabels": {"owner": "geo"}}, POD)
    assert label_selector_matches({"matchExpressions": [{"key": "app", "operator": "In", "values": ["geo"]}]}, POD)


def test_match_labels_and_expressions_are_anded() -> None:
    sel = {"matchLabels": {"app": "geo"}, "matchExpressions": [{"key": "tier", "operator": "In", "values": ["frontend"]}]}
    assert not label_selector_matches(sel, POD)
    sel["matchExpressions"][0]["values"] = ["frontend", "backend"]
    assert label_selector_matches(sel, POD)
    sel["matchExpressions"].append({"key": "environment", "operator": "DoesNotExist"})
    assert not label_selector_matches(sel, POD)


@pytest.mark.parametrize(
    ("requirement", "labels", "expected"),
    [
        ({"key": "environment", "operator": "In", "values": ["production", "qa"]}, POD, True),
        ({"key": "environment", "operator": "In", "values": ["qa"]}, POD, False),
        # In needs the key: an object without it is not in any set
        ({"key": "partition", "operator": "In", "values": ["customerA"]}, POD, False),
        ({"key": "tier", "operator": "NotIn", "values": ["frontend", "backend"]}, POD, False),
        ({"key": "tier", "operator": "NotIn", "values": ["frontend"]}, POD, True),
        # NotIn also selects objects that do not have the key at all
        ({"key": "partition", "operator": "NotIn", "values": ["customerA"]}, POD, True),
        ({"key": "app", "operator": "Exists"}, POD, True),
        ({"key": "partition", "operator": "Exists"}, POD, False),
        ({"key": "partition", "operator": "DoesNotExist"}, POD, True),
        ({"key": "app", "operator": "DoesNotExist"}, POD, False),
        # a label with an empty value still exists
        ({"key": "canary", "operator": "Exists"}, {"canary": ""}, True),
    ],
)
def test_set_based_requirements(requirement: dict, labels: dict, expected: bool) -> None:
    assert requirement_matches(requirement, labels) is expected
    assert label_selector_matches({"matchExpressions": [requirement]}, labels) is expected


@pytest.mark.parametrize(
    ("requirement", "expected"),
    [
        ({"key": "cores", "operator": "Gt", "values": ["4"]}, True),
        ({"key": "cores", "operator": "Gt", "values": ["8"]}, False),
        ({"key": "cores", "operator": "Lt", "values": ["16"]}, True),
        ({"key": "cores", "operator": "Lt", "values": ["8"]}, False),
        # Gt/Lt never match a missing key or a value that is not an integer
        ({"key": "memory", "operator": "Gt", "values": ["1"]}, False),
        ({"key": "zone", "operator": "Lt", "values": ["9"]}, False),
    ],
)
def test_node_affinity_numeric_operators(requirement: dict, expected: bool) -> None:
    assert requirement_matches(requirement, {"cores": "8", "zone": "eu-1"}) is expected


def test_unknown_operator_matches_nothing() -> None:
    assert not requirement_matches({"key": "app", "operator": "Equals", "values": ["geo"]}, POD)
    assert not requirement_matches({"key": "app", "values": ["geo"]}, POD)


def test_map_selector() -> None:
    assert has_labels({"app": "geo"}, POD)
    assert not has_labels({"app": "geo", "tier": "frontend"}, POD)
    assert has_labels({}, POD)
    assert not has_labels({"app": "geo"}, None)


def _pod(spec: dict) -> dict:
    return {"metadata": {"name": "p", "namespace": "default"}, "spec": spec}


NODE = {"metadata": {"name": "worker-1", "labels": {"disktype": "ssd", "kubernetes.io/hostname": "worker-1"}}}


def test_node_selector_and_affinity_terms() -> None:
    assert node_matches(_pod({"nodeSelector": {"disktype": "ssd"}}), NODE)
    assert not node_matches(_pod({"nodeSelector": {"disktype": "hdd"}}), NODE)

    def affinity(*terms: dict) -> dict:
        return {"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": list(terms)}}}}

    miss = {"matchExpressions": [{"key": "disktype", "operator": "In", "values": ["hdd"]}]}
    hit = {"matchExpressions": [{"key": "disktype", "operator": "In", "values": ["ssd"]}]}
    by_name = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["worker-1"]}]}
    # terms are ORed
    assert node_matches(_pod(affinity(miss, hit)), NODE)
    assert not node_matches(_pod(affinity(miss)), NODE)
    assert node_matches(_pod(affinity(by_name)), NODE)
    # an empty term matches no node
    assert not node_matches(_pod(affinity({})), NODE)
    # nodeSelector and node affinity must both hold
    assert not node_matches(_pod({"nodeSelector": {"disktype": "hdd"}, **affinity(hit)}), NODE)
