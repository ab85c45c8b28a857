"""The episode seam: what the env needs from a backend to run one incident, start to grade.

:class:`sre_env.backend.Backend` is the cluster faults and scenarios act on;
:class:`EpisodeBackend` is the lifecycle around it that the env drives, written
once per backend instead of once per front end: start an episode (the scenario's
one ``setup`` lifecycle on a healthy cluster), run an agent's command line,
observe, measure health, run the lifecycle gates, close. The embedded simulator
(:class:`sre_env.sim.episodes.SimEpisodes`) and a live cluster
(:class:`sre_env.k8s.backend.KubernetesBackend`) both implement it, so
``SREEnv`` has no branch on which one it runs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    from sre_env.backend import Backend
    from sre_env.envs.base import Scenario
    from sre_env.rewards.base import OracleResult
    from sre_env.rewards.mitigation import Baseline
    from sre_env.shell import CommandResult

__all__ = ["EpisodeBackend", "Observation"]


@dataclass(frozen=True)
class Observation:
    """The parts of an observation a backend computes (the env adds the command output and step)."""

    alerts: str
    logs: str
    traces: str
    #: float32 [window, series], oldest first
    metrics: np.ndarray
    #: int8 [series]: which series the cluster has
    metrics_mask: np.ndarray


@runtime_checkable
class EpisodeBackend(Protocol):
    #: episodes on this backend do not replay from a seed (a live cluster)
    nondeterministic: bool

    @property
    def cluster(self) -> "Backend":
        """The cluster of the current episode (what the shell, the wrappers and the graders read)."""
        ...

    def check_supported(self, scenario_cls: type["Scenario"], *, noise: str) -> None:
        """Raise ScenarioError (or ValueError for options) when this backend cannot run the scenario."""
        ...

    def start_episode(self, scenario: "Scenario", *, develop_s: float, seed: int, noise: str) -> "Baseline":
        """A healthy cluster, the scenario set up on it and developed ``develop_s``; returns the pre-fault baseline."""
        ...

    def run_command(self, command: str) -> "CommandResult":
        """One agent command line; its cost is the cluster time it took (time has passed when it returns)."""
        ...

    def observe(self, scenario: "Scenario", metric_names: list[str], window: int) -> Observation: ...

    def health(self, scenario: "Scenario") -> float:
        """The client's success ratio now (the potential of reward shaping)."""
        ...

    def gates(self, scenario: "Scenario", baseline: "Baseline", *, lazy: bool) -> dict[str, "OracleResult"]:
        """The lifecycle gates (immediate, live, durability, cleanup); with ``lazy``, only those that can
        still change the reward once ``live`` failed."""
        ...

    def noise_log(self) -> list[dict[str, Any]]:
        """The background noise that fired this episode (empty where the backend schedules none)."""
        ...

    def clock_label(self, since: float) -> str:
        """How ``render`` shows the episode's time (the cluster's timestamp, or seconds since ``since``)."""
        ...

    def close(self) -> None: ...
