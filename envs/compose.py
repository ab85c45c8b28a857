"""Build a new scenario from existing ones: concurrent faults in a few lines.

``compose("DiskAndPort", DiskSector, TargetPortMisconfig)`` is a scenario in
which both faults are injected into the same cluster. The first part is the
*major* fault (what users report); the others are independent *minor* faults
that must be fixed as well. Everything else is derived from the parts:

- the variant draws each part's variant from the episode's generator, keeping
  the parts on different targets where they would otherwise collide;
- the root cause is the major one, with the minor faults in its summary, its
  affected list and ``details["also_mechanisms"]`` (so naming them is not a
  wrong fault type);
- the reference solution repairs the major fault first, then the minor ones;
- the wrong fixes are each part's own wrong fixes, plus repairing only the
  major or only a minor fault;
- cause checks and allowed changes are the union of the parts';
- a blind strategy is an accepted repair when it is one of every part;
- the result is a :class:`SimScenario` when any part is one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Mapping

import numpy as np

from sre_env.rewards.base import AllowedChange, Check

from .base import RootCause, Scenario, SimScenario

if TYPE_CHECKING:
    from sre_env.backend import Backend

__all__ = ["compose", "ComposedScenario"]

#: redraws of a minor part whose target collides with an earlier part's
_MAX_REDRAWS = 32


class ComposedScenario(Scenario):
    """Several independent faults at once (build subclasses with :func:`compose`)."""

    parts_cls: ClassVar[tuple[type[Scenario], ...]] = ()

    def __init__(self, rng: np.random.Generator, split: str = "all") -> None:
        super().__init__(rng, split)
        self.parts = [cls(rng) for cls in self.parts_cls]

    # the variant is the parts' variants; assigning it (e.g. from a cache) updates the parts
    @property  # type: ignore[override]
    def variant(self) -> dict[str, Any]:
        return {"parts": [p.variant for p in getattr(self, "parts", ())]}

    @variant.setter
    def variant(self, value: dict[str, Any]) -> None:
        for part, v in zip(getattr(self, "parts", ()), (value or {}).get("parts", ())):
            part.variant = dict(v)

    def split_key(self, variant: Mapping[str, Any]) -> str:
        parts = variant.get("parts") or [{}]
        return self.parts[0].split_key(parts[0])

    def draw_variant(self, backend: "Backend", rng: np.random.Generator) -> dict[str, Any]:
        drawn: list[dict[str, Any]] = []
        taken: set[str] = set()
        for part in self.parts:
            v = part.draw_variant(backend, rng)
            for _ in range(_MAX_REDRAWS):
                if part.split_key(v) not in taken:
                    break
                v = part.draw_variant(backend, rng)
            taken.add(part.split_key(v))
            drawn.append(v)
        return {"parts": drawn}

    def inject(self, backend: "Backend") -> None:
        for part in self.parts:
            part.inject(backend)

    def root_cause(self) -> RootCause:
        causes = [p.root_cause() for p in self.parts]
        major = causes[0]
        others = causes[1:]
        mech_ids = [_mechanism_id(p) for p in self.parts]
        summary = major.summary + "".join(f" Independently, a second fault: {c.summary}" for c in others)
        affected = tuple(dict.fromkeys([*major.affected, *(c.component for c in others), *(a for c in others for a in c.affected)]))
        details = {**{k: v for c in reversed(causes) for k, v in c.details.items()}, "mechanism_id": mech_ids[0], "also_mechanisms": tuple(m for m in mech_ids[1:] if m)}
        return RootCause(major.component, major.namespace, major.layer, major.mechanism, summary, details, affected)

    def brief(self) -> str:
        return self.parts[0].brief()

    def reference_solution(self) -> list[str]:
        return [cmd for part in self.parts for cmd in part.reference_solution()]

    def wrong_fixes(self) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for i, part in enumerate(self.parts):
            tag = "major" if i == 0 else f"minor{i}"
            out[f"only_{tag}_fixed"] = part.reference_solution()
            for name, cmds in part.wrong_fixes().items():
                out[f"{tag}_{name}"] = cmds
        return out

    def cause_checks(self, backend: "Backend") -> list[Check]:
        return [c for part in self.parts for c in part.cause_checks(backend)]

    def allowed_changes(self) -> list[AllowedChange]:
        return [a for part in self.parts for a in part.allowed_changes()]


def _mechanism_id(part: Scenario) -> str:
    """The part's declared mechanism id ("" when it declares none: the grader then reads the words)."""
    return part.mechanism.id if part.mechanism is not None else ""


def compose(
    name: str,
    major: type[Scenario],
    *minor: type[Scenario],
    family: str = "Concurrent",
    difficulty: str = "hard",
    summary: str | None = None,
    description: str | None = None,
) -> type[Scenario]:
    """A scenario class in which ``major`` and every ``minor`` fault happen at once.

    All parts must run on the same app. Register the result in a catalog module
    (or pass it straight to ``SREEnv``) like any other scenario class. When a part
    is simulator-only (:class:`SimScenario`), so is the result.
    """
    if not minor:
        raise ValueError("compose() needs a major fault and at least one minor fault")
    parts = (major, *minor)
    apps = {p.app.name for p in parts}
    if len(apps) != 1:
        raise ValueError(f"composed faults must share one app, got {sorted(apps)}")
    attrs: dict[str, Any] = {
        "parts_cls": parts,
        "family": family,
        "app": major.app,
        "layer": "compound",
        "difficulty": difficulty,
        "summary": summary or major.summary,
        "description": description or (major.description or major.summary),
        "develop_s": max(p.develop_s for p in parts),
        "mechanism": None,
        # a blind strategy repairs the composition when it repairs every part
        "accepted_blind": {
            strategy: "; ".join(f"{p.family}: {p.accepted_blind[strategy]}" for p in parts)
            for strategy in major.accepted_blind
            if all(strategy in p.accepted_blind for p in parts)
        },
        "__module__": __name__,
        "__qualname__": name,
    }
    bases: tuple[type, ...] = (ComposedScenario, SimScenario) if any(issubclass(p, SimScenario) for p in parts) else (ComposedScenario,)
    return type(name, bases, attrs)
