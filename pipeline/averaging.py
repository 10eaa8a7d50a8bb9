"""Checkpoint averaging, as practised with Marian and OpenNMT: one model whose weights are the mean of the
last N kept checkpoints' (`train.keep_checkpoints`), usually a little better than any one of them."""
from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from pipeline.io_utils import atomic_file
from pipeline.rundir import RunDir, RunDirectoryError, check_output_file


@dataclass(frozen=True)
class AveragingResult:
    """What `average_kept_checkpoints` wrote: the model file and the steps of the checkpoints averaged."""
    path: Path
    steps: list[int]

    def describe(self) -> str:
        return (f"averaged {len(self.steps)} checkpoint(s) (steps {', '.join(map(str, self.steps))}) "
                f"-> {self.path}")


def average_weights(model, files: list[Path]) -> list[np.ndarray]:
    """The elementwise mean of every float variable over the weights `files` (oldest first) of `model`'s
    architecture, summed in float64 and cast back to the variable's dtype (so float16/bfloat16 are safe);
    any other variable is taken from the newest file. Leaves `model` holding the newest file's weights."""
    import keras

    floats = ["float" in keras.backend.standardize_dtype(v.dtype) for v in model.weights]
    totals: list[np.ndarray] | None = None
    for path in files:
        try:
            model.load_weights(path)
        except Exception as exc:
            first_line = (str(exc).strip().splitlines() or [exc.__class__.__name__])[0]
            raise ValueError(f"kept checkpoint {path}: does not fit the run's model ({first_line[:200]})") from None
        values = model.get_weights()
        if totals is None:
            totals = [v.astype(np.float64) if f else v for v, f in zip(values, floats)]
        else:
            totals = [t + v.astype(np.float64) if f else v for t, v, f in zip(totals, values, floats)]
    if totals is None:
        raise ValueError("average_weights needs at least one weights file")
    return [(t / len(files)).astype(v.dtype) if f else t for t, v, f in zip(totals, values, floats)]


def average_kept_checkpoints(run_dir: str | os.PathLike, last: int | None = None, out: str | os.PathLike | None = None,
                             at_most: bool = False) -> AveragingResult:
    """Average the run's last `last` kept checkpoints (all of them if None) into `out` (default RUN/averaged.keras),
    a model that loads and translates like best.keras. With `at_most`, fewer kept checkpoints are averaged
    instead of refused (the end-of-training `train.average_last`)."""
    run = RunDir(run_dir).require()
    if last is not None and last < 1:
        raise ValueError(f"--last must be >= 1, got {last}")
    out = check_output_file(out, "averaged model file") if out else run.model_file("averaged")
    if out.suffix != ".keras":
        raise ValueError(f"averaged model file {out}: must end in .keras")
    kept = run.kept_checkpoints()
    if not kept:
        raise RunDirectoryError(f"run directory {run.path}: no kept checkpoints in {run.checkpoint_dir} "
                                "(train.keep_checkpoints was 0, or the run predates it)")
    last = len(kept) if last is None else last
    if last > len(kept) and not at_most:
        raise ValueError(f"run directory {run.path}: cannot average the last {last} checkpoints, only {len(kept)} "
                         f"kept in {run.checkpoint_dir} (steps {', '.join(str(RunDir.kept_step(p)) for p in kept)})")
    files = kept[-last:]
    model = _architecture(run)
    model.set_weights(average_weights(model, files))
    with atomic_file(out, suffix=".keras") as tmp:
        model.save(tmp)
    return AveragingResult(out, [RunDir.kept_step(p) for p in files])


def _architecture(run: RunDir):
    """A model of the run's architecture and dtype policies, from the smallest of its saved models."""
    for path in (run.model_file("best"), run.model_file("model"), run.checkpoint_model):
        if path.is_file():
            from pipeline.serializable import load_keras_file
            return load_keras_file(path, "model file")
    raise RunDirectoryError(f"run directory {run.path}: no best.keras, model.keras or {run.checkpoint_model.name} "
                            "to take the architecture from")
