"""Chat messages in, chat messages out: the env as a conversation with a model.

``ChatWrapper.reset`` returns the opening messages (a system message with the
role, the command reference and the answer format; a user message with the
incident brief and what the dashboards show). ``step`` takes whatever the model
said — plain text with a fenced command, a line starting with ``Action:``, an
OpenAI assistant message with ``tool_calls`` or Anthropic content blocks with
``tool_use`` — runs the command and returns the next user message. A reply with
no recognisable command is not an env step: it goes back to the model as a
parse error, so a model can correct itself (``max_parse_errors`` in a row end
the episode as truncated).

The tools are defined once (``TOOLS``) and rendered in both vendors' schema
formats by ``tool_schemas("openai" | "anthropic")``.

    env = ChatWrapper(gym.make("SREGym/MissingEnvVar-v0"))
    messages, info = env.reset(seed=0)           # [system, user]
    message, reward, terminated, truncated, info = env.step("```bash\\nkubectl get pods -n hotel-reservation\\n```")
    env.messages                                 # the whole conversation so far, OpenAI-shaped
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import gymnasium as gym
from gymnasium import spaces

from .text import SECTIONS, render_observation

__all__ = ["ChatWrapper", "ObservationMessages", "conversation_text", "ParsedAction", "ToolSpec", "TOOLS", "parse_action", "tool_schemas", "system_prompt", "SUBMIT_FORMAT"]


@dataclass(frozen=True)
class ToolSpec:
    """One tool, defined once: name, description and its string parameters."""

    name: str
    description: str
    parameters: tuple[tuple[str, str], ...]  # (name, description); all strings, all required

    def json_schema(self) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {p: {"type": "string", "description": d} for p, d in self.parameters},
            "required": [p for p, _ in self.parameters],
        }


TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "run_command",
        "Run one command on the incident's cluster (kubectl, ssh NODE CMD, promql, logql, alerts, sleep; pipes into grep/head/tail/...) and get its output.",
        (("command", "the command line, exactly as you would type it in a shell"),),
    ),
    ToolSpec(
        "submit",
        "End the episode: submit your diagnosis of the root cause (after repairing it, in mitigation tasks).",
        (("diagnosis", "the root cause: which component, what mechanism, the details (optionally a JSON object)"),),
    ),
)

SUBMIT_FORMAT = (
    "When you are done, submit your diagnosis: `submit <root cause>` — name the component (e.g. deployment/geo, "
    "node/worker-2, service/rate), the mechanism and the evidence. You may append a JSON object with the keys "
    '"component", "namespace", "layer", "mechanism", "details", "affected".'
)


def tool_schemas(fmt: str = "openai") -> list[dict[str, Any]]:
    """The tools in OpenAI's (``tools=[{"type": "function", ...}]``) or Anthropic's format."""
    if fmt == "openai":
        return [{"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.json_schema()}} for t in TOOLS]
    if fmt == "anthropic":
        return [{"name": t.name, "description": t.description, "input_schema": t.json_schema()} for t in TOOLS]
    raise ValueError(f"fmt must be 'openai' or 'anthropic', got {fmt!r}")


def system_prompt(command_reference: str, *, tools: bool = False) -> str:
    """The system message: the role, how to answer (ReAct), the commands, the submit format."""
    how = (
        "Call the `run_command` tool with one command per turn, or the `submit` tool when done."
        if tools
        else "Answer in this format each turn:\nThought: <what you know and what you will check next>\nAction:\n```bash\n<exactly one command>\n```"
    )
    return (
        "You are an on-call site reliability engineer. A Kubernetes cluster has an incident. Find the root cause, "
        "repair it durably (the fix must survive restarts and leave no temporary objects behind), then submit your "
        "diagnosis. Every command costs time; destructive shortcuts (deleting or scaling down the app) fail the task.\n\n"
        f"{how}\n\n{SUBMIT_FORMAT}\n\n{command_reference}"
    )


@dataclass(frozen=True)
class ParsedAction:
    """What was understood from a model reply: a command (``submit ...`` included) or an error."""

    command: str | None
    error: str | None = None
    tool_call_id: str | None = None
    source: str = "text"  # text | fenced | action-line | openai-tool | anthropic-tool

    @property
    def ok(self) -> bool:
        return self.command is not None


_FENCED = re.compile(r"```[ \t]*([A-Za-z0-9_+-]*)[ \t]*\n(.*?)```", re.S)
_ACTION_LINE = re.compile(r"^\s*(?:Action|Command)\s*:\s*(.+?)\s*$", re.M | re.I)
_TAGGED = re.compile(r"<(command|action)>(.*?)</\1>", re.S | re.I)
_BARE = re.compile(r"^\s*\$?\s*((?:kubectl|ssh|promql|logql|alerts|traces|sleep|submit)\b.*)$", re.M)


def _from_tool(name: str, args: Any, call_id: str | None, source: str) -> ParsedAction:
    if isinstance(args, str):
        try:
            args = json.loads(args) if args.strip() else {}
        except ValueError as exc:
            return ParsedAction(None, f"the arguments of tool call {name!r} are not valid JSON ({exc}); send an object like {{\"command\": \"kubectl get pods -A\"}}", call_id, source)
    if not isinstance(args, Mapping):
        return ParsedAction(None, f"the arguments of tool call {name!r} must be a JSON object", call_id, source)
    if name == "run_command":
        command = args.get("command")
        if not isinstance(command, str) or not command.strip():
            return ParsedAction(None, "run_command needs a non-empty string argument 'command'", call_id, source)
        return ParsedAction(command.strip(), None, call_id, source)
    if name == "submit":
        diagnosis = args.get("diagnosis", "")
        if not isinstance(diagnosis, str):
            diagnosis = json.dumps(diagnosis)
        return ParsedAction(("submit " + diagnosis.strip()).strip(), None, call_id, source)
    return ParsedAction(None, f"unknown tool {name!r}; the tools are: {', '.join(t.name for t in TOOLS)}", call_id, source)


def parse_action(reply: Any) -> ParsedAction:
    """Understand a model reply leniently; never raises.

    Accepts a string, an OpenAI assistant message (``{"role": "assistant",
    "content": ..., "tool_calls": [...]}``) or Anthropic content (a message with
    a ``content`` list, or the list itself, holding ``tool_use`` blocks). The
    first tool call wins; in text, the last fenced block, then an ``Action:``
    line, then ``<command>`` tags, then a line that starts with a known command.
    """
    if isinstance(reply, Mapping):
        for call in reply.get("tool_calls") or []:
            fn = (call or {}).get("function") or {}
            return _from_tool(str(fn.get("name", "")), fn.get("arguments", "{}"), call.get("id"), "openai-tool")
        content = reply.get("content")
        if isinstance(content, list):
            return parse_action(content)
        return parse_action(content if isinstance(content, str) else "")
    if isinstance(reply, (list, tuple)):
        texts = []
        for block in reply:
            if isinstance(block, Mapping) and block.get("type") == "tool_use":
                return _from_tool(str(block.get("name", "")), block.get("input", {}), block.get("id"), "anthropic-tool")
            if isinstance(block, Mapping) and block.get("type") == "text":
                texts.append(str(block.get("text", "")))
        return parse_action("\n".join(texts))
    text = reply if isinstance(reply, str) else str(reply)
    fenced = [body.strip() for lang, body in _FENCED.findall(text) if lang.lower() in ("", "bash", "sh", "shell", "console", "text", "zsh")]
    fenced = [b for b in fenced if b]
    if fenced:
        body = fenced[-1]
        lines = [ln[2:] if ln.startswith("$ ") else ln for ln in body.splitlines()]
        first = lines[0].strip()
        # a heredoc or a submit spans lines; anything else is the first line only
        command = "\n".join(lines).strip() if ("<<" in first or first.startswith("submit")) else first
        return ParsedAction(command, None, None, "fenced")
    m = _ACTION_LINE.findall(text)
    if m:
        command = m[-1].strip().strip("`").strip()
        if command:
            return ParsedAction(command, None, None, "action-line")
    m2 = _TAGGED.findall(text)
    if m2:
        return ParsedAction(m2[-1][1].strip(), None, None, "text")
    m3 = _BARE.findall(text)
    if m3:
        return ParsedAction(m3[-1].strip(), None, None, "text")
    return ParsedAction(
        None,
        "I could not find a command in your reply. Put exactly one command in a ```bash fenced block (or use the "
        "run_command tool), or `submit <diagnosis>` to finish.",
    )


class ObservationMessages:
    """Turns observations into user messages, repeating alerts/logs/traces only when they changed.

    Shared by ``ChatWrapper`` and the LLM agent loop so both show a model the same text.
    """

    def __init__(self, metric_names: Sequence[str] = (), max_chars: int = 12000) -> None:
        self.metric_names = list(metric_names)
        self.max_chars = int(max_chars)
        self._shown: dict[str, str] = {}

    def _cut(self, text: str) -> str:
        if len(text) > self.max_chars:
            return text[: self.max_chars] + "\n...[message truncated]\n"
        return text

    def opening(self, obs: Mapping[str, Any], namespace: str, app: str) -> str:
        self._shown = {k: str(obs.get(k, "")) for k, _ in SECTIONS}
        brief = render_observation(dict(obs), metric_names=self.metric_names, header=False)
        return self._cut(f"Incident on namespace {namespace} (app {app}).\n\n{brief}")

    def next(self, obs: Mapping[str, Any]) -> str:
        sections = []
        for key, title in SECTIONS:
            value = str(obs.get(key, ""))
            if key == "output" or value != self._shown.get(key):
                sections.append((key, title if key == "output" or value else title + " (now none)"))
                self._shown[key] = value
        view = dict(obs)
        for key, title in sections:
            if key != "output" and not view.get(key):
                view[key] = "(none)"
        return self._cut(render_observation(view, metric_names=self.metric_names, sections=sections))


class ChatWrapper(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Text in (a model's reply), text out (the next user message); the conversation in ``messages``."""

    def __init__(self, env: gym.Env, *, tools: bool = False, max_parse_errors: int = 3, max_message_chars: int = 12000) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, tools=tools, max_parse_errors=max_parse_errors, max_message_chars=max_message_chars)
        super().__init__(env)
        from sre_env.env import CHARSET

        charset = "".join(sorted(CHARSET))
        self.action_space = spaces.Text(max_length=65536, min_length=0, charset=charset)
        self.observation_space = spaces.Text(max_length=max_message_chars + 64, min_length=0, charset=charset)
        self.tools = tools
        self.max_parse_errors = int(max_parse_errors)
        self.max_message_chars = int(max_message_chars)
        self.messages: list[dict[str, Any]] = []
        self._metric_names: list[str] = []
        self._errors_in_row = 0
        self.parse_errors = 0

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[str, dict[str, Any]]:
        obs, info = self.env.reset(seed=seed, options=options)
        self._metric_names = list(info.get("metric_names", []))
        self._errors_in_row = 0
        self.parse_errors = 0
        reference = self.env.unwrapped.command_reference()
        scenario = self.env.unwrapped.scenario
        self._view = ObservationMessages(self._metric_names, self.max_message_chars)
        user = self._view.opening(obs, scenario.namespace, scenario.app.name)
        self.messages = [{"role": "system", "content": system_prompt(reference, tools=self.tools)}, {"role": "user", "content": user}]
        return self.messages[-1]["content"], {**info, "messages": list(self.messages)}

    def step(self, action: Any) -> tuple[str, float, bool, bool, dict[str, Any]]:
        parsed = parse_action(action)
        self.messages.append(_assistant_message(action))
        if not parsed.ok:
            self.parse_errors += 1
            self._errors_in_row += 1
            text = f"Parse error: {parsed.error}"
            self._reply(text, parsed)
            truncated = self._errors_in_row >= self.max_parse_errors
            info: dict[str, Any] = {"parse_error": parsed.error, "parse_errors": self.parse_errors}
            reward = 0.0
            if truncated:
                reward, final = self.env.unwrapped.finish()
                info |= final
            return text, float(reward), False, truncated, info
        self._errors_in_row = 0
        obs, reward, terminated, truncated, info = self.env.step(parsed.command)
        text = self._view.next(obs)
        if terminated or truncated:
            text += f"\n[episode over: reward {float(reward):.3f}, success {bool(info.get('is_success', False))}]\n"
        self._reply(text, parsed)
        return text, reward, terminated, truncated, {**info, "command": parsed.command, "parse_errors": self.parse_errors}

    def _reply(self, text: str, parsed: ParsedAction) -> None:
        if parsed.tool_call_id and parsed.source == "openai-tool":
            self.messages.append({"role": "tool", "tool_call_id": parsed.tool_call_id, "content": text})
        elif parsed.tool_call_id and parsed.source == "anthropic-tool":
            self.messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": parsed.tool_call_id, "content": text}]})
        else:
            self.messages.append({"role": "user", "content": text})


def _assistant_message(action: Any) -> dict[str, Any]:
    """The model's turn as it goes back into the conversation (tool calls kept as sent)."""
    if isinstance(action, Mapping):
        msg = {"role": "assistant", "content": action.get("content")}
        if action.get("tool_calls"):
            msg["tool_calls"] = list(action["tool_calls"])
        return msg
    if isinstance(action, (list, tuple)):
        return {"role": "assistant", "content": list(action)}
    return {"role": "assistant", "content": str(action)}


def conversation_text(messages: Sequence[Mapping[str, Any]]) -> str:
    """A conversation as plain text (for transcripts and token counting)."""
    out = []
    for m in messages:
        content = m.get("content")
        if not isinstance(content, str):
            content = json.dumps(content, default=str)
        calls = m.get("tool_calls")
        if calls:
            content = (content or "") + "\n[tool_calls] " + json.dumps(calls, default=str)
        out.append(f"### {m.get('role', '?')}\n{content or ''}")
    return "\n\n".join(out) + "\n"
