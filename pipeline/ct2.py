"""CTranslate2 export and inference: `export_ctranslate2(run, out)` and `CTranslate2Translator`.

The export fills CTranslate2's `TransformerSpec` from the trained Keras layers (the only step
that loads Keras) and writes a self-contained directory:

| file | contents |
| --- | --- |
| `model.bin`, `config.json` | the CTranslate2 model (float32, int16, int8, ... weights) |
| `source_vocabulary.json`, `target_vocabulary.json` (or `shared_vocabulary.json`) | our vocabularies, id for id |
| `vectorizers.pkl`, `config.yaml` | the run's tokenizers and config: the directory alone translates text |
| `sentencepiece.model` (joint) or `source.spm.model` + `target.spm.model` | SentencePiece runs only |
| `pipeline.json` | export format, weights fingerprint, quantization, position-table size |

`CTranslate2Translator` translates like `pipeline.translator.Translator` (same segmentation of
paragraphs, cleaning, tokenizer, per-sentence length limits, [UNK] ban and detokenisation)
and imports neither TensorFlow nor Keras.

Greedy output equals our decoder's token for token. Beam search is CTranslate2's, with two
adjustments that make it rank as ours does: (1) the length penalty. CTranslate2 divides a
hypothesis' log-probability by |Y| ** alpha (|Y| without [end]); ours is GNMT's
((5 + |Y|) / 6) ** alpha with [end] counted. We ask for all `beam` finished hypotheses with their
scores, undo CTranslate2's penalty and re-rank with GNMT. (2) The length limit. CTranslate2 cuts a
hypothesis at `max_decoding_length`, where ours must end with [end]; a cut hypothesis gets
log p([end]) added (CTranslate2's `score_batch`, renormalised without [UNK] when it is banned).
What still differs is the search: CTranslate2 keeps `beam` live hypotheses and stops a sentence once
`beam` have ended (once the best has, with alpha = 0), while ours lets finished hypotheses hold their
beam slots and stops once no live one can beat the best finished one.
"""
from __future__ import annotations

import json
import math
import os
import shutil
import sys
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from pipeline.extras import require
from pipeline.io_utils import atomic_directory, atomic_write_json
from pipeline.rundir import CONFIG_FILE, VECTORIZERS_FILE, RunDir, check_output_dir
from pipeline.segment import TextTranslation
from pipeline.text import nonblank
from pipeline.vectorizers import Vectorizers, load_vectorizers

EXTRA = "ctranslate2"
QUANTIZATIONS = ("float32", "int16", "int8", "int8_float32", "int8_float16", "int8_bfloat16", "float16", "bfloat16")
EXPORT_FORMAT = 1
SETTINGS_FILE = "pipeline.json"
LAYER_NORM_EPSILON = 1e-6
ACTIVATIONS = {"relu": "RELU", "gelu": "GELU"}        # Keras name -> ctranslate2.specs.Activation member


class CTranslate2ExportError(ValueError):
    """A model or export directory CTranslate2 cannot use; the message names the option or file."""


# -- export (loads Keras) ---------------------------------------------------------------------------------------
def run_export_dir(run_dir: str | Path, which: str = "best") -> Path:
    """Where `from_run` keeps the float32 export of a training run: `RUN/ctranslate2` (or `ctranslate2-model`)."""
    return Path(run_dir) / ("ctranslate2" if which == "best" else f"ctranslate2-{which}")


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
    spec = transformer_spec(run.load_model(which), vectorizers, positions)     # Keras: conversion only
    spec.validate()
    spec.optimize(quantization=quantization)
    with atomic_directory(out_dir) as tmp:
        spec.save(str(tmp))
        shutil.copyfile(run.vectorizers_file, tmp / VECTORIZERS_FILE)
        shutil.copyfile(run.config_file, tmp / CONFIG_FILE)
        _write_sentencepiece_models(vectorizers, tmp)
        atomic_write_json(tmp / SETTINGS_FILE, {
            "format": EXPORT_FORMAT, "weights": _fingerprint(run.model_file(which)), "quantization": quantization,
            "position_table": int(spec.decoder.position_encodings.encodings.shape[0]),
            "tokenizer": vectorizers.italian.kind, "joint_vocabulary": vectorizers.joint})
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
    source, target = vectorizers.english, vectorizers.italian
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
    if vectorizers.english.kind != "sentencepiece" and vectorizers.italian.kind != "sentencepiece":
        return
    if vectorizers.joint:
        (out_dir / "sentencepiece.model").write_bytes(vectorizers.english.model_proto)
        return
    for name, tokenizer in (("source", vectorizers.english), ("target", vectorizers.italian)):
        if tokenizer.kind == "sentencepiece":
            (out_dir / f"{name}.spm.model").write_bytes(tokenizer.model_proto)


def _fingerprint(path: Path) -> dict[str, Any]:
    stat = path.stat()
    return {"file": path.name, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


# -- inference (no TensorFlow, no Keras) --------------------------------------------------------------------------
def _read_settings(model_dir: Path) -> dict[str, Any]:
    path = model_dir / SETTINGS_FILE
    if not path.is_file():
        raise FileNotFoundError(f"CTranslate2 export {model_dir}: {SETTINGS_FILE} not found; write one with "
                                "scripts/export.py --format ctranslate2")
    try:
        settings = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError) as exc:
        raise CTranslate2ExportError(f"CTranslate2 export file {path}: unreadable ({exc})") from None
    if not isinstance(settings, dict) or settings.get("format") != EXPORT_FORMAT:
        raise CTranslate2ExportError(f"CTranslate2 export file {path}: expected format {EXPORT_FORMAT}, "
                                     f"got {settings.get('format') if isinstance(settings, dict) else settings!r}")
    return settings


def _export_is_current(export_dir: Path, weights: Path) -> bool:
    try:
        settings = _read_settings(export_dir)
    except (FileNotFoundError, ValueError):
        return False
    return (export_dir / "model.bin").is_file() and settings.get("weights") == _fingerprint(weights) \
        and settings.get("quantization") == "float32"


class CTranslate2Translator(TextTranslation):
    """English -> Italian with a CTranslate2 export; same `translate` (texts of any length) and
    `translate_sentences` as `pipeline.translator.Translator`."""

    def __init__(self, model_dir: str | Path, compute_type: str = "default", threads: int = 0, device: str = "cpu"):
        """`threads` (0: every core this process may use): on CPU, that many single-threaded CTranslate2
        workers, each decoding its own batches. On 2 cores, 2 workers ran 1.3x (float32) to 3x (int8)
        the sentences/s of one 2-thread worker, whose int8 GEMMs were slower than float32."""
        ctranslate2 = require("ctranslate2", EXTRA)
        self.model_dir = model_dir = Path(model_dir)
        self.settings = _read_settings(model_dir)
        self.config = RunDir(model_dir).load_config()
        self.vectorizers = load_vectorizers(model_dir / VECTORIZERS_FILE)
        target = self.vectorizers.italian
        self.vocabulary = target.vocabulary
        self._target_index = {token: i for i, token in enumerate(target.vocabulary)}
        threads = threads or (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count())
        workers, per_worker = (threads, 1) if device == "cpu" else (1, threads)
        self.translator = ctranslate2.Translator(str(model_dir), device=device, compute_type=compute_type,
                                                 inter_threads=workers, intra_threads=per_worker)

    @classmethod
    def from_run(cls, run_dir: str | Path, which: str = "best", compute_type: str = "default", threads: int = 0,
                 device: str = "cpu") -> "CTranslate2Translator":
        """A translator for a CTranslate2 export directory, or for a training run: its float32 export in
        `RUN/ctranslate2` is written on first use (and again when the weights change)."""
        run = RunDir(run_dir).require()
        if (run.path / SETTINGS_FILE).is_file() or (run.path / "model.bin").is_file():
            return cls(run.path, compute_type, threads, device)
        require("ctranslate2", EXTRA)
        weights = run.model_file(which)
        if not weights.is_file():
            raise FileNotFoundError(f"model file {weights}: not found")
        export_dir = run_export_dir(run.path, which)
        if not _export_is_current(export_dir, weights):
            print(f"converting {weights} for CTranslate2 into {export_dir} (once)", file=sys.stderr)
            export_ctranslate2(run.path, export_dir, which=which)
        return cls(export_dir, compute_type, threads, device)

    @property
    def max_input_length(self) -> int:
        return self.vectorizers.max_length

    @property
    def position_limit(self) -> int:
        """Most output tokens, [end] included: the decoder's position table holds [start] and these."""
        return int(self.settings["position_table"]) - 1

    def _step_limits(self, lengths: np.ndarray, max_length: int | None = None) -> np.ndarray:
        """Most output tokens per sentence ([end] included), as `Translator._step_limits`, within the table."""
        return np.minimum(super()._step_limits(lengths, max_length), self.position_limit)

    def _check_sampling(self, sample, temperature, top_k, top_p, seed) -> None:
        if sample or any(v is not None for v in (temperature, top_k, top_p, seed)):
            raise ValueError("sample, temperature, top_k, top_p and seed need engine 'keras', not 'ctranslate2'")

    def _translate_ids(self, ids, lengths, limits, beam, alpha, batch_size, sampling):
        """Sentences are decoded in groups that share a length limit, so each sentence gets its own
        limit exactly (CTranslate2's `max_decoding_length` is per call); every group is queued at once,
        so that all workers stay busy."""
        source_vocabulary = self.vectorizers.english.vocabulary
        short = np.flatnonzero(limits <= 1)
        yield short, [""] * len(short)                       # a limit of 1 leaves room for [end] only
        groups = []
        for limit in np.unique(limits[limits > 1]):
            rows = np.flatnonzero(limits == limit)
            tokens = [[source_vocabulary[i] for i in ids[r, :lengths[r]]] for r in rows]
            groups.append((rows, tokens, self._submit(tokens, int(limit) - 1, beam, alpha, batch_size)))
        for rows, tokens, pending in groups:
            results = [p.result() for p in pending]
            yield rows, [self._detokenize(h) for h in self._best(tokens, results, beam, alpha, batch_size)]

    def n_best_sentences(self, sentences: Sequence[str], n: int, beam: int | None = None,
                         batch_size: int | None = None) -> list[list[str]]:
        """Up to `n` distinct translations of each sentence from one beam search (beam >= n), best
        first, ranked as our decoder ranks them: the first is `translate_sentences`'s. Empty input gives `[""]`."""
        beam, alpha, batch_size = self.decode_settings(beam, None, batch_size)
        beam = max(beam, n)
        if beam == 1:
            return [[text] for text in self.translate_sentences(sentences, beam=1, batch_size=batch_size)]
        cleaned, todo = nonblank(sentences)
        outputs: list[list[str]] = [[""] for _ in cleaned]
        if not todo:
            return outputs
        ids = self._source_ids([cleaned[i] for i in todo])
        lengths = (ids != 0).sum(1)
        limits = self._step_limits(lengths)
        for limit in np.unique(limits[limits > 1]):          # a limit of 1 leaves room for [end] only: ""
            rows = np.flatnonzero(limits == limit)
            tokens = [[self.vectorizers.english.vocabulary[i] for i in ids[r, :lengths[r]]] for r in rows]
            pending = self._submit(tokens, int(limit) - 1, beam, alpha, batch_size)
            ranked = self._ranked(tokens, [p.result() for p in pending], alpha, batch_size)
            for row, hypotheses in zip(rows, ranked):
                texts = [self._detokenize(h) for h in hypotheses[:n]]
                outputs[todo[row]] = list(dict.fromkeys(t for t in texts if t)) or [""]
        return outputs

    def _decode(self, tokens: list[list[str]], max_tokens: int, beam: int, alpha: float,
                batch_size: int) -> list[list[str]]:
        """Best hypothesis per source (tokens, perhaps ending in [end]), at most `max_tokens` tokens."""
        results = [p.result() for p in self._submit(tokens, max_tokens, beam, alpha, batch_size)]
        return self._best(tokens, results, beam, alpha, batch_size)

    def _submit(self, tokens: list[list[str]], max_tokens: int, beam: int, alpha: float, batch_size: int) -> list:
        """Queue the sources on CTranslate2's workers; one pending result per source."""
        options = dict(max_batch_size=batch_size, beam_size=beam, max_decoding_length=max_tokens,
                       min_decoding_length=0, disable_unk=self.config.decode.ban_unk, return_end_token=True,
                       asynchronous=True)
        if beam > 1:    # every finished hypothesis with its score, for the GNMT re-ranking in `_best`
            options.update(length_penalty=alpha, num_hypotheses=beam, return_scores=True)
        return self.translator.translate_batch(tokens, **options)

    def _best(self, tokens: list[list[str]], results: list, beam: int, alpha: float,
              batch_size: int) -> list[list[str]]:
        """The hypothesis our decoder would choose from each source's CTranslate2 results."""
        if beam == 1:   # greedy: CTranslate2 cuts at the limit where we force [end]; the text is the same
            return [r.hypotheses[0] for r in results]
        return [ranked[0] for ranked in self._ranked(tokens, results, alpha, batch_size)]

    def _ranked(self, tokens: list[list[str]], results: list, alpha: float, batch_size: int) -> list[list[list[str]]]:
        """Each source's beam-search hypotheses, best first as our decoder ranks them (GNMT)."""
        # (source row, hypothesis, log-prob sum, length with [end]); CTranslate2's score is log-prob / length ** alpha
        candidates = [(row, h, s * len(h) ** alpha, len(h))
                      for row, r in enumerate(results) for h, s in zip(r.hypotheses, r.scores)]
        candidates = self._end_cut_hypotheses(tokens, candidates, batch_size)
        scored: list[list[tuple[float, list[str]]]] = [[] for _ in tokens]
        for row, hypothesis, score, length in candidates:
            scored[row].append((score / ((5.0 + length) / 6.0) ** alpha, hypothesis))
        # a stable sort: the first best is kept on ties
        return [[h for _, h in sorted(row, key=lambda pair: -pair[0])] for row in scored]

    def _end_cut_hypotheses(self, tokens: list[list[str]], candidates: list[tuple], batch_size: int) -> list[tuple]:
        """Our decoder forces [end] at the length limit, where CTranslate2 cuts a hypothesis: add
        log p([end] | hypothesis) to each cut one (renormalised without [UNK] when it is banned)."""
        end, unk = self.vocabulary[self.vectorizers.italian.end_id], self.vocabulary[self.vectorizers.italian.unk_id]
        cut = [i for i, (_, h, _, _) in enumerate(candidates) if not h or h[-1] != end]
        if not cut:
            return candidates
        ban_unk = self.config.decode.ban_unk
        sources = [tokens[candidates[i][0]] for i in cut]
        targets = [candidates[i][1] for i in cut]
        if ban_unk:   # also score [UNK] after the hypothesis: p(end) / (1 - p(unk)) is the banned distribution's
            sources, targets = sources + sources, targets + [t + [unk] for t in targets]
        scored = self.translator.score_batch(sources, targets, max_batch_size=batch_size)
        candidates = list(candidates)
        for k, i in enumerate(cut):
            row, hypothesis, score, length = candidates[i]
            log_end = scored[k].log_probs[-1]
            if ban_unk:
                log_end -= math.log1p(-min(math.exp(scored[k + len(cut)].log_probs[-2]), 1.0 - 1e-7))
            candidates[i] = (row, hypothesis + [end], score + log_end, length + 1)
        return candidates

    def _detokenize(self, tokens: Sequence[str]) -> str:
        """The project's own decode: skip [start], stop at [end] or padding, detokenise."""
        return self.vectorizers.italian.decode([self._target_index[t] for t in tokens])
