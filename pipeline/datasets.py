"""Batches for training: one seeded, length-bucketed batch plan, fed by tf.data or a PyDataset.

The tutorial's `shuffle -> batch -> map -> prefetch -> cache` caches one shuffle order for
every epoch. Here sentences are vectorised once, and each epoch's order is a fresh seeded
permutation computed from (seed, epoch): the same batches on every backend, and a resumed
run can start exactly where a checkpoint left off.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

import numpy as np
import keras

from pipeline.shards import ShardedIds, open_split


def format_dataset(eng, ita):
    """Teacher forcing: the decoder reads ita[:, :-1] and predicts ita[:, 1:]."""
    return {"encoder_inputs": eng, "decoder_inputs": ita[:, :-1]}, ita[:, 1:]


def load_split(prepared_dir: str | Path, name: str) -> tuple[Any, Any]:
    """The (english, italian) int32 ids that prepare wrote for one split, as lazily read `ShardedIds`
    (row gathers, `len`, `shape`; `np.asarray` reads all), or arrays from an older `<name>.npz`."""
    path = Path(prepared_dir) / f"{name}.npz"
    if path.is_file():
        with np.load(path) as arrays:
            return arrays["english"], arrays["italian"]
    return open_split(prepared_dir, name)


def sequence_lengths(ids: Any) -> np.ndarray:
    """Number of non-padding ids per row (padding is id 0, always at the end)."""
    if isinstance(ids, ShardedIds):
        return ids.row_lengths()
    return (ids != 0).sum(axis=1)


def batch_plan(english: np.ndarray, italian: np.ndarray, batch_size: int, bucket_width: int,
               seed: int, epoch: int) -> list[np.ndarray]:
    """Row indices of every batch of one epoch: bucketed by length, shuffled by (seed, epoch).

    The number and sizes of batches are the same in every epoch; only their contents and
    order change.
    """
    rng = np.random.default_rng([seed, epoch])
    length = np.maximum(sequence_lengths(english), sequence_lengths(italian))
    buckets = length // bucket_width if bucket_width else np.zeros_like(length)
    batches = []
    for bucket in np.unique(buckets):
        members = rng.permutation(np.flatnonzero(buckets == bucket))
        batches.extend(members[i:i + batch_size] for i in range(0, len(members), batch_size))
    order = rng.permutation(len(batches))
    return [batches[i] for i in order]


def _round_up(n: int, multiple: int) -> int:
    return -(-n // multiple) * multiple if multiple else n


def batch_widths(english: np.ndarray, italian: np.ndarray, rows: np.ndarray, pad_multiple: int) -> tuple[int, int]:
    """Columns to keep for a batch: its longest sentence, rounded up to limit distinct shapes."""
    en_len = min(english.shape[1], _round_up(int(sequence_lengths(english[rows]).max()), pad_multiple))
    it_len = min(italian.shape[1], _round_up(int(sequence_lengths(italian[rows]).max()), pad_multiple) + 1)
    return en_len, it_len


def gather_batch(english: np.ndarray, italian: np.ndarray, rows: np.ndarray, pad_multiple: int):
    """The rows of one batch, trimmed to `batch_widths`."""
    en_len, it_len = batch_widths(english, italian, rows, pad_multiple)
    return format_dataset(english[rows, :en_len], italian[rows, :it_len])


def target_tokens(italian: Any) -> int:
    """Non-padding target tokens (every token after [start]), from the row lengths."""
    return int(np.maximum(sequence_lengths(italian) - 1, 0).sum())


class ArrayBatches(keras.utils.PyDataset):
    """The batch plan as a PyDataset for any backend (no TensorFlow needed).

    `first_epoch` and `skip` position it where a checkpoint left off: the first epoch it
    serves is shortened by `skip` batches; `len()` is that epoch's length.
    """

    def __init__(self, english: np.ndarray, italian: np.ndarray, batch_size: int, bucket_width: int,
                 seed: int, first_epoch: int = 0, skip: int = 0, **kwargs):
        super().__init__(**kwargs)
        self.english, self.italian = english, italian
        self.batch_size, self.bucket_width, self.seed = batch_size, bucket_width, seed
        self.epoch, self.skip = first_epoch, skip
        self.plan = batch_plan(english, italian, batch_size, bucket_width, seed, first_epoch)

    def __len__(self) -> int:
        return len(self.plan) - self.skip

    def __getitem__(self, index: int):
        return gather_batch(self.english, self.italian, self.plan[self.skip + index], self.bucket_width)

    def on_epoch_end(self) -> None:
        self.epoch += 1
        self.skip = 0
        self.plan = batch_plan(self.english, self.italian, self.batch_size, self.bucket_width, self.seed, self.epoch)


def make_dataset(pairs: Any, batch_size: int, vectorizers: Any = None, bucket_width: int = 4, seed: int = 0,
                 epochs: Sequence[int] = (0,), skip: int = 0, shuffle: bool = True):
    """A tf.data pipeline of `format_dataset` batches.

    `pairs` is either a list of (english, italian) sentences, vectorised once here with
    `vectorizers`, or a tuple of prepared id arrays. Batches follow `batch_plan` for each
    epoch in `epochs` (the first shortened by `skip`); `shuffle=False` keeps corpus order.
    """
    import tensorflow as tf

    english, italian = _as_id_arrays(pairs, vectorizers)
    plans = []
    for n, epoch in enumerate(epochs):
        plan = (batch_plan(english, italian, batch_size, bucket_width, seed, epoch) if shuffle else
                [np.arange(i, min(i + batch_size, len(english))) for i in range(0, len(english), batch_size)])
        plans.extend(plan[skip:] if n == 0 else plan)
    if not plans:
        raise ValueError("make_dataset: no batches to serve (empty data or skip past the end)")
    flat = np.concatenate(plans).astype(np.int64)
    ends = np.cumsum([len(p) for p in plans])
    starts = ends - np.array([len(p) for p in plans])
    en_len, it_len = (np.array(w) for w in zip(*(batch_widths(english, italian, p, bucket_width) for p in plans)))

    flat_t = tf.constant(flat)
    if isinstance(english, ShardedIds):      # sharded splits stay on disk: read each batch's rows on demand
        def gather(start, end, n_en, n_it):
            en, it = tf.numpy_function(lambda rows: (english[rows], italian[rows]), [flat_t[start:end]],
                                       (tf.int32, tf.int32), stateful=False)
            en.set_shape([None, english.shape[1]])
            it.set_shape([None, italian.shape[1]])
            return en[:, :n_en], it[:, :n_it]
    else:
        english_t, italian_t = tf.constant(english), tf.constant(italian)

        def gather(start, end, n_en, n_it):
            rows = flat_t[start:end]
            return tf.gather(english_t, rows)[:, :n_en], tf.gather(italian_t, rows)[:, :n_it]

    dataset = tf.data.Dataset.from_tensor_slices((starts, ends, en_len, it_len))
    return dataset.map(gather, num_parallel_calls=tf.data.AUTOTUNE, deterministic=True) \
                  .map(format_dataset).prefetch(tf.data.AUTOTUNE)


def _as_id_arrays(pairs: Any, vectorizers: Any) -> tuple[np.ndarray, np.ndarray]:
    if isinstance(pairs, tuple) and len(pairs) == 2 and isinstance(pairs[0], (np.ndarray, ShardedIds)):
        return pairs
    if vectorizers is None:
        raise ValueError("make_dataset: sentence pairs need `vectorizers` to turn them into ids")
    return (vectorizers.encode_english([en for en, _ in pairs]),
            vectorizers.encode_italian([it for _, it in pairs]))
