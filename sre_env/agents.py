"""Baseline agents and the episode loop shared by the CLI, tests and examples.

An agent is anything with ``reset(env)`` (called once after ``env.reset``, so
it can look at the live cluster) and ``act(observation, info) -> str`` (the
next command line). Agents here are deliberately simple: they exist to
validate scenarios (the reference agent must pass, the random agent must
not) and to give learned agents a floor to beat.

``run_episode`` drives one episode and returns an ``EpisodeResult``: plain
data (no env objects) so it can be rendered, compared or written as JSON.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple, Protocol

import gymnasium as gym
import numpy as np

__all__ = [
    "AGENTS",
    "Agent",
    "EpisodeResult",
    "RandomAgent",
    "ReferenceAgent",
    "RunbookAgent",
    "ScriptedAgent",
    "Step",
    "StopEpisode",
    "make_agent",
    "run_episode",
]

#: lines / characters of each command's output kept in an EpisodeResult
EXCERPT_LINES = 20
EXCERPT_CHARS = 2000


class StopEpisode(Exception):
    """Raised by ``act`` to end the episode without a diagnosis.

    The episode is still graded (as truncated), so a person who walks away
    from ``sre-env play`` or an agent that gives up still gets a verdict.
    """


class Agent(Protocol):
    def reset(self, env: gym.Env) -> None: ...

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> str: ...


def _scenario(env: gym.Env) -> Any:
    """The live scenario behind (possibly wrapped) ``env``; only valid after reset."""
    scenario = getattr(env.unwrapped, "scenario", None)
    if scenario is None:
        raise RuntimeError("the environment has no scenario yet: call env.reset() before agent.reset(env)")
    return scenario


class ScriptedAgent:
    """Plays a fixed list of commands, then submits ``diagnosis``.

    Useful for regression tests of known-good and known-bad fixes, and as the
    base of agents whose plan is known once the episode starts.
    """

    def __init__(self, commands: list[str] | tuple[str, ...] = (), diagnosis: str = "no diagnosis") -> None:
        self.commands = list(commands)
        self.diagnosis = diagnosis
        self._queue: list[str] = []

    def reset(self, env: gym.Env) -> None:
        self._queue = list(self.commands)

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> str:
        if self._queue:
            return self._queue.pop(0)
        return f"submit {self.diagnosis}"


class ReferenceAgent(ScriptedAgent):
    """Plays the scenario's own reference solution: the cheat.

    It reads the injected fault's ground truth (``scenario.reference_solution()``
    and ``scenario.root_cause().summary``), which no real agent can see. Its
    purpose is validating scenarios: if it does not pass, the scenario or the
    simulator is broken, not the agent.
    """

    def __init__(self, seed: int | None = None) -> None:  # seed accepted for a uniform make_agent signature
        super().__init__()

    def reset(self, env: gym.Env) -> None:
        scenario = _scenario(env)
        self.commands = list(scenario.reference_solution())
        rc = scenario.root_cause()
        structured = {k: v for k, v in rc.as_dict().items() if k in ("component", "namespace", "layer", "mechanism", "details", "affected")}
        # prose plus the structured form `submit` accepts (see sre_env.rewards.diagnosis)
        self.diagnosis = rc.summary + "\n" + json.dumps(structured, sort_keys=True)
        super().reset(env)


#: (template, kind of name it needs) — what an unfocused on-call engineer might type
_MENU: tuple[tuple[str, str | None], ...] = (
    ("kubectl get pods -n {ns}", None),
    ("kubectl get pods -n {ns} -o wide", None),
    ("kubectl get deployments -n {ns}", None),
    ("kubectl get svc -n {ns}", None),
    ("kubectl get endpoints -n {ns}", None),
    ("kubectl get events -n {ns}", None),
    ("kubectl get nodes", None),
    ("kubectl top pods -n {ns}", None),
    ("kubectl top nodes", None),
    ("kubectl describe pod {pod} -n {ns}", "pod"),
    ("kubectl logs {pod} -n {ns} --tail=20", "pod"),
    ("kubectl describe deployment {deployment} -n {ns}", "deployment"),
    ("kubectl describe node {node}", "node"),
    ("ssh {node} dmesg | tail -20", "node"),
    ("ssh {node} df -h", "node"),
    ("ssh {node} journalctl -u kubelet -n 20", "node"),
    ("kubectl rollout restart deployment/{deployment} -n {ns}", "deployment"),
    ("kubectl delete pod {pod} -n {ns}", "pod"),
)

_GENERIC_DIAGNOSIS = "Unclear root cause; some pods in {ns} look unhealthy. Restarted workloads and collected logs and events."


class RandomAgent:
    """Draws commands from a fixed menu of realistic ones, then submits a vague diagnosis.

    Names (pods, deployments, nodes) are read from the live cluster at each
    step, so the commands mostly succeed; what it never does is reason. It is
    the floor every real agent must beat, and scenarios check that it fails.
    Same seed (and same env seed) -> same commands.
    """

    def __init__(self, seed: int | None = 0, steps: int = 10) -> None:
        self.seed = seed
        self.steps = int(steps)
        self._rng = np.random.default_rng(seed)
        self._env: gym.Env | None = None
        self._taken = 0

    def reset(self, env: gym.Env) -> None:
        self._rng = np.random.default_rng(self.seed)
        self._env = env
        self._taken = 0

    def _names(self, kind: str, namespace: str) -> list[str]:
        assert self._env is not None
        api = self._env.unwrapped.backend.api
        api_kind = {"pod": "Pod", "deployment": "Deployment", "node": "Node"}[kind]
        objs = api.list(api_kind) if kind == "node" else api.list(api_kind, namespace)
        return sorted(o["metadata"]["name"] for o in objs)

    def _draw(self) -> str:
        namespace = _scenario(self._env).namespace
        template, kind = _MENU[int(self._rng.integers(len(_MENU)))]
        values = {"ns": namespace}
        if kind is not None:
            names = self._names(kind, namespace)
            if not names:  # e.g. every pod deleted: fall back to a listing
                return f"kubectl get pods -n {namespace}"
            values[kind] = names[int(self._rng.integers(len(names)))]
        return template.format(**values)

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> str:
        if self._env is None:
            raise RuntimeError("RandomAgent.act() before reset(env)")
        if self._taken >= self.steps:
            return "submit " + _GENERIC_DIAGNOSIS.format(ns=_scenario(self._env).namespace)
        self._taken += 1
        return self._draw()


_IO_ERROR = re.compile(r"I/O error|\bEIO\b|Medium Error|medium error|Unrecovered read error|WiredTiger.*(?:error|panic)", re.I)


def _template_env(text: str) -> dict[str, str]:
    """NAME -> value from the ``Environment:`` block of a ``rollout history --revision`` template."""
    out: dict[str, str] = {}
    inside = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped == "Environment:":
            inside = True
            continue
        if inside:
            m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*):\s+(.*)$", stripped)
            if not m or line.startswith("    ") is False:
                inside = False if not m else inside
            if m:
                out[m.group(1)] = m.group(2).strip()
            else:
                inside = False
    return out


class RunbookAgent:
    """A generic on-call runbook: triage (pods, events, logs, metrics), then the matching repair.

    It knows no scenario: it reads what its commands print and the live objects
    those commands show, and applies the textbook remediation for the symptom:

    * a workload whose logs or node's kernel log show disk read errors and that
      keeps data on a node-local volume -> evacuate that node's local volumes;
    * an unhealthy workload that was changed recently (rollout history > 1)
      -> ``rollout undo``; unhealthy otherwise -> ``rollout restart``;
    * everything Running but requests failing -> compare each Service's
      targetPort with the ports its pods declare and repoint the mismatch.

    It calibrates difficulty: an incident the runbook solves is "easy"; one it
    fails needs reasoning beyond the symptom-to-fix table.
    """

    def __init__(self, seed: int | None = None, max_logs: int = 3) -> None:
        self.max_logs = int(max_logs)
        self._queue: list[str] = []
        self._findings: list[str] = []

    def reset(self, env: gym.Env) -> None:
        from sre_env.wrappers.catalog import catalog_for

        inner = env.unwrapped
        scenario = _scenario(env)
        self._env = env
        self._ns = scenario.namespace
        self._catalog = catalog_for(scenario.app)
        self._catalog.bind(inner.backend, self._ns)
        self._phase = "triage"
        self._findings = []
        self._claim: dict[str, Any] | None = None
        self._traces = ""
        self._outputs: dict[str, str] = {}
        self._last: str | None = None
        self._queue = [f"kubectl get pods -n {self._ns} -o wide", f"kubectl get events -n {self._ns}", f"kubectl top pods -n {self._ns}"]
        self._unhealthy: list[tuple[str, str]] = []
        self._restarting: set[str] = set()

    # ---------------------------------------------------------------- reading the cluster
    def _api(self) -> Any:
        return self._env.unwrapped.backend.api

    def _unhealthy_workloads(self) -> list[tuple[str, str]]:
        """Workloads with pods not ready or restarting, most restarts first (what `get pods` shows)."""
        from sre_env.wrappers.numeric import _owned_by, _pod_ready

        pods = self._api().list("Pod", self._ns)
        rows = []
        for kind, name in self._catalog.targets.workloads:
            mine = [p for p in pods if _owned_by(p, name)]
            restarts = sum(int(cs.get("restartCount", 0)) for p in mine for cs in p.get("status", {}).get("containerStatuses", []) or [])
            # restarts that happened during the metrics window, not at start-up hours ago
            if any(not _pod_ready(p) for p in mine) or name in self._restarting:
                rows.append((-restarts, kind, name))
        return [(k, n) for _, k, n in sorted(rows)]

    def _note_restarts(self, observation: dict[str, Any]) -> None:
        """Services whose restart counter rose over the observation's metrics window (the dashboard)."""
        names = getattr(self._env.unwrapped, "_metric_names", [])
        window = np.asarray(observation.get("metrics", []))
        if window.ndim != 2 or not len(window):
            return
        for j, metric in enumerate(names):
            if metric.startswith("restarts{") and j < window.shape[1] and window[-1, j] > window[0, j]:
                m = re.search(r"service=([^,}]+)", metric)
                if m:
                    self._restarting.add(m.group(1))

    def _revisions(self, kind: str, name: str) -> int:
        if kind != "Deployment":
            return 1
        owned = [rs for rs in self._api().list("ReplicaSet", self._ns) if any(o.get("name") == name for o in rs["metadata"].get("ownerReferences", []) or [])]
        return len(owned)

    def _node_of(self, name: str) -> str | None:
        from sre_env.wrappers.numeric import _owned_by

        for pod in self._api().list("Pod", self._ns):
            if _owned_by(pod, name) and pod.get("spec", {}).get("nodeName"):
                return str(pod["spec"]["nodeName"])
        return None

    # ---------------------------------------------------------------- the runbook
    def _plan_next(self) -> None:
        cat = self._catalog
        ns = self._ns
        if self._phase == "triage":
            self._phase = "logs"
            self._unhealthy = self._unhealthy_workloads()
            for kind, name in self._unhealthy[: self.max_logs]:
                self._queue.append(f"kubectl logs {kind.lower()}/{name} -n {ns} --tail=30")
            if self._unhealthy:
                node = self._node_of(self._unhealthy[0][1])
                if node:
                    self._queue.append(f"ssh {node} dmesg | tail -20")
            return
        if self._phase == "logs":
            self._phase = "repair"
            if self._unhealthy:
                kind, name = self._unhealthy[0]
                node = self._node_of(name)
                disk = any(_IO_ERROR.search(out) for cmd, out in self._outputs.items() if name in cmd or (node and cmd.startswith(f"ssh {node}")))
                local = node in cat._local_volumes_by_node() if node else False
                if disk and local and node:
                    self._found(f"node/{node}", "hardware", "disk read errors (I/O errors, bad sectors) on the node's disk",
                                f"Root cause: the disk of node/{node} has read errors (I/O errors in its kernel log); {kind.lower()}/{name} keeps its data on a local volume there and crash-loops. Moved the local volumes off {node} and cordoned it.",
                                {"node": node, "database": name})
                    self._queue += cat.commands(cat.index("evacuate_node", "node", cat.targets.nodes.index(node)))
                elif self._revisions(kind, name) > 1:
                    # what changed in the last rollout: the two revisions' pod templates side by side
                    n = self._revisions(kind, name)
                    self._queue += [f"kubectl rollout history {kind.lower()}/{name} -n {ns} --revision={r}" for r in (n - 1, n)]
                    self._queue.append(f"kubectl logs {kind.lower()}/{name} -n {ns} --previous --tail=20")
                    self._phase = "history"
                    self._rollback = (kind, name, n)
                else:
                    self._found(f"{kind.lower()}/{name}", "application", "workload unhealthy", f"{kind.lower()}/{name} is unhealthy (not ready or restarting); restarted it.", {})
                    self._queue.append(f"kubectl rollout restart {kind.lower()}/{name} -n {ns}")
                return
            self._queue.append(f"kubectl describe svc -n {ns}")
            self._phase = "services"
            return
        if self._phase == "history":
            self._phase = "repair"
            kind, name, n = self._rollback
            before = _template_env(self._outputs.get(f"kubectl rollout history {kind.lower()}/{name} -n {ns} --revision={n - 1}", ""))
            after = _template_env(self._outputs.get(f"kubectl rollout history {kind.lower()}/{name} -n {ns} --revision={n}", ""))
            logs = self._outputs.get(f"kubectl logs {kind.lower()}/{name} -n {ns} --previous --tail=20", "")
            removed = [f"{k} (= {v})" for k, v in before.items() if k not in after]
            changed = [f"{k} ({before[k]} -> {after[k]})" for k in before if k in after and before[k] != after[k]]
            fatal = re.findall(r"(?:FTL|fatal|panic)[^\n]*", logs)
            what = "; ".join(x for x in (
                ("env var " + ", ".join(removed) + " was removed from the pod template") if removed else "",
                ("env var " + ", ".join(changed) + " was changed") if changed else "",
            ) if x) or "its pod template changed"
            details = {k.split(" ")[0]: v for k, v in before.items() if k not in after}
            self._found(
                f"{kind.lower()}/{name}",
                "application",
                "missing required environment variable" if removed else "bad configuration change",
                f"Root cause: {kind.lower()}/{name} — in its last rollout {what}" + (f"; the process exits at start-up with: {fatal[-1].strip()[:160]}" if fatal else "")
                + f", so it crash-loops. Rolled {kind.lower()}/{name} back to revision {n - 1}.",
                {"variable": next(iter(details), None), "expected_value": next(iter(details.values()), None)} if details else {},
            )
            self._queue.append(f"kubectl rollout undo {kind.lower()}/{name} -n {ns}")
            return
        if self._phase == "services":
            self._phase = "repair"
            for i, svc in enumerate(cat.targets.services):
                obj = next((o for o in self._api().list("Service", ns) if o["metadata"]["name"] == svc), None)
                ports = (obj or {}).get("spec", {}).get("ports") or []
                declared = cat._declared_port(svc)
                target = ports[0].get("targetPort", ports[0].get("port")) if ports else None
                if declared is not None and isinstance(target, int) and target != declared:
                    self._found(f"service/{svc}", "kubernetes", "service targetPort misconfigured",
                                f"Root cause: service/{svc} has targetPort {target}, but its pods listen on {declared}, so connections to it are refused. Repointed the targetPort to {declared}.",
                                {"service": svc, "targetPort": target, "expected_targetPort": declared})
                    self._queue += cat.commands(cat.index("fix_target_port", "service", i))
                    return
            self._found(None, None, None, "No failing workload or misrouted service found.", {})

    def _found(self, component: str | None, layer: str | None, mechanism: str | None, text: str, details: dict[str, Any]) -> None:
        self._findings.append(text)
        if component:
            self._claim = {"component": component, "namespace": self._ns, "layer": layer, "mechanism": mechanism, "details": {k: v for k, v in details.items() if v is not None}}

    def _diagnosis(self) -> str:
        """The findings in prose, the affected callers from the trace summary, and the structured claim."""
        text = " ".join(self._findings) or "No root cause found."
        callers = sorted({m.group(1) for out in (self._traces,) for m in re.finditer(r"failing call: ([\w-]+) ->", out)})
        if callers:
            text += " Impact: " + ", ".join(f"deployment/{c}" for c in callers) + " fail on it (users see errors)."
        if self._claim:
            claim = dict(self._claim, affected=[f"deployment/{c}" for c in callers])
            text += "\n" + json.dumps(claim, sort_keys=True)
        return text

    def act(self, observation: dict[str, Any], info: dict[str, Any]) -> str:
        if observation.get("traces"):
            self._traces = str(observation["traces"])
        if self._last is not None:
            self._outputs[self._last] = str(observation.get("output", ""))
        self._note_restarts(observation)
        while not self._queue and self._phase != "repair":
            self._plan_next()
        if not self._queue:
            return "submit " + self._diagnosis()
        self._last = self._queue.pop(0)
        return self._last


AGENTS: dict[str, Callable[..., Agent]] = {"reference": ReferenceAgent, "random": RandomAgent, "runbook": RunbookAgent}


def make_agent(name: str, seed: int | None = 0) -> Agent:
    """Build a registered agent by name (what ``sre-env run --agent`` uses)."""
    factory = AGENTS.get(name)
    if factory is None:
        raise ValueError(f"No agent named {name!r}. Known agents: {', '.join(sorted(AGENTS))}")
    return factory(seed=seed)


class Step(NamedTuple):
    """One command the agent ran: what it typed, the exit code, the start of the output."""

    command: str
    exit_code: int
    output: str


@dataclass(frozen=True)
class EpisodeResult:
    """Everything worth keeping from one episode, as plain data."""

    env_id: str
    seed: int | None
    steps: list[Step]
    reward: float
    reward_components: dict[str, float]
    oracles: dict[str, Any]
    root_cause: dict[str, Any]
    diagnosis: str | None
    sim_seconds: float
    terminated: bool
    truncated: bool
    brief: str = ""
    agent: str = ""
    variant: dict[str, Any] = field(default_factory=dict)
    is_success: bool = False

    @property
    def passed(self) -> bool:
        """Whether the episode succeeded: every gate the task requires passed (the CLI's exit status)."""
        return self.is_success


def excerpt(output: str, lines: int = EXCERPT_LINES, chars: int = EXCERPT_CHARS) -> str:
    """The start of a command's output, marked when cut, so results stay small."""
    kept = output.splitlines()
    text = "\n".join(kept[:lines])
    cut = len(kept) > lines or len(text) > chars
    text = text[:chars]
    if cut:
        text += f"\n... [output cut; {len(kept)} lines in all]"
    return text


def _env_id(env: gym.Env) -> str:
    spec = getattr(env, "spec", None)
    if spec is not None and spec.id:
        return spec.id
    scenario_cls = getattr(env.unwrapped, "scenario_cls", None)
    return getattr(scenario_cls, "family", type(env.unwrapped).__name__)


def run_episode(
    env: gym.Env,
    agent: Agent,
    seed: int | None = None,
    *,
    on_step: Callable[[Step, dict[str, Any]], None] | None = None,
) -> EpisodeResult:
    """Reset ``env`` with ``seed``, let ``agent`` act until the episode ends, collect the grade.

    ``on_step(step, observation)`` is called after every command (the CLI's
    ``play`` uses it to show outputs). An agent that raises ``StopEpisode``
    ends the episode unsubmitted; it is graded as truncated.
    """
    obs, info = env.reset(seed=seed)
    brief = obs["output"]
    agent.reset(env)
    steps: list[Step] = []
    reward, terminated, truncated = 0.0, False, False
    while not (terminated or truncated):
        try:
            command = agent.act(obs, info)
        except StopEpisode:
            obs, reward, terminated, truncated, info = _end_unsubmitted(env, info)
            break
        obs, reward, terminated, truncated, info = env.step(command)
        step = Step(command, int(info.get("exit_code", 0)), excerpt(obs["output"]))
        steps.append(step)
        if on_step is not None:
            on_step(step, obs)
    return EpisodeResult(
        env_id=_env_id(env),
        seed=seed,
        steps=steps,
        reward=float(reward),
        reward_components=dict(info.get("reward_components", {})),
        oracles=dict(info.get("oracles", {})),
        root_cause=dict(info.get("root_cause", {})),
        diagnosis=info.get("diagnosis"),
        sim_seconds=float(info.get("time_s", 0.0)),
        terminated=bool(terminated),
        truncated=bool(truncated),
        brief=brief,
        agent=type(agent).__name__,
        variant=dict(info.get("variant", {})),
        is_success=bool(info.get("is_success", False)),
    )


def _end_unsubmitted(env: gym.Env, info: dict[str, Any]) -> tuple[dict[str, Any], float, bool, bool, dict[str, Any]]:
    """End the episode now without a diagnosis; the env grades it as truncated."""
    inner = env.unwrapped
    reward, final = inner.finish()
    return inner._observation(), reward, False, True, final
