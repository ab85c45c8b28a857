"""KubernetesBackend: the same scenarios on a real cluster, through the real clients.

The Backend seam's surfaces over a live cluster: ``api`` is :class:`KubeApi`
(the official ``kubernetes`` client), ``nodes`` is :class:`PrivilegedPodNodes`,
``telemetry`` is :class:`LiveTelemetry` (Prometheus, Loki, Jaeger). Agent
commands run as the real ``kubectl`` with a namespace-scoped kubeconfig in a
sandbox (``sandbox.py``). Nothing here is deterministic: the cluster has its
own clock, scheduler and network, so the backend says ``nondeterministic`` and
the env marks its spec accordingly.

An episode on a live cluster (``start_episode``): undo what the last episode
changed on nodes, reconcile the app namespace to the recorded baseline (the
first episode records it once the app is healthy), draw the scenario's variant
from the live cluster, inject the fault through the API/exec/node pods, and let
the incident develop. Grading runs :class:`~sre_env.k8s.oracles.LiveGates`.

Example::

    from sre_env.k8s import KubernetesBackend
    backend = KubernetesBackend("~/.kube/config", prometheus_url="http://localhost:9090")
    env = sre_env.SREEnv("ScalePodZero", backend=backend)
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import yaml

from sre_env.episode import Observation
from sre_env.errors import MissingExtraError, ScenarioError

from .guard import NamespaceGuard, guard_kubeconfig
from .oracles import LIVE_SCENARIOS, LiveGates, live_scenario_name, record_live_baseline
from .reconcile import reconcile
from .relay import TcpRelay, is_loopback_url
from .sandbox import Sandbox, ScopedCredentials, create_network, docker_gateway, make_sandbox, remove_network, resolve_sandbox_mode, scoped_kubeconfig
from .telemetry import LiveTelemetry

if TYPE_CHECKING:
    from sre_env.envs.base import Scenario
    from sre_env.rewards.base import OracleResult
    from sre_env.rewards.mitigation import Baseline
    from sre_env.shell import CommandResult

__all__ = ["KubernetesBackend"]


class KubernetesBackend:
    """A live cluster behind the Backend seam (see the module docstring).

    Args:
        kubeconfig: the harness's (admin) kubeconfig; ``None`` uses ``$KUBECONFIG`` or ``~/.kube/config``.
        context: a context of that kubeconfig (default: its current one).
        prometheus_url: Prometheus with the load generator's and kube-state-metrics' series (needed to grade).
        loki_url, jaeger_url: optional log and trace query APIs for the observation.
        telemetry_token: a bearer token sent to Prometheus, Loki and Jaeger (``sre-env serve``'s ``token``; a
            Prometheus behind an authenticating proxy).
        time_scale: cluster seconds per wall second (1 on a real cluster; the speed-up of ``sre-env serve``).
        sandbox: ``auto`` (docker; an error where no Docker engine answers), ``docker``, or ``none``: the agent's
            commands on this machine as this user (warns; ``sandbox.py``).
        allow_unverified: run scenarios not in ``LIVE_SCENARIOS`` (not run end to end on a live cluster yet;
            a :class:`~sre_env.envs.base.SimScenario` is refused either way).
    """

    name = "kubernetes"
    nondeterministic = True

    def __init__(
        self,
        kubeconfig: str | os.PathLike[str] | None = None,
        *,
        context: str | None = None,
        prometheus_url: str | None = None,
        loki_url: str | None = None,
        jaeger_url: str | None = None,
        telemetry_token: str | None = None,
        time_scale: float = 1.0,
        sandbox: str = "auto",
        sandbox_image: str | None = None,
        node_image: str | None = None,
        command_timeout_s: float = 120.0,
        healthy_timeout_s: float = 900.0,
        gates: LiveGates | None = None,
        allow_unverified: bool = False,
    ) -> None:
        #: "docker" or "none": decided first, so a missing engine is an error before anything is opened or changed
        self.sandbox_mode = resolve_sandbox_mode(sandbox)
        try:
            from kubernetes import config
        except ImportError as exc:  # pragma: no cover - exercised only without the extra
            raise MissingExtraError("KubernetesBackend needs the [k8s] extra: pip install 'sre-env[k8s]'") from exc
        from .api import KubeApi
        from .nodes import DEFAULT_IMAGE, PrivilegedPodNodes

        path = os.path.expanduser(str(kubeconfig or os.environ.get("KUBECONFIG", "").split(os.pathsep)[0] or "~/.kube/config"))
        self.kubeconfig = Path(path)
        self.api = KubeApi(config.new_client_from_config(config_file=path, context=context))
        self.nodes = PrivilegedPodNodes(self.api, image=node_image or DEFAULT_IMAGE)
        self.telemetry = LiveTelemetry(prometheus_url, loki_url=loki_url, jaeger_url=jaeger_url, bearer_token=telemetry_token)
        if time_scale <= 0:
            raise ValueError(f"time_scale must be positive, got {time_scale}")
        self.time_scale = float(time_scale)
        self.sandbox_image = sandbox_image
        self.command_timeout_s = float(command_timeout_s)
        self.healthy_timeout_s = float(healthy_timeout_s)
        self.live_gates = gates or LiveGates()
        self.allow_unverified = allow_unverified
        self.sandbox: Sandbox | None = None
        self._credentials: ScopedCredentials | None = None
        self._guard: NamespaceGuard | None = None
        self._relay: TcpRelay | None = None
        #: the docker sandbox's own network (sandbox.create_network)
        self._network: str | None = None
        self._workdir = Path(tempfile.mkdtemp(prefix="sre-env-k8s-"))
        weakref.finalize(self, shutil.rmtree, self._workdir, True)
        self._baselines: dict[str, "Baseline"] = {}
        self._mono0 = time.monotonic()
        server = self.telemetry.server_time()
        self._clock = (server, time.monotonic()) if server is not None else None

    # -- time ----------------------------------------------------------------------------
    @property
    def now(self) -> float:
        """Cluster seconds: Prometheus' clock when there is one (a served simulator's clock runs
        faster than the wall), else the wall clock times ``time_scale``."""
        mono = time.monotonic()
        if self._clock is None:
            return (mono - self._mono0) * self.time_scale
        server = self.telemetry.server_time()
        if server is None:
            last, at = self._clock
            return last + (mono - at) * self.time_scale
        self._clock = (server, mono)
        return server

    def advance(self, seconds: float) -> None:
        """Let ``seconds`` of cluster time pass (a sleep: the cluster moves on by itself)."""
        if seconds <= 0:
            return
        target = self.now + seconds
        # a clock that stands still (a paused ``sre-env serve``, a wrong time_scale) must not hang the caller
        give_up = time.monotonic() + 3.0 * seconds / self.time_scale + 30.0
        while True:
            left = target - self.now
            if left <= 0:
                return
            if time.monotonic() > give_up:
                raise RuntimeError(f"the cluster clock did not advance {seconds:.0f}s (still {left:.0f}s short); is time_scale={self.time_scale} right?")
            time.sleep(min(max(left / self.time_scale, 0.02), 5.0))

    # -- episodes --------------------------------------------------------------------------
    @property
    def cluster(self) -> "KubernetesBackend":
        """The live cluster is its own episode backend: faults and the shell use this object."""
        return self

    def check_supported(self, scenario_cls: type["Scenario"], *, noise: str = "none") -> None:
        from sre_env.envs.base import SimScenario

        if noise != "none":
            raise ValueError("noise is scheduled on the simulator's clock; a live cluster brings its own (use noise='none')")
        if issubclass(scenario_cls, SimScenario):
            raise ScenarioError(f"{scenario_cls.__name__} reads the simulator's model (its cause or its checks have no Kubernetes API equivalent); it runs on the simulator only")
        if live_scenario_name(scenario_cls) is None and not self.allow_unverified:
            raise ScenarioError(
                f"{scenario_cls.__name__} is not verified on the KubernetesBackend yet (it has not been run end to end on a "
                f"live cluster); verified: {', '.join(sorted(LIVE_SCENARIOS))}. Pass allow_unverified=True to try it anyway."
            )

    def start_episode(self, scenario: "Scenario", *, develop_s: float, seed: int = 0, noise: str = "none") -> "Baseline":
        """Recover, reconcile to the baseline, set ``scenario`` up and let it develop; returns the baseline.

        ``seed`` draws nothing here: the cluster's own scheduler, network and clock decide the rest.
        """
        self.check_supported(type(scenario), noise=noise)
        ns = scenario.namespace
        self.nodes.recover_all()
        self._ensure_sandbox(ns)
        baseline = self._baselines.get(ns)
        if baseline is not None:
            reconcile(self.api, baseline, ns)
        self.wait_healthy(ns)
        if baseline is None:
            baseline = self._baselines[ns] = record_live_baseline(self, ns)
        scenario.setup(self, develop_s)
        return baseline

    def wait_healthy(self, namespace: str) -> None:
        """Until every Deployment and StatefulSet of ``namespace`` has all its replicas available."""
        deadline = time.monotonic() + self.healthy_timeout_s
        while True:
            short = []
            for kind in ("Deployment", "StatefulSet"):
                for obj in self.api.list(kind, namespace):
                    want = int(obj["spec"].get("replicas", 1))
                    have = int((obj.get("status") or {}).get("availableReplicas") or 0)
                    if have < want:
                        short.append(f"{kind.lower()}/{obj['metadata']['name']} {have}/{want}")
            if not short:
                return
            if time.monotonic() > deadline:
                raise ScenarioError(f"namespace {namespace} did not become healthy within {self.healthy_timeout_s:.0f}s: {', '.join(short[:6])}")
            time.sleep(2.0)

    def _ensure_sandbox(self, namespace: str) -> None:
        if self.sandbox is not None and self._credentials is not None and self._credentials.namespace == namespace:
            return
        self._close_sandbox()
        dest = self._workdir / f"agent-{namespace}.kubeconfig"
        creds = self._credentials = scoped_kubeconfig(self.api, self.kubeconfig, namespace, dest)
        # where the sandbox reaches the host: loopback for the unsandboxed shell, its own network's gateway for docker
        host = "127.0.0.1"
        if self.sandbox_mode == "docker":
            self._network = create_network()
            host = docker_gateway(network=self._network)
        if creds.mode == "guard":
            # the server cannot scope a token: the guard enforces what the Role and admission would
            self._guard = guard_kubeconfig(creds.kubeconfig, namespace, host=host, token=creds.guard_token, upstream_token=creds.upstream_token)
            if self._guard is None:
                raise ScenarioError("the API server cannot scope the agent's credentials and the namespace guard cannot run (it needs aiohttp, the [serve] extra)")
        elif self.sandbox_mode == "docker":
            self._relay = _relay_loopback_server(creds.kubeconfig, host)
        self.sandbox = make_sandbox(creds.kubeconfig, self.sandbox_mode, image=self.sandbox_image, network=self._network or "bridge")

    # -- the agent ---------------------------------------------------------------------------
    def run_command(self, command: str) -> "CommandResult":
        """Run one agent command line in the sandbox; its cost is the cluster time it took."""
        from sre_env.shell import CommandResult

        if self.sandbox is None:
            raise RuntimeError("no episode has started on this backend (call start_episode first)")
        out = self.sandbox.run(command, timeout_s=self.command_timeout_s)
        return CommandResult(out.output, out.exit_code, out.wall_s * self.time_scale, out.mutating)

    # -- observations ------------------------------------------------------------------------
    def observe(self, scenario: "Scenario", metric_names: list[str], window: int) -> Observation:
        ns = scenario.namespace
        metrics, mask = self.telemetry.metrics_window(scenario.app, metric_names, window)
        return Observation(
            alerts="\n".join(self.telemetry.firing_alerts()),
            logs=self.telemetry.recent_logs(ns),
            traces=self.telemetry.trace_summary(scenario.app.entrypoint),
            metrics=metrics,
            metrics_mask=mask,
        )

    def firing_alerts(self) -> list[str]:
        return self.telemetry.firing_alerts()

    def health(self, scenario: "Scenario", window_s: float = 60.0) -> float:
        """The load generator's success ratio over the last minute (Prometheus)."""
        client = self.telemetry.client_window(scenario.namespace, window_s)
        return client.success if client.has_data else 0.0

    def noise_log(self) -> list[dict[str, Any]]:
        return []

    def clock_label(self, since: float) -> str:
        return f"+{self.now - since:.0f}s"

    # -- grading --------------------------------------------------------------------------------
    def gates(self, scenario: "Scenario", baseline: "Baseline", *, lazy: bool = False) -> dict[str, "OracleResult"]:
        """The gates in order on the one timeline (``lazy`` changes nothing: a live cluster cannot skip
        ahead, and the later gates' disturbance is what durability measures)."""
        return self.live_gates.evaluate(self, scenario, baseline)

    # -- teardown --------------------------------------------------------------------------------
    def _close_sandbox(self) -> None:
        if self._guard is not None:
            self._guard.stop()
            self._guard = None
        if self._relay is not None:
            self._relay.stop()
            self._relay = None
        if self.sandbox is not None:
            self.sandbox.close()
            self.sandbox = None
        if self._network is not None:
            remove_network(self._network)
            self._network = None
        if self._credentials is not None:
            self._credentials.revoke(self.api)
            self._credentials = None

    def close(self) -> None:
        """Recover the last fault (node changes undone, the namespace reconciled to its baseline), then
        remove what the harness made (sandbox, agent credentials, node access pods); the app stays."""
        self._close_sandbox()
        try:
            self.nodes.recover_all()
            for ns, baseline in self._baselines.items():
                reconcile(self.api, baseline, ns)
            self.nodes.remove_pods()
        except Exception:
            pass
        self._baselines.clear()
        shutil.rmtree(self._workdir, ignore_errors=True)

    def __deepcopy__(self, memo: dict[int, Any]) -> "KubernetesBackend":
        # a live cluster is not copied: gym.make's spec copies refer to the same backend
        return self


def _relay_loopback_server(kubeconfig: Path, host: str) -> TcpRelay | None:
    """For a bridged container: relay an API server on the host's loopback (kind) from ``host`` and point the
    kubeconfig at the relay, keeping the server's name for TLS; None when the server is reachable as it is."""
    cfg = yaml.safe_load(kubeconfig.read_text())
    cluster = cfg["clusters"][0]["cluster"]
    url = urlsplit(cluster["server"])
    if not is_loopback_url(cluster["server"]):
        return None
    relay = TcpRelay(url.hostname or "127.0.0.1", url.port or (443 if url.scheme == "https" else 80), host).start()
    cluster["server"] = f"{url.scheme}://{host}:{relay.port}{url.path}"
    if url.scheme == "https":
        cluster.setdefault("tls-server-name", url.hostname)
    kubeconfig.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return relay
