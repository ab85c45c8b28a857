"""The LLM agent loop: a ReAct-style agent over any chat model, with budgets and accounting.

    sre-env eval --agent openai:qwen2.5-7b-instruct --base-url http://localhost:8000/v1 --suite lite
    sre-env eval --agent hf:./my-model --ids SREGym/MissingEnvVar-v0

A model sits behind a one-method seam, ``ChatModel.chat(messages, tools=...) ->
ChatReply`` (text, tool calls, token counts):

* ``OpenAIChatModel`` — any OpenAI-compatible ``/chat/completions`` server (vLLM,
  Ollama, llama.cpp, a hosted API) through ``httpx``; transport errors and
  overload statuses (429, 5xx) are retried with back-off; token counts come from
  the server's ``usage``.
* ``HFChatModel`` — a local ``transformers`` causal LM (greedy at temperature 0),
  token counts from its tokenizer.

``LLMAgent`` plays an episode through the same ``Agent`` protocol as the
baselines: the conversation is the ``ChatWrapper``'s (system prompt with the
command reference and submit format, ReAct "Thought/Action" answers or tool
calls), replies are parsed leniently, parse errors go back to the model as text.
Budgets: ``max_steps`` (commands), ``max_tokens`` (prompt + completion over the
episode) and ``max_parse_errors`` in a row; when a budget runs out the agent
submits what it has. ``agent.transcript`` holds every message and per-turn token
counts; ``agent.usage`` the totals.

Both clients are optional (``pip install 'sre-env[llm]'``) and imported lazily.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from sre_env.errors import MissingExtraError, SREEnvError

__all__ = ["ChatModel", "ChatReply", "LLMAgent", "LLMError", "OpenAIChatModel", "HFChatModel", "make_chat_model"]


class LLMError(SREEnvError):
    """The model could not be reached, or answered with something that is not a chat completion."""


@dataclass(frozen=True)
class ChatReply:
    """One completion: the text, tool calls in OpenAI's shape, and what it cost in tokens."""

    text: str
    tool_calls: tuple[dict[str, Any], ...] = ()
    prompt_tokens: int = 0
    completion_tokens: int = 0

    def as_message(self) -> dict[str, Any]:
        msg: dict[str, Any] = {"role": "assistant", "content": self.text}
        if self.tool_calls:
            msg["tool_calls"] = list(self.tool_calls)
        return msg


@runtime_checkable
class ChatModel(Protocol):
    name: str

    def chat(self, messages: list[dict[str, Any]], *, tools: list[dict[str, Any]] | None = None, temperature: float = 0.0, max_tokens: int = 512) -> ChatReply: ...


class OpenAIChatModel:
    """``POST {base_url}/chat/completions`` in OpenAI's wire format, with retries on transport errors."""

    def __init__(self, model: str, base_url: str = "http://localhost:8000/v1", api_key: str | None = None, *, timeout: float = 120.0, retries: int = 3, backoff_s: float = 1.0, transport: Any = None) -> None:
        try:
            import httpx
        except ImportError:
            raise MissingExtraError("httpx", "llm") from None
        self._httpx = httpx
        self.name = model
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key
        self.retries = int(retries)
        self.backoff_s = float(backoff_s)
        self._client = httpx.Client(timeout=timeout, transport=transport)

    def __repr__(self) -> str:  # never print the key
        return f"OpenAIChatModel({self.name!r}, base_url={self.base_url!r})"

    def chat(self, messages: list[dict[str, Any]], *, tools: list[dict[str, Any]] | None = None, temperature: float = 0.0, max_tokens: int = 512) -> ChatReply:
        httpx = self._httpx
        url = f"{self.base_url}/chat/completions"
        payload: dict[str, Any] = {"model": self.name, "messages": messages, "temperature": temperature, "max_tokens": max_tokens}
        if tools:
            payload["tools"] = tools
        headers = {"Authorization": f"Bearer {self._api_key}"} if self._api_key else {}
        last = ""
        for attempt in range(self.retries + 1):
            if attempt and self.backoff_s > 0:
                time.sleep(self.backoff_s * 2 ** (attempt - 1))
            try:
                resp = self._client.post(url, json=payload, headers=headers)
            except httpx.TransportError as exc:
                last = f"{type(exc).__name__}: {exc}"
                continue
            if resp.status_code == 429 or resp.status_code >= 500:
                last = f"HTTP {resp.status_code}: {resp.text[:200]}"
                continue
            if resp.status_code >= 400:
                raise LLMError(f"{url} answered HTTP {resp.status_code}: {resp.text[:300]}")
            try:
                body = resp.json()
                message = body["choices"][0]["message"]
            except (ValueError, KeyError, IndexError, TypeError) as exc:
                raise LLMError(f"{url} returned no chat completion ({type(exc).__name__}): {resp.text[:300]}") from None
            usage = body.get("usage") or {}
            calls = tuple(c for c in (message.get("tool_calls") or []) if isinstance(c, dict))
            return ChatReply(str(message.get("content") or ""), calls, int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0))
        raise LLMError(f"{url} failed after {self.retries + 1} attempts: {last}")


class HFChatModel:
    """A local ``transformers`` model (hub id, directory, or a built model with its tokenizer)."""

    def __init__(self, model_or_path: Any, *, tokenizer: Any = None, device: str = "cpu") -> None:
        from sre_env.rewards.llm_judge import TransformersClient

        self._client = TransformersClient(model_or_path, device=device, tokenizer=tokenizer)
        self.name = self._client.model_name

    def chat(self, messages: list[dict[str, Any]], *, tools: list[dict[str, Any]] | None = None, temperature: float = 0.0, max_tokens: int = 512) -> ChatReply:
        """Generate a reply; the token counts are the ids actually fed and generated (EOS included)."""
        from sre_env.rewards.llm_judge import LLMClientError

        client = self._client
        plain = [{"role": m["role"] if m["role"] in ("system", "user", "assistant") else "user", "content": _as_text(m.get("content"))} for m in messages]
        try:
            generated, n = client.generate(plain, temperature=temperature, max_tokens=max_tokens)
        except LLMClientError as exc:
            raise LLMError(f"the conversation no longer fits the model's context: {exc}") from None
        text = client.tokenizer.decode(generated, skip_special_tokens=True)
        return ChatReply(text, (), n, int(generated.shape[0]))


def _as_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return json.dumps(content, default=str) if content is not None else ""


def make_chat_model(spec: str, *, base_url: str | None = None, api_key: str | None = None) -> ChatModel:
    """``openai:<model>`` (with ``base_url``) or ``hf:<path-or-name>``."""
    kind, _, name = spec.partition(":")
    if not name:
        raise ValueError(f"an LLM agent is 'openai:<model>' or 'hf:<path-or-name>', got {spec!r}")
    if kind == "openai":
        return OpenAIChatModel(name, base_url or "http://localhost:8000/v1", api_key)
    if kind == "hf":
        return HFChatModel(name)
    raise ValueError(f"unknown LLM kind {kind!r} in {spec!r}: use openai:<model> or hf:<path-or-name>")


@dataclass
class Usage:
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
