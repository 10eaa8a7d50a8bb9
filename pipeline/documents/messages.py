"""A message catalog's own syntax, which a translation keeps as written (gettext's and XLIFF's messages alike):
placeholders (`%s`, `%name%`, `{name}`, `{{ name }}`), ICU MessageFormat's choices (`{count, plural, one {# file}
other {# files}}`, `select`, `selectordinal`, nested) and Symfony's (`{0} No apples|]0,Inf[ %count% apples`).

A `CatalogMessage` cuts a message at its choices' syntax: each case's text is one `Segment`, translated alone (so a
model never reads the syntax, and each case reads as a sentence), and the message is built again from the syntax as
written and each case's translation, quoted as ICU reads it, where that translation keeps the syntax whole (else
that case's source). The ICU scanner is this module's own: no ICU parser for Python (pyicumessageformat,
babel's) reports where in the text each message lies, which writing the syntax back byte for byte needs.
"""
from __future__ import annotations

import bisect
from collections import Counter
from typing import Callable, Sequence

import regex

from pipeline.documents.segments import VERBATIM, Segment, literal_pattern, protected_spans

# A message catalog's placeholders, which every translation keeps: printf (`%s`, `%(name)d`, `%1$s`, `%'d`; Apple's
# `%@`, `%1$@`, `%#@files@`, an Xcode substitution's `%arg`; Ruby's `%{count}` and `%<count>d`), Symfony's `%name%`
# (`%width%x%height%`; never printf's `%d.%d`, `%s_%s` or `%dx%d`), Qt (`%1`, `%L1`, `%n`), `{{ name }}` (Angular,
# Jinja, Handlebars), ICU's simple arguments (`{count, number}`, `{when, date, short}`, `{ name }`), Python's braces
# with a conversion and a format spec (`{0}`, `{name!r}`, `{date:%Y-%m-%d}`), shell and Spring variables (`$HOME`,
# `${user.home}`), tags, and command-line options (`--help`)
PLACEHOLDER = regex.compile(r"%(?![diouxXeEfFgGcrsab]\w?%)[A-Za-z_][\w.-]*\w%(?!%)|%#@\w+@|%arg\b"
                            r"|%\{[A-Za-z_]\w*\}|%<[A-Za-z_]\w*>[-+#0 ]*[0-9]*(?:\.[0-9]+)?[A-Za-z]"
                            r"|%(?:\([A-Za-z_][\w.]*\)|[0-9]+\$)?[-+#0']*(?:[0-9]+|\*)?(?:\.(?:[0-9]+|\*))?"
                            r"(?:hh|h|ll|l|L|q|j|z|t)?[diouxXeEfFgGcrsab%@]|%L?[0-9]{1,2}\b|%L?n\b"
                            r"|\{\{[^{}\n]{1,80}\}\}"
                            r"|\{\s*[\p{L}\p{N}_]+\s*,\s*(?:number|date|time|spellout|ordinal|duration)\s*"
                            r"(?:,[^{}\n]{0,80})?\}|\{\s+[A-Za-z_][\w.]*\s+\}"
                            r"|\{[A-Za-z_0-9.\[\]]*(?:![rsa])?(?::[^{}\n]{0,40})?\}"
                            r"|\$\{[^{}\s]+\}|\$\{?[A-Za-z_]\w*\}?|</?[A-Za-z][^<>\n]{0,100}>"
                            r"|(?<![\w-])--[A-Za-z0-9][\w-]*")
PIPE, POUND_OR_PIPE = regex.compile(r"\|\|"), regex.compile(r"#|\|\|")    # `||`, a pipe; `#`, a plural's count

# A catalog's value that is data, not a message: one word joined by what keys, identifiers and addresses have
# (`common.save`, `btn_primary`, `v1.2`, `jdbc:mysql://db/app`, `a=b`, `1:20`; never `Yes/No`, `N/A` or `e.g.`),
# a resource reference (`@string/hello`, `?attr/color`), a media type (`text/html`), a date pattern (`dd/MM/yyyy`,
# `HH:mm`), or one camelCase word (`btnPrimary`; a brand, `iPhone`, is kept as written too)
DATA = regex.compile(r"[^\s]*(?:\w_\w|://|\w=\w|\w:\w|[A-Za-z0-9]{2,}\.[A-Za-z0-9]{2,}|[0-9]\.[0-9])[^\s]*"
                     r"|[@?][\w:.]+/[\w.]+|[a-z]+[A-Z][A-Za-z0-9]*"
                     r"|(?:application|text|image|audio|video|font|multipart)/(?!(?:text|image|audio|video)\b)[\w.+-]+"
                     r"|(?=\S*(?:dd|MM|yy|HH|mm|ss))[dMyHhmsaEzSZ]+(?:[/.:,-][dMyHhmsaEzSZ]+)+")
SPACE = regex.compile(r"\s")


def is_message(text: str, *markup: regex.Pattern) -> bool:
    """Whether a catalog's value is a message to translate: no `DATA`, and a letter outside its placeholders,
    URLs, tags and paths (and the matches of `markup`)."""
    stripped = text.strip()
    if not SPACE.search(stripped) and DATA.fullmatch(stripped):       # (no data holds a space: its runs would be
        return False                                                    # tried from each position, quadratic)
    for pattern in (*markup, PLACEHOLDER, VERBATIM):
        text = pattern.sub(" ", text)
    return any(character.isalpha() for character in text)


# Inline markup of a documentation catalog's messages that a translation keeps as written, as a message's codes are
# (never translated, never read as a choice's syntax): reStructuredText's (Sphinx's catalogs) literals
# (``make html``), roles (:py:class:`~pathlib.Path`; of one with a title, :ref:`the guide <install>`, the role and
# the target: the title is text), a link's backtick and target (`Python <https://python.org>`_: the words are
# text), interpreted text and references by name (`Path`, `Python`_), substitutions (|version|) and footnote or
# citation references ([1]_, [#note]_); Markdown's (MyST's, mdpo's) code spans (`make html`), MyST's roles
# ({ref}`install`) and link destinations (`](install.md)`)
RST_LITERAL = r"(?<![\w`])``[^\s`](?:(?:[^`]|`(?!`))*?[^\s`])?``(?![\w`])"
RST_ROLE = r"(?<![\w`:]):(?:[A-Za-z][\w+.-]*:)+`"
RST_TITLED = r"[^`<\n]*[^\s`<][ \t]+<[^<>`\n]+>`"                 # `title <target>` after its opening backtick
RST_MARKUP = regex.compile(rf"{RST_LITERAL}|{RST_ROLE}(?={RST_TITLED})|{RST_ROLE}[^`\n]+`(?!`)"
                           rf"|(?<![\w`])`(?={RST_TITLED}__?)|[ \t]+<[^<>`\n]+>`(?:__?)?(?![\w`])"
                           r"|(?<![\w`])`[^\s`<](?:[^`<\n]*?[^\s`<])?`(?:__?)?(?![\w`])"
                           r"|(?<![\w|])\|[^\s|](?:[^|\n]*?[^\s|])?\|(?:__?)?(?![\w|])"
                           r"|\[(?:[0-9]+|#[\w-]*|\*|[A-Za-z][\w.-]*)\]_(?!\w)")
RST_OPENING = regex.compile(rf"`|{RST_ROLE}")           # a titled link's or role's opening, before its title
RST_CLOSING = regex.compile(r"[ \t]+<[^<>`\n]+>`(?:__?)?")  # and its closing: the target, after the title


def rst_pairs_kept(codes: Sequence[str]) -> Callable[[str], bool] | None:
    """A message's `well_formed` for its reStructuredText `codes` (`RST_MARKUP`'s) where they hold a titled link or
    role: whether a text has each opening (`` ` ``, `` :ref:` ``) before its closing (`` <https://python.org>`_ ``),
    in pairs, as the source has them. A translation that moved a target before its title is no link, though it kept
    every code. None where there is no such pair."""
    ends = {code: 1 if RST_OPENING.fullmatch(code) else -1 for code in codes
            if RST_OPENING.fullmatch(code) or RST_CLOSING.fullmatch(code)}
    if not ends:
        return None
    pattern = literal_pattern(codes)

    def paired(text: str) -> bool:
        depth = 0
        for match in pattern.finditer(text):
            depth += ends.get(match.group(0), 0)
            if depth not in (0, 1):
                return False
        return depth == 0
    return paired


# What the catalog libraries write into a message to refer to another, kept as written: i18next's nesting
# (`$t(common.save)`), vue-i18n's linked messages (`@:common.save`, `@.lower:name`, `@:(key)`, `@:{'key'}`) and
# its literal interpolation (`{'@'}`, `{'support@example.com'}`), in JSON and YAML catalogs alike
CATALOG_REFERENCES = regex.compile(r"\$t\([^()\n]{1,200}\)|@(?:\.[a-z]+)?:(?:\([\w.-]+\)|\{'[^'{}\n]{1,200}'\}"
                                   r"|[\w-]+(?:\.[\w-]+)*)|\{'[^'{}\n]{0,200}'\}")
RST_SIGNAL = regex.compile(rf"{RST_LITERAL}|{RST_ROLE}[^`\n]+`(?!`)")     # a whole literal or role: Sphinx's
MARKDOWN_MARKUP = regex.compile(r"(?:\{[\w:-]+\})?(?<!`)(`+)(?!`)[^\n]+?(?<!`)\1(?!`)"
                                r"|\]\([^()\s]*(?:\([^()\s]*\)[^()\s]*)*(?:\s+\"[^\"\n]*\")?\)")


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


def icu_literals(text: str, plural: bool, codes: Sequence[str] = ()) -> list[str]:
    """The quoted literals of an ICU message text (`'{braces}'`), in order; the apostrophes inside its inline
    `codes` (`equiv-text="{{ a ? 'x' : '' }}"`) are none."""
    special = "{}|#" if plural else "{}|"
    masked = _masked(text, codes)
    return [text[match.start():match.end()] for match in ICU_QUOTING.finditer(masked)
            if match.group(0) != "''" and match.group(0)[1] in special]


def icu_unquoted(text: str, plural: bool, codes: Sequence[str] = ()) -> str:
    """An ICU message text as a reader reads it between its literals and inline `codes`: `''` an apostrophe."""
    return outside(text, [*icu_literals(text, plural, codes), *codes], lambda piece: piece.replace("''", "'"))


def icu_quoted(translation: str, kept: Sequence[str], plural: bool, doubled: bool, last: bool) -> str:
    """A translated ICU message text written back as ICU reads it: outside the source's literals and inline codes
    (`kept`), every apostrophe doubled where the source doubled them (`doubled`, as Java's MessageFormat wants),
    else those before a `{`, `}`, `|` (or `#` in a plural), another apostrophe or, unless `last`, its end before the
    syntax or the code that follows (`dell'{name}`, `users'`), which would open a literal or read as one
    apostrophe."""
    special = "{}|#" if plural else "{}|"

    def quoted(piece: str) -> str:
        if doubled:
            return piece.replace("'", "''")
        return regex.sub(r"'(?=[" + regex.escape(special + "'") + "])" + ("" if last else "|'$"), "''", piece)
    return outside(translation, kept, quoted)


def _masked(text: str, codes: Sequence[str]) -> str:
    """`text` with each of `codes` blanked out (NUL characters, as long): their braces and apostrophes unread."""
    if not codes:
        return text
    return literal_pattern(codes).sub(lambda code: "\0" * len(code.group(0)), text)


def outside(text: str, kept: Sequence[str], change: Callable[[str], str]) -> str:
    """`text` with `change` applied to what lies outside the occurrences of `kept` (the longest first)."""
    if not kept:
        return change(text)
    pattern = literal_pattern(kept)
    out, position = [], 0
    for match in pattern.finditer(text):
        out += [change(text[position:match.start()]), match.group(0)]
        position = match.end()
    return "".join(out) + change(text[position:])


# Symfony's choices before ICU (and Laravel's): `{0} No apples|{1} One apple|]1,Inf[ %count% apples`, each message
# behind an interval (`{1,2}`, `[1,5]`, `]1,Inf[`, `[-Inf,0[`, Laravel's `[20,*]`), a label (`one: One apple`, which
# Symfony drops) or nothing (`One apple|%count% apples`); `||` is a pipe. vue-i18n's plurals are the same bars
# (`no apples | one apple | {count} apples`, its count `{count}` or `{n}`; `{'|'}` is a pipe, a kept code)
_BOUND = r"(?:[-+]?Inf|-?[0-9]+(?:\.[0-9]+)?|\*)"               # `*`: Laravel's unbounded end
CHOICE_INTERVAL = regex.compile(rf"\s*(?:\{{\s*-?[0-9]+(?:\s*,\s*-?[0-9]+)*\s*\}}"
                                rf"|[\[\]]\s*{_BOUND}\s*,\s*{_BOUND}\s*[\[\]])\s*")
CHOICE_LABEL = regex.compile(r"\s*\w+:\s*")
CHOICE_BAR = regex.compile(r"(?<!\|)\|(?!\|)")
CHOICE_COUNT = regex.compile(r"%count%|(?<!\{)\{\s*(?:count|n)\s*\}(?!\})")   # Symfony's, vue-i18n's (not {{count}})


def interval_choices(text: str) -> list[tuple[int, int, bool]] | None:
    """The spans of `text`'s messages (start, end, False) where it is a Symfony (or vue-i18n) choice: two messages
    or more between single `|`s, each behind an interval, or where one holds a count (`%count%`, vue-i18n's
    `{count}` or `{n}`: so that a title `Home | About` is not one), each behind an interval or a label (Symfony's,
    with `%count%`: `Total: {count} items` in vue-i18n is text), or none behind one. None otherwise."""
    bars = [match.start() for match in CHOICE_BAR.finditer(text)]
    if not bars:
        return None
    bounds = list(zip([0] + [bar + 1 for bar in bars], bars + [len(text)]))
    intervals = [CHOICE_INTERVAL.match(text, start, end) for start, end in bounds]
    if all(intervals):
        return [(interval.end(), end, False) for interval, (_, end) in zip(intervals, bounds)]
    if not CHOICE_COUNT.search(text):
        return None
    marks = [interval or CHOICE_LABEL.match(text, start, end) for interval, (start, end) in zip(intervals, bounds)]
    if "%count%" in text and all(marks):            # Symfony's labels (`one: ...|more: ...`), with intervals or
        return [(mark.end(), end, False) for mark, (_, end) in zip(marks, bounds)]     # not; vue-i18n has none
    return None if any(intervals) else [(start, end, False) for start, end in bounds]


class MessagePart:
    """One text of a catalog message (all of it, or an ICU case's, or a Symfony choice's message, or the text
    around a choice) as a `Segment`: its `codes` (inline codes, an XLIFF unit's `<x/>`) exactly once each, its
    placeholders, ICU literals and, in a plural, `#` kept; its apostrophes read and written back as ICU quotes them.
    `well_formed(text)`: whether a text with these codes is well formed (None: any is), which a translation must be
    where the source is."""

    def __init__(self, message: CatalogMessage, source: str, codes: list[str], plural: bool, last: bool,
                 well_formed: Callable[[str], bool] | None = None):
        self.message, self.source, self.plural, self.last = message, source, plural, last
        self.literals = icu_literals(source, plural, codes) if message.quoting else []
        read = icu_unquoted(source, plural, codes) if message.quoting else source
        self._codes = Counter(codes)
        kept = [*codes, *self.literals]
        self._pattern = [*([literal_pattern(kept)] if kept else []),                       # read as `codes|#|...`
                         POUND_OR_PIPE if plural and message.icu else PIPE, PLACEHOLDER]
        self._well_formed = well_formed
        self._balanced = well_formed is None or well_formed(source)
        self.segment = Segment(read, protected=protected_spans(read, self._pattern), accept=self._accept,
                               numbered=True)

    def _placeholders(self, text: str) -> Counter:
        """The placeholders of a text (outside its codes), each as often as it holds it."""
        return Counter(match.group(0) for match in PLACEHOLDER.finditer(_masked(text, list(self._codes))))

    def _syntax_kept(self, translation: str) -> bool:
        """No brace (ICU) or bar (Symfony) more or less than the source: one made up would break the message."""
        marks = "{}" if self.message.icu else "|" if self.message.bars else ""
        return all(translation.count(mark) == self.segment.text.count(mark) for mark in marks)

    def _accept(self, translation: str) -> bool:
        """A whole translation is kept where it holds every code exactly as often as the source, the other spans
        at least as often, its choice's syntax (`_syntax_kept`), and is well formed (a closing tag moved before
        its opening one is not) where the source is: a text that holds only one end of a pair is translated
        between its codes."""
        spans = Counter(protected_spans(translation, self._pattern))     # read as the source's were (`Path` inside
        found = Counter({code: spans[code] for code in self._codes})    # :class:`Path` is none of its own)
        others = Counter(span for span in self.segment.protected if span not in self._codes)
        return self._balanced and self._syntax_kept(translation) and found == self._codes and \
            all(spans[span] >= count for span, count in others.items()) and \
            (self._well_formed is None or self._well_formed(translation))

    def written(self) -> str:
        """The text's translation as the message holds it: the source's where there is none, where it is the
        source's text, or where, in a choice, it would break the syntax (a brace or a bar the model made up)."""
        translation = self.segment.translation
        if translation is None or translation == self.segment.text:
            return self.source
        if self._placeholders(translation) != self._placeholders(self.segment.text):
            return self.source          # one made up (`%@` twice, an added `{0}`) would break the app at run time
        if self.message.bars:
            return translation if self._syntax_kept(translation) else self.source
        if not self.message.icu:
            return translation
        written = icu_quoted(translation, [*self.literals, *self._codes], self.plural, self.message.doubled,
                             self.last) if self.message.quoting else translation
        plain = icu_plain(_masked(written, list(self._codes)), self.plural)   # codes' braces unread, as the source's
        return written if plain and self._syntax_kept(translation) else self.source


class CatalogMessage:
    """A catalog's message (a gettext msgid, an XLIFF unit's source) as `segments`: one per text of its ICU or
    Symfony choice (`parts`), or one for all of it; `translation()` the message again, its syntax as written.
    `codes`: (where, code) of each inline code in `text`, masked in reading its syntax (`equiv-text="{{n}}"`);
    `well_formed`: as `MessagePart`'s. `icu_quoting`: whether apostrophes quote as ICU reads them: None, in an ICU
    choice (XLIFF, gettext); True, in any message that reads as ICU (an ICU catalog's: FormatJS, where `l''{file}`
    is needed); False, never (Flutter's ARB, whose apostrophes are literal by default)."""

    def __init__(self, text: str, codes: Sequence[tuple[int, str]] = (),
                 well_formed: Callable[[str], bool] | None = None, icu_quoting: bool | None = None):
        masked = list(text)
        for at, code in codes:
            masked[at:at + len(code)] = "\0" * len(code)
        masked = "".join(masked)
        spans = icu_messages(masked)
        self._cut = spans is not None                       # an ICU choice, cut into texts
        self.icu = self._cut or (icu_quoting is True and icu_plain(masked, False))        # read as ICU
        self.quoting = self.icu and icu_quoting is not False
        choices = None if self.icu else interval_choices(masked)
        self.bars = choices is not None                    # a Symfony choice's messages, between bars
        spans = spans or choices or [(0, len(text), False)]
        bounds = [0, *(edge for start, end, _ in spans for edge in (start, end)), len(text)]
        self._syntax = [text[start:end] for start, end in zip(bounds[::2], bounds[1::2])]    # around the texts
        self.doubled = self.quoting and any(masked[start:end] != icu_unquoted(masked[start:end], plural)
                                        for start, end, plural in spans)        # `''` for every apostrophe
        ordered = sorted(codes, key=lambda found: found[0])
        places = [at for at, _ in ordered]
        self.parts: list[MessagePart] = []
        for start, end, plural in spans:                                    # each part's codes, found by bisection
            inside = [code for _, code in ordered[bisect.bisect_left(places, start):bisect.bisect_left(places, end)]]
            self.parts.append(MessagePart(self, text[start:end], inside, plural, end == len(text), well_formed))
        self.segments = [part.segment for part in self.parts]

    @property
    def choice(self) -> bool:
        """Whether the message is a choice (ICU's or Symfony's), cut into texts."""
        return self._cut or self.bars

    def translation(self) -> str | None:
        """The message's translation: its choices' syntax as written around each text's; None before one."""
        if self.segments[0].translation is None:
            return None
        out = [self._syntax[0]]
        for part, syntax in zip(self.parts, self._syntax[1:]):
            out += [part.written(), syntax]
        return "".join(out)
