"""The world's metrics: a Prometheus-like TSDB plus a small ring of recorded series.

``MetricsStore`` is ``world.metrics``. Its ``tsdb`` holds every exporter's
labelled series (queried with PromQL, evaluated by alert rules); its
``recorded`` ring (a :class:`SeriesRing`) holds the per-service series the
observation's metrics window reads, so building an observation never evaluates
PromQL. ``rows`` and ``window_and_mask`` keep the interface the env uses.

``SeriesRing`` is a fixed-size ring buffer of named float32 time series: each
scrape writes one row into a preallocated matrix; a series is a column; nothing
grows per sample.
"""

from __future__ import annotations

import numpy as np

from sre_env.telemetry.exporters import Scraper
from sre_env.telemetry.tsdb import TSDB
from sre_env.kube.timefmt import EPOCH

__all__ = ["SeriesRing", "MetricsStore", "RETENTION_ROWS"]

#: one hour of 15 s scrapes
RETENTION_ROWS = 240


class MetricsStore:
    """``world.metrics``: the TSDB, the recorded observation series and the exporters' state."""

    def __init__(self, interval_s: float = 15.0, capacity: int = RETENTION_ROWS) -> None:
        self.tsdb = TSDB(capacity=capacity, interval_s=interval_s, epoch=EPOCH.timestamp())
        self.recorded = SeriesRing(capacity=capacity, interval_s=interval_s)
        self.scraper = Scraper()

    @property
    def rows(self) -> int:
        """Scrapes so far (changes exactly when new samples arrived)."""
        return self.recorded.rows

    def window_and_mask(self, names: list[str], length: int) -> tuple[np.ndarray, np.ndarray]:
        return self.recorded.window_and_mask(names, length)

    def scrape(self, world) -> None:  # noqa: ANN001 - World, imported lazily to avoid a cycle
        self.scraper.scrape(world, self.tsdb, self.recorded)


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
