"""Oracles and reward composition.

``base.py`` is the grading vocabulary scenarios declare (checks, results, allowed
changes, mechanisms); ``lifecycle.py``, ``mitigation.py`` and ``cleanup.py`` are the
simulator's gates on forks; ``diagnosis/`` grades the submitted diagnosis (and
``llm_judge.py`` has an LLM answer the same checklist); ``risk/`` classifies every
command; ``spec.py`` composes the reward.
"""
