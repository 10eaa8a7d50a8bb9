"""Gettext catalogs (`.po`, `.pot`), with `polib` (well kept, pure Python, what many translation tools use).

Every entry's msgid, msgctxt, comments, references and flags survive; obsolete entries and the header are not
translated. An entry already translated keeps its translation unless `overwrite`; each new translation is marked
`fuzzy`, for a translator to review (gettext then ignores it until they do). An entry with any translation, fuzzy
or not, is someone's work and is kept.

A catalog is translated in the run's direction (`Direction`, English -> Italian unless the run translates
Italian -> English), and only where its msgids are in the run's source language. Msgids are conventionally
English; their language is what an `X-Source-Language` header says, else what lingua detects over their text
(`LanguageDetector`, a clear lead needed: short or mixed msgids count as English), else, where lingua is not
installed, English. A catalog for the run's target language (`Language: it` on an English -> Italian run), a
template (no language) and a source catalog (`Language:` the run's source, as Django's English catalogs ship) are
translated: a source catalog's msgstrs are the source text, not anyone's translation, so every entry is redone.
The output says `Language:` the run's target, with its plural rule (`PLURAL_FORMS`) where the header had none or
named that language. Any other language, or msgids in the other language, is a one-line ValueError naming the run
the catalog needs. Plural entries get both forms (msgid for n == 1, msgid_plural for the others).

Placeholders (`%s`, `%(name)d`, `%1$s`, `{name}`, `{0}`, `{}`, Qt's `%1`), and URLs, e-mail addresses, inline tags
(however long their attributes), entities and file paths (`segments.VERBATIM`) come back verbatim: a translation
that lost one is redone between them (`segments`). An accelerator (`_File`, `&Open`) is taken out before translating
and put back before the same letter in the translation where it has one, else before its first letter; a `_` or `&`
inside a placeholder, URL, tag or path (`/_static/`, `target="_blank"`) is not one.

A documentation catalog's messages keep their documents' inline markup as written (`messages.RST_MARKUP`): Sphinx's
reStructuredText literals (``make html``), roles (:ref:`install`; a role's or a link's title is text), references
and substitutions, where an entry's references name a document (`#: ../../source/usage.rst:12`, Django's `.txt`,
autodoc's `mod.py:docstring of ...`) or, for an entry without references, where the catalog's do or, in a catalog
written without any, a msgid holds a whole literal or role; Markdown's code spans and link destinations where they
name `.md` files (MyST, mdpo). An entry whose references name only a program's files is a program's string. A
document's text has no accelerator (`_build` is a word), and a choice's syntax inside a literal is none.

A catalog is read in the charset its header declares (`charset=ISO-8859-1`, any Python knows), else as UTF-8 (or
UTF-16 with a byte-order mark), and written back in that charset, header unchanged, where every translation fits in
it, else as UTF-8 with the header saying so. A line that is not a comment, a keyword and quoted strings, or quoted
strings (`msgid "Hello` unclosed), or an entry whose msgctxt and msgid repeat an earlier one's (which msgfmt refuses),
is a one-line ValueError naming the file and the line. The catalog is written back line for line but for what the
translation changed (`po_lines`), new strings wrapped at the source's width.
"""
from __future__ import annotations

import codecs
import functools
import tempfile
from collections import Counter
from typing import Iterable

import regex

from pipeline.documents.encoding import Encoded
from pipeline.documents.messages import (MARKDOWN_MARKUP, PLACEHOLDER, RST_MARKUP, RST_SIGNAL, CatalogMessage,
                                         rst_pairs_kept)
from pipeline.documents.po_lines import spliced, wrap_width
from pipeline.documents.segments import VERBATIM, Segment
from pipeline.extras import MissingExtra, require
from pipeline.language import LANGUAGE_NAMES, Direction, LanguageDetector, language_name

ACCELERATOR = regex.compile(r"(?<![\w&_])([_&])(?=[\p{L}\p{N}])(?![A-Za-z]+;|[#][0-9]+;)")
PLURAL_FORMS = {"en": "nplurals=2; plural=(n != 1);", "it": "nplurals=2; plural=(n != 1);"}   # by target language
LANGUAGE = regex.compile(r"([A-Za-z]+)(?:[_@.-].*)?")          # en, en_US, en-GB, en@boldquot, it_IT.UTF-8
ALIASES = {"eng": "en", "english": "en", "ita": "it", "italian": "it"}
SOURCE_HEADER = "X-Source-Language"
DETECT_CHARS = 5000             # of msgid text lingua reads: plenty to tell English from Italian
DETECT_LEAD = (60.0, 4.0)       # a language other than English needs this confidence, and this many times the next
DETECT_WORDS = 8                # and this many words, in msgids of two words or more
WORD = regex.compile(r"\p{L}+")
# A documentation catalog's messages come from documents whose inline markup they keep (`messages.RST_MARKUP`):
# Sphinx's reStructuredText (`#: ../../source/usage.rst:12`; Django's docs are `.txt`; autodoc's docstrings,
# `#: ../../pkg/mod.py:docstring of pkg.mod.f:1`), MyST's or mdpo's Markdown (`#: docs/README.md:block 3 (paragraph)`)
MARKUP_OF_SOURCE = {"rst": RST_MARKUP, "rest": RST_MARKUP, "txt": RST_MARKUP, "md": MARKDOWN_MARKUP,
                    "markdown": MARKDOWN_MARKUP}
DOCUMENT_REFERENCE = regex.compile(r"\.(rst|rest|txt|md|markdown)(?::|$)|(:docstring)$", regex.I)


def language_code(value: str) -> str | None:
    """The ISO 639-1 code a header's language names ("it" for `it_IT`, "en" for `en@quot`), "" for none, None for
    a language this project has no corpus for."""
    value = value.strip()
    if not value:
        return ""
    match = LANGUAGE.fullmatch(value)
    code = ALIASES.get(match.group(1).lower(), match.group(1).lower()) if match else None
    return code if code in LANGUAGE_NAMES else None


@functools.lru_cache(maxsize=1)
def catalog_detector() -> LanguageDetector | None:
    """One detector over the corpora's languages for every catalog (lingua loads its models on first use), or
    None where lingua is not installed."""
    try:
        return LanguageDetector(tuple(LANGUAGE_NAMES))
    except MissingExtra:
        return None


def msgids_language(msgids: Iterable[str]) -> str:
    """The language `msgids` are written in: what lingua detects over their text (placeholders, tags, URLs and
    accelerators left out) where the evidence is strong, else English, as msgids conventionally are; English too
    where lingua is not installed. Strong: msgids of two words or more (a one-word label, "Password", "Pizza",
    "Camera", is as often a loanword as not) holding `DETECT_WORDS` words in all, and one language clearly ahead
    (`DETECT_LEAD`): a short English catalog is never taken for Italian."""
    detector = catalog_detector()
    if detector is None:
        return "en"
    sample, size, words = [], 0, 0
    for msgid in msgids:
        text = take_accelerator(msgid)[0]
        text = VERBATIM.sub(" ", PLACEHOLDER.sub(" ", text)).strip()
        count = len(WORD.findall(text))
        if count >= 2:
            sample.append(text)
            size, words = size + len(text) + 1, words + count
        if size >= DETECT_CHARS:
            break
    ranked = detector.detect("\n".join(sample)[:DETECT_CHARS]) if words >= DETECT_WORDS else []
    if len(ranked) < 2:
        return "en"
    (best, confidence), (_, runner_up) = ranked[0], ranked[1]
    least, ratio = DETECT_LEAD
    return best if confidence >= least and confidence >= ratio * runner_up else "en"


def _a(word: str) -> str:
    return ("an " if word[:1] in "AEIOU" else "a ") + word


def take_accelerator(text: str) -> tuple[str, str | None, str | None]:
    """(text without its accelerator marker, the marker, the letter it marked), or (text, None, None). A `_` or
    `&` inside a placeholder (`%(_name)s`, `{_id}`) or a verbatim span (`/_static/`, `target="_blank"`) is not one."""
    if len(text) > 60:                      # (first: a long text has none, and its marks cost each span's look)
        return text, None, None
    inside = [match.span() for pattern in (PLACEHOLDER, VERBATIM) for match in pattern.finditer(text)]
    found = [match for match in ACCELERATOR.finditer(text)
             if not any(start <= match.start() < end for start, end in inside)]
    if len(found) != 1:
        return text, None, None
    start = found[0].start()
    return text[:start] + text[start + 1:], found[0].group(1), text[start + 1]


def put_accelerator(translation: str, marker: str | None, letter: str | None) -> str:
    if marker is None:
        return translation
    for index, character in enumerate(translation):
        if character.lower() == letter.lower() and (index == 0 or not translation[index - 1].isalnum()):
            return translation[:index] + marker + translation[index:]
    for index, character in enumerate(translation):
        if character.lower() == letter.lower():
            return translation[:index] + marker + translation[index:]
    match = regex.search(r"\p{L}", translation)
    return translation if match is None else translation[:match.start()] + marker + translation[match.start():]


PO_START = regex.compile(rb"^(?:msgctxt|msgid)\s+\"", regex.M)


def looks_like_po(data: bytes) -> bool:
    """A gettext catalog's start: a msgid (or msgctxt) line and a msgstr."""
    head = data[:4096]
    return bool(PO_START.search(head)) and b"msgstr" in head


# strings as GNU gettext reads them, with its escapes only (msgfmt refuses `\q`, which polib would read as `\\q`)
PO_LINE = regex.compile(r'\s*(?:(?:msgctxt|msgid|msgid_plural|msgstr|msgstr\[[0-9]+\])\s*)?'
                        r'(?:"(?:[^"\\]|\\[ntbrfva\\"0-7]|\\x[0-9A-Fa-f])*"\s*)+|\s*(?:#.*)?')
CHARSET = regex.compile(r"charset\s*=\s*[^\s;]*", regex.I)
MAX_RUN = 10_000            # comment or continuation lines in a row (`check_syntax`)
NOT_CHARSETS = {"idna", "punycode", "raw-unicode-escape", "unicode-escape", "undefined", "mbcs", "oem"}
HEADER_CHARSET = regex.compile(rb'^"Content-Type:[^"\n]*charset\s*=\s*([A-Za-z0-9_.:-]+)', regex.M | regex.I)


def declared_charset(data: bytes) -> str | None:
    """The charset a catalog's header declares (`Content-Type: text/plain; charset=ISO-8859-1`) where it is a
    character set Python knows and not a Unicode one (those, and a byte-order mark, go through `Encoded`), else
    None: not a codec of another kind either (`base64`, `rot13`, `idna`, `unicode_escape`), which is no charset."""
    if data.startswith((b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff")):
        return None
    match = HEADER_CHARSET.search(data[:65536])
    if match is None:
        return None
    try:
        info = codecs.lookup(match.group(1).decode("ascii"))
    except LookupError:
        return None
    if not getattr(info, "_is_text_encoding", True) or info.name in NOT_CHARSETS or info.name.startswith("utf"):
        return None
    return info.name


def _names_utf8(content_type: str) -> bool:
    """Whether a header's `Content-Type` names UTF-8 (`charset=utf8`, `charset=UTF-8`)."""
    found = CHARSET.search(content_type)
    try:
        return found is not None and codecs.lookup(found.group(0).partition("=")[2].strip()).name == "utf-8"
    except LookupError:
        return False


def check_syntax(text: str, name: str) -> None:
    """A one-line ValueError naming the first line that is neither blank, a comment, nor a keyword (or a
    continuation) with one closed quoted string: polib would read `msgid "Hello` as "Hell"; or that makes a run of
    more than `MAX_RUN` comment or continuation lines, which polib adds to its entry one at a time, copying the
    entry so far (200,000 lines: 2 s; a 10 MB file of them would take minutes)."""
    run, kind = 0, None
    for number, line in enumerate(text.removeprefix("\ufeff").splitlines(), 1):
        if not PO_LINE.fullmatch(line):
            raise ValueError(f"{name}: not a gettext catalog: line {number}: expected a comment, a keyword "
                             f"(msgid, msgstr, ...) and a quoted string, or a quoted string, got {line[:60]!r}")
        stripped = line.lstrip()
        now = "comment" if stripped.startswith("#") else "continuation" if stripped.startswith('"') else None
        run = run + 1 if now is not None and now == kind else 1
        kind = now
        if run > MAX_RUN:
            raise ValueError(f"{name}: not a gettext catalog: line {number}: more than {MAX_RUN:,} {now} lines in "
                             "a row (no tool writes an entry so long)")


def entry_markup(entry: object, default: regex.Pattern | None) -> regex.Pattern | None:
    """The inline markup an entry's text keeps: its documents' (`DOCUMENT_REFERENCE`); none where its references
    name no document (a program's string); the catalog's `default` (`catalog_markup`) where it has none."""
    for path, _ in entry.occurrences:
        found = DOCUMENT_REFERENCE.search(path)
        if found is not None:
            return RST_MARKUP if found.group(2) else MARKUP_OF_SOURCE[found.group(1).lower()]
    return None if entry.occurrences else default


def catalog_markup(entries: Iterable) -> regex.Pattern | None:
    """The inline markup of a catalog's entries that have no references: the one its entries' references name
    most, else reStructuredText's where a msgid holds a whole literal or role (a Sphinx catalog written without
    references, `gettext_location = False`), else none (a program's catalog)."""
    entries = list(entries)
    named = Counter(markup for entry in entries if entry.occurrences
                    for markup in [entry_markup(entry, None)] if markup is not None)
    if named:
        return named.most_common(1)[0][0]
    return RST_MARKUP if any(RST_SIGNAL.search(entry.msgid) for entry in entries) else None


class Message:
    """One text of an entry (its msgid or msgid_plural): its segments (one, or one per text of an ICU or Symfony
    choice, as Lingui's and Symfony's catalogs hold them: `CatalogMessage`), and the translation with its
    accelerator (a choice has none, nor has a document's text). `markup`: the document's inline markup, kept as
    inline codes are (`entry_markup`)."""

    def __init__(self, text: str, markup: regex.Pattern | None = None):
        codes = [(match.start(), match.group(0)) for match in markup.finditer(text)] if markup is not None else []
        message = CatalogMessage(text, codes, rst_pairs_kept([code for _, code in codes]) if markup is RST_MARKUP
                                 else None)
        self._marker = self._letter = None
        if not message.choice and markup is None:
            bare, self._marker, self._letter = take_accelerator(text)
            message = CatalogMessage(bare)
        self._message = message
        self.segments: list[Segment] = message.segments

    @property
    def translation(self) -> str:
        return put_accelerator(self._message.translation(), self._marker, self._letter)


def check_unique(catalog: Iterable, text: str, name: str) -> None:
    """A ValueError naming the file and the line of the msgid where an entry repeats an earlier one's msgctxt and
    msgid, which msgfmt refuses ("duplicate message definition"); obsolete entries (`#~`) are not counted."""
    seen: set[tuple[str | None, str]] = set()
    lines = text.splitlines()
    for entry in catalog:
        if entry.obsolete:
            continue
        key = (entry.msgctxt, entry.msgid)
        if key in seen:
            line = next((number for number in range(max(entry.linenum, 1), len(lines) + 1)
                         if lines[number - 1].lstrip().startswith("msgid ")), entry.linenum)
            context = f" (msgctxt {entry.msgctxt!r})" if entry.msgctxt is not None else ""
            raise ValueError(f"{name}: not a gettext catalog: line {line}: msgid {entry.msgid[:60]!r}{context} "
                             "is defined twice")
        seen.add(key)


class PoDocument:
    """A gettext catalog: `segments` of its untranslated entries (all with `overwrite`, or for a source catalog),
    and `render()`. `direction`: the run's (`direct`); None opens it for English -> Italian without judging its
    msgids yet, for a door that calls `direct` once it knows the run."""

    def __init__(self, data: bytes, name: str = "document", overwrite: bool = False,
                 direction: Direction | None = None):
        polib = require("polib", "documents")
        self._charset = declared_charset(data)
        if self._charset is None:
            text = Encoded(data, name).text              # UTF-8 (or UTF-16 with a mark), else one line
        else:
            try:
                text = data.decode(self._charset)
            except UnicodeDecodeError as exc:
                line = data[:exc.start].count(b"\n") + 1
                raise ValueError(f"{name}: not {self._charset} text (its header's charset): line {line}") from None
        check_syntax(text, name)
        self._crlf = "\r\n" in text                      # written back with the line ends it came with
        self._source_text = text.removeprefix("\ufeff").replace("\r\n", "\n")   # spliced where it can be
        self._width = wrap_width(self._source_text)     # polib's strings wrapped as the source's are
        # polib reads a path when given one: the catalog goes through a file of ours, never the client's text
        with tempfile.NamedTemporaryFile(suffix=".po") as handle:
            handle.write(text.removeprefix("\ufeff").encode("utf-8"))
            handle.flush()
            try:
                self._catalog = polib.pofile(handle.name, wrapwidth=self._width, encoding="utf-8")
            except (OSError, ValueError, UnicodeError, LookupError) as exc:
                raise ValueError(f"{name}: not a gettext catalog: {str(exc).splitlines()[0]}") from None
        check_unique(self._catalog, text.removeprefix("\ufeff"), name)
        self._name, self._overwrite = name, overwrite
        self._language = self._catalog.metadata.get("Language", "").strip()
        self._msgids_language: str | None = None
        self.direction: Direction | None = None
        if direction is None:
            self._plan(Direction(), judge=False)
        else:
            self.direct(direction)

    def direct(self, direction: Direction) -> None:
        """Plan the translation for a run translating `direction`: which entries, and the header it gets.
        ValueError (one line) for a catalog in another language, or whose msgids are not in the run's source."""
        direction = Direction(*direction)
        if direction != self.direction:
            self._plan(direction, judge=True)
            self.direction = direction

    def _plan(self, direction: Direction, judge: bool) -> None:
        source, target = direction
        code = language_code(self._language)
        if code is None or (judge and self._language and code not in direction):
            raise ValueError(f"{self._name}: a catalog for language {self._language!r}; expected "
                             f"{_a(language_name(target))} one (Language: {target}), {_a(language_name(source))} "
                             f"source catalog (Language: {source}) or a template without a language")
        self._source_catalog = bool(self._language) and code == source    # its msgstrs are source text
        overwrite = self._overwrite or self._source_catalog
        self._todo: list[tuple[object, list[Message]]] = []
        markup = catalog_markup(entry for entry in self._catalog if not entry.obsolete and entry.msgid)
        for entry in self._catalog:
            if entry.obsolete or not entry.msgid:
                continue
            started = bool(entry.msgstr) or any(entry.msgstr_plural.values())   # fuzzy or not: a person's work
            if started and not overwrite:
                continue
            texts = [entry.msgid] + ([entry.msgid_plural] if entry.msgid_plural else [])
            self._todo.append((entry, [Message(text, entry_markup(entry, markup)) for text in texts]))
        if judge and self._todo:
            self._judge_msgids(direction)
        self.segments = [segment for _, messages in self._todo for message in messages for segment in message.segments]

    def _judge_msgids(self, direction: Direction) -> None:
        """ValueError unless the msgids are in the run's source language (`X-Source-Language`, else detected)."""
        declared = self._catalog.metadata.get(SOURCE_HEADER, "").strip()
        if self._msgids_language is None:
            self._msgids_language = (language_code(declared) or declared) if declared else msgids_language(
                entry.msgid for entry in self._catalog if not entry.obsolete and entry.msgid)
        language = self._msgids_language
        if language == direction.source:
            return
        if language not in LANGUAGE_NAMES:
            raise ValueError(f"{self._name}: its msgids are in {language!r} ({SOURCE_HEADER}); this run translates "
                             f"{direction.label}, from {language_name(direction.source)} msgids")
        said = f" ({SOURCE_HEADER})" if declared else ""
        needed = Direction(language, direction.source)
        raise ValueError(f"{self._name}: its msgids are {language_name(language)}{said}; this run translates "
                         f"{direction.label}; use {_a(needed.label)} run")

    def render(self) -> bytes:
        metadata = self._catalog.metadata
        self._old_metadata = dict(metadata)
        target = (self.direction or Direction()).target
        if not metadata.get("Language") or self._source_catalog:
            metadata["Language"] = target
        if "nplurals=INTEGER" in metadata.get("Plural-Forms", "nplurals=INTEGER") or metadata.get("Language") == target:
            metadata["Plural-Forms"] = PLURAL_FORMS[target]
        if "charset=CHARSET" in metadata.get("Content-Type", "charset=CHARSET"):
            metadata["Content-Type"] = "text/plain; charset=UTF-8"
        elif self._charset is None and not _names_utf8(metadata["Content-Type"]):   # written as UTF-8, whatever
            metadata["Content-Type"] = CHARSET.sub("charset=UTF-8", metadata["Content-Type"])   # else it said
        self._catalog.encoding = "utf-8"
        for entry, messages in self._todo:
            if entry.msgid_plural:
                entry.msgstr_plural = {0: messages[0].translation, 1: messages[1].translation}
            else:
                entry.msgstr = messages[0].translation
            if "fuzzy" not in entry.flags:
                entry.flags.insert(0, "fuzzy")            # first, as msgmerge writes it
        if self._charset is not None:                     # in the header's charset where every character fits
            try:
                return self._text().encode(self._charset)
            except UnicodeEncodeError:
                metadata["Content-Type"] = CHARSET.sub("charset=UTF-8", metadata["Content-Type"])
        return self._text().encode("utf-8")

    def _text(self) -> str:
        """The catalog's text: the source's lines but for what the translation changed (`po_lines.spliced`), else
        (a catalog whose entries are not parted by blank lines, one without a header) as polib writes it."""
        polib = require("polib", "documents")
        text = None
        if "\r" not in self._source_text:                 # a lone CR: polib's lines are not the source's
            index = {id(entry): number for number, entry in enumerate(self._catalog)}
            changed = {index[id(entry)]: entry for entry, _ in self._todo}
            text = spliced(self._source_text, list(self._catalog), changed, self._old_metadata,
                           dict(self._catalog.metadata), self._width, polib.unescape)
        if text is not None:
            return text.replace("\n", "\r\n") if self._crlf else text
        text = str(self._catalog)
        if not self._catalog.header:                      # polib writes a lone "#" for an empty header
            text = text.removeprefix("#\n")
        return text.replace("\n", "\r\n") if self._crlf else text
