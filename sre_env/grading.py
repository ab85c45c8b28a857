"""Episode grading: run the backend's lifecycle gates, grade the diagnosis, compose the reward.

The env decides *when* to grade (a submit, the step limit, a catastrophic
command); this module decides *how*, so the CLI, evaluation runs and tests
grade exactly as the env does. The gates themselves are the backend's
(:meth:`sre_env.episode.EpisodeBackend.gates`): forks of the simulated world, or
one live timeline.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sre_env.rewards.base import OracleResult
from sre_env.rewards.mitigation import Baseline
from sre_env.rewards.spec import RewardSpec, compose_reward

if TYPE_CHECKING:
    from sre_env.backend import Backend
    from sre_env.envs.base import Scenario
    from sre_env.episode import EpisodeBackend

__all__ = ["Grader", "Grade"]


@dataclass(frozen=True)
class Grade:
    reward: float
    success: bool
    components: dict[str, float]
    oracles: dict[str, dict[str, Any]]
    risk: dict[str, Any] = field(default_factory=dict)


class Grader:
    def __init__(self, spec: RewardSpec | None = None, *, task: str = "mitigation", diagnosis_judge: Any = None) -> None:
        self.spec = spec or RewardSpec()
        self.task = task
        self.judge = diagnosis_judge

    def gates(self, episodes: "EpisodeBackend", scenario: "Scenario", baseline: Baseline) -> dict[str, OracleResult]:
        """The lifecycle gates; only ``live`` when it failed and the others cannot change the reward."""
        return episodes.gates(scenario, baseline, lazy=self.spec.lazy_gates and self.spec.moot_after_live_failed())

    def diagnosis(self, text: str | None, backend: "Backend", scenario: "Scenario", *, seed: int) -> OracleResult:
        from sre_env.rewards.diagnosis import (
            diagnosis_context_for,
            grade_diagnosis,
            parse_submission,
        )

        context = diagnosis_context_for(scenario, backend)
        submission = parse_submission(text or "")
        if self.judge is not None:
            return self.judge.judge(submission, scenario.root_cause(), context, scenario_id=type(scenario).__name__, seed=seed)
        return grade_diagnosis(submission, scenario.root_cause(), context)

    def grade(
        self,
        episodes: "EpisodeBackend",
        scenario: "Scenario",
        baseline: Baseline,
        *,
        diagnosis: OracleResult | None,
        risk_oracle: OracleResult | None,
        risk_summary: dict[str, Any] | None = None,
        catastrophic: bool = False,
    ) -> Grade:
        results: dict[str, OracleResult] = {}
        if self.task != "diagnosis" and not (catastrophic and self.spec.lazy_gates):  # a catastrophe fixes the reward
            results.update(self.gates(episodes, scenario, baseline))
        if diagnosis is not None:
            results["diagnosis"] = diagnosis
        penalty = (1.0 - risk_oracle.score) if risk_oracle is not None else 0.0
        reward, components, success = compose_reward(self.spec, self.task, results, penalty)
        if catastrophic:
            reward, success = -self.spec.catastrophe, False
        oracles = {name: r.as_dict() for name, r in results.items()}
        if risk_oracle is not None:
            oracles["risk"] = risk_oracle.as_dict()
        return Grade(reward, success, components, oracles, risk_summary or {})
