"""The one toleration check, against "Taints and Tolerations" in the Kubernetes documentation.

A toleration matches a taint when the keys and effects are the same and either
the operator is ``Exists`` or it is ``Equal`` (the default) and the values are
equal; an empty key with ``Exists`` matches every taint, an empty effect every
effect.
"""

from __future__ import annotations

import pytest

from sre_env.kube.tolerations import tolerates, toleration_matches, untolerated_taint

TAINT = {"key": "key1", "value": "value1", "effect": "NoSchedule"}


@pytest.mark.parametrize(
    ("toleration", "expected"),
    [
        ({"key": "key1", "operator": "Equal", "value": "value1", "effect": "NoSchedule"}, True),
        ({"key": "key1", "operator": "Exists", "effect": "NoSchedule"}, True),
        # the operator defaults to Equal
        ({"key": "key1", "value": "value1", "effect": "NoSchedule"}, True),
        ({"key": "key1", "value": "value2", "effect": "NoSchedule"}, False),
        ({"key": "key1", "operator": "Equal", "effect": "NoSchedule"}, False),
        ({"key": "key2", "operator": "Exists", "effect": "NoSchedule"}, False),
        ({"key": "key1", "operator": "Exists", "effect": "NoExecute"}, False),
        # an empty effect matches all effects with that key
        ({"key": "key1", "operator": "Exists"}, True),
        ({"key": "key1", "operator": "Equal", "value": "value1"}, True),
        # an empty key with Exists matches every key, value and effect
        ({"operator": "Exists"}, True),
        ({"operator": "Exists", "effect": "NoSchedule"}, True),
        ({"operator": "Exists", "effect": "NoExecute"}, False),
    ],
)
def test_toleration_matches(toleration: dict, expected: bool) -> None:
    assert toleration_matches(toleration, TAINT) is expected
    assert tolerates([toleration], TAINT) is expected


def test_a_taint_without_value_is_tolerated_by_equal_without_value() -> None:
    taint = {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"}
    assert tolerates([{"key": "node.kubernetes.io/unreachable", "operator": "Equal", "effect": "NoExecute"}], taint)
    assert not tolerates([{"key": "node.kubernetes.io/unreachable", "operator": "Equal", "value": "x", "effect": "NoExecute"}], taint)


def test_no_tolerations_tolerate_nothing() -> None:
    assert not tolerates([], TAINT)
    assert not tolerates(None, TAINT)


def test_any_toleration_is_enough() -> None:
    assert tolerates([{"key": "other", "operator": "Exists"}, {"key": "key1", "operator": "Exists"}], TAINT)


def test_untolerated_taint_considers_only_the_filtering_effects() -> None:
    prefer = {"key": "spot", "value": "true", "effect": "PreferNoSchedule"}
    evict = {"key": "dedicated", "value": "db", "effect": "NoExecute"}
    assert untolerated_taint([prefer], []) is None
    assert untolerated_taint([prefer, TAINT, evict], []) is TAINT
    assert untolerated_taint([prefer, TAINT, evict], [{"key": "key1", "operator": "Exists"}]) is evict
    assert untolerated_taint([prefer, TAINT, evict], [{"operator": "Exists"}]) is None
    assert untolerated_taint(None, None) is None
    assert untolerated_taint([TAINT, evict], [], effects=("NoExecute",)) is evict
