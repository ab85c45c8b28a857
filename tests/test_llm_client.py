"""The LLM clients' retry loop and their one error class, against in-process fakes (no network).

The HTTP client is driven through ``httpx.MockTransport(handler)``: each handler
call is one request, so the tests count attempts exactly and see every header.
"""

from __future__ import annotations

import json
import sys
from typing import Any, Callable

import pytest

from sre_env.errors import LLMError, MissingExtraError, SREEnvError

httpx = pytest.importorskip("httpx", reason="the OpenAI-compatible client needs httpx (pip install 'sre-env[llm]')")

from sre_env.agents import llm_client  # noqa: E402
from sre_env.agents.llm_client import ChatReply, OpenAIClient, make_chat_model  # noqa: E402

URL = "http://llm.test/v1"
HELLO = [{"role": "user", "content": "hi"}]


def completion(content: str | None = "hello", *, tool_calls: list[dict[str, Any]] | None = None, usage: tuple[int, int] | None = (7, 3)) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    body: dict[str, Any] = {"object": "chat.completion", "choices": [{"index": 0, "message": message, "finish_reason": "stop"}]}
    if usage is not None:
        body["usage"] = {"prompt_tokens": usage[0], "completion_tokens": usage[1]}
    return body


class Server:
    """A scripted fake: each request takes the next step, a response or an exception to raise."""

    def __init__(self, *steps: httpx.Response | Exception | Callable[[httpx.Request], httpx.Response]) -> None:
        self.steps = list(steps)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        step = self.steps.pop(0)
        if isinstance(step, Exception):
            raise step
        return step(request) if callable(step) else step

    def client(self, **kw: Any) -> OpenAIClient:
        return OpenAIClient("test-model", kw.pop("base_url", URL), transport=httpx.MockTransport(self), **{"backoff_s": 0.0, **kw})


def ok(body: Any = None) -> httpx.Response:
    return httpx.Response(200, json=completion() if body is None else body)


@pytest.fixture
def sleeps(monkeypatch) -> list[float]:
    """The back-off waits the retry loop asked for (and none actually slept)."""
    waited: list[float] = []
    monkeypatch.setattr(llm_client.time, "sleep", waited.append)
    return waited


# ----------------------------------------------------------------- the request
def test_one_request_in_openai_shape_and_the_reply_with_its_token_counts() -> None:
    calls = [{"id": "c1", "type": "function", "function": {"name": "run_command", "arguments": "{}"}}]
    server = Server(ok(completion("look", tool_calls=calls)))
    client = server.client(api_key="sk-secret")
    tools = [{"type": "function", "function": {"name": "run_command"}}]
    reply = client.chat(HELLO, tools=tools, temperature=0.5, max_tokens=64)
    assert reply == ChatReply("look", tuple(calls), 7, 3)
    assert reply.as_message() == {"role": "assistant", "content": "look", "tool_calls": calls}
    (request,) = server.requests
    assert request.method == "POST" and str(request.url) == f"{URL}/chat/completions"
    assert request.headers["authorization"] == "Bearer sk-secret"
    assert json.loads(request.content) == {"model": "test-model", "messages": HELLO, "temperature": 0.5, "max_tokens": 64, "tools": tools}
    assert "sk-secret" not in repr(client) and client.name == "test-model"


def test_complete_is_the_text_and_sends_no_tools_or_key() -> None:
    server = Server(ok(completion(None, usage=None)), ok())
    client = server.client(base_url=URL + "/")
    assert client.complete(HELLO, temperature=0.0, max_tokens=5) == ""  # null content: an empty answer, not a crash
    assert client.chat(HELLO) == ChatReply("hello", (), 7, 3)
    first = json.loads(server.requests[0].content)
    assert "tools" not in first and "authorization" not in server.requests[0].headers
    assert str(server.requests[0].url) == f"{URL}/chat/completions"  # the trailing slash is not doubled


# ----------------------------------------------------------------- the retry loop
def test_transport_errors_and_overload_are_retried_with_doubling_back_off(sleeps) -> None:
    server = Server(httpx.ConnectError("refused"), httpx.Response(503, text="busy"), httpx.ReadTimeout("slow"), httpx.Response(429, text="slow down"), ok())
    client = server.client(retries=4, backoff_s=0.5)
    assert client.chat(HELLO).text == "hello"
    assert len(server.requests) == 5 and sleeps == [0.5, 1.0, 2.0, 4.0]


def test_retries_run_out_into_one_error_with_its_context(sleeps) -> None:
    server = Server(httpx.Response(500, text="oops"), httpx.ConnectError("refused"), httpx.Response(502, text="bad gateway"))
    with pytest.raises(LLMError, match=r"gave no completion after 3 attempts; the last: HTTP 502: bad gateway") as info:
        server.client(retries=2, backoff_s=1.0).chat(HELLO)
    err = info.value
    assert isinstance(err, SREEnvError) and err.url == f"{URL}/chat/completions" and err.status == 502 and err.attempts == 3
    assert len(server.requests) == 3 and sleeps == [1.0, 2.0]


def test_an_unreachable_server_names_the_transport_error() -> None:
    server = Server(*[httpx.ConnectError("[Errno 111] Connection refused")] * 2)
    with pytest.raises(LLMError, match=r"after 2 attempts; the last: ConnectError: \[Errno 111\] Connection refused") as info:
        server.client(retries=1).complete(HELLO, temperature=0.0, max_tokens=5)
    assert info.value.status is None and info.value.attempts == 2


def test_zero_retries_is_one_attempt() -> None:
    server = Server(httpx.Response(503))
    with pytest.raises(LLMError, match="after 1 attempts") as info:
        server.client(retries=0).chat(HELLO)
    assert info.value.attempts == 1 and len(server.requests) == 1
    with pytest.raises(ValueError, match="retries"):
        OpenAIClient("m", URL, retries=-1)


# ----------------------------------------------------------------- mistakes raise at once
@pytest.mark.parametrize(
    "status, hint",
    [(400, "HTTP 400: bad field"), (401, "check the API key"), (403, "check the API key"), (404, "usually ending in /v1")],
)
def test_client_errors_are_not_retried_and_say_what_to_check(status: int, hint: str, sleeps) -> None:
    server = Server(httpx.Response(status, text="bad field"))
    with pytest.raises(LLMError, match=f"answered HTTP {status}") as info:
        server.client(retries=3).chat(HELLO)
    assert hint in str(info.value) and info.value.status == status and info.value.attempts == 1
    assert len(server.requests) == 1 and sleeps == []


def test_a_redirect_says_where_it_points() -> None:
    server = Server(httpx.Response(301, headers={"location": "https://llm.test/v1/chat/completions"}))
    with pytest.raises(LLMError, match=r"HTTP 301, a redirect to https://llm.test/v1/chat/completions") as info:
        server.client().chat(HELLO)
    assert info.value.status == 301 and len(server.requests) == 1


@pytest.mark.parametrize(
    "response",
    [
        httpx.Response(200, text="<!doctype html><title>My dashboard</title>"),  # a web UI at base_url
        httpx.Response(200, json={"data": [{"id": "test-model"}]}),  # another endpoint's JSON
        httpx.Response(200, json={"choices": []}),
        httpx.Response(200, json={"choices": [{"message": {"content": ["parts"]}}]}),
        httpx.Response(200, json=["not", "an", "object"]),
    ],
    ids=["html", "other-json", "no-choices", "content-not-text", "json-list"],
)
def test_a_200_that_is_not_a_chat_completion_is_an_error_not_an_empty_answer(response: httpx.Response) -> None:
    server = Server(response)
    with pytest.raises(LLMError, match="not with a chat completion") as info:
        server.client().complete(HELLO, temperature=0.0, max_tokens=5)
    assert "is base_url an OpenAI-compatible API?" in str(info.value) and info.value.status == 200
    assert len(server.requests) == 1


@pytest.mark.parametrize("base_url", ["localhost:8000/v1", "ftp://llm.test/v1", "http://", "/v1", ""])
def test_a_base_url_that_is_not_http_fails_when_the_client_is_built(base_url: str) -> None:
    server = Server()
    with pytest.raises(LLMError, match="is not an http\\(s\\) URL"):
        server.client(base_url=base_url)
    assert server.requests == []


def test_specs_build_the_clients() -> None:
    client = make_chat_model("openai:qwen", base_url=URL, api_key="k")
    assert isinstance(client, OpenAIClient) and client.name == "qwen" and client.url == f"{URL}/chat/completions"
    assert make_chat_model("openai:qwen").base_url == llm_client.DEFAULT_BASE_URL
    with pytest.raises(LLMError, match="not an http"):
        make_chat_model("openai:qwen", base_url="localhost:8000")


def test_eval_records_a_bad_base_url_as_the_rows_error(tmp_path, capsys) -> None:
    from sre_env.cli import main

    code = main(["eval", "--ids", "MissingEnvVar", "--agent", "openai:m", "--base-url", "localhost:8000/v1", "--workers", "1", "--quiet", "--out", str(tmp_path)])
    assert code == 1, capsys.readouterr()
    (row,) = json.loads((tmp_path / "results.json").read_text())["rows"]
    assert row["success"] is False and row["error"].startswith("LLMError: base_url 'localhost:8000/v1' is not an http(s) URL")


# ----------------------------------------------------------------- optional extras
def test_missing_httpx_names_the_extra(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "httpx", None)
    with pytest.raises(MissingExtraError, match=r"sre-env\[llm\]") as info:
        OpenAIClient("m", "http://127.0.0.1:9")
    assert info.value.package == "httpx" and info.value.extra == "llm"


def test_missing_transformers_names_the_extra(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "transformers", None)
    with pytest.raises(MissingExtraError) as info:
        llm_client.TransformersClient("nowhere")
    assert info.value.package == "transformers" and info.value.extra == "llm"


def test_a_conversation_longer_than_a_local_models_context_is_the_same_error() -> None:
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    tokenizers = pytest.importorskip("tokenizers")
    tok = tokenizers.Tokenizer(tokenizers.models.WordLevel(unk_token="[UNK]"))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    tok.train_from_iterator(["hi there User Assistant :"] * 3, tokenizers.trainers.WordLevelTrainer(special_tokens=["[UNK]", "[PAD]", "[EOS]"]))
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", eos_token="[EOS]")
    torch.manual_seed(0)
    config = transformers.GPT2Config(n_layer=1, n_head=2, n_embd=16, n_positions=32, vocab_size=fast.vocab_size, eos_token_id=fast.eos_token_id, pad_token_id=fast.pad_token_id)
    client = llm_client.TransformersClient(transformers.GPT2LMHeadModel(config), tokenizer=fast)
    short = client.chat(HELLO, max_tokens=4)
    assert short.prompt_tokens == 5 and 1 <= short.completion_tokens <= 4  # "User : hi Assistant :"
    assert client.complete(HELLO, temperature=0.0, max_tokens=4) == short.text  # greedy: the same words both ways
    with pytest.raises(LLMError, match=r"the conversation \(\d+ tokens\) no longer fits the context of GPT2LMHeadModel \(32 tokens\)") as info:
        client.chat([{"role": "user", "content": "hi there " * 20}])
    assert info.value.url is None and info.value.status is None
