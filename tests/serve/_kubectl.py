"""The real ``kubectl`` against a served incident, as every test here runs it."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

#: UTC, so kubectl prints dates the way the tests compare them; stdin empty unless given
_ENV = {**os.environ, "TZ": "UTC"}


def run_kubectl(kubectl: str, cfg: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([kubectl, f"--kubeconfig={cfg}", *args], capture_output=True, text=True, timeout=60, check=False, input=stdin if stdin is not None else "", env=_ENV)
