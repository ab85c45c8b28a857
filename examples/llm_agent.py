"""A minimal LLM agent loop: any OpenAI-compatible chat server solves one incident.

    # e.g. a local Ollama or vLLM server
    python examples/llm_agent.py --model llama3.1 --base-url http://localhost:11434/v1 --env SREGym/MissingEnvVar-v0

The env speaks chat: ChatWrapper gives the opening messages (role, command
reference, submit format) and turns each reply into the next message. Replace
``ask`` with your own model call; everything else stays the same.
"""

from __future__ import annotations

import argparse
import os

import gymnasium as gym

import sre_env  # noqa: F401  (registers the SREGym/* ids)
from sre_env.agents.llm_client import OpenAIClient
from sre_env.wrappers import ChatWrapper, RecordEpisode, tool_schemas


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", required=True)
    p.add_argument("--base-url", default="http://localhost:8000/v1")
    p.add_argument("--env", default="SREGym/MissingEnvVar-v0")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-turns", type=int, default=30)
    p.add_argument("--tools", action="store_true", help="use function calling instead of ReAct text")
    p.add_argument("--record", default="runs/llm_agent", help="folder for the JSONL log and ATIF trajectory")
    args = p.parse_args()

    model = OpenAIClient(args.model, args.base_url, api_key=os.environ.get("OPENAI_API_KEY"))
    tools = tool_schemas("openai") if args.tools else None

    def ask(messages: list[dict]) -> dict:
        """One model turn; returns the assistant message (text and/or tool calls)."""
        reply = model.chat(messages, tools=tools, temperature=0.0, max_tokens=512)
        print(f"--- model ({reply.prompt_tokens}+{reply.completion_tokens} tokens)\n{reply.text}")
        base.note_agent_turn(reply.text, prompt_tokens=reply.prompt_tokens, completion_tokens=reply.completion_tokens)
        return reply.as_message()

    base = RecordEpisode(gym.make(args.env), f"{args.record}/episodes.jsonl", atif_dir=f"{args.record}/atif", agent="llm_agent.py", model=args.model)
    env = ChatWrapper(base, tools=args.tools)
    message, info = env.reset(seed=args.seed)
    print(message)
    reward, info = 0.0, {}
    for _ in range(args.max_turns):
        message, reward, terminated, truncated, info = env.step(ask(env.messages))
        print(f"--- env\n{message[:3000]}")
        if terminated or truncated:
            break
    print(f"\nreward {reward:.3f}  success {info.get('is_success')}  components {info.get('reward_components')}")


if __name__ == "__main__":
    main()
