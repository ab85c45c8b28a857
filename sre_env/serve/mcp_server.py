"""An MCP server over one episode, so MCP agents can be evaluated like any other.

Tools: ``kubectl``, ``shell`` (any command the environment accepts: ``ssh``,
``promql``, ``logql``, ``traces``, ``alerts``...), ``promql``, ``logql``,
``traces``, ``alerts`` and ``submit``. Each call is one environment step, so an
MCP agent is graded exactly as a Gymnasium agent would be; ``submit`` returns
the grade. The server instructions carry the incident brief and the command
reference. Built on the official MCP SDK (``mcp``, part of the ``[serve]`` extra).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from sre_env.errors import MissingExtraError

if TYPE_CHECKING:
    from sre_env.env import SREEnv

__all__ = ["build_mcp_server"]


def _mcp() -> Any:
    try:
        from mcp.server.mcpserver import MCPServer
    except ImportError as exc:
        raise MissingExtraError("the MCP server needs the [serve] extra: pip install 'sre-env[serve]'") from exc
    return MCPServer


def build_mcp_server(env: "SREEnv", *, seed: int | None = None) -> Any:
    """An MCP server whose tools step ``env`` (reset here if it has no episode yet)."""
    MCPServer = _mcp()
    if env.scenario is None:
        obs, _ = env.reset(seed=seed)
        brief = obs["output"]
    else:
        brief = env.scenario.brief()
    state: dict[str, Any] = {"done": False, "result": None}

    def step(command: str) -> str:
        if state["done"]:
            return "The episode is over (submitted). " + json.dumps(state["result"])
        obs, reward, terminated, truncated, info = env.step(command)
        out = obs["output"]
        if terminated or truncated:
            state["done"] = True
            state["result"] = {"reward": round(float(reward), 4), "success": bool(info.get("is_success")), "gates": {k: v.get("passed") for k, v in (info.get("oracles") or {}).items()}}
            out += "\n" + json.dumps(state["result"])
        return out

    server = MCPServer("sre-env", instructions=f"{brief}\n\nEvery tool call is one step of the incident. Repair the cause durably, then call submit with your diagnosis.\n\n{env.command_reference()}")

    @server.tool(description="Run kubectl against the incident's cluster, e.g. 'get pods -n hotel-reservation' (without the leading 'kubectl').")
    def kubectl(command: str) -> str:
        return step("kubectl " + command)

    @server.tool(description="Run any command the environment accepts: kubectl, ssh NODE CMD, promql, logql, traces, alerts, sleep N.")
    def shell(command: str) -> str:
        return step(command)

    @server.tool(description="Evaluate a PromQL expression against the cluster's Prometheus.")
    def promql(query: str) -> str:
        return step(f"promql {json.dumps(query)}")

    @server.tool(description="Run a LogQL query against the cluster's logs (Loki).")
    def logql(query: str) -> str:
        return step(f"logql {json.dumps(query)}")

    @server.tool(description="Search traces, e.g. '--service frontend --errors' (the traces command's arguments).")
    def traces(arguments: str = "") -> str:
        return step(f"traces {arguments}".strip())

    @server.tool(description="List the alerts that are firing.")
    def alerts() -> str:
        return step("alerts")

    @server.tool(description="End the episode with your diagnosis (root cause, mechanism, affected components, impact); returns the grade.")
    def submit(diagnosis: str) -> str:
        return step("submit " + diagnosis.replace("\n", " "))

    return server
