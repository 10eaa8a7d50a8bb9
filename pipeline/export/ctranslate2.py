"""CTranslate2 export: `export_ctranslate2(run, out)` writes a directory that `pipeline.translate`'s
CTranslate2 engine (or CTranslate2 itself) translates with, in the run's direction (the source side is the
encoder's, the target side the decoder's).

The export fills CTranslate2's `TransformerSpec` from the trained Keras layers (the only step
that loads Keras) and writes a self-contained directory:

| file | contents |
| --- | --- |
| `model.bin`, `config.json` | the CTranslate2 model (float32, int16, int8, ... weights) |
| `source_vocabulary.json`, `target_vocabulary.json` (or `shared_vocabulary.json`) | our vocabularies, id for id |
| `vectorizers.pkl`, `config.yaml` | the run's tokenizers and config: the directory alone translates text |
| `sentencepiece.model` (joint) or `source.spm.model` + `target.spm.model` | SentencePiece runs only |
| `pipeline.json` | export format, direction (source, target language), weights fingerprint, quantization, positions |

The engine's beam search is CTranslate2's, re-ranked as ours ranks (`pipeline.translate.ct2_engine`).
"""
from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from pipeline.extras import require
from pipeline.io_utils import atomic_directory, atomic_write_json
from pipeline.rundir import (CONFIG_FILE, CT2_MODEL_FILE, CT2_SETTINGS_FILE, VECTORIZERS_FILE, RunDir,
                             check_output_dir, weights_fingerprint)
from pipeline.vectorizers import Vectorizers

EXTRA = "ctranslate2"
QUANTIZATIONS = ("float32", "int16", "int8", "int8_float32", "int8_float16", "int8_bfloat16", "float16", "bfloat16")
EXPORT_FORMAT = 1
LAYER_NORM_EPSILON = 1e-6
ACTIVATIONS = {"relu": "RELU", "gelu": "GELU"}        # Keras name -> ctranslate2.specs.Activation member


class CTranslate2ExportError(ValueError):
    """A model or export directory CTranslate2 cannot use; the message names the option or file."""


# -- export (loads Keras) ---------------------------------------------------------------------------------------
def export_ctranslate2(run_dir: str | Path, out_dir: str | Path, quantization: str = "float32",
                       which: str = "best", positions: int | None = None) -> Path:
    """Convert `RUN/<which>.keras` into a CTranslate2 model directory at `out_dir` (written atomically).
    `positions`: see `transformer_spec`."""
    if quantization not in QUANTIZATIONS:
        raise CTranslate2ExportError(f"quantization {quantization!r}: expected one of {', '.join(QUANTIZATIONS)}")
    require("ctranslate2", EXTRA)
    run = RunDir(run_dir).require()
    run.load_config()                                   # a readable config travels with the export
    vectorizers = run.load_vectorizers()
    out_dir = check_output_dir(out_dir, "export directory")
    from pipeline.serializable import load_model     # Keras: conversion only

    spec = transformer_spec(load_model(run.path, which), vectorizers, positions)
    spec.validate()
    spec.optimize(quantization=quantization)
    with atomic_directory(out_dir) as tmp:
        spec.save(str(tmp))
        shutil.copyfile(run.vectorizers_file, tmp / VECTORIZERS_FILE)
        shutil.copyfile(run.config_file, tmp / CONFIG_FILE)
        _write_sentencepiece_models(vectorizers, tmp)
        direction = vectorizers.direction
        atomic_write_json(tmp / CT2_SETTINGS_FILE, {
            "format": EXPORT_FORMAT, "source_language": direction.source, "target_language": direction.target,
            "weights": weights_fingerprint(run.model_file(which)), "quantization": quantization,
            "position_table": int(spec.decoder.position_encodings.encodings.shape[0]),
            "tokenizer": vectorizers.target.kind, "joint_vocabulary": vectorizers.joint})
    return out_dir


def transformer_spec(model, vectorizers: Vectorizers, positions: int | None = None):
    """A filled, unvalidated `ctranslate2.specs.TransformerSpec` for our `Seq2SeqTransformer`.

    `positions`: give each position table at least this many rows (CTranslate2 raises on a position past
    the table, for callers that set no length limit): a sinusoidal table is continued by its formula, a
    learned one repeats its last row. None keeps the model's own tables."""
    specs = require("ctranslate2.specs", EXTRA)
    activation = _check_supported(model)
    spec = specs.TransformerSpec.from_config(
        (len(model.encoder_blocks), len(model.decoder_blocks)), model.num_heads, pre_norm=model.norm_first,
        activation=getattr(specs.Activation, activation))
    source, target = vectorizers.source, vectorizers.target
    if target.start_id is None or target.end_id is None:
        raise CTranslate2ExportError("the target vocabulary has no start/end tokens")
    spec.config.unk_token = target.vocabulary[target.unk_id]
    spec.config.bos_token = spec.config.decoder_start_token = target.vocabulary[target.start_id]
    spec.config.eos_token = target.vocabulary[target.end_id]
    spec.config.layer_norm_epsilon = LAYER_NORM_EPSILON
    spec.register_source_vocabulary(list(source.vocabulary))
    spec.register_target_vocabulary(list(target.vocabulary))

    _set_embeddings(spec.encoder, model.source_embedding, positions)
    _set_embeddings(spec.decoder, model.target_embedding, positions)
    for layer_spec, block in zip(spec.encoder.layer, model.encoder_blocks):
        _set_attention(layer_spec.self_attention, block.self_attention, block.attention_norm, self_attention=True)
        _set_feed_forward(layer_spec.ffn, block)
    for layer_spec, block in zip(spec.decoder.layer, model.decoder_blocks):
        _set_attention(layer_spec.self_attention, block.self_attention, block.self_norm, self_attention=True)
        _set_attention(layer_spec.attention, block.cross_attention, block.cross_norm, self_attention=False)
        _set_feed_forward(layer_spec.ffn, block)
    if model.norm_first:      # pre-LN: each stack ends with a layer norm
        _set_norm(spec.encoder.layer_norm, model.encoder_norm)
        _set_norm(spec.decoder.layer_norm, model.decoder_norm)
    if model.output_projection is None:   # tied: the target embedding table and a float32 bias
        spec.decoder.projection.weight = spec.decoder.embeddings.weight
        spec.decoder.projection.bias = _numpy(model.output_bias)
    else:
        _set_dense(spec.decoder.projection, model.output_projection)
    return spec


def _numpy(variable) -> np.ndarray:
    import keras
    return np.asarray(keras.ops.convert_to_numpy(variable), dtype=np.float32)


def _check_supported(model) -> str:
    """Refuse, in one line naming it, a model option CTranslate2's TransformerSpec cannot express;
    return the feed-forward activation's ctranslate2 name."""
    from pipeline.model import Seq2SeqTransformer

    if not isinstance(model, Seq2SeqTransformer):
        raise CTranslate2ExportError(f"model class {type(model).__name__}: only Seq2SeqTransformer converts")
    blocks = [*model.encoder_blocks, *model.decoder_blocks]
    names = {getattr(b.feed_forward.inner.activation, "__name__", str(b.feed_forward.inner.activation))
             for b in blocks}
    unsupported = sorted(names - set(ACTIVATIONS))
    if unsupported or len(names) > 1:
        raise CTranslate2ExportError(f"feed-forward activation {', '.join(sorted(names))}: CTranslate2's "
                                     f"TransformerSpec takes one of {', '.join(ACTIVATIONS)} for every layer")
    norms = [n for b in blocks for n in (b.ff_norm, getattr(b, "attention_norm", None), getattr(b, "self_norm", None),
                                         getattr(b, "cross_norm", None)) if n is not None]
    for norm in norms + [n for n in (model.encoder_norm, model.decoder_norm) if n is not None]:
        if not math.isclose(norm.epsilon, LAYER_NORM_EPSILON) or getattr(norm, "rms_scaling", False):
            raise CTranslate2ExportError(
                f"layer norm {norm.name} (epsilon {norm.epsilon}, rms_scaling {getattr(norm, 'rms_scaling', False)})"
                f": CTranslate2 uses one epsilon ({LAYER_NORM_EPSILON}) for every standard layer norm")
    for block in blocks:
        for attention in ([block.self_attention] + ([block.cross_attention] if hasattr(block, "cross_attention")
                                                     else [])):
            if attention.num_heads * attention.key_dim != model.d_model:
                raise CTranslate2ExportError(f"attention {attention.name}: heads x key_dim = "
                                             f"{attention.num_heads * attention.key_dim}, CTranslate2 needs d_model "
                                             f"{model.d_model}")
    return ACTIVATIONS[names.pop()]


def _set_dense(spec, dense) -> None:
    spec.weight = _numpy(dense.kernel).T                  # Keras (in, out) -> CTranslate2 (out, in)
    if dense.use_bias:
        spec.bias = _numpy(dense.bias)


def _set_fused(spec, denses: Sequence) -> None:
    """One linear layer from several Dense layers over the same input (fused q/k/v, or k/v)."""
    spec.weight = np.concatenate([_numpy(d.kernel).T for d in denses])
    spec.bias = np.concatenate([_numpy(d.bias) if d.use_bias else np.zeros(d.units, np.float32) for d in denses])


def _set_norm(spec, norm) -> None:
    dim = norm.gamma.shape[-1] if norm.scale else norm.beta.shape[-1]
    spec.gamma = _numpy(norm.gamma) if norm.scale else np.ones(dim, np.float32)
    spec.beta = _numpy(norm.beta) if norm.center else np.zeros(dim, np.float32)


def _set_attention(spec, attention, norm, self_attention: bool) -> None:
    """Self-attention: linear[0] = q|k|v; cross-attention: linear[0] = q, linear[1] = k|v; last = output."""
    if self_attention:
        _set_fused(spec.linear[0], [attention.query_dense, attention.key_dense, attention.value_dense])
    else:
        _set_dense(spec.linear[0], attention.query_dense)
        _set_fused(spec.linear[1], [attention.key_dense, attention.value_dense])
    _set_dense(spec.linear[-1], attention.output_dense)
    _set_norm(spec.layer_norm, norm)         # applied before (pre-LN) or after the residual (post-LN)


def _set_feed_forward(spec, block) -> None:
    _set_dense(spec.linear_0, block.feed_forward.inner)
    _set_dense(spec.linear_1, block.feed_forward.outer)
    _set_norm(spec.layer_norm, block.ff_norm)


def _set_embeddings(spec, embedding, positions: int | None = None) -> None:
    """Token table, sqrt(d) scaling, and our position table (sinusoidal or learned) given explicitly."""
    embeddings = spec.embeddings[0] if isinstance(spec.embeddings, list) else spec.embeddings
    embeddings.weight = _numpy(embedding.token_embedding.embeddings)
    spec.scale_embeddings = bool(embedding.scale_embeddings)
    learned = embedding.position_embedding is not None
    table = _numpy(embedding.position_embedding.embeddings if learned else embedding.table)   # (sequence_length, d)
    if positions is not None and positions > len(table):
        if learned:
            table = np.concatenate([table, np.repeat(table[-1:], positions - len(table), axis=0)])
        else:
            from pipeline.layers import pos_enc_matrix
            table = np.concatenate([table, pos_enc_matrix(positions, table.shape[1])[len(table):]])
    spec.position_encodings.encodings = table


def _write_sentencepiece_models(vectorizers: Vectorizers, out_dir: Path) -> None:
    if vectorizers.source.kind != "sentencepiece" and vectorizers.target.kind != "sentencepiece":
        return
    if vectorizers.joint:
        (out_dir / "sentencepiece.model").write_bytes(vectorizers.source.model_proto)
        return
    for name, tokenizer in (("source", vectorizers.source), ("target", vectorizers.target)):
        if tokenizer.kind == "sentencepiece":
            (out_dir / f"{name}.spm.model").write_bytes(tokenizer.model_proto)


# -- reading an export (no Keras) ----------------------------------------------------------------------------
def read_export_settings(model_dir: Path) -> dict[str, Any]:
    """The export's `pipeline.json` (format, direction, weights fingerprint, quantization, position table; exports
    written before directions were recorded have no direction, and are English -> Italian); one-line errors."""
    path = model_dir / CT2_SETTINGS_FILE
    if not path.is_file():
        raise FileNotFoundError(f"CTranslate2 export {model_dir}: {CT2_SETTINGS_FILE} not found; write one with "
                                "scripts/export.py --format ctranslate2")
    try:
        settings = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise CTranslate2ExportError(f"CTranslate2 export file {path}: unreadable ({exc})") from None
    if not isinstance(settings, dict) or settings.get("format") != EXPORT_FORMAT:
        raise CTranslate2ExportError(f"CTranslate2 export file {path}: expected format {EXPORT_FORMAT}, "
                                     f"got {settings.get('format') if isinstance(settings, dict) else settings!r}")
    return settings


def export_is_current(export_dir: Path, weights: Path) -> bool:
    """Whether `export_dir` is a float32 export of exactly the weights file `weights`."""
    try:
        settings = read_export_settings(export_dir)
    except (FileNotFoundError, ValueError):
        return False
    return (export_dir / CT2_MODEL_FILE).is_file() and settings.get("weights") == weights_fingerprint(weights) \
        and settings.get("quantization") == "float32"
