"""The LLM judge through its real code paths, with no network beyond loopback.

(a) A stand-in OpenAI-compatible server (stdlib ``http.server`` on 127.0.0.1, an
ephemeral port) plays scripted replies to the shared HTTP client
(``sre_env.agents.llm_client.OpenAIClient``): good answers, a malformed answer
then a good one, dropped connections. (b) A tiny randomly initialised GPT-2 with
a locally trained word-level tokenizer, saved and loaded from a temp dir (no
download): its output is noise, so the judge must retry once and then score
every question "no" with the reason recorded. (c) A client built from a plain
function, through the judge's one-method seam, grading a real episode.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from sre_env.envs.base import RootCause
from sre_env.errors import LLMError
from sre_env.rewards.diagnosis import QUESTIONS, DiagnosisContext, parse_submission
from sre_env.rewards.llm_judge import LLMJudge, build_messages, parse_answers

IDS = [q.id for q in QUESTIONS]

ROOT = RootCause(
    component="node/worker-1",
    namespace="hotel-reservation",
    layer="hardware",
    mechanism="latent sector errors: disk reads fail with I/O errors (EIO)",
    summary="Latent sector errors on /dev/sdb of worker-1; mongodb-rate aborts in a loop; rate fails on it.",
    details={"node": "worker-1", "device": "/dev/sdb", "sectors": [1234, 5678], "database": "mongodb-rate"},
    affected=("deployment/mongodb-rate", "deployment/rate"),
)
CTX = DiagnosisContext(
    namespace="hotel-reservation",
    components=("frontend", "search", "rate", "geo", "mongodb-rate", "mongodb-geo"),
    nodes=("control-plane", "worker-1", "worker-2"),
    affected=ROOT.affected,
    symptomatic=(*ROOT.affected, "search", "frontend", "node/worker-1"),
    mechanism_id="latent_sector_errors",
)
GOOD_TEXT = "Latent sector errors on worker-1 /dev/sdb crash mongodb-rate; rate fails and users see errors."


def answers_json(value: str = "yes", ids: list[str] | None = None) -> str:
    return json.dumps({"answers": [{"id": q, "answer": value, "reason": f"because {q}"} for q in (ids or IDS)]})


def completion(content: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "model": "judge-test",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
    }


class Script:
    """What the stand-in server does for each successive request, and what it received."""

    def __init__(self, steps: list[tuple[str, Any]]) -> None:
        self.steps = list(steps)
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.lock = threading.Lock()

    def next(self) -> tuple[str, Any]:
        with self.lock:
            return self.steps.pop(0) if self.steps else ("status", 500)


@pytest.fixture
def server() -> Iterator[Any]:
    """Start servers on demand: ``url = server(script)``; all are shut down after the test."""
    started: list[ThreadingHTTPServer] = []
    threads: list[threading.Thread] = []

    def start(script: Script) -> str:
        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                script.requests.append({"path": self.path, **json.loads(body)})
                script.headers.append(dict(self.headers))
                kind, arg = script.next()
                if kind == "close":  # drop the connection without a response
                    self.close_connection = True
                    return
                if kind == "status":
                    payload = b'{"error": "overloaded"}'
                    self.send_response(arg)
                else:
                    payload = json.dumps(completion(arg)).encode()
                    self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        httpd.daemon_threads = True
        thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        thread.start()
        started.append(httpd)
        threads.append(thread)
        return f"http://127.0.0.1:{httpd.server_address[1]}/v1"

    yield start
    for httpd in started:
        httpd.shutdown()
        httpd.server_close()
    for thread in threads:
        thread.join(timeout=10)


def client_for(url: str, **kw: Any):
    pytest.importorskip("httpx")
    from sre_env.agents.llm_client import OpenAIClient

    return OpenAIClient("judge-test", url, backoff_s=0, **{"retries": 2, **kw})


# ----------------------------------------------------------------- HTTP client
def test_good_answer_passes_and_request_is_openai_shaped(server) -> None:
    script = Script([("reply", answers_json("yes"))])
    judge = LLMJudge(client_for(server(script), api_key="sk-test"))
    result = judge.judge(GOOD_TEXT, ROOT, CTX, scenario_id="DiskSector", seed=3)
    assert result.name == "diagnosis_llm" and result.passed and result.score == 1.0
    assert [q["evidence"] for q in result.details["questions"]] == [f"because {q}" for q in IDS]
    assert result.details["attempts"] == 1 and result.details["cached"] is False
    (req,) = script.requests
    assert req["path"] == "/v1/chat/completions"
    assert req["model"] == "judge-test" and req["temperature"] == 0 and req["max_tokens"] > 0
    assert [m["role"] for m in req["messages"]] == ["system", "user"]
    assert script.headers[0]["Authorization"] == "Bearer sk-test"
    assert "sk-test" not in repr(judge.client)


def test_mixed_answers_are_scored_like_the_deterministic_grader(server) -> None:
    mixed = json.dumps({"answers": [{"id": q, "answer": "yes" if q[0] != "S" else "no", "reason": "r"} for q in IDS]})
    judge = LLMJudge(client_for(server(Script([("reply", "Sure! Here it is:\n```json\n" + mixed + "\n```")]))))
    result = judge.judge(GOOD_TEXT, ROOT, CTX, scenario_id="DiskSector", seed=0)
    assert result.details["dimensions"] == {"localization": 1.0, "characterization": 1.0, "scope": 0.0}
    assert result.score == pytest.approx(0.66) and not result.passed


def test_malformed_answer_is_retried_once_with_the_error(server) -> None:
    script = Script([("reply", "I think the diagnosis is mostly right."), ("reply", answers_json("yes"))])
    result = LLMJudge(client_for(server(script))).judge(GOOD_TEXT, ROOT, CTX, scenario_id="DiskSector", seed=1)
    assert result.passed and result.details["attempts"] == 2
    assert len(script.requests) == 2
    retry = script.requests[1]["messages"]
    assert [m["role"] for m in retry] == ["system", "user", "assistant", "user"]
    assert retry[2]["content"] == "I think the diagnosis is mostly right."
    assert "no JSON object" in retry[3]["content"]


def test_partial_answers_then_garbage_score_the_rest_no(server) -> None:
    script = Script([("reply", answers_json("yes", IDS[:4])), ("reply", "{not json")])
    result = LLMJudge(client_for(server(script))).judge(GOOD_TEXT, ROOT, CTX, scenario_id="DiskSector", seed=2)
    got = {q["id"]: q for q in result.details["questions"]}
    assert all(got[q]["answer"] for q in IDS[:4])
    assert not any(got[q]["answer"] for q in IDS[4:])
    assert all("no valid answer in 2 attempts" in got[q]["evidence"] for q in IDS[4:])
    assert result.details["unanswered"] == IDS[4:] and len(script.requests) == 2


def test_dropped_connections_are_retried(server) -> None:
    script = Script([("close", None), ("close", None), ("reply", answers_json("yes"))])
    result = LLMJudge(client_for(server(script))).judge(GOOD_TEXT, ROOT, CTX, scenario_id="DiskSector", seed=4)
    assert result.passed and len(script.requests) == 3


def test_overload_status_is_retried(server) -> None:
    script = Script([("status", 503), ("reply", answers_json("no"))])
    result = LLMJudge(client_for(server(script))).judge(GOOD_TEXT, ROOT, CTX, scenario_id="DiskSector", seed=5)
    assert result.score == 0.0 and len(script.requests) == 2


def test_unreachable_judge_is_reported_not_cached(server) -> None:
    script = Script([("close", None)] * 3 + [("reply", answers_json("yes"))])
    url = server(script)
    client = client_for(url)
    with pytest.raises(LLMError, match="after 3 attempts"):
        client.complete([{"role": "user", "content": "hi"}], temperature=0.0, max_tokens=5)
    assert len(script.requests) == 3
    script.steps[:0] = [("close", None)] * 3
    judge = LLMJudge(client)
    failed = judge.judge(GOOD_TEXT, ROOT, CTX, scenario_id="DiskSector", seed=6)
    assert not failed.passed and "after 3 attempts" in failed.details["error"]
    assert all("judge unavailable" in q["evidence"] for q in failed.details["questions"])
    # the failure was not cached: the next call reaches the (now answering) server
    assert judge.judge(GOOD_TEXT, ROOT, CTX, scenario_id="DiskSector", seed=6).passed
    script.steps[:0] = [("close", None)] * 3
    with pytest.raises(LLMError):
        LLMJudge(client, raise_on_error=True).judge(GOOD_TEXT, ROOT, CTX, scenario_id="DiskSector", seed=7)


def test_client_errors_on_bad_status_and_bad_body(server) -> None:
    client = client_for(server(Script([("status", 401), ("reply", None)])))
    with pytest.raises(LLMError, match="HTTP 401"):
        client.complete([{"role": "user", "content": "hi"}], temperature=0.0, max_tokens=5)
    # a completion whose content is null is an empty answer, not a crash
    assert client.complete([{"role": "user", "content": "hi"}], temperature=0.0, max_tokens=5) == ""


def test_answers_are_cached_in_memory_and_on_disk(server, tmp_path) -> None:
    script = Script([("reply", answers_json("yes")), ("reply", answers_json("no"))])
    url = server(script)
    judge = LLMJudge(client_for(url), cache_dir=tmp_path / "cache")
    first = judge.judge(GOOD_TEXT, ROOT, CTX, scenario_id="DiskSector", seed=1)
    again = judge.judge(parse_submission(GOOD_TEXT), ROOT, CTX, scenario_id="DiskSector", seed=1)
    assert len(script.requests) == 1 and again.details["cached"] and again.score == first.score
    # a fresh judge (a new process) reads the disk cache and never calls the model
    dead = LLMJudge(client_for(server(Script([("status", 500)] * 10))), cache_dir=tmp_path / "cache")
    from_disk = dead.judge(GOOD_TEXT, ROOT, CTX, scenario_id="DiskSector", seed=1)
    assert from_disk.passed and from_disk.details["cached"]
    files = list((tmp_path / "cache").glob("*.json"))
    assert len(files) == 1 and json.loads(files[0].read_text())["key"][1:] == ["DiskSector", 1, GOOD_TEXT]
    # another seed, another key
    other = judge.judge(GOOD_TEXT, ROOT, CTX, scenario_id="DiskSector", seed=2)
    assert other.score == 0.0 and len(script.requests) == 2
    # a torn cache file is a miss, not an error
    files[0].write_text("{torn")
    fresh = LLMJudge(client_for(server(Script([("reply", answers_json("yes"))]))), cache_dir=tmp_path / "cache")
    assert fresh.judge(GOOD_TEXT, ROOT, CTX, scenario_id="DiskSector", seed=1).details["cached"] is False


# ----------------------------------------------------------------- prompt
def test_prompt_holds_only_checklist_truth_and_submission() -> None:
    messages = build_messages("submit text about worker-1 {\"layer\": \"hardware\"}", ROOT, CTX)
    system, user = messages[0]["content"], messages[1]["content"]
    for q in QUESTIONS:
        assert q.text in system
    assert ROOT.summary in user and "/dev/sdb" in user and "submit text about worker-1" in user
    truth = json.loads(user.split("GROUND TRUTH:\n", 1)[1].split("\n\nSUBMISSION", 1)[0])
    assert set(truth) == {"component", "namespace", "layer", "mechanism", "summary", "details", "affected", "showing_symptoms"}
    assert truth["showing_symptoms"] == ["search", "frontend", "node/worker-1"]
    # nothing from the harness: no scenario id, seed, variant keys, commands or fixes
    judge_text = system + user
    for leak in ("DiskSector", "seed", "fraction", "callers", "kubectl", "reference", "wrong_fix"):
        assert leak not in judge_text


def test_prompt_truncates_huge_submissions() -> None:
    user = build_messages("x" * 50_000, ROOT, CTX)[1]["content"]
    assert "[submission truncated]" in user and len(user) < 12_000


@pytest.mark.parametrize(
    "reply, n, errors",
    [
        (answers_json("yes"), 9, []),
        ("prefix " + answers_json("no") + " suffix", 9, []),
        (json.dumps({"answers": {q: "Yes" for q in IDS}}), 9, []),
        (json.dumps({q: {"answer": True, "reason": "x"} for q in IDS}), 9, []),
        (json.dumps({"answers": [{"id": "L1", "answer": "maybe"}, {"id": "l2", "answer": "no"}]}), 1, ["not yes/no", "no answer for"]),
        ("nothing here", 0, ["no JSON object"]),
        ('{"verdict": "fine"}', 0, ["no checklist answers"]),
    ],
)
def test_parse_answers(reply: str, n: int, errors: list[str]) -> None:
    got, errs = parse_answers(reply)
    assert len(got) == n
    for e in errors:
        assert any(e in x for x in errs), errs
    if not errors:
        assert errs == []


# ----------------------------------------------------------------- transformers
WORDS = "the disk on worker-1 has bad sectors mongodb-rate crash loops rate fails yes no answer reason grade checklist component".split()


@pytest.fixture(scope="module")
def tiny_model_dir(tmp_path_factory) -> str:
    """A 1-layer GPT-2 with random weights and a word-level tokenizer, saved locally."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    tokenizers = pytest.importorskip("tokenizers")
    tok = tokenizers.Tokenizer(tokenizers.models.WordLevel(unk_token="[UNK]"))
    tok.pre_tokenizer = tokenizers.pre_tokenizers.Whitespace()
    # only plain words: whatever the random model emits can never be JSON
    tok.train_from_iterator([" ".join(WORDS)] * 3, tokenizers.trainers.WordLevelTrainer(special_tokens=["[UNK]", "[PAD]", "[EOS]"]))
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]", eos_token="[EOS]")
    torch.manual_seed(0)
    config = transformers.GPT2Config(
        n_layer=1, n_head=2, n_embd=32, n_positions=4096, vocab_size=fast.vocab_size,
        bos_token_id=fast.eos_token_id, eos_token_id=fast.eos_token_id, pad_token_id=fast.pad_token_id,
    )
    model = transformers.GPT2LMHeadModel(config)
    path = tmp_path_factory.mktemp("tiny-gpt2")
    model.save_pretrained(path)
    fast.save_pretrained(path)
    return str(path)


class Counting:
    """A pass-through around a real client that records the conversations it was sent."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.name = inner.name
        self.calls: list[list[dict[str, str]]] = []

    def complete(self, messages: list[dict[str, str]], *, temperature: float, max_tokens: int) -> str:
        self.calls.append(messages)
        return self.inner.complete(messages, temperature=temperature, max_tokens=max_tokens)


def test_transformers_garbage_is_retried_then_scored_no(tiny_model_dir: str, monkeypatch) -> None:
    from sre_env.agents.llm_client import TransformersClient

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    client = Counting(TransformersClient(tiny_model_dir, device="cpu"))
    judge = LLMJudge(client, max_tokens=24)
    result = judge.judge(GOOD_TEXT, ROOT, CTX, scenario_id="DiskSector", seed=0)
    assert len(client.calls) == 2 and result.details["attempts"] == 2
    assert client.calls[1][-1]["role"] == "user" and "could not be used" in client.calls[1][-1]["content"]
    assert result.score == 0.0 and not result.passed
    assert result.details["unanswered"] == IDS
    for q in result.details["questions"]:
        assert q["answer"] is False and "no valid answer in 2 attempts" in q["evidence"]
    assert result.details["model"] == tiny_model_dir


def test_transformers_greedy_decoding_is_deterministic_with_a_chat_template(tiny_model_dir: str) -> None:
    transformers = pytest.importorskip("transformers")
    from sre_env.agents.llm_client import TransformersClient

    tokenizer = transformers.AutoTokenizer.from_pretrained(tiny_model_dir)
    tokenizer.chat_template = "{% for m in messages %}{{ m['role'] }} {{ m['content'] }} [EOS] {% endfor %}{% if add_generation_prompt %}answer{% endif %}"
    model = transformers.AutoModelForCausalLM.from_pretrained(tiny_model_dir)
    client = TransformersClient(model, tokenizer=tokenizer)
    messages = build_messages(GOOD_TEXT, ROOT, CTX)
    assert client._prompt(messages).endswith("answer")
    a = client.complete(messages, temperature=0.0, max_tokens=12)
    b = client.complete(messages, temperature=0.0, max_tokens=12)
    assert a == b and "{" not in a
    with pytest.raises(ValueError, match="tokenizer"):
        TransformersClient(model)


# ----------------------------------------------------------------- the seam
class FunctionClient:
    """The judge's seam filled by a plain function of the conversation: no model, no network."""

    def __init__(self, answer: Any, name: str = "fake-judge") -> None:
        self.answer = answer
        self.name = name
        self.calls: list[list[dict[str, str]]] = []

    def complete(self, messages: list[dict[str, str]], *, temperature: float, max_tokens: int) -> str:
        self.calls.append(messages)
        return self.answer(messages)


def test_a_plain_function_client_is_a_judge_and_its_name_tags_the_cache(tmp_path) -> None:
    client = FunctionClient(lambda messages: answers_json("yes"))
    judge = LLMJudge(client, cache_dir=tmp_path)
    result = judge.judge(GOOD_TEXT, ROOT, CTX, scenario_id="DiskSector", seed=0)
    assert result.passed and result.details["model"] == "fake-judge" and len(client.calls) == 1
    (path,) = tmp_path.glob("*.json")
    assert json.loads(path.read_text())["key"][0] == "fake-judge"


def test_a_failing_client_is_never_a_verdict() -> None:
    def down(messages: list[dict[str, str]]) -> str:
        raise LLMError("http://judge.invalid/v1/chat/completions gave no completion after 4 attempts; the last: ConnectError", attempts=4)

    result = LLMJudge(FunctionClient(down)).judge(GOOD_TEXT, ROOT, CTX, scenario_id="DiskSector", seed=0)
    assert result.score == 0.0 and not result.passed and "after 4 attempts" in result.details["error"]
    assert all("judge unavailable" in q["evidence"] for q in result.details["questions"])


def test_sre_env_grades_the_diagnosis_with_the_judge() -> None:
    """``SREEnv(diagnosis_judge=LLMJudge(client))``: the judge, not the deterministic grader, scores the submission."""
    from sre_env.env import SREEnv

    client = FunctionClient(lambda messages: answers_json("yes"))
    env = SREEnv("MissingEnvVar", task="diagnosis", diagnosis_judge=LLMJudge(client))
    try:
        env.reset(seed=0)
        _obs, _reward, terminated, _truncated, info = env.step("submit something is wrong somewhere")
    finally:
        env.close()
    assert terminated and len(client.calls) == 1
    assert "something is wrong somewhere" in client.calls[0][1]["content"]
    # the deterministic grader would fail this vague text; the judge (which says yes to everything) passes it
    diagnosis = info["oracles"]["diagnosis"]
    assert diagnosis["passed"] and diagnosis["model"] == "fake-judge" and info["is_success"]
