"""The catalog covers the incident families of SCENARIOS.md, and the suites are what they say."""

from __future__ import annotations

import pytest

from sre_env.envs.base import LAYERS
from sre_env.envs.registry import LITE, NAMES, list_scenarios, scenarios

SCENARIOS = scenarios()

#: the family tables of the incident catalog (a "/" row counts each of its names)
TABLES: dict[str, tuple[str, ...]] = {
    "application": (
        "MissingEnvVar", "MisconfiguredEnv", "IncorrectPortAssignment", "IncorrectImage", "BuggyRelease",
        "MongoAuthRevoked", "MongoUserMissing", "CacheAuthChanged", "CacheMemoryExhausted", "StaleSecretCredentials",
        "ConfigMapDrift", "EnvVarShadowing", "FeatureFlag", "DBLockContention", "KafkaPoisonPill", "EdgeFilterCpu",
    ),
    "kubernetes": (
        "TargetPortMisconfig", "WrongServiceSelector", "MissingService", "MissingConfigMap", "ScalePodZero",
        "NonExistentNode", "TaintNoToleration", "AntiAffinityDeadlock", "RequestTooLarge", "LimitTooSmall",
        "NamespaceQuota", "LivenessProbeMisconfig", "LivenessProbeTooAggressive", "ReadinessProbeMisconfig",
        "InitContainerHang", "PVCMismatch", "DuplicatePVCMounts", "PVAffinityViolation", "RollingUpdateMisconfigured",
        "HPAWithoutRequests", "PriorityPreemption", "SidecarPortConflict", "ServicePortConflict", "ExpiredTLS",
        "AdmissionWebhookOutage", "WebhookTlsMismatch", "MutatingWebhookLimits", "PodSecurityRestricted",
        "RBACMisconfig", "FinalizerDeadlock", "CronJobSidecarBlocks", "KubeletEvictionMisconfig",
    ),
    "network": (
        "ServiceDNSFailure", "StaleCoreDNSConfig", "WrongDNSPolicy", "NetworkPolicyBlock", "IngressMisroute",
        "InternalTrafficPolicyLocal", "KubeProxyBroken", "PodCIDRExhaustion", "NetworkPartition",
    ),
    "os": (
        "EphemeralPortExhaustion", "ConntrackExhaustion", "FileDescriptorExhaustion", "DevShmExhaustion",
        "CfsThrottling", "NodeClockDrift", "KubeletDown", "DiskFull", "InodeExhaustion",
    ),
    "hardware": ("DiskSector", "SilentDataCorruption", "NicPacketCorruption", "MemoryEccErrors", "ClocksourceUnstable", "NicLinkFlap"),
    "operator": ("OperatorMisoperation",),
    "compound": ("RetryStorm", "GcDegradation", "CacheFlushStampede", "Correlated", "Concurrent"),
}
#: families of the catalog with no scenario yet (strict xfail: adding one makes the test say so)
NOT_YET: frozenset[str] = frozenset()

FAMILIES = {cls.family for cls in SCENARIOS.values()}


@pytest.mark.parametrize("family", [f for fams in TABLES.values() for f in fams])
def test_every_catalog_family_has_an_id(family: str) -> None:
    if family in NOT_YET:
        pytest.xfail(f"{family} has no scenario yet")
    assert family in FAMILIES, f"no registered scenario of family {family}"


def test_not_yet_list_is_honest() -> None:
    assert not (NOT_YET & FAMILIES), f"remove {sorted(NOT_YET & FAMILIES)} from NOT_YET: they have scenarios now"


def test_every_layer_is_represented_and_known() -> None:
    layers = {cls.layer for cls in SCENARIOS.values()}
    assert layers <= set(LAYERS)
    assert {"application", "kubernetes", "network", "os", "hardware", "operator", "compound"} <= layers


def test_registry_size() -> None:
    assert len(SCENARIOS) >= 90


def test_lite_suite_covers_every_layer_in_about_twenty_ids() -> None:
    lite = list_scenarios(suite="lite")
    assert 15 <= len(lite) <= 25
    assert {info.layer for _, info in lite} == {cls.layer for cls in SCENARIOS.values()}
    assert all(name in SCENARIOS for name in LITE)
    assert len(list_scenarios(suite="full")) == len(SCENARIOS)


def test_layer_filter() -> None:
    for layer in {cls.layer for cls in SCENARIOS.values()}:
        rows = list_scenarios(layer=layer)
        assert rows and all(info.layer == layer for _, info in rows)


def test_the_index_lists_what_the_catalogs_register() -> None:
    """The registry registers ids from sre_env.envs.index without importing the catalogs: the two must agree."""
    import importlib

    from sre_env.envs.index import CATALOGS

    for module, names in CATALOGS:
        assert tuple(importlib.import_module(f"sre_env.envs.{module}").SCENARIOS) == names, module
    assert NAMES == tuple(name for _, names in CATALOGS for name in names)


def test_registering_the_ids_imports_no_scenario_module() -> None:
    import subprocess
    import sys

    code = "import sys, sre_env, gymnasium as gym; gym.spec('SREGym/DiskSector-v0'); print(sorted(m for m in sys.modules if m.startswith(('sre_env.envs.catalog', 'sre_env.sim.')) or m in ('sre_env.env', 'sre_env.sim')))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "[]"


def test_the_scenario_of_an_id_cannot_be_overridden() -> None:
    import gymnasium as gym

    with pytest.raises(ValueError, match=r"SREGym/DiskSector-v0 is its own scenario; scenario='KubeletDown' cannot change it \(use gym.make\('SREGym/KubeletDown-v0'\)\)"):
        gym.make("SREGym/DiskSector-v0", scenario="KubeletDown")
    # the documented options stay overridable, and naming the id's own scenario is harmless
    env = gym.make("SREGym/DiskSector-v0", scenario="DiskSector", max_steps=7, task="diagnosis", noise="low")
    inner = env.unwrapped
    assert (inner.scenario_cls.__name__, inner.max_steps, inner.task, inner.noise) == ("DiskSector", 7, "diagnosis", "low")
