"""The LLM agent loop through its real code paths: an OpenAI-compatible stand-in server, a tiny local model."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Iterator

import gymnasium as gym
import pytest

import sre_env  # noqa: F401
from sre_env.agents.episode import run_episode

ENV_ID = "SREGym/MissingEnvVar-v0"
NS = "hotel-reservation"

pytest.importorskip("httpx", reason="the OpenAI-compatible client needs httpx (pip install 'sre-env[llm]')")


def completion(content: str | None = None, tool_calls: list[dict[str, Any]] | None = None, usage: tuple[int, int] = (100, 20)) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = tool_calls
    return {"id": "x", "object": "chat.completion", "choices": [{"index": 0, "message": message, "finish_reason": "stop"}], "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)}}


class StandIn:
    """A scripted OpenAI-compatible server on 127.0.0.1: each POST takes the next reply.

    A reply is a completion dict, ("status", code) or "drop" (close the connection
    without answering, a transport error).
    """

    def __init__(self, replies: list[Any]) -> None:
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                stand_in.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
                reply = stand_in.replies.pop(0) if stand_in.replies else completion("```bash\nsubmit out of script\n```")
                if reply == "drop":
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if isinstance(reply, tuple):
                    self.send_response(reply[1])
                    self.end_headers()
                    self.wfile.write(b"overloaded")
                    return
                data = json.dumps(reply).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def stand_in() -> Iterator[Any]:
    servers: list[StandIn] = []

    def start(replies: list[Any]) -> StandIn:
        servers.append(StandIn(replies))
        return servers[-1]

    yield start
    for s in servers:
        s.close()


def fix_for(seed: int) -> tuple[str, str]:
    env = gym.make(ENV_ID)
    env.reset(seed=seed)
    v = env.unwrapped.scenario.variant
    return f"kubectl set env deployment/{v['service']} -n {NS} {v['var']}={v['value']}", f"{v['var']} was removed from deployment/{v['service']}"


def test_openai_agent_solves_an_episode_with_retries_and_accounting(stand_in) -> None:
    from sre_env.agents.llm_agent import LLMAgent
    from sre_env.agents.llm_client import OpenAIClient

    fix, diagnosis = fix_for(0)
    server = stand_in(
        [
            "drop",  # a transport error: retried
            ("status", 503),  # overload: retried
            completion(f"Thought: look at the pods.\nAction:\n```bash\nkubectl get pods -n {NS}\n```"),
            completion("I think something is wrong."),  # no command: the parse error goes back to the model
            completion(None, [{"id": "call_1", "type": "function", "function": {"name": "run_command", "arguments": json.dumps({"command": fix})}}]),
            completion(f"Action: submit {diagnosis}"),
        ]
    )
    model = OpenAIClient("stand-in", server.url, api_key="sk-test", backoff_s=0.0)
    agent = LLMAgent(model, use_tools=True)
    result = run_episode(gym.make(ENV_ID), agent, seed=0)
    assert result.passed and [s.command for s in result.steps] == [f"kubectl get pods -n {NS}", fix, f"submit {diagnosis}"]
    # 6 HTTP requests, 4 completions accounted (the drop and the 503 returned none)
    assert len(server.requests) == 6 and agent.usage.calls == 4
    assert agent.usage.prompt_tokens == 400 and agent.usage.completion_tokens == 80 and agent.usage.parse_errors == 1
    first = server.requests[0]
    assert first["path"] == "/v1/chat/completions" and first["auth"] == "Bearer sk-test"
    assert first["body"]["model"] == "stand-in" and first["body"]["temperature"] == 0.0
    assert [t["function"]["name"] for t in first["body"]["tools"]] == ["run_command", "submit"]
    roles = [m["role"] for m in server.requests[-1]["body"]["messages"]]
    assert roles[:2] == ["system", "user"] and "tool" in roles  # the tool call was answered with a tool message
    last = server.requests[-1]["body"]["messages"]
    assert any(m["role"] == "user" and str(m["content"]).startswith("Parse error") for m in last)


def test_openai_agent_gives_up_within_budgets(stand_in) -> None:
    from sre_env.agents.llm_agent import LLMAgent
    from sre_env.agents.llm_client import OpenAIClient
    from sre_env.errors import LLMError

    server = stand_in([completion(f"```bash\nkubectl get pods -n {NS}\n```")] * 5)
    agent = LLMAgent(OpenAIClient("m", server.url, backoff_s=0.0), max_steps=2)
    result = run_episode(gym.make(ENV_ID), agent, seed=0)
    assert len(result.steps) == 3 and result.diagnosis.startswith("(agent stopped: step budget")
    assert not result.passed and len(server.requests) == 2
    server2 = stand_in([completion("```bash\nkubectl get nodes\n```", usage=(900, 200))] * 3)
    agent = LLMAgent(OpenAIClient("m", server2.url, backoff_s=0.0), max_tokens=1000)
    result = run_episode(gym.make(ENV_ID), agent, seed=0)
    assert "token budget" in result.diagnosis and agent.usage.total_tokens == 1100
    dead = stand_in([("status", 500)] * 3)
    with pytest.raises(LLMError, match="after 3 attempts"):
        OpenAIClient("m", dead.url, retries=2, backoff_s=0.0).chat([{"role": "user", "content": "hi"}])


def test_eval_cli_with_an_openai_agent_saves_transcripts(stand_in, tmp_path, capsys) -> None:
    from sre_env.cli import main

    fix, diagnosis = fix_for(0)
    server = stand_in([completion(f"```bash\n{fix}\n```"), completion(f"```bash\nsubmit {diagnosis}\n```")])
    code = main(["eval", "--ids", ENV_ID, "--agent", "openai:stand-in", "--base-url", server.url, "--workers", "1", "--quiet", "--out", str(tmp_path)])
    assert code == 0, capsys.readouterr()
    data = json.loads((tmp_path / "results.json").read_text())
    (row,) = data["rows"]
    assert row["success"] is True and row["prompt_tokens"] == 200 and row["completion_tokens"] == 40
    transcript = json.loads((tmp_path / "transcripts" / "SREGym_MissingEnvVar-v0-seed0-a0.json").read_text())
    assert transcript["messages"][0]["role"] == "system" and transcript["usage"]["calls"] == 2
    atif = json.loads((tmp_path / "transcripts" / "SREGym_MissingEnvVar-v0-seed0-a0.atif.json").read_text())
    assert atif["agent"]["model_name"] == "stand-in" and atif["final_metrics"]["total_prompt_tokens"] == 200


# ----------------------------------------------------------------- hf:
WORDS = "kubectl get pods submit the geo deployment is broken yes no Thought Action".split()


@pytest.fixture(scope="module")
def tiny_model_dir(tmp_path_factory) -> str:
    """A 1-layer GPT-2 with random weights and a word-level tokenizer, saved locally (no download)."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    tokenizers = pytest.importorskip("tokenizers")
    tok = tokenizers.Tokenizer(tokenizers.models.WordLevel(unk_token="[UNK]"))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    tok.train_from_iterator([" ".join(WORDS)] * 3, tokenizers.trainers.WordLevelTrainer(special_tokens=["[UNK]", "[PAD]", "[EOS]"]))
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", eos_token="[EOS]")
    torch.manual_seed(0)
    config = transformers.GPT2Config(n_layer=1, n_head=2, n_embd=16, n_positions=8192, vocab_size=fast.vocab_size, bos_token_id=fast.eos_token_id, eos_token_id=fast.eos_token_id, pad_token_id=fast.pad_token_id)
    path = tmp_path_factory.mktemp("tiny-gpt2")
    transformers.GPT2LMHeadModel(config).save_pretrained(path)
    fast.save_pretrained(path)
    return str(path)


def test_hf_agent_runs_a_local_model_through_the_loop(tiny_model_dir: str) -> None:
    from sre_env.agents.llm_agent import LLMAgent
    from sre_env.agents.llm_client import TransformersClient, make_chat_model

    model = make_chat_model(f"hf:{tiny_model_dir}")
    assert isinstance(model, TransformersClient)
    agent = LLMAgent(model, max_steps=2, max_reply_tokens=6, max_parse_errors=2)
    result = run_episode(gym.make(ENV_ID, max_steps=4), agent, seed=0)
    # the random model's words may or may not form a command; either way the loop ends graded
    assert result.terminated or result.truncated
    assert result.reward_components and agent.usage.calls >= 1
    assert agent.usage.prompt_tokens > 100 and agent.usage.completion_tokens >= 1
    again = LLMAgent(make_chat_model(f"hf:{tiny_model_dir}"), max_steps=2, max_reply_tokens=6, max_parse_errors=2)
    result2 = run_episode(gym.make(ENV_ID, max_steps=4), again, seed=0)
    assert [s.command for s in result2.steps] == [s.command for s in result.steps]  # greedy: deterministic


def test_agent_specs_are_validated() -> None:
    from sre_env.agents.llm_client import make_chat_model

    with pytest.raises(ValueError, match="openai:<model>"):
        make_chat_model("openai:")
    with pytest.raises(ValueError, match="unknown LLM kind"):
        make_chat_model("claude:opus")
