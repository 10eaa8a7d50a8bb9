"""The one path from a document's segments to the engine and back, shared by every format.

A format reader cuts a document into `Segment`s. Each is translated whole first, in one large batch for the
whole document; where a segment holds spans that must come back verbatim (a subtitle's `<i>` tag, a gettext
placeholder `%(count)d`, a Markdown code span or link), a whole translation that lost or changed one is
refused, and the text between the spans is translated piece by piece instead (a second batch), with the spans
put back between the pieces in their order. So the spans survive by construction, and most segments still
read as whole sentences.

Pure text: no model here. `translate_segments` takes any `translate(texts) -> texts` callable.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Callable, Sequence

import regex

from pipeline.text import free_numbers
from pipeline.translate.splitting import translate_between, with_spacing

Translate = Callable[[list[str]], list[str]]


@dataclass
class Segment:
    """One unit of a document for the model.

    `text`: what the model reads. `protected`: spans of `text` that must come back verbatim (in `text`'s order);
    `accept(translation)` decides whether a whole translation kept them (default: each occurs in it as often as
    in `text`). When it did not, `translation` is built from the pieces of `text` between the spans.
    `numbered`: the model reads each span as a number instead (`70`, `71`, ...: numbers none of the text holds),
    which models copy far more reliably than `%(count)d` or `{0}`; each number must come back once, and is
    replaced by its span again.
    After `translate_segments`, `translation` holds the result and `whole` whether it came from one pass; when
    it did not, `parts` holds `pieces()` with the text ones translated.
    """
    text: str
    protected: Sequence[str] = ()
    accept: Callable[[str], bool] | None = None
    numbered: bool = False
    translation: str | None = field(default=None, init=False)
    whole: bool = field(default=True, init=False)
    parts: list[str] | None = field(default=None, init=False)

    def pieces(self) -> list[str]:
        """`text` cut at its protected spans: text, span, text, span, ..., text (even indices are text)."""
        out, rest = [], self.text
        for span in self.protected:
            before, found, after = rest.partition(span)
            if not found:
                raise ValueError(f"protected span {span!r} is not in the segment's text (in order)")
            out += [before, span]
            rest = after
        return out + [rest]

    def stand_ins(self) -> list[str] | None:
        """One number per protected span, none of which occurs in `text`, when `numbered` and no span touches a
        letter or digit (`70%%` would read as one number); else None."""
        if not (self.numbered and self.protected):
            return None
        pieces = self.pieces()
        for index in range(1, len(pieces), 2):
            before, after = pieces[index - 1][-1:], pieces[index + 1][:1]
            if before.isalnum() or after.isalnum():
                return None
        free = free_numbers(self.text)
        return [next(free) for _ in self.protected]

    def first_text(self) -> str:
        """What the model reads first: `text`, with numbers for its spans where `stand_ins` gives them."""
        numbers = self.stand_ins()
        if numbers is None:
            return self.text
        out = self.pieces()
        for index, number in enumerate(numbers):
            out[2 * index + 1] = number
        return "".join(out)

    def restored(self, output: str) -> str | None:
        """A first-pass output with its spans back, or None where a number was lost or repeated."""
        numbers = self.stand_ins()
        if numbers is None:
            return output
        patterns = [regex.compile(rf"(?<![0-9]){number}(?![0-9])") for number in numbers]
        if any(len(pattern.findall(output)) != 1 for pattern in patterns):
            return None
        for pattern, span in zip(patterns, self.protected):
            output = pattern.sub(lambda _: span, output, count=1)
        return output

    def kept(self, translation: str) -> bool:
        if self.accept is not None:
            return self.accept(translation)
        wanted = Counter(self.protected)
        return all(translation.count(span) >= count for span, count in wanted.items())


def _checked(texts: list[str], translate: Translate) -> list[str]:
    outputs = list(translate(texts)) if texts else []
    if len(outputs) != len(texts):
        raise ValueError(f"translate gave {len(outputs)} outputs for {len(texts)} texts")
    return outputs


LETTER = regex.compile(r"\p{L}")


def translate_segments(segments: Sequence[Segment], translate: Translate) -> None:
    """Fill each segment's `translation`: a whole pass over every segment with a letter, then one pass over the
    pieces of those whose whole translation lost a protected span. Others (numbers, symbols and punctuation alone:
    a table cell `12%`, a page number, a year, which a model given nothing to translate fills with words; or
    whose letters are all in protected spans: a URL, a tag, an MDX expression alone) are copied as they are, as
    HTML's texts without a letter always were."""
    todo = [segment for segment in segments
            if LETTER.search(segment.text) and LETTER.search("".join(segment.pieces()[::2]))]
    for segment in segments:
        segment.translation, segment.whole = segment.text, True
    firsts = [segment.first_text() for segment in todo]
    edges = [symbol_edges(first) for first in firsts]
    outputs = _checked([first[len(head):len(first) - len(tail)].strip()
                        for first, (head, tail) in zip(firsts, edges)], translate)
    retry = []
    for segment, first, output, (head, tail) in zip(todo, firsts, outputs, edges):
        if head or tail:                        # the symbols back, with the spaces that part them from the text
            output = head.lstrip() + output.strip() + tail.rstrip()
        restored = segment.restored(output)
        translation = None if restored is None else with_spacing(first, restored)
        if translation is None or not segment.kept(translation):
            retry.append(segment)
        else:
            segment.translation = translation
    if not retry:
        return
    cuts = translate_between([segment.pieces() for segment in retry], lambda texts: _checked(texts, translate))
    for segment, out in zip(retry, cuts):
        segment.translation, segment.whole, segment.parts = "".join(out), False, out


# What no translation may change, in any format that carries it: URLs, e-mail addresses, inline HTML/XML tags,
# character entities, file paths (absolute, home- or dot-relative, Windows drive paths), symbols, and templates'
# tags (Jinja, Django, Liquid, Twig, Handlebars, Angular and Vue: `{{ user.name }}`, `{% if admin %}`, `{# note #}`).
URL = (r"(?:(?:https?|ftp|file)://|www\.)[^\s<>\"'`]*[^\s<>\"'`.,;:!?)\]}*_]")
EMAIL = r"(?<![\w.+-])[\w.+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+"
HTML_TAG = r"</?[A-Za-z][\w:.-]*(?:\s+[^<>]{0,2000})?/?>"
ENTITY = r"&(?:#[0-9]{1,7}|#[xX][0-9a-fA-F]{1,6}|[A-Za-z][A-Za-z0-9]{1,31});"
PATH = (r"(?<![\w/.~\\-])(?:~|\.{1,2})?/(?:[\w.+@-]+/)*[\w.+@-]*[\w+@-]"
        r"|(?<![\w\\])[A-Za-z]:\\(?:[\w.-]+\\)*[\w.-]+")
# Symbols a model whose vocabulary lacks them drops: © ™ ♪ ❤️ 🚀 (with their modifiers), arrows (`File → Open`),
# keycaps (1️⃣ #️⃣)
SYMBOL = r"(?:(?=[\p{So}\u2190-\u21ff\u27f0-\u27ff\u2900-\u297f])\X|[0-9#*]\ufe0f?\u20e3)+"
TEMPLATE = r"\{\{.{1,200}?\}\}|\{%.{1,200}?%\}|\{#.{1,200}?#\}"
VERBATIM = regex.compile("|".join(f"(?:{pattern})" for pattern in (URL, EMAIL, HTML_TAG, ENTITY, PATH, SYMBOL,
                                                                    TEMPLATE)))
LEADING_SYMBOLS = regex.compile(rf"\s*(?:{SYMBOL}\s*)+")
TRAILING_SYMBOLS = regex.compile(rf"(?:\s*{SYMBOL})+\s*$")


def symbol_edges(text: str) -> tuple[str, str]:
    """The symbols (and spaces) `text` opens and ends with (`🚀 Fast start`, `Never gonna give you up ♪`), where a
    word lies between them: never given to the model, which would drop or misplace them, and put back around its
    translation."""
    head = LEADING_SYMBOLS.match(text)
    tail = TRAILING_SYMBOLS.search(text, head.end() if head else 0)
    head_text, tail_text = head.group(0) if head else "", tail.group(0) if tail else ""
    if not LETTER.search(text[len(head_text):len(text) - len(tail_text)]):
        return "", ""
    return head_text, tail_text


# A message catalog's placeholders, which every translation keeps: printf (`%s`, `%(name)d`, `%1$s`, `%'d`),
# Symfony's `%name%`, Qt (`%1`, `%L1`, `%n`), `{{ name }}` (Angular, Jinja, Handlebars), ICU's simple arguments
# (`{count, number}`, `{when, date, short}`, `{ name }`), Python's braces with a conversion and a format spec
# (`{0}`, `{name!r}`, `{date:%Y-%m-%d}`), shell variables, tags, and command-line options (`--help`)
PLACEHOLDER = regex.compile(r"%[A-Za-z_][\w.-]+%(?!%)"
                            r"|%(?:\([A-Za-z_][\w.]*\)|[0-9]+\$)?[-+#0']*(?:[0-9]+|\*)?(?:\.(?:[0-9]+|\*))?"
                            r"(?:hh|h|ll|l|L|q|j|z|t)?[diouxXeEfFgGcrsab%]|%L?[0-9]{1,2}\b|%L?n\b"
                            r"|\{\{[^{}\n]{1,80}\}\}"
                            r"|\{\s*[\p{L}\p{N}_]+\s*,\s*(?:number|date|time|spellout|ordinal|duration)\s*"
                            r"(?:,[^{}\n]{0,80})?\}|\{\s+[A-Za-z_][\w.]*\s+\}"
                            r"|\{[A-Za-z_0-9.\[\]]*(?:![rsa])?(?::[^{}\n]{0,40})?\}"
                            r"|\$\{?[A-Za-z_]\w*\}?|</?[A-Za-z][^<>\n]{0,100}>|(?<![\w-])--[A-Za-z0-9][\w-]*")

# ICU MessageFormat's choices (Angular's, Symfony's `+intl-icu` catalogs, FormatJS, Java): `{count, plural, offset:1
# =0 {none} one {# file} other {# files}}`, `select` and `selectordinal` alike, nested at will. Quoting as ICU
# reads it: `''` is an apostrophe, and a `'` before `{`, `}`, `|` (or `#` in a plural) opens a literal that the
# next lone `'` closes.
ICU_CHOICE = regex.compile(r"\{\s*[\p{L}\p{N}_]+\s*,\s*(plural|selectordinal|select)\s*,\s*(?:offset:\s*[0-9]+\s*)?")
ICU_CASE = regex.compile(r"\s*(?:=\s*-?[0-9]+(?:\.[0-9]+)?|[\p{L}\p{N}_-]+)\s*\{")
ICU_END = regex.compile(r"\s*\}")
ICU_DEPTH = 16                  # choices nested deeper than this (no catalog has them) are not read as ICU
ICU_QUOTING = regex.compile(r"''|'[{}|#](?:[^']|'')*'?")


class _NotIcu(ValueError):
    pass


def icu_messages(text: str) -> list[tuple[int, int, bool]] | None:
    """The spans of `text` a translator translates where it is an ICU message with a choice in it: (start, end,
    inside a plural), in order, one per stretch of text between the choice syntax (each case's message, and the
    text around a choice, empty ones too), so that everything between them, the syntax, comes back as it is.
    None where `text` holds no choice or is not a well-formed message (an unmatched brace, a choice without a
    case): then it is read as plain text. A scanner of its own, as no ICU parser reports where in the text a
    message lies. Choices nested deeper than `ICU_DEPTH` are none."""
    if not ICU_CHOICE.search(text):
        return None
    spans: list[tuple[int, int, bool]] = []
    try:
        end = _icu_message(text, 0, False, spans, 0)
    except _NotIcu:
        return None
    return spans if end == len(text) else None


def icu_plain(text: str, plural: bool) -> bool:
    """Whether `text` reads, inside an ICU choice's case, as one message of text and simple arguments (`{name}`):
    no choice, no brace left open or closing what it did not open (a translation that would break its message)."""
    spans: list[tuple[int, int, bool]] = []
    try:
        return _icu_message(text, 0, plural, spans, 0) == len(text) and len(spans) == 1
    except _NotIcu:
        return False


def _icu_quoted(text: str, position: int, plural: bool) -> int:
    """Where the quoting at `text[position]` (an apostrophe) ends."""
    following = text[position + 1:position + 2]
    if following == "'":
        return position + 2
    if following and following in "{}|" or (plural and following == "#"):
        return ICU_QUOTING.match(text, position).end()
    return position + 1


def _icu_message(text: str, position: int, plural: bool, spans: list[tuple[int, int, bool]], depth: int) -> int:
    """Scan a message from `position` to its case's closing brace (or the end, at the top): its text spans in
    `spans`; returns where it ended."""
    start = position
    while position < len(text):
        character = text[position]
        if character == "'":
            position = _icu_quoted(text, position, plural)
        elif character == "{":
            choice = ICU_CHOICE.match(text, position)
            if choice is None:                              # a simple argument, `{name}`, `{n, number}`: skipped
                position = _icu_argument(text, position)
                continue
            spans.append((start, position, plural))
            position = _icu_cases(text, choice.end(), plural or choice.group(1) != "select", spans, depth + 1)
            start = position
        elif character == "}":
            if depth == 0:
                raise _NotIcu("a brace closes nothing")
            break
        else:
            position += 1
    else:
        if depth:
            raise _NotIcu("a case's message is not closed")
    spans.append((start, position, plural))
    return position


def _icu_argument(text: str, position: int) -> int:
    """Past a simple argument (braces counted) from its opening brace."""
    depth = 0
    for index in range(position, len(text)):
        depth += {"{": 1, "}": -1}.get(text[index], 0)
        if depth == 0:
            return index + 1
    raise _NotIcu("an argument's brace is not closed")


def _icu_cases(text: str, position: int, plural: bool, spans: list[tuple[int, int, bool]], depth: int) -> int:
    """Past a choice's cases and its closing brace, from its first case."""
    if depth > ICU_DEPTH:
        raise _NotIcu("choices nested too deep")
    cases = 0
    while True:
        end = ICU_END.match(text, position)
        if end is not None:
            if not cases:
                raise _NotIcu("a choice without a case")
            return end.end()
        case = ICU_CASE.match(text, position)
        if case is None:
            raise _NotIcu("a choice's case is not `key {message}`")
        position = _icu_message(text, case.end(), plural, spans, depth) + 1
        cases += 1


def icu_literals(text: str, plural: bool) -> list[str]:
    """The quoted literals of an ICU message text (`'{braces}'`), in order."""
    special = "{}|#" if plural else "{}|"
    return [match.group(0) for match in ICU_QUOTING.finditer(text)
            if match.group(0) != "''" and match.group(0)[1] in special]


def icu_unquoted(text: str, plural: bool) -> str:
    """An ICU message text as a reader reads it between its literals: `''` an apostrophe."""
    return _between(text, icu_literals(text, plural), lambda piece: piece.replace("''", "'"))


def icu_quoted(translation: str, literals: Sequence[str], plural: bool, doubled: bool, last: bool) -> str:
    """A translated ICU message text written back as ICU reads it: between the source's `literals`, every
    apostrophe doubled where the source doubled them (`doubled`, as Java's MessageFormat wants), else those before
    a `{`, `}`, `|` (or `#` in a plural), another apostrophe or, unless `last`, its end before the syntax that
    follows (`dell'{name}`, `users'`), which would open a literal or read as one apostrophe."""
    special = "{}|#" if plural else "{}|"

    def quoted(piece: str) -> str:
        if doubled:
            return piece.replace("'", "''")
        return regex.sub(r"'(?=[" + regex.escape(special + "'") + "])" + ("" if last else "|'$"), "''", piece)
    return _between(translation, literals, quoted)


def _between(text: str, literals: Sequence[str], change: Callable[[str], str]) -> str:
    """`text` with `change` applied to what lies between `literals` (found in order; one not found is ignored)."""
    out, position = [], 0
    for literal in literals:
        found = text.find(literal, position)
        if found < 0:
            continue
        out += [change(text[position:found]), literal]
        position = found + len(literal)
    return "".join(out) + change(text[position:])


# Symfony's choices before ICU (and Laravel's): `{0} No apples|{1} One apple|]1,Inf[ %count% apples`, each message
# behind an interval (`{1,2}`, `[1,5]`, `]1,Inf[`, `[-Inf,0[`) or none (`One apple|%count% apples`), `||` a pipe
_BOUND = r"(?:[-+]?Inf|-?[0-9]+(?:\.[0-9]+)?)"
CHOICE_INTERVAL = regex.compile(rf"\s*(?:\{{\s*-?[0-9]+(?:\s*,\s*-?[0-9]+)*\s*\}}"
                                rf"|[\[\]]\s*{_BOUND}\s*,\s*{_BOUND}\s*[\[\]])\s*")
CHOICE_BAR = regex.compile(r"(?<!\|)\|(?!\|)")


def interval_choices(text: str) -> list[tuple[int, int, bool]] | None:
    """The spans of `text`'s messages (start, end, False) where it is a Symfony choice: two messages or more
    between single `|`s, each behind an interval, or none behind one and one holding `%count%` (so that a title
    `Home | About` is not one). None otherwise."""
    bars = [match.start() for match in CHOICE_BAR.finditer(text)]
    if not bars:
        return None
    bounds = list(zip([0] + [bar + 1 for bar in bars], bars + [len(text)]))
    intervals = [CHOICE_INTERVAL.match(text, start, end) for start, end in bounds]
    if all(intervals):
        return [(interval.end(), end, False) for interval, (_, end) in zip(intervals, bounds)]
    if not any(intervals) and "%count%" in text:
        return [(start, end, False) for start, end in bounds]
    return None


def protected_spans(text: str, pattern: regex.Pattern | None = None, verbatim: bool = True) -> list[str]:
    """The spans of `text` a translation must keep, in order (a segment's `protected`): the matches of `pattern`
    and (`verbatim`) of `VERBATIM` (URLs, e-mail addresses, inline tags, entities, file paths), the leftmost
    first, the longer of two that start together, never overlapping."""
    patterns = [p for p in (pattern, VERBATIM if verbatim else None) if p is not None]
    spans, position = [], 0
    while patterns:
        found = [m for m in (p.search(text, position) for p in patterns) if m is not None and m.end() > m.start()]
        if not found:
            break
        match = min(found, key=lambda m: (m.start(), -m.end()))
        spans.append(match.group(0))
        position = match.end()
    return spans


# A word for line breaking: a run of characters other than spaces, where a tag (`<font color="red">`, `<v John
# Smith>`, `{\\an8}`) is one unbreakable piece, spaces and all, that takes no width on the screen.
WRAP_TAG = regex.compile(r"<[^\s<>][^<>\n]{0,2000}>|\{\\[^{}\n]{0,2000}\}")
WRAP_WORD = regex.compile(rf"(?:{WRAP_TAG.pattern}|[^\s])+")


def wrap_balanced(text: str, width: int, max_lines: int = 2) -> list[str]:
    """`text` on lines of at most `width` characters where it can be: one line if it fits, else `max_lines`
    lines of about equal length cut at spaces (as subtitles want), else as many lines of `width` as it takes.
    A line is never cut inside a tag (`<font color="red">`, `<v John Smith>`, `{\\an8}`), and tags take no width:
    a line's width is what a viewer sees."""
    words = WRAP_WORD.findall(text)
    sizes = [len(word) - sum(len(tag) for tag in WRAP_TAG.findall(word)) for word in words]
    total = sum(sizes) + max(len(words) - 1, 0)

    def wrapped(target: int) -> list[list]:
        lines: list[list] = []                               # greedy: each line's words and its width
        for word, size in zip(words, sizes):
            if lines and lines[-1][1] + 1 + size <= target:
                lines[-1][0].append(word)
                lines[-1][1] += 1 + size
            else:
                lines.append([[word], size])
        return lines

    def joined(lines: list[list]) -> list[str]:
        return [" ".join(line) for line, _ in lines] or [""]

    if total <= width:
        return [" ".join(words)]
    for count in range(2, max_lines + 1):
        target = -(-total // count)
        lines = wrapped(target)
        while len(lines) > count and target < width:
            target += 1
            lines = wrapped(target)
        if len(lines) <= count and all(size <= width for _, size in lines):
            return joined(lines)
    return joined(wrapped(width))
