"""Load a run directory and translate: `Translator.from_run(run_dir).translate([...])`."""
from __future__ import annotations

from pathlib import Path
from typing import NamedTuple, Sequence

import numpy as np

from pipeline.config import Config
from pipeline.rundir import RunDir, RunDirectoryError, load_run_config  # noqa: F401  (re-exported)
from pipeline.segment import TextTranslation
from pipeline.text import clean_side, nonblank
from pipeline.vectorizers import Vectorizers


class CrossAttention(NamedTuple):
    """One translation's cross-attention: `weights` is (layers, heads, output tokens, source tokens)."""
    source_tokens: list[str]
    output_tokens: list[str]      # ending in [end]
    weights: np.ndarray
    translation: str


class Translator(TextTranslation):
    """English -> Italian with a trained model and its vectorizers; no training code runs.

    `translate` takes texts of any length (paragraphs, documents: see `pipeline.segment`);
    `translate_sentences` takes one sentence per input, truncated past `max_input_length` tokens.
    """

    def __init__(self, model, vectorizers: Vectorizers, config: Config, jit_compile: bool | None = None):
        """`jit_compile` (TensorFlow: XLA, one program per batch shape, else graph mode, one trace for
        every batch size) defaults to the run's `decode.jit_compile`; JAX always compiles."""
        from pipeline.decoding import compile_decoder     # Keras: only this engine needs it

        self.model, self.vectorizers, self.config = model, vectorizers, config
        target = vectorizers.italian
        self.vocabulary = target.vocabulary
        self.start_id, self.end_id = target.start_id, target.end_id
        self.banned_id = target.unk_id if config.decode.ban_unk else None
        jit_compile = config.decode.jit_compile if jit_compile is None else jit_compile
        self._decode = compile_decoder(model, self.start_id, self.end_id, jit_compile, banned_id=self.banned_id)

    @classmethod
    def from_run(cls, run_dir: str | Path, which: str = "best", engine: str = "keras", **engine_options):
        """A translator for a run. `engine="ctranslate2"` returns a `pipeline.ct2.CTranslate2Translator`
        (same `translate`; `engine_options`: compute_type, threads, device), converting the run once;
        the Keras engine takes `jit_compile` (see `Translator`)."""
        if engine == "ctranslate2":
            from pipeline.ct2 import CTranslate2Translator
            return CTranslate2Translator.from_run(run_dir, which, **engine_options)
        if engine != "keras" or set(engine_options) - {"jit_compile"}:
            raise ValueError(f"engine {engine!r} with options {sorted(engine_options)}: expected 'keras' (option: "
                             "jit_compile) or 'ctranslate2'")
        run = RunDir(run_dir).require()
        config, vectorizers = run.load_config(), run.load_vectorizers()
        return cls(run.load_model(which), vectorizers, config, **engine_options)

    @property
    def max_input_length(self) -> int:
        return self.vectorizers.max_length

    def _translate_ids(self, ids, lengths, limits, beam, alpha, batch_size, sampling):
        """Longest first, `batch_size` sentences per decoder call (similar lengths together: less padding)."""
        seed = sampling.pop("seed")
        order = np.argsort(-lengths, kind="stable")
        for start in range(0, len(order), batch_size):
            rows = order[start:start + batch_size]
            width = max(int(lengths[rows].max()), 1)
            result = self._decode(ids[rows, :width], limits[rows], beam, alpha,
                                  seed=None if seed is None else (seed, start), **sampling)
            yield rows, [self.vectorizers.decode_italian(target) for target in result]

    def n_best_sentences(self, sentences: Sequence[str], n: int, beam: int | None = None,
                         batch_size: int | None = None) -> list[list[str]]:
        """Up to `n` distinct translations of each sentence from one beam search (beam >= n), best
        first: the first is `translate_sentences`'s. Empty input gives `[""]`."""
        beam, alpha, batch_size = self.decode_settings(beam, None, batch_size)
        beam = max(beam, n)
        cleaned, todo = nonblank(sentences)
        outputs: list[list[str]] = [[""] for _ in cleaned]
        if not todo:
            return outputs
        ids = self._source_ids([cleaned[i] for i in todo])
        for start in range(0, len(todo), batch_size):
            rows = slice(start, start + batch_size)
            lengths = (ids[rows] != 0).sum(1)
            ranked = self._decode(ids[rows, :max(int(lengths.max()), 1)], self._step_limits(lengths), beam, alpha,
                                  n_best=n)
            ranked = ranked if n > 1 else ranked[:, None]                                # (rows, n, steps)
            for index, hypotheses in zip(todo[rows], ranked):
                texts = [self.vectorizers.decode_italian(h) for h in hypotheses]
                outputs[index] = list(dict.fromkeys(t for t in texts if t)) or [""]
        return outputs

    def cross_attention(self, sentence: str, beam: int = 1) -> CrossAttention:
        """Translate one sentence and return its cross-attention with the tokens on both sides."""
        cleaned = clean_side(sentence)
        if not cleaned:
            raise ValueError("cross_attention needs a non-empty sentence")
        ids = self._source_ids([cleaned])
        lengths = np.maximum((ids != 0).sum(1), 1)
        source = ids[:, :int(lengths[0])]
        output = [int(i) for i in self._decode(source, self._step_limits(lengths), beam,
                                               self.config.decode.length_penalty)[0]]
        output = output[:output.index(self.end_id) + 1] if self.end_id in output else [i for i in output if i]
        decoder_inputs = np.array([[self.start_id] + output[:-1]], dtype=np.int32)
        from keras import ops
        weights = ops.convert_to_numpy(self.model.cross_attention(source, decoder_inputs))[:, 0]
        english = self.vectorizers.english.vocabulary
        return CrossAttention([english[i] for i in source[0]], [self.vocabulary[i] for i in output], weights,
                              self.vectorizers.decode_italian(output))
