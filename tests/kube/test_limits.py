"""The depth, alias and size limits every write meets, in the shell and through serve alike."""

from __future__ import annotations

import pytest
import yaml

from sre_env.kube.limits import SIM_MAX_DEPTH, json_too_deep, load_yaml, load_yaml_all, nesting_depth


def test_json_depth_is_measured_linearly_and_exactly() -> None:
    assert json_too_deep("[" * SIM_MAX_DEPTH + "]" * SIM_MAX_DEPTH) is None
    assert json_too_deep("[" * (SIM_MAX_DEPTH + 1)) == "invalid character '[' exceeded max depth"
    assert json_too_deep('["' + "[" * 10_000 + '"]') is None  # brackets inside strings do not nest
    assert json_too_deep('["\\"' + "{" * 1000 + '"]') is None


def test_yaml_depth_counts_block_and_flow_nesting() -> None:
    assert nesting_depth("a:\n  b:\n    c: [1, [2]]\n", yaml=True)[0] == 5
    with pytest.raises(yaml.YAMLError, match="exceeded max depth"):
        load_yaml("a: " + "[" * (SIM_MAX_DEPTH + 1) + "]" * (SIM_MAX_DEPTH + 1))


def test_yaml_alias_bombs_are_refused_and_plain_aliases_kept() -> None:
    laughs = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join('*' + chr(97 + i) for _ in range(10))}]\n" for i in range(8))
    with pytest.raises(yaml.YAMLError, match="excessive aliasing"):
        load_yaml(laughs)
    with pytest.raises(yaml.YAMLError, match="excessive aliasing"):
        load_yaml_all("---\nk: v\n---\n" + laughs)
    assert load_yaml("a: &x [1]\nb: *x\n") == {"a": [1], "b": [1]}
    assert load_yaml_all("a: 1\n---\nb: 2\n") == [{"a": 1}, {"b": 2}]
