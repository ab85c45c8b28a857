"""What a scenario is: a fault (cause) on an app, with ground truth and known fixes.

The scenario owns its seeded variant (which service, which node, which value),
``inject`` (applies the cause through the backend's surfaces), the structured
root cause, the reference solution (agent commands that must pass) and the
known wrong fixes (agent commands that must fail), plus the checks that say
whether the cause itself is gone. The env owns the loop; a fresh scenario is
built on every reset.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, Mapping

import numpy as np

from sre_env.apps.base import AppSpec
from sre_env.rewards.base import AllowedChange, Check, Mechanism

if TYPE_CHECKING:
    from sre_env.backend import Backend

__all__ = ["RootCause", "Scenario", "SimScenario", "ScenarioInfo", "SPLITS", "LAYERS", "DIFFICULTIES"]


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


SPLITS = ("all", "train", "test")
_HELDOUT: dict[type, tuple[str, ...]] = {}
_PROBE_DRAWS = 96
#: marks a scenario whose split keys never repeat (hash-bucketed split)
_OPEN_SPACE = "\x00open"


_WHOLE_VARIANT: set[type] = set()


def _whole(variant: Mapping[str, Any]) -> str:
    return repr(sorted((k, repr(v)) for k, v in variant.items()))


def _key_hash(family: str, key: str) -> bytes:
    return hashlib.blake2b(f"{family}\0{key}".encode(), digest_size=8).digest()

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
    #: whether moving the data off the root-cause node is part of a correct repair (the risk monitor
    #: then does not flag recreating its volumes); None: yes exactly when the root cause is a node
    evacuation_repair: ClassVar[bool | None] = None
    #: how people describe this fault mechanism; the registry adds it to the diagnosis grader's vocabulary
    mechanism: ClassVar[Mechanism | None] = None
    #: seconds of cluster time the incident develops before the agent's first look
    develop_s: ClassVar[float] = 180.0
    #: the blind strategies (:data:`sre_env.envs.blind.BLIND_STRATEGIES`: undo, scale to zero and back,
    #: restart or delete everything, or all of it at once, without looking at the cause) that ARE a
    #: repair of this cause, each with the reason (``rollback_repairs``/``restart_repairs`` there build
    #: the common ones). The conformance suite plays every strategy with a vague submit: these must
    #: succeed and every other one must fail. Empty: no blind strategy repairs it.
    accepted_blind: ClassVar[Mapping[str, str]] = MappingProxyType({})

    #: the fraction of a scenario's targets held out for testing generalisation
    heldout_share: ClassVar[float] = 0.25

    def __init__(self, rng: np.random.Generator, split: str = "all") -> None:
        if split not in SPLITS:
            raise ValueError(f"split must be one of {', '.join(SPLITS)}, got {split!r}")
        self.rng = rng
        self.split = split
        self.variant: dict[str, Any] = {}

    # -- train / held-out splits -------------------------------------------------
    def split_key(self, variant: Mapping[str, Any]) -> str:
        """What generalisation is measured over: the target (service, node, flag...) by default.

        Override when the interesting held-out axis is a value rather than a target.
        """
        for key in ("service", "deployment", "component", "target", "flag", "database", "node"):
            if key in variant:
                return str(variant[key])
        return repr(sorted((k, repr(v)) for k, v in variant.items()))

    def variant_split_key(self, variant: Mapping[str, Any]) -> str:
        """The key the train/test split uses: :meth:`split_key`, or the whole variant when that is constant."""
        return _whole(variant) if type(self) in _WHOLE_VARIANT else self.split_key(variant)

    @classmethod
    def heldout_keys(cls, backend: "Backend") -> tuple[str, ...]:
        """The split keys reserved for the ``test`` split (a stable, seed-independent choice).

        The key space is enumerated by drawing variants with a fixed generator; a
        hash orders the keys and the first ``heldout_share`` of them (at least one,
        never all) are held out. A scenario with one key has no held-out split. When
        every draw gives a new key (a free-form value such as a generated password),
        the space is open: a hash of the key decides instead (see :meth:`in_heldout`).
        """
        cached = _HELDOUT.get(cls)
        if cached is not None:
            return cached
        probe = cls(np.random.default_rng(20_261_129))
        variants = [probe.draw_variant(backend, probe.rng) for _ in range(_PROBE_DRAWS)]
        draws = [probe.split_key(v) for v in variants]
        if len(set(draws)) < 2:
            # one target (a single flag, a single node): generalise over the values instead
            _WHOLE_VARIANT.add(cls)
            draws = [_whole(v) for v in variants]
        keys = sorted(set(draws))
        if len(keys) < 2:
            held: tuple[str, ...] = ()
        elif len(keys) == _PROBE_DRAWS:
            held = (_OPEN_SPACE,)
        else:
            ordered = sorted(keys, key=lambda k: _key_hash(cls.family, k))
            n = min(len(keys) - 1, max(1, round(len(keys) * cls.heldout_share)))
            held = tuple(sorted(ordered[:n]))
        _HELDOUT[cls] = held
        return held

    @classmethod
    def in_heldout(cls, key: str, held: tuple[str, ...]) -> bool:
        if held == (_OPEN_SPACE,):
            return _key_hash(cls.family, key)[0] < int(256 * cls.heldout_share)
        return key in held

    def choose_variant(self, backend: "Backend") -> dict[str, Any]:
        """Draw variants until one falls in this episode's split (``all`` takes the first)."""
        if self.split == "all":
            return self.draw_variant(backend, self.rng)
        held = self.heldout_keys(backend)
        if not held:
            raise ValueError(f"{type(self).__name__} has a single target, so it has no train/test split; use split='all'")
        for _ in range(512):
            variant = self.draw_variant(backend, self.rng)
            if self.in_heldout(self.variant_split_key(variant), held) == (self.split == "test"):
                return variant
        raise ValueError(f"{type(self).__name__}: no {self.split} variant found")

    # -- lifecycle -------------------------------------------------------------
    def setup(self, backend: "Backend", develop_s: float, *, variant: dict[str, Any] | None = None) -> None:
        """The one lifecycle every backend runs: draw the variant from the cluster (where a pod
        runs, which service), inject the cause, and let the incident develop ``develop_s``.

        ``variant``: one already drawn on an identical cluster (the simulator draws it on its
        shared healthy baseline to look up its cache of developed incidents).
        """
        self.variant = variant if variant is not None else self.choose_variant(backend)
        self.inject(backend)
        backend.advance(develop_s)

    @abstractmethod
    def draw_variant(self, backend: "Backend", rng: np.random.Generator) -> dict[str, Any]: ...

    @abstractmethod
    def inject(self, backend: "Backend") -> None: ...

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

    def replay_trigger(self, backend: "Backend") -> str:
        """Start the incident's transient trigger again (metastable scenarios), for the live gate.

        Returns what was replayed ("" when the scenario has no trigger): a repair of a
        metastable failure must let the system recover from the trigger, not just from
        today's occurrence of it.
        """
        return ""

    def repair_paths(self) -> tuple[str, ...]:
        """Node paths where the fault itself lives (files the repair removes); the risk monitor
        does not count removing what is under them as damage."""
        return ()

    def non_durable_fixes(self) -> dict[str, list[str]]:
        """Repairs that work until the next restart or reboot (e.g. a fix made only inside a
        running container, a unit started but left disabled): they must pass the immediate
        gate and fail durability, so the episode is not a success."""
        return {}

    def blind_fixes(self, workload: str) -> dict[str, list[str]]:
        """The fixes that never look at the cause — restart, delete the pods, scale to zero.

        Most scenarios list them among their wrong fixes; they must all fail.
        """
        ns = self.namespace
        return {
            "rollout_restart": [f"kubectl rollout restart deployment/{workload} -n {ns}"],
            "delete_pods": [f"kubectl delete pod -n {ns} -l {self.pod_selector(workload)}"],
            "scale_to_zero": [f"kubectl scale deployment/{workload} -n {ns} --replicas=0"],
        }

    def pod_selector(self, component: str) -> str:
        """The ``-l`` selector of a component's pods (``io.kompose.service=geo``, ``service=text-service``)."""
        return f"{self.app.label_key}={component}"

    def cause_checks(self, backend: "Backend") -> list[Check]:
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


class SimScenario(Scenario):
    """A scenario whose cause, variant or checks can only be read off the simulator's model.

    Its methods receive a :class:`sre_env.sim.model.ModelBackend` (the Backend plus
    ``model``: hosts and disks, routes as a client pod gets them, the app's runtime
    state). That makes it simulator-only by type: a live cluster's backend refuses it,
    and a test runs every other scenario on a backend with nothing but the seam.
    """
