"""The deterministic diagnosis grader: sample diagnoses per scenario, parsing, names, evidence.

Sample diagnoses are written from each variant's ground truth (which node, which
variable, which port), so the table holds for every seed, and each case says
what it must do: correct ones pass, vague / wrong-layer / symptom-only ones fail,
naming a bystander costs the bystander questions.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any, Callable

import gymnasium as gym
import pytest

import sre_env  # noqa: F401  (registers the ids)
from sre_env.envs.base import RootCause
from sre_env.envs.registry import scenarios
from sre_env.rewards.diagnosis import (
    COMMON_WORDS,
    PASS_THRESHOLD,
    QUESTIONS,
    SHARED_MECHANISMS,
    WEIGHTS,
    DiagnosisContext,
    Submission,
    diagnosis_context_for,
    grade_diagnosis,
    mechanism_id_for,
    named_entities,
    parse_submission,
    result_from_answers,
    vocabulary,
)

SEEDS = (0, 1, 2, 3)
ENV_IDS = ("SREGym/DiskSector-v0", "SREGym/MissingEnvVar-v0", "SREGym/TargetPortMisconfig-v0")


@lru_cache(maxsize=None)
def incident(env_id: str, seed: int) -> tuple[Any, RootCause, DiagnosisContext]:
    env = gym.make(env_id)
    env.reset(seed=seed)
    scenario = env.unwrapped.scenario
    ctx = diagnosis_context_for(scenario, env.unwrapped.backend)
    env.close()
    return scenario, scenario.root_cause(), ctx


def name(ref: str) -> str:
    return ref.rpartition("/")[2]


def bystander(rc: RootCause, ctx: DiagnosisContext) -> str:
    """A healthy component with an unambiguous name: off the failing request path."""
    involved = {name(r) for r in (*ctx.symptomatic, *ctx.affected, rc.component)}
    return next(c for c in ctx.components if c not in involved and c not in COMMON_WORDS and c != "frontend")


# ----------------------------------------------------------------- sample diagnoses
def disk_cases(rc: RootCause, ctx: DiagnosisContext) -> dict[str, str]:
    d = rc.details
    node, dev, db = d["node"], d["device"], d["database"]
    others = [name(a) for a in rc.affected if name(a) != db]
    affected = [name(a) for a in rc.affected]
    fields = {
        "component": f"node/{node}",
        "namespace": rc.namespace,
        "layer": "hardware",
        "mechanism": "bad sectors on the data disk: medium errors, reads fail with EIO",
        "details": {"device": dev, "database": db},
        "affected": [f"deployment/{a}" for a in affected],
    }
    correct = (
        f"Latent sector errors on {node}'s data disk {dev}: reads of a few sectors fail with EIO. "
        f"{db} keeps its volume there, so mongod crash-loops; {', '.join(others)} fail on it and users see intermittent errors."
    )
    return {
        "correct": correct,
        "readme_style": f"latent sector errors on {node} {dev} under {db}, so {', '.join(others)} fail",
        "structured": json.dumps(fields),
        "structured_fenced": f"{db} crash-loops and {', '.join(others)} requests fail.\n```json\n{json.dumps(fields, indent=2)}\n```",
        "vague": "Something is wrong with the cluster.",
        "wrong_layer": f"The application is buggy: a code bug in {db} makes it crash, so {', '.join(others)} fail.",
        "symptom_only": f"{db} is crash looping.",
        "bystander_also": correct + f" The {bystander(rc, ctx)} service is also failing.",
        "bystander_blamed": f"The {bystander(rc, ctx)} service is misconfigured and is the root cause; {db} crashes because of it.",
    }


def env_var_cases(rc: RootCause, ctx: DiagnosisContext) -> dict[str, str]:
    d = rc.details
    svc, var = name(rc.component), d["variable"]
    affected = list(dict.fromkeys(name(a) for a in rc.affected))
    fields = {
        "component": f"deployment/{svc}",
        "namespace": rc.namespace,
        "layer": "application",
        "mechanism": "a required environment variable is missing",
        "details": {"variable": var, "value": d["expected_value"]},
        "affected": [f"deployment/{a}" for a in affected],
    }
    correct = (
        f"The env var {var} was removed from deployment/{svc}: its process exits at start-up and the pods crash-loop, "
        f"so the frontend returns errors to users."
    )
    return {
        "correct": correct,
        "readme_style": f"{var} missing from {svc}; {svc} pods crash-loop and frontend requests fail",
        "structured": json.dumps(fields),
        "structured_fenced": f"{svc} crash-loops at start-up and users get errors from the frontend.\n```json\n{json.dumps(fields)}\n```",
        "vague": "Something is wrong with the cluster.",
        "wrong_layer": f"The disk under the {svc} pods is failing with I/O errors, so {svc} crashes.",
        "symptom_only": f"The {svc} pods are crash looping.",
        "bystander_also": correct + f" The {bystander(rc, ctx)} service is also failing.",
        "bystander_blamed": f"The {bystander(rc, ctx)} service is misconfigured and is the root cause of the outage; requests fail.",
    }


def target_port_cases(rc: RootCause, ctx: DiagnosisContext) -> dict[str, str]:
    d = rc.details
    svc, wrong, right = d["service"], d["targetPort"], d["expected_targetPort"]
    callers = [name(a) for a in rc.affected if name(a) != svc]
    fields = {
        "component": f"svc/{svc}",
        "namespace": rc.namespace,
        "layer": "kubernetes",
        "mechanism": "Service targetPort mismatch",
        "details": {"targetPort": wrong, "containerPort": right},
        "affected": [name(a) for a in rc.affected],
    }
    correct = (
        f"service/{svc} sends port {d['port']} to targetPort {wrong}, but its pods listen on {right}, "
        f"so connections to {svc} are refused and its callers ({', '.join(callers) or 'users'}) get errors."
    )
    return {
        "correct": correct,
        "readme_style": f"wrong targetPort {wrong} on svc/{svc} (pods listen on {right}); {' and '.join([svc, *callers])} requests fail",
        "structured": json.dumps(fields),
        "structured_fenced": f"Requests through {svc} fail with connection refused.\n```json\n{json.dumps(fields)}\n```",
        "vague": "Something is wrong with the cluster.",
        "wrong_layer": f"A bug in the {svc} application code makes it drop connections.",
        "symptom_only": f"Requests to {(callers or [svc])[0]} fail with connection refused.",
        "bystander_also": correct + f" The {bystander(rc, ctx)} service is also failing.",
        "bystander_blamed": f"The {bystander(rc, ctx)} service is misconfigured and is the root cause of the outage; requests fail.",
    }


CASES: dict[str, Callable[[RootCause, DiagnosisContext], dict[str, str]]] = {
    "SREGym/DiskSector-v0": disk_cases,
    "SREGym/MissingEnvVar-v0": env_var_cases,
    "SREGym/TargetPortMisconfig-v0": target_port_cases,
}

#: case -> (must pass?, questions that must be "yes", questions that must be "no")
EXPECT: dict[str, tuple[bool, tuple[str, ...], tuple[str, ...]]] = {
    "correct": (True, ("L1", "L2", "L3", "C1", "C2", "C3", "S1", "S2", "S3"), ()),
    "readme_style": (True, ("L1", "L2", "C1", "C2", "C3"), ()),
    "structured": (True, ("L1", "L2", "L3", "C1", "C2", "C3", "S1", "S2"), ()),
    "structured_fenced": (True, ("L1", "L2", "L3", "C1", "C2", "C3", "S1", "S2", "S3"), ()),
    "vague": (False, (), ("L1", "L2", "L3", "C1", "C2", "C3", "S1", "S2", "S3")),
    "wrong_layer": (False, (), ("C1", "C3")),
    "symptom_only": (False, (), ("L2", "C1", "C3")),
    "bystander_also": (True, ("L1", "L2", "L3", "C1"), ("S1",)),
    "bystander_blamed": (False, (), ("L1", "L2", "L3", "S1")),
}


def answers(result) -> dict[str, bool]:
    return {q["id"]: q["answer"] for q in result.details["questions"]}


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("env_id", ENV_IDS)
@pytest.mark.parametrize("case", list(EXPECT))
def test_sample_diagnoses(env_id: str, seed: int, case: str) -> None:
    _, rc, ctx = incident(env_id, seed)
    text = CASES[env_id](rc, ctx)[case]
    result = grade_diagnosis(text, rc, ctx)
    must_pass, yes, no = EXPECT[case]
    got = answers(result)
    report = f"{case} on {env_id} seed {seed}: {text!r}\n" + "\n".join(f"  {q['id']} {q['answer']} {q['evidence']}" for q in result.details["questions"])
    assert result.name == "diagnosis"
    assert result.passed is must_pass, report
    assert (result.score >= PASS_THRESHOLD) is must_pass, report
    assert all(got[q] for q in yes), report
    assert not any(got[q] for q in no), report
    # every answer carries evidence saying what matched (or what was missing)
    for q in result.details["questions"]:
        assert isinstance(q["evidence"], str) and len(q["evidence"]) > 10, report


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_bystander_costs_points(env_id: str) -> None:
    _, rc, ctx = incident(env_id, 0)
    cases = CASES[env_id](rc, ctx)
    clean = grade_diagnosis(cases["correct"], rc, ctx)
    noisy = grade_diagnosis(cases["bystander_also"], rc, ctx)
    assert noisy.score < clean.score
    assert "bystanders" in noisy.checks[6].detail and bystander(rc, ctx) in noisy.checks[6].detail


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_evidence_names_what_matched(env_id: str) -> None:
    _, rc, ctx = incident(env_id, 1)
    result = grade_diagnosis(CASES[env_id](rc, ctx)["correct"], rc, ctx)
    ev = {q["id"]: q["evidence"] for q in result.details["questions"]}
    assert name(rc.component) in ev["L1"]
    assert any(str(v) in ev["C2"] for v in rc.details.values() if isinstance(v, (str, int)))
    assert result.details["mechanism_id"] == type(incident(env_id, 1)[0]).mechanism.id
    assert result.details["dimensions"] == {"localization": 1.0, "characterization": 1.0, "scope": 1.0}
    assert [c.name for c in result.checks] == [f"{q.id}_{q.slug}" for q in QUESTIONS]
    assert result.as_dict()["questions"][0]["id"] == "L1"


@pytest.mark.parametrize("seed", SEEDS)
def test_node_mechanism_and_database_pass(seed: int) -> None:
    """The shortest useful disk diagnosis: where, what, and which database sits on it."""
    _, rc, ctx = incident("SREGym/DiskSector-v0", seed)
    d = rc.details
    for text in (f"bad sectors on {d['node']} under {d['database']}", f"latent sector errors on {d['node']} {d['device']} under {d['database']}"):
        result = grade_diagnosis(text, rc, ctx)
        assert result.passed, (text, result.details["questions"])


def test_disk_names_the_node_not_only_the_database() -> None:
    _, rc, ctx = incident("SREGym/DiskSector-v0", 0)
    d = rc.details
    # right mechanism, but put on the database instead of the node
    result = grade_diagnosis(f"deployment/{d['database']} has latent sector errors on {d['device']}", rc, ctx)
    assert not answers(result)["L1"] and not result.passed
    # the origin named as the cause while the database is called the root cause
    wrong_origin = grade_diagnosis(
        f'{{"component": "deployment/{d["database"]}", "mechanism": "bad sectors"}} bad sectors on {d["node"]}', rc, ctx
    )
    assert not answers(wrong_origin)["L2"]


def test_hedging_between_nodes_is_not_localization() -> None:
    _, rc, ctx = incident("SREGym/DiskSector-v0", 0)
    d = rc.details
    guess = " or ".join(ctx.nodes)
    result = grade_diagnosis(f"latent sector errors on {guess} {d['device']} under {d['database']}; rate fails", rc, ctx)
    assert not answers(result)["L1"] and "hedges" in result.checks[0].detail and not result.passed


def test_score_is_weighted_share_of_yes() -> None:
    _, rc, ctx = incident("SREGym/DiskSector-v0", 0)
    result = grade_diagnosis(CASES["SREGym/DiskSector-v0"](rc, ctx)["symptom_only"], rc, ctx)
    dims = result.details["dimensions"]
    assert result.score == pytest.approx(sum(WEIGHTS[d] * dims[d] for d in WEIGHTS), abs=1e-3)
    # a dimension with no "yes" cannot pass, however good the others are
    for zero in WEIGHTS:
        filled = {q.id: (q.dimension != zero, "x") for q in QUESTIONS}
        assert not result_from_answers("diagnosis", filled).passed
    assert result_from_answers("diagnosis", {q.id: (True, "x") for q in QUESTIONS}).score == 1.0
    assert result_from_answers("diagnosis", {}).score == 0.0


def test_grading_is_deterministic_and_accepts_none() -> None:
    _, rc, ctx = incident("SREGym/TargetPortMisconfig-v0", 2)
    text = CASES["SREGym/TargetPortMisconfig-v0"](rc, ctx)["correct"]
    assert grade_diagnosis(text, rc, ctx).as_dict() == grade_diagnosis(parse_submission(text), rc, ctx).as_dict()
    empty = grade_diagnosis(None, rc, ctx)
    assert empty.score == 0.0 and not empty.passed


# ----------------------------------------------------------------- names and roles
def test_aliases_resolve_to_components() -> None:
    scenario, _, ctx = incident("SREGym/DiskSector-v0", 0)
    for text, expected in [
        ("worker-2", ["node/worker-2"]),
        ("node/worker-2", ["node/worker-2"]),
        ("nodes/worker-2", ["node/worker-2"]),
        ("mongodb-rate", ["mongodb-rate"]),
        ("deploy/mongodb-rate", ["mongodb-rate"]),
        ("deployment/mongodb-rate and svc/mongodb-rate", ["mongodb-rate"]),
        ("deployment.apps/mongodb-rate", ["mongodb-rate"]),
        ("pod mongodb-rate-nfv7dfljn2-xswjv restarted", ["mongodb-rate"]),
        ("mongodb-rate.hotel-reservation.svc.cluster.local:27017", ["mongodb-rate"]),
        ("rate-pvc and hotel-reserv-rate-mongo", ["mongodb-rate"]),
        ("the rate service and deploy/search", ["rate", "search"]),
        ("`rate` calls mongodb-rate", ["rate", "mongodb-rate"]),
        # ordinary words are not components without a cue; near-misses are not names
        ("the error rate is high for user requests", []),
        ("rate-limit on worker-22 and hotel-reservation", []),
    ]:
        assert named_entities(text, ctx) == expected, text


def test_common_words_never_blame_a_bystander() -> None:
    _, rc, ctx = incident("SREGym/DiskSector-v0", 1)
    text = CASES["SREGym/DiskSector-v0"](rc, ctx)["correct"] + " The error rate and user sign-in latency went up."
    assert answers(grade_diagnosis(text, rc, ctx))["S1"]


def test_ruled_out_and_negated_claims_are_not_blame() -> None:
    _, rc, ctx = incident("SREGym/DiskSector-v0", 0)
    by = bystander(rc, ctx)
    base = CASES["SREGym/DiskSector-v0"](rc, ctx)["correct"]
    result = grade_diagnosis(base + f" The {by} service is healthy. This is not an application bug.", rc, ctx)
    got = answers(result)
    assert got["S1"] and got["L3"] and got["C3"], result.details["questions"]
    assert by in result.details["ruled_out"]
    negated = grade_diagnosis(f"mongodb-rate fails, but it is not latent sector errors on {rc.details['node']}", rc, ctx)
    assert not answers(negated)["C1"]


def test_structured_layer_and_namespace_are_checked() -> None:
    _, rc, ctx = incident("SREGym/DiskSector-v0", 0)
    fields = json.loads(CASES["SREGym/DiskSector-v0"](rc, ctx)["structured"])
    assert answers(grade_diagnosis(json.dumps(fields | {"layer": "application"}), rc, ctx))["C3"] is False
    _, rc2, ctx2 = incident("SREGym/MissingEnvVar-v0", 0)
    fields2 = json.loads(CASES["SREGym/MissingEnvVar-v0"](rc2, ctx2)["structured"])
    assert answers(grade_diagnosis(json.dumps(fields2 | {"namespace": "default"}), rc2, ctx2))["L1"] is False
    bogus = grade_diagnosis(json.dumps(fields2 | {"component": "deployment/nope"}), rc2, ctx2)
    assert any("nope" in n for n in bogus.details["notes"])


# ----------------------------------------------------------------- context
def test_context_from_scenario_and_backend() -> None:
    scenario, rc, ctx = incident("SREGym/DiskSector-v0", 0)
    assert ctx.nodes == tuple(sorted(ctx.nodes)) and f"node/{rc.details['node']}" in {f"node/{n}" for n in ctx.nodes}
    assert set(ctx.components) == {c.name for c in scenario.app.components}
    assert ctx.affected == tuple(dict.fromkeys(rc.affected))
    # the request path above the broken database shows symptoms; the rest of the app does not
    sym = {name(r) for r in ctx.symptomatic}
    assert {"frontend", rc.details["database"]} <= sym
    assert "mongodb-geo" not in sym or rc.details["database"] == "mongodb-geo"
    assert ctx.aliases[scenario.app.component(rc.details["database"]).volume_claim] == rc.details["database"]
    for env_id in ENV_IDS:
        sc, _, c = incident(env_id, 0)
        assert c.mechanism_id == type(sc).mechanism.id


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_mechanism_id_is_found_from_the_root_cause_alone(env_id: str) -> None:
    scenario, rc, _ = incident(env_id, 0)
    assert mechanism_id_for(rc) == type(scenario).mechanism.id
    assert vocabulary()[mechanism_id_for(rc)].layer == rc.layer


def test_vocabulary_is_the_shared_rivals_then_every_family() -> None:
    vocab = vocabulary()
    assert list(vocab)[: len(SHARED_MECHANISMS)] == [m.id for m in SHARED_MECHANISMS]
    declared = {cls.mechanism.id: cls.mechanism for cls in scenarios().values() if cls.mechanism is not None}
    assert list(vocab)[len(SHARED_MECHANISMS) :] == list(declared)
    assert all(vocab[i] == m for i, m in declared.items())


def test_unknown_mechanism_falls_back_to_its_words() -> None:
    # a mechanism no scenario describes (clock drift used to be one; it has a vocabulary now)
    rc = RootCause("node/worker-1", "ns", "os", "solar interference", "solar interference on worker-1", {"offset_s": 90}, ("deployment/a",))
    ctx = DiagnosisContext("ns", ("a", "b"), ("worker-1",), ("deployment/a",), ("deployment/a",))
    result = grade_diagnosis("worker-1 has solar interference of 90 seconds, so a fails", rc, ctx)
    got = answers(result)
    assert got["C1"] and got["C2"] and got["L1"] and result.details["mechanism_id"] == ""


# ----------------------------------------------------------------- parsing
def test_parse_plain_text() -> None:
    sub = parse_submission("  bad sectors on worker-1  ")
    assert sub.free_text == "bad sectors on worker-1" and not sub.structured and sub.notes == ()


def test_parse_whole_json() -> None:
    sub = parse_submission('{"component": "node/worker-1", "affected": ["a", "b"], "details": {"device": "/dev/sdb"}, "layer": "hardware"}')
    assert sub.structured and sub.component == "node/worker-1" and sub.affected == ("a", "b")
    assert sub.details == {"device": "/dev/sdb"} and sub.layer == "hardware" and sub.free_text == ""


def test_parse_fenced_json_keeps_prose() -> None:
    sub = parse_submission('Disk trouble.\n```json\n{"mechanism": "bad sectors", "details": "sdb"}\n```\nThat is all.')
    assert sub.mechanism == "bad sectors" and sub.details == "sdb"
    assert "Disk trouble." in sub.free_text and "That is all." in sub.free_text and "```" not in sub.free_text


def test_parse_trailing_object() -> None:
    sub = parse_submission('The disk of worker-1 fails {"component": "node/worker-1", "details": {"sectors": [1, 2]}}')
    assert sub.component == "node/worker-1" and sub.free_text == "The disk of worker-1 fails"
    assert "sectors: 1, 2" in sub.details_text()


@pytest.mark.parametrize(
    "text",
    [
        '{"component": "node/worker-1",',  # truncated
        "bad sectors {not json}",
        "```json\n{oops}\n```",
        "[1, 2, 3]",
    ],
)
def test_malformed_json_falls_back_to_free_text(text: str) -> None:
    sub = parse_submission(text)
    assert not sub.structured and sub.free_text == text.strip() and sub.notes


def test_parse_wrong_types_are_noted_not_raised() -> None:
    sub = parse_submission('{"component": ["x"], "affected": "a, b", "details": true, "colour": "red", "summary": "db down"}')
    assert sub.component is None and sub.affected == ("a", "b") and sub.details is None
    assert sub.extra_text == "db down"
    assert any("component" in n for n in sub.notes) and any("colour" in n for n in sub.notes)


@pytest.mark.parametrize("text", [None, "", "{", "}" * 500, "{" * 500 + "}", "```json", "\x00\ud800", "x" * 100_000 + "{}"])
def test_parse_never_raises(text: Any) -> None:
    sub = parse_submission(text)
    assert isinstance(sub, Submission)
    _, rc, ctx = incident("SREGym/DiskSector-v0", 0)
    assert 0.0 <= grade_diagnosis(sub, rc, ctx).score <= 1.0
