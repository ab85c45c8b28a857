"""The LLM agent: a ReAct-style loop over any chat model, with budgets and accounting.

    sre-env eval --agent openai:qwen2.5-7b-instruct --base-url http://localhost:8000/v1 --suite lite
    sre-env eval --agent hf:./my-model --ids SREGym/MissingEnvVar-v0

The model sits behind a one-method seam, ``ChatModel.chat(messages, tools=...) ->
ChatReply`` (text, tool calls, token counts); :mod:`sre_env.agents.llm_client`
has the two clients that implement it — ``OpenAIClient`` for any
OpenAI-compatible server and ``TransformersClient`` for a local model — and
``make_chat_model("openai:<model>" | "hf:<path>")``. A model that cannot answer
raises ``LLMError``; it is never taken for a reply: it propagates out of
``run_episode``, and an evaluation run records it as the episode's error.

``LLMAgent`` plays an episode through the same ``Agent`` protocol as the
baselines (:func:`sre_env.agents.episode.run_episode`): the conversation is the
``ChatWrapper``'s (system prompt with the command reference and submit format,
ReAct "Thought/Action" answers or tool calls), replies are parsed leniently,
parse errors go back to the model as text. Budgets: ``max_steps`` (commands),
``max_tokens`` (prompt + completion over the episode) and ``max_parse_errors``
in a row; when a budget runs out the agent submits what it has.
``agent.transcript`` holds every message and per-turn token counts;
``agent.usage`` the totals.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from sre_env.agents.llm_client import ChatModel

__all__ = ["LLMAgent", "Usage"]


@dataclass
class Usage:
    """What an LLM agent spent over one episode: tokens, model calls, replies without a command."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0
    parse_errors: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def as_dict(self) -> dict[str, int]:
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens, "total_tokens": self.total_tokens, "calls": self.calls, "parse_errors": self.parse_errors}


@dataclass
class LLMAgent:
    """A ReAct agent over ``model``; plays through ``run_episode`` like any baseline."""

    model: ChatModel
    max_steps: int = 30
    max_tokens: int = 200_000
    max_parse_errors: int = 3
    temperature: float = 0.0
    max_reply_tokens: int = 512
    use_tools: bool = False
    transcript: list[dict[str, Any]] = field(default_factory=list)
    turns: list[dict[str, Any]] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)

    def reset(self, env: Any) -> None:
        from sre_env.wrappers.chat import ObservationMessages, system_prompt

        inner = env.unwrapped
        self._view = ObservationMessages(getattr(inner, "_metric_names", []))
        self._scenario = inner.scenario
        self.messages: list[dict[str, Any]] = [{"role": "system", "content": system_prompt(inner.command_reference(), tools=self.use_tools)}]
        self.transcript = []
        self.turns = []
        self.usage = Usage()
        self._steps = 0
        self._pending_call: str | None = None

    def _observe(self, observation: dict[str, Any]) -> None:
        if not self.turns and len(self.messages) == 1:
            text = self._view.opening(observation, self._scenario.namespace, self._scenario.app.name)
        else:
            text = self._view.next(observation)
            if self.turns:
                self.turns[-1]["output"] = str(observation.get("output", ""))
        if self._pending_call:
            self.messages.append({"role": "tool", "tool_call_id": self._pending_call, "content": text})
        else:
            self.messages.append({"role": "user", "content": text})
        self._pending_call = None

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> str:
        from sre_env.wrappers.chat import parse_action, tool_schemas

        self._observe(observation)
        if self._steps >= self.max_steps:
            return self._give_up(f"step budget of {self.max_steps} commands used up")
        errors = 0
        while True:
            if self.usage.total_tokens >= self.max_tokens:
                return self._give_up(f"token budget of {self.max_tokens} used up")
            reply = self.model.chat(self.messages, tools=tool_schemas("openai") if self.use_tools else None, temperature=self.temperature, max_tokens=self.max_reply_tokens)
            self.usage.calls += 1
            self.usage.prompt_tokens += reply.prompt_tokens
            self.usage.completion_tokens += reply.completion_tokens
            message = reply.as_message()
            if len(message.get("tool_calls", ())) > 1:  # one command per turn: answer (and keep) only the first call
                message["tool_calls"] = message["tool_calls"][:1]
            self.messages.append(message)
            self.transcript.append({"messages": len(self.messages), "prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens})
            parsed = parse_action(message)
            if parsed.ok:
                self._steps += 1
                self._pending_call = parsed.tool_call_id if parsed.source == "openai-tool" else None
                self.turns.append({"command": parsed.command, "message": reply.text, "prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens})
                return str(parsed.command)
            errors += 1
            self.usage.parse_errors += 1
            if errors >= self.max_parse_errors:
                return self._give_up(f"{errors} replies in a row had no command")
            if parsed.tool_call_id and parsed.source == "openai-tool":
                self.messages.append({"role": "tool", "tool_call_id": parsed.tool_call_id, "content": f"Parse error: {parsed.error}"})
            else:
                self.messages.append({"role": "user", "content": f"Parse error: {parsed.error}"})

    def _give_up(self, why: str) -> str:
        command = f"submit (agent stopped: {why}; no confident diagnosis)"
        self.turns.append({"command": command, "message": "", "prompt_tokens": 0, "completion_tokens": 0})
        return command
