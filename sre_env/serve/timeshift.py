"""Simulated time shown as wall-clock time at ``sre-env serve``'s HTTP boundary.

The simulator counts seconds since a fixed epoch (:data:`sre_env.sim.kernel.clock.EPOCH`,
2026-03-02T09:00Z) so that episodes are reproducible. A user who points the real
``kubectl``, Grafana or a Prometheus client at a served incident expects a live
cluster: ``kubectl describe`` computes ages from its own clock, and dashboards ask
for "the last 15 minutes" of wall-clock time. So every API shifts the times it
writes forward by ``offset`` seconds and the times it reads back by the same amount;
the simulator and its determinism are untouched.

The rule for ``offset`` (whole seconds, so sub-second digits never change):

* speed 1: fixed when the server starts, ``wall_now - (EPOCH + sim_now)``. Ages
  and absolute stamps both stay right, and a stamp read in one request and sent
  back in a later one (``kubectl edit``/``replace``) maps back to the same second.
* any other speed (a speed-up, or 0: a frozen clock): re-anchored at every request
  so that the simulator's *now* is the wall's *now*. Ages (differences) stay right;
  absolute stamps of old events drift between requests (at speed 120 a minute of
  wall time is two simulated hours), and a stamp sent back after a re-anchor maps
  to a slightly different simulated second.
* ``--real-epoch`` (``TimeMap(enabled=False)``): offset 0, the simulator's own stamps.

What is shifted, by API (each module calls the helpers here):

* Kubernetes: RFC 3339 values of the known timestamp fields in JSON bodies, in both
  directions (:data:`KUBE_TIME_KEYS`, matched on the serialized text so stored
  objects are never copied or mutated), watch events, ``logs --timestamps``
  prefixes, ``sinceTime``.
* Prometheus: the TSDB's unix epoch for the request (``time``/``start``/``end``,
  sample timestamps, ``time()``, ``timestamp()``, ``@``), the values of the
  timestamp-valued series (``kube_pod_created``...), alerts' ``activeAt``.
* Loki: nanosecond stream timestamps and matrix times; Jaeger: span and span-log
  microseconds.
* Log *lines*: the leading timestamp an app writes (RFC 3339, Go's
  ``2006/01/02 15:04:05``, Python's ``2006-01-02 15:04:05,000``, klog's
  ``I0102 15:04:05.000000``, MongoDB's ``{"t":{"$date":...}``, zap's ``"ts":<unix>``)
  is rewritten exactly; timestamps elsewhere inside a message are left as written.

Not shifted: the output of commands run by ``kubectl exec`` (``date`` in a
container prints simulated time), timestamps inside event messages and log
lines other than the leading one, and the ``--mcp`` mode (an episode stepped by
tool calls, not real time: its ``kubectl`` and ``promql`` are the built-in
shell's and agree with each other in simulated time). Server-side table ages
(``kubectl get``) are differences against the simulated now, which trails the
wall clock by up to one simulator tick (5 s) at speed 1.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any

from sre_env.kube.timefmt import EPOCH

__all__ = [
    "EPOCH_UNIX",
    "KUBE_TIME_KEYS",
    "TIME_VALUED_METRICS",
    "TimeMap",
    "shift_json_text",
    "shift_log_line",
    "shift_log_text",
    "shift_rfc3339",
    "since_time_seconds",
    "tsdb_epoch",
    "wall_evaluator",
]

EPOCH_UNIX = EPOCH.timestamp()

#: Kubernetes fields whose values are RFC 3339 times (metadata, conditions, container
#: states, events, leases, managedFields, metrics.k8s.io, jobs, HPAs, rollout restarts)
KUBE_TIME_KEYS = (
    "creationTimestamp", "deletionTimestamp", "lastTransitionTime", "lastUpdateTime", "lastProbeTime",
    "lastHeartbeatTime", "startedAt", "finishedAt", "firstTimestamp", "lastTimestamp", "eventTime",
    "lastObservedTime", "renewTime", "acquireTime", "time", "startTime", "completionTime",
    "lastScheduleTime", "lastSuccessfulTime", "lastScaleTime", "timestamp", "kubectl.kubernetes.io/restartedAt",
)
#: series whose *values* are unix times (kube-state-metrics): shifted like timestamps
TIME_VALUED_METRICS = frozenset({"kube_pod_created", "kube_pod_start_time", "kube_pod_deletion_timestamp", "kube_deployment_created"})

_STAMP = r"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})"


def _key_pattern(keys: tuple[str, ...]) -> re.Pattern[str]:
    # an unescaped quote before the key: a JSON document embedded in a string value
    # (last-applied-configuration) is left as it is
    names = "|".join(re.escape(k) for k in keys)
    return re.compile(rf'(?<!\\)"({names})"(\s*:\s*)"{_STAMP}"')


_KUBE_KEYS = _key_pattern(KUBE_TIME_KEYS)


@lru_cache(maxsize=4096)
def _shift_stamp(core: str, tz: str, offset: int) -> str:
    """``core`` (``YYYY-MM-DDTHH:MM:SS`` at UTC offset ``tz``) moved by ``offset`` s, in UTC (``Z``)."""
    dt = datetime.strptime(core, "%Y-%m-%dT%H:%M:%S")
    if tz != "Z":
        sign = 1 if tz[0] == "+" else -1
        dt -= sign * timedelta(hours=int(tz[1:3]), minutes=int(tz[4:6]))
    return (dt + timedelta(seconds=offset)).strftime("%Y-%m-%dT%H:%M:%S")


def shift_rfc3339(stamp: str, offset: int) -> str:
    """One RFC 3339 time moved by ``offset`` seconds (fraction kept; anything else returned as is)."""
    m = re.fullmatch(_STAMP, stamp)
    if m is None or not offset:
        return stamp
    return f"{_shift_stamp(m.group(1), m.group(3), offset)}{m.group(2) or ''}Z"


def shift_json_text(text: str, offset: int, pattern: re.Pattern[str] = _KUBE_KEYS) -> str:
    """The timestamp fields of a serialized JSON document (or a stream of them) moved by ``offset``.

    Matching the serialized text instead of walking the objects: the API serves the
    store's own objects, which must not be copied or changed, and a regex over the
    text is cheaper than a copy.
    """
    if not offset or '"' not in text:
        return text

    def sub(m: re.Match[str]) -> str:
        return f'"{m.group(1)}"{m.group(2)}"{_shift_stamp(m.group(3), m.group(5), offset)}{m.group(4) or ""}Z"'

    return pattern.sub(sub, text)


# ---------------------------------------------------------------- log lines
#: an app's own leading timestamp: RFC 3339 / Python (``-`` date, ``T`` or space), Go's log (``/`` date)
_LEAD_DATE = re.compile(r'(\{"t":\{"\$date":")?(\d{4})([-/])(\d{2})\3(\d{2})([T ])(\d{2}):(\d{2}):(\d{2})')
_LEAD_KLOG = re.compile(r"([IWEF])(\d{2})(\d{2}) (\d{2}):(\d{2}):(\d{2})\.")
_ZAP_TS = re.compile(r'"ts":(\d{10})(?=[.,}])')


def _moved(y: int, mo: int, d: int, h: int, mi: int, s: int, offset: int) -> datetime | None:
    try:
        return datetime(y, mo, d, h, mi, s) + timedelta(seconds=offset)
    except ValueError:
        return None


def shift_log_line(line: str, offset: int) -> str:
    """``line`` with the timestamp its app wrote at its start moved by ``offset`` (exactly, or not at all)."""
    if not offset or not line:
        return line
    c = line[0]
    if c.isdigit() or c == "{":
        m = _LEAD_DATE.match(line)
        if m is not None:
            dt = _moved(int(m.group(2)), int(m.group(4)), int(m.group(5)), int(m.group(7)), int(m.group(8)), int(m.group(9)), offset)
            if dt is None:
                return line
            sep = m.group(3)
            text = dt.strftime(f"%Y{sep}%m{sep}%d{m.group(6)}%H:%M:%S")
            return (m.group(1) or "") + text + line[m.end() :]
        if c == "{":
            z = _ZAP_TS.search(line, 0, 80)
            if z is not None:
                return f"{line[: z.start(1)]}{int(z.group(1)) + offset}{line[z.end(1) :]}"
        return line
    if c in "IWEF":
        m = _LEAD_KLOG.match(line)
        if m is not None:
            dt = _moved(EPOCH.year, int(m.group(2)), int(m.group(3)), int(m.group(4)), int(m.group(5)), int(m.group(6)), offset)
            if dt is not None:
                return f"{c}{dt:%m%d %H:%M:%S}." + line[m.end() :]
    return line


def shift_log_text(text: str, offset: int, *, prefixed: bool = False) -> str:
    """Lines of a container log moved by ``offset``; ``prefixed``: each starts with the kubelet's RFC 3339 stamp."""
    if not offset or not text:
        return text
    out = []
    for line in text.split("\n"):
        if prefixed and line:
            stamp, sp, rest = line.partition(" ")
            out.append(shift_rfc3339(stamp, offset) + sp + shift_log_line(rest, offset))
        else:
            out.append(shift_log_line(line, offset))
    return "\n".join(out)


# ---------------------------------------------------------------- prometheus
@contextmanager
def tsdb_epoch(tsdb: Any, offset: int) -> Iterator[None]:
    """For one request, the TSDB's unix epoch moved by ``offset``: PromQL reads and writes wall-clock times.

    The engine converts stored (simulated) seconds to unix times through
    ``tsdb.epoch`` alone, so moving it shifts ``time``/``start``/``end``,
    result timestamps, ``time()``, ``timestamp()`` and ``@`` together. Callers hold
    the server's lock, so nothing else sees the moved epoch.
    """
    saved = tsdb.epoch
    tsdb.epoch = saved + offset
    try:
        yield
    finally:
        tsdb.epoch = saved


def wall_evaluator(tsdb: Any, offset: int) -> Any:
    """A PromQL evaluator whose timestamp-valued series (:data:`TIME_VALUED_METRICS`) read as wall-clock times.

    With the epoch moved (:func:`tsdb_epoch`), ``time() - kube_pod_created`` is a
    pod's age only if the creation time moves too. None (the default evaluator)
    when there is nothing to move.
    """
    if not offset:
        return None
    from sre_env.telemetry.promql_engine import Evaluator

    def moved(labels: list[dict[str, str]]) -> list[int]:
        return [i for i, lab in enumerate(labels) if lab.get("__name__") in TIME_VALUED_METRICS]

    class WallEvaluator(Evaluator):
        def vector_selector(self, sel: Any, ctx: Any) -> Any:
            vec = super().vector_selector(sel, ctx)
            idx = moved(vec.labels)
            if idx:
                vec = replace(vec, v=vec.v.copy())
                vec.v[:, idx] += offset
            return vec

        def matrix_selector(self, node: Any, ctx: Any) -> Any:
            mat = super().matrix_selector(node, ctx)
            idx = moved(mat.labels)
            if idx:
                mat = replace(mat, v=mat.v.copy(), _cache={})
                mat.v[:, idx] += offset
            return mat

    return WallEvaluator(tsdb)


# ---------------------------------------------------------------- the map
@dataclass
class TimeMap:
    """Simulated seconds <-> unix seconds for one served incident (see the module doc for the rule).

    ``sim_now`` reads the simulated clock; ``wall`` the wall clock (injectable for tests).
    """

    sim_now: Callable[[], float]
    speed: float = 1.0
    enabled: bool = True
    wall: Callable[[], float] = field(default=time.time)
    _fixed: int | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        if self.enabled and self.speed == 1.0:
            self._fixed = self._anchor()

    def _anchor(self) -> int:
        return round(self.wall() - EPOCH_UNIX - self.sim_now())

    def offset(self) -> int:
        """Seconds to add to a simulated unix time (``EPOCH + t``) to get the wall time shown; call once per request."""
        if not self.enabled:
            return 0
        return self._fixed if self._fixed is not None else self._anchor()

    def to_unix(self, t: float, offset: int | None = None) -> float:
        """Simulated second ``t`` as the unix time the APIs show."""
        return EPOCH_UNIX + t + (self.offset() if offset is None else offset)

    def to_sim(self, unix: float, offset: int | None = None) -> float:
        """A unix time a client sent, as a simulated second."""
        return unix - EPOCH_UNIX - (self.offset() if offset is None else offset)

    @staticmethod
    def off() -> TimeMap:
        """No shift (``--real-epoch``; handlers called without a server)."""
        return TimeMap(lambda: 0.0, enabled=False)


def since_time_seconds(since_time: str, sim_now: float, offset: int) -> float:
    """``sinceTime`` (RFC 3339, wall clock) as the ``sinceSeconds`` it means at ``sim_now``."""
    dt = datetime.fromisoformat(since_time)
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    return max(sim_now - (dt.timestamp() - EPOCH_UNIX - offset), 0.0)
