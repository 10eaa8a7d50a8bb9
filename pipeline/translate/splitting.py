"""Paragraphs and documents -> pieces the model can translate, and the translations back into the same layout.

`split_text(text, count_tokens, max_tokens)` cuts a text into pieces, each at most `max_tokens` source
tokens, and keeps every character between them, so that `SplitText.join` restores the layout exactly:

1. every line break ends a piece (a paragraph, a blank line or a list keeps its lines);
2. each line is split into sentences by `sentence-splitter` (Koehn and Schroeder's Moses splitter with the
   source language's non-breaking prefixes: "Mr. Smith", "e.g.", "U.S.", "sig. Rossi", "3.5" stay whole);
3. a sentence longer than `max_tokens` is cut after clause punctuation (, ; : ) — – and the like) when the
   piece keeps at least half of the limit, else after the last word that fits, else (one very long
   "word") after the last character that fits. No character is ever dropped.

A piece with no letter or digit ("...", "* * *", "?!", an emoji) is not translated: it is copied as it is.
Pure text: no engine, no Keras, no TensorFlow. The engines (`pipeline.translate.engine`) translate the pieces.
"""
from __future__ import annotations

import bisect
import functools
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence

import regex

MIN_CLAUSE_FRACTION = 0.5       # a clause cut must keep at least this share of the token limit
MAX_CHARS_PER_TOKEN = 32        # twice SentencePiece's longest piece (16): longer prefixes never fit
SPLITTER_WINDOW = 8192          # the sentence splitter reads a longer line in windows (its cost grows faster than
                                # the line: 0.4 s for 200,000 characters, 14 s for 1.6 million)
# What str.splitlines() breaks at: each ends a piece, and is kept in the layout.
LINE_BREAK = regex.compile(r"\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]")
# Ends of clauses: after , ; : and closing brackets, quotes or dashes that whitespace follows ("1,000" and
# "10:30" have none), and after a spaced hyphen used as a dash.
CLAUSE_END = regex.compile(r"[,;:)\]}»”’—–]+(?=\s)|(?<=\s)-+(?=\s)")
SPACE = regex.compile(r"\s")
WORD_END = regex.compile(r"\S(?=\s)")
TRANSLATABLE = regex.compile(r"[\p{L}\p{N}]")
SPACES = regex.compile(r"\s+")

CountTokens = Callable[[str], int]


@dataclass(frozen=True)
class SplitText:
    """A text as `pieces` and the exact `gaps` between them: text.strip() == p0 + g0 + p1 + g1 + ... + pN.

    Whitespace around the whole text is not kept (a blank text translates to ""), as for one sentence.
    """
    pieces: list[str]
    gaps: list[str]             # len(pieces) - 1 (none for a blank text)

    @property
    def to_translate(self) -> list[str]:
        """The pieces that go to the model (those with a letter or a digit)."""
        return [piece for piece in self.pieces if needs_translation(piece)]

    def join(self, translations: Iterable[str]) -> str:
        """The text with each translatable piece replaced by its translation, in order."""
        translations = iter(translations)
        out = []
        for index, piece in enumerate(self.pieces):
            if index:
                out.append(self.gaps[index - 1])
            out.append(next(translations) if needs_translation(piece) else piece)
        return "".join(out)

    def join_ranked(self, ranked: Sequence[Sequence[str]]) -> list[str]:
        """Distinct versions of the text, best first, from each translatable piece's ranked translations:
        the k-th joins each piece's k-th best (its last one where it has fewer), so the first is `join`'s
        of the best ones."""
        depth = max((len(hypotheses) for hypotheses in ranked), default=1)
        joined = [self.join(hypotheses[min(k, len(hypotheses) - 1)] for hypotheses in ranked) for k in range(depth)]
        return list(dict.fromkeys(joined))


def needs_translation(piece: str) -> bool:
    """Whether a piece holds a letter or a digit (punctuation and symbols alone are copied)."""
    return TRANSLATABLE.search(piece) is not None


def translate_between(cuts: Sequence[Sequence[str]], translate: Callable[[list[str]], list[str]],
                      lower_start: bool = False) -> list[list[str]]:
    """Texts cut at spans that must come back verbatim, each as [text, span, text, ..., span, text], with the text
    parts translated (those with a letter or a digit, of every cut, stripped, in one `translate` call; their spacing
    put back) and the spans kept. `lower_start`: a part that starts in lower case keeps a lower-case start (a
    model capitalises what it takes for a sentence)."""
    texts = [part.strip() for parts in cuts for part in parts[0::2] if needs_translation(part)]
    translated = iter(translate(texts) if texts else [])
    joined = []
    for parts in cuts:
        out = []
        for index, part in enumerate(parts):
            if index % 2 or not needs_translation(part):
                out.append(part)
                continue
            translation = next(translated)
            if lower_start and part.strip()[:1].islower() and translation[:1].isupper():
                translation = translation[:1].lower() + translation[1:]
            out.append(with_spacing(part, translation))
        joined.append(out)
    return joined


def with_spacing(text: str, translation: str) -> str:
    """`translation` with `text`'s leading and trailing whitespace (the engines strip them): how a piece cut from
    inside a sentence is put back between its neighbours."""
    stripped = text.strip()
    if not stripped:
        return text
    start = text.index(stripped[0])
    return text[:start] + translation + text[start + len(stripped):]


@functools.lru_cache(maxsize=4)
def _splitter(language: str):
    from sentence_splitter import SentenceSplitter

    return SentenceSplitter(language=language)


def sentence_spans(line: str, language: str = "en") -> list[tuple[int, int]]:
    """(start, end) of each sentence of one line in `language` (ISO 639-1), without the whitespace around it.

    A line longer than `SPLITTER_WINDOW` characters is read in windows of at most that many, so that a megabyte
    line splits in linear time: each keeps the sentences the splitter finds in it but the last, which the next
    window starts with; where that would keep less than half a window (one long sentence), the window ends at its
    last space (else anywhere) instead, and a sentence is cut there."""
    spans, start = [], 0
    while len(line) - start > SPLITTER_WINDOW:
        window = _window_spans(line[start:start + SPLITTER_WINDOW], language)
        if len(window) > 1 and window[-1][0] >= SPLITTER_WINDOW // 2:
            end = start + window[-1][0]
            window = window[:-1]
        else:
            spaces = [m.end() for m in SPACES.finditer(line, start + SPLITTER_WINDOW // 2, start + SPLITTER_WINDOW)]
            end = spaces[-1] if spaces else start + SPLITTER_WINDOW
            window = _window_spans(line[start:end], language)
        spans += [(start + a, start + b) for a, b in window]
        start = end
    return spans + [(start + a, start + b) for a, b in _window_spans(line[start:], language)]


def _window_spans(line: str, language: str) -> list[tuple[int, int]]:
    spaced = SPACE.sub(" ", line)           # the splitter breaks at ASCII spaces only (not tabs, no-break spaces)
    sentences = [s for s in _splitter(language).split(spaced) if s.strip()]
    spans = _align(line, sentences)
    if spans is None:          # the splitter changed more than whitespace: keep the line whole
        start, end = len(line) - len(line.lstrip()), len(line.rstrip())
        return [(start, end)] if start < end else []
    return spans


def _align(line: str, sentences: Sequence[str]) -> list[tuple[int, int]] | None:
    """Map the splitter's sentences back onto `line` by their non-space characters; None if they differ."""
    visible = [i for i, char in enumerate(line) if not char.isspace()]     # offsets of non-space characters
    spans, seen = [], 0
    for sentence in sentences:
        chars = [char for char in sentence if not char.isspace()]
        if not chars or seen + len(chars) > len(visible) \
                or any(line[visible[seen + k]] != char for k, char in enumerate(chars)):
            return None
        spans.append((visible[seen], visible[seen + len(chars) - 1] + 1))
        seen += len(chars)
    return spans if seen == len(visible) else None


def cut_sentence(text: str, start: int, end: int, count_tokens: CountTokens,
                 max_tokens: int) -> list[tuple[int, int]]:
    """Cut `text[start:end]` (no space at either end) into spans of at most `max_tokens` tokens each.

    The spans cover every non-space character, in order; the whitespace between two is the gap between them.
    Each piece costs a few token counts of at most twice its length, so a huge line cuts in linear time.
    """
    if max_tokens < 1:
        raise ValueError(f"max_tokens must be >= 1, got {max_tokens}")
    if count_tokens(text[start:end]) <= max_tokens:
        return [(start, end)]
    clause_ends = [m.end() for m in CLAUSE_END.finditer(text, start, end)]
    word_ends = [m.end() for m in WORD_END.finditer(text, start, end)] + [end]
    spans = []
    while start < end:
        fits = functools.partial(_fits, text, start, count_tokens, max_tokens)
        word = _last_fitting(word_ends, bisect.bisect_right(word_ends, start), fits)
        if word is not None and word_ends[word] == end:           # the rest fits
            spans.append((start, end))
            break
        clause = _last_fitting(clause_ends, bisect.bisect_right(clause_ends, start), fits)
        if clause is not None and count_tokens(text[start:clause_ends[clause]]) >= MIN_CLAUSE_FRACTION * max_tokens:
            cut = clause_ends[clause]
        elif word is not None:
            cut = word_ends[word]
        else:                                                     # one word longer than the limit
            chars = range(start + 1, end)
            cut = chars[_last_fitting(chars, 0, fits) or 0]       # one character at least
        spans.append((start, cut))
        start = cut
        while start < end and text[start].isspace():
            start += 1
    return spans


def _fits(text: str, start: int, count_tokens: CountTokens, max_tokens: int, cut: int) -> bool:
    """Whether `text[start:cut]` has at most `max_tokens` tokens; a prefix over MAX_CHARS_PER_TOKEN
    characters a token is taken not to fit without counting (so an unbroken megabyte string cuts in linear time)."""
    return cut - start <= MAX_CHARS_PER_TOKEN * max_tokens and count_tokens(text[start:cut]) <= max_tokens


def _last_fitting(cuts: Sequence[int], first: int, fits: Callable[[int], bool]) -> int | None:
    """The index of the last of `cuts[first:]` that `fits` (a longer prefix never has fewer tokens), or None.

    Galloping, then bisecting: the prefixes tried are at most about twice as long as the one found.
    """
    if first >= len(cuts) or not fits(cuts[first]):
        return None
    good, step = first, 1
    bad = len(cuts)
    while good + step < len(cuts):
        if not fits(cuts[good + step]):
            bad = good + step
            break
        good += step
        step *= 2
    while bad - good > 1:
        middle = (good + bad) // 2
        good, bad = (middle, bad) if fits(cuts[middle]) else (good, middle)
    return good


def split_text(text: str, count_tokens: CountTokens, max_tokens: int, language: str = "en") -> SplitText:
    """Cut `text` (in `language`, the source's) into lines, sentences and, where a sentence is longer than
    `max_tokens`, shorter pieces."""
    text = text.strip()
    spans = []
    line_start = 0
    for line_end, next_start in [*((m.start(), m.end()) for m in LINE_BREAK.finditer(text)),
                                 (len(text), len(text))]:
        line = text[line_start:line_end]
        for start, end in sentence_spans(line, language):
            spans.extend(cut_sentence(text, line_start + start, line_start + end, count_tokens, max_tokens))
        line_start = next_start
    pieces = [text[start:end] for start, end in spans]
    gaps = [text[spans[i][1]:spans[i + 1][0]] for i in range(len(spans) - 1)]
    return SplitText(pieces, gaps)
