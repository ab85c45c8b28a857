"""The Backend seam: a scenario that is not a SimScenario uses nothing but the seam.

Each such scenario's lifecycle (``heldout_keys``, ``choose_variant``, ``setup``),
its cause checks and its trigger replay run against a backend that exposes only
the members of :class:`sre_env.backend.Backend` -- ``api`` and ``nodes`` with
only their protocols' methods, ``now`` and ``advance`` -- of a real simulated
cluster. A scenario that reached for the model (``backend.model``, the world
behind the API) would fail here; it must be a :class:`SimScenario` instead.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import sre_env
from sre_env.backend import Backend, ClusterAPI, NodeAccess
from sre_env.envs import base
from sre_env.envs.base import Scenario, SimScenario
from sre_env.envs.registry import scenario_class
from sre_env.sim.backend import SimBackend
from sre_env.sim.episodes import healthy_world
from sre_env.sim.model import ModelBackend

#: short, but long enough for controllers to act on what was injected
DEVELOP_S = 20.0


def _methods(protocol: type) -> list[str]:
    return sorted(n for n, v in vars(protocol).items() if not n.startswith("_") and callable(v))


class _Surface:
    """Only the named methods of ``target`` (a protocol's surface, nothing behind it)."""

    def __init__(self, target: Any, names: list[str]) -> None:
        for name in names:
            setattr(self, name, getattr(target, name))


class SeamOnly:
    """A backend with the Backend protocol's members of another one, and nothing else."""

    def __init__(self, backend: Backend) -> None:
        self.api = _Surface(backend.api, _methods(ClusterAPI))
        self.nodes = _Surface(backend.nodes, _methods(NodeAccess))
        self.advance = backend.advance
        self._clock = lambda: backend.now

    @property
    def now(self) -> float:
        return self._clock()


def _name(env_id: str) -> str:
    return env_id.removeprefix("SREGym/").rsplit("-v", 1)[0]


SEAM_IDS = [_name(i) for i in sre_env.ENV_IDS if not issubclass(scenario_class(i), SimScenario)]


def test_the_proxy_is_a_backend_and_has_no_model() -> None:
    seam = SeamOnly(SimBackend(healthy_world(scenario_class("ScalePodZero").app)))
    assert isinstance(seam, Backend) and not isinstance(seam, ModelBackend)
    assert not hasattr(seam, "model") and not hasattr(seam, "world") and not hasattr(seam.api, "world")


def test_the_split_between_seam_and_simulator_scenarios() -> None:
    # the families whose checks have an API path are among the seam scenarios
    for name in ("MissingEnvVar", "TargetPortMisconfig", "WrongServiceSelector", "MissingService", "ScalePodZero"):
        assert name in SEAM_IDS
    # a cause that lives in the model makes a scenario simulator-only, inherited by its other apps
    for name in ("DiskSector", "KubeletDown", "FeatureFlag-PaymentFailure", "ServiceDNSFailure-SocialNetwork", "Concurrent-DiskSectorAndMissingEnvVar"):
        assert issubclass(scenario_class(name), SimScenario)
    assert not issubclass(scenario_class("Concurrent-TargetPortAndMissingEnvVar"), SimScenario)


@pytest.mark.parametrize("name", SEAM_IDS)
def test_a_scenario_that_is_not_simulator_only_runs_on_the_seam_alone(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    cls: type[Scenario] = scenario_class(name)
    # draw the held-out keys here, not from another test's cached (simulator) draw
    monkeypatch.delitem(base._HELDOUT, cls, raising=False)
    seam = SeamOnly(SimBackend(healthy_world(cls.app)))
    held = cls.heldout_keys(seam)
    scenario = cls(np.random.default_rng(7), split="train" if held else "all")
    variant = scenario.choose_variant(seam)
    assert variant
    scenario.setup(seam, DEVELOP_S)
    checks = scenario.cause_checks(seam)
    assert checks and all(c.name and isinstance(c.passed, bool) for c in checks)
    assert not all(c.passed for c in checks), f"{name}: the injected cause is not visible through the seam: {checks}"
    assert isinstance(scenario.replay_trigger(seam), str)
