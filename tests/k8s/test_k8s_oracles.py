"""Scenarios' cause checks over the API (no model behind the backend), on a served cluster the tests break by hand."""

from __future__ import annotations

import numpy as np
import pytest

from sre_env.envs.app_common import api_pod_env
from sre_env.envs.registry import NAMES, scenario_class
from sre_env.k8s.oracles import LIVE_SCENARIOS, live_scenario_name
from sre_env.sim.model import ModelBackend

NS = "hotel-reservation"


def _scenario(name: str, variant: dict):
    scenario = scenario_class(name)(np.random.default_rng(0))
    scenario.variant = variant
    return scenario


def test_the_verified_ids_are_registered() -> None:
    assert LIVE_SCENARIOS <= set(NAMES)
    assert live_scenario_name(scenario_class("ScalePodZero")) == "ScalePodZero"
    assert live_scenario_name(scenario_class("MissingEnvVar-AstronomyShop")) == "MissingEnvVar-AstronomyShop"
    assert live_scenario_name(scenario_class("MisconfiguredEnv-AstronomyShop")) is None  # not verified


def test_pod_env_resolves_values_refs_and_env_from(paused) -> None:
    backend = paused.backend()
    try:
        api = backend.api
        pod = api.list("Pod", NS, "io.kompose.service=rate")[0]
        env = api_pod_env(api, pod, "hotel-reserv-rate")
        assert env["CONSUL_ADDRESS"] == "consul:8500"  # a plain value
        assert env["MONGO_USERNAME"] and env["MONGO_PASSWORD"]  # secretKeyRef, decoded
        assert "MONGO_DATABASE" in env  # envFrom a ConfigMap
        assert api_pod_env(api, pod, "nope") == {}
    finally:
        backend.close()


def test_a_selector_that_picks_another_services_pods_fails(paused) -> None:
    backend = paused.backend()
    try:
        assert not isinstance(backend, ModelBackend)  # the checks take their API path
        scenario = _scenario("WrongServiceSelector", {"service": "profile", "port": 8081, "wrong": "geo", "mode": "other"})
        assert [c.passed for c in scenario.cause_checks(backend)] == [True]
        backend.api.patch("Service", "profile", NS, {"spec": {"selector": {"io.kompose.service": "geo"}}}, "merge")
        with paused.server.lock:
            paused.sim.advance(5)  # the endpoints controller follows the selector
        (check,) = scenario.cause_checks(backend)
        assert not check.passed and "io.kompose.service=geo" in check.detail
    finally:
        backend.close()


def test_missing_env_var_check_reads_the_pods_not_the_deployment(paused) -> None:
    backend = paused.backend()
    try:
        scenario = _scenario("MissingEnvVar", {"service": "geo", "container": "hotel-reserv-geo", "var": "GEO_MONGO_ADDRESS", "value": "mongodb-geo:27017"})
        assert scenario.cause_checks(backend)[0].passed
        backend.api.patch("Deployment", "geo", NS, {"spec": {"template": {"spec": {"containers": [{"name": "hotel-reserv-geo", "env": [{"name": "GEO_MONGO_ADDRESS", "value": "localhost:27017"}]}]}}}}, "strategic")
        with paused.server.lock:
            paused.sim.advance(30)
        (check,) = scenario.cause_checks(backend)
        assert not check.passed and "localhost:27017" in check.detail
    finally:
        backend.close()


@pytest.mark.parametrize("name", sorted(LIVE_SCENARIOS))
def test_every_verified_scenario_has_checks_that_run_over_the_api(name: str, paused) -> None:
    backend = paused.backend()
    try:
        scenario = scenario_class(name)(np.random.default_rng(1))
        if scenario.app.namespace != NS:
            pytest.skip("the served fixture runs hotel-reservation; tests/k8s/test_k8s_scenario.py covers the rest by family")
        scenario.variant = scenario.choose_variant(backend)
        checks = scenario.cause_checks(backend)
        assert checks and all(c.passed for c in checks), checks  # healthy cluster: the cause is absent
    finally:
        backend.close()
