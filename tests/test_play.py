"""`sre-env play` for people: local words (history, metrics, traces), colour off when piped, the grade at the end."""

from __future__ import annotations

import io

from sre_env.cli import main

ENV_ID = "SREGym/TargetPortMisconfig-v0"


def test_play_history_metrics_and_grade(capsys, monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("SRE_ENV_HISTORY", str(tmp_path / "hist"))
    script = "\n".join(["metrics", "kubectl get svc -n hotel-reservation", "kubectl get nosuchkind", "history", "traces", "submit no idea"]) + "\n"
    monkeypatch.setattr("sys.stdin", io.StringIO(script))
    code = main(["play", ENV_ID, "--seed", "0", "--plain", "--max-steps", "10"])
    out = capsys.readouterr().out
    assert code == 1  # not repaired
    assert "client_success_ratio:" in out  # metrics: the headline numbers, no step spent
    assert "  1  kubectl get svc -n hotel-reservation\n" in out
    assert "  2  kubectl get nosuchkind   (exit 1)" in out  # history marks the failed command
    assert "traces (last 30s" in out
    assert "Steps (3):" in out and "Grade: FAIL" in out and "Root cause (ground truth):" in out
    assert "\x1b[" not in out  # no colour codes when not at a terminal


def test_play_local_words_listed_in_help(capsys, monkeypatch) -> None:
    monkeypatch.setenv("SRE_ENV_HISTORY", "")
    monkeypatch.setattr("sys.stdin", io.StringIO("help\nquit\n"))
    assert main(["play", ENV_ID, "--plain"]) == 1
    out = capsys.readouterr().out
    assert "Local: help, alerts, logs, traces, metrics, history, quit" in out
    assert "Steps (0):" in out
