"""Faults: causes, applied through the Backend's surfaces (the API, node access) and undone the same way.

Each fault is a small frozen dataclass with ``inject(backend)`` and ``recover(backend)``;
a symptom is never written, it emerges from the model. The few faults that pull the
simulator's model (timers, load, an app's runtime state) take a ``ModelBackend``.
"""
