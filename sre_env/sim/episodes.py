"""Episodes on the embedded simulator: healthy clusters, developed incidents, the episode seam.

Building and warming an app (pulls, crash-and-retry start-up ordering, ten
minutes of normal traffic so metrics have history) takes a few hundred
milliseconds; every reset then restores the pickled result in milliseconds.
The warm-up uses a fixed seed, so the baseline is identical in every process.

An incident's first minutes depend only on the scenario's variant (which
service, which value): they run with randomness derived from the variant, so a
developed incident is a pure function of it and can be cached too. The episode
seed takes over once the agent starts acting.

:class:`SimEpisodes` is the simulator's :class:`sre_env.episode.EpisodeBackend`:
the env starts, observes, grades and closes episodes through it.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

import numpy as np

from sre_env.apps.base import AppSpec
from sre_env.episode import Observation
from sre_env.kube.timefmt import iso
from sre_env.rewards.base import OracleResult
from sre_env.rewards.lifecycle import ForkGates
from sre_env.rewards.mitigation import Baseline, record_baseline
from sre_env.shell import CommandResult, ShellContext, run_command
from sre_env.sim.backend import SimBackend
from sre_env.sim.engine import advance, build_world
from sre_env.sim.kernel.hosts import DEFAULT_LAYOUT, ClusterLayout
from sre_env.sim.kernel.world import World
from sre_env.sim.noise import schedule_noise
from sre_env.telemetry.alerting import alerts_of
from sre_env.telemetry.log_trace_commands import log_trace_commands
from sre_env.telemetry.metrics_commands import metrics_commands
from sre_env.telemetry.metrics_store import metrics_of
from sre_env.telemetry.traces import span_summary

if TYPE_CHECKING:
    from sre_env.envs.base import Scenario

__all__ = ["SimEpisodes", "healthy_world", "reference_world", "developed_incident", "WARMUP_S"]

WARMUP_S = 900.0
#: developed incidents kept per process (~0.6 MB each; a training process cycling 4 scenarios keeps them all)
DEVELOPED_CACHE_SIZE = 128
_CACHE: dict[tuple[str, ClusterLayout], bytes] = {}
_BASELINES: dict[tuple[str, ClusterLayout], Baseline] = {}
_REFERENCE: dict[tuple[str, ClusterLayout], World] = {}

_DEVELOPED: "OrderedDict[tuple, tuple[bytes, object]]" = OrderedDict()


def _healthy_blob(app: AppSpec, layout: ClusterLayout) -> bytes:
    key = (app.name, layout)
    blob = _CACHE.get(key)
    if blob is None:
        world = build_world((app,), layout, seed=0)
        advance(world, WARMUP_S)
        # The deploy-time events would have expired (event TTL is one hour) on a
        # cluster that has been serving for a while; keep only the objects.
        for ev in world.store.list("Event"):
            world.store.remove("Event", ev["metadata"]["name"], ev["metadata"]["namespace"])
        blob = _CACHE[key] = world.snapshot()
        _REFERENCE[key] = World.restore(blob)
    return blob


def healthy_world(app: AppSpec, layout: ClusterLayout = DEFAULT_LAYOUT) -> World:
    """A fresh, private copy of the warmed-up healthy cluster."""
    return World.restore(_healthy_blob(app, layout))


def reference_world(app: AppSpec, layout: ClusterLayout = DEFAULT_LAYOUT) -> World:
    """The shared healthy cluster, for reading only (drawing variants, baselines)."""
    _healthy_blob(app, layout)
    return _REFERENCE[(app.name, layout)]


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple(sorted((k, _freeze(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return tuple(_freeze(v) for v in value)
    return value


def developed_incident(scenario: "Scenario", develop_s: float, layout: ClusterLayout = DEFAULT_LAYOUT) -> tuple[SimBackend, Baseline]:
    """A backend where ``scenario`` was injected ``develop_s`` seconds ago, and the pre-fault baseline.

    Draws the scenario's variant on the healthy cluster, then restores the developed
    world from the cache or builds it (and caches it, least recently used first out).
    """
    app = scenario.app
    reference = SimBackend(reference_world(app, layout))
    bkey = (app.name, layout)
    baseline = _BASELINES.get(bkey)
    if baseline is None:
        baseline = _BASELINES[bkey] = record_baseline(reference, app.namespace, app.name)
    variant = scenario.choose_variant(reference)
    scenario.variant = variant
    key = (type(scenario).__module__, type(scenario).__qualname__, float(develop_s), layout, _freeze(variant))
    hit = _DEVELOPED.get(key)
    if hit is not None:
        _DEVELOPED.move_to_end(key)
        return SimBackend.restore(hit[0]), baseline
    backend = SimBackend(healthy_world(app, layout))
    world = backend.world
    digest = int.from_bytes(hashlib.blake2b(repr(key).encode(), digest_size=8).digest(), "big")
    world.rng = np.random.default_rng(digest)
    world.variant_seed = digest % (2**31)
    scenario.setup(backend, develop_s, variant=variant)
    _DEVELOPED[key] = (backend.snapshot(), None)
    while len(_DEVELOPED) > DEVELOPED_CACHE_SIZE:
        _DEVELOPED.popitem(last=False)
    return backend, baseline


#: noise starts this long before the agent's first look; it runs for the horizon after
NOISE_LEAD_S = 60.0
NOISE_HORIZON_S = 900.0
#: how far back the observation's log window reaches, and how many lines it shows
LOG_HORIZON_S = 120.0
LOG_LINES = 12


class SimEpisodes:
    """The embedded simulator behind the episode seam: one cached, deterministic episode at a time."""

    name = "sim"
    nondeterministic = False

    def __init__(self, layout: ClusterLayout = DEFAULT_LAYOUT) -> None:
        self.layout = layout
        self._backend: SimBackend | None = None
        self._shell: ShellContext | None = None
        self._gates = ForkGates()
        self._cache: dict[str, Any] = {}
        #: how the episode started, and every command it has run since: what a failed step is rebuilt from
        self._start: tuple[Scenario, float, int, str] | None = None
        self._commands: list[str] = []

    @property
    def cluster(self) -> SimBackend:
        if self._backend is None:
            raise RuntimeError("no episode has started (call start_episode first)")
        return self._backend

    def check_supported(self, scenario_cls: type["Scenario"], *, noise: str) -> None:
        """Every scenario runs here, with any noise level."""

    def start_episode(self, scenario: "Scenario", *, develop_s: float, seed: int, noise: str) -> Baseline:
        # noise starts a minute before the agent's first look, so some of it has already happened
        lead = NOISE_LEAD_S if noise != "none" else 0.0
        backend, baseline = developed_incident(scenario, max(develop_s - lead, 0.0), self.layout)
        world = backend.world
        # from here on, randomness is the episode's own
        world.rng = np.random.default_rng([seed, 2])
        world.variant_seed = seed % (2**31)
        if lead:
            rc = scenario.root_cause()
            involved = tuple(c.split("/", 1)[-1] for c in (rc.component, *(rc.affected or ())))
            schedule_noise(world, scenario.app, noise, seed, start=backend.now, horizon_s=NOISE_HORIZON_S, avoid=involved)
            backend.advance(lead)
        self._backend = backend
        self._shell = ShellContext(backend=backend, namespace="default", extra_commands=_query_commands(world))
        self._cache = {}
        self._start = (scenario, develop_s, seed, noise)
        self._commands = []
        return baseline

    def run_command(self, command: str) -> CommandResult:
        """Run one command and let its time pass; a failure inside the simulator puts the cluster back.

        The simulator admits only objects its controllers were written for, so a
        tick should never raise; if one does (a bug) -- in the command, or in time
        it lets pass (``kubectl wait``) or takes -- the step still answers, and the
        cluster is rebuilt as it was before the command: the episode continues and
        can be graded. The rebuild replays the episode (the simulator is
        deterministic), so the steps that succeed pay nothing for this.
        """
        try:
            result = self._run(command)
        except Exception as exc:  # noqa: BLE001 -- the step must answer; the cluster goes back to a consistent state
            self._replay()
            message = f"error: internal error in the simulated cluster ({type(exc).__name__}: {exc}); the cluster was put back to before this command\n"
            return CommandResult(message, 1, 0.0, False)
        self._commands.append(command)
        return result

    def _replay(self) -> None:
        """Rebuild the episode's cluster from its start and the commands that succeeded, into the backend the env holds."""
        assert self._start is not None
        held, commands = self.cluster, self._commands
        scenario, develop_s, seed, noise = self._start
        self.start_episode(scenario, develop_s=develop_s, seed=seed, noise=noise)
        for command in commands:
            self._run(command)  # each succeeded before, and the simulator is deterministic
        self._commands = commands
        held.adopt(self.cluster)
        self._backend = held
        assert self._shell is not None
        self._shell.backend = held

    def _run(self, command: str) -> CommandResult:
        backend = self.cluster
        assert self._shell is not None
        before = backend.now
        result = run_command(self._shell, command, contain=False)
        waited = backend.now - before  # `kubectl wait`, `run -i`: the command let time pass itself
        backend.advance(result.cost_s)
        if waited > 0:
            result = CommandResult(result.output, result.exit_code, result.cost_s + waited, result.mutating)
        return result

    def observe(self, scenario: "Scenario", metric_names: list[str], window: int) -> Observation:
        """Alerts and metrics change only on a scrape, logs only when a line is written or time
        passes, traces with a scrape or a new traffic plan: what was built for the same state is reused."""
        world = self.cluster.world
        cache = self._cache
        metrics = metrics_of(world)
        scrape_key = (id(world), metrics.rows)
        if cache.get("scrape") != scrape_key:
            win, mask = metrics.window_and_mask(metric_names, window)
            alerts = "\n".join(a.line() for a in alerts_of(world).firing(world.clock.now))
            cache.update(scrape=scrape_key, window=win, mask=mask, alerts=alerts)
        logs_key = (id(world), world.clock.now, len(world.notable_logs), world.notable_logs[-1] if world.notable_logs else None)
        if cache.get("logs_key") != logs_key:
            cache.update(logs_key=logs_key, logs=_recent_logs(world, scenario.namespace))
        plan = world.plans.get(scenario.app.name)
        traces_key = (scrape_key, plan.revision if plan is not None else None)
        if cache.get("traces_key") != traces_key:
            cache.update(traces_key=traces_key, traces=span_summary(world, scenario.app, world.clock.now, 30.0))
        return Observation(cache["alerts"], cache["logs"], cache["traces"], cache["window"], cache["mask"])

    def health(self, scenario: "Scenario") -> float:
        res = self.cluster.world.last_traffic.get(scenario.app.name)
        return float(res.client_success) if res is not None else 0.0

    def gates(self, scenario: "Scenario", baseline: Baseline, *, lazy: bool) -> dict[str, OracleResult]:
        return self._gates.evaluate(self.cluster, scenario, baseline, lazy=lazy)

    def noise_log(self) -> list[dict[str, Any]]:
        return list(self.cluster.world.noise_log)

    def clock_label(self, since: float) -> str:
        return iso(self.cluster.now)

    def close(self) -> None:
        """Nothing to release: the cluster lives in this process."""


def _query_commands(world: World) -> dict[str, Any]:
    """The telemetry commands (PromQL, LogQL, traces) over ``world``."""
    commands = dict(log_trace_commands(world))
    commands.update(metrics_commands(world))
    return commands


def _recent_logs(world: World, namespace: str, horizon_s: float = LOG_HORIZON_S, limit: int = LOG_LINES) -> str:
    """Warnings and errors the namespace's containers logged recently (newest last)."""
    since = world.clock.now - horizon_s
    rows = []
    for t, pod_ns, pod, line in reversed(world.notable_logs):
        if t < since - 60.0:
            break
        if pod_ns == namespace and t >= since:
            rows.append((t, pod, line))
            if len(rows) >= limit * 2:
                break
    rows.sort(key=lambda r: (r[0], r[1]))
    return "\n".join(f"{pod}: {line[:300]}" for _, pod, line in rows[-limit:])
