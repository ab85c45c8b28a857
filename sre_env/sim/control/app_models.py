"""The apps' models, by the name an app spec gives them (``AppSpec.model``).

An app spec is data; what the simulator runs for an app beyond its pods (the
astronomy shop's feature flags and Kafka queue, social-network's gateway
rules, the TiDB operator's reconcile loop) is an object with
``tick(world, app, plan, res, dt)`` and traffic modifiers, built here from the
spec when the app is installed. The models come from two layers (the app
runtimes in ``sim/runtime``, the TiDB operator in ``sim/control``), so the
table sits in the higher of the two, beside the code that installs apps.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from sre_env.apps.base import AppSpec
from sre_env.sim.control.operator_tidb import TidbOperatorModel
from sre_env.sim.runtime.astronomy import AstronomyModel
from sre_env.sim.runtime.social import SocialModel

__all__ = ["APP_MODELS", "build_app_model"]


def _tidb_operator(app: AppSpec) -> TidbOperatorModel:
    return TidbOperatorModel()


#: model name -> factory(app) -> model
APP_MODELS: dict[str, Callable[[AppSpec], Any]] = {
    "astronomy-shop": AstronomyModel,
    "social-network": SocialModel,
    "tidb-operator": _tidb_operator,
}


def build_app_model(app: AppSpec) -> Any | None:
    """A fresh model for ``app``, or None when it names none (stateless beyond its pods)."""
    if not app.model:
        return None
    try:
        factory = APP_MODELS[app.model]
    except KeyError:
        raise LookupError(f"app {app.name!r} names the model {app.model!r}; the simulator has {sorted(APP_MODELS)}") from None
    return factory(app)
