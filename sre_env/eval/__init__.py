"""Evaluation: many episodes of an agent into results, and the reports read from them.

- ``runs`` — an evaluation run: every (scenario, seed, noise level, attempt) is
  one job, played in worker processes or Ray tasks, into rows written as
  ``results.csv``/``results.json`` (plus each episode's transcript).
- ``report`` — the evaluation report from those rows: tables (overall, per
  scenario, layer, family, noise level; pass@k, best-of-N, each gate) as
  Markdown and HTML, and PNG plots.
- ``episode_report`` — one episode's report for a person (``sre-env run`` and
  ``play``: rich or plain text) and its JSON form.

Evaluation sits above the agents and the episode loop (``sre_env.agents``) and
below the front ends: ``sre-env eval``/``report``/``run`` in ``sre_env.cli`` only
parse arguments and print what these modules return.
"""
