"""social-network's runtime model: what the gateway's loaded configuration costs.

nginx-thrift reads ``nginx.conf`` (its ConfigMap, mounted with ``subPath``)
when the container starts; a ``subPath`` mount never sees later ConfigMap
edits, so only a new container picks a change up. Every regex rule the
worker evaluates per request adds CPU time (:mod:`sre_env.sim.runtime.edge_filter`);
that service time lowers what one replica can serve and lengthens every
request, through the app model's traffic modifiers.

Redis state is not here: it is a process model any app can use
(:mod:`sre_env.sim.runtime.redis_model`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from sre_env.sim.runtime.edge_filter import RegexRule, regex_rules, request_cost_ms
from sre_env.sim.runtime.mounts import mounted_file

if TYPE_CHECKING:
    from sre_env.apps.base import AppSpec
    from sre_env.sim.kernel.flows import TickResult, TrafficPlan
    from sre_env.sim.kernel.world import World

__all__ = ["GATEWAY", "NGINX_CONF_KEY", "SocialModel", "SocialMods"]

GATEWAY = "nginx-thrift"
NGINX_CONF_KEY = "nginx.conf"


@dataclass
class SocialMods:
    """Traffic modifiers read by :func:`sre_env.sim.traffic.flow.run_traffic`."""

    capacity: dict[str, float] = field(default_factory=dict)
    latency_ms: dict[str, float] = field(default_factory=dict)
    extra_rps: dict[str, float] = field(default_factory=dict)
    #: CPU per request the processes burn beyond the component's service time, ms (kubectl top)
    cpu_ms: dict[str, float] = field(default_factory=dict)


class SocialModel:
    def __init__(self, app: AppSpec) -> None:
        self.app_name = app.name
        self.mods = SocialMods()
        comp = app.component(GATEWAY)
        self.base_ms = comp.latency_ms
        self.container = comp.container
        self.conf_path = next((path for key, path, _ in comp.config_files if key == NGINX_CONF_KEY), "")
        #: gateway pod uid -> (container start, extra ms per request, the regex rules it loaded)
        self.loaded: dict[str, tuple[float, float, tuple[RegexRule, ...]]] = {}

    def tick(self, world: World, app: AppSpec, plan: TrafficPlan, res: TickResult, dt: float) -> None:
        uids = plan.serving.get(GATEWAY, ())
        costs = []
        for uid in uids:
            entry = self._loaded(world, uid)
            if entry is not None:
                costs.append(entry[1])
        for uid in [u for u in self.loaded if u not in uids]:
            del self.loaded[uid]
        extra = sum(costs) / len(costs) if costs else 0.0
        capacity = {GATEWAY: self.base_ms / (self.base_ms + extra)} if extra > 0 else {}
        latency = {GATEWAY: extra} if extra > 0 else {}
        if capacity != self.mods.capacity or latency != self.mods.latency_ms:
            self.mods.capacity = capacity
            self.mods.latency_ms = latency
            self.mods.cpu_ms = dict(latency)  # the added time is CPU burnt in the regex engine
            # the traffic step caches a settled flow; a new service time must recompute it
            world.fault_epoch += 1

    def _loaded(self, world: World, uid: str) -> tuple[float, float, tuple[RegexRule, ...]] | None:
        rt = world.runtimes.get(uid)
        ctr = rt.containers.get(self.container) if rt else None
        if ctr is None or ctr.started_at is None:
            return None
        entry = self.loaded.get(uid)
        if entry is not None and entry[0] == ctr.started_at:
            return entry
        pod = world.pod_by_uid(uid)
        spec = next((c for c in (pod or {}).get("spec", {}).get("containers", ()) if c["name"] == self.container), None)
        text = mounted_file(world, pod, spec, self.conf_path) if pod and spec and self.conf_path else None
        entry = self.loaded[uid] = (float(ctr.started_at), request_cost_ms(text), tuple(regex_rules(text or "")))
        return entry

    def gateway_rules(self, world: World, uid: str) -> tuple[RegexRule, ...]:
        """The regex rules the gateway process in pod ``uid`` runs with (empty if none or not running)."""
        entry = self._loaded(world, uid)
        return entry[2] if entry else ()

    # hooks the world, logs and shell call on every app model
    def request_log_fields(self, world: World, comp: str, failed: bool, latency: float, variant: int) -> dict[str, Any] | None:
        return None  # the C++ services, redis and nginx (access_log off) print nothing per request

    def container_tool(self, world: World, pod: dict[str, Any], spec: dict[str, Any], env: dict[str, str]) -> Callable[[list[str], str | None], Any] | None:
        """``nginx``/``openresty`` in the gateway container: ``-t``, ``-T``, ``-s reload``, ``-v``."""
        if spec.get("name") != self.container or not self.conf_path:
            return None
        conf_path = self.conf_path

        def tool(argv: list[str], stdin: str | None) -> Any:
            from sre_env.backend import ExecResult
            from sre_env.sim.runtime.config_checks import nginx_syntax_error

            base = argv[0].rsplit("/", 1)[-1] if argv else ""
            if base not in ("nginx", "openresty"):
                return None
            args = argv[1:]
            text = mounted_file(world, pod, spec, conf_path) or ""
            if "-v" in args or "-V" in args:
                return ExecResult("nginx version: openresty/1.15.8.1rc1\n", 0)
            if "-t" in args or "-T" in args:
                err = nginx_syntax_error(text, conf_path)
                if err:
                    return ExecResult(f"{err}\nnginx: configuration file {conf_path} test failed\n", 1)
                out = f"nginx: the configuration file {conf_path} syntax is ok\nnginx: configuration file {conf_path} test is successful\n"
                if "-T" in args:
                    out += f"# configuration file {conf_path}:\n{text}\n"
                return ExecResult(out, 0)
            if "-s" in args:
                # the workers re-read the file in this container: a subPath copy taken when it started
                return ExecResult("", 0)
            return ExecResult("nginx: [emerg] bind() to 0.0.0.0:8080 failed (98: Address already in use)\n", 1)

        return tool


