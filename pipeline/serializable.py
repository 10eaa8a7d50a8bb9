"""The package's Keras-serializable classes (layers, model, schedule, loss, metric), registered on import so that
`keras.saving.load_model` can rebuild a saved run, and the loading of what a run holds: its `.keras` files
(`load_keras_file`, `load_model`) and, with its config and vectorizers, the whole run (`load_run`). The run
directory's layout is `pipeline.rundir`'s; Keras is this module's."""
from __future__ import annotations

import os
import zipfile
from pathlib import Path
from typing import Any, NamedTuple

import keras

from pipeline.config import Config
from pipeline.layers import (FeedForward, MultiHeadAttention, PositionalEmbedding, TransformerDecoderBlock,
                             TransformerEncoderBlock)
from pipeline.model import Seq2SeqTransformer
from pipeline.objectives import MaskedAccuracy, MaskedSparseCrossEntropy, NoamSchedule
from pipeline.rundir import RunDir

__all__ = ["FeedForward", "MultiHeadAttention", "PositionalEmbedding", "TransformerDecoderBlock",
           "TransformerEncoderBlock", "Seq2SeqTransformer", "MaskedAccuracy", "MaskedSparseCrossEntropy",
           "NoamSchedule", "LoadedRun", "load_keras_file", "load_model", "load_run"]


def load_keras_file(path: Path, what: str = "model file", compile: bool = False) -> Any:
    """`keras.saving.load_model` (the package's classes are registered) with one-line errors."""
    if not path.is_file():
        raise FileNotFoundError(f"{what} {path}: not found")
    if not zipfile.is_zipfile(path):     # Keras says "File not found" for a truncated or damaged file
        raise ValueError(f"{what} {path}: not a complete .keras file (its zip archive is truncated or damaged); "
                         "train again or use another model file")
    try:
        return keras.saving.load_model(path, compile=compile)
    except Exception as exc:
        raise ValueError(f"{what} {path}: cannot be loaded ({exc.__class__.__name__}: {str(exc)[:200]})") from None


def load_model(run_dir: str | os.PathLike, which: str = "best") -> Any:
    """Reload a trained Keras model from a run directory (`best`, final `model` or `averaged`), without its
    optimizer; no training code runs."""
    return load_keras_file(RunDir(run_dir).model_file(which), "model file")


class LoadedRun(NamedTuple):
    """What inference, export and the service read from a training run."""
    path: Path
    config: Config
    vectorizers: Any            # pipeline.vectorizers.Vectorizers
    model: Any                  # the Keras model


def load_run(run_dir: str | os.PathLike, which: str = "best") -> LoadedRun:
    """A run's config, vectorizers and `<which>.keras` model, with one-line errors naming the missing or
    unreadable file."""
    run = RunDir(run_dir).require()
    config, vectorizers = run.load_config(), run.load_vectorizers()
    return LoadedRun(run.path, config, vectorizers, load_model(run.path, which))
