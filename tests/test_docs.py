"""The generated docs and the package's public surface stay true."""

from __future__ import annotations

from pathlib import Path

import sre_env
from sre_env import docgen

ROOT = Path(__file__).resolve().parent.parent


def test_readme_env_table_is_current() -> None:
    readme = (ROOT / "README.md").read_text()
    assert docgen.update_readme(readme) == readme, "README env table is stale: run `python -m sre_env.docgen`"
    for env_id in sre_env.ENV_IDS:
        assert f"`{env_id}`" in readme


def test_scenarios_page_is_current() -> None:
    page = (ROOT / "docs" / "scenarios.md").read_text()
    assert page == docgen.scenarios_page(), "docs/scenarios.md is stale: run `python -m sre_env.docgen`"


def test_public_api_is_pinned() -> None:
    assert sorted(sre_env.__all__) == sorted(
        [
            "ENV_IDS",
            "ApiError",
            "MissingExtraError",
            "SREEnv",
            "SREEnvError",
            "ScenarioError",
            "UnknownEnvironmentError",
            "list_scenarios",
            "register_all",
            "__version__",
        ]
    )
    assert sre_env.SREEnv.__name__ == "SREEnv"


def test_readme_has_exactly_two_quickstart_commands() -> None:
    readme = (ROOT / "README.md").read_text()
    quick = readme.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    commands = [line for line in quick.splitlines() if line.startswith("python3.11 -m venv")]
    assert len(commands) == 2
    ci = (ROOT / ".ci" / "run").read_text()
    assert commands[1] in ci, ".ci/run must run the README's test command"


def test_readme_example_runs() -> None:
    """The README's Python example is real code: run it as written."""
    import contextlib
    import io

    readme = (ROOT / "README.md").read_text()
    example = readme.split("## Example", 1)[1].split("```python", 1)[1].split("```", 1)[0]
    with contextlib.redirect_stdout(io.StringIO()) as out:
        exec(compile(example, "README.md", "exec"), {})
    printed = out.getvalue()
    assert "PAGE:" in printed and "'diagnosis':" in printed, "the example prints the brief and the grade"
