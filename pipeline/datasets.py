"""Batches for training: one seeded, length-bucketed batch plan, fed by tf.data or a PyDataset.

The tutorial's `shuffle -> batch -> map -> prefetch -> cache` caches one shuffle order for
every epoch. Here sentences are vectorised once, and each epoch's order is a fresh seeded
permutation computed from (seed, epoch): the same batches on every backend, and a resumed
run can start exactly where a checkpoint left off. Batches have a few fixed shapes (`Batching`:
shared bucket widths, rows per bucket by sentences or by tokens), so XLA compiles few programs.

Several corpora are mixed by weight in the plan itself (`Batching.mixture`): an epoch draws row
indices, never copies of the data.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import keras

from pipeline.shards import ShardedIds, corpus_rows, open_split


def format_dataset(source, target):
    """Teacher forcing: the decoder reads target[:, :-1] and predicts target[:, 1:]."""
    return {"encoder_inputs": source, "decoder_inputs": target[:, :-1]}, target[:, 1:]


def load_split(prepared_dir: str | Path, name: str) -> tuple[Any, Any]:
    """The (source, target) int32 ids that prepare wrote for one split, as lazily read `ShardedIds`
    (row gathers, `len`, `shape`; `np.asarray` reads all), or arrays from an older `<name>.npz`."""
    path = Path(prepared_dir) / f"{name}.npz"
    if path.is_file():
        with np.load(path) as arrays:
            return arrays["english"], arrays["italian"]   # older data: English -> Italian
    return open_split(prepared_dir, name)


def split_corpora(prepared_dir: str | Path, name: str, rows: int) -> list[tuple[str, int, int]]:
    """(corpus, first row, end row) of each corpus in a prepared split (`shards.corpus_rows`); one corpus,
    "all", for data from an older `<name>.npz`."""
    if (Path(prepared_dir) / f"{name}.npz").is_file():
        return [("all", 0, rows)]
    return corpus_rows(prepared_dir, name)


def sequence_lengths(ids: Any) -> np.ndarray:
    """Number of non-padding ids per row (padding is id 0, always at the end)."""
    if isinstance(ids, ShardedIds):
        return ids.row_lengths()
    return (ids != 0).sum(axis=1)


MAX_BUCKETS = 12        # distinct batch widths (hence, with fixed rows per bucket, XLA compilations) at most


def pair_widths(source: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Columns each pair needs: the longer of its source and its decoder input (target minus one)."""
    return np.maximum(sequence_lengths(source), sequence_lengths(target) - 1)


def bucket_boundaries(source: np.ndarray, target: np.ndarray, buckets: int, multiple: int = 1) -> tuple[int, ...]:
    """At most `buckets` batch widths shared by source and target, ascending, that waste the least padding.

    Widths are multiples of `multiple` (any width when 0 or 1) and the last is the full width, so
    every pair fits; among those, the set that minimises the padding columns summed over these
    pairs (each padded to its bucket's width) is found exactly by dynamic programming.
    """
    if not 1 <= buckets <= MAX_BUCKETS:
        raise ValueError(f"buckets must be in 1..{MAX_BUCKETS}, got {buckets}")
    full = max(source.shape[1], target.shape[1] - 1)
    counts = np.bincount(np.minimum(pair_widths(source, target), full), minlength=full + 1).astype(np.float64)
    step = max(multiple, 1)
    candidates = [w for w in range(step, full, step)] + [full]
    rows_upto = np.cumsum(counts)                        # pairs of width <= w
    width_upto = np.cumsum(counts * np.arange(full + 1))  # their summed widths

    def padding(low: int, high: int) -> float:          # pairs with low < width <= high, padded to high
        return high * (rows_upto[high] - rows_upto[low]) - (width_upto[high] - width_upto[low])

    # best[k][j]: least padding for widths <= candidates[j] cut by k + 1 boundaries, the last at candidates[j]
    best, back = [[padding(0, c) for c in candidates]], []
    for k in range(1, min(buckets, len(candidates))):
        row, links = [np.inf] * len(candidates), [-1] * len(candidates)
        for j in range(k, len(candidates)):
            row[j], links[j] = min((best[-1][i] + padding(candidates[i], candidates[j]), i) for i in range(k - 1, j))
        best.append(row)
        back.append(links)
    bounds, j = [candidates[-1]], len(candidates) - 1
    for links in reversed(back):
        j = links[j]
        bounds.append(candidates[j])
    return tuple(sorted(set(bounds)))


@dataclass(frozen=True)
class Batching:
    """How the batch plan cuts an epoch into batches of a few fixed shapes.

    Every batch of a bucket has the same shape: `rows(width)` rows (the bucket's last batch is
    padded with empty rows, which the masked loss and accuracy ignore) and `width` columns on
    both sides. Rows are `batch_size` sentences, or, when `batch_tokens` > 0 (it wins), as many
    as fit `batch_tokens` padded tokens of the wider side: rows x width, the OpenNMT-tf and
    fairseq convention, rounded down to a multiple of 8. With `accumulate_steps` k > 1 an epoch
    is padded to a multiple of k batches with empty ones, and each batch carries the weight
    that makes k micro-batches sum to the token mean of their union (`group_weights`).
    """
    boundaries: tuple[int, ...]
    batch_size: int = 64
    batch_tokens: int = 0
    accumulate_steps: int = 1
    mixture: tuple[tuple[int, int, float], ...] = ()     # (first row, end row, weight) per corpus; () = every row once

    @classmethod
    def for_data(cls, source: np.ndarray, target: np.ndarray, batch_size: int = 64, batch_tokens: int = 0,
                 buckets: int = 8, bucket_width: int = 1, accumulate_steps: int = 1,
                 mixture: tuple[tuple[int, int, float], ...] = ()) -> "Batching":
        """Boundaries from these (training) arrays' lengths; see `bucket_boundaries`."""
        return cls(bucket_boundaries(source, target, buckets, bucket_width), batch_size, batch_tokens,
                   accumulate_steps, mixture)

    @classmethod
    def from_config(cls, train_config: Any, source: np.ndarray, target: np.ndarray,
                    mixture: tuple[tuple[int, int, float], ...] = ()) -> "Batching":
        """The batching that `train.*` keys ask for, with boundaries from the training split."""
        t = train_config
        return cls.for_data(source, target, t.batch_size, t.batch_tokens, t.buckets, t.bucket_width,
                            t.accumulate_steps, mixture)

    def rows(self, width: int) -> int:
        """Rows of every batch whose columns are `width`."""
        if not self.batch_tokens:
            return self.batch_size
        rows = max(1, self.batch_tokens // width)
        return rows - rows % 8 if rows >= 8 else rows

    def bucket_of(self, pair_widths):
        """The index of the smallest boundary that holds each pair width (the last for wider ones)."""
        return np.minimum(np.searchsorted(self.boundaries, pair_widths), len(self.boundaries) - 1)

    def width_of(self, pair_width: int) -> int:
        """The smallest boundary that holds a pair of this width."""
        return self.boundaries[int(self.bucket_of(pair_width))]


def mixture(corpora: list[tuple[str, int, int]], weights: dict[str, float]) -> tuple[tuple[int, int, float], ...]:
    """`Batching.mixture` for a split's corpora (`shards.corpus_rows`) and their weights by name; () when
    every weight is 1 (every row once, the plan of a single corpus)."""
    missing = [name for name, _, _ in corpora if name not in weights]
    if missing:
        raise ValueError(f"no weight for corpus {', '.join(missing)} (the config's data.corpora names "
                         f"{', '.join(weights) or 'none'})")
    if all(weights[name] == 1.0 for name, _, _ in corpora):
        return ()
    return tuple((start, stop, float(weights[name])) for name, start, stop in corpora)


def draw_rows(rows: np.ndarray, weight: float, rng: np.random.Generator) -> np.ndarray:
    """round(weight x len(rows)) draws from `rows`: each row floor of that / len(rows) times, plus a
    seeded sample without replacement for the remainder (indices only: nothing is copied)."""
    if not len(rows):
        return rows
    whole, rest = divmod(int(round(weight * len(rows))), len(rows))
    extra = rng.choice(rows, rest, replace=False) if rest else rows[:0]
    return np.concatenate([np.tile(rows, whole), extra])


def _epoch_members(buckets: np.ndarray, batching: Batching, rng: np.random.Generator) -> dict[int, np.ndarray]:
    """Each bucket's rows for one epoch: every row once, or with a mixture, `draw_rows` of each
    (corpus, bucket) cell, so every epoch has the same rows per bucket, hence the same batches."""
    members = {}
    for bucket in np.unique(buckets):
        if not batching.mixture:
            members[bucket] = np.flatnonzero(buckets == bucket)
            continue
        members[bucket] = np.concatenate([
            draw_rows(start + np.flatnonzero(buckets[start:stop] == bucket), weight, rng)
            for start, stop, weight in batching.mixture])
    return members


def _bucket_sizes(buckets: np.ndarray, batching: Batching) -> dict[int, int]:
    """Rows per bucket in every epoch (see `_epoch_members`)."""
    sizes = {}
    for bucket in np.unique(buckets):
        if not batching.mixture:
            sizes[bucket] = int((buckets == bucket).sum())
        else:
            sizes[bucket] = sum(int(round(w * int((buckets[a:b] == bucket).sum()))) for a, b, w in batching.mixture)
    return sizes


def batch_plan(source: np.ndarray, target: np.ndarray, batching: Batching, seed: int, epoch: int) -> list[np.ndarray]:
    """Row indices of every batch of one epoch: bucketed by width, shuffled by (seed, epoch).

    The number and shapes of batches are the same in every epoch; only their contents and
    order change. Empty batches (no rows) pad the epoch to a multiple of `accumulate_steps`.

    With `batching.mixture`, corpus c of n_c training pairs and weight w_c contributes round(w_c x n_c)
    rows to each epoch, rounded per length bucket: each pair floor(w_c) times, plus a seeded sample
    without replacement, drawn anew each epoch, for the fraction (weight 0.5: a different half of the
    corpus each epoch; 3: every pair three times; 0: none, the corpus is only scored). Corpus c is then
    w_c n_c / sum_k w_k n_k of the epoch's pairs.
    """
    rng = np.random.default_rng([seed, epoch])
    buckets = _buckets(source, target, batching)
    batches = []
    for bucket, rows_of_bucket in _epoch_members(buckets, batching, rng).items():
        if not len(rows_of_bucket):
            continue
        rows = batching.rows(batching.boundaries[bucket])
        members = rng.permutation(rows_of_bucket)
        batches.extend(members[i:i + rows] for i in range(0, len(members), rows))
    order = rng.permutation(len(batches))
    filler = [np.zeros(0, np.int64)] * (-len(batches) % batching.accumulate_steps)
    return [batches[i] for i in order] + filler


def steps_per_epoch(source: np.ndarray, target: np.ndarray, batching: Batching) -> int:
    """Batches in every epoch of `batch_plan` (without building one)."""
    sizes = _bucket_sizes(_buckets(source, target, batching), batching)
    batches = sum(-(-n // batching.rows(batching.boundaries[b])) for b, n in sizes.items())
    return _round_up(batches, batching.accumulate_steps)


def _buckets(source: np.ndarray, target: np.ndarray, batching: Batching) -> np.ndarray:
    """Each pair's bucket: the index of the smallest boundary that holds it."""
    return batching.bucket_of(pair_widths(source, target))


def _round_up(n: int, multiple: int) -> int:
    return -(-n // multiple) * multiple if multiple else n


def batch_shape(source: np.ndarray, target: np.ndarray, rows: np.ndarray, batching: Batching) -> tuple[int, int, int]:
    """(rows, source columns, target columns) of one planned batch: its bucket's fixed shape.

    The target keeps one column more than the decoder sees ([start] ... and ... [end] are cut from it).
    """
    width = batching.width_of(int(pair_widths(source[rows], target[rows]).max())) if len(rows) else \
        batching.boundaries[0]
    return batching.rows(width), min(width, source.shape[1]), min(width, target.shape[1] - 1) + 1


def batch_shapes(source: np.ndarray, target: np.ndarray, batching: Batching) -> set[tuple[int, int, int]]:
    """The distinct (rows, source width, decoder width) shapes of one epoch of these arrays."""
    plan = batch_plan(source, target, batching, seed=0, epoch=0)
    return {(r, src, tgt - 1) for r, src, tgt in (batch_shape(source, target, rows, batching) for rows in plan)}


def example_batches(source: np.ndarray, target: np.ndarray, batching: Batching) -> list[tuple]:
    """One batch of padding for each distinct shape an epoch of these arrays has, structured as `ArrayBatches`
    serves them (with loss weights when accumulating): all that a compiler needs to know of the epoch."""
    plan = batch_plan(source, target, batching, seed=0, epoch=0)
    batches = []
    for rows, src_len, tgt_len in sorted({batch_shape(source, target, rows, batching) for rows in plan}):
        inputs, targets = format_dataset(np.zeros((rows, src_len), source.dtype), np.zeros((rows, tgt_len), target.dtype))
        weights = (np.ones((rows, 1), np.float32),) if batching.accumulate_steps > 1 else ()
        batches.append((inputs, targets, *weights))
    return batches


def group_weights(target: np.ndarray, plan: list[np.ndarray], accumulate_steps: int) -> np.ndarray:
    """Per-batch loss weights for gradient accumulation: k * tokens(batch) / tokens(its group of k).

    The loss of a batch is its mean over non-padding tokens and the optimizer averages k
    gradients, so these weights make each update the gradient of the token mean over the
    union of the k batches: exactly what one batch of their union would give.
    """
    tokens = np.array([target_tokens(target[rows]) for rows in plan], np.float64)
    groups = np.pad(tokens, (0, -len(tokens) % accumulate_steps)).reshape(-1, accumulate_steps)
    totals = np.maximum(groups.sum(axis=1, keepdims=True), 1.0)
    return (accumulate_steps * groups / totals).reshape(-1)[:len(plan)].astype(np.float32)


def gather_batch(source: np.ndarray, target: np.ndarray, rows: np.ndarray, shape: tuple[int, int, int]):
    """The rows of one batch, trimmed to `shape`'s widths and padded with empty rows to its row count."""
    n_rows, src_len, tgt_len = shape
    src = np.zeros((n_rows, src_len), source.dtype)
    tgt = np.zeros((n_rows, tgt_len), target.dtype)
    src[:len(rows)], tgt[:len(rows)] = source[rows, :src_len], target[rows, :tgt_len]
    return format_dataset(src, tgt)


def target_tokens(target: Any) -> int:
    """Non-padding target tokens (every token after [start]), from the row lengths."""
    return int(np.maximum(sequence_lengths(target) - 1, 0).sum())


class ArrayBatches(keras.utils.PyDataset):
    """The batch plan as a PyDataset for any backend (no TensorFlow needed).

    `first_epoch` and `skip` position it where a checkpoint left off: the first epoch it
    serves is shortened by `skip` batches; `len()` is that epoch's length. With `reshuffle=False`
    (validation data) every pass serves the first epoch's batches again.
    """

    def __init__(self, source: np.ndarray, target: np.ndarray, batching: Batching, seed: int,
                 first_epoch: int = 0, skip: int = 0, reshuffle: bool = True, **kwargs):
        super().__init__(**kwargs)
        self.source, self.target, self.batching, self.seed = source, target, batching, seed
        self.epoch, self.skip, self._begun, self.reshuffle = first_epoch, skip, False, reshuffle
        self._plan_epoch(first_epoch)

    def _plan_epoch(self, epoch: int) -> None:
        self.plan = batch_plan(self.source, self.target, self.batching, self.seed, epoch)
        k = self.batching.accumulate_steps
        self.weights = group_weights(self.target, self.plan, k) if k > 1 else None

    def __len__(self) -> int:
        return len(self.plan) - self.skip

    def __getitem__(self, index: int):
        rows = self.plan[self.skip + index]
        shape = batch_shape(self.source, self.target, rows, self.batching)
        inputs, targets = gather_batch(self.source, self.target, rows, shape)
        if self.weights is None:
            return inputs, targets
        return inputs, targets, np.full((shape[0], 1), self.weights[self.skip + index], np.float32)

    def on_epoch_begin(self) -> None:
        # Each epoch after the first gets its own plan. Not in `on_epoch_end`: Keras's JAX and PyTorch
        # trainers call that once before training starts, which would skip the first epoch (and a resume's place).
        if self._begun and self.reshuffle:
            self.epoch += 1
            self.skip = 0
            self._plan_epoch(self.epoch)
        self._begun = True


def make_dataset(pairs: Any, batching: Batching | int = 64, vectorizers: Any = None, seed: int = 0,
                 epochs: Sequence[int] = (0,), skip: int = 0, shuffle: bool = True):
    """A tf.data pipeline of `format_dataset` batches (with loss weights when accumulating).

    `pairs` is either a list of (source, target) sentences, vectorised once here with
    `vectorizers`, or a tuple of prepared id arrays. `batching` is a `Batching`, or a number of
    sentences per batch (8 buckets from these pairs' lengths). Batches follow `batch_plan` for
    each epoch in `epochs` (the first shortened by `skip`); `shuffle=False` keeps corpus order
    (consecutive sentences, no padding rows).
    """
    import tensorflow as tf

    source, target = _as_id_arrays(pairs, vectorizers)
    if isinstance(batching, int):
        batching = Batching.for_data(source, target, batch_size=batching)
    plans, shapes, weights = [], [], []
    for n, epoch in enumerate(epochs):
        if shuffle:
            plan = batch_plan(source, target, batching, seed, epoch)
            shape = [batch_shape(source, target, rows, batching) for rows in plan]
        else:
            size = batching.rows(batching.boundaries[-1])
            plan = [np.arange(i, min(i + size, len(source))) for i in range(0, len(source), size)]
            shape = [(len(rows),) + batch_shape(source, target, rows, batching)[1:] for rows in plan]
        weight = (group_weights(target, plan, batching.accumulate_steps) if batching.accumulate_steps > 1
                  else np.ones(len(plan), np.float32))
        first = skip if n == 0 else 0
        plans.extend(plan[first:])
        shapes.extend(shape[first:])
        weights.extend(weight[first:])
    if not plans:
        raise ValueError("make_dataset: no batches to serve (empty data or skip past the end)")
    lengths = np.array([len(p) for p in plans])
    ends = np.cumsum(lengths)
    n_rows, src_len, tgt_len = (np.array(column) for column in zip(*shapes))
    flat_t = tf.constant(np.concatenate(plans).astype(np.int64))
    if isinstance(source, ShardedIds):      # sharded splits stay on disk: read each batch's rows on demand
        def rows_of(index):
            src, tgt = tf.numpy_function(lambda rows: (source[rows], target[rows]), [index], (tf.int32, tf.int32),
                                       stateful=False)
            src.set_shape([None, source.shape[1]])
            tgt.set_shape([None, target.shape[1]])
            return src, tgt
    else:
        source_t, target_t = tf.constant(source), tf.constant(target)

        def rows_of(index):
            return tf.gather(source_t, index), tf.gather(target_t, index)

    def gather(start, end, rows, n_src, n_tgt, weight):
        src, tgt = rows_of(flat_t[start:end])
        padding = [[0, rows - (end - start)], [0, 0]]
        src, tgt = tf.pad(src[:, :n_src], padding), tf.pad(tgt[:, :n_tgt], padding)
        inputs, targets = format_dataset(src, tgt)
        if batching.accumulate_steps == 1:
            return inputs, targets
        return inputs, targets, tf.fill([rows, 1], weight)

    dataset = tf.data.Dataset.from_tensor_slices((ends - lengths, ends, n_rows, src_len, tgt_len,
                                                  np.array(weights, np.float32)))
    return dataset.map(gather, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True).prefetch(tf.data.AUTOTUNE)


def feeder(source: np.ndarray, target: np.ndarray, batching: Batching, seed: int, first_epoch: int = 0,
           skip: int = 0, end_epoch: int | None = None, fixed: bool = False):
    """This backend's feeder of the batch plan: tf.data on TensorFlow, else an `ArrayBatches` PyDataset.

    It serves epochs [first_epoch, end_epoch) (the PyDataset goes on as long as it is asked), the
    first shortened by `skip` batches; both give the same batches. `fixed` (validation data): the
    same batches on every pass, as Keras evaluates it after each epoch.
    """
    if keras.backend.backend() == "tensorflow":
        end = first_epoch + 1 if end_epoch is None else end_epoch
        return make_dataset((source, target), batching, seed=seed, epochs=range(first_epoch, end), skip=skip)
    return ArrayBatches(source, target, batching, seed, first_epoch, skip, reshuffle=not fixed)


def _as_id_arrays(pairs: Any, vectorizers: Any) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(pairs, tuple) and len(pairs) == 2 and isinstance(pairs[0], (np.ndarray, ShardedIds)):
        return pairs
    if vectorizers is None:
        raise ValueError("make_dataset: sentence pairs need `vectorizers` to turn them into ids")
    return (vectorizers.encode_source([src for src, _ in pairs]),
            vectorizers.encode_target([tgt for _, tgt in pairs]))
