"""Apple's strings files (`Localizable.strings`, `InfoPlist.strings`: iOS and macOS apps), for an `it.lproj`.

Each entry is `"key" = "value";` (a key may be bare, `NSCameraUsageDescription`), between `/* comments */` and
`// comments`. Each value that is a message (`messages.is_message`) is translated as a catalog's is
(`messages.CatalogMessage`): its escapes (`\\"`, `\\\\`, `\\n`, `\\t`, `\\Uxxxx`) read as the characters they stand
for, placeholders (`%@`, `%1$@`, `%d`, `%lld`, `%#@files@`) kept, and the translation written back escaped so. The
file comes back byte for byte but for the translated values: comments, keys, spacing, line ends and its encoding
(UTF-8, or UTF-16 with its byte-order mark, as Xcode wrote them). A value that is not closed (a missing quote or
`;`) is a one-line ValueError naming the line.
"""
from __future__ import annotations

import regex

from pipeline.documents.encoding import Encoded
from pipeline.documents.messages import CatalogMessage, is_message
from pipeline.documents.segments import Segment

QUOTED = r'"(?:[^"\\]|\\.)*"'
# What the file holds: comments, entries (their value's span is what gets translated), and anything else, an error
TOKEN = regex.compile(rf"""(?P<space>\s+)|(?P<comment>/\*.*?\*/|//[^\n]*)"""
                      rf"""|(?P<entry>(?:{QUOTED}|[\w.$:/-]+)\s*=\s*(?P<value>{QUOTED})\s*;)""", regex.S)
ESCAPE = regex.compile(r"\\(?:[Uu]([0-9A-Fa-f]{4})|([0-7]{1,3})|(.))", regex.S)
SIMPLE = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f", "v": "\v", "\\": "\\", '"': '"',
          "'": "'"}


class AppleStrings:
    """A `.strings` file: `segments` of its values, and `render()` the file again, their translations in."""

    def __init__(self, data: bytes, name: str = "document"):
        self._encoded = Encoded(data, name)
        text = self._encoded.text.removeprefix("\ufeff")
        self._bom = self._encoded.text[:len(self._encoded.text) - len(text)]
        self._text = text
        self._values: list[tuple[int, int, CatalogMessage]] = []
        position = 0
        while position < len(text):
            match = TOKEN.match(text, position)
            if match is None:
                line = text.count("\n", 0, position) + 1
                raise ValueError(f'{name}: line {line}: expected `"key" = "value";` or a comment, got '
                                 f'{text[position:position + 40]!r}')
            if match.group("entry"):
                start, end = match.span("value")
                value = _unescaped(text[start + 1:end - 1])
                if is_message(value) and "\ufffd" not in value:     # (a lone surrogate: left as written)
                    self._values.append((start, end, CatalogMessage(value)))
            position = match.end()
        self.segments: list[Segment] = [segment for _, _, message in self._values for segment in message.segments]

    def render(self) -> bytes:
        out, done = [], 0
        for start, end, message in self._values:
            translation = message.translation()
            if translation is None or not translation.strip():
                continue
            out += [self._text[done:start], '"' + _escaped(translation) + '"']
            done = end
        return self._encoded.encode(self._bom + "".join(out) + self._text[done:])


def _unescaped(value: str) -> str:
    """A quoted value's text, its escapes read."""
    def read(match: regex.Match) -> str:
        if match.group(1):
            return chr(int(match.group(1), 16))
        if match.group(2):
            return chr(int(match.group(2), 8))
        return SIMPLE.get(match.group(3), match.group(3))
    text = ESCAPE.sub(read, value)          # a pair of `\U` surrogates (`\UD83D\UDE00`) is one character, as Apple's
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")        # reader joins them


def _escaped(text: str) -> str:
    """A text as a quoted value: backslashes, double quotes and line breaks escaped."""
    out = text.replace("\\", "\\\\").replace('"', '\\"')
    for character, escape in (("\n", "n"), ("\r", "r"), ("\t", "t"), ("\a", "a"), ("\b", "b"), ("\f", "f"),
                              ("\v", "v")):
        out = out.replace(character, "\\" + escape)
    return "".join(f"\\U{ord(c):04x}" if ord(c) < 32 else c for c in out)     # any other control character
