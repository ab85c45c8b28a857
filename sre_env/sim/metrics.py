"""A fixed-size ring buffer of named time series: step cost stays flat forever.

Each scrape writes one row into a preallocated float32 matrix; a series is a
column. Nothing grows per sample, and a snapshot of the world copies one
array.
"""

from __future__ import annotations

import numpy as np

__all__ = ["SeriesRing"]


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
        state = dict(self.__dict__)
        state.pop("_col_cache", None)
        return state

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
