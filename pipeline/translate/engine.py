"""What every engine offers: texts, sentences and ids in, translations out, with the decoding defaults resolved once.

    Engine.translate(texts)              texts of any length: split (`split`), pieces translated, rejoined
    Engine.n_best(texts, n)              up to n distinct translations of each text, best first
    Engine.translate_sentences(...)      one sentence per input, truncated past `max_input_length` tokens
    Engine.n_best_sentences(...)         the same, n-best
    Engine.source_ids / step_limits      sentences -> source ids; their lengths -> most output tokens
    Engine.translate_ids(ids, limits)    ids in, ids out: the engine's decoder itself (what tests and benchmarks call)

An engine implements `translate_ids` and the two batch loops behind the sentence methods (`translate_batches`,
`n_best_batches`), and names itself (`engine`: which options it supports, `pipeline.options`); everything else is
here, but the glossary strategy, which is `pipeline.translate.glossing`'s. This module imports neither Keras nor
TensorFlow.
"""
from __future__ import annotations

import copy
import warnings
from typing import Any, Iterable, Iterator, Sequence

import numpy as np
from tqdm.auto import tqdm

from pipeline.config import Config, DecodeSettings
from pipeline.text import clean_side, gate_texts, nonblank
from pipeline.glossary import GlossaryLike, default_style
from pipeline.language import Direction, language_name
from pipeline.options import OPTIONS, check_engine_options, check_ranges
from pipeline.translate import glossing
from pipeline.translate.splitting import LINE_BREAK, SplitText, split_text
from pipeline.vectorizers import Vectorizers

Batches = Iterator[tuple[Sequence[int], list[Any]]]    # (rows of the sentences, each row's output), every row once


def one_line(translation: str) -> str:
    """A sentence's translation on one line: a line break the model wrote (a byte piece) becomes a space, so that
    a text keeps exactly its own line breaks and a file one output line per input line."""
    return LINE_BREAK.sub(" ", translation)


class Engine:
    """One trained run's direction (English -> Italian, or Italian -> English: `direction`); a subclass brings the
    decoder (`translate_ids`) and its batch loops."""

    config: Config
    vectorizers: Vectorizers
    engine: str                  # its name in `pipeline.translate.ENGINES`: which options it supports
    backend: str                 # what decodes: a Keras backend's name, or "ctranslate2"

    _direction: Direction | None = None

    @property
    def direction(self) -> Direction:
        """Which way this engine translates: its run's direction (its vectorizers record it), or for a bidirectional
        run the one `towards` chose."""
        return self._direction or self.vectorizers.direction

    @property
    def directions(self) -> tuple[Direction, ...]:
        """Every direction the run translates (two for a bidirectional run)."""
        return self.vectorizers.directions

    def towards(self, target: str) -> "Engine":
        """This engine translating into `target` (an ISO 639-1 code): itself when that is its direction, else, for
        a bidirectional run, a view sharing its model and compiled decoders; a ValueError for a direction the run
        does not translate."""
        if target == self.direction.target:
            return self
        matching = [d for d in self.directions if d.target == target]
        if not matching:
            raise ValueError(f"this run translates {', '.join(d.label for d in self.directions)}; "
                             f"it has no direction into {language_name(target)}")
        view = copy.copy(self)
        view._direction = matching[0]
        return view

    @property
    def max_input_length(self) -> int:
        """Most source tokens one sentence may have (the run's `data.max_length`; one less in a bidirectional run,
        whose language tag takes the first)."""
        return self.vectorizers.max_length - self.vectorizers.bidirectional

    # -- decoding defaults -------------------------------------------------------------------------------------
    def decode_settings(self, beam: int | None = None, length_penalty: float | None = None,
                        batch_size: int | None = None, sample: bool = False) -> DecodeSettings:
        """The arguments given, else the run's `decode` settings (beam 1 when sampling): `DecodeConfig.resolve`.
        A beam wider than the target vocabulary (where a beam search has nothing left to keep) is a ValueError."""
        check_ranges({"batch_size": batch_size})
        settings = self.config.decode.resolve(beam, length_penalty, batch_size, sample)
        OPTIONS["beam"].check(settings.beam, maximum=len(self.vectorizers.target.vocabulary))
        return settings

    # -- ids ------------------------------------------------------------------------------------------------
    def source_ids(self, sentences: Sequence[str]) -> np.ndarray:
        """(sentences, data.max_length) source ids, 0-padded (a bidirectional run's first is the target's tag);
        longer sentences are truncated, with one warning."""
        ids = self.vectorizers.source_rows(sentences, self.vectorizers.max_length + 1, self.direction.target)
        too_long = int((ids[:, -1] != 0).sum())
        if too_long:
            warnings.warn(f"{too_long} input sentence(s) longer than the model's maximum of "
                          f"{self.max_input_length} tokens were truncated", stacklevel=3)
        return ids[:, :-1]

    def step_limits(self, lengths: np.ndarray, max_length: int | None = None) -> np.ndarray:
        """Most output tokens per sentence, [end] included: `max_length`, or the source length plus
        `decode.max_extra_length`."""
        if max_length:
            return np.full(len(lengths), max_length)
        return lengths + self.config.decode.max_extra_length

    def translate_ids(self, ids: np.ndarray, limits: np.ndarray, beam: int = 1, alpha: float = 0.0,
                      n_best: int = 1, **sampling: Any) -> np.ndarray:
        """The decoder: (sentences, width) source ids and each one's step limit -> int32 target ids after
        [start], [end] included, 0 after it: (sentences, steps), or (sentences, n_best, steps) best first."""
        raise NotImplementedError

    def source_tokens(self, text: str) -> int:
        """How many source tokens the model sees for `text` (cleaned as the engines clean it)."""
        return len(self.vectorizers.source.token_ids(clean_side(text)))

    # -- sentences ------------------------------------------------------------------------------------------
    def translate_sentences(self, sentences: Iterable[str], beam: int | None = None, max_length: int | None = None,
                            batch_size: int | None = None, length_penalty: float | None = None,
                            progress: bool = False, sample: bool = False, temperature: float | None = None,
                            top_k: int | None = None, top_p: float | None = None,
                            seed: int | None = None) -> list[str]:
        """Translate source-language sentences, each as one model input (longer ones are truncated with a warning:
        `translate` cuts them instead); empty input gives an empty line. `progress` shows a bar.

        `sample=True` draws each translation from the model instead of searching for the most likely
        one (`temperature`, `top_k`, `top_p`; the same `seed` and inputs give the same translations).
        """
        self.check_options(dict(sample=sample, temperature=temperature, top_k=top_k, top_p=top_p, seed=seed))
        check_ranges({"max_length": max_length})
        beam, alpha, batch_size = self.decode_settings(beam, length_penalty, batch_size, sample)
        cleaned, todo = nonblank(sentences)
        outputs = [""] * len(cleaned)
        if not todo:
            return outputs
        ids = self.source_ids([cleaned[i] for i in todo])
        lengths = (ids != 0).sum(1)
        limits = self.step_limits(lengths, max_length)
        sampling = dict(sample=sample, temperature=temperature, top_k=top_k, top_p=top_p, seed=seed)
        with tqdm(total=len(cleaned), unit=" sent", desc="translate", disable=not progress) as bar:
            bar.update(len(cleaned) - len(todo))
            for rows, texts in self.translate_batches(ids, lengths, limits, beam, alpha, batch_size, sampling):
                for row, text in zip(rows, texts):
                    outputs[todo[row]] = one_line(text)
                bar.update(len(rows))
        return outputs

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
        ids = self.source_ids([cleaned[i] for i in todo])
        lengths = (ids != 0).sum(1)
        for rows, ranked in self.n_best_batches(ids, lengths, self.step_limits(lengths), n, beam, alpha, batch_size):
            for row, texts in zip(rows, ranked):
                outputs[todo[row]] = list(dict.fromkeys(one_line(text) for text in texts if text)) or [""]
        return outputs

    def check_options(self, options: dict[str, Any]) -> None:
        """ValueError where this engine cannot decode with `options` (`pipeline.options.check_engine_options`)."""
        check_engine_options(self.engine, options)

    def translate_batches(self, ids: np.ndarray, lengths: np.ndarray, limits: np.ndarray, beam: int, alpha: float,
                           batch_size: int, sampling: dict[str, Any]) -> Batches:
        """`translate_sentences`'s loop: source ids (sentences, max_input_length), their lengths and step
        limits -> (rows, their translations), every row once, as they are done."""
        raise NotImplementedError

    def n_best_batches(self, ids: np.ndarray, lengths: np.ndarray, limits: np.ndarray, n: int, beam: int,
                        alpha: float, batch_size: int) -> Batches:
        """`n_best_sentences`'s loop: as `translate_batches`, each row's output its ranked translations (<= n)."""
        raise NotImplementedError

    # -- texts ----------------------------------------------------------------------------------------------
    def split(self, texts: Iterable[str]) -> list[SplitText]:
        """Each text through the gate (`text.gate_text`: a lone surrogate becomes U+FFFD), then cut into pieces of
        at most `max_input_length` source tokens (`splitting.split_text`)."""
        return [split_text(text, self.source_tokens, self.max_input_length, self.direction.source)
                for text in gate_texts(texts)]

    @property
    def glossary_style(self) -> str:
        """How this run applies a glossary (`glossary.STYLES`): "annotate" where it was trained with term annotations
        (prepare's `data.term_annotation`), else "placeholder"."""
        return default_style(self.config.data.term_annotation > 0)

    _glossary_methods: tuple[str, ...] | None = None

    @property
    def glossary_methods(self) -> tuple[str, ...]:
        """The methods a glossary tries, in order, on a piece whose own translation lacks one of its terms, until a
        translation holds every term: `glossary.METHODS` for this run's `glossary_style`, unless set to a sequence
        of `glossary.STYLES` (bench/bench_glossary.py compares orders so)."""
        return self._glossary_methods or glossing.default_methods(self.glossary_style)

    @glossary_methods.setter
    def glossary_methods(self, methods: Sequence[str]) -> None:
        self._glossary_methods = glossing.checked_methods(methods)

    def translate(self, texts: Iterable[str], glossary: GlossaryLike | list[GlossaryLike] = None,
                  glossary_style: str | None = None, **options: Any) -> list[str]:
        """Translate source-language texts: a sentence, a paragraph or a whole document each, one output per input.

        Each text passes the gate (`text.gate_text`: a code point UTF-8 cannot encode becomes U+FFFD), is split
        into sentences (and over-long sentences into pieces within the model's limit),
        all pieces are translated as one batch, and each text is rejoined with its spacing and line breaks.
        A blank text gives "". `options` are `translate_sentences`'s: beam, max_length (per piece),
        batch_size, length_penalty, progress (a bar over pieces), and sampling's.

        `glossary`: a `Glossary`, a dict source -> target or a .tsv/.csv/.tbx path, for every text; or a list of
        them (None allowed), one per text. A piece with a term is tried with `glossary_methods` in turn until its
        translation holds every term (`glossing.translate_glossed`), and a do-not-translate term comes out verbatim by
        construction (`glossing.cut_around_kept_terms`); a piece without a term is translated exactly as without a
        glossary. `glossary_style` (`glossary.STYLES`) forces one method on every piece with a term
        (what bench/bench_glossary.py compares).
        """
        if isinstance(texts, str):
            raise TypeError("translate takes a list of texts, got one str: pass [text]")
        layouts = self.split(texts)
        pieces = [p for layout in layouts for p in layout.to_translate]
        translations = glossing.translate_pieces(self, pieces, glossing.per_piece(glossary, layouts, self.direction),
                                                 glossary_style, options)
        done = iter(translations)
        return [layout.join(done) for layout in layouts]

    def n_best(self, texts: Iterable[str], n: int, glossary: GlossaryLike | list[GlossaryLike] = None,
               glossary_style: str | None = None, **options: Any) -> list[list[str]]:
        """Up to `n` distinct translations of each text, best first (the first is `translate`'s at the same
        beam); texts are split and rejoined as in `translate`, with its `glossary`, but by one method: no second
        chance, so with a glossary the first may differ from `translate`'s. `options`: beam, batch_size."""
        if isinstance(texts, str):
            raise TypeError("n_best takes a list of texts, got one str: pass [text]")
        layouts = self.split(texts)
        pieces = [p for layout in layouts for p in layout.to_translate]
        ranked = iter(glossing.n_best_pieces(self, pieces, glossing.per_piece(glossary, layouts, self.direction),
                                             glossary_style, n, options))
        return [layout.join_ranked([next(ranked) for _ in layout.to_translate]) for layout in layouts]
