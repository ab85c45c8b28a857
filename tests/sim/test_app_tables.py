"""Apps name their model and log dialects by string; the simulator's tables know every name.

The tables import every model and dialect module themselves, so a name resolves
in a fresh process that imported nothing but the app and the table.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from sre_env.apps.astronomy_shop import ASTRONOMY_SHOP
from sre_env.apps.hotel_reservation import HOTEL_RESERVATION
from sre_env.apps.social_network import SOCIAL_NETWORK
from sre_env.apps.tidb import TIDB
from sre_env.sim.control.app_models import APP_MODELS, build_app_model
from sre_env.sim.logs import render

APPS = (HOTEL_RESERVATION, SOCIAL_NETWORK, ASTRONOMY_SHOP, TIDB)


@pytest.mark.parametrize("app", APPS, ids=lambda a: a.name)
def test_every_log_format_is_a_known_dialect(app) -> None:
    for comp in app.components:
        assert comp.log_format in render.DIALECTS or comp.log_format in render.APP_DIALECTS, (app.name, comp.name)


@pytest.mark.parametrize("app", APPS, ids=lambda a: a.name)
def test_every_model_name_resolves(app) -> None:
    model = build_app_model(app)
    if app.model:
        assert app.model in APP_MODELS
        assert callable(getattr(model, "tick", None))
    else:
        assert model is None


def test_an_unknown_model_name_is_an_error() -> None:
    import dataclasses

    with pytest.raises(LookupError, match="no-such-model"):
        build_app_model(dataclasses.replace(HOTEL_RESERVATION, model="no-such-model"))


def test_names_resolve_whatever_was_imported_first() -> None:
    code = (
        "from sre_env.apps.tidb import TIDB\n"
        "from sre_env.sim.logs.render import component_startup_lines, render\n"
        "lines = component_startup_lines('tidb', 0.0, {'service': 'tidb'}, 0)\n"
        "assert lines and lines[0].startswith('[2026/03/02 '), lines\n"
        "line = render('redis', 'ready', 0.0, {}, 0)\n"
        "assert line.startswith('1:M 02 Mar 2026 '), line\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
