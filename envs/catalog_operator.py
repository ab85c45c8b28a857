"""Operators (TiDB): a misconfigured custom resource reconciled by a modelled TiDB Operator."""

from __future__ import annotations

from .base import Scenario
from .operator_tidb import (
    TidbBadSecurityContext,
    TidbInvalidAffinity,
    TidbInvalidToleration,
    TidbWrongVersion,
)

SCENARIOS: dict[str, type[Scenario]] = {
    "OperatorMisoperation-InvalidAffinity": TidbInvalidAffinity,
    "OperatorMisoperation-InvalidToleration": TidbInvalidToleration,
    "OperatorMisoperation-WrongVersion": TidbWrongVersion,
    "OperatorMisoperation-BadSecurityContext": TidbBadSecurityContext,
}
