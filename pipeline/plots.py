"""The tutorials' figures as PNG files (matplotlib is the optional 'plots' extra).

Every function writes one PNG of `figsize` inches at `DPI` (so its pixel size is known) and
returns its path; files are written to a temporary name first and renamed into place.
"""
from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Sequence

import numpy as np

from pipeline.extras import require
from pipeline.io_utils import atomic_write_bytes
from pipeline.layers import pos_enc_matrix
from pipeline.text import JOINER

DPI = 100


def _pyplot():
    matplotlib = require("matplotlib", "plots")
    matplotlib.use("Agg")                 # files only, no display needed
    return require("matplotlib.pyplot", "plots")


def _save(figure, path: str | Path) -> Path:
    buffer = io.BytesIO()
    try:
        figure.savefig(buffer, dpi=DPI, format="png")   # no bbox="tight": the pixel size stays figsize * DPI
    finally:
        _pyplot().close(figure)
    atomic_write_bytes(path, buffer.getvalue())
    return Path(path)


def plot_position_encoding(path: str | Path, length: int = 50, depth: int = 256) -> Path:
    """Heatmap of the sinusoidal position-encoding matrix, positions x dimensions."""
    plt = _pyplot()
    figure, axis = plt.subplots(figsize=(10, 5))
    image = axis.pcolormesh(pos_enc_matrix(length, depth), cmap="RdBu", vmin=-1, vmax=1)
    axis.set(xlabel="encoding dimension", ylabel="position in sequence",
             title=f"Sinusoidal position encoding ({length} positions x {depth} dimensions)")
    axis.invert_yaxis()
    figure.colorbar(image, ax=axis, label="value")
    figure.tight_layout()
    return _save(figure, path)


def plot_positional_embedding_outputs(path: str | Path, phrases: Sequence[str], vectorizers,
                                      embed_dim: int = 128, seed: int = 0) -> Path:
    """The PositionalEmbedding layer's output for each phrase, with learned (randomly initialised)
    position vectors in the top row and the fixed sinusoidal table in the bottom row."""
    import keras
    from pipeline.layers import PositionalEmbedding

    plt = _pyplot()
    ids = vectorizers.encode_source(phrases)
    length = max(int((ids != 0).sum(1).max()), 1)
    figure, axes = plt.subplots(2, len(phrases), figsize=(6 * len(phrases), 8), squeeze=False)
    vocab = len(vectorizers.source_vocabulary)
    for row, positional in enumerate(("learned", "sinusoidal")):
        keras.utils.set_random_seed(seed)       # same random token embeddings in both rows
        layer = PositionalEmbedding(ids.shape[1], vocab, embed_dim, positional=positional, scale_embeddings=False)
        outputs = keras.ops.convert_to_numpy(layer(ids[:, :length]))
        limit = float(np.abs(outputs).max())
        for column, phrase in enumerate(phrases):
            axis = axes[row, column]
            image = axis.pcolormesh(outputs[column], cmap="RdBu", vmin=-limit, vmax=limit)
            axis.set(xlabel="embedding dimension", ylabel="token position",
                     title=f"{positional} positions: {phrase!r}")
            axis.invert_yaxis()
            figure.colorbar(image, ax=axis, label="output value")
    figure.suptitle("PositionalEmbedding output (token embedding + position), untrained weights")
    figure.tight_layout()
    return _save(figure, path)


def plot_training_curves(path: str | Path, history_file: str | Path) -> Path:
    """Loss and masked accuracy, training and validation, against optimizer steps, from history.json."""
    history_file = Path(history_file)
    if not history_file.is_file():
        raise FileNotFoundError(f"history file {history_file}: not found")
    try:
        history = json.loads(history_file.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"history file {history_file}: not valid JSON ({exc})") from None
    if not isinstance(history, list) or not history:
        raise ValueError(f"history file {history_file}: expected a non-empty list of epoch records")
    plt = _pyplot()
    steps = [h["step"] for h in history]
    figure, (loss_axis, accuracy_axis) = plt.subplots(1, 2, figsize=(12, 4.5))
    for axis, key, label in ((loss_axis, "loss", "loss (label-smoothed cross-entropy)"),
                             (accuracy_axis, "masked_accuracy", "token accuracy (padding excluded)")):
        for prefix, style in (("", "o-"), ("val_", "s--")):
            values = [h.get(prefix + key) for h in history]
            if any(v is not None for v in values):
                axis.plot(steps, [np.nan if v is None else v for v in values], style,
                          label="validation" if prefix else "training")
        axis.set(xlabel="optimizer step", ylabel=label, title=label.split(" (")[0].capitalize())
        axis.grid(alpha=0.3)
        axis.legend()
    figure.suptitle(f"Training curves: {history_file.parent.parent.name}/{history_file.parent.name}")
    figure.tight_layout()
    return _save(figure, path)


def _display(token: str) -> str:
    return token.replace(JOINER, "") or token


def plot_cross_attention(path: str | Path, source_tokens: Sequence[str], output_tokens: Sequence[str],
                         weights: np.ndarray, layer: int = -1, languages: tuple[str, str] = ("English", "Italian")) -> Path:
    """Cross-attention of one translation (heads averaged, one layer) with the words on the axes.

    weights: (layers, heads, output tokens, source tokens), as `Translator.cross_attention` returns.
    languages: the run's (source, target) language names, for the axes.
    """
    plt = _pyplot()
    matrix = np.asarray(weights)[layer].mean(axis=0)                  # (output, source)
    figure, axis = plt.subplots(figsize=(8, 7))
    image = axis.imshow(matrix, cmap="viridis", vmin=0, vmax=1, aspect="auto")
    axis.set_xticks(range(len(source_tokens)), [_display(t) for t in source_tokens], rotation=45, ha="right")
    axis.set_yticks(range(len(output_tokens)), [_display(t) for t in output_tokens])
    axis.set(xlabel=f"{languages[0]} source token (key)", ylabel=f"{languages[1]} output token (query)")
    layers = np.asarray(weights).shape[0]
    axis.set_title(f"Cross-attention, decoder layer {layer % layers + 1} of {layers}, mean over heads")
    figure.colorbar(image, ax=axis, label="attention weight")
    figure.tight_layout()
    return _save(figure, path)
