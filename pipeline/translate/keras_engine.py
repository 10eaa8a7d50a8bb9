"""The Keras engine: our cached decoder (greedy, beam search, sampling) over a trained `.keras` model, on any
Keras backend. `open_translator(run)` (`pipeline.translate`) returns one."""
from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from pipeline.config import Config
from pipeline.serializable import load_run
from pipeline.text import clean_side, gate_text
from pipeline.translate.engine import Batches, Engine
from pipeline.vectorizers import Vectorizers


class CrossAttention(NamedTuple):
    """One translation's cross-attention: `weights` is (layers, heads, output tokens, source tokens)."""
    source_tokens: list[str]
    output_tokens: list[str]      # ending in [end]
    weights: np.ndarray
    translation: str


def longest_first(lengths: np.ndarray, batch_size: int) -> list[np.ndarray]:
    """Row indices in decoder calls of `batch_size` sentences, longest first (similar lengths together: less
    padding), as `KerasEngine.translate_sentences` decodes them."""
    order = np.argsort(-np.asarray(lengths), kind="stable")
    return [order[start:start + batch_size] for start in range(0, len(order), batch_size)]


def _width(lengths: np.ndarray, rows: np.ndarray) -> int:
    """Source columns a decoder call on these rows needs: their longest, at least one."""
    return max(int(lengths[rows].max()), 1)


class KerasEngine(Engine):
    """A trained run's model and vectorizers, in the run's direction (`direction`); no training code runs.

    `translate` takes texts of any length (paragraphs, documents: see `pipeline.translate.splitting`);
    `translate_sentences` takes one sentence per input, truncated past `max_input_length` tokens.
    """

    engine = "keras"

    def __init__(self, model, vectorizers: Vectorizers, config: Config, jit_compile: bool | None = None):
        """`jit_compile` (TensorFlow: XLA, one program per batch shape, else graph mode, one trace for
        every batch size) defaults to the run's `decode.jit_compile`; JAX always compiles."""
        from pipeline.compilation import enable_persistent_cache
        from pipeline.decoding import compile_decoder     # Keras: only this engine needs it

        enable_persistent_cache()                          # the decoding programs of earlier processes are reused
        self.model, self.vectorizers, self.config = model, vectorizers, config
        target = vectorizers.target
        self.vocabulary = target.vocabulary
        self.start_id, self.end_id = target.start_id, target.end_id
        self.banned_id = target.unk_id if config.decode.ban_unk else None
        jit_compile = config.decode.jit_compile if jit_compile is None else jit_compile
        self.decoder = compile_decoder(model, self.start_id, self.end_id, jit_compile, banned_id=self.banned_id)
        """The compiled decoder itself (`pipeline.decoding.compile_decoder`: ids in, ids out, its own options)."""

    @classmethod
    def from_run(cls, run_dir: str | Path, which: str = "best", jit_compile: bool | None = None) -> "KerasEngine":
        """The engine for a training run's `<which>.keras` (see `__init__` for `jit_compile`)."""
        run = load_run(run_dir, which)
        return cls(run.model, run.vectorizers, run.config, jit_compile)

    @property
    def backend(self) -> str:
        import keras
        return keras.backend.backend()

    def translate_ids(self, ids: np.ndarray, limits: np.ndarray, beam: int = 1, alpha: float = 0.0,
                      n_best: int = 1, **sampling: Any) -> np.ndarray:
        return self.decoder(ids, limits, beam, alpha, n_best=n_best, **sampling)

    def translate_batches(self, ids, lengths, limits, beam, alpha, batch_size, sampling) -> Batches:
        """Longest first, `batch_size` sentences per decoder call (similar lengths together: less padding)."""
        seed = sampling.pop("seed")
        batches = longest_first(lengths, batch_size)
        if len(batches) > 1:                                # one batch compiles what it needs as it comes
            self.prepare_batches(batches, lengths, limits, beams=beam, alpha=alpha, seed=seed, **sampling)
        for start, rows in zip(range(0, len(lengths), batch_size), batches):
            width = _width(lengths, rows)
            result = self.translate_ids(ids[rows, :width], limits[rows], beam, alpha,
                                        seed=None if seed is None else (seed, start), **sampling)
            yield rows, [self.vectorizers.decode_target(target) for target in result]

    def n_best_batches(self, ids, lengths, limits, n, beam, alpha, batch_size) -> Batches:
        """In input order, `batch_size` sentences per decoder call."""
        batches = [np.arange(start, min(start + batch_size, len(ids))) for start in range(0, len(ids), batch_size)]
        if len(batches) > 1:
            self.prepare_batches(batches, lengths, limits, beams=beam, alpha=alpha, n_best=n)
        for rows in batches:
            ranked = self.translate_ids(ids[rows, :_width(lengths, rows)], limits[rows], beam, alpha,
                                        n_best=n)
            ranked = ranked if n > 1 else ranked[:, None]                                # (rows, n, steps)
            yield rows, [[self.vectorizers.decode_target(h) for h in hypotheses] for hypotheses in ranked]

    def prepare_batches(self, batches: list[np.ndarray], lengths: np.ndarray, limits: np.ndarray,
                        **options: Any) -> int:
        """Compile, side by side, the decoding programs that these batches (row indices) will need and that are
        not compiled yet (`decode.prepare`: JAX; elsewhere nothing to do); how many it compiled."""
        return self.decoder.prepare([(len(rows), _width(lengths, rows), int(limits[rows].max()))
                                     for rows in batches], **options)

    def cross_attention(self, sentence: str, beam: int = 1) -> CrossAttention:
        """Translate one sentence and return its cross-attention with the tokens on both sides."""
        cleaned = clean_side(gate_text(sentence))
        if not cleaned:
            raise ValueError("cross_attention needs a non-empty sentence")
        ids = self.source_ids([cleaned])
        lengths = np.maximum((ids != 0).sum(1), 1)
        source = ids[:, :int(lengths[0])]
        output = [int(i) for i in self.translate_ids(source, self.step_limits(lengths), beam,
                                                     self.decode_settings().alpha)[0]]
        output = output[:output.index(self.end_id) + 1] if self.end_id in output else [i for i in output if i]
        decoder_inputs = np.array([[self.start_id] + output[:-1]], dtype=np.int32)
        from keras import ops
        weights = ops.convert_to_numpy(self.model.cross_attention(source, decoder_inputs))[:, 0]
        source_vocabulary = self.vectorizers.source.vocabulary
        return CrossAttention([source_vocabulary[i] for i in source[0]], [self.vocabulary[i] for i in output], weights,
                              self.vectorizers.decode_target(output))
