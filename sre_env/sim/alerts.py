"""Alert rules in the style of kube-prometheus, evaluated on every scrape.

Each rule yields (labels, summary) for the objects that currently match; a
match must persist for the rule's ``for`` duration before it fires, exactly as
in Prometheus. Durations are shorter than kube-prometheus' defaults (minutes,
not a quarter hour) because an episode spans minutes of cluster time; the
names, labels and wording follow the upstream rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Iterator

if TYPE_CHECKING:
    from .world import World

__all__ = ["AlertRule", "RULES", "AlertState", "Alert"]


@dataclass(frozen=True)
class Alert:
    name: str
    severity: str
    labels: tuple[tuple[str, str], ...]
    summary: str
    active_since: float
    firing: bool

    def line(self) -> str:
        labels = " ".join(f"{k}={v}" for k, v in self.labels)
        return f"[{'firing' if self.firing else 'pending'}] {self.name} severity={self.severity} {labels} - {self.summary}"


Matcher = Callable[["World"], Iterator[tuple[tuple[tuple[str, str], ...], str]]]


@dataclass(frozen=True)
class AlertRule:
    name: str
    severity: str
    for_s: float
    match: Matcher
    #: True when the rule reads only API objects (its matches are cached per store revision)
    objects_only: bool = True


def _crashlooping(world: "World"):
    for pod in world.store.iter("Pod"):
        for cs in pod.get("status", {}).get("containerStatuses") or ():
            waiting = (cs.get("state") or {}).get("waiting") or {}
            if waiting.get("reason") == "CrashLoopBackOff":
                ns, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
                yield (("namespace", ns), ("pod", name), ("container", cs["name"])), (
                    f'Pod {ns}/{name} ({cs["name"]}) is in waiting state (reason: "CrashLoopBackOff").'
                )


def _not_ready(world: "World"):
    for pod in world.store.iter("Pod"):
        meta = pod["metadata"]
        if meta.get("deletionTimestamp") or pod.get("status", {}).get("phase") in ("Succeeded", "Failed"):
            continue
        if meta["name"].startswith("node-debugger-"):
            continue
        ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in pod.get("status", {}).get("conditions") or ())
        if not ready:
            yield (("namespace", meta["namespace"]), ("pod", meta["name"])), (
                f"Pod {meta['namespace']}/{meta['name']} has been in a non-ready state for longer than 2 minutes."
            )


def _replicas_mismatch(world: "World"):
    for dep in world.store.iter("Deployment"):
        want = dep["spec"].get("replicas", 1)
        have = dep.get("status", {}).get("availableReplicas", 0)
        if want != have:
            ns, name = dep["metadata"]["namespace"], dep["metadata"]["name"]
            yield (("namespace", ns), ("deployment", name)), (
                f"Deployment {ns}/{name} has not matched the expected number of replicas for longer than 3 minutes."
            )


def _error_rate(world: "World"):
    for app in world.apps:
        ratio = world.client_error_ratio(app.name)
        if ratio is not None and ratio > 0.05:
            yield (("namespace", app.namespace), ("service", app.entrypoint)), (
                f"{ratio * 100:.1f}% of requests to {app.namespace}/{app.entrypoint} are failing."
            )


def _latency(world: "World"):
    for app in world.apps:
        p99 = world.client_p99_ms(app.name)
        if p99 is not None and p99 > 1000.0:
            yield (("namespace", app.namespace), ("service", app.entrypoint)), (
                f"99th percentile latency of {app.namespace}/{app.entrypoint} is {p99 / 1000:.2f}s."
            )


def _node_not_ready(world: "World"):
    for node in world.store.iter("Node"):
        if not world.node_ready(node["metadata"]["name"]):
            yield (("node", node["metadata"]["name"]),), f"{node['metadata']['name']} has been unready for more than 2 minutes."


RULES: tuple[AlertRule, ...] = (
    AlertRule("KubePodCrashLooping", "warning", 60.0, _crashlooping),
    AlertRule("KubePodNotReady", "warning", 120.0, _not_ready),
    AlertRule("KubeDeploymentReplicasMismatch", "warning", 180.0, _replicas_mismatch),
    AlertRule("KubeNodeNotReady", "warning", 120.0, _node_not_ready),
    AlertRule("HighErrorRate", "critical", 60.0, _error_rate, objects_only=False),
    AlertRule("HighRequestLatency", "warning", 120.0, _latency, objects_only=False),
)


class AlertState:
    """Pending/firing bookkeeping across evaluations (the ``for:`` clause)."""

    def __init__(self) -> None:
        self.active: dict[tuple[str, tuple[tuple[str, str], ...]], tuple[float, str]] = {}
        self._object_rev = -1
        self._object_matches: list[tuple[str, tuple[tuple[str, str], ...], str]] = []

    def evaluate(self, world: "World") -> None:
        now = world.clock.now
        seen = {}
        if world.store.revision != self._object_rev:
            self._object_matches = [(r.name, labels, summary) for r in RULES if r.objects_only for labels, summary in r.match(world)]
            self._object_rev = world.store.revision
        matches = list(self._object_matches)
        matches += [(r.name, labels, summary) for r in RULES if not r.objects_only for labels, summary in r.match(world)]
        for rule_name, labels, summary in matches:
            if True:
                rule_name_ = rule_name
                key = (rule_name_, labels)
                since = self.active.get(key, (now, summary))[0]
                seen[key] = (since, summary)
        self.active = seen

    def alerts(self, now: float) -> list[Alert]:
        rules = {r.name: r for r in RULES}
        out = []
        for (name, labels), (since, summary) in sorted(self.active.items()):
            rule = rules[name]
            out.append(Alert(name, rule.severity, labels, summary, since, now - since >= rule.for_s))
        return out

    def firing(self, now: float) -> list[Alert]:
        return [a for a in self.alerts(now) if a.firing]
