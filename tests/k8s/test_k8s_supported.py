"""Which scenarios the KubernetesBackend takes: simulator-only ones are refused by their type."""

from __future__ import annotations

import pytest

import sre_env
from sre_env.envs.base import SimScenario
from sre_env.envs.registry import scenario_class
from sre_env.k8s.oracles import LIVE_SCENARIOS


def test_simulator_only_scenarios_are_refused_by_type(paused) -> None:
    backend = paused.backend(allow_unverified=True)
    try:
        refused, taken = [], []
        for env_id in sre_env.ENV_IDS:
            cls = scenario_class(env_id)
            if issubclass(cls, SimScenario):
                with pytest.raises(sre_env.ScenarioError, match="runs on the simulator only"):
                    backend.check_supported(cls)
                refused.append(env_id)
            else:
                backend.check_supported(cls)  # allow_unverified: every seam scenario may be tried
                taken.append(env_id)
        assert refused and taken
    finally:
        backend.close()


def test_the_verified_ids_are_seam_scenarios() -> None:
    assert all(not issubclass(scenario_class(name), SimScenario) for name in LIVE_SCENARIOS)
