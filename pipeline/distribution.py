"""Data parallelism on the existing engines: the one place training asks how to spread its batches.

`train.distribute`:

- `none`: one device.
- `mirrored` (TensorFlow): `MirroredStrategy` over this machine's GPUs (or logical CPUs).
- `multi_worker` (TensorFlow): `MultiWorkerMirroredStrategy`, one process per machine (or per
  port), the cluster read from `TF_CONFIG`.
- `data_parallel` (JAX): `keras.distribution.DataParallel` over every visible device; across
  processes after `keras.distribution.initialize()` (the `KERAS_DISTRIBUTION_*` variables).

Every mode keeps the single-process global batch: each batch of the plan is cut by rows into one
piece per replica (TensorFlow), or padded to a multiple of the devices with all-padding rows that
change no loss or gradient and sharded by JAX. Only the chief (TensorFlow worker 0, JAX process 0)
writes the run directory; the other workers write theirs to a scratch directory they delete.
"""
from __future__ import annotations

import functools
import json
import os
import shutil
import tempfile
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, ContextManager

import numpy as np
import keras

from pipeline.config import Config
from pipeline.rundir import RunDir, run_path

TENSORFLOW_MODES = ("mirrored", "multi_worker")      # the other mode, data_parallel, is JAX


@dataclass
class Distribution:
    """How this process takes part in training: its strategy, replicas and rank."""
    mode: str = "none"
    replicas: int = 1            # replicas (devices) over all workers
    worker: int = 0              # this process's rank; 0 is the chief
    workers: int = 1
    strategy: Any = None         # tf.distribute.Strategy (TensorFlow modes)
    keras_distribution: Any = None   # keras.distribution.DataParallel (JAX)

    @property
    def is_chief(self) -> bool:
        return self.worker == 0

    @property
    def is_single(self) -> bool:
        """One device, one process: the batches and programs are the plain ones."""
        return self.mode == "none"

    def scope(self) -> ContextManager:
        """Where the model and optimizer must be created (or loaded)."""
        return self.strategy.scope() if self.strategy is not None else nullcontext()

    def prepare_model(self, model: keras.Model, sample_batch: Any) -> None:
        """Work around two Keras 3.15 defects of fit() on MultiWorkerMirroredStrategy with several workers.

        fit() builds the loss, metrics and optimizer state by averaging the first distributed batch over
        workers, which fails for dict inputs: build them here from a plain batch, under the strategy,
        and skip that step. It then averages each step's logs over workers along axis 0, which a scalar
        lacks (tensorflow/tensorflow#72388): give every log value that axis.
        """
        if self.strategy is None or self.workers == 1:
            return
        with self.strategy.scope():
            model._symbolic_build(data_batch=sample_batch)
        model._maybe_symbolic_build = lambda iterator=None, data_batch=None: None
        train_step, test_step = model.train_step, model.test_step
        model.train_step = lambda data: _with_batch_axis(train_step(data))
        model.test_step = lambda data: _with_batch_axis(test_step(data))

    def feed(self, batches: Any) -> Any:
        """This process's share of each global batch: a distributed tf.data dataset or a padded PyDataset."""
        if self.strategy is not None and self.replicas > 1:
            return _split_for_replicas(batches, self.strategy)
        if self.keras_distribution is not None:
            return PaddedBatches(batches, self.replicas, self.worker, self.workers)
        return batches

    def callbacks(self, config: Config, out_of_budget: Callable[[], bool]) -> list:
        """With several workers, a callback that stops them all at the same step (else they deadlock)."""
        return [StopTogether(self, out_of_budget, every_step=bool(config.train.max_minutes))] if self.workers > 1 else []

    def any_worker(self, flag: bool) -> bool:
        """True on every worker when `flag` is true on any of them (a collective: call it everywhere)."""
        if self.workers == 1:
            return bool(flag)
        if self.strategy is not None:
            return bool(self._tf_vote(float(flag)) > 0)
        from jax.experimental import multihost_utils
        return bool(np.any(multihost_utils.process_allgather(np.array(flag))))

    @functools.cached_property
    def _tf_vote(self) -> Callable:
        import tensorflow as tf

        @tf.function
        def vote(flag):
            votes = self.strategy.run(lambda: tf.identity(flag))
            return self.strategy.reduce(tf.distribute.ReduceOp.SUM, votes, axis=None)
        return vote

    def output_dir(self, config: Config, resume: bool, prepare: Callable[[], Path]) -> Path:
        """Where this process writes the run: the run directory (`prepare()` checks and makes it) on the chief, a
        scratch copy on any other worker (only the chief writes the run directory)."""
        return prepare() if self.is_chief else self.scratch_run_dir(config, resume)

    def attach(self, data: Any, model: keras.Model, sample_batch: Any) -> None:
        """Each split of `data` fed as this process's share of every batch, and the model placed on the devices."""
        data.feed = self.feed
        data.row_multiple = self.replicas if self.keras_distribution is not None else 1     # `PaddedBatches`
        self.prepare_model(model, sample_batch)

    def scratch_run_dir(self, config: Config, resume: bool) -> Path:
        """A non-chief worker's private run directory (TensorFlow's convention), seeded with the checkpoint to resume."""
        scratch = Path(tempfile.mkdtemp(prefix=f"nmt-worker{self.worker}-"))
        print(f"worker {self.worker} writes its copy of the run to {scratch} (deleted at the end)")
        run, copy = RunDir(run_path(config)), RunDir(scratch)
        if resume:
            if not run.checkpoint_dir.is_dir():
                raise FileNotFoundError(f"checkpoint {run.checkpoint_dir}: not found on worker {self.worker}; the run "
                                        "directory must be on a filesystem every worker can read to resume")
            shutil.copytree(run.checkpoint_dir, copy.checkpoint_dir)
            shutil.copyfile(run.config_file, copy.config_file)
        return scratch

    def finish(self, run_dir: Path) -> None:
        """Delete a non-chief worker's scratch run directory and unset a global Keras distribution."""
        if not self.is_chief:
            shutil.rmtree(run_dir, ignore_errors=True)
        if self.keras_distribution is not None:
            keras.distribution.set_distribution(None)


def setup_distribution(config: Config) -> Distribution:
    """Create the strategy (or Keras distribution) `train.distribute` names; call before any TensorFlow op."""
    mode, backend = config.train.distribute, keras.backend.backend()
    if mode == "none":
        return Distribution()
    wanted = "tensorflow" if mode in TENSORFLOW_MODES else "jax"
    if backend != wanted:
        other = "data_parallel" if backend == "jax" else "mirrored or multi_worker" if backend == "tensorflow" else None
        hint = f"; on {backend} use {other}" if other else f"; the {backend} backend has no data parallelism here"
        raise ValueError(f"config key 'train.distribute': {mode!r} needs the {wanted} backend, got {backend!r}{hint}")
    if mode == "data_parallel":
        return _jax_data_parallel(config)
    return _tensorflow_strategy(config)


def _tensorflow_strategy(config: Config) -> Distribution:
    import tensorflow as tf

    if config.train.distribute == "mirrored":
        strategy = tf.distribute.MirroredStrategy()
        worker, workers = 0, 1
    else:
        cluster = read_tf_config()
        strategy = tf.distribute.MultiWorkerMirroredStrategy()
        worker, workers = _tf_rank(cluster), max(1, len(cluster.get("cluster", {}).get("worker", [])) +
                                                  len(cluster.get("cluster", {}).get("chief", [])))
    replicas = strategy.num_replicas_in_sync
    print(f"distribute: {config.train.distribute}, {replicas} replicas, worker {worker} of {workers}; "
          f"global batch {config.train.batch_size} cut into {replicas} pieces")
    return Distribution(config.train.distribute, replicas, worker, workers, strategy=strategy)


def read_tf_config() -> dict:
    """The TF_CONFIG cluster description ({} when unset), checked enough to fail in one line."""
    raw = os.environ.get("TF_CONFIG", "")
    if not raw.strip():
        print("distribute: multi_worker without TF_CONFIG trains as one worker")
        return {}
    try:
        tree = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(f"environment variable TF_CONFIG: not valid JSON ({exc.msg} at character {exc.pos})") from None
    task = tree.get("task") if isinstance(tree, dict) else None
    cluster = tree.get("cluster") if isinstance(tree, dict) else None
    if not isinstance(cluster, dict) or not isinstance(task, dict) or not isinstance(task.get("index"), int) \
            or not isinstance(cluster.get(task.get("type")), list) or not 0 <= task["index"] < len(cluster[task["type"]]):
        raise ValueError('environment variable TF_CONFIG: expected {"cluster": {"worker": ["host:port", ...]}, '
                         f'"task": {{"type": "worker", "index": i}}}} with i < the number of workers, got {raw[:200]}')
    return tree


def _tf_rank(tree: dict) -> int:
    """Rank of this task: the chief (or worker 0 when there is no chief) is 0."""
    if not tree:
        return 0
    task, cluster = tree["task"], tree["cluster"]
    if task["type"] == "chief":
        return 0
    return task["index"] + len(cluster.get("chief", [])) if task["type"] == "worker" else -1


def _jax_data_parallel(config: Config) -> Distribution:
    import jax

    raw = os.environ.get("KERAS_DISTRIBUTION_NUM_PROCESSES", "").strip() or "1"
    if not raw.isdigit() or int(raw) < 1:
        raise ValueError(f"environment variable KERAS_DISTRIBUTION_NUM_PROCESSES: expected a positive integer, got {raw!r}")
    processes = int(raw)
    if processes > 1 and not jax.distributed.is_initialized():
        keras.distribution.initialize()        # reads KERAS_DISTRIBUTION_JOB_ADDRESSES / _PROCESS_ID
    devices = keras.distribution.list_devices()
    distribution = keras.distribution.DataParallel(devices=devices)
    keras.distribution.set_distribution(distribution)
    replicas, batch = len(devices), config.train.batch_size
    padding = f"; batches are padded to a multiple of {replicas} with masked rows" if batch % replicas else ""
    print(f"distribute: data_parallel over {replicas} devices ({', '.join(devices[:4])}"
          f"{', ...' if replicas > 4 else ''}), process {jax.process_index()} of {jax.process_count()}{padding}")
    return Distribution("data_parallel", replicas, jax.process_index(), jax.process_count(),
                        keras_distribution=distribution)


def _with_batch_axis(logs: dict) -> dict:
    return {name: keras.ops.reshape(value, (1,)) for name, value in logs.items()}


def _split_for_replicas(dataset: Any, strategy: Any) -> Any:
    """Cut each global batch of `dataset` by rows into one piece per replica; each worker keeps its pieces.

    Each piece carries a loss weight (its rows, 1) so that the replicas' losses add up to the global batch's
    token mean. Pieces differ by at most one row and keep the batch's width; a worker serves one piece per
    local replica for every global batch, so all workers run the same number of steps.
    """
    import tensorflow as tf

    def for_worker(context: tf.distribute.InputContext):
        total = context.num_replicas_in_sync
        local = total // context.num_input_pipelines
        first = context.input_pipeline_id * local

        def pieces(inputs, targets):
            rows = tf.shape(targets)[0]
            tokens = tf.maximum(tf.math.count_nonzero(targets, dtype=tf.float32), 1.0)

            def piece(replica):
                start, end = replica * rows // total, (replica + 1) * rows // total
                inputs_piece, targets_piece = tf.nest.map_structure(lambda t: t[start:end], (inputs, targets))
                # each replica's token mean, weighted by its share of the global batch's tokens: the replicas'
                # summed gradients are then exactly the global batch's (a piece may hold only padding rows)
                share = total * tf.math.count_nonzero(targets_piece, dtype=tf.float32) / tokens
                return inputs_piece, targets_piece, tf.fill([end - start, 1], share)
            return tf.data.Dataset.range(first, first + local, output_type=tf.int32).map(piece)
        split = dataset.flat_map(pieces)
        if dataset.cardinality() >= 0:      # a known length: Keras then stops validation without a warning
            split = split.apply(tf.data.experimental.assert_cardinality(dataset.cardinality() * local))
        return split.prefetch(tf.data.AUTOTUNE)

    return strategy.distribute_datasets_from_function(for_worker)


class PaddedBatches(keras.utils.PyDataset):
    """Batches padded with all-zero rows to a multiple of `devices`, then cut to this process's share.

    An all-zero row is padding everywhere (source, decoder input, target), so the masked loss,
    its gradient and the masked accuracy are those of the unpadded batch.
    """

    def __init__(self, batches: keras.utils.PyDataset, devices: int, process: int = 0, processes: int = 1):
        super().__init__()
        self.batches, self.devices, self.process, self.processes = batches, devices, process, processes

    def __len__(self) -> int:
        return len(self.batches)

    def __getitem__(self, index: int):
        return pad_rows(self.batches[index], self.devices, self.process, self.processes)

    def on_epoch_begin(self) -> None:
        self.batches.on_epoch_begin()

    def on_epoch_end(self) -> None:
        self.batches.on_epoch_end()


def padded_rows(rows: int, multiple: int) -> int:
    """`rows` rounded up to a multiple of `multiple`: a batch's rows once `pad_rows` has padded it."""
    return -(-rows // multiple) * multiple


def pad_rows(batch: Any, multiple: int, process: int = 0, processes: int = 1) -> Any:
    """Pad every array of `batch` with zero rows to a multiple of `multiple`, and keep `process`'s slice."""
    rows = len(keras.tree.flatten(batch)[0])
    padded = padded_rows(rows, multiple)
    share = padded // processes

    def pad(array):
        array = np.asarray(array)
        if padded > rows:
            array = np.concatenate([array, np.zeros((padded - rows, *array.shape[1:]), array.dtype)])
        return array[process * share:(process + 1) * share]
    return keras.tree.map_structure(pad, batch)


class StopTogether(keras.callbacks.Callback):
    """Stop every worker when any wants to: the time budget and early stopping are decided per worker.

    Runs after the Checkpointer; `every_step` only with a time budget (a step budget stops all
    workers at the same step anyway), and at every epoch end (early stopping, the budget).
    """

    def __init__(self, distribution: Distribution, out_of_budget: Callable[[], bool], every_step: bool):
        super().__init__()
        self.distribution, self.out_of_budget, self.every_step = distribution, out_of_budget, every_step

    def _agree(self) -> None:
        stop = self.model.stop_training or self.out_of_budget()
        self.model.stop_training = self.distribution.any_worker(stop)

    def on_step_dispatched(self, batch: int) -> None:
        """Each step, in the training loop's thread (`pipeline.training.StepCallbacks`): a collective, in the same
        order on every worker, that makes no step wait for its logs."""
        if self.every_step:
            self._agree()

    def on_epoch_end(self, epoch, logs=None):
        self._agree()
