"""Agents: the reference, scripted and random baselines, the runbook baseline, the
LLM agent loop and a person at the prompt.
"""
