"""Training: warm-up schedule, masked loss and accuracy, checkpoints, resume, the run directory.

A run directory is self-contained:

    config.yaml  vectorizers.pkl  model.keras  best.keras  history.json  logs/  checkpoint/

(`pipeline.rundir` owns that layout.)
"""
from __future__ import annotations

import functools
import importlib.util
import json
import math
import os
import shutil
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

import keras
import numpy as np

from pipeline.averaging import average_kept_checkpoints
from pipeline.compilation import (CompileLog, Precompiled, compile_log, enable_persistent_cache, precompile_jax,
                                  signature)
from pipeline.config import Config, save_config
from pipeline.datasets import (Batching, batch_plan, batch_shape, batch_shapes, example_batches, feeder, format_dataset,
                               load_split, mixture, sequence_lengths, split_corpora, steps_per_epoch, target_tokens)
from pipeline.distribution import Distribution, padded_rows, setup_distribution
from pipeline.extras import MissingExtra
from pipeline.finetune import check_child, start_from_parent
from pipeline.flops import bf16_peak, config_train_flops, device_name
from pipeline.io_utils import atomic_directory, atomic_file, atomic_write_json
from pipeline.model import Seq2SeqTransformer, build_model, count_parameters
from pipeline.objectives import MaskedAccuracy, MaskedSparseCrossEntropy, NoamSchedule
from pipeline.rundir import RunDir, VECTORIZERS_FILE, check_output_dir, config_differences, prepared_path, run_path
from pipeline.serializable import load_keras_file
from pipeline.vectorizers import load_vectorizers, vocabulary_sizes


def compile_model(model: keras.Model, config: Config, finetune: bool = False) -> keras.Model:
    """Adam on the warm-up/inverse-sqrt schedule: `train.warmup_steps`, peaking at `train.peak_learning_rate`
    (else Noam's d_model^-0.5 x warmup^-0.5 x `train.learning_rate_scale`); `finetune`: `finetune.*`'s."""
    k = config.train.accumulate_steps
    t, f = config.train, config.finetune
    warmup, peak = (f.warmup_steps, f.peak_learning_rate) if finetune else (t.warmup_steps, t.peak_learning_rate)
    scale = peak * math.sqrt(config.model.d_model * warmup) if peak else t.learning_rate_scale   # Noam peaks at `peak`
    schedule = NoamSchedule(config.model.d_model, warmup, scale, k)
    optimizer = keras.optimizers.Adam(schedule, beta_1=0.9, beta_2=0.98, epsilon=1e-9,
                                      gradient_accumulation_steps=k if k > 1 else None)
    model.compile(optimizer=optimizer,
                  loss=MaskedSparseCrossEntropy(config.train.label_smoothing),
                  metrics=[MaskedAccuracy()], jit_compile=jit_training(config))
    return model


def jit_training(config: Config) -> bool:
    """Whether the training step is one XLA program: `train.jit_compile`, and always on JAX, where the
    alternative is op-by-op dispatch (tiny on 2 CPU cores: about 1,030 small programs and 43 s of compiling)."""
    return bool(config.train.jit_compile or keras.backend.backend() == "jax")


class Precompile(keras.callbacks.Callback):
    """On JAX, before the first step: every training and validation program loaded from a previous run, or
    compiled side by side (`pipeline.compilation.precompile_jax`), and handed to the training loop."""

    def __init__(self, train_batches: list, test_batches: list):
        super().__init__()
        self.train_batches, self.test_batches = train_batches, test_batches
        self.done = Precompiled()

    def on_train_begin(self, logs=None):
        if not (self.train_batches or self.test_batches):    # once per run (train() may call fit twice)
            return
        self.done = precompile_jax(self.model, self.train_batches, self.test_batches)
        self.train_batches = self.test_batches = []
        if self.done.programs:
            print(f"training and validation programs: {self.done.compiled} compiled side by side, "
                  f"{self.done.loaded} loaded from earlier runs, in {self.done.seconds:.1f} s")


@dataclass
class TrainState:
    """Where training stands; saved with every checkpoint."""
    epoch: int = 0              # epochs completed
    step_in_epoch: int = 0      # batches done in the current epoch
    global_step: int = 0        # batches fed (an optimizer update is every train.accumulate_steps of them)
    best_val_loss: float | None = None
    best_epoch: int | None = None
    bad_epochs: int = 0
    seconds: float = 0.0        # training time so far, over all resumes (validation included)
    history: list[dict[str, float]] = field(default_factory=list)


def inference_copy(model: keras.Model) -> keras.Model:
    """The same weights in a fresh, uncompiled model (no optimizer state in the saved file)."""
    copy = Seq2SeqTransformer.from_config(model.get_config())
    copy.build()
    copy.set_weights(model.get_weights())
    return copy


class Checkpointer(keras.callbacks.Callback):
    """Checkpoints every N steps (`train.checkpoint_every_steps`) and at every epoch's end (unless
    `train.checkpoint_every_epoch` is false: then only where training stops); keeps the best model; stops early."""

    def __init__(self, run_dir: Path, config: Config, state: TrainState, steps_per_epoch: int | None = None):
        super().__init__()
        self.run_dir, self.config, self.state = run_dir, config, state
        self.steps_per_epoch = steps_per_epoch
        self._clock = time.perf_counter()
        self._copy: keras.Model | None = None      # the inference model, built once (`inference_model`)
        self._copy_step: int | None = None          # the step its weights are from
        self._saved: tuple | None = None            # where the last checkpoint stood (`save_checkpoint`)
        self.diverged_at: int | None = None         # the step whose weights were found not finite (`finite`)
        self._finite_step: int | None = None        # the last step whose weights were found finite
        self._due = False                           # a step checkpoint left for the epoch's end

    def set_model(self, model):
        if model is not getattr(self, "_model", None):
            self._copy = None
        super().set_model(model)

    def inference_model(self) -> keras.Model:
        """The model's weights in an uncompiled model (no optimizer state in what it saves): one model per run,
        its weights refreshed when a save finds a new step (weights changed outside a step are not seen).
        Building one for every save took 0.4-2.5 s each (Transformer-base, CPU)."""
        self._refresh()
        return self._copy

    def _refresh(self) -> list[np.ndarray] | None:
        """Bring the inference model to this step; the host copy of the weights it set, if it set any."""
        weights = None
        if self._copy is None:
            self._copy = inference_copy(self.model)
        elif self._copy_step != self.state.global_step:
            weights = self.model.get_weights()
            self._copy.set_weights(weights)
        self._copy_step = self.state.global_step
        return weights

    def _tick(self) -> None:
        now = time.perf_counter()
        self.state.seconds += now - self._clock
        self._clock = now

    def on_train_begin(self, logs=None):
        self._clock = time.perf_counter()

    def out_of_budget(self) -> bool:
        """True once `train.max_steps` (optimizer updates) or `train.max_minutes` is used up."""
        t = self.config.train
        return bool((t.max_steps and self.state.global_step >= t.max_steps * t.accumulate_steps)
                    or (t.max_minutes and self.state.seconds >= 60 * t.max_minutes))

    def finite(self) -> bool:
        """Whether the model's weights are all finite. A diverged run's are not (NaN or infinite, found on the
        inference model's host copy): then training stops, with one line, and nothing is saved from it, so
        the last checkpoint, `best.keras` and the kept weights stay those of the last finite step."""
        if self.diverged_at is None:
            if self._finite_step == self.state.global_step:
                return True                                          # checked at this step already
            weights = self._refresh()                                # one host copy, the one the refresh set
            if weights is None:                                      # the copy was fresh already
                weights = self._copy.get_weights()
            if all(np.isfinite(w).all() for w in weights if np.issubdtype(w.dtype, np.floating)):
                self._finite_step = self.state.global_step
                return True
            self.diverged_at = self.state.global_step
            print(f"training stopped: the weights at step {self.diverged_at:,} are not finite (NaN or infinite); "
                  f"nothing is saved from them: the last checkpoint and best.keras stand")
        self.model.stop_training = True
        return False

    def save_checkpoint(self) -> None:
        """The model, optimizer and data position (and this step's kept weights), unless the last checkpoint
        stands where training stands now (the end of training after an epoch's end: 629 MB for gpu.yaml) or
        the weights are not finite (`finite`)."""
        self._tick()
        run = RunDir(self.run_dir)
        where = (self.state.global_step, self.state.epoch, self.state.step_in_epoch, len(self.state.history))
        if (where == self._saved and run.checkpoint_state.exists()) or not self.finite():
            return
        with atomic_directory(run.checkpoint_dir) as tmp:
            self.model.save(tmp / run.checkpoint_model.name)
            atomic_write_json(tmp / run.checkpoint_state.name, asdict(self.state))
            self._keep_weights(run, tmp)
        self._saved = where

    def _keep_weights(self, run: RunDir, tmp: Path) -> None:
        """Carry the newest `train.keep_checkpoints` - 1 kept weights files into the new checkpoint
        directory `tmp` (hard links: no copying) and add this step's; older ones go with the old directory."""
        keep = self.config.train.keep_checkpoints
        if not keep:
            return
        current = run.kept_checkpoint(self.state.global_step)
        older = [path for path in run.kept_checkpoints() if path.name != current.name][-(keep - 1):] if keep > 1 else []
        for path in older:
            try:
                os.link(path, tmp / path.name)
            except OSError:          # a file system without hard links
                shutil.copyfile(path, tmp / path.name)
        self.inference_model().save_weights(tmp / current.name)    # the model's weights only: no optimizer

    def on_step_dispatched(self, batch: int) -> None:
        """After each batch, in the training loop's thread, without the batch's values (`StepCallbacks`)."""
        self.state.global_step += 1
        self.state.step_in_epoch += 1
        every = self.config.train.checkpoint_every_steps
        if every and self.state.global_step % every == 0:
            if self.steps_per_epoch and self.state.step_in_epoch >= self.steps_per_epoch:
                self._due = True     # the epoch's last batch: saved at its end, so no checkpoint is between epochs
            else:
                self.save_checkpoint()
        self._tick()
        if self.out_of_budget():
            self.model.stop_training = True

    def on_epoch_end(self, epoch, logs=None):
        logs = {k: float(v) for k, v in (logs or {}).items()}
        self._tick()
        partial = bool(self.steps_per_epoch) and self.state.step_in_epoch < self.steps_per_epoch
        if not partial:       # a budget stop mid-epoch is still evaluated, but the epoch stays open for --resume
            self.state.epoch, self.state.step_in_epoch = epoch + 1, 0
        entry = {"epoch": epoch + 1, "step": self.state.global_step, "seconds": round(self.state.seconds, 1), **logs}
        self.state.history.append({**entry, "partial": True} if partial else entry)
        val_loss = logs.get("val_loss")
        if (val_loss is not None and (self.state.best_val_loss is None or val_loss < self.state.best_val_loss)
                and self.finite()):
            self.state.best_val_loss, self.state.best_epoch, self.state.bad_epochs = val_loss, epoch + 1, 0
            best = RunDir(self.run_dir).model_file("best")
            with atomic_file(best, suffix=".keras") as tmp:
                self.inference_model().save(tmp)
        elif val_loss is not None:
            self.state.bad_epochs += 1
            patience = self.config.train.early_stopping_patience
            if patience and self.state.bad_epochs >= patience:
                print(f"early stopping: no validation-loss improvement for {patience} epochs")
                self.model.stop_training = True
        atomic_write_json(RunDir(self.run_dir).history_file, self.state.history)
        last = self.model.stop_training or epoch + 1 >= self.config.train.epochs      # training stops here
        if self.config.train.checkpoint_every_epoch or last or self._due:
            self.save_checkpoint()
        self._due = False


class CorpusValidation(keras.callbacks.Callback):
    """With several corpora, the validation after each epoch: each corpus's loss and accuracy, as `val_loss_<name>`
    and `val_masked_accuracy_<name>` in the epoch's logs (so in history.json), and from them `val_loss` and
    `val_masked_accuracy` of all the corpora's batches, which fit() no longer computes by evaluating every
    sentence a second time. Listed before every callback that reads the epoch's logs.

    `weights` (`TrainingData.validation_weights`) are each corpus's rows (as Keras weighs a batch's mean loss:
    by its rows, padding rows included, those JAX's data parallelism adds too) and target tokens (what the masked
    accuracy counts): `val_loss` is then what Keras's own validation gives for the corpora's batches evaluated
    together, and `val_masked_accuracy` their token-weighted accuracy."""

    def __init__(self, feeds: dict[str, Any], weights: dict[str, tuple[int, int]]):
        super().__init__()
        self.feeds, self.weights = feeds, weights

    def on_epoch_end(self, epoch, logs=None):
        if logs is None:
            return
        loss = accuracy = 0.0
        rows, tokens = (sum(weight[i] for weight in self.weights.values()) for i in (0, 1))
        for name, feed in self.feeds.items():
            result = self.model.evaluate(feed, verbose=0, return_dict=True)
            logs[f"val_loss_{name}"] = float(result["loss"])
            logs[f"val_masked_accuracy_{name}"] = float(result["masked_accuracy"])
            loss += self.weights[name][0] / rows * float(result["loss"])
            accuracy += self.weights[name][1] / max(tokens, 1) * float(result["masked_accuracy"])
        logs["val_loss"], logs["val_masked_accuracy"] = loss, accuracy


class StepCallbacks(keras.callbacks.CallbackList):
    """Keras's callback list, plus one hook: a callback's `on_step_dispatched(batch)` runs after each training
    batch in the training loop's own thread, without the batch's logs, before the other callbacks see them.

    Keras hands a batch's logs to `on_train_batch_end` as Python floats. Where every such callback is `async_safe`
    it converts them in a worker thread and the loop goes on at once, so the host dispatches the next steps while
    the device still runs this one; one callback that is not makes it convert them in the loop, which waits for
    each step to finish before it prepares the next (on a GPU the device then idles for the host's share of every
    step). Counting steps, the budget and periodic checkpoints need no values: here they keep their place in the
    loop (a budget stop before the next step, a checkpoint at an exact step) and cost the overlap nothing."""

    def on_train_batch_end(self, batch, logs=None):
        for callback in self.callbacks:
            if hasattr(callback, "on_step_dispatched"):
                callback.on_step_dispatched(batch)
        super().on_train_batch_end(batch, logs)


class StopOnNaN(keras.callbacks.TerminateOnNaN):
    """Keras's `TerminateOnNaN`, checked off the training loop's thread (`StepCallbacks`): training stops some
    steps after a NaN or infinite loss (those the host had dispatched ahead) rather than at it, and no step waits
    for its loss to be checked."""
    async_safe = True

    @property
    def model(self):
        # the model as set, without `Callback.model`'s JAX state sync: from a worker thread that sync would take
        # the loop's state mid-step (buffers the next step has already been handed, and donates)
        return self._model


class EpochProgress(keras.callbacks.ProgbarLogger):
    """Keras's progress bar (`verbose` 1 or 2), except that an epoch cut short by the budget (`train.max_steps`,
    `train.max_minutes`) ends at the steps it ran: Keras's own ends at the epoch's length, so 40 steps of a
    1,429-step epoch read "1429/1429 - 1ms/step", a step time 1,429/40 times too short. As in Keras's, the
    time is the epoch's wall time (its validation and saves included) over its steps."""
    async_safe = True     # as Keras's own bar: validation batches inside fit() stay asynchronous on JAX and torch

    def on_epoch_begin(self, epoch, logs=None):
        super().on_epoch_begin(epoch, logs)
        self.dispatched: int | None = None

    def on_step_dispatched(self, batch: int) -> None:
        # counted in the loop (`StepCallbacks`): the bar's own count is updated by worker threads in any order
        self.dispatched = batch + 1

    def on_epoch_end(self, epoch, logs=None):
        steps = self.seen if getattr(self, "dispatched", None) is None else self.dispatched
        if self.progbar is not None and self.target and steps < self.target:
            self.progbar.update(steps, list((logs or {}).items()), finalize=True)
            return
        super().on_epoch_end(epoch, logs)


# keys that only set how long training goes on or how often it saves: a resumed run may change them
RESUMABLE_CHANGES = {"train.epochs", "train.max_steps", "train.max_minutes", "train.checkpoint_every_steps",
                     "train.checkpoint_every_epoch", "train.early_stopping_patience", "train.keep_checkpoints",
                     "train.average_last", "train.final_bleu_sentences"}


def corpus_weights(config: Config, corpora: list[tuple[str, int, int]], prepared: Path) -> tuple:
    """`Batching.mixture` of the training split: the weights of `data.corpora`, by name (one corpus: none)."""
    if len(corpora) < 2:
        return ()
    weights = {c.name: c.weight for c in config.data.corpora}
    try:
        return mixture(corpora, weights)
    except ValueError as exc:
        raise ValueError(f"prepared data {prepared}: {exc}; run scripts/prepare.py with this config again") from None


def _prepare_run_dir(config: Config, resume: bool, overwrite: bool) -> Path:
    run = RunDir(check_output_dir(run_path(config), "run directory"))
    run_dir = run.path
    if resume and not run.checkpoint_state.is_file():
        raise FileNotFoundError(f"checkpoint {run.checkpoint_state}: not found; nothing to resume")
    if resume:
        differences = config_differences(run.load_config(), config)
        blocking = [d for d in differences if d.split(":")[0] not in RESUMABLE_CHANGES]
        if blocking:
            raise ValueError(f"run directory {run_dir}: --resume needs the config it was started with; "
                             f"differs in {'; '.join(blocking)}")
        for difference in differences:
            print(f"resuming with a changed budget: {difference}")
    if not resume and run_dir.exists() and any(run_dir.iterdir()):
        if not overwrite:
            raise FileExistsError(f"run directory {run_dir}: already exists; use --resume to continue it "
                                  "or --overwrite to start again")
        shutil.rmtree(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    return run_dir


def training_callbacks(config: Config, run_dir: Path, checkpointer: Checkpointer,
                       corpus_validation: CorpusValidation | None, distribution: Distribution,
                       precompile: Precompile | None = None,
                       verbose: int | str = 0) -> list[keras.callbacks.Callback]:
    """Every callback of a training run, in order: the programs readied (JAX), a NaN stop, per-corpus
    validation, the checkpointer, TensorBoard (TensorFlow), the workers' joint stop (several), the progress bar.
    Each is `async_safe` or has no per-batch hook (per-step work is `on_step_dispatched`), so on JAX and PyTorch
    no step waits for its logs (`StepCallbacks`; TensorFlow's Keras calls them in the loop whatever they are)."""
    callbacks = ([precompile] if precompile else []) + [StopOnNaN()]
    callbacks += ([corpus_validation] if corpus_validation else []) + [checkpointer]
    if keras.backend.backend() == "tensorflow" and importlib.util.find_spec("tensorboard"):
        callbacks.append(keras.callbacks.TensorBoard(log_dir=str(RunDir(run_dir).logs_dir), update_freq="epoch"))
    callbacks += distribution.callbacks(config, checkpointer.out_of_budget)       # after the checkpointer's count
    callbacks += [EpochProgress()] if verbose else []          # last: the epoch's logs are complete by then
    return callbacks


@dataclass
class TrainingData:
    """The prepared splits and how fit() takes them: the batch plans, and each split fed as `feed` (the
    distribution's) hands this process its share."""
    config: Config
    train_en: Any
    train_it: Any
    valid_en: Any
    valid_it: Any
    train_corpora: list[tuple[str, int, int]]
    valid_corpora: list[tuple[str, int, int]]
    batching: Batching
    feed: Callable[[Any], Any] = lambda batches: batches
    row_multiple: int = 1        # what `feed` pads each batch's rows to a multiple of (JAX's data parallelism)

    @classmethod
    def load(cls, config: Config) -> "TrainingData":
        """The prepared splits of `config`, checked against it; one-line errors name the prepared directory."""
        prepared = prepared_path(config)
        train_en, train_it = load_split(prepared, "train")
        valid_en, valid_it = load_split(prepared, "valid")
        if train_en.shape[1] != config.data.max_length:
            raise ValueError(f"prepared data {prepared}: made with data.max_length={train_en.shape[1]}, but the "
                             f"config says {config.data.max_length}; run scripts/prepare.py with this config again")
        train_corpora = split_corpora(prepared, "train", len(train_en))
        valid_corpora = [(name, a, b) for name, a, b in split_corpora(prepared, "valid", len(valid_en)) if b > a]
        batching = Batching.from_config(config.train, train_en, train_it,
                                        corpus_weights(config, train_corpora, prepared))
        return cls(config, train_en, train_it, valid_en, valid_it, train_corpora, valid_corpora, batching)

    @property
    def valid_batching(self) -> Batching:
        return replace(self.batching, accumulate_steps=1, mixture=())

    @functools.cached_property
    def epoch_steps(self) -> int:
        return steps_per_epoch(self.train_en, self.train_it, self.batching)

    @functools.cached_property
    def epoch_lengths(self) -> tuple[np.ndarray, np.ndarray]:
        """(source tokens, target tokens predicted) of every sentence an epoch's batches hold."""
        rows = np.concatenate(batch_plan(self.train_en, self.train_it, self.batching, self.config.seed, 0))
        return sequence_lengths(self.train_en)[rows], np.maximum(sequence_lengths(self.train_it) - 1, 0)[rows]

    def tokens_per_step(self) -> float:
        """Target tokens the model predicts per batch, on average over an epoch."""
        return float(self.epoch_lengths[1].sum()) / self.epoch_steps

    def flops_per_step(self, target_vocab: int) -> float:
        """Matmul FLOPs of a training step (`pipeline.flops`), on average over an epoch's non-padding tokens."""
        return config_train_flops(self.config, target_vocab, *self.epoch_lengths) / self.epoch_steps

    @property
    def validated_apart(self) -> bool:
        """Several corpora: each one's validation batches are evaluated on their own (`CorpusValidation`)."""
        return len(self.valid_corpora) > 1

    def _validation_parts(self) -> list[tuple[Any, Any]]:
        """The (source, target) arrays whose batches validation evaluates: each corpus's, or the whole split."""
        if self.validated_apart:
            return [(self.valid_en[a:b], self.valid_it[a:b]) for _, a, b in self.valid_corpora]
        return [(self.valid_en, self.valid_it)]

    def precompile(self) -> Precompile:
        """The callback that compiles every batch shape's training and validation program up front."""
        valid = [batch for en, it in self._validation_parts() for batch in example_batches(en, it, self.valid_batching)]
        unique = {signature(batch): batch for batch in valid}
        return Precompile(example_batches(self.train_en, self.train_it, self.batching), list(unique.values()))

    def shapes(self) -> set[tuple[int, int, int]]:
        """Every batch shape fit() will see, training and validation."""
        return batch_shapes(self.train_en, self.train_it, self.batching).union(
            *(batch_shapes(en, it, self.valid_batching) for en, it in self._validation_parts()))

    def training(self, first_epoch: int, skip: int = 0, end_epoch: int | None = None) -> Any:
        """Training batches from `first_epoch` (its first `skip` batches left out) to `end_epoch`."""
        return self.feed(feeder(self.train_en, self.train_it, self.batching, self.config.seed, first_epoch, skip,
                                end_epoch))

    def validation(self) -> Any | None:
        """The validation batches fit() evaluates after each epoch; None with several corpora, where
        `CorpusValidation` evaluates each corpus's batches instead (every sentence once)."""
        return None if self.validated_apart else self._fixed(self.valid_en, self.valid_it)

    def validation_by_corpus(self) -> dict[str, Any]:
        """Each corpus's validation batches, by name; {} with one corpus."""
        if not self.validated_apart:
            return {}
        return {name: self._fixed(self.valid_en[a:b], self.valid_it[a:b]) for name, a, b in self.valid_corpora}

    def validation_weights(self) -> dict[str, tuple[int, int]]:
        """Each corpus's (rows of its validation batches, padding rows included, those `feed` adds too; target
        tokens), by name: what Keras weighs a batch's mean loss by and what the masked accuracy counts
        (`CorpusValidation`)."""
        weights, multiple = {}, self.row_multiple
        for name, a, b in self.valid_corpora:
            en, it = self.valid_en[a:b], self.valid_it[a:b]
            plan = batch_plan(en, it, self.valid_batching, self.config.seed, 0)
            rows = [batch_shape(en, it, batch, self.valid_batching)[0] for batch in plan if len(batch)]
            weights[name] = (sum(padded_rows(n, multiple) for n in rows), target_tokens(it))
        return weights

    def _fixed(self, source: Any, target: Any) -> Any:
        return self.feed(feeder(source, target, self.valid_batching, self.config.seed, fixed=True))

    def describe_corpora(self) -> str | None:
        """`corpora (training pairs x weight): anki 307,664 x 1, ...`, or None with one corpus."""
        if len(self.train_corpora) < 2:
            return None
        weights = {start: weight for start, _, weight in self.batching.mixture}
        return "corpora (training pairs x weight): " + ", ".join(
            f"{name} {b - a:,} x {weights.get(a, 1.0):g}" for name, a, b in self.train_corpora)


def train(config: Config, resume: bool = False, overwrite: bool = False, verbose: int | str = "auto",
          init_from: str | Path | None = None, init_model: str = "best") -> dict[str, Any]:
    """Train `config` from its prepared data into `<workdir>/run`; returns the summary.

    `init_from` (a run directory) fine-tunes: the model starts from that run's `init_model` weights with a
    fresh optimizer on the `finetune.*` schedule, and the run records its parent in lineage.json (see
    `pipeline.finetune`). A resumed fine-tuning run needs no `init_from`: its checkpoint has it all.
    Distribution (`pipeline.distribution.Distribution`) owns the scope, the data's feed, the model's placement,
    its callbacks and which process writes the run.
    """
    if resume and init_from is not None:
        raise ValueError("--init-from starts a new run from a parent; --resume continues a run (its lineage is kept): "
                         "give one of them")
    data = TrainingData.load(config)
    if init_from is not None:
        check_child(config, init_from)
    distribution = setup_distribution(config)      # first: MultiWorkerMirroredStrategy must precede any TensorFlow op
    cache = enable_persistent_cache()
    run_dir = distribution.output_dir(config, resume, lambda: _prepare_run_dir(config, resume, overwrite))
    if config.train.mixed_precision != "none":
        keras.mixed_precision.set_global_policy(config.train.mixed_precision)
    keras.utils.set_random_seed(config.seed)
    with distribution.scope():
        model, state = _start_model(config, RunDir(run_dir), resume, init_from, init_model)
    distribution.attach(data, model, format_dataset(data.train_en[:2], data.train_it[:2]))

    valid, per_corpus = data.validation(), data.validation_by_corpus()
    if data.describe_corpora():
        print(data.describe_corpora())
    checkpointer = Checkpointer(run_dir, config, state, data.epoch_steps)
    checkpointer.set_model(model)          # fit sets it too, but a resume whose budget is spent never fits
    precompile = (data.precompile() if keras.backend.backend() == "jax" and cache and distribution.is_single
                  else Precompile([], []))
    corpus_validation = CorpusValidation(per_corpus, data.validation_weights()) if per_corpus else None
    callbacks = training_callbacks(config, run_dir, checkpointer, corpus_validation, distribution, precompile, verbose)
    start_step, started = state.global_step, time.perf_counter()
    with compile_log() as compiling:
        _fit(model, data, state, checkpointer, valid, callbacks, verbose)
    seconds = time.perf_counter() - started
    _save_final(config, run_dir, checkpointer, distribution.is_chief)
    summary = _summary(config, data, state, run_dir, state.global_step - start_step, seconds, compiling, precompile,
                       per_corpus, distribution.is_chief)
    distribution.finish(run_dir)
    return summary


def _start_model(config: Config, run: RunDir, resume: bool, init_from: str | Path | None,
                 init_model: str) -> tuple[keras.Model, TrainState]:
    """The compiled model and the training state: from the checkpoint (`resume`), else built (from a parent's
    weights with `init_from`), with the run's vectorizers and config written beside it."""
    if resume:
        model = load_keras_file(run.checkpoint_model, "checkpoint model", compile=True)
        state = TrainState(**json.loads(run.checkpoint_state.read_text()))
        print(f"resuming at epoch {state.epoch + 1}, step {state.global_step} "
              f"({state.step_in_epoch} batches into the epoch)")
        return model, state
    vectorizers = prepared_path(config) / VECTORIZERS_FILE
    prepared = load_vectorizers(vectorizers)
    if prepared.direction != config.data.direction:
        raise ValueError(f"{vectorizers}: the prepared data translates {prepared.direction.label}, but "
                         f"data.source_language/target_language ask for {config.data.direction.label}; "
                         "run scripts/prepare.py with this config again")
    model = build_model(config, len(prepared.source), len(prepared.target))
    if init_from is not None:
        print(f"{start_from_parent(model, run, init_from, init_model)}: warm-up "
              f"{config.finetune.warmup_steps} steps to a peak rate of {config.finetune.peak_learning_rate:g}")
    model = compile_model(model, config, finetune=init_from is not None)
    shutil.copyfile(vectorizers, run.vectorizers_file)
    save_config(config, run.config_file)
    print(f"model: {count_parameters(model):,} parameters; backend {keras.backend.backend()}")
    return model, TrainState()


def _save_final(config: Config, run_dir: Path, checkpointer: Checkpointer, is_chief: bool) -> None:
    """The last checkpoint, the final weights, the average of the last kept checkpoints (chief only) and, when no
    epoch ended with a validation, best = final."""
    run = RunDir(run_dir)
    checkpointer.save_checkpoint()
    if not checkpointer.finite():                   # diverged: nothing is written from its weights
        return
    checkpointer.inference_model().save(run.model_file("model"))        # the checkpoint's step: no new copy
    if config.train.average_last and is_chief:      # other workers write to scratch only
        print(average_kept_checkpoints(run_dir, config.train.average_last, at_most=True).describe())
    if not run.model_file("best").exists():
        shutil.copyfile(run.model_file("model"), run.model_file("best"))


def _summary(config: Config, data: TrainingData, state: TrainState, run_dir: Path, steps: int, seconds: float,
             compiling: CompileLog, precompile: Precompile, per_corpus: dict[str, Any], is_chief: bool) -> dict[str, Any]:
    """train_summary.json (written with the history): steps, throughput, compiling and the best epoch's scores."""
    run = RunDir(run_dir)
    atomic_write_json(run.history_file, state.history)
    target_size = vocabulary_sizes(prepared_path(config) / VECTORIZERS_FILE)[1]
    best = next((h for h in reversed(state.history) if h.get("epoch") == state.best_epoch), {})   # a resumed epoch's last
    summary = {"steps": steps, "total_steps": state.global_step, "epochs": state.epoch,
               "updates": state.global_step // data.batching.accumulate_steps, "batch_shapes": len(data.shapes()),
               "bucket_boundaries": list(data.batching.boundaries), "seconds": round(seconds, 1),
               "target_tokens_per_s": round(steps * data.tokens_per_step() / max(seconds, 1e-9)),
               **_throughput(data, target_size, compiling, precompile, steps, seconds),
               "best_val_loss": state.best_val_loss, "best_val_accuracy": best.get("val_masked_accuracy"),
               "best_epoch": state.best_epoch, "run_dir": str(run_path(config)), "backend": keras.backend.backend()}
    if per_corpus:
        summary["best_val_loss_by_corpus"] = {name: best.get(f"val_loss_{name}") for name in per_corpus}
    if run.lineage_file.is_file():
        summary["parent"] = run.load_lineage()["parent"]
    if config.train.final_bleu_sentences and is_chief and run.model_file("best").exists():
        summary["final_bleu"] = _final_bleu(config, run_dir)
    atomic_write_json(run.summary_file, summary)
    return summary


def _throughput(data: TrainingData, target_vocab: int, compiling: CompileLog, precompile: Precompile, steps: int,
                seconds: float) -> dict[str, Any]:
    """Compile time and program counts (`pipeline.compilation`), and the rate after compiling: target tokens/s,
    matmul TFLOP/s and, on a device whose peak is known, MFU (`pipeline.flops`)."""
    figures = {**compiling.summary(), "ready_programs_compiled": precompile.done.compiled,
               "ready_programs_loaded": precompile.done.loaded, "device": device_name()}
    if not compiling.measured or not steps:
        return figures
    after = max(seconds - compiling.seconds, 1e-9)
    flops = steps * data.flops_per_step(target_vocab) / after
    figures.update({"seconds_after_compiling": round(after, 1),
                    "target_tokens_per_s_after_compiling": round(steps * data.tokens_per_step() / after),
                    "matmul_tflops_per_s": round(flops / 1e12, 3)})
    peak = bf16_peak(figures["device"])
    if peak and data.config.train.mixed_precision != "none":
        figures["mfu"] = round(flops / peak, 4)
    return figures


def _fit(model: keras.Model, data: TrainingData, state: TrainState, checkpointer: Checkpointer, valid: Any,
         callbacks: list, verbose: int | str) -> None:
    """fit() from where `state` stands: the interrupted epoch's rest first, then whole epochs, within budget."""
    epochs, epoch_steps = data.config.train.epochs, data.epoch_steps

    def listed(last_epoch: int, steps: int) -> StepCallbacks:      # what fit() would list, with the step hook
        return StepCallbacks(callbacks, add_history=True, add_progbar=verbose != 0, model=model, verbose=verbose,
                             epochs=last_epoch, steps=steps)

    if state.step_in_epoch >= epoch_steps:      # every batch of the epoch trained, its end not reached: the next one
        state.epoch, state.step_in_epoch = state.epoch + 1, 0
    if state.step_in_epoch and state.epoch < epochs and not checkpointer.out_of_budget():   # finish the interrupted epoch first
        rest = epoch_steps - state.step_in_epoch
        model.fit(data.training(state.epoch, state.step_in_epoch),
                  validation_data=valid, epochs=state.epoch + 1, initial_epoch=state.epoch,
                  steps_per_epoch=rest, callbacks=listed(state.epoch + 1, rest), verbose=verbose, shuffle=False)
    if state.epoch < epochs and not model.stop_training and not checkpointer.out_of_budget():
        model.fit(data.training(state.epoch, 0, epochs),
                  validation_data=valid, epochs=epochs, initial_epoch=state.epoch, steps_per_epoch=epoch_steps,
                  callbacks=listed(epochs, epoch_steps), verbose=verbose, shuffle=False)


def _final_bleu(config: Config, run_dir: Path) -> dict[str, Any]:
    """sacreBLEU of the best model on each corpus's validation sentences (at most `train.final_bleu_sentences`
    each), at the run's decoding settings; {} with a note when the eval extra is missing."""
    from pipeline.evaluation import score_corpora
    from pipeline.translate import open_translator

    try:
        return score_corpora(open_translator(run_dir, "best"), prepared_path(config), "valid",
                             config.train.final_bleu_sentences)
    except MissingExtra as exc:
        print(f"final BLEU skipped: {exc}")
        return {}


def _compiling(summary: dict[str, Any]) -> str:
    if not summary.get("compile_measured"):
        return "compile time not measured on this backend"
    text = (f"compiling {summary['compile_seconds']:.1f} s ({summary['compiled_programs']} programs compiled, "
            f"{summary['programs_from_cache']} from the cache)")
    if "target_tokens_per_s_after_compiling" in summary:
        text += f", {summary['target_tokens_per_s_after_compiling']:,} target tokens/s after it"
    return text + (f", MFU {100 * summary['mfu']:.1f}%" if "mfu" in summary else "")


def format_summary(summary: dict[str, Any]) -> str:
    val = "n/a" if summary["best_val_loss"] is None else f"{summary['best_val_loss']:.4f}"
    acc = "n/a" if summary["best_val_accuracy"] is None else f"{100 * summary['best_val_accuracy']:.2f}%"
    lines = [f"{name}: valid BLEU {r['bleu']:.2f}, chrF {r['chrf']:.2f} on {r['sentences']:,} sentences (beam {r['beam']})"
             for name, r in summary.get("final_bleu", {}).items()]
    losses = summary.get("best_val_loss_by_corpus") or {}
    by_corpus = (" (" + ", ".join(f"{k} {v:.4f}" for k, v in losses.items() if v is not None) + ")") if losses else ""
    return "\n".join(lines + [
        f"trained {summary['steps']:,} steps ({summary['total_steps']:,} in all, {summary['epochs']} epochs) "
        f"in {summary['seconds']:.1f} s, {summary['target_tokens_per_s']:,} target tokens/s, "
        f"{summary['batch_shapes']} batch shapes, {_compiling(summary)}; "
        f"best val_loss {val}{by_corpus}, val accuracy {acc} (epoch {summary['best_epoch']}) -> {summary['run_dir']}"])
