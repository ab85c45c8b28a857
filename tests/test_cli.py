"""Behaviour of the ``sre-env`` command line (called in-process through ``main``)."""

from __future__ import annotations

import io
import json
import subprocess
import sys

import pytest

from sre_env import ENV_IDS, cli
from sre_env.cli import main

ENV_ID = "SREGym/MissingEnvVar-v0"


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# ---------------------------------------------------------------- list
def test_list_shows_every_scenario(capsys):
    code, out, _ = _run(capsys, "list")
    assert code == 0
    for eid in ("SREGym/DiskSector-v0", "SREGym/MissingEnvVar-v0", "SREGym/TargetPortMisconfig-v0"):
        assert eid in out
    header = out.splitlines()[0].split()
    assert header == ["ID", "APP", "LAYER", "FAMILY", "DIFFICULTY", "SUMMARY"]


def test_list_json_and_filters(capsys):
    code, out, _ = _run(capsys, "list", "--format", "json")
    rows = json.loads(out)
    assert code == 0 and [r["id"] for r in rows] == list(ENV_IDS)
    assert set(rows[0]) == {"id", "app", "layer", "family", "difficulty", "summary"}
    _, out, _ = _run(capsys, "list", "--format", "json", "--layer", "hardware")
    hardware = [r["id"] for r in json.loads(out)]
    assert "SREGym/DiskSector-v0" in hardware and "SREGym/MissingEnvVar-v0" not in hardware
    assert all(r["layer"] == "hardware" for r in json.loads(out))
    _, out, _ = _run(capsys, "list", "--format", "json", "--suite", "lite")
    assert 15 <= len(json.loads(out)) <= 25


def test_list_markdown(capsys):
    _, out, _ = _run(capsys, "list", "--format", "markdown")
    lines = out.splitlines()
    assert lines[0] == "| id | app | layer | family | difficulty | summary |"
    assert len(lines) == 2 + len(ENV_IDS)


def test_list_with_no_match_says_so(capsys):
    code, out, err = _run(capsys, "list", "--suite", "no-such-suite")
    assert code == 0 and out == "" and "no scenarios" in err


# ---------------------------------------------------------------- run
def test_run_reference_passes(capsys):
    code, out, _ = _run(capsys, "run", ENV_ID, "--agent", "reference", "--seed", "0")
    assert code == 0
    assert "PASS" in out and "Root cause" in out


def test_run_random_fails(capsys):
    code, out, _ = _run(capsys, "run", ENV_ID, "--agent", "random", "--seed", "0", "--plain")
    assert code == 1
    assert "Grade: FAIL" in out


def test_run_accepts_a_bare_scenario_name(capsys):
    code, out, _ = _run(capsys, "run", "MissingEnvVar", "--quiet")
    assert code == 0 and out.strip() == f"{ENV_ID} seed=0 agent=reference: PASS reward=1.000"


def test_run_writes_json(capsys, tmp_path):
    path = tmp_path / "result.json"
    code, out, _ = _run(capsys, "run", ENV_ID, "--seed", "0", "--json", str(path), "--quiet")
    data = json.loads(path.read_text())
    assert code == 0 and data["reward"] == 1.0 and data["env_id"] == ENV_ID
    assert data["oracles"]["live"]["passed"] is True
    assert "Root cause" not in out  # --quiet: one line only


def test_run_max_steps_truncates_with_a_grade(capsys):
    code, out, _ = _run(capsys, "run", ENV_ID, "--max-steps", "1", "--plain")
    assert code == 1
    assert "not submitted (truncated)" in out and "Grade: FAIL" in out


@pytest.mark.parametrize(
    "bad, hint",
    [("SREGym/MisingEnvVar-v0", "Did you mean 'SREGym/MissingEnvVar-v0'"), ("SREGym/MissingEnvVar-v7", "Did you mean 'SREGym/MissingEnvVar-v0'")],
)
def test_unknown_id_exits_2_with_a_suggestion(capsys, bad, hint):
    for command in ("run", "play"):
        code, out, err = _run(capsys, command, bad)
        assert code == 2
        assert hint in err and "Traceback" not in err
        assert out == ""


def test_bad_usage_exits_2(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["run", ENV_ID, "--agent", "genius"])
    assert exc.value.code == 2
    assert "invalid choice" in capsys.readouterr().err


# ---------------------------------------------------------------- play
def _play(capsys, monkeypatch, stdin: str, *argv: str) -> tuple[int, str]:
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code = main(["play", ENV_ID, "--seed", "0", "--plain", *argv])
    return code, capsys.readouterr().out


def test_play_from_stdin_and_submit(capsys, monkeypatch):
    script = "\n".join(
        [
            "help",
            "kubectl get pods -n hotel-reservation",
            "",
            "kubectl set env deployment/profile -n hotel-reservation CONSUL_ADDRESS=consul:8500",
            "submit CONSUL_ADDRESS was removed from deployment/profile",
        ]
    )
    code, out = _play(capsys, monkeypatch, script + "\n")
    assert code == 0
    assert "PAGE:" in out and "[alerts]" in out
    assert "kubectl get TYPE" in out  # help printed the command reference
    assert "CrashLoopBackOff" in out  # the output of get pods
    assert "Steps (3):" in out  # help and the empty line cost no step
    assert "Diagnosis: CONSUL_ADDRESS was removed from deployment/profile" in out
    assert "Grade: PASS" in out


def test_play_end_of_input_grades_without_submitting(capsys, monkeypatch):
    code, out = _play(capsys, monkeypatch, "kubectl get pods -n hotel-reservation\nalerts\n")
    assert code == 1
    assert "end of input" in out
    assert "Diagnosis: (none submitted)" in out and "not submitted (truncated)" in out
    assert "Grade: FAIL" in out and "Root cause (ground truth):" in out


def test_play_through_a_real_pipe():
    proc = subprocess.run(
        [sys.executable, "-m", "sre_env.cli", "play", ENV_ID, "--plain"],
        input="kubectl get nodes\nsubmit no idea\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1, proc.stderr
    assert "worker-1" in proc.stdout and "Diagnosis: no idea" in proc.stdout


# ---------------------------------------------------------------- bench
def test_bench_missing_script(capsys, monkeypatch, tmp_path):
    monkeypatch.setattr(cli, "BENCH_SCRIPT", tmp_path / "nope.py")
    code, _, err = _run(capsys, "bench")
    assert code == 2 and "no benchmark script" in err


def test_bench_runs_the_script_with_its_arguments(capfd, monkeypatch, tmp_path):
    script = tmp_path / "bench_env.py"
    script.write_text("import sys\nprint('bench args', sys.argv[1:])\nsys.exit(3)\n")
    monkeypatch.setattr(cli, "BENCH_SCRIPT", script)
    assert main(["bench", "--episodes", "2", "-h"]) == 3
    assert "bench args ['--episodes', '2', '-h']" in capfd.readouterr().out
