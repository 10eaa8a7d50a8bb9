"""The glossary strategy: how an engine's sentence translation is made to use a glossary's terms.

    translate_pieces(engine, pieces, glossaries, style, options)   every piece, each with its glossary (or None)
    n_best_pieces(engine, pieces, glossaries, style, n, options)   the same, n-best, by one method

The engine is only asked for sentences (`translate_sentences`, `n_best_sentences`) and token counts
(`source_tokens`, `max_input_length`); it says how its run applies a glossary (`glossary_style`) and which methods
to try (`glossary_methods`). A piece without a term is translated exactly as without a glossary.
What a glossary is, and how it marks and restores terms, is `pipeline.glossary`'s.
"""
from __future__ import annotations

from typing import Any, Protocol, Sequence

from pipeline.glossary import (METHODS, STYLES, Glossary, GlossaryLike, Masked, lacks_verbatim, terms_missing,
                               unmask)
from pipeline.language import Direction
from pipeline.text import clean_side
from pipeline.translate.splitting import SplitText, needs_translation, translate_between


class SentenceEngine(Protocol):
    """What the strategy needs of an engine (`pipeline.translate.engine.Engine` has it all)."""
    max_input_length: int
    glossary_style: str
    glossary_methods: tuple[str, ...]

    def source_tokens(self, text: str) -> int: ...

    def translate_sentences(self, sentences: Sequence[str], **options: Any) -> list[str]: ...

    def n_best_sentences(self, sentences: Sequence[str], n: int, **options: Any) -> list[list[str]]: ...


def checked_methods(methods: Sequence[str]) -> tuple[str, ...]:
    """`methods` as a tuple, each one of `glossary.STYLES`; ValueError otherwise."""
    unknown = [m for m in methods if m not in STYLES]
    if unknown or not methods:
        raise ValueError(f"glossary methods {list(methods)!r}: expected one or more of {', '.join(STYLES)}")
    return tuple(methods)


def default_methods(style: str) -> tuple[str, ...]:
    """The methods tried, in order, for a run whose glossary style is `style` (`glossary.METHODS`)."""
    return METHODS[style]


def per_piece(glossary: GlossaryLike | list[GlossaryLike], layouts: list[SplitText],
              direction: Direction = Direction()) -> list[Glossary | None]:
    """The glossary of each piece: one for every text, or (a list) one per text; files are read for `direction`."""
    if isinstance(glossary, list):
        if len(glossary) != len(layouts):
            raise ValueError(f"glossary: a list gives one glossary per text; got {len(glossary)} for "
                             f"{len(layouts)} texts")
        per_text = [Glossary.coerce(g, direction) for g in glossary]
    else:
        per_text = [Glossary.coerce(glossary, direction)] * len(layouts)
    return [g for layout, g in zip(layouts, per_text) for _ in layout.to_translate]


def masked_pieces(engine: SentenceEngine, pieces: list[str], glossaries: list[Glossary | None],
                  style: str | None) -> list[Masked | None]:
    """Each piece's `Masked` form under its glossary (None: no glossary, the piece as it is). Annotations make
    a piece longer: one that no longer fits the model's input gets placeholders instead, else no glossary."""
    if not any(glossaries):
        return [None] * len(pieces)
    style = style or engine.glossary_style
    masked = []
    for piece, glossary in zip(pieces, glossaries):
        form = None if glossary is None else glossary.mask(piece, style)
        if form is not None and form.slots and engine.source_tokens(form.text) > engine.max_input_length:
            form = glossary.mask(piece, "placeholder")
            if engine.source_tokens(form.text) > engine.max_input_length:
                form = None
        masked.append(form)
    return masked


def translate_pieces(engine: SentenceEngine, pieces: list[str], glossaries: list[Glossary | None],
                     style: str | None, options: dict[str, Any]) -> list[str]:
    """Each piece translated with its glossary: with `style` (`glossary.STYLES`), that one method on every piece
    with a term; else `translate_glossed`'s passes."""
    if style is None and any(glossaries):
        return translate_glossed(engine, pieces, glossaries, options)
    masked = masked_pieces(engine, pieces, glossaries, style)
    outputs = engine.translate_sentences([m.text if m else p for p, m in zip(pieces, masked)], **options)
    return [unmask(out, m) if m else out for out, m in zip(outputs, masked)]


def n_best_pieces(engine: SentenceEngine, pieces: list[str], glossaries: list[Glossary | None], style: str | None,
                  n: int, options: dict[str, Any]) -> list[list[str]]:
    """Up to `n` translations of each piece, by one method (`style`, else the run's): no second chance."""
    masked = masked_pieces(engine, pieces, glossaries, style)
    outputs = engine.n_best_sentences([m.text if m else p for p, m in zip(pieces, masked)], n, **options)
    return [list(dict.fromkeys(unmask(out, m) for out in outs)) if m else outs for outs, m in zip(outputs, masked)]


def translate_glossed(engine: SentenceEngine, pieces: list[str], glossaries: list[Glossary | None],
                      options: dict[str, Any], cut_around_kept: bool = True) -> list[str]:
    """Each piece translated with its glossary: its own translation, then `glossary_methods`, a pass each,
    then (`cut_around_kept`) `cut_around_kept_terms` for a do-not-translate term still not verbatim.

    The first pass is the run's own translation of every piece: where it already holds each of the piece's
    terms (as whole words, any case: then written in the glossary's case), it is kept, so the terms a model
    writes anyway cost nothing and leave the rest of its sentence as it was. Each further pass takes only
    the pieces whose best translation so far still lacks a term, and a candidate replaces it only if it
    lacks fewer, so an earlier method wins a tie."""
    translations = engine.translate_sentences(pieces, **options)
    checks = [glossary.mask(piece, "annotate") if glossary else None for piece, glossary in zip(pieces, glossaries)]
    missing = [0] * len(pieces)
    for i, check in enumerate(checks):
        if check is not None and check.slots:
            translations[i] = unmask(translations[i], check)
            missing[i] = terms_missing(translations[i], check)
    for style in engine.glossary_methods:
        todo = [i for i, count in enumerate(missing) if count]
        masked = masked_pieces(engine, [pieces[i] for i in todo], [glossaries[i] for i in todo], style)
        todo, masked = [i for i, m in zip(todo, masked) if m], [m for m in masked if m]
        if not todo:
            break
        outputs = engine.translate_sentences([m.text for m in masked], **options)
        for i, m, output in zip(todo, masked, outputs):
            candidate = unmask(output, m)
            count = terms_missing(candidate, m)
            if count < missing[i]:
                translations[i], missing[i] = candidate, count
    if cut_around_kept:
        cut_around_kept_terms(engine, pieces, glossaries, translations, options)
    return translations


def cut_around_kept_terms(engine: SentenceEngine, pieces: list[str], glossaries: list[Glossary | None],
                          translations: list[str], options: dict[str, Any]) -> None:
    """Where a translation still lacks one of its piece's do-not-translate terms exactly as written (a name
    whose characters the vocabulary lacks, which no method got through the model), the piece is translated
    again in parts: the text between those terms, each part on its own (with the rest of its glossary), and
    the terms put back between them verbatim, so they survive by construction. A part that starts in lower
    case keeps a lower-case start (the model capitalises what it takes for a sentence)."""
    todo: list[tuple[int, list[str]]] = []            # (piece, [text, term, text, term, ..., text])
    for i, (piece, glossary) in enumerate(zip(pieces, glossaries)):
        if glossary is None:
            continue
        cleaned = clean_side(piece)
        kept = [match for match in glossary.find(cleaned) if match.term.keep]
        if not kept or not lacks_verbatim(translations[i], (match.term.target for match in kept)):
            continue
        parts, last = [], 0
        for match in kept:
            parts += [cleaned[last:match.start], match.term.target]
            last = match.end
        todo.append((i, parts + [cleaned[last:]]))
    part_glossaries = [glossaries[i] for i, parts in todo for part in parts[0::2] if needs_translation(part)]
    cuts = translate_between([parts for _, parts in todo], lambda texts: translate_glossed(
        engine, texts, part_glossaries, options, cut_around_kept=False), lower_start=True)
    for (i, _), out in zip(todo, cuts):
        translations[i] = "".join(out)
