"""Typed oracle results: what every grader returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Check", "OracleResult"]


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
