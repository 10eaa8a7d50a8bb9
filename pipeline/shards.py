"""Prepared splits as sharded `.npy` id arrays: written row block by row block, read lazily.

Prepare appends encoded rows to a `ShardWriter` per split, which writes a shard every `shard_rows`
rows, so no split is ever held whole. Training opens a split as a `ShardedIds` per side: shards are
memory-mapped, and only the rows a batch asks for are read. `splits.json` lists every split's rows,
widths and shard files; reading checks them, so a missing or truncated shard is a one-line error.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from pipeline.rundir import SPLITS_INDEX_FILE, shard_file

SIDES = ("source", "target")
OLDER_SIDES = {"source": "english", "target": "italian"}     # how data prepared before directions named them
DTYPE = np.dtype("<i4")
_LENGTH_BLOCK = 1 << 16        # rows per block when counting lengths over a memory-mapped shard


class ShardWriter:
    """Appends (source, target) id rows of one split and writes them as shards of `shard_rows` rows."""

    def __init__(self, directory: Path, split: str, widths: dict[str, int], shard_rows: int):
        self.directory, self.split, self.widths, self.shard_rows = Path(directory), split, widths, shard_rows
        self.pending: dict[str, list[np.ndarray]] = {side: [] for side in SIDES}
        self.pending_rows = 0
        self.shards: list[dict[str, Any]] = []

    def append(self, source: np.ndarray, target: np.ndarray) -> None:
        """Add rows (source (n, widths['source']), target (n, widths['target'])) in corpus order."""
        start = 0
        while start < len(source):
            take = min(self.shard_rows - self.pending_rows, len(source) - start)
            self.pending["source"].append(source[start:start + take])
            self.pending["target"].append(target[start:start + take])
            self.pending_rows += take
            start += take
            if self.pending_rows == self.shard_rows:
                self._flush()

    def close(self) -> dict[str, Any]:
        """Write the last partial shard; returns this split's entry of the index."""
        if self.pending_rows:
            self._flush()
        return {"rows": sum(s["rows"] for s in self.shards), "widths": dict(self.widths), "shards": self.shards}

    def _flush(self) -> None:
        """One shard per side: the .npy header, then the pending blocks one after another (never concatenated).

        The files land inside prepare's temporary directory, which appears whole or not at all.
        """
        entry: dict[str, Any] = {"rows": self.pending_rows}
        for side in SIDES:
            name = shard_file(self.split, len(self.shards), side)
            with open(self.directory / name, "wb") as handle:
                header = {"descr": DTYPE.str, "fortran_order": False, "shape": (self.pending_rows, self.widths[side])}
                np.lib.format.write_array_header_1_0(handle, header)
                for block in self.pending[side]:
                    handle.write(np.ascontiguousarray(block, dtype=DTYPE).tobytes())
            entry[side] = name
            self.pending[side] = []
        self.shards.append(entry)
        self.pending_rows = 0


def index_bytes(splits: dict[str, dict[str, Any]]) -> bytes:
    """The contents of `splits.json`, from each split's `ShardWriter.close()`."""
    return (json.dumps({"format": 1, "splits": splits}, indent=2) + "\n").encode("utf-8")


class ShardedIds:
    """An (N, width) int32 id array kept in shards: `len`, `shape`, row gathers, per-row lengths.

    Indexing with a row index, a slice or an index array (optionally followed by column slices, as in
    `ids[rows, :width]`) reads only those rows and returns a numpy array; `np.asarray(ids)` reads all.
    """

    ndim = 2
    dtype = DTYPE

    def __init__(self, shards: list[np.ndarray], width: int):
        self.shards, self.width = shards, width
        self.offsets = np.cumsum([0, *(len(s) for s in shards)])
        self._lengths: np.ndarray | None = None

    @property
    def shape(self) -> tuple[int, int]:
        return int(self.offsets[-1]), self.width

    def __len__(self) -> int:
        return int(self.offsets[-1])

    def __repr__(self) -> str:
        return f"ShardedIds(shape={self.shape}, shards={len(self.shards)})"

    def __getitem__(self, key: Any) -> np.ndarray:
        rows, columns = (key[0], key[1:]) if isinstance(key, tuple) else (key, ())
        if isinstance(rows, (int, np.integer)):
            return self.take(np.array([rows]))[0][columns]
        if isinstance(rows, slice):
            rows = np.arange(*rows.indices(len(self)))
        rows = np.asarray(rows)
        if rows.dtype == bool:
            rows = np.flatnonzero(rows)
        return self.take(rows)[(slice(None), *columns)]

    def take(self, rows: np.ndarray) -> np.ndarray:
        """The given rows (negative counts from the end), in the order given."""
        rows = np.asarray(rows, dtype=np.int64).reshape(-1)
        n = len(self)
        if len(rows) and (rows.min() < -n or rows.max() >= n):
            raise IndexError(f"row index out of range for {n} rows")
        rows = np.where(rows < 0, rows + n, rows)
        out = np.empty((len(rows), self.width), dtype=DTYPE)
        shard_of_row = np.searchsorted(self.offsets, rows, side="right") - 1
        for shard in np.unique(shard_of_row):
            mine = shard_of_row == shard
            out[mine] = self.shards[shard][rows[mine] - self.offsets[shard]]
        return out

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        whole = np.concatenate(self.shards) if self.shards else np.empty((0, self.width), DTYPE)
        return whole if dtype is None else whole.astype(dtype)

    def blocks(self) -> Iterator[np.ndarray]:
        """The rows in order, a block at a time (each block a view into a memory-mapped shard)."""
        for shard in self.shards:
            for start in range(0, len(shard), _LENGTH_BLOCK):
                yield shard[start:start + _LENGTH_BLOCK]

    def row_lengths(self) -> np.ndarray:
        """Non-padding ids per row (N,), counted once, block by block, then cached."""
        if self._lengths is None:
            counts = [(block != 0).sum(axis=1) for block in self.blocks()]
            self._lengths = np.concatenate(counts) if counts else np.zeros(0, dtype=np.int64)
        return self._lengths


def _split_entry(prepared_dir: Path, name: str) -> dict[str, Any]:
    index_path = prepared_dir / SPLITS_INDEX_FILE
    if not index_path.is_file():
        raise FileNotFoundError(f"split index {index_path}: not found; run scripts/prepare.py first")
    try:
        entry = json.loads(index_path.read_text(encoding="utf-8"))["splits"][name]
        entry["widths"], entry["shards"], entry["rows"]
        return entry
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"split index {index_path}: no readable entry for split {name!r} ({exc!r})") from None


def corpus_rows(prepared_dir: str | Path, name: str) -> list[tuple[str, int, int]]:
    """(corpus name, first row, end row) of each corpus in one prepared split, in row order (the corpora
    lie one after another); data prepared before corpora were recorded is one corpus, "all"."""
    entry = _split_entry(Path(prepared_dir), name)
    corpora = entry.get("corpora") or [{"name": "all", "rows": entry["rows"]}]
    ends = np.cumsum([c["rows"] for c in corpora])
    if not len(ends) or ends[-1] != entry["rows"]:
        raise ValueError(f"split index {Path(prepared_dir) / SPLITS_INDEX_FILE}: the corpora of split {name!r} "
                         f"hold {int(ends[-1]) if len(ends) else 0} rows, the split {entry['rows']}")
    return [(c["name"], int(end - c["rows"]), int(end)) for c, end in zip(corpora, ends)]


def open_split(prepared_dir: str | Path, name: str) -> tuple[ShardedIds, ShardedIds]:
    """The (source, target) ids of one prepared split, memory-mapped shard by shard."""
    prepared_dir = Path(prepared_dir)
    entry = _split_entry(prepared_dir, name)
    widths, shards = entry["widths"], entry["shards"]
    sides = []
    for side in SIDES:
        key = side if side in widths else OLDER_SIDES[side]
        arrays = [_open_shard(prepared_dir / shard[key], shard["rows"], widths[key]) for shard in shards]
        sides.append(ShardedIds(arrays, widths[key]))
    return sides[0], sides[1]


def _open_shard(path: Path, rows: int, width: int) -> np.ndarray:
    if not path.is_file():
        raise FileNotFoundError(f"split shard {path}: not found; run scripts/prepare.py again")
    try:
        array = np.load(path, mmap_mode="r")
    except ValueError as exc:
        raise ValueError(f"split shard {path}: not a readable .npy file ({exc})") from None
    if array.shape != (rows, width) or array.dtype != DTYPE:
        raise ValueError(f"split shard {path}: expected int32 ids of shape {(rows, width)}, "
                         f"got {array.dtype} {array.shape}; run scripts/prepare.py again")
    return array
