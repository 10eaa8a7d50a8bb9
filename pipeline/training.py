"""Training: warm-up schedule, masked loss and accuracy, checkpoints, resume, the run directory.

A run directory is self-contained:

    config.yaml  vectorizers.pkl  model.keras  best.keras  history.json  logs/  checkpoint/

(`pipeline.rundir` owns that layout.)
"""
from __future__ import annotations

import importlib.util
import json
import os
import shutil
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import keras
from keras import ops

from pipeline.averaging import average_kept_checkpoints
from pipeline.config import Config, save_config
from pipeline.datasets import Batching, batch_shapes, feeder, format_dataset, load_split, steps_per_epoch, target_tokens
from pipeline.distribution import setup_distribution
from pipeline.io_utils import atomic_directory, atomic_write_json
from pipeline.model import Seq2SeqTransformer, build_model, count_parameters
from pipeline.objectives import MaskedAccuracy, MaskedSparseCrossEntropy, NoamSchedule
from pipeline.rundir import VECTORIZERS_FILE, RunDir, check_output_dir, config_differences, load_keras_file
from pipeline.vectorizers import vocabulary_sizes


def compile_model(model: keras.Model, config: Config) -> keras.Model:
    k = config.train.accumulate_steps
    schedule = NoamSchedule(config.model.d_model, config.train.warmup_steps, config.train.learning_rate_scale, k)
    optimizer = keras.optimizers.Adam(schedule, beta_1=0.9, beta_2=0.98, epsilon=1e-9,
                                      gradient_accumulation_steps=k if k > 1 else None)
    model.compile(optimizer=optimizer,
                  loss=MaskedSparseCrossEntropy(config.train.label_smoothing),
                  metrics=[MaskedAccuracy()], jit_compile=config.train.jit_compile)
    return model


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
    """Checkpoints every N steps and every epoch; keeps the best model; stops early."""

    def __init__(self, run_dir: Path, config: Config, state: TrainState, steps_per_epoch: int | None = None):
        super().__init__()
        self.run_dir, self.config, self.state = run_dir, config, state
        self.steps_per_epoch = steps_per_epoch
        self._clock = time.perf_counter()

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

    def save_checkpoint(self) -> None:
        self._tick()
        run = RunDir(self.run_dir)
        with atomic_directory(run.checkpoint_dir) as tmp:
            self.model.save(tmp / run.checkpoint_model.name)
            atomic_write_json(tmp / "state.json", asdict(self.state))
            self._keep_weights(run, tmp)

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
        inference_copy(self.model).save_weights(tmp / current.name)    # the model's weights only: no optimizer

    def on_train_batch_end(self, batch, logs=None):
        self.state.global_step += 1
        self.state.step_in_epoch += 1
        every = self.config.train.checkpoint_every_steps
        if every and self.state.global_step % every == 0:
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
        if val_loss is not None and (self.state.best_val_loss is None or val_loss < self.state.best_val_loss):
            self.state.best_val_loss, self.state.best_epoch, self.state.bad_epochs = val_loss, epoch + 1, 0
            best = RunDir(self.run_dir).model_file("best")
            inference_copy(self.model).save(best.with_name(".best.tmp.keras"))
            best.with_name(".best.tmp.keras").replace(best)
        elif val_loss is not None:
            self.state.bad_epochs += 1
            patience = self.config.train.early_stopping_patience
            if patience and self.state.bad_epochs >= patience:
                print(f"early stopping: no validation-loss improvement for {patience} epochs")
                self.model.stop_training = True
        atomic_write_json(RunDir(self.run_dir).history_file, self.state.history)
        self.save_checkpoint()


# keys that only set how long training goes on or how often it saves: a resumed run may change them
RESUMABLE_CHANGES = {"train.epochs", "train.max_steps", "train.max_minutes", "train.checkpoint_every_steps",
                     "train.early_stopping_patience", "train.keep_checkpoints", "train.average_last"}


def _prepare_run_dir(config: Config, resume: bool, overwrite: bool) -> Path:
    run = RunDir(check_output_dir(config.run_dir, "run directory"))
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


def _callbacks(config: Config, run_dir: Path, checkpointer: Checkpointer) -> list:
    callbacks = [keras.callbacks.TerminateOnNaN(), checkpointer]
    if keras.backend.backend() == "tensorflow" and importlib.util.find_spec("tensorboard"):
        callbacks.append(keras.callbacks.TensorBoard(log_dir=str(RunDir(run_dir).logs_dir), update_freq="epoch"))
    return callbacks


def train(config: Config, resume: bool = False, overwrite: bool = False, verbose: int | str = "auto") -> dict[str, Any]:
    """Train `config` from its prepared data into `<workdir>/run`; returns the summary."""
    prepared = config.prepared_dir
    train_en, train_it = load_split(prepared, "train")
    valid_en, valid_it = load_split(prepared, "valid")
    en_size, it_size = vocabulary_sizes(prepared / VECTORIZERS_FILE)
    if train_en.shape[1] != config.data.max_length:
        raise ValueError(f"prepared data {prepared}: made with data.max_length={train_en.shape[1]}, but the config "
                         f"says {config.data.max_length}; run scripts/prepare.py with this config again")
    distribution = setup_distribution(config)      # first: MultiWorkerMirroredStrategy must precede any TensorFlow op
    run_dir = (_prepare_run_dir(config, resume, overwrite) if distribution.is_chief
               else distribution.scratch_run_dir(config, resume))   # only the chief writes the run directory
    run = RunDir(run_dir)
    if config.train.mixed_precision != "none":
        keras.mixed_precision.set_global_policy(config.train.mixed_precision)
    keras.utils.set_random_seed(config.seed)

    with distribution.scope():
        if resume:
            model = load_keras_file(run.checkpoint_model, "checkpoint model", compile=True)
            state = TrainState(**json.loads(run.checkpoint_state.read_text()))
            print(f"resuming at epoch {state.epoch + 1}, step {state.global_step} "
                  f"({state.step_in_epoch} batches into the epoch)")
        else:
            model = compile_model(build_model(config, en_size, it_size), config)
            state = TrainState()
            shutil.copyfile(prepared / VECTORIZERS_FILE, run.vectorizers_file)
            save_config(config, run.config_file)
            print(f"model: {count_parameters(model):,} parameters; backend {keras.backend.backend()}")
    distribution.prepare_model(model, format_dataset(train_en[:2], train_it[:2]))

    batching = Batching.from_config(config.train, train_en, train_it)
    valid_batching = replace(batching, accumulate_steps=1)
    epoch_steps = steps_per_epoch(train_en, train_it, batching)
    tokens_per_step = target_tokens(train_it) / epoch_steps
    shapes = batch_shapes(train_en, train_it, batching) | batch_shapes(valid_en, valid_it, valid_batching)
    valid = distribution.feed(feeder(valid_en, valid_it, valid_batching, config.seed, fixed=True))
    checkpointer = Checkpointer(run_dir, config, state, epoch_steps)
    callbacks = _callbacks(config, run_dir, checkpointer) + distribution.callbacks(config, checkpointer.out_of_budget)
    epochs, start_step = config.train.epochs, state.global_step
    started = time.perf_counter()
    if state.step_in_epoch and state.epoch < epochs and not checkpointer.out_of_budget():   # finish the interrupted epoch first
        model.fit(distribution.feed(feeder(train_en, train_it, batching, config.seed, state.epoch, state.step_in_epoch)),
                  validation_data=valid, epochs=state.epoch + 1, initial_epoch=state.epoch,
                  steps_per_epoch=epoch_steps - state.step_in_epoch, callbacks=callbacks, verbose=verbose, shuffle=False)
    if state.epoch < epochs and not model.stop_training and not checkpointer.out_of_budget():
        model.fit(distribution.feed(feeder(train_en, train_it, batching, config.seed, state.epoch, 0, epochs)),
                  validation_data=valid, epochs=epochs, initial_epoch=state.epoch, steps_per_epoch=epoch_steps,
                  callbacks=callbacks, verbose=verbose, shuffle=False)
    seconds = time.perf_counter() - started
    checkpointer.save_checkpoint()
    inference_copy(model).save(run.model_file("model"))
    if config.train.average_last and distribution.is_chief:      # other workers write to scratch only
        print(average_kept_checkpoints(run_dir, config.train.average_last, at_most=True).describe())
    if not run.model_file("best").exists():
        shutil.copyfile(run.model_file("model"), run.model_file("best"))
    atomic_write_json(run.history_file, state.history)
    steps = state.global_step - start_step
    best = next((h for h in state.history if h.get("epoch") == state.best_epoch), {})
    summary = {"steps": steps, "total_steps": state.global_step, "epochs": state.epoch,
               "updates": state.global_step // batching.accumulate_steps, "batch_shapes": len(shapes),
               "bucket_boundaries": list(batching.boundaries),
               "seconds": round(seconds, 1), "target_tokens_per_s": round(steps * tokens_per_step / max(seconds, 1e-9)),
               "best_val_loss": state.best_val_loss, "best_val_accuracy": best.get("val_masked_accuracy"),
               "best_epoch": state.best_epoch, "run_dir": str(config.run_dir), "backend": keras.backend.backend()}
    atomic_write_json(run.summary_file, summary)
    distribution.finish(run_dir)
    return summary


def format_summary(summary: dict[str, Any]) -> str:
    val = "n/a" if summary["best_val_loss"] is None else f"{summary['best_val_loss']:.4f}"
    acc = "n/a" if summary["best_val_accuracy"] is None else f"{100 * summary['best_val_accuracy']:.2f}%"
    return (f"trained {summary['steps']:,} steps ({summary['total_steps']:,} in all, {summary['epochs']} epochs) "
            f"in {summary['seconds']:.1f} s, {summary['target_tokens_per_s']:,} target tokens/s, "
            f"{summary['batch_shapes']} batch shapes; "
            f"best val_loss {val}, val accuracy {acc} (epoch {summary['best_epoch']}) -> {summary['run_dir']}")


def load_model(run_dir: str | Path, which: str = "best") -> keras.Model:
    """Reload a trained model from a run directory (`best` or final `model`); no training code runs."""
    return RunDir(run_dir).load_model(which)
