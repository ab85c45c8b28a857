"""Agents: what plays an episode, and the loop that plays it.

- ``episode`` — the ``Agent`` protocol (``reset(env)``, ``act(obs, info) -> str``),
  ``StopEpisode``, the episode loop ``run_episode`` and its plain-data
  ``EpisodeResult``.
- ``baselines`` — the reference, random and scripted agents, and every built-in
  agent by name (``make_agent``, what ``sre-env run --agent`` takes).
- ``runbook`` (with its text helpers in ``runbook_text``) — the on-call runbook
  baseline.
- ``llm_client`` — the LLM clients, one for OpenAI-compatible HTTP servers and
  one for local ``transformers`` models, shared by the LLM agent and the LLM
  diagnosis judge (``sre_env.rewards.llm_judge``).
- ``llm_agent`` — the ReAct LLM agent with its budgets and token accounting.
- ``human`` — a person at the prompt (``sre-env play``).

Agents sit above the env and its wrappers (the LLM agent speaks through the
chat wrapper's prompt and parser) and below evaluation, which runs them by the
thousand.
"""
