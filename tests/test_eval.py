"""Evaluation runs: baselines over two scenarios into results and a report; pass@k; the CLI."""

from __future__ import annotations

import json

import pytest

import sre_env
from sre_env.eval.report import (
    markdown_report,
    pass_at_k,
    summarize,
    tables,
    write_report,
)
from sre_env.eval.runs import (
    EvalConfig,
    jobs_for,
    parse_seeds,
    read_results,
    run_eval,
    run_job,
    write_results,
)

TWO = ("SREGym/MissingEnvVar-v0", "SREGym/TargetPortMisconfig-v0")
STABLE = ("SREGym/DiskSector-v0", *TWO)


@pytest.fixture(scope="module")
def baseline_rows() -> list[dict]:
    rows = []
    for agent, attempts in (("reference", 1), ("runbook", 1), ("random", 2)):
        rows += run_eval(EvalConfig(agent=agent, env_ids=TWO, seeds=(0,), attempts=attempts, max_steps=12), progress=False)
    return rows


def test_baselines_over_two_scenarios(baseline_rows) -> None:
    by = {(r["agent"], r["env_id"], r["attempt"]): r for r in baseline_rows}
    assert len(baseline_rows) == 2 + 2 + 4
    for env_id in TWO:
        ref = by[("reference", env_id, 0)]
        assert ref["success"] and ref["mitigation"] and ref["durability"] and ref["cleanup"] and ref["diagnosis"]
        assert ref["time_to_mitigate_s"] is not None and ref["steps"] >= 2 and ref["error"] is None
        assert by[("runbook", env_id, 0)]["success"]
        for attempt in (0, 1):
            assert not by[("random", env_id, attempt)]["success"]
    r0, r1 = by[("random", TWO[0], 0)], by[("random", TWO[0], 1)]
    assert r0["family"] == "MissingEnvVar" and r0["layer"] == "application" and r0["app"] == "hotel-reservation"
    assert r0["steps"] == r1["steps"] == 11  # 10 random commands and the submit...
    assert r0["time_to_mitigate_s"] is None


def test_results_and_report_round_trip(baseline_rows, tmp_path) -> None:
    runbook = [r for r in baseline_rows if r["agent"] == "runbook"]
    csv_path, json_path = write_results(baseline_rows, tmp_path)
    assert read_results(json_path) == json.loads(json_path.read_text())["rows"]
    from_csv = read_results(csv_path)
    assert [r["success"] for r in from_csv] == [r["success"] for r in baseline_rows]
    assert from_csv[0]["seed"] == 0 and isinstance(from_csv[0]["reward"], float)
    paths = write_report(runbook, tmp_path / "rep", title="runbook")
    md = paths["markdown"].read_text()
    for heading in ("## Overall", "## Per scenario", "## Per layer", "## Per family"):
        assert heading in md
    assert "| SREGym/TargetPortMisconfig-v0 | 1 | 100% |" in md and "Noise vs no noise" not in md
    html = paths["html"].read_text()
    assert html.startswith("<!doctype html>") and "<td>application</td>" in html
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        assert "install matplotlib" in md
    else:
        assert paths["per_scenario"].stat().st_size > 1000 and "per_scenario.png" in md


def test_report_subcommand_rebuilds_from_results(baseline_rows, tmp_path, capsys) -> None:
    from sre_env.cli import main

    write_results(baseline_rows, tmp_path)
    assert main(["report", str(tmp_path)]) == 0
    assert (tmp_path / "report.md").exists() and (tmp_path / "report.html").exists()
    assert main(["report", str(tmp_path / "nope")]) == 2
    capsys.readouterr()


def test_pass_at_k_and_best_of_n() -> None:
    assert pass_at_k(3, 0, 1) == 0.0 and pass_at_k(3, 3, 1) == 1.0
    assert pass_at_k(3, 1, 1) == pytest.approx(1 / 3) and pass_at_k(3, 1, 3) == 1.0
    assert pass_at_k(4, 2, 2) == pytest.approx(1 - 1 / 6)
    rows = [
        {"env_id": "a", "seed": 0, "noise": "none", "success": s, "reward": r, "layer": "x", "family": "A", "agent": "t"}
        for s, r in ((True, 1.0), (False, 0.2), (False, 0.0))
    ] + [{"env_id": "a", "seed": 0, "noise": "low", "success": False, "reward": 0.1, "layer": "x", "family": "A", "agent": "t"}] * 3
    s = summarize(rows)
    assert s["tasks"] == 2 and s["k"] == 3
    assert s["pass@1"] == pytest.approx((1 / 3 + 0) / 2) and s["pass@k"] == pytest.approx(0.5)
    assert s["best_of_n"] == pytest.approx((1.0 + 0.1) / 2)
    assert [t[0] for t in tables(rows)][-1] == "Noise vs no noise"
    assert "| low | 3 | 0% |" in markdown_report(rows)


def test_jobs_seeds_and_errors_become_rows() -> None:
    assert parse_seeds("0-2,7,2") == (0, 1, 2, 7)
    config = EvalConfig(agent="random", env_ids=TWO, seeds=(0, 1), attempts=2, noise=("none", "low"))
    jobs = jobs_for(config)
    assert len(jobs) == 2 * 2 * 2 * 2 and jobs[0].slug == "SREGym_MissingEnvVar-v0-seed0-a0"
    bad = run_job(jobs_for(EvalConfig(agent="no-such-agent", env_ids=TWO[:1]))[0])
    assert bad["success"] is False and "no-such-agent" in bad["error"]


def test_eval_cli_in_parallel_processes(tmp_path, capsys) -> None:
    from sre_env.cli import main

    code = main(["eval", "--ids", TWO[0], "--agent", "runbook", "--seeds", "0-1", "--workers", "2", "--quiet", "--no-transcripts", "--out", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 0 and "2 episodes, e2e success 100%" in out
    rows = read_results(tmp_path)
    assert [r["seed"] for r in rows] == [0, 1] and not (tmp_path / "transcripts").exists()
    assert main(["eval", "--ids", TWO[0], "--agent", "genius", "--quiet", "--out", str(tmp_path)]) == 2


@pytest.mark.parametrize("env_id", STABLE)
def test_reference_agent_solves_the_stable_ids(env_id) -> None:
    (row,) = run_eval(EvalConfig(agent="reference", env_ids=(env_id,), seeds=(1,)), progress=False)
    assert row["success"], row


@pytest.mark.slow
@pytest.mark.parametrize("env_id", sre_env.ENV_IDS)
def test_reference_agent_solves_every_registered_id(env_id) -> None:
    (row,) = run_eval(EvalConfig(agent="reference", env_ids=(env_id,), seeds=(0,)), progress=False)
    assert row["success"], row


@pytest.mark.slow
def test_eval_over_ray_tasks() -> None:
    ray = pytest.importorskip("ray", reason="--ray needs ray: pip install 'sre-env[rllib]'")
    ray.init(num_cpus=2, include_dashboard=False, configure_logging=False, log_to_driver=False)
    try:
        rows = run_eval(EvalConfig(agent="runbook", env_ids=TWO, seeds=(0,)), use_ray=True, progress=False)
    finally:
        ray.shutdown()
    assert [r["env_id"] for r in rows] == list(TWO) and all(r["success"] for r in rows)
