"""Alerting rules in the style of kube-prometheus, as PromQL over the TSDB, with ``for:`` state.

Every rule is a PromQL expression evaluated as an instant query right after each
scrape; each series it returns is an alert whose labels are the series' labels.
An alert is *pending* from the first evaluation that returns it and *firing*
once it has been returned for the rule's ``for`` duration; it is resolved as soon
as an evaluation no longer returns it -- exactly Prometheus' rule manager.

Names, expressions and wording follow kubernetes-mixin and node-mixin. Durations
and range windows are shortened (minutes, not quarter hours) because an episode
spans minutes of cluster time and grading checks a fork five minutes after the
fix: a window longer than that would keep a fixed incident's alert firing.

Evaluation is cheap when nothing changes: a rule whose input series have been
constant for longer than its look-back window returns what it returned last
time, so it is not re-evaluated.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterator

import numpy as np

from . import promql_ast as A
from .promql_ast import PromQLError, compile_expr
from .promql_engine import LOOKBACK_S, Context, Evaluator
from .promql_values import Vector

if TYPE_CHECKING:
    from sre_env.sim.kernel.world import World

    from .tsdb import TSDB

__all__ = ["Rule", "RULES", "Alert", "AlertState", "alerts_of", "render_template"]


#: how often rules are evaluated (Prometheus' global default evaluation_interval)
EVALUATION_INTERVAL_S = 60.0


@dataclass(frozen=True)
class Rule:
    name: str
    expr: str
    for_s: float
    severity: str
    #: the annotation shown after the labels ({{ $labels.x }}, {{ $value }} templates)
    description: str
    #: selectors whose series must have changed within the rule's window for it to
    #: return anything (an evaluation shortcut: e.g. no error counter moved -> no
    #: error-rate alert); empty: always evaluate when the inputs change
    guards: tuple[str, ...] = ()
    #: a cheap expression that must return something for the rule to (an evaluation
    #: shortcut, e.g. one conjunct of an ``and``); itself skipped while its inputs are constant
    precondition: str = ""


KSM = 'job="kube-state-metrics"'
NODE = 'job="node-exporter"'
FS = 'job="node-exporter", fstype!="", mountpoint!=""'

RULES: tuple[Rule, ...] = (
    Rule(
        "KubePodCrashLooping",
        f'max_over_time(kube_pod_container_status_waiting_reason{{reason="CrashLoopBackOff", {KSM}}}[2m]) >= 1',
        60.0,
        "warning",
        'Pod {{ $labels.namespace }}/{{ $labels.pod }} ({{ $labels.container }}) is in waiting state (reason: "CrashLoopBackOff").',
    ),
    Rule(
        "KubePodNotReady",
        "sum by (namespace, pod) ("
        f'max by (namespace, pod) (kube_pod_status_phase{{{KSM}, phase=~"Pending|Unknown|Failed"}}) '
        "* on (namespace, pod) group_left (owner_kind) "
        f'topk by (namespace, pod) (1, max by (namespace, pod, owner_kind) (kube_pod_owner{{owner_kind!="Job"}}))'
        ") > 0",
        120.0,
        "warning",
        "Pod {{ $labels.namespace }}/{{ $labels.pod }} has been in a non-ready state for longer than 2 minutes.",
        precondition='kube_pod_status_phase{job="kube-state-metrics", phase=~"Pending|Unknown|Failed"} > 0',
    ),
    Rule(
        "KubeDeploymentReplicasMismatch",
        f"(kube_deployment_spec_replicas{{{KSM}}} > kube_deployment_status_replicas_available{{{KSM}}}) "
        f"and (changes(kube_deployment_status_replicas_updated{{{KSM}}}[3m]) == 0)",
        120.0,
        "warning",
        "Deployment {{ $labels.namespace }}/{{ $labels.deployment }} has not matched the expected number of replicas for longer than 2 minutes.",
        precondition='kube_deployment_spec_replicas{job="kube-state-metrics"} > kube_deployment_status_replicas_available{job="kube-state-metrics"}',
    ),
    Rule(
        "KubeDeploymentRolloutStuck",
        f'kube_deployment_status_condition{{condition="Progressing", status="false", {KSM}}} != 0',
        120.0,
        "warning",
        "Rollout of deployment {{ $labels.namespace }}/{{ $labels.deployment }} is not progressing for longer than 2 minutes.",
    ),
    Rule(
        "KubeStatefulSetReplicasMismatch",
        f"(kube_statefulset_status_replicas_ready{{{KSM}}} != kube_statefulset_replicas{{{KSM}}}) "
        f"and (changes(kube_statefulset_status_replicas_updated{{{KSM}}}[3m]) == 0)",
        120.0,
        "warning",
        "StatefulSet {{ $labels.namespace }}/{{ $labels.statefulset }} has not matched the expected number of replicas for longer than 2 minutes.",
        precondition='kube_statefulset_status_replicas_ready{job="kube-state-metrics"} != kube_statefulset_replicas{job="kube-state-metrics"}',
    ),
    Rule(
        "KubeContainerWaiting",
        f"sum by (namespace, pod, container) (kube_pod_container_status_waiting_reason{{{KSM}}}) > 0",
        180.0,
        "warning",
        "pod/{{ $labels.pod }} in namespace {{ $labels.namespace }} on container {{ $labels.container }} has been in waiting state for longer than 3 minutes.",
    ),
    Rule(
        "KubeNodeNotReady",
        f'kube_node_status_condition{{{KSM}, condition="Ready", status="true"}} == 0',
        120.0,
        "warning",
        "{{ $labels.node }} has been unready for more than 2 minutes.",
    ),
    Rule(
        "KubeNodeUnreachable",
        f'(kube_node_spec_taint{{{KSM}, key="node.kubernetes.io/unreachable", effect="NoSchedule"}} '
        f'unless ignoring (key, value) kube_node_spec_taint{{{KSM}, key=~"ToBeDeletedByClusterAutoscaler|cloud.google.com/impending-node-termination|aws-node-termination-handler/spot-itn"}}) == 1',
        120.0,
        "warning",
        "{{ $labels.node }} is unreachable and some workloads may be rescheduled.",
    ),
    Rule(
        "TargetDown",
        "100 * (count by (job, namespace, service) (up == 0) / count by (job, namespace, service) (up)) > 10",
        120.0,
        "warning",
        "{{ printf \"%.4g\" $value }}% of the {{ $labels.job }}/{{ $labels.service }} targets in {{ $labels.namespace }} namespace are down.",
        precondition='up == 0',
    ),
    Rule(
        "NodeFilesystemSpaceFillingUp",
        f"(node_filesystem_avail_bytes{{{FS}}} / node_filesystem_size_bytes{{{FS}}} * 100 < 15 "
        f"and predict_linear(node_filesystem_avail_bytes{{{FS}}}[1h], 4 * 60 * 60) < 0 "
        f"and node_filesystem_readonly{{{FS}}} == 0)",
        300.0,
        "warning",
        "Filesystem on {{ $labels.device }}, mounted on {{ $labels.mountpoint }}, at {{ $labels.instance }} has only {{ printf \"%.2f\" $value }}% available space left and is filling up.",
        precondition='node_filesystem_avail_bytes{job="node-exporter", fstype!="", mountpoint!=""} / node_filesystem_size_bytes{job="node-exporter", fstype!="", mountpoint!=""} * 100 < 15',
    ),
    Rule(
        "NodeFilesystemAlmostOutOfSpace",
        f"(node_filesystem_avail_bytes{{{FS}}} / node_filesystem_size_bytes{{{FS}}} * 100 < 5 and node_filesystem_readonly{{{FS}}} == 0)",
        120.0,
        "warning",
        "Filesystem on {{ $labels.device }}, mounted on {{ $labels.mountpoint }}, at {{ $labels.instance }} has only {{ printf \"%.2f\" $value }}% available space left.",
    ),
    Rule(
        "NodeFilesystemFilesFillingUp",
        f"(node_filesystem_files_free{{{FS}}} / node_filesystem_files{{{FS}}} * 100 < 40 "
        f"and predict_linear(node_filesystem_files_free{{{FS}}}[1h], 4 * 60 * 60) < 0 "
        f"and node_filesystem_readonly{{{FS}}} == 0)",
        300.0,
        "warning",
        "Filesystem on {{ $labels.device }}, mounted on {{ $labels.mountpoint }}, at {{ $labels.instance }} has only {{ printf \"%.2f\" $value }}% available inodes left and is filling up.",
        precondition='node_filesystem_files_free{job="node-exporter", fstype!="", mountpoint!=""} / node_filesystem_files{job="node-exporter", fstype!="", mountpoint!=""} * 100 < 40',
    ),
    Rule(
        "NodeFilesystemAlmostOutOfFiles",
        f"(node_filesystem_files_free{{{FS}}} / node_filesystem_files{{{FS}}} * 100 < 5 and node_filesystem_readonly{{{FS}}} == 0)",
        120.0,
        "warning",
        "Filesystem on {{ $labels.device }}, mounted on {{ $labels.mountpoint }}, at {{ $labels.instance }} has only {{ printf \"%.2f\" $value }}% available inodes left.",
    ),
    Rule(
        "NodeClockSkewDetected",
        f"(node_timex_offset_seconds{{{NODE}}} > 0.05 and deriv(node_timex_offset_seconds{{{NODE}}}[5m]) >= 0) "
        f"or (node_timex_offset_seconds{{{NODE}}} < -0.05 and deriv(node_timex_offset_seconds{{{NODE}}}[5m]) <= 0)",
        120.0,
        "warning",
        "Clock at {{ $labels.instance }} is out of sync by more than 0.05s. Ensure NTP is configured correctly on this host.",
        precondition='abs(node_timex_offset_seconds{job="node-exporter"}) > 0.05',
    ),
    Rule(
        "NodeHighNumberConntrackEntriesUsed",
        f"(node_nf_conntrack_entries{{{NODE}}} / node_nf_conntrack_entries_limit) > 0.75",
        0.0,
        "warning",
        "{{ $labels.instance }} {{ $value | humanizePercentage }} of conntrack entries are used.",
    ),
    Rule(
        "NodeDiskIOSaturation",
        f'rate(node_disk_io_time_weighted_seconds_total{{{NODE}, device!=""}}[5m]) > 10',
        60.0,
        "warning",
        "Disk IO queue (aqu-sq) is high on {{ $labels.device }} at {{ $labels.instance }}, has been above 10 for the last minute, is currently at {{ printf \"%.2f\" $value }}.",
    ),
    Rule(
        "CPUThrottlingHigh",
        'sum without (id, metrics_path, name, image, endpoint, job, node) (increase(container_cpu_cfs_throttled_periods_total{container!=""}[5m])) '
        "/ on (namespace, pod, container, instance) group_left "
        'sum without (id, metrics_path, name, image, endpoint, job, node) (increase(container_cpu_cfs_periods_total{container!=""}[5m])) > (25 / 100)',
        300.0,
        "info",
        "{{ $value | humanizePercentage }} throttling of CPU in namespace {{ $labels.namespace }} for container {{ $labels.container }} in pod {{ $labels.pod }}.",
        ("container_cpu_cfs_throttled_periods_total",),
        precondition='container_cpu_cfs_throttled_periods_total{container!=""} > 0',
    ),
    Rule(
        "ServiceHighErrorRate",
        '(sum by (namespace, service) (rate(grpc_server_handled_total{grpc_code!="OK"}[1m])) '
        "/ sum by (namespace, service) (rate(grpc_server_handled_total[1m])) > 0.05) "
        'or (sum by (namespace, service) (rate(http_requests_total{code=~"5.."}[1m])) '
        "/ sum by (namespace, service) (rate(http_requests_total[1m])) > 0.05)",
        60.0,
        "critical",
        "{{ $value | humanizePercentage }} of requests to {{ $labels.namespace }}/{{ $labels.service }} are failing.",
        ('grpc_server_handled_total{grpc_code!="OK"}', 'http_requests_total{code=~"5.."}'),
    ),
    Rule(
        "ServiceHighLatency",
        "histogram_quantile(0.99, sum by (namespace, service, le) (rate(grpc_server_handling_seconds_bucket[2m]))) > 1 "
        "or histogram_quantile(0.99, sum by (namespace, service, le) (rate(http_request_duration_seconds_bucket[2m]))) > 1",
        120.0,
        "warning",
        "99th percentile latency of {{ $labels.namespace }}/{{ $labels.service }} is {{ printf \"%.2f\" $value }}s.",
        precondition='(grpc_server_handling_seconds_bucket{le="+Inf"} - ignoring (le) grpc_server_handling_seconds_bucket{le="1"} > 0) or (http_request_duration_seconds_bucket{le="+Inf"} - ignoring (le) http_request_duration_seconds_bucket{le="1"} > 0)',
    ),
    Rule(
        "LoadgenHighErrorRate",
        'sum by (namespace) (rate(loadgen_requests_total{status!="200"}[1m])) / sum by (namespace) (rate(loadgen_requests_total[1m])) > 0.05',
        60.0,
        "critical",
        "The load generator sees {{ $value | humanizePercentage }} of its requests to {{ $labels.namespace }} fail.",
        ('loadgen_requests_total{status!="200"}',),
    ),
    Rule(
        "LoadgenHighLatency",
        "histogram_quantile(0.99, sum by (namespace, le) (rate(loadgen_request_duration_seconds_bucket[2m]))) > 1",
        120.0,
        "warning",
        "99th percentile latency the load generator sees from {{ $labels.namespace }} is {{ printf \"%.2f\" $value }}s.",
        precondition='loadgen_request_duration_seconds_bucket{le="+Inf"} - ignoring (le) loadgen_request_duration_seconds_bucket{le="1"} > 0',
    ),
)


@dataclass(frozen=True)
class Alert:
    name: str
    severity: str
    labels: tuple[tuple[str, str], ...]
    summary: str
    active_since: float
    firing: bool

    @property
    def state(self) -> str:
        return "firing" if self.firing else "pending"

    def line(self) -> str:
        labels = " ".join(f"{k}={v}" for k, v in self.labels)
        return f"[{self.state}] {self.name} severity={self.severity} {labels} - {self.summary}"


# ---------------------------------------------------------------------- templates
_TEMPLATE = re.compile(r"\{\{\s*(.*?)\s*\}\}")


def _humanize(v: float) -> str:
    if v == 0 or not math.isfinite(v):
        return f"{v:.4g}"
    prefixes = ((1e24, "Y"), (1e21, "Z"), (1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))
    if abs(v) >= 1:
        for scale, p in prefixes:
            if abs(v) >= scale:
                return f"{v / scale:.4g}{p}"
        return f"{v:.4g}"
    for scale, p in ((1e-3, "m"), (1e-6, "u"), (1e-9, "n"), (1e-12, "p"), (1e-15, "f"), (1e-18, "a"), (1e-21, "z"), (1e-24, "y")):
        if abs(v) >= scale:
            return f"{v / scale:.4g}{p}"
    return f"{v:.4g}"


def render_template(text: str, labels: dict[str, str], value: float) -> str:
    """The subset of Prometheus' alert templating the rules use."""

    def sub(m: re.Match) -> str:
        body = m.group(1)
        if body.startswith("$labels."):
            return labels.get(body[len("$labels.") :], "")
        if body == "$value":
            return f"{value:g}" if math.isfinite(value) else str(value)
        if body == "$value | humanizePercentage":
            return f"{value * 100:.4g}%"
        if body == "$value | humanize":
            return _humanize(value)
        pm = re.fullmatch(r'printf\s+"([^"]*)"\s+\$value', body)
        if pm:
            fmt = pm.group(1)
            try:
                return fmt % value
            except (TypeError, ValueError):
                return str(value)
        return m.group(0)

    return _TEMPLATE.sub(sub, text)


# ---------------------------------------------------------------------- evaluation
def _inputs(node: A.Node) -> Iterator[tuple[A.Selector, float]]:
    """Every selector of an expression with how far back it reads (range + offset)."""
    if isinstance(node, A.Selector):
        yield node, LOOKBACK_S + max(node.offset, 0.0)
    elif isinstance(node, A.MatrixSel):
        yield node.selector, node.range_s + max(node.selector.offset, 0.0)
    elif isinstance(node, A.Subquery):
        for sel, back in _inputs(node.expr):
            yield sel, back + node.range_s + max(node.offset, 0.0)
    elif isinstance(node, (A.Paren, A.Neg)):
        yield from _inputs(node.expr)
    elif isinstance(node, A.Call):
        for a in node.args:
            yield from _inputs(a)
    elif isinstance(node, A.Aggregate):
        yield from _inputs(node.expr)
        if node.param is not None:
            yield from _inputs(node.param)
    elif isinstance(node, A.Binary):
        yield from _inputs(node.lhs)
        yield from _inputs(node.rhs)


class _Compiled:
    """A rule's compiled expression, its inputs and its last result (not pickled)."""

    def __init__(self, rule: Rule) -> None:
        self.node = compile_expr(rule.expr)
        self.guards = [g for expr in rule.guards for g, _ in _inputs(compile_expr(expr))]
        inputs = list(_inputs(self.node))
        self.selectors = [s for s, _ in inputs]
        self.back_s = max((b for _, b in inputs), default=LOOKBACK_S)
        self.last_row = -1
        self.last_cols: tuple[int, int] = (0, 0)
        self.last_result: list[tuple[tuple[tuple[str, str], ...], float]] = []
        #: (TSDB width, columns, identity) of the selectors and of the guards: a selection
        #: only changes when series are added, so the skip checks below stay cheap
        self.selected: tuple[int, np.ndarray, tuple[int, int]] | None = None
        self.guarded: tuple[int, np.ndarray, tuple[int, int]] | None = None


_PRECONDITIONS: dict[Rule, Rule] = {}


def _precondition_rule(rule: Rule) -> Rule:
    pre = _PRECONDITIONS.get(rule)
    if pre is None:
        pre = _PRECONDITIONS[rule] = Rule(rule.name + ":precondition", rule.precondition, 0.0, "", "")
    return pre


class AlertState:
    """Pending/firing bookkeeping across evaluations (the ``for:`` clause), one per World.

    Rules are evaluated every ``interval_s`` of cluster time, right after the
    scrape that reaches it; states change only at evaluations, as in Prometheus.
    """

    def __init__(self, rules: tuple[Rule, ...] = RULES, interval_s: float = EVALUATION_INTERVAL_S) -> None:
        self.rules = rules
        self.interval_s = interval_s
        #: (rule name, labels) -> (active since, description, firing)
        self.active: dict[tuple[str, tuple[tuple[str, str], ...]], tuple[float, str, bool]] = {}
        self.errors: dict[str, str] = {}
        self.next_eval = float("-inf")
        self.last_eval: float | None = None
        self._compiled: dict[str, _Compiled] = {}
        self._evaluator: Evaluator | None = None
        self._saved: dict[str, tuple] = {}
        self._selections: dict[tuple, tuple] = {}

    def __getstate__(self) -> dict:
        state = {k: getattr(self, k) for k in ("rules", "interval_s", "active", "errors", "next_eval", "last_eval")}
        # each rule's last result stays valid across a snapshot (the TSDB is restored bit for bit),
        # so a restored world does not re-evaluate every rule at its first evaluation
        state["results"] = {name: (c.last_row, c.last_cols, c.last_result) for name, c in self._compiled.items()}
        return state

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["rules"], state["interval_s"])  # type: ignore[misc]
        for k in ("active", "errors", "next_eval", "last_eval"):
            setattr(self, k, state[k])
        self._saved = state.get("results", {})

    def evaluate(self, tsdb: "TSDB", now: float, *, force: bool = False) -> None:
        """Evaluate every rule over ``tsdb`` at cluster second ``now`` if an evaluation is due."""
        if not force and now < self.next_eval - 1e-9:
            return
        self.next_eval = now + self.interval_s
        self.last_eval = now
        if self._evaluator is None or self._evaluator.tsdb is not tsdb:
            self._evaluator = Evaluator(tsdb)
            self._compiled = {}
            for rule in self.rules:
                for r in (rule, _precondition_rule(rule)) if rule.precondition else (rule,):
                    saved = self._saved.get(r.name)
                    if saved is not None:
                        try:
                            comp = self._compiled[r.name] = _Compiled(r)
                        except PromQLError:
                            continue
                        comp.last_row, comp.last_cols, comp.last_result = saved
            self._saved = {}
        seen: dict[tuple[str, tuple[tuple[str, str], ...]], tuple[float, str, bool]] = {}
        for rule in self.rules:
            for labels, value in self._results(rule, tsdb, now):
                key = (rule.name, labels)
                since = self.active[key][0] if key in self.active else now
                seen[key] = (since, render_template(rule.description, dict(labels), value), now - since >= rule.for_s)
        self.active = seen

    def _select(self, selectors: list[A.Selector]) -> tuple[np.ndarray, tuple[int, int]]:
        """The columns a rule reads and a cheap identity of that set (selections are cached arrays)."""
        assert self._evaluator is not None
        parts = [self._evaluator.select(sel) for sel in selectors]
        ident = tuple(map(id, parts))
        hit = self._selections.get(ident)
        if hit is not None and all(a is b for a, b in zip(hit[0], parts)):
            return hit[1], hit[2]
        cols = np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)
        key = (len(cols), int(cols.sum()) if len(cols) else 0)
        if len(self._selections) > 4096:
            self._selections.clear()
        self._selections[ident] = (parts, cols, key)
        return cols, key

    def _rule_columns(self, comp: _Compiled, width: int, guards: bool = False) -> tuple[np.ndarray, tuple[int, int]]:
        """:meth:`_select` of a rule's selectors (or guards), reused while the TSDB has the same series."""
        slot = comp.guarded if guards else comp.selected
        if slot is not None and slot[0] == width:
            return slot[1], slot[2]
        cols, key = self._select(comp.guards if guards else comp.selectors)
        if guards:
            comp.guarded = (width, cols, key)
        else:
            comp.selected = (width, cols, key)
        return cols, key

    def _results(self, rule: Rule, tsdb: "TSDB", now: float) -> list[tuple[tuple[tuple[str, str], ...], float]]:
        if rule.precondition:
            if not self._results(_precondition_rule(rule), tsdb, now):
                comp = self._compiled.get(rule.name)
                if comp is not None:
                    comp.last_row = -1  # not evaluated: no cached result to reuse
                return []
        comp = self._compiled.get(rule.name)
        if comp is None:
            try:
                comp = self._compiled[rule.name] = _Compiled(rule)
            except PromQLError as exc:
                self.errors[rule.name] = str(exc)
                return []
        assert self._evaluator is not None
        row = tsdb.rows - 1
        window_rows = int(math.ceil(comp.back_s / tsdb.interval_s)) + 1
        width = tsdb.width
        cols, key = self._rule_columns(comp, width)
        if comp.last_row >= 0:
            # nothing the rule can see changed since its last evaluation: same result
            if key == comp.last_cols and comp.last_row - window_rows >= tsdb.last_changed(cols):
                return comp.last_result
            # its guard series did not move within the window: still nothing to report
            if comp.guards and not comp.last_result and row - window_rows >= tsdb.last_changed(self._rule_columns(comp, width, guards=True)[0]):
                return comp.last_result
        try:
            val = self._evaluator.evaluate(comp.node, Context(np.array([now]), now, now))
        except PromQLError as exc:
            self.errors[rule.name] = str(exc)
            return []
        out: list[tuple[tuple[tuple[str, str], ...], float]] = []
        if isinstance(val, Vector):
            for i in np.flatnonzero(val.p[0]):
                labels = tuple(sorted((k, v) for k, v in val.labels[i].items() if k != "__name__"))
                out.append((labels, float(val.v[0, i])))
        out.sort()
        comp.last_row, comp.last_cols, comp.last_result = row, key, out
        return out

    def alerts(self, now: float | None = None) -> list[Alert]:
        """Pending and firing alerts as of the last evaluation, sorted by name and labels."""
        rules = {r.name: r for r in self.rules}
        return [Alert(name, rules[name].severity, labels, summary, since, firing) for (name, labels), (since, summary, firing) in sorted(self.active.items())]

    def firing(self, now: float | None = None) -> list[Alert]:
        return [a for a in self.alerts(now) if a.firing]


def alerts_of(world: "World") -> AlertState:
    """The world's alert rules and their pending/firing state."""
    return world.slot(AlertState)
