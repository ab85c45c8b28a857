"""Lifecycle gates: fixed now, stays fixed under load, survives restarts.

Every gate runs on a fork of the world, so grading never disturbs the episode:

- ``immediate``: shortly after the submit the cause is gone and the app serves;
- ``live``: after minutes of workload the app matches its pre-incident baseline
  (the mitigation oracle);
- ``durability``: every pod of the app is restarted, every deployment rolled and
  the nodes the incident involved rebooted — then ``live`` again. A repair made
  only in a running container or in a ReplicaSet the Deployment will replace
  passes ``immediate`` and fails here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .base import Check, OracleResult
from .cleanup import CleanupOracle
from .mitigation import Baseline, MitigationOracle

if TYPE_CHECKING:
    from sre_env.envs.base import Scenario
    from sre_env.sim.model import ModelBackend

__all__ = ["ImmediateOracle", "LiveOracle", "DurabilityOracle", "ForkGates", "restart_everything", "roll_namespace"]

RESTARTED_AT = "kubectl.kubernetes.io/restartedAt"


class ImmediateOracle:
    """The cause is gone and clients are served again, one settle interval after the submit."""

    name = "immediate"

    def __init__(self, *, settle_s: float = 60.0, success_margin: float = 0.05) -> None:
        self.settle_s = settle_s
        self.success_margin = success_margin

    def evaluate(self, backend: "ModelBackend", scenario: "Scenario", baseline: Baseline) -> OracleResult:
        fork = backend.fork()
        fork.advance(self.settle_s)
        checks = list(scenario.cause_checks(fork))
        hist = fork.model.client_history(scenario.app.name)[-3:]
        success = sum(s for _, s, _ in hist) / len(hist) if hist else 0.0
        need = max(baseline.client_success - self.success_margin, 0.0)
        checks.append(Check("serving", success >= need, f"client success {success:.4f} {self.settle_s:.0f}s after submit (need >= {need:.4f})"))
        return OracleResult.from_checks(self.name, checks, settle_s=self.settle_s)


class LiveOracle(MitigationOracle):
    """Stays fixed under workload: the mitigation oracle, named as a lifecycle gate."""

    name = "live"


class DurabilityOracle:
    """Restart, roll and reboot on a fork, then require ``live`` again."""

    name = "durability"

    def __init__(self, live: MitigationOracle | None = None, *, restart_settle_s: float = 120.0) -> None:
        self.live = live or LiveOracle()
        self.restart_settle_s = restart_settle_s

    def evaluate(self, backend: "ModelBackend", scenario: "Scenario", baseline: Baseline) -> OracleResult:
        fork = backend.fork()
        disturbed = restart_everything(fork, scenario)
        fork.advance(self.restart_settle_s)
        result = self.live.evaluate(fork, scenario, baseline)
        checks = [Check(f"after_restart.{c.name}", c.passed, c.detail) for c in result.checks]
        return OracleResult.from_checks(self.name, checks, disturbed=disturbed)


def roll_namespace(api: Any, ns: str, stamp: str) -> list[str]:
    """Roll every Deployment and StatefulSet of ``ns`` (``stamp`` in the restartedAt annotation), then delete its pods.

    Shared by the simulator's durability gate and the live one (sre_env.k8s.oracles):
    a pod that is already gone is not an error.
    """
    from sre_env.errors import ApiError

    done: list[str] = []
    for kind in ("Deployment", "StatefulSet"):
        for obj in api.list(kind, ns):
            name = obj["metadata"]["name"]
            api.patch(kind, name, ns, {"spec": {"template": {"metadata": {"annotations": {RESTARTED_AT: stamp}}}}}, "strategic")
            done.append(f"rolled {kind.lower()}/{name}")
    for pod in api.list("Pod", ns):
        try:
            api.delete("Pod", pod["metadata"]["name"], ns)
        except ApiError:
            pass
    done.append(f"restarted every pod in {ns}")
    return done


def restart_everything(backend: "ModelBackend", scenario: "Scenario") -> list[str]:
    """What a maintenance window does: roll every workload, restart every pod, reboot involved nodes."""
    done = roll_namespace(backend.api, scenario.namespace, f"durability-{int(backend.now)}")
    for node in sorted(_involved_nodes(backend, scenario)):
        backend.model.reboot(node)
        done.append(f"rebooted node {node}")
    return done


def _involved_nodes(backend: "ModelBackend", scenario: "Scenario") -> set[str]:
    nodes = set()
    rc = scenario.root_cause()
    if rc.component.startswith("node/"):
        nodes.add(rc.component.split("/", 1)[1])
    for key in ("node", "nodes"):
        value = scenario.variant.get(key)
        if isinstance(value, str):
            nodes.add(value)
        elif isinstance(value, (list, tuple)):
            nodes.update(str(v) for v in value)
    hosts = backend.model.hosts()
    return {n for n in nodes if n in hosts}


class ForkGates:
    """The four lifecycle gates of the simulator, each on its own fork: order changes nothing.

    With ``lazy``, a failed ``live`` gate is the only result (the others cannot change the
    reward then: RewardSpec.lazy_gates). A live cluster has one timeline and runs
    its gates in order instead (``sre_env.k8s.oracles.LiveGates``).
    """

    def __init__(self) -> None:
        self.immediate = ImmediateOracle()
        self.live = LiveOracle()
        self.durability = DurabilityOracle(self.live)
        self.cleanup = CleanupOracle()

    def evaluate(self, backend: "ModelBackend", scenario: "Scenario", baseline: Baseline, *, lazy: bool = False) -> dict[str, OracleResult]:
        live = self.live.evaluate(backend, scenario, baseline)
        if lazy and not live.passed:
            return {"live": live}
        return {
            "immediate": self.immediate.evaluate(backend, scenario, baseline),
            "live": live,
            "durability": self.durability.evaluate(backend, scenario, baseline),
            "cleanup": self.cleanup.evaluate(backend, scenario, baseline),
        }
