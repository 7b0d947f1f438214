"""A directory of files that grows as the log the sources read (no Spark).

Every scenario stream is one directory, ``<files_dir>/<stream>/``; a producer adds files
of rows to it — JSON lines (``.json``, ``.jsonl``), CSV with a header (``.csv``) or
Parquet (``.parquet``) — each written elsewhere (or under a name starting with ``.`` or
``_``) and renamed into place when complete. A file's rows arrive when the file does: at
its modification time. Columns are matched to the stream's by name; a value missing or
unreadable as its column's type is null.

Files are numbered in the order the sources discover them, in a *manifest* kept with the
run (``<checkpoint>/headroom/files/<stream>.json``: name, rows, arrival instant), shared
by every point reading the stream under a lock and only ever appended to. A tuple is a
row number in that order, so offsets stay exact and a replayed batch reads the same
rows, whatever files arrive later. Files present when the run starts are not read (as a
Redis stream's earlier entries): the run reads what arrives while it runs, or from a
start instant (``FeedSpec.start_s``: a job taking over a class reads from its switch).
"""

from __future__ import annotations

import fcntl
import json
import os
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.csv as pa_csv
import pyarrow.json as pa_json
import pyarrow.parquet as pq

from spark_runner.engine.control.admission import kept_positions
from spark_runner.engine.sources.columns import ARROW_TYPES, column_values
from spark_runner.engine.sources.feed import FeedSpec, Slice
from spark_runner.engine.sources.offsets import PointState

FILE_FORMATS = {".json": "json", ".jsonl": "json", ".csv": "csv", ".parquet": "parquet"}
"""File name endings the log reads, and their format."""


@dataclass(frozen=True, slots=True)
class LoggedFile:
    """One file of the manifest: its name, its rows, its arrival instant (epoch s)."""

    name: str
    rows: int
    arrival_s: float


def read_table(path: Path) -> pa.Table:
    """The rows of a JSON-lines, CSV or Parquet file."""
    kind = FILE_FORMATS[path.suffix.lower()]
    if kind == "parquet":
        return pq.read_table(path)
    if kind == "csv":
        return pa_csv.read_csv(path)
    return pa_json.read_json(path)


def count_rows(path: Path) -> int:
    if path.suffix.lower() == ".parquet":
        return int(pq.ParquetFile(path).metadata.num_rows)
    return int(read_table(path).num_rows)


class Manifest:
    """The files of one stream's directory in discovery order (see module docstring)."""

    def __init__(self, directory: Path, path: Path, start_s: float = 0.0) -> None:
        self.directory = directory
        self.path = path
        self.start_s = start_s
        self._files: list[LoggedFile] = []
        self._ends = np.zeros(0, dtype=np.int64)  # cumulative rows after each file
        self._skipped: set[str] = set()

    @property
    def files(self) -> list[LoggedFile]:
        return self._files

    def refresh(self, now_s: float, *, discover: bool = True) -> None:
        """Read the manifest; with ``discover``, append the files that arrived by
        ``now_s`` (under the lock, so every point's source numbers rows alike)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path.with_suffix(".lock"), "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            document = self._read()
            if discover:
                document = self._discover(document, now_s)
        self._files = [LoggedFile(*entry) for entry in document["files"]]
        self._skipped = set(document["skipped"])
        self._ends = np.cumsum([f.rows for f in self._files], dtype=np.int64)

    def _read(self) -> dict[str, Any]:
        try:
            return dict(json.loads(self.path.read_text(encoding="utf-8")))
        except FileNotFoundError:
            # the first look: what is there already is not part of the run, but for the
            # files from ``start_s`` on (a job taking over a class at a switch instant)
            return {"files": [], "skipped": sorted(self._before(self.start_s))}

    def _candidates(self) -> set[str]:
        if not self.directory.is_dir():
            return set()
        return {
            p.name
            for p in self.directory.iterdir()
            if p.suffix.lower() in FILE_FORMATS and not p.name.startswith((".", "_"))
        }

    def _before(self, start_s: float) -> set[str]:
        """The files there now that arrived before ``start_s`` (0: all of them)."""
        found = set()
        for name in self._candidates():
            try:
                if not start_s or (self.directory / name).stat().st_mtime < start_s:
                    found.add(name)
            except OSError:
                continue
        return found

    def _discover(self, document: dict[str, Any], now_s: float) -> dict[str, Any]:
        known = {entry[0] for entry in document["files"]} | set(document["skipped"])
        found = []
        for name in self._candidates() - known:
            path = self.directory / name
            try:
                arrival_s = path.stat().st_mtime
                if arrival_s > now_s:
                    continue
                found.append((arrival_s, name, count_rows(path)))
            except (OSError, pa.ArrowException, ValueError):
                continue  # vanished, or not readable yet: looked at again next time
        if found or not self.path.exists():
            document["files"] += [[name, rows, t] for t, name, rows in sorted(found)]
            tmp = self.path.with_suffix(".tmp")
            tmp.write_text(json.dumps(document), encoding="utf-8")
            os.replace(tmp, self.path)
        return document

    def total(self) -> int:
        return int(self._ends[-1]) if len(self._ends) else 0

    def locate(self, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(file index, row in the file) of each of the global row numbers ``rows``."""
        files = np.searchsorted(self._ends, rows, side="right")
        starts = np.concatenate(([0], self._ends))[files]
        return files, np.asarray(rows, dtype=np.int64) - starts


class FileLog:
    """Points reading directories of files (the :class:`~spark_runner.engine.sources.feed.Log`
    protocol); ``work_dir`` holds the manifests."""

    def __init__(self, spec: FeedSpec, work_dir: Path) -> None:
        self._spec = spec
        manifests: dict[str, Manifest] = {}
        for stream in {p.stream for p in spec.points}:
            directory = Path(spec.files_dir) / stream
            path = work_dir / "files" / f"{stream}.json"
            manifests[stream] = Manifest(directory, path, spec.start_s)
        self._manifests = [manifests[p.stream] for p in spec.points]
        self._columns = [spec.streams[p.stream].columns for p in spec.points]

    def initial(self, point: int, now_us: int) -> PointState:
        self._manifests[point].refresh(now_us / 1e6)
        return PointState(head_s=now_us / 1e6)

    def arrived(self, point: int, state: PointState, now_us: int) -> int:
        manifest = self._manifests[point]
        manifest.refresh(now_us / 1e6)
        return max(state.arrived, manifest.total())

    def take(self, point: int, state: PointState, count: int) -> str | None:
        return None

    def head_s(self, point: int, state: PointState, now_us: int) -> float:
        manifest = self._manifests[point]
        if state.taken >= manifest.total():
            return now_us / 1e6
        files, _ = manifest.locate(np.array([state.taken]))
        return manifest.files[int(files[0])].arrival_s

    def rows(self, piece: Slice) -> dict[str, Any]:
        """The kept rows of ``piece`` as columns (``point, seq, arrival_s`` and the
        stream's, as Arrow arrays of their types)."""
        manifest = self._manifests[piece.point]
        manifest.refresh(0.0, discover=False)
        seqs = piece.first + kept_positions(piece.taken, piece.kept, piece.j0, piece.j1)
        files, rows = manifest.locate(seqs)
        columns = self._columns[piece.point]
        parts: dict[str, list[pa.Array]] = {c.name: [] for c in columns}
        arrivals = np.empty(len(seqs), dtype=np.float64)
        for i in np.unique(files).tolist():
            chosen = files == i
            logged = manifest.files[i]
            arrivals[chosen] = logged.arrival_s
            table = cached_table(manifest.directory / logged.name).take(pa.array(rows[chosen]))
            for c in columns:
                present = c.name in table.column_names
                parts[c.name].append(
                    column_values(c, table.column(c.name))
                    if present
                    else pa.nulls(table.num_rows, ARROW_TYPES[c.type])
                )
        return {
            "point": np.full(len(seqs), piece.point, dtype=np.int32),
            "seq": seqs.astype(np.int64),
            "arrival_s": arrivals,
            **{
                c.name: pa.concat_arrays(parts[c.name]) if parts[c.name] else
                pa.array([], ARROW_TYPES[c.type])
                for c in columns
            },
        }  # fmt: skip


TABLES_KEPT = 32
"""Files a reader process keeps read: the points of one stream read the same files."""
_TABLES: OrderedDict[Path, pa.Table] = OrderedDict()


def cached_table(path: Path) -> pa.Table:
    """The rows of the file at ``path``, read once per process while among the last
    :data:`TABLES_KEPT` read (a logged file never changes: files are renamed in whole)."""
    if path in _TABLES:
        _TABLES.move_to_end(path)
        return _TABLES[path]
    table = _TABLES[path] = read_table(path)
    while len(_TABLES) > TABLES_KEPT:
        _TABLES.popitem(last=False)
    return table
