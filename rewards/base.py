"""The grading vocabulary: what every grader returns and what a scenario declares for its graders.

The lowest grading layer, below the scenarios: a scenario's contract
(``envs/base.py``) names cause checks (:class:`Check`), the changes its repair
may leave behind (:class:`AllowedChange`, for the cleanup gate) and how people
describe its fault (:class:`Mechanism`, for the diagnosis grader), and every
oracle above the scenarios answers with an :class:`OracleResult`. Nothing here
imports a scenario or an oracle, so both can import it.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from typing import Any

__all__ = ["AllowedChange", "Check", "Mechanism", "OracleResult"]


@dataclass(frozen=True)
class Check:
    name: str
    passed: bool
    detail: str = ""


@dataclass(frozen=True)
class OracleResult:
    """``passed`` is the gate; ``score`` in [0, 1] is the share of checks that passed."""

    name: str
    passed: bool
    score: float
    checks: tuple[Check, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_checks(cls, name: str, checks: list[Check], **details: Any) -> "OracleResult":
        score = sum(c.passed for c in checks) / len(checks) if checks else 0.0
        return cls(name, all(c.passed for c in checks) and bool(checks), score, tuple(checks), details)

    def as_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "score": round(self.score, 4),
            "checks": [{"name": c.name, "passed": c.passed, "detail": c.detail} for c in self.checks],
            **self.details,
        }


@dataclass(frozen=True)
class AllowedChange:
    """A change a correct repair may make: ``kind``/``namespace``/``name`` are glob patterns.

    ``change`` is one of ``created``, ``deleted``, ``modified``, ``cordoned``,
    ``tainted`` or ``*``.
    """

    kind: str
    namespace: str
    name: str
    change: str = "*"

    def allows(self, kind: str, namespace: str, name: str, change: str) -> bool:
        return (
            fnmatch.fnmatchcase(kind, self.kind)
            and fnmatch.fnmatchcase(namespace, self.namespace)
            and fnmatch.fnmatchcase(name, self.name)
            and (self.change == "*" or self.change == change)
        )


@dataclass(frozen=True)
class Mechanism:
    """How people describe one fault mechanism, independent of any scenario.

    ``terms`` are case-insensitive regular expressions; a ``{key}`` slot is filled
    with the escaped value of ``RootCause.details[key]`` (a term whose slot has no
    value is skipped), so "CONSUL_ADDRESS was removed" counts for the env-var
    mechanism. ``detail_keys`` name the details whose values are the concrete
    facts question C2 looks for. ``compatible`` lists mechanism ids whose mention
    alongside this one is not a wrong fault type (a consequence, not a rival).
    """

    id: str
    layer: str
    title: str
    terms: tuple[str, ...]
    detail_keys: tuple[str, ...] = ()
    compatible: tuple[str, ...] = ()
