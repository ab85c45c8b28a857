"""The LLM clients: one for OpenAI-compatible HTTP servers, one for local ``transformers`` models.

Everything in sre-env that asks a model goes through these two classes: the LLM
agent (:mod:`sre_env.agents.llm_agent`) and the LLM diagnosis judge
(:mod:`sre_env.rewards.llm_judge`, which declares the one method it needs and
never imports this module). Each client answers both ways:

* ``chat(messages, *, tools=None, temperature=0.0, max_tokens=512) -> ChatReply``
  — the text, tool calls in OpenAI's shape and the token counts (the agent's
  :class:`ChatModel` seam);
* ``complete(messages, *, temperature, max_tokens) -> str`` — the text alone
  (the judge's ``LLMClient`` seam).

    client = OpenAIClient("qwen2.5-7b-instruct", "http://localhost:8000/v1")
    LLMAgent(client)                  # sre-env eval --agent openai:qwen2.5-7b-instruct
    LLMJudge(client)                  # SREEnv(id, diagnosis_judge=LLMJudge(client))

A failure is never a reply: every one raises :class:`~sre_env.errors.LLMError`
with the endpoint, the last HTTP status and the number of attempts.

* Transport errors (refused or dropped connections, timeouts) and overload
  statuses (429, 5xx) are retried ``retries`` times, waiting ``backoff_s``,
  then twice as long each time: a blip must not end an episode or zero a grade.
* Other statuses are configuration mistakes and raise at once: a redirect, a
  wrong key (401/403), a wrong path (404: ``base_url`` is the API root, usually
  ending in ``/v1``).
* A 200 that is not a chat completion (a web page, another API's JSON) raises
  at once too, so a wrong ``base_url`` never reads as an empty answer.
* A ``base_url`` that is not an ``http(s)://host`` URL raises when the client
  is built.

Tests hand the HTTP client ``transport=httpx.MockTransport(handler)`` (no
network). Both clients are optional (``pip install 'sre-env[llm]'``); their
libraries are imported when a client is built.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from typing import Any, Protocol
from urllib.parse import urlsplit

from sre_env.errors import LLMError, MissingExtraError

__all__ = ["ChatModel", "ChatReply", "OpenAIClient", "TransformersClient", "make_chat_model", "DEFAULT_BASE_URL"]

#: where ``openai:<model>`` looks when no base URL is given (vLLM's default)
DEFAULT_BASE_URL = "http://localhost:8000/v1"
#: characters of a server's reply quoted in an error
_QUOTE = 300


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


class ChatModel(Protocol):
    """The LLM agent's seam: a named model that answers a conversation."""

    name: str

    def chat(self, messages: list[dict[str, Any]], *, tools: list[dict[str, Any]] | None = None, temperature: float = 0.0, max_tokens: int = 512) -> ChatReply: ...


# --------------------------------------------------------------------------- HTTP
class OpenAIClient:
    """``POST {base_url}/chat/completions`` in OpenAI's wire format; see the module docstring.

    ``timeout`` is per request, in seconds. Each request opens its own
    connection and closes it (nothing to close afterwards, and a client can be
    shared by an agent and a judge); ``transport`` is an ``httpx`` transport,
    for tests ``httpx.MockTransport(handler)``.
    """

    def __init__(
        self,
        model: str,
        base_url: str = DEFAULT_BASE_URL,
        api_key: str | None = None,
        *,
        timeout: float = 120.0,
        retries: int = 3,
        backoff_s: float = 1.0,
        transport: Any = None,
    ) -> None:
        try:
            import httpx
        except ImportError:
            raise MissingExtraError("httpx", "llm") from None
        parts = urlsplit(base_url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise LLMError(f"base_url {base_url!r} is not an http(s) URL: give the API root, e.g. {DEFAULT_BASE_URL!r}", url=base_url, attempts=0)
        if retries < 0:
            raise ValueError(f"retries must be >= 0, got {retries}")
        self._httpx = httpx
        self.name = model
        self.base_url = base_url.rstrip("/")
        self.url = f"{self.base_url}/chat/completions"
        self._headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.timeout = float(timeout)
        self.retries = int(retries)
        self.backoff_s = float(backoff_s)
        self._transport = transport

    def __repr__(self) -> str:  # never print the key
        return f"OpenAIClient({self.name!r}, base_url={self.base_url!r})"

    def complete(self, messages: list[dict[str, Any]], *, temperature: float, max_tokens: int) -> str:
        """The reply's text (the LLM judge's seam)."""
        return self.chat(messages, temperature=temperature, max_tokens=max_tokens).text

    def chat(self, messages: list[dict[str, Any]], *, tools: list[dict[str, Any]] | None = None, temperature: float = 0.0, max_tokens: int = 512) -> ChatReply:
        """One completion; token counts from the server's ``usage`` (0 when it sends none)."""
        payload: dict[str, Any] = {"model": self.name, "messages": messages, "temperature": temperature, "max_tokens": max_tokens}
        if tools:
            payload["tools"] = tools
        return self._reply(self._post(payload))

    def _post(self, payload: dict[str, Any]) -> Any:
        """The retry loop: the first usable response, or LLMError."""
        httpx = self._httpx
        attempts = self.retries + 1
        last, status = "", None
        for attempt in range(attempts):
            if attempt and self.backoff_s > 0:
                time.sleep(self.backoff_s * 2 ** (attempt - 1))
            try:
                with httpx.Client(timeout=self.timeout, transport=self._transport) as client:
                    resp = client.post(self.url, json=payload, headers=self._headers)
            except httpx.TransportError as exc:
                last, status = f"{type(exc).__name__}: {exc}", None
                continue
            code = resp.status_code
            if code == 429 or code >= 500:
                last, status = f"HTTP {code}: {resp.text[:200]}", code
                continue
            if 300 <= code < 400:
                where = resp.headers.get("location", "?")
                raise LLMError(f"{self.url} answered HTTP {code}, a redirect to {where}: give base_url as the final address", url=self.url, status=code, attempts=attempt + 1)
            if code >= 400:
                hint = {401: " (check the API key)", 403: " (check the API key)", 404: " (no such endpoint: base_url is the API root, usually ending in /v1)"}.get(code, "")
                raise LLMError(f"{self.url} answered HTTP {code}{hint}: {resp.text[:_QUOTE]}", url=self.url, status=code, attempts=attempt + 1)
            return resp
        raise LLMError(f"{self.url} gave no completion after {attempts} attempts; the last: {last}", url=self.url, status=status, attempts=attempts)

    def _reply(self, resp: Any) -> ChatReply:
        """A 2xx response as a ChatReply; LLMError unless it is an OpenAI chat completion."""
        try:
            body = resp.json()
            message = body["choices"][0]["message"]
            content = message.get("content")
            usage = body.get("usage") or {}
            calls = tuple(c for c in (message.get("tool_calls") or []) if isinstance(c, dict))
            counts = int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)
            if content is not None and not isinstance(content, str):
                raise TypeError(f"the message content is {type(content).__name__}, not text")
        except (ValueError, KeyError, IndexError, TypeError, AttributeError) as exc:
            raise LLMError(
                f"{self.url} answered HTTP {resp.status_code} but not with a chat completion ({type(exc).__name__}: {exc}); is base_url an OpenAI-compatible API? It began: {resp.text[:_QUOTE]!r}",
                url=self.url,
                status=resp.status_code,
            ) from None
        return ChatReply(content or "", calls, *counts)


# --------------------------------------------------------------------------- transformers
class TransformersClient:
    """A local causal LM through ``transformers``; greedy decoding at temperature 0.

    ``model_or_path`` is a hub id or local directory (loaded with the Auto
    classes), or an already built model, in which case ``tokenizer`` is required.
    The tokenizer's chat template is used when it has one; otherwise a plain
    "System:/User:/Assistant:" transcript, which any base model can continue.
    Tool schemas are not passed to the model (it reads the ReAct text prompt);
    token counts are the ids actually fed and generated (EOS included).
    """

    def __init__(self, model_or_path: Any, device: str = "cpu", *, tokenizer: Any = None) -> None:
        try:
            import transformers
        except ImportError:
            raise MissingExtraError("transformers", "llm") from None
        try:
            import torch
        except ImportError:
            raise MissingExtraError("torch", "llm") from None
        self._torch = torch
        self._transformers = transformers
        if isinstance(model_or_path, (str, os.PathLike)):
            self.name = str(model_or_path)
            self.tokenizer = tokenizer or transformers.AutoTokenizer.from_pretrained(self.name)
            self.model = transformers.AutoModelForCausalLM.from_pretrained(self.name)
        else:
            if tokenizer is None:
                raise ValueError("a model object needs its tokenizer: TransformersClient(model, tokenizer=...)")
            self.name = type(model_or_path).__name__
            self.model = model_or_path
            self.tokenizer = tokenizer
        self.device = device
        self.model.to(device)
        self.model.eval()

    def __repr__(self) -> str:
        return f"TransformersClient({self.name!r}, device={self.device!r})"

    def complete(self, messages: list[dict[str, Any]], *, temperature: float, max_tokens: int) -> str:
        """The reply's text (the LLM judge's seam)."""
        return self.chat(messages, temperature=temperature, max_tokens=max_tokens).text

    def chat(self, messages: list[dict[str, Any]], *, tools: list[dict[str, Any]] | None = None, temperature: float = 0.0, max_tokens: int = 512) -> ChatReply:
        """Generate a reply; tool results and other roles are shown to the model as user text."""
        plain = [{"role": m["role"] if m["role"] in ("system", "user", "assistant") else "user", "content": _as_text(m.get("content"))} for m in messages]
        generated, n = self._generate(plain, temperature=temperature, max_tokens=max_tokens)
        text = self.tokenizer.decode(generated, skip_special_tokens=True)
        return ChatReply(text, (), n, int(generated.shape[0]))

    def _prompt(self, messages: list[dict[str, str]]) -> str:
        if getattr(self.tokenizer, "chat_template", None):
            return self.tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        parts = [f"{m.get('role', 'user').capitalize()}: {m.get('content', '')}" for m in messages]
        return "\n\n".join(parts) + "\n\nAssistant:"

    def _context_length(self) -> int | None:
        config = getattr(self.model, "config", None)
        for attr in ("max_position_embeddings", "n_positions", "max_sequence_length"):
            value = getattr(config, attr, None)
            if isinstance(value, int) and value > 0:
                return value
        return None

    def _generate(self, messages: list[dict[str, str]], *, temperature: float, max_tokens: int) -> tuple[Any, int]:
        """(the generated token ids, the prompt's length in tokens); LLMError when the prompt fills the context."""
        torch = self._torch
        enc = self.tokenizer(self._prompt(messages), return_tensors="pt", add_special_tokens=False)
        input_ids = enc["input_ids"].to(self.device)
        attention_mask = enc.get("attention_mask")
        attention_mask = attention_mask.to(self.device) if attention_mask is not None else torch.ones_like(input_ids)
        n = int(input_ids.shape[1])
        limit = self._context_length()
        if limit is not None and n + max_tokens > limit:
            max_tokens = limit - n
            if max_tokens < 1:
                raise LLMError(f"the conversation ({n} tokens) no longer fits the context of {self.name} ({limit} tokens)")
        eos = self.tokenizer.eos_token_id
        pad = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else eos
        sampling: dict[str, Any] = {"do_sample": True, "temperature": temperature} if temperature > 0 else {"do_sample": False}
        # a fresh config: the checkpoint's own sampling defaults must not apply (or warn)
        config = self._transformers.GenerationConfig(max_new_tokens=max_tokens, pad_token_id=pad, eos_token_id=eos, **sampling)
        with torch.no_grad():
            out = self.model.generate(input_ids=input_ids, attention_mask=attention_mask, generation_config=config)
        generated = out[0, n:]
        if pad is not None and pad != eos:
            generated = generated[generated != pad]
        return generated, n


def _as_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return json.dumps(content, default=str) if content is not None else ""


def make_chat_model(spec: str, *, base_url: str | None = None, api_key: str | None = None) -> OpenAIClient | TransformersClient:
    """``openai:<model>`` (with ``base_url``) or ``hf:<path-or-name>``: what ``sre-env eval --agent`` takes."""
    kind, _, name = spec.partition(":")
    if not name:
        raise ValueError(f"an LLM agent is 'openai:<model>' or 'hf:<path-or-name>', got {spec!r}")
    if kind == "openai":
        return OpenAIClient(name, base_url or DEFAULT_BASE_URL, api_key)
    if kind == "hf":
        return TransformersClient(name)
    raise ValueError(f"unknown LLM kind {kind!r} in {spec!r}: use openai:<model> or hf:<path-or-name>")
