"""Scenarios: the incidents, each a cause on an app with its ground truth and known fixes.

``base.py`` is the scenario contract (variant, inject, root cause, brief, reference
solution, wrong/blind/non-durable fixes, cause checks, allowed changes; the one
``setup`` lifecycle; ``SimScenario`` for those that read the simulator's model).
The family modules implement it, the ``catalog_*`` modules name them, ``index.py``
says which catalog holds which name, and ``registry.py`` registers the ids.
"""
