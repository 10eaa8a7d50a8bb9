"""Gettext catalogs (`.po`, `.pot`), with `polib` (well kept, pure Python, what many translation tools use).

Every entry's msgid, msgctxt, comments, references and flags survive; obsolete entries and the header are not
translated. An entry already translated keeps its translation unless `overwrite`; each new translation is marked
`fuzzy`, for a translator to review (gettext then ignores it until they do). An entry with any translation, fuzzy
or not, is someone's work and is kept. An English catalog (`Language: en`, as Django's source catalogs ship) is a
source catalog: its msgids are the English text, every entry is translated (its msgstrs are English, not anyone's
Italian) and it comes back as `Language: it`. A catalog declaring any other language but Italian is refused.
Plural entries get both Italian forms (msgid for n == 1, msgid_plural for the others); the header of a template or
of an English catalog gets Italian's plural rule.

Placeholders (`%s`, `%(name)d`, `%1$s`, `{name}`, `{0}`, `{}`, Qt's `%1`), and URLs, e-mail addresses, inline tags
(however long their attributes), entities and file paths (`segments.VERBATIM`) come back verbatim: a translation
that lost one is redone between them (`segments`). An accelerator (`_File`, `&Open`) is taken out before translating
and put back before the same letter in the translation where it has one, else before its first letter; a `_` or `&`
inside a placeholder, URL, tag or path (`/_static/`, `target="_blank"`) is not one.
"""
from __future__ import annotations

import tempfile

import regex

from pipeline.documents.encoding import Encoded
from pipeline.documents.segments import VERBATIM, Segment, protected_spans
from pipeline.extras import require

PLACEHOLDER = regex.compile(r"%(?:\([A-Za-z_][\w.]*\)|[0-9]+\$)?[-+#0]*(?:[0-9]+|\*)?(?:\.(?:[0-9]+|\*))?"
                            r"(?:hh|h|ll|l|L|q|j|z|t)?[diouxXeEfFgGcrsab%]|%[0-9]{1,2}\b|\{[A-Za-z_0-9.:!\[\]]*\}"
                            r"|\$\{?[A-Za-z_]\w*\}?|</?[A-Za-z][^<>\n]{0,100}>")
ACCELERATOR = regex.compile(r"(?<![\w&_])([_&])(?=[\p{L}\p{N}])(?![A-Za-z]+;|[#][0-9]+;)")
ITALIAN_PLURALS = "nplurals=2; plural=(n != 1);"
ENGLISH = regex.compile(r"en(?:[_@.-].*)?", regex.I)          # en, en_US, en-GB, en@boldquot


def take_accelerator(text: str) -> tuple[str, str | None, str | None]:
    """(text without its accelerator marker, the marker, the letter it marked), or (text, None, None). A `_` or
    `&` inside a placeholder (`%(_name)s`, `{_id}`) or a verbatim span (`/_static/`, `target="_blank"`) is not one."""
    inside = [match.span() for pattern in (PLACEHOLDER, VERBATIM) for match in pattern.finditer(text)]
    found = [match for match in ACCELERATOR.finditer(text)
             if not any(start <= match.start() < end for start, end in inside)]
    if len(found) != 1 or len(text) > 60:
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


class Message:
    """One text of an entry (its msgid or msgid_plural): a segment, and the translation with its accelerator."""

    def __init__(self, text: str):
        bare, self._marker, self._letter = take_accelerator(text)
        self.segment = Segment(bare, protected_spans(bare, PLACEHOLDER), numbered=True)

    @property
    def translation(self) -> str:
        return put_accelerator(self.segment.translation, self._marker, self._letter)


class PoDocument:
    """A gettext catalog: `segments` of its untranslated entries (all with `overwrite`), and `render()`."""

    def __init__(self, data: bytes, name: str = "document", overwrite: bool = False):
        polib = require("polib", "documents")
        Encoded(data, name)                              # UTF-8 (or UTF-16 with a mark), else one line
        # polib reads a path when given one: the catalog goes through a file of ours, never the client's text
        with tempfile.NamedTemporaryFile(suffix=".po") as handle:
            handle.write(data)
            handle.flush()
            try:
                self._catalog = polib.pofile(handle.name, wrapwidth=79)
            except (OSError, ValueError, UnicodeError, LookupError) as exc:
                raise ValueError(f"{name}: not a gettext catalog: {str(exc).splitlines()[0]}") from None
        language = self._catalog.metadata.get("Language", "").strip()
        self._english = bool(ENGLISH.fullmatch(language))          # a source catalog: its msgstrs are English
        if language and not (self._english or language.lower().startswith("it")):
            raise ValueError(f"{name}: a catalog for language {language!r}; expected an Italian one (Language: it), "
                             "an English source catalog (Language: en) or a template without a language")
        overwrite = overwrite or self._english
        self._todo: list[tuple[object, list[Message]]] = []
        for entry in self._catalog:
            if entry.obsolete or not entry.msgid:
                continue
            started = bool(entry.msgstr) or any(entry.msgstr_plural.values())   # fuzzy or not: a person's work
            if started and not overwrite:
                continue
            texts = [entry.msgid] + ([entry.msgid_plural] if entry.msgid_plural else [])
            self._todo.append((entry, [Message(text) for text in texts]))
        self.segments = [message.segment for _, messages in self._todo for message in messages]

    def render(self) -> bytes:
        metadata = self._catalog.metadata
        if not metadata.get("Language") or self._english:
            metadata["Language"] = "it"
        if "nplurals=INTEGER" in metadata.get("Plural-Forms", "nplurals=INTEGER") or metadata.get("Language") == "it":
            metadata["Plural-Forms"] = ITALIAN_PLURALS
        if "charset=CHARSET" in metadata.get("Content-Type", "charset=CHARSET"):
            metadata["Content-Type"] = "text/plain; charset=UTF-8"
        self._catalog.encoding = "utf-8"
        for entry, messages in self._todo:
            if entry.msgid_plural:
                entry.msgstr_plural = {0: messages[0].translation, 1: messages[1].translation}
            else:
                entry.msgstr = messages[0].translation
            if "fuzzy" not in entry.flags:
                entry.flags.insert(0, "fuzzy")            # first, as msgmerge writes it
        text = str(self._catalog)
        if not self._catalog.header:                      # polib writes a lone "#" for an empty header
            text = text.removeprefix("#\n")
        return text.encode("utf-8")
