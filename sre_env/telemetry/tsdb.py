"""An in-memory time-series database shaped like Prometheus' head block, for one World.

Why this shape: every series is scraped on the same 15 s cadence, so samples share
row timestamps. A series is a column of a float64 matrix whose rows form a ring of
``capacity`` scrapes (1 h by default); rows and columns are allocated in chunks, so
appending a scrape is one row fill plus a few vectorised assignments, and nothing
per sample is a Python object. Absent samples are NaN; a series that was present in
the previous scrape and is missing now gets Prometheus' *stale marker* (a NaN with a
distinct bit pattern), so instant queries stop returning it at once instead of for
the 5 minute lookback, exactly as Prometheus' scrape loop does.

A series is identified by a canonical string key (metric name plus sorted label
pairs joined with control characters): hashing is cached by Python, the pickled
form is one joined string, and label dicts are only parsed when a query needs them.
Pickling keeps only the rows and columns in use.
"""

from __future__ import annotations

import sys
from bisect import bisect_right
from typing import Any, Iterable, Mapping

import numpy as np

from sre_env.kube.regexp import compile_re2

__all__ = ["TSDB", "STALE_NAN", "is_stale", "series_key", "parse_key", "Matcher"]

#: Prometheus' staleness marker: a NaN with this exact bit pattern (value.StaleNaN)
STALE_BITS = np.uint64(0x7FF0000000000002)
STALE_NAN = np.array([STALE_BITS], dtype=np.uint64).view(np.float64)[0]

_PAIR = "\x1f"  # between label pairs
_KV = "\x1d"  # between a label name and its value
_SERIES = "\x1e"  # between series in the pickled key blob

#: (label name, op, value) with op one of "=", "!=", "=~", "!~"
Matcher = tuple[str, str, str]


def is_stale(values: np.ndarray) -> np.ndarray:
    """Boolean mask of the stale markers in a float64 array."""
    return np.ascontiguousarray(values).view(np.uint64) == STALE_BITS


def series_key(name: str, labels: Mapping[str, str] | Iterable[tuple[str, str]] = ()) -> str:
    """The canonical key of a series: name, then label pairs sorted by name; empty values dropped."""
    items = labels.items() if isinstance(labels, Mapping) else labels
    parts = [name]
    for k, v in sorted(items):
        if v != "" and k != "__name__":
            parts.append(f"{k}{_KV}{v}")
    return _PAIR.join(parts)


def parse_key(key: str) -> dict[str, str]:
    """Labels of a series key, ``__name__`` included."""
    parts = key.split(_PAIR)
    out = {"__name__": parts[0]}
    for p in parts[1:]:
        k, _, v = p.partition(_KV)
        out[k] = v
    return out


class TSDB:
    """Labelled float64 series on a shared ring of scrape rows."""

    COL_CHUNK = 256
    ROW_CHUNK = 20

    def __init__(self, capacity: int = 240, interval_s: float = 15.0, epoch: float = 0.0) -> None:
        self.capacity = int(capacity)
        self.interval_s = float(interval_s)
        #: unix time of stored time 0 (the World stores simulated seconds)
        self.epoch = float(epoch)
        self.rows = 0  # rows appended in total
        self.keys: list[str] = []
        self._alloc(min(self.ROW_CHUNK, self.capacity), self.COL_CHUNK)
        self._present = np.zeros(self.COL_CHUNK, dtype=bool)
        self._reset_indexes()

    # ------------------------------------------------------------------ storage
    def _alloc(self, rows: int, cols: int) -> None:
        self._data = np.full((rows, cols), np.nan, dtype=np.float64)
        self._times = np.full(rows, np.nan, dtype=np.float64)
        #: logical row at which each column's value last differed from the row before
        self._changed = np.zeros(cols, dtype=np.int64)
        #: logical row of each column's newest real sample, and of its newest stale marker (-1: none)
        self._seen = np.full(cols, -1, dtype=np.int64)
        self._stale = np.full(cols, -1, dtype=np.int64)

    def _reset_indexes(self) -> None:
        self._index: dict[str, int] | None = None
        self._by_name: dict[str, list[int]] | None = None
        #: parsed labels per column, filled lazily (None: not parsed yet)
        self._labels: list[dict[str, str] | None] = []
        self._select_cache: dict[tuple, tuple[int, list[int], np.ndarray]] = {}
        self._chrono: tuple[int, np.ndarray, np.ndarray, list[float]] | None = None

    @property
    def width(self) -> int:
        """Number of series ever stored."""
        return len(self.keys)

    def _grow_cols(self, need: int) -> None:
        cols = self._data.shape[1]
        if need <= cols:
            return
        # grow by half at least, so a scrape that adds series one target at a time copies the matrix
        # a logarithmic number of times, not once per target
        new = ((max(need, cols + cols // 2) + self.COL_CHUNK - 1) // self.COL_CHUNK) * self.COL_CHUNK
        data = np.full((self._data.shape[0], new), np.nan, dtype=np.float64)
        data[:, :cols] = self._data
        self._data = data
        present = np.zeros(new, dtype=bool)
        present[:cols] = self._present
        self._present = present
        changed = np.zeros(new, dtype=np.int64)
        changed[:cols] = self._changed
        self._changed = changed
        for attr in ("_seen", "_stale"):
            arr = np.full(new, -1, dtype=np.int64)
            arr[:cols] = getattr(self, attr)
            setattr(self, attr, arr)

    def _grow_rows(self) -> None:
        have = self._data.shape[0]
        new = min(have + self.ROW_CHUNK, self.capacity)
        data = np.full((new, self._data.shape[1]), np.nan, dtype=np.float64)
        data[:have] = self._data
        times = np.full(new, np.nan, dtype=np.float64)
        times[:have] = self._times
        self._data, self._times = data, times

    def _index_map(self) -> dict[str, int]:
        if self._index is None:
            self._index = {k: i for i, k in enumerate(self.keys)}
        return self._index

    def columns(self, keys: list[str]) -> np.ndarray:
        """Column of each key, creating the series that do not exist yet."""
        index = self._index_map()
        out = np.empty(len(keys), dtype=np.int64)
        before = len(self.keys)
        new = False
        for i, key in enumerate(keys):
            col = index.get(key)
            if col is None:
                key = sys.intern(key)
                col = index[key] = len(self.keys)
                self.keys.append(key)
                if self._by_name is not None:
                    self._by_name.setdefault(key.split(_PAIR, 1)[0], []).append(col)
                new = True
            out[i] = col
        if new:
            self._grow_cols(len(self.keys))
            self._changed[before : len(self.keys)] = self.rows
        return out

    def column(self, key: str) -> int | None:
        return self._index_map().get(key)

    def append(self, t: float, parts: Iterable[tuple[np.ndarray, np.ndarray]]) -> None:
        """Write one scrape at time ``t``: each part is (columns, values) from :meth:`columns`."""
        if self.rows >= self._data.shape[0] and self._data.shape[0] < self.capacity:
            self._grow_rows()
        phys = self.rows % self.capacity
        row = self._data[phys]
        row.fill(np.nan)
        for cols, values in parts:
            row[cols] = values
        self._times[phys] = t
        present = ~np.isnan(row)
        gone = self._present & ~present
        if gone.any():
            row[gone] = STALE_NAN
            self._stale[gone] = self.rows
        self._seen[present] = self.rows
        # change tracking (lets rule evaluation skip rules whose inputs are constant)
        if self.rows:
            prev = self._data[(self.rows - 1) % self.capacity]
            diff = (row != prev) & (present | self._present)
            self._changed[diff] = self.rows
        self._present = present
        self.rows += 1
        self._chrono = None

    # ------------------------------------------------------------------ reading
    @property
    def stored_rows(self) -> int:
        return min(self.rows, self.capacity)

    def times(self) -> np.ndarray:
        """Timestamps of the stored rows, oldest first."""
        return self._chrono_view()[1]

    def _chrono_view(self) -> tuple[np.ndarray, np.ndarray]:
        if self._chrono is None or self._chrono[0] != self.rows:
            n = self.stored_rows
            if self.rows <= self.capacity:
                phys = np.arange(n)
            else:
                phys = np.arange(self.rows - n, self.rows) % self.capacity
            times = self._times[phys]
            self._chrono = (self.rows, phys, times, times.tolist())
        return self._chrono[1], self._chrono[2]

    def window(self, cols: np.ndarray, t_lo: float, t_hi: float) -> tuple[np.ndarray, np.ndarray]:
        """(times [R], values [R, len(cols)]) of the stored rows with t_lo < time <= t_hi."""
        phys, times = self._chrono_view()
        as_list = self._chrono[3]  # type: ignore[index]
        lo = bisect_right(as_list, t_lo)
        hi = bisect_right(as_list, t_hi)
        if hi <= lo or len(cols) == 0:
            return times[lo:lo], np.empty((0, len(cols)), dtype=np.float64)
        p = phys[lo:hi]
        if p[-1] - p[0] == hi - lo - 1:  # contiguous in the ring
            block = self._data[p[0] : p[-1] + 1].take(cols, axis=1)
        else:
            block = self._data[p[:, None], cols[None, :]]
        return times[lo:hi], block

    def row_at(self, t: float) -> tuple[np.ndarray | None, float]:
        """The newest stored row at or before ``t`` (a view) and its time; (None, nan) if none."""
        if self.rows == 0:
            return None, float("nan")
        newest = (self.rows - 1) % self.capacity
        t_new = float(self._times[newest])
        if t >= t_new:
            return self._data[newest], t_new
        phys, times = self._chrono_view()
        i = int(np.searchsorted(times, t, side="right")) - 1
        if i < 0:
            return None, float("nan")
        return self._data[phys[i]], float(times[i])

    def latest_samples(self, cols: np.ndarray, t_min: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(values, sample times, present) of each column's newest sample, for an instant at or
        after the newest row: present when that sample is newer than ``t_min`` and no stale
        marker followed it (Prometheus' lookback with staleness, without scanning the window)."""
        seen = self._seen[cols]
        oldest = self.rows - self.stored_rows
        ok = (seen >= oldest) & (seen > self._stale[cols])
        phys = np.where(ok, seen, self.rows - 1) % self.capacity
        times = self._times[phys]
        ok &= times > t_min
        return self._data[phys, cols], times, ok

    def last_changed(self, cols: np.ndarray) -> int:
        """The latest logical row at which any of ``cols`` changed value or presence."""
        return int(self._changed[cols].max()) if len(cols) else -1

    def labels(self, col: int) -> dict[str, str]:
        labels = self._labels
        if col >= len(labels):
            labels.extend([None] * (len(self.keys) - len(labels)))
        lab = labels[col]
        if lab is None:
            lab = labels[col] = parse_key(self.keys[col])
        return lab

    def _name_index(self) -> dict[str, list[int]]:
        if self._by_name is None:
            by: dict[str, list[int]] = {}
            for i, k in enumerate(self.keys):
                by.setdefault(k.split(_PAIR, 1)[0], []).append(i)
            self._by_name = by
        return self._by_name

    def metric_names(self) -> list[str]:
        return sorted(self._name_index())

    def select(self, matchers: tuple[Matcher, ...]) -> np.ndarray:
        """Columns of the series every matcher accepts (Prometheus semantics, anchored regexes)."""
        cached = self._select_cache.get(matchers)
        n = len(self.keys)
        if cached is not None and cached[0] == n:
            return cached[2]
        start, found = (cached[0], cached[1]) if cached is not None else (0, [])
        labels = self.labels
        names = [v for k, op, v in matchers if k == "__name__" and op == "="]
        if names:
            candidates = [c for c in self._name_index().get(names[0], ()) if c >= start]
        else:
            candidates = range(start, n)
        tests = [(k, op, self._compile(v) if op in ("=~", "!~") else v) for k, op, v in matchers]
        found = list(found)
        for c in candidates:
            lab = labels(c)
            for k, op, v in tests:
                have = lab.get(k, "")
                if op == "=":
                    ok = have == v
                elif op == "!=":
                    ok = have != v
                elif op == "=~":
                    ok = v.fullmatch(have) is not None  # type: ignore[union-attr]
                else:
                    ok = v.fullmatch(have) is None  # type: ignore[union-attr]
                if not ok:
                    break
            else:
                found.append(c)
        cols = np.asarray(found, dtype=np.int64)
        self._select_cache[matchers] = (n, found, cols)
        return cols

    def _compile(self, pattern: str) -> Any:
        # Prometheus matches with Go's regexp (RE2), anchored: same syntax, linear time
        return compile_re2(pattern, dot_all=True)

    def latest(self, key: str) -> float | None:
        """The newest sample of one series, if its last scrape had one."""
        col = self.column(key)
        if col is None or self.rows == 0:
            return None
        v = float(self._data[(self.rows - 1) % self.capacity, col])
        return None if v != v else v

    # ------------------------------------------------------------------ pickling
    def __getstate__(self) -> dict:
        phys, times = self._chrono_view()
        n = len(self.keys)
        if self.rows <= self.capacity:
            data = self._data[: len(phys), :n]
        else:
            data = self._data[phys, :n]
        state = {
            "v": 2,
            "capacity": self.capacity,
            "interval_s": self.interval_s,
            "epoch": self.epoch,
            "rows": self.rows,
            "keys": _SERIES.join(self.keys),
            "times": times.copy(),
            "present": self._present[:n].copy(),
            "changed": self._changed[:n].copy(),
            "seen": self._seen[:n].copy(),
            "stale": self._stale[:n].copy(),
            # selections are derived, but recomputing them after every restore costs more than carrying them
            "select": {m: (c[0], c[1]) for m, c in self._select_cache.items() if len(c[1]) < 4096},
        }
        state.update(_encode(data))
        return state

    def __setstate__(self, state: dict) -> None:
        self.capacity = state["capacity"]
        self.interval_s = state["interval_s"]
        self.epoch = state["epoch"]
        self.rows = state["rows"]
        self.keys = state["keys"].split(_SERIES) if state["keys"] else []
        times = state["times"]
        n_rows, n_cols = len(times), len(self.keys)
        if self.rows > self.capacity:
            alloc_rows = self.capacity
        else:
            alloc_rows = min(max(-(-(n_rows + 1) // self.ROW_CHUNK) * self.ROW_CHUNK, self.ROW_CHUNK), self.capacity)
        alloc_cols = max(-(-n_cols // self.COL_CHUNK) * self.COL_CHUNK, self.COL_CHUNK)
        data = np.empty((alloc_rows, alloc_cols), dtype=np.float64)
        data[n_rows:] = np.nan
        data[:n_rows, n_cols:] = np.nan
        self._times = np.full(alloc_rows, np.nan, dtype=np.float64)
        decoded = _decode(state, n_rows, n_cols)  # [cols, rows]
        if self.rows <= self.capacity:
            data[:n_rows, :n_cols] = decoded.T
            self._times[:n_rows] = times
        else:
            phys = np.arange(self.rows - n_rows, self.rows) % self.capacity
            data[phys, :n_cols] = decoded.T
            self._times[phys] = times
        self._data = data
        self._changed = np.zeros(alloc_cols, dtype=np.int64)
        self._changed[:n_cols] = state["changed"]
        self._seen = np.full(alloc_cols, -1, dtype=np.int64)
        self._seen[:n_cols] = state["seen"]
        self._stale = np.full(alloc_cols, -1, dtype=np.int64)
        self._stale[:n_cols] = state["stale"]
        self._present = np.zeros(alloc_cols, dtype=bool)
        self._present[:n_cols] = state["present"]
        self._reset_indexes()
        for m, (n, found) in state.get("select", {}).items():
            self._select_cache[m] = (n, found, np.asarray(found, dtype=np.int64))


def _encode(data: np.ndarray) -> dict:
    """Columns by how often they change: constant ones as one value, rarely changing
    ones as (row, column, value) change points, the rest dense (stored column-major).
    Most series of a cluster (kube-state-metrics, capacities) hardly ever change, so
    snapshots shrink several-fold; bit patterns (NaN, stale markers) survive exactly."""
    rows = data.shape[0]
    cols = data.shape[1]
    if rows == 0:
        z = np.empty(0, np.int32)
        return {"const_cols": np.arange(cols, dtype=np.int32), "const": np.full(cols, np.nan), "sparse_cols": z, "sp_row": z, "sp_col": z, "sp_val": np.empty(0), "dense_cols": z, "dense": np.empty((0, 0))}
    u = data.view(np.uint64)
    change = u[1:] != u[:-1]
    n_changes = change.sum(axis=0)
    const = n_changes == 0
    dense = n_changes * 4 > rows
    sparse = ~const & ~dense
    const_cols = np.flatnonzero(const).astype(np.int32)
    dense_cols = np.flatnonzero(dense).astype(np.int32)
    sparse_cols = np.flatnonzero(sparse).astype(np.int32)
    marks = np.ones((len(sparse_cols), rows), dtype=bool)
    marks[:, 1:] = change[:, sparse_cols].T
    c, r = np.nonzero(marks)
    return {
        "const_cols": const_cols,
        "const": data[0, const_cols].copy(),
        "sparse_cols": sparse_cols,
        "sp_row": r.astype(np.int32),
        "sp_col": c.astype(np.int32),
        "sp_val": data[r, sparse_cols[c]].copy() if len(r) else np.empty(0),
        "dense_cols": dense_cols,
        "dense": np.ascontiguousarray(data[:, dense_cols].T),
    }


def _decode(state: dict, rows: int, cols: int) -> np.ndarray:
    """The [cols, rows] (column-major) matrix :func:`_encode` describes."""
    out = np.empty((cols, rows), dtype=np.float64)
    out[state["const_cols"]] = state["const"][:, None]
    if len(state["dense_cols"]):
        out[state["dense_cols"]] = state["dense"]
    sparse_cols = state["sparse_cols"]
    if len(sparse_cols):
        r, c = state["sp_row"], state["sp_col"]
        idx = np.full((len(sparse_cols), rows), -1, dtype=np.int32)
        idx[c, r] = r
        np.maximum.accumulate(idx, axis=1, out=idx)
        vals = np.empty((len(sparse_cols), rows), dtype=np.float64)
        vals[c, r] = state["sp_val"]
        out[sparse_cols] = np.take_along_axis(vals, idx, axis=1)
    return out
