"""Java resource bundles (`.properties`: `messages.properties` of Java, Spring, Jakarta, Android's older projects),
read with `javaproperties` (well kept, pure Python), whose parser keeps each entry's source text: every line but a
translated entry's comes back byte for byte (comments, blank lines, keys, separators, continuation lines, line ends).

Each value with a letter that is a message (`messages.is_message`: not a key, an identifier or an address) is
translated as a catalog's message (`messages.CatalogMessage`): placeholders (`{0}`, `{1,number,#}`, `%s`) come back
as written, and a ChoiceFormat (`{0,choice,0#no files|1#one file|1<{0} files}`) is kept whole. A value with an
argument is a MessageFormat pattern, where `''` is an apostrophe and `'{'` a literal: the model reads one
apostrophe, a literal is kept as written, every other apostrophe of the translation is written doubled (`l''utente
{0}`), and a translation with a brace of its own (which MessageFormat would refuse) is not written; a value without
one keeps its apostrophes as written (as Spring reads it). A translated entry is written on one line after its key
and separator as written (or, where the key was cut by a continuation, after the key again), escaped as Java reads
it (a leading space, `=` or `:`, backslashes, line breaks), and read back to check it.

A bundle is read as UTF-8 (Java 9's default), else ISO-8859-1 (Java 8's); one written in ASCII alone (its other
characters as `\\uXXXX`, as `native2ascii` wrote them) gets its translations so too, and one in ISO-8859-1 gets
`\\uXXXX` for each character ISO-8859-1 lacks, so that either Java reads it alike.
"""
from __future__ import annotations

import regex

from pipeline.documents.messages import CatalogMessage, is_message
from pipeline.documents.segments import Segment, literal_pattern
from pipeline.extras import require

# A MessageFormat argument (`{0}`, `{1,number,#.##}`), and a ChoiceFormat one (kept whole: its messages are syntax)
ARGUMENT = regex.compile(r"\{\s*[0-9]+\s*(?:,[^{}]*)?\}")
CHOICE_FORMAT = regex.compile(r"\{\s*[0-9]+\s*,\s*choice\s*,(?:[^{}]|\{[^{}]*\})*\}")
# MessageFormat's quoting, read left to right: `''` is an apostrophe, `'{0}'` a literal (kept as written)
QUOTING = regex.compile(r"''|'[^']*'")
PATTERN_PARTS = regex.compile(rf"(?P<choice>{CHOICE_FORMAT.pattern})|{QUOTING.pattern}")   # a choice kept whole
KEY_AND_SEPARATOR = regex.compile(r"[ \t\f]*(?:\\.|[^\s=:\\])*(?:[ \t\f]*[=:][ \t\f]*|[ \t\f]+|$)", regex.S)
LINE_END = regex.compile(r"\r\n|\r|\n")


MAX_CONTINUATIONS = 1_000          # continuation lines in a row (`check_continuations`)
LINE_END = regex.compile(r"\r\n|\r|\n")                   # a .properties file's line terminators
CONTINUED = regex.compile(r"(?<!\\)(?:\\\\)*\\\Z")            # a line ending in an odd number of backslashes


def check_continuations(text: str, name: str) -> None:
    """A one-line ValueError naming the line where more than `MAX_CONTINUATIONS` lines in a row continue on the
    next (end with `\\`): javaproperties searches the whole logical line again after each one, so such an entry costs
    the square of its length (5,000 lines: 6 s; 20,000: over a minute). No bundle holds an entry so long."""
    run = 0
    for number, line in enumerate(LINE_END.split(text), 1):
        run = run + 1 if CONTINUED.search(line) else 0
        if run > MAX_CONTINUATIONS:
            raise ValueError(f"{name}: not a .properties file to translate: line {number}: more than "
                             f"{MAX_CONTINUATIONS:,} lines in a row continue on the next (end with a backslash)")


class PropertiesDocument:
    """A `.properties` bundle: `segments` of its messages, and `render()` the file again, their translations in."""

    def __init__(self, data: bytes, name: str = "document"):
        javaproperties = require("javaproperties", "documents")
        try:
            self._text, self._codec = data.decode("utf-8"), "utf-8"
        except UnicodeDecodeError:
            self._text, self._codec = data.decode("iso-8859-1"), "iso-8859-1"
        if self._text.startswith("\ufeff"):
            self._text, self._codec = self._text[1:], "utf-8-sig"
        if "\x00" in self._text:
            raise ValueError(f"{name}: not a .properties file: binary data (a NUL byte)")
        self._ascii = all(ord(character) < 128 for character in self._text)
        self._elements: list = []
        self._entries: list[tuple[int, CatalogMessage, regex.Pattern | None]] = []   # (index, message, its codes
        self._javaproperties = javaproperties                                      # where a MessageFormat)
        check_continuations(self._text, name)
        try:
            elements = list(javaproperties.parse(self._text))
        except javaproperties.InvalidUEscapeError as exc:
            line = self._text[:max(self._text.find(exc.escape), 0)].count("\n") + 1
            raise ValueError(f"{name}: line {line}: an invalid escape `{exc.escape.strip()}`: expected \\u and four "
                             "hex digits") from None
        for index, element in enumerate(elements):
            self._elements.append(element)
            if not isinstance(element, javaproperties.KeyValue) or not is_message(element.value):
                continue
            value, text, codes = element.value, "", []
            if ARGUMENT.search(value):                  # a MessageFormat pattern: its quoting read
                done = 0
                for match in PATTERN_PARTS.finditer(value):
                    text += value[done:match.start()]
                    if match.group(0) == "''":
                        text += "'"
                    else:                               # a choice (its `''` as written) or a quoted literal
                        codes.append((len(text), match.group(0)))
                        text += match.group(0)
                    done = match.end()
                text += value[done:]
                pattern = literal_pattern([*(code for _, code in codes), *ARGUMENT.findall(text)])
            else:
                text, pattern = value, None
            self._entries.append((index, CatalogMessage(text, sorted(codes)), pattern))
        self.segments: list[Segment] = [segment for _, message, _ in self._entries for segment in message.segments]

    def render(self) -> bytes:
        out = [element.source for element in self._elements]
        for index, message, pattern in self._entries:
            translation = message.translation()
            if translation is None or not translation.strip():
                continue
            if pattern is not None:                     # MessageFormat: quoted as it reads, no brace of its own
                pieces = regex.split(f"({pattern.pattern})", translation)
                if any("{" in piece or "}" in piece for piece in pieces[0::2]):
                    continue
                translation = "".join(piece if index % 2 else piece.replace("'", "''")
                                      for index, piece in enumerate(pieces))
            element = self._elements[index]
            end = LINE_END.search(element.source, len(element.source.rstrip("\r\n")))
            line = KEY_AND_SEPARATOR.match(element.source).group(0) + self._escaped(translation)
            if list(self._javaproperties.loads(line).items()) != [(element.key, translation)]:
                line = self._javaproperties.escape(element.key) + "=" + self._escaped(translation)  # a key cut
            out[index] = line + (end.group(0) if end else "")
        return "".join(out).encode("iso-8859-1" if self._codec == "iso-8859-1" else self._codec)

    def _escaped(self, value: str) -> str:
        """`value` as a .properties value: backslashes, line breaks, tabs and a leading space escaped; characters
        the file's encoding lacks (all but ASCII in an ASCII bundle) as `\\uXXXX`."""
        out = value.replace("\\", "\\\\").replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t") \
            .replace("\f", "\\f")
        if out.startswith((" ", "=", ":")):              # (after a key and spaces, a separator)
            out = "\\" + out
        limit = 128 if self._ascii else 256 if self._codec == "iso-8859-1" else None
        if limit is None:
            return out
        return "".join(character if ord(character) < limit else "".join(
            f"\\u{unit:04x}" for unit in _utf16_units(character)) for character in out)


def _utf16_units(character: str) -> list[int]:
    """A character's UTF-16 code units (two, a surrogate pair, past the BMP), as Java's `\\uXXXX` escapes name."""
    encoded = character.encode("utf-16-be")
    return [int.from_bytes(encoded[index:index + 2], "big") for index in range(0, len(encoded), 2)]
