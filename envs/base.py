"""What a scenario is: a fault (cause) on an app, with ground truth and known fixes.

The scenario owns its seeded variant (which service, which node, which value),
``inject`` (applies the cause through the backend's surfaces), the structured
root cause, the reference solution (agent commands that must pass) and the
known wrong fixes (agent commands that must fail), plus the checks that say
whether the cause itself is gone. The env owns the loop; a fresh scenario is
built on every reset.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Mapping

import numpy as np

from sre_env.rewards.base import Check
from sre_env.rewards.cleanup import AllowedChange
from sre_env.rewards.diagnosis import Mechanism
from sre_env.sim.apps.base import AppSpec

if TYPE_CHECKING:
    from sre_env.sim.backend import SimBackend

__all__ = ["RootCause", "Scenario", "ScenarioInfo"]


@dataclass(frozen=True)
class RootCause:
    """Ground truth, structured so graders can compare a diagnosis against it."""

    component: str  # "node/worker-2", "deployment/geo", "service/mongodb-rate"
    namespace: str
    layer: str  # application | kubernetes | network | os | hardware | operator
    mechanism: str  # short phrase: "latent sector errors"
    summary: str
    details: Mapping[str, Any] = field(default_factory=dict)
    affected: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "component": self.component,
            "namespace": self.namespace,
            "layer": self.layer,
            "mechanism": self.mechanism,
            "summary": self.summary,
            "details": dict(self.details),
            "affected": list(self.affected),
        }


LAYERS = ("application", "kubernetes", "network", "os", "hardware", "operator", "compound")
DIFFICULTIES = ("easy", "medium", "hard")


@dataclass(frozen=True)
class ScenarioInfo:
    """Registry metadata: what ``sre-env list`` shows and what suites select on."""

    name: str
    family: str
    app: str
    layer: str
    difficulty: str
    summary: str
    suites: tuple[str, ...]
    description: str = ""

    @property
    def tags(self) -> dict[str, Any]:
        return {"app": self.app, "layer": self.layer, "family": self.family, "difficulty": self.difficulty, "suites": list(self.suites)}


class Scenario(ABC):
    #: family name from SCENARIOS.md
    family: ClassVar[str]
    app: ClassVar[AppSpec]
    layer: ClassVar[str]
    difficulty: ClassVar[str] = "medium"
    #: set by the registry (``lite`` membership is curated there)
    suites: ClassVar[tuple[str, ...]] = ("full",)
    #: one line for listings (never the answer)
    summary: ClassVar[str]
    #: one paragraph: the incident as the people who report it would describe it (never the answer)
    description: ClassVar[str] = ""
    #: how people describe this fault mechanism; the registry adds it to the diagnosis grader's vocabulary
    mechanism: ClassVar[Mechanism | None] = None
    #: seconds of cluster time the incident develops before the agent's first look
    develop_s: ClassVar[float] = 180.0

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self.variant: dict[str, Any] = {}

    # -- lifecycle -------------------------------------------------------------
    def setup(self, backend: "SimBackend") -> None:
        """Draw the variant from the live cluster (e.g. where a pod runs) and inject the fault."""
        self.variant = self.draw_variant(backend, self.rng)
        self.inject(backend)

    @abstractmethod
    def draw_variant(self, backend: "SimBackend", rng: np.random.Generator) -> dict[str, Any]: ...

    @abstractmethod
    def inject(self, backend: "SimBackend") -> None: ...

    @abstractmethod
    def root_cause(self) -> RootCause: ...

    @abstractmethod
    def brief(self) -> str:
        """What the people who page you report: symptoms, never the cause."""

    @abstractmethod
    def reference_solution(self) -> list[str]:
        """Agent commands that repair the cause (the "cheat"); must pass every gate."""

    def wrong_fixes(self) -> dict[str, list[str]]:
        """Named command sequences that look plausible and must fail."""
        return {}

    def cause_checks(self, backend: "SimBackend") -> list[Check]:
        """Scenario-specific checks that the cause itself is gone (run on the graded fork)."""
        return []

    def allowed_changes(self) -> list["AllowedChange"]:
        """Changes a correct repair legitimately leaves behind (not residue for the cleanup gate).

        By default the object the fault changed may end up changed, as long as the
        gates pass: repairs restore it, rollbacks add revisions.
        """
        return []

    @property
    def namespace(self) -> str:
        return self.app.namespace

    @classmethod
    def info(cls, name: str) -> ScenarioInfo:
        return ScenarioInfo(name, cls.family, cls.app.name, cls.layer, cls.difficulty, cls.summary, cls.suites, cls.description or cls.summary)

    @classmethod
    def for_app(cls, app: AppSpec, **overrides: Any) -> "type[Scenario]":
        """The same fault on another app: a subclass with ``app`` (and any class attributes) replaced.

        The subclass gets a distinct qualified name, so developed-incident caches
        and snapshots never confuse the two.
        """
        suffix = "".join(part.capitalize() for part in app.name.replace("_", "-").split("-"))
        name = f"{cls.__name__}{suffix}"
        attrs = {"app": app, "__module__": cls.__module__, "__qualname__": name, **overrides}
        return type(name, (cls,), attrs)
