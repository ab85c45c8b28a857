"""Chat wrapper (parsing, tool schemas, round trips), text rendering, tokenized observations, recording."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import sre_env  # noqa: F401
from sre_env.wrappers.chat import ChatWrapper, parse_action, tool_schemas
from sre_env.wrappers.recording import ATIF_VERSION, RecordEpisode
from sre_env.wrappers.text import TextObservation, render_observation

ENV_ID = "SREGym/MissingEnvVar-v0"
NS = "hotel-reservation"
WRAPPED_OK = pytest.mark.filterwarnings("ignore:.*is different from the unwrapped version")


@pytest.mark.parametrize(
    "reply, command, source",
    [
        ("Thought: look at pods\nAction:\n```bash\nkubectl get pods -A\n```", "kubectl get pods -A", "fenced"),
        ("```\n$ kubectl get nodes\n```", "kubectl get nodes", "fenced"),
        ("first\n```sh\nkubectl get svc\n```\nthen\n```bash\nkubectl get ep\n```", "kubectl get ep", "fenced"),
        ("Thought: done\nAction: submit the geo deployment lost MONGO_ADDRESS", "submit the geo deployment lost MONGO_ADDRESS", "action-line"),
        ("I will run <command>kubectl top pods -A</command>", "kubectl top pods -A", "text"),
        ("Let me check.\nkubectl describe svc geo -n x", "kubectl describe svc geo -n x", "text"),
        ("```bash\nkubectl apply -f - <<'EOF'\nkind: X\nEOF\n```", "kubectl apply -f - <<'EOF'\nkind: X\nEOF", "fenced"),
        ({"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "run_command", "arguments": "{\"command\": \"kubectl get pods\"}"}}]}, "kubectl get pods", "openai-tool"),
        ({"role": "assistant", "content": [{"type": "text", "text": "checking"}, {"type": "tool_use", "id": "t1", "name": "submit", "input": {"diagnosis": "disk"}}]}, "submit disk", "anthropic-tool"),
    ],
)
def test_parse_action_is_lenient(reply, command, source) -> None:
    parsed = parse_action(reply)
    assert parsed.ok and parsed.command == command and parsed.source == source


@pytest.mark.parametrize(
    "reply, error",
    [
        ("I am not sure what to do.", "could not find a command"),
        ({"tool_calls": [{"id": "x", "function": {"name": "run_command", "arguments": "{not json"}}]}, "not valid JSON"),
        ({"tool_calls": [{"id": "x", "function": {"name": "rm_rf", "arguments": "{}"}}]}, "unknown tool"),
        ([{"type": "tool_use", "id": "t", "name": "run_command", "input": {"command": ""}}], "non-empty"),
    ],
)
def test_parse_errors_explain_what_to_do(reply, error) -> None:
    parsed = parse_action(reply)
    assert not parsed.ok and error in parsed.error


def test_tool_schemas_in_both_formats_describe_the_same_tools() -> None:
    openai, anthropic = tool_schemas("openai"), tool_schemas("anthropic")
    assert [t["function"]["name"] for t in openai] == [t["name"] for t in anthropic] == ["run_command", "submit"]
    assert openai[0]["type"] == "function" and openai[0]["function"]["parameters"]["required"] == ["command"]
    assert anthropic[1]["input_schema"]["properties"]["diagnosis"]["type"] == "string"
    with pytest.raises(ValueError):
        tool_schemas("cohere")


def test_chat_round_trip_with_plain_text_and_tool_calls() -> None:
    env = ChatWrapper(gym.make(ENV_ID))
    first, info = env.reset(seed=0)
    system, user = env.messages
    assert system["role"] == "system" and "kubectl get TYPE" in system["content"] and "submit <root cause>" in system["content"]
    assert user["role"] == "user" and "PAGE:" in first and first == user["content"]
    text, reward, term, trunc, info = env.step(f"Thought: pods first\nAction:\n```bash\nkubectl get pods -n {NS}\n```")
    assert "READY   STATUS" in text and info["command"] == f"kubectl get pods -n {NS}" and not term
    assert env.unwrapped.history[-1]["command"] == f"kubectl get pods -n {NS}"
    steps = len(env.unwrapped.history)
    text, reward, term, trunc, info = env.step("hmm")
    assert text.startswith("Parse error") and len(env.unwrapped.history) == steps and not (term or trunc)
    v = env.unwrapped.scenario.variant
    call = {"id": "call_7", "type": "function", "function": {"name": "run_command", "arguments": json.dumps({"command": f"kubectl set env deployment/{v['service']} -n {NS} {v['var']}={v['value']}"})}}
    env.step({"role": "assistant", "content": "", "tool_calls": [call]})
    assert env.messages[-1]["role"] == "tool" and env.messages[-1]["tool_call_id"] == "call_7"
    text, reward, term, trunc, info = env.step([{"type": "tool_use", "id": "tu1", "name": "submit", "input": {"diagnosis": f"{v['var']} was removed from deployment/{v['service']}"}}])
    assert term and info["is_success"] and reward > 0.9
    assert env.messages[-1]["content"][0]["type"] == "tool_result" and "episode over" in env.messages[-1]["content"][0]["content"]


def test_repeated_parse_errors_end_the_episode_graded() -> None:
    env = ChatWrapper(gym.make(ENV_ID), max_parse_errors=2)
    env.reset(seed=0)
    _, _, _, trunc, _ = env.step("no idea")
    assert not trunc
    _, reward, term, trunc, info = env.step("still no idea")
    assert trunc and not term and info["is_success"] is False and "reward_components" in info


@WRAPPED_OK
def test_check_env_on_chat_and_text_wrappers() -> None:
    check_env(ChatWrapper(gym.make(ENV_ID, max_steps=5)), skip_render_check=True)
    check_env(TextObservation(gym.make(ENV_ID, max_steps=5)), skip_render_check=True)


def test_render_observation_sections_and_metrics() -> None:
    obs = {"output": "hello", "alerts": "", "logs": "pod: ERR x", "traces": "", "step": np.array([2]), "time": np.array([30.0]), "metrics": np.array([[1.0, 100.0], [0.5, 90.0]])}
    text = render_observation(obs, metric_names=["client_success_ratio{namespace=a}", "client_rps{namespace=a}"])
    assert text.startswith("[step 2, 30 s")
    assert "hello" in text and "## Recent warnings and errors in logs\npod: ERR x" in text and "Firing alerts" not in text
    assert "client_success_ratio: 0.500 (window start 1.000)" in text and "client_rps: 90.0" in text


def test_tokenized_observation_with_a_tokenizer_built_here() -> None:
    tokenizers = pytest.importorskip("tokenizers")
    transformers = pytest.importorskip("transformers")
    from sre_env.wrappers.tokenized import TokenizedObservation

    tok = tokenizers.Tokenizer(tokenizers.models.WordLevel(unk_token="[UNK]"))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    tok.train_from_iterator(["kubectl get pods PAGE users hotel reservation fail firing alerts"] * 2, tokenizers.trainers.WordLevelTrainer(special_tokens=["[UNK]", "[PAD]"]))
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]")
    env = TokenizedObservation(gym.make(ENV_ID), fast, max_length=64)
    obs, _ = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    assert obs["attention_mask"].sum() == 64  # the brief is longer: left-truncated to the newest 64 tokens
    obs, *_ = env.step("kubectl get nodes -o name | head -1")
    n = int(obs["attention_mask"].sum())
    assert 0 < n <= 64 and (obs["input_ids"][n:] == fast.pad_token_id).all()


def test_recording_writes_jsonl_and_atif(tmp_path) -> None:
    env = RecordEpisode(gym.make(ENV_ID), tmp_path / "ep.jsonl", atif_dir=tmp_path / "atif", agent="test-agent", model="m")
    env.reset(seed=0)
    env.note_agent_turn("Thought: pods", prompt_tokens=10, completion_tokens=3)
    env.step(f"kubectl get pods -n {NS}")
    env.step("submit no idea")
    lines = [json.loads(x) for x in (tmp_path / "ep.jsonl").read_text().splitlines()]
    assert [x["type"] for x in lines] == ["reset", "step", "step", "end"]
    assert lines[1]["message"] == "Thought: pods" and lines[1]["prompt_tokens"] == 10 and "READY   STATUS" in lines[1]["output"]
    assert lines[3]["is_success"] is False
    (path,) = env.atif_paths
    traj = json.loads(path.read_text())
    assert traj["schema_version"] == ATIF_VERSION and traj["agent"] == {"name": "test-agent", "version": sre_env.__version__, "model_name": "m"}
    agent_steps = [s for s in traj["steps"] if s["source"] == "agent"]
    assert [s["tool_calls"][0]["function_name"] for s in agent_steps] == ["run_command", "submit"]
    call = agent_steps[0]["tool_calls"][0]
    assert agent_steps[0]["observation"]["results"][0]["source_call_id"] == call["tool_call_id"]
    assert traj["final_metrics"]["total_prompt_tokens"] == 10 and [s["step_id"] for s in traj["steps"]] == list(range(1, len(traj["steps"]) + 1))
