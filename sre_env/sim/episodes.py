"""Healthy clusters and developed incidents, built once per process and reused.

Building and warming an app (pulls, crash-and-retry start-up ordering, ten
minutes of normal traffic so metrics have history) takes a few hundred
milliseconds; every reset then restores the pickled result in milliseconds.
The warm-up uses a fixed seed, so the baseline is identical in every process.

An incident's first minutes depend only on the scenario's variant (which
service, which value): they run with randomness derived from the variant, so a
developed incident is a pure function of it and can be cached too. The episode
seed takes over once the agent starts acting.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from typing import Any

import numpy as np

from sre_env.apps.base import AppSpec
from sre_env.sim.backend import SimBackend
from sre_env.sim.kernel.hosts import DEFAULT_LAYOUT, ClusterLayout
from sre_env.sim.kernel.world import World
from sre_env.sim.engine import advance, build_world

__all__ = ["healthy_world", "developed_incident", "WARMUP_S"]

WARMUP_S = 900.0
#: developed incidents kept per process (~0.6 MB each; a training process cycling 4 scenarios keeps them all)
DEVELOPED_CACHE_SIZE = 128
_CACHE: dict[tuple[str, ClusterLayout], bytes] = {}
_BASELINES: dict[tuple[str, ClusterLayout], object] = {}
_REFERENCE: dict[tuple[str, ClusterLayout], World] = {}

_DEVELOPED: "OrderedDict[tuple, tuple[bytes, object]]" = OrderedDict()


def _healthy_blob(app: AppSpec, layout: ClusterLayout) -> bytes:
    key = (app.name, layout)
    blob = _CACHE.get(key)
    if blob is None:
        world = build_world((app,), layout, seed=0)
        advance(world, WARMUP_S)
        # The deploy-time events would have expired (event TTL is one hour) on a
        # cluster that has been serving for a while; keep only the objects.
        for ev in world.store.list("Event"):
            world.store.remove("Event", ev["metadata"]["name"], ev["metadata"]["namespace"])
        blob = _CACHE[key] = world.snapshot()
        _REFERENCE[key] = World.restore(blob)
    return blob


def healthy_world(app: AppSpec, layout: ClusterLayout = DEFAULT_LAYOUT) -> World:
    """A fresh, private copy of the warmed-up healthy cluster."""
    return World.restore(_healthy_blob(app, layout))


def reference_world(app: AppSpec, layout: ClusterLayout = DEFAULT_LAYOUT) -> World:
    """The shared healthy cluster, for reading only (drawing variants, baselines)."""
    _healthy_blob(app, layout)
    return _REFERENCE[(app.name, layout)]


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    return value


def developed_incident(scenario: Any, develop_s: float, layout: ClusterLayout = DEFAULT_LAYOUT) -> tuple[SimBackend, Any]:
    """A backend where ``scenario`` was injected ``develop_s`` seconds ago, and the pre-fault baseline.

    Draws the scenario's variant on the healthy cluster, then restores the developed
    world from the cache or builds it (and caches it, least recently used first out).
    """
    from sre_env.rewards.mitigation import record_baseline

    app = scenario.app
    reference = SimBackend(reference_world(app, layout))
    bkey = (app.name, layout)
    baseline = _BASELINES.get(bkey)
    if baseline is None:
        baseline = _BASELINES[bkey] = record_baseline(reference, app.namespace, app.name)
    scenario.variant = scenario.choose_variant(reference)
    key = (type(scenario).__module__, type(scenario).__qualname__, float(develop_s), layout, _freeze(scenario.variant))
    hit = _DEVELOPED.get(key)
    if hit is not None:
        _DEVELOPED.move_to_end(key)
        return SimBackend.restore(hit[0]), baseline
    backend = SimBackend(healthy_world(app, layout))
    world = backend.world
    digest = int.from_bytes(hashlib.blake2b(repr(key).encode(), digest_size=8).digest(), "big")
    world.rng = np.random.default_rng(digest)
    world.variant_seed = digest % (2**31)
    scenario.inject(backend)
    backend.advance(develop_s)
    _DEVELOPED[key] = (backend.snapshot(), None)
    while len(_DEVELOPED) > DEVELOPED_CACHE_SIZE:
        _DEVELOPED.popitem(last=False)
    return backend, baseline
