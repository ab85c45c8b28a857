"""The diagnosis checklist: nine yes/no questions in three weighted dimensions, and its score.

SREGym's diagnosis oracle asks these questions (localization, characterization,
scope; weights 0.33/0.33/0.34, pass at 0.70). The deterministic grader
(:mod:`.grader`) and the LLM judge (:mod:`sre_env.rewards.llm_judge`) answer the
same questions and score the answers here, so both report identically.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from sre_env.rewards.base import Check, OracleResult

__all__ = ["WEIGHTS", "PASS_THRESHOLD", "Question", "QUESTIONS", "result_from_answers"]

#: dimension -> weight (SREGym's diagnosis oracle)
WEIGHTS: Mapping[str, float] = {"localization": 0.33, "characterization": 0.33, "scope": 0.34}
PASS_THRESHOLD = 0.70

@dataclass(frozen=True)
class Question:
    id: str
    dimension: str
    text: str
    slug: str


#: The checklist, shared verbatim by the deterministic grader and the LLM judge.
QUESTIONS: tuple[Question, ...] = (
    Question("L1", "localization", "Does the diagnosis name the component where the fault is (the root cause's location)?", "right_component"),
    Question("L2", "localization", "Does it identify that component as the origin of the incident, rather than blaming a component that only fails as a consequence (the cascade)?", "origin_not_cascade"),
    Question("L3", "localization", "Does it avoid blaming a healthy component as the cause?", "no_healthy_component_blamed"),
    Question("C1", "characterization", "Does it name the right fault mechanism?", "right_mechanism"),
    Question("C2", "characterization", "Does it give concrete details of the fault (such as the key, variable, port, device, sector, value or tag)?", "concrete_details"),
    Question("C3", "characterization", "Does it avoid claiming a wrong fault type or layer?", "no_wrong_fault_type"),
    Question("S1", "scope", "Does it avoid implicating bystanders (components the incident does not affect)?", "no_bystanders"),
    Question("S2", "scope", "Does it name all the components the incident affects?", "all_affected_named"),
    Question("S3", "scope", "Does it describe the impact (what fails, and for whom)?", "impact_described"),
)


def result_from_answers(name: str, answers: Mapping[str, tuple[bool, str]], **details: Any) -> OracleResult:
    """Score a filled checklist: each dimension is its share of "yes", weighted.

    Shared with the LLM judge so both graders score and report identically.
    Questions missing from ``answers`` count as "no".
    """
    questions = []
    checks = []
    dims: dict[str, list[bool]] = {d: [] for d in WEIGHTS}
    for q in QUESTIONS:
        answer, evidence = answers.get(q.id, (False, "not answered"))
        dims[q.dimension].append(bool(answer))
        questions.append({"id": q.id, "dimension": q.dimension, "question": q.text, "answer": bool(answer), "evidence": evidence})
        checks.append(Check(f"{q.id}_{q.slug}", bool(answer), evidence))
    dim_scores = {d: (sum(v) / len(v) if v else 0.0) for d, v in dims.items()}
    score = min(1.0, max(0.0, sum(WEIGHTS[d] * s for d, s in dim_scores.items())))
    # four places, as OracleResult.as_dict reports it: the reward equals the reported score
    score = round(score, 4)
    return OracleResult(
        name,
        score >= PASS_THRESHOLD,
        score,
        tuple(checks),
        {"questions": questions, "dimensions": {d: round(s, 4) for d, s in dim_scores.items()}, "threshold": PASS_THRESHOLD, **details},
    )
