"""An MCP client lists and calls the incident's tools; the episode is graded as usual."""

from __future__ import annotations

import asyncio

import pytest

import sre_env

mcp = pytest.importorskip("mcp", reason="the MCP SDK ([serve] extra) is not installed")

from sre_env.serve.mcp_server import build_mcp_server  # noqa: E402


def _text(result) -> str:
    return "".join(getattr(c, "text", "") for c in result.content)


def test_mcp_client_lists_calls_and_submits() -> None:
    env = sre_env.SREEnv("MissingEnvVar")
    server = build_mcp_server(env, seed=2)
    fix = env.scenario.reference_solution()
    summary = env.scenario.root_cause().summary

    async def session() -> tuple[list[str], str, str, str]:
        async with mcp.Client(server) as client:
            tools = sorted(t.name for t in (await client.list_tools()).tools)
            pods = _text(await client.call_tool("kubectl", {"command": "get pods -n hotel-reservation"}))
            firing = _text(await client.call_tool("alerts", {}))
            for cmd in fix:
                await client.call_tool("shell", {"command": cmd})
            graded = _text(await client.call_tool("submit", {"diagnosis": summary}))
            return tools, pods, firing, graded

    tools, pods, firing, graded = asyncio.run(session())
    assert tools == ["alerts", "kubectl", "logql", "promql", "shell", "submit", "traces"]
    assert "NAME" in pods and "Running" in pods
    assert "firing" in firing
    assert '"success": true' in graded and '"live": true' in graded
