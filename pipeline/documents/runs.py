"""One chunk of formatted text (a paragraph's runs between breaks, an HTML block's inline content) and how its
formatting maps onto its translation: the office formats' and HTML's one implementation.

A chunk is a list of holders (a run's text, a text node), each with a formatting key and whether it is code. The
model reads the chunk whole (`RunLayout.segment`); holders formatted otherwise than the main formatting (a bold
term, a link's text, an inline `<code>`) form groups, each also translated alone (`RunLayout.alone`), so that its
place in the whole translation can be found (`RunLayout.placed`): the whole translation is kept where every group's
text or its translation alone occurs in it, else the text between the groups is translated piece by piece and each
group gets its translation alone, in its place. Code groups must occur exactly as written.
"""
from __future__ import annotations

import bisect
import functools
import itertools
import re
from collections import Counter
from typing import Any, Callable, Sequence

import regex

from pipeline.documents.segments import Segment, cut_at, keeps_spans, protected_spans
from pipeline.translate.splitting import needs_translation, with_spacing


# A chunk of more formatted groups than this (HTML's inline elements, links) is not read as one text: placing its
# groups in a translation costs the square of their count (300 links in a paragraph: 0.5 s; 1,200: 8 s)
MAX_GROUPS = 64
# An article or preposition that opens a translated phrase (`la `, `l'`, `the `, `di `): at most 3 letters and a
# space, or at most 4 letters and an apostrophe, before a word
LEADING_PARTICLE = regex.compile(r"(?:\p{L}{1,3}\s+|\p{L}{1,4}['’])(?=\w)")
# A holder's text that ends a sentence (`Done.`, `(see below).`, `Why?"`): where a long chunk is best cut
SENTENCE_END = regex.compile(r"[.!?…][\"'”’)\]]*\s*\Z")


class RunSegment(Segment):
    """A chunk's segment, cut (`pieces`) exactly at its formatted groups and verbatim spans, where `Segment.pieces`
    would cut at the first occurrence of each."""
    cut: list[str]

    def pieces(self) -> list[str]:
        return list(self.cut)


class FormattedGroup:
    """Consecutive holders of a chunk formatted otherwise than its main one (a bold term, an italic title): one
    run of their own. `alone`: their text translated by itself, or None where it is kept as written (a number,
    one letter, code). `code`: in a code font or style, so kept verbatim."""

    def __init__(self, key: Any, code: bool = False):
        self.key, self.items, self.text, self.place = key, [], "", 0.0     # place: where in the chunk, 0 to 1
        self.alone: Segment | None = None
        self.code = code

    def candidates(self) -> list[str]:
        """What the group may read as in the chunk's translation: its own text, then its translation alone, then
        that without its first word where it is an article or a preposition (`LEADING_PARTICLE`: "la stazione"
        reads "alla stazione" in a sentence, an article and a preposition made one word)."""
        found = [self.text.strip()]
        if self.alone is not None and self.alone.translation and self.alone.translation.strip() not in found:
            alone = self.alone.translation.strip()
            found.append(alone)
            particle = LEADING_PARTICLE.match(alone)
            if particle and not self.code:
                found.append(alone[particle.end():])
        return [text for text in found if text]

    def translated(self) -> str:
        """The group's text translated alone (as written where it is not translated), with its own spacing."""
        if self.alone is None or not self.alone.translation:
            return self.text
        return with_spacing(self.text, self.alone.translation)


@functools.lru_cache(maxsize=4096)
def _pattern(candidate: str, exact: bool) -> re.Pattern:
    """`candidate` as a pattern, compiled once (a chunk looks for each group's in every piece); `re`, which
    compiles one three times as fast as `regex`, as each of a long document's groups has its own."""
    return re.compile((r"(?<!\w)" if candidate[0].isalnum() else "") + re.escape(candidate) +
                      (r"(?!\w)" if candidate[-1].isalnum() else ""), 0 if exact else re.IGNORECASE)


def occurrences(text: str, candidate: str, exact: bool = False) -> list[re.Match]:
    """Where `candidate` is in `text`, in any case (`exact`: in its own), not inside a longer word."""
    return list(_pattern(candidate, exact).finditer(text))


class RunLayout:
    """How one chunk's formatting maps onto its translation. `texts` and `keys`: each holder's text (a run's
    `<t>`, an .odt text node or `text:s`) and formatting. The main formatting is the one of the most holders with
    a word, then of the most characters (`main`: its longest holder); consecutive holders formatted otherwise form
    `groups`, each with a word translated alone too (`alone`, in `segments` before the chunk's own, so that its
    translation is known when the chunk's is judged). `code`: which holders are code (a code font or style, as
    `code_font` and `code_style` tell): never the main formatting while a holder is not, each a group kept
    verbatim, which the chunk's translation must hold exactly, as written. The chunk's translation is kept whole
    where every group's text, or its translation alone, occurs in it (and every verbatim span: URLs, paths,
    e-mail addresses); else the text between the groups and spans is translated piece by piece and each group gets
    its translation alone (a group without a word, or of code, as written), at its place, in its formatting.
    `direct`: which holders sit right in the chunk's container (not in a smart tag or content control), preferred
    as `main`, so that the translation does not move into a content control. `main`: the main formatting's key
    where the caller decides it (an HTML block's own text), if some holder has it. `kept`: more spans than
    `protected_spans`' that come back verbatim (HTML's symbols). `soft`: keys whose groups the whole translation
    need not place (a Word comment's range, which is worth no sentence cut in pieces): one not found in it has
    no piece of its own, its words in the main formatting."""

    def __init__(self, texts: list[str], keys: list[Any], code: list[bool] | None = None,
                 direct: list[bool] | None = None, main: Any = None, kept: regex.Pattern | None = None,
                 soft: set[Any] | None = None):
        code = code or [False] * len(texts)
        self._soft = soft or set()
        totals: dict[Any, tuple[int, int]] = {}             # formatting -> (holders with a word, characters)
        prose = not all(code)
        for text, key, verbatim in zip(texts, keys, code):
            if verbatim and prose:
                continue
            words, characters = totals.get(key, (0, 0))
            totals[key] = (words + needs_translation(text), characters + len(text.strip()))
        common = main if main is not None and main in totals else max(totals, key=totals.get)
        direct = direct or [True] * len(texts)
        self.main = max((index for index, key in enumerate(keys) if key == common),
                        key=lambda i: (direct[i], len(texts[i].strip())))
        self._edges = (next((i for i, text in enumerate(texts) if text.strip()), 0),
                       next((i for i in range(len(texts) - 1, -1, -1) if texts[i].strip()), 0))
        self.groups: list[FormattedGroup] = []
        current, pending = None, []               # pending: blank holders after `current`, in its formatting
        for index, (text, key) in enumerate(zip(texts, keys)):
            if key != common and text.strip():
                if current is None or current.key != key:
                    current = FormattedGroup(key, code[index])
                    self.groups.append(current)
                current.items += pending + [index]
                pending = []
            elif current is not None and key == current.key and not text.strip():
                pending.append(index)
            else:
                current, pending = None, []
        owner: dict[int, int] = {}
        starts = [0]
        for text in texts:
            starts.append(starts[-1] + len(text))
        for number, group in enumerate(self.groups):
            group.text = "".join(texts[index] for index in group.items)
            group.place = (starts[group.items[0]] + len(group.text) - len(group.text.lstrip())) / max(starts[-1], 1)
            owner.update((index, number) for index in group.items)
            alone = group.text.strip()
            if len(alone) >= 2 and any(character.isalpha() for character in alone) and not group.code:
                group.alone = Segment(alone, protected=protected_spans(alone, kept))
        cut, self.kinds = [""], []                 # kinds: each span's group, None for a verbatim span

        def span(text: str, kind: int | None) -> None:
            cut.extend([text, ""])
            self.kinds.append(kind)

        def stretch(text: str) -> None:
            pieces = cut_at(text, protected_spans(text, kept))
            for index in range(0, len(pieces) - 1, 2):
                cut[-1] += pieces[index]
                span(pieces[index + 1], None)
            cut[-1] += pieces[-1]

        pending_text, index = "", 0
        while index < len(texts):
            if index not in owner:
                pending_text += texts[index]
                index += 1
                continue
            stretch(pending_text)
            pending_text = ""
            group = self.groups[owner[index]]
            span(group.text, owner[index])
            index = group.items[-1] + 1
        stretch(pending_text)
        text, spans = "".join(texts), cut[1::2]
        if self.groups:
            self.segment: Segment = RunSegment(text, protected=spans, accept=self._accept)
            self.segment.cut = cut
        else:
            self.segment = Segment(text, protected=spans)
        self.alone = [group.alone for group in self.groups if group.alone is not None]

    def spread(self, translation: str) -> tuple[list[tuple[str, int | None]], bool]:
        """The translation as (text, owner) pieces, owner a group's number or None (the main formatting): each
        group with a word cut out where one of its candidates occurs (in order), and whether every one was; then
        a group of punctuation alone (a bold colon) where it starts or ends the chunk and the translation."""
        pieces: list[tuple[str, int | None]] = [(translation, None)]
        every = True
        for number, group in enumerate(self.groups):
            mark = group.text.strip()
            if not needs_translation(mark) and not group.code:
                if group.items[0] == self._edges[0] and pieces[0][1] is None and pieces[0][0].startswith(mark):
                    pieces[0:1] = [(mark, number), (pieces[0][0][len(mark):], None)]
                elif group.items[-1] == self._edges[1] and pieces[-1][1] is None and pieces[-1][0].endswith(mark):
                    pieces[-1:] = [(pieces[-1][0][:-len(mark)], None), (mark, number)]
                continue
            for candidate in group.candidates():
                hits, offset = [], 0                 # (at, match, where in the translation, 0 to 1)
                for at, (piece, owner) in enumerate(pieces):
                    if owner is None:
                        hits += [(at, match, (offset + match.start()) / len(translation))
                                 for match in occurrences(piece, candidate, group.code)]
                    offset += len(piece)
                if hits:                             # of several, the one nearest the group's place in the text
                    at, match, _ = min(hits, key=lambda hit: abs(hit[2] - group.place))
                    piece = pieces[at][0]
                    pieces[at:at + 1] = [(piece[:match.start()], None), (match.group(0), number),
                                         (piece[match.end():], None)]
                    break
            else:
                every = every and group.key in self._soft
        return [(piece, owner) for piece, owner in pieces if piece], every

    def _accept(self, translation: str) -> bool:
        verbatim = Counter(span for span, kind in zip(self.segment.protected, self.kinds) if kind is None)
        return keeps_spans(translation, verbatim) and self.spread(translation)[1]

    def placed(self) -> list[tuple[str, int | None]]:
        """The chunk's translation as (text, owner) pieces, in order, neighbours of one owner joined."""
        segment = self.segment
        if segment.whole or segment.parts is None:
            pieces = self.spread(segment.translation)[0]
        else:
            pieces = []
            for index, part in enumerate(segment.parts):
                kind = self.kinds[index // 2] if index % 2 else None
                pieces.append((self.groups[kind].translated(), kind) if kind is not None else (part, None))
        joined: list[tuple[list[str], int | None]] = []           # each run's pieces, joined once at the end
        for piece, owner in pieces:                                 # (not copied again for each piece)
            if joined and (joined[-1][1] == owner or (owner is None and not piece.strip())):
                joined[-1][0].append(piece)                                 # a space joins the run before it
            elif joined and joined[-1][1] is None and not "".join(joined[-1][0]).strip():
                joined[-1] = (joined[-1][0] + [piece], owner)               # or, first, the one after it
            elif piece:
                joined.append(([piece], owner))
        return [("".join(texts), owner) for texts, owner in joined]


def once_per_node(method: Callable[[Any, Any], Any]) -> Callable[[Any, Any], Any]:
    """`method(self, node)` computed once for each node of a tree and each `self` (a link asked about for each of
    its runs). Keyed by identity, the node kept with its value so that its id is not reused: lxml's elements are
    proxies made as they are asked for, and odfpy's do not hash."""
    name = f"_once_{method.__name__}"

    @functools.wraps(method)
    def once(self: Any, node: Any) -> Any:
        memo = self.__dict__.setdefault(name, {})
        if id(node) not in memo:
            memo[id(node)] = (node, method(self, node))
        return memo[id(node)][1]
    return once


def child_index(children: Sequence[Any], node: Any, hints: dict[int, int], parent: int) -> int:
    """Where `node` is among `children` (a parent's, `parent` its id): looked for from where the last look under
    that parent ended (`hints`), then from the start. A tree's texts are read and replaced left to right, so each
    look is short; looked up from the start each, as bs4 and odfpy do, a paragraph of thousands of pieces cost the
    square of their number (20,000 tabs: a minute)."""
    hint = min(hints.get(parent, 0), len(children))
    for at in itertools.chain(range(hint, len(children)), range(hint)):
        if children[at] is node:
            hints[parent] = at
            return at
    raise ValueError("not a child of its parent")               # (never: a node's parent holds it)


def windowed(texts: list[str], keys: list[Any], code: list[bool], direct: list[bool] | None = None,
             main: Any = None, together: list[Any] | None = None,
             soft: set[Any] | None = None) -> list[tuple[list[int], RunLayout]]:
    """A chunk's layout (`RunLayout` of its holders' `texts`, `keys`, `code`, `direct`, `main`, `soft`), or, past
    `MAX_GROUPS` formatted groups, each window's (`windows`): (the holders' indices, their layout)."""
    whole = RunLayout(texts, keys, code, direct, main, soft=soft)
    found = windows(whole, texts, together)
    if len(found) == 1:
        return [(found[0], whole)]
    def pick(values: list[Any] | None, window: list[int]) -> list[Any] | None:
        return None if values is None else [values[i] for i in window]

    return [(window, RunLayout(*(pick(values, window) for values in (texts, keys, code, direct)), main, soft=soft))
            for window in found]


def windows(layout: RunLayout, texts: list[str], together: list[Any] | None = None) -> list[list[int]]:
    """A chunk's holders (their `texts`, formatted as `layout` found) as consecutive windows of at most `MAX_GROUPS`
    formatted groups each, to be read as chunks of their own: placing groups costs the square of their count (a
    paragraph of 2,000 bold and plain runs in turn took 6 s, 20,000 would hold a worker for ten minutes). A
    window ends after its last holder that ends a sentence (`SENTENCE_END`), else before the group past the
    limit, never between holders of one `together` value (a link's); one window where there are few groups."""
    if len(layout.groups) <= MAX_GROUPS:
        return [list(range(len(texts)))]
    together = together or [None] * len(texts)
    starts = {group.items[0] for group in layout.groups}

    def apart(index: int) -> bool:                          # may a window start at `index`?
        return together[index] is None or together[index] is not together[index - 1]

    ordered = sorted(starts)                                # counted by bisection: a sum over every group's
    found, start, count, sentence_end = [], 0, 0, None      # start at each cut was the square of their number
    for index, text in enumerate(texts):
        if index in starts:
            count += 1
            if count > MAX_GROUPS and apart(index):
                cut = sentence_end if sentence_end is not None else index
                found.append(list(range(start, cut)))
                start, sentence_end = cut, None
                count = bisect.bisect_right(ordered, index) - bisect.bisect_left(ordered, start)
        if SENTENCE_END.search(text) and index + 1 < len(texts) and apart(index + 1):
            sentence_end = index + 1
    found.append(list(range(start, len(texts))))
    return found


def spaces_outside(pieces: list[tuple[str, int | None]], owners: set[int]) -> list[tuple[str, int | None]]:
    """A chunk's placed pieces (`RunLayout.placed`) with the spaces at the edges of the pieces of `owners` (links,
    HTML's inline elements) moved out of them into the main formatting (a link is not underlined past its words),
    neighbours of the main formatting joined."""
    found: list[tuple[list[str], int | None]] = []            # each piece's texts, joined once at the end
    for text, owner in pieces:
        parts = [(text, owner)]
        if owner in owners and text.strip():
            inner = text.strip()
            start = text.index(inner)
            parts = [(text[:start], None), (inner, owner), (text[start + len(inner):], None)]
        for part, part_owner in parts:
            if not part:
                continue
            if found and part_owner is None and found[-1][1] is None:
                found[-1][0].append(part)
            else:
                found.append(([part], part_owner))
    return [("".join(texts), owner) for texts, owner in found]
