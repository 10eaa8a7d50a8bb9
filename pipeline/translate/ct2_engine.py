"""The CTranslate2 engine: a CTranslate2 export (`pipeline.export.ctranslate2`) behind `Engine`, with the same
segmentation, cleaning, tokenizer, per-sentence length limits, [UNK] ban and detokenisation as the Keras engine.
It imports neither TensorFlow nor Keras (a training run is converted once, on first use, which does).

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

import math
import os
import sys
import time
from pathlib import Path
from typing import Sequence

import numpy as np

from pipeline.export.ctranslate2 import EXTRA, CTranslate2ExportError, export_is_current, read_export_settings
from pipeline.extras import require
from pipeline.io_utils import exclusive_lock
from pipeline.language import Direction
from pipeline.rundir import CT2_SETTINGS_FILE, VECTORIZERS_FILE, RunDir
from pipeline.translate.engine import Batches, Engine


class CTranslate2Engine(Engine):
    """A CTranslate2 export, in its run's direction; the same `translate` (texts of any length), `n_best`
    and `translate_sentences` as `KerasEngine`, no sampling."""

    engine = backend = "ctranslate2"

    def __init__(self, model_dir: str | Path, compute_type: str = "default", threads: int = 0, device: str = "cpu"):
        """`threads` (0: every core this process may use): on CPU, that many single-threaded CTranslate2
        workers, each decoding its own batches. On 2 cores, 2 workers ran 1.3x (float32) to 3x (int8)
        the sentences/s of one 2-thread worker, whose int8 GEMMs were slower than float32. Fewer sentences than
        workers (one request alone) may go to a second, one-worker translator with every thread instead, where
        that is faster (`_translator_for`)."""
        ctranslate2 = require("ctranslate2", EXTRA)
        export = RunDir(model_dir).require()
        self.model_dir = export.path
        self.settings = read_export_settings(export.path)
        self.config = export.load_config()
        self.vectorizers = export.load_vectorizers()
        recorded = Direction.of(self.settings)        # exports written before directions were recorded: none
        if "source_language" in self.settings and recorded != self.vectorizers.direction:
            raise CTranslate2ExportError(f"CTranslate2 export {export.path}: {CT2_SETTINGS_FILE} says "
                                         f"{recorded.label}, its {VECTORIZERS_FILE} {self.vectorizers.direction.label}")
        target = self.vectorizers.target
        self.vocabulary = target.vocabulary
        self.end_id = target.end_id
        self.target_index = {token: i for i, token in enumerate(target.vocabulary)}
        threads = threads or (len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count())
        workers, per_worker = (threads, 1) if device == "cpu" else (1, threads)
        self.workers = workers
        self.translator = ctranslate2.Translator(str(export.path), device=device, compute_type=compute_type,
                                                 inter_threads=workers, intra_threads=per_worker)
        self._wide_options = (dict(device=device, compute_type=compute_type, inter_threads=1, intra_threads=threads)
                              if device == "cpu" and threads > 1 else None)
        self._lone = None             # the translator for fewer sentences than workers (`_translator_for`)

    @classmethod
    def from_run(cls, run_dir: str | Path, which: str = "best", compute_type: str = "default", threads: int = 0,
                 device: str = "cpu") -> "CTranslate2Engine":
        """The engine for a CTranslate2 export directory, or for a training run: its float32 export
        (`RunDir.ctranslate2_dir`) is written on first use, and again when the weights change."""
        run = RunDir(run_dir).require()
        if run.is_ctranslate2_export:
            return cls(run.path, compute_type, threads, device)
        require("ctranslate2", EXTRA)
        weights = run.model_file(which)
        if not weights.is_file():
            raise FileNotFoundError(f"model file {weights}: not found")
        export_dir = run.ctranslate2_dir(which)
        if not export_is_current(export_dir, weights):
            # processes opening the same run at once (service workers) convert it once, in turn
            with exclusive_lock(run.ctranslate2_lock(which)):
                if not export_is_current(export_dir, weights):
                    from pipeline.export.ctranslate2 import export_ctranslate2   # loads Keras, for this conversion only

                    print(f"converting {weights} for CTranslate2 into {export_dir} (once)", file=sys.stderr)
                    export_ctranslate2(run.path, export_dir, which=which)
        return cls(export_dir, compute_type, threads, device)

    @property
    def position_limit(self) -> int:
        """Most output tokens, [end] included: the decoder's position table holds [start] and these."""
        return int(self.settings["position_table"]) - 1

    def step_limits(self, lengths: np.ndarray, max_length: int | None = None) -> np.ndarray:
        """As `Engine.step_limits`, within the position table."""
        return np.minimum(super().step_limits(lengths, max_length), self.position_limit)

    # -- the decoder ----------------------------------------------------------------------------------------
    def translate_ids(self, ids: np.ndarray, limits: np.ndarray, beam: int = 1, alpha: float = 0.0,
                      n_best: int = 1, **sampling) -> np.ndarray:
        """As `KerasEngine.translate_ids` (each output ends in [end], forced at the limit); no sampling."""
        self.check_options(sampling)
        if not 1 <= n_best <= beam:
            raise ValueError(f"n_best must be from 1 to the beam size ({beam}) without sampling, got {n_best}")
        ids, limits = np.asarray(ids), np.asarray(limits)
        end, batch_size = self.vocabulary[self.end_id], self.decode_settings().batch_size
        ranked: list[list[list[str]]] = [[[end]] for _ in range(len(ids))]      # a limit of 1: [end] alone
        for rows, tokens, results in self._limit_groups(ids, (ids != 0).sum(1), limits, beam, alpha, batch_size):
            if beam == 1:   # greedy: CTranslate2 cuts at the limit where ours ends with [end]
                found = [[h if h[-1:] == [end] else h + [end]] for h in (r.hypotheses[0] for r in results)]
            else:
                found = self._ranked(tokens, results, alpha, batch_size)
            for row, hypotheses in zip(rows, found):
                ranked[row] = hypotheses[:n_best]
        steps = max((len(h) for hypotheses in ranked for h in hypotheses), default=0)
        out = np.zeros((len(ids), n_best, steps), np.int32)
        for row, hypotheses in enumerate(ranked):
            for k, hypothesis in enumerate(hypotheses):
                out[row, k, :len(hypothesis)] = [self.target_index[t] for t in hypothesis]
        return out if n_best > 1 else out[:, 0]

    def _limit_groups(self, ids: np.ndarray, lengths: np.ndarray, limits: np.ndarray, beam: int, alpha: float,
                      batch_size: int):
        """(rows, source tokens, CTranslate2 results) per group of sentences that share a length limit > 1, so
        that each sentence gets its own limit exactly (CTranslate2's `max_decoding_length` is per call). Every
        group is queued before the first is awaited, so that all workers stay busy."""
        source_vocabulary = self.vectorizers.source.vocabulary
        groups = []
        for limit in np.unique(limits[limits > 1]):
            rows = np.flatnonzero(limits == limit)
            tokens = [[source_vocabulary[i] for i in ids[r, :lengths[r]]] for r in rows]
            groups.append((rows, tokens, self._submit(tokens, int(limit) - 1, beam, alpha, batch_size)))
        for rows, tokens, pending in groups:
            yield rows, tokens, [p.result() for p in pending]

    def translate_batches(self, ids, lengths, limits, beam, alpha, batch_size, sampling) -> Batches:
        short = np.flatnonzero(limits <= 1)
        yield short, [""] * len(short)                       # a limit of 1 leaves room for [end] only
        for rows, tokens, results in self._limit_groups(ids, lengths, limits, beam, alpha, batch_size):
            yield rows, [self._detokenize(h) for h in self._best(tokens, results, beam, alpha, batch_size)]

    def n_best_batches(self, ids, lengths, limits, n, beam, alpha, batch_size) -> Batches:
        """Ranked as our decoder ranks them, so the first is `translate_sentences`'s."""
        if beam == 1:
            for rows, texts in self.translate_batches(ids, lengths, limits, 1, alpha, batch_size, {}):
                yield rows, [[text] for text in texts]
            return
        for rows, tokens, results in self._limit_groups(ids, lengths, limits, beam, alpha, batch_size):
            ranked = self._ranked(tokens, results, alpha, batch_size)
            yield rows, [[self._detokenize(h) for h in hypotheses[:n]] for hypotheses in ranked]

    def _submit(self, tokens: list[list[str]], max_tokens: int, beam: int, alpha: float, batch_size: int) -> list:
        """Queue the sources on CTranslate2's workers; one pending result per source."""
        options = dict(max_batch_size=batch_size, beam_size=beam, max_decoding_length=max_tokens,
                       min_decoding_length=0, disable_unk=self.config.decode.ban_unk, return_end_token=True,
                       asynchronous=True)
        if beam > 1:    # every finished hypothesis with its score, for the GNMT re-ranking in `_best`
            options.update(length_penalty=alpha, num_hypotheses=beam, return_scores=True)
        return self._translator_for(tokens, options).translate_batch(tokens, **options)

    def _translator_for(self, tokens: list[list[str]], options: dict):
        """The workers, or, for fewer sentences than workers (a lone request), whichever of them and a second,
        one-worker translator with every thread decodes such a request faster on this machine and model: measured
        once, on the first such request (intra-op threads pay for a large model and cost for a small one: on
        2 cores a tiny model ran 5x slower on 2 threads, a 6-layer one faster)."""
        if self._wide_options is None or len(tokens) >= self.workers:
            return self.translator
        if self._lone is None:
            import ctranslate2

            wide = ctranslate2.Translator(str(self.model_dir), **self._wide_options)
            timing = {**options, "asynchronous": False}
            seconds = {}
            for candidate in (self.translator, wide, self.translator, wide):
                started = time.perf_counter()
                candidate.translate_batch(tokens, **timing)
                seconds[id(candidate)] = min(seconds.get(id(candidate), float("inf")), time.perf_counter() - started)
            self._lone = wide if seconds[id(wide)] < seconds[id(self.translator)] else self.translator
        return self._lone

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
        end, unk = self.vocabulary[self.vectorizers.target.end_id], self.vocabulary[self.vectorizers.target.unk_id]
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
        return self.vectorizers.target.decode([self.target_index[t] for t in tokens])
