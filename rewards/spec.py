"""Reward composition: every component visible, weights chosen by the user.

The default is a sparse score in [0, 1] at the end of the episode:

    reward = w_diag * diagnosis + gate(live) * (w_imm * immediate + w_live * live
             + w_dur * durability + w_clean * cleanup) - w_risk * risk_penalty

where each gate is 1 when it passed and 0 otherwise, and ``gate(live)`` makes the
repair terms count only when the app is really healthy again (a wrong fix with a
tidy cluster earns nothing for tidiness). Trainers who want denser signals add
a per-step cost or potential-based shaping from the cluster's health score,
``F = gamma * phi(s') - phi(s)``, which leaves optimal policies unchanged, and a
``catastrophe`` penalty: a catastrophic action (deleting the app's data) scores 0
by default, the same as doing nothing, and with a step cost even less than
trying, so a learner would otherwise find destroying data a cheap way out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

__all__ = ["RewardSpec", "TASKS", "compose_reward"]

TASKS = ("mitigation", "diagnosis", "e2e")
GATES = ("immediate", "live", "durability", "cleanup")


@dataclass(frozen=True)
class RewardSpec:
    diagnosis: float = 0.2
    immediate: float = 0.1
    live: float = 0.4
    durability: float = 0.2
    cleanup: float = 0.1
    #: subtracted per unit of the risk monitor's normalised penalty
    risk: float = 0.5
    #: subtracted on every step (0: sparse)
    step_cost: float = 0.0
    #: weight of potential-based shaping from the health score (0: off)
    shaping: float = 0.0
    #: the final reward of an episode ended by a catastrophic action (destroyed data) is minus this.
    #: 0 keeps every reward in [0, 1]; trainers that add a step cost should set it (e.g. 1.0), or
    #: ending the episode by destroying data is cheaper than trying and failing
    catastrophe: float = 0.0
    gamma: float = 0.99
    #: the repair terms count only when the live gate passed
    gate_on_live: bool = True
    #: gates that must pass for ``info["is_success"]`` (diagnosis is added for diagnosis/e2e tasks)
    success_gates: tuple[str, ...] = GATES
    #: run only the gates that can still change the reward or success: none after a catastrophe, and
    #: after a failed ``live`` gate (which zeroes the other gates and fails success) none of the others.
    #: Rewards and success are the same; ``info["oracles"]`` then lacks the skipped gates. Grading is
    #: most of a trainer's CPU time (each gate plays minutes of the cluster on a fork), and most early
    #: training episodes fail ``live``; reports want every gate, so the default runs them all. A live
    #: cluster (no forks) runs its gates in order on the one timeline, so there only a catastrophe skips them
    lazy_gates: bool = False

    def moot_after_live_failed(self) -> bool:
        """Whether a failed ``live`` gate already decides the reward terms of every gate and success."""
        return self.gate_on_live and "live" in self.success_gates

    def weights_for(self, task: str) -> dict[str, float]:
        if task == "diagnosis":
            return {"diagnosis": 1.0}
        return {"diagnosis": self.diagnosis, "immediate": self.immediate, "live": self.live, "durability": self.durability, "cleanup": self.cleanup}


def compose_reward(spec: RewardSpec, task: str, results: Mapping[str, Any], risk_penalty: float) -> tuple[float, dict[str, float], bool]:
    """(final reward, every component, success) from oracle results keyed by gate name."""
    weights = spec.weights_for(task)
    passed = {name: bool(r.passed) for name, r in results.items()}
    components: dict[str, float] = {}
    live_ok = passed.get("live", False)
    total = 0.0
    for name, w in weights.items():
        result = results.get(name)
        if result is None:
            components[name] = 0.0
            continue
        value = result.score if name == "diagnosis" else (1.0 if result.passed else 0.0)
        if name in GATES and spec.gate_on_live and not live_ok:
            value = 0.0
        components[name] = round(w * value, 6)
        total += w * value
    components["risk"] = round(-spec.risk * risk_penalty, 6) + 0.0  # + 0.0: no "-0.0" in reports
    total = max(0.0, min(1.0, total - spec.risk * risk_penalty))
    required = [g for g in spec.success_gates if task != "diagnosis"]
    if task in ("diagnosis", "e2e"):
        required.append("diagnosis")
    success = all(passed.get(g, False) for g in required)
    return round(total, 6), components, success
