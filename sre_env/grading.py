"""Episode grading: run the gates on forks, grade the diagnosis, compose the reward.

The env decides *when* to grade (a submit, the step limit, a catastrophic
command); this module decides *how*, so the CLI, evaluation runs and tests
grade exactly as the env does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sre_env.rewards.base import OracleResult
from sre_env.rewards.cleanup import CleanupOracle
from sre_env.rewards.lifecycle import DurabilityOracle, ImmediateOracle, LiveOracle
from sre_env.rewards.mitigation import Baseline
from sre_env.rewards.spec import RewardSpec, compose_reward

if TYPE_CHECKING:
    from sre_env.envs.base import Scenario
    from sre_env.sim.backend import SimBackend

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
        self.immediate = ImmediateOracle()
        self.live = LiveOracle()
        self.durability = DurabilityOracle(self.live)
        self.cleanup = CleanupOracle()

    def gates(self, backend: "SimBackend", scenario: "Scenario", baseline: Baseline) -> dict[str, OracleResult]:
        if getattr(backend, "live", False):
            # a live cluster cannot fork: its backend runs the gates in order on the one timeline (sre_env.k8s.oracles)
            return backend.grade(scenario, baseline)  # type: ignore[attr-defined]
        live = self.live.evaluate(backend, scenario, baseline)  # every gate runs on its own fork: order changes nothing
        if self.spec.lazy_gates and not live.passed and self.spec.moot_after_live_failed():
            return {"live": live}
        return {
            "immediate": self.immediate.evaluate(backend, scenario, baseline),
            "live": live,
            "durability": self.durability.evaluate(backend, scenario, baseline),
            "cleanup": self.cleanup.evaluate(backend, scenario, baseline),
        }

    def diagnosis(self, text: str | None, backend: "SimBackend", scenario: "Scenario", *, seed: int) -> OracleResult:
        from sre_env.rewards.diagnosis import diagnosis_context_for, grade_diagnosis, parse_submission

        context = diagnosis_context_for(scenario, backend)
        submission = parse_submission(text or "")
        if self.judge is not None:
            return self.judge.judge(submission, scenario.root_cause(), context, scenario_id=type(scenario).__name__, seed=seed)
        return grade_diagnosis(submission, scenario.root_cause(), context)

    def grade(
        self,
        backend: "SimBackend",
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
            results.update(self.gates(backend, scenario, baseline))
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
