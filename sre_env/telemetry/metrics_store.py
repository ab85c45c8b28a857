"""The world's metrics: a Prometheus-like TSDB plus a small ring of recorded series.

``MetricsStore`` is a slot of the world (:func:`metrics_of`). Its ``tsdb`` holds every exporter's
labelled series (queried with PromQL, evaluated by alert rules); its
``recorded`` ring (a :class:`SeriesRing`) holds the per-service series the
observation's metrics window reads, so building an observation never evaluates
PromQL. ``rows`` and ``window_and_mask`` keep the interface the env uses.

``SeriesRing`` is a fixed-size ring buffer of named float32 time series: each
scrape writes one row into a preallocated matrix; a series is a column; nothing
grows per sample.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from sre_env.kube.timefmt import EPOCH
from sre_env.sim.kernel.clock import SCRAPE_S
from sre_env.telemetry.exporters import Scraper
from sre_env.telemetry.tsdb import TSDB

if TYPE_CHECKING:
    from sre_env.sim.kernel.world import World

__all__ = ["SeriesRing", "MetricsStore", "RETENTION_ROWS", "metrics_of", "window_and_mask", "service_sample", "client_sample", "client_error_ratio", "client_p99_ms"]

#: one hour of scrapes
RETENTION_ROWS = int(3600 // SCRAPE_S)


class MetricsStore:
    """A world's metrics: the TSDB, the recorded observation series and the exporters' state."""

    def __init__(self, interval_s: float = SCRAPE_S, capacity: int = RETENTION_ROWS) -> None:
        self.tsdb = TSDB(capacity=capacity, interval_s=interval_s, epoch=EPOCH.timestamp())
        self.recorded = SeriesRing(capacity=capacity, interval_s=interval_s)
        self.scraper = Scraper()

    @property
    def rows(self) -> int:
        """Scrapes so far (changes exactly when new samples arrived)."""
        return self.recorded.rows

    def window_and_mask(self, names: list[str], length: int) -> tuple[np.ndarray, np.ndarray]:
        return self.recorded.window_and_mask(names, length)

    def scrape(self, world: "World") -> None:
        self.scraper.scrape(world, self.tsdb, self.recorded)


def metrics_of(world: "World") -> MetricsStore:
    """The world's metrics store (made at its first scrape)."""
    return world.slot(MetricsStore)


class SeriesRing:
    def __init__(self, capacity: int = 240, width: int = 256, interval_s: float = 15.0) -> None:
        self.capacity = capacity
        self.width = width
        self.interval_s = interval_s
        self.data = np.full((capacity, width), np.nan, dtype=np.float32)
        self.times = np.full(capacity, np.nan, dtype=np.float64)
        self.index: dict[str, int] = {}
        self.rows = 0  # rows written in total

    def column(self, name: str) -> int:
        col = self.index.get(name)
        if col is None:
            if len(self.index) >= self.width:
                raise OverflowError(f"metric ring is full ({self.width} series); raise its width")
            col = self.index[name] = len(self.index)
        return col

    def write(self, t: float, values: dict[str, float]) -> None:
        row = self.rows % self.capacity
        self.data[row, :] = np.nan
        self.times[row] = t
        index = self.index
        data_row = self.data[row]
        for name, v in values.items():
            c = index.get(name)
            data_row[c if c is not None else self.column(name)] = v
        self.rows += 1

    def window(self, names: list[str], length: int) -> np.ndarray:
        """The last ``length`` samples of ``names`` (oldest first), NaN-free (missing -> 0)."""
        return self.window_and_mask(names, length)[0]

    def window_and_mask(self, names: list[str], length: int) -> tuple[np.ndarray, np.ndarray]:
        """(window, mask): the mask marks the series that exist in the store."""
        cols = self._columns(names)
        present = cols >= 0
        out = np.zeros((length, len(names)), dtype=np.float32)
        n = min(self.rows, length, self.capacity)
        if n:
            rows = np.arange(self.rows - n, self.rows) % self.capacity
            block = self.data[rows[:, None], cols[present][None, :]]
            block[block != block] = 0.0
            out[length - n :, present] = block
        return out, present.astype(np.int8)

    def _columns(self, names: list[str]) -> np.ndarray:
        cache = getattr(self, "_col_cache", None)
        if cache is not None and cache[0] is names and cache[1] == len(self.index):
            return cache[2]
        cols = np.fromiter((self.index.get(name, -1) for name in names), dtype=np.int64, count=len(names))
        self._col_cache = (names, len(self.index), cols)
        return cols

    def __getstate__(self) -> dict:
        # only the rows written and the columns in use travel (a snapshot stays small)
        state = dict(self.__dict__)
        state.pop("_col_cache", None)
        n = min(self.rows, self.capacity)
        state["data"] = self.data[:n, : len(self.index)].copy() if self.rows <= self.capacity else self.data[:, : len(self.index)].copy()
        state["times"] = self.times[:n].copy() if self.rows <= self.capacity else self.times.copy()
        return state

    def __setstate__(self, state: dict) -> None:
        data, times = state.pop("data"), state.pop("times")
        self.__dict__.update(state)
        self.data = np.full((self.capacity, self.width), np.nan, dtype=np.float32)
        self.times = np.full(self.capacity, np.nan, dtype=np.float64)
        self.data[: data.shape[0], : data.shape[1]] = data
        self.times[: len(times)] = times

    def series(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """(times, values) of one series, oldest first."""
        col = self.index.get(name)
        n = min(self.rows, self.capacity)
        rows = [(self.rows - n + i) % self.capacity for i in range(n)]
        if col is None:
            return np.array([]), np.array([])
        return self.times[rows], self.data[rows, col]

    def latest(self, name: str) -> float | None:
        col = self.index.get(name)
        if col is None or self.rows == 0:
            return None
        v = self.data[(self.rows - 1) % self.capacity, col]
        return None if np.isnan(v) else float(v)


# ----------------------------------------------------------------------- readers
def window_and_mask(world: "World", names: list[str], length: int) -> tuple[np.ndarray, np.ndarray]:
    """The last ``length`` scrapes of ``names`` (float32 [length, n], oldest first, missing -> 0) and the presence mask (int8 [n])."""
    return metrics_of(world).recorded.window_and_mask(names, length)


def service_sample(world: "World", namespace: str, service: str, t: float) -> tuple[float, float, float] | None:
    """(requests/s, error ratio, p99 latency ms) of a service at the last scrape at or before ``t``.

    The stable accessor for lazily generated telemetry (logs, traces): whatever the
    metric storage becomes, this keeps answering.
    """
    return _sample_at(world, t, (f"rps{{namespace={namespace},service={service}}}", f"error_ratio{{namespace={namespace},service={service}}}", f"latency_p99_ms{{namespace={namespace},service={service}}}"))


def client_sample(world: "World", namespace: str, t: float) -> tuple[float, float, float] | None:
    """(offered requests/s, success ratio, p99 latency ms) seen by the load generator at ``t``."""
    return _sample_at(world, t, (f"client_rps{{namespace={namespace}}}", f"client_success_ratio{{namespace={namespace}}}", f"client_latency_p99_ms{{namespace={namespace}}}"))


def _sample_at(world: "World", t: float, names: tuple[str, str, str]) -> tuple[float, float, float] | None:
    ring = metrics_of(world).recorded
    n = min(ring.rows, ring.capacity)
    if n == 0:
        return None
    for back in range(n):
        row = (ring.rows - 1 - back) % ring.capacity
        if ring.times[row] <= t:
            out = []
            for name in names:
                col = ring.index.get(name)
                v = float(ring.data[row, col]) if col is not None else float("nan")
                out.append(0.0 if v != v else v)
            return (out[0], out[1], out[2])
    return None


def client_error_ratio(world: "World", app_name: str, window_s: float = 60.0) -> float | None:
    hist = world.client_history.get(app_name)
    if not hist:
        return None
    now = world.clock.now
    vals = [s for t, s, _ in hist if t > now - window_s]
    return 1.0 - sum(vals) / len(vals) if vals else None


def client_p99_ms(world: "World", app_name: str, window_s: float = 60.0) -> float | None:
    hist = world.client_history.get(app_name)
    if not hist:
        return None
    now = world.clock.now
    vals = [lat for t, _, lat in hist if t > now - window_s]
    return max(vals) * 2.2 if vals else None
