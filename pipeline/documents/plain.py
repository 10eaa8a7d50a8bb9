"""Plain text (`.txt`): paragraphs (blocks between blank lines) and every blank line survive.

A paragraph whose lines are hard-wrapped prose (all but the last fill most of the widest line, none starts
like a list item) is translated as one text and wrapped again to its widest line; any other paragraph keeps
its lines, each translated as one text (a list, a poem, an address). Line ends (LF or CRLF), a byte-order mark
and the text's end are kept, and so are the URLs, e-mail addresses, inline tags, entities and file paths of the
text (`segments.protected_spans`): a translation that lost one is redone between them.
"""
from __future__ import annotations

import textwrap

import regex

from pipeline.documents.encoding import Encoded
from pipeline.documents.segments import Segment, protected_spans

BLANK_LINES = regex.compile(r"((?:\r?\n)[ \t]*(?:\r?\n)(?:[ \t]*\r?\n)*)")
LIST_ITEM = regex.compile(r"^\s*(?:[-*+•–]\s|\d{1,3}[.)]\s|[a-zA-Z][.)]\s)")
FILL = 0.6          # a wrapped paragraph's lines (all but the last) fill at least this share of the widest
MIN_WRAP_WIDTH = 40


def is_wrapped(lines: list[str]) -> bool:
    """Whether a paragraph's lines look like one hard-wrapped text."""
    if len(lines) < 2 or any(LIST_ITEM.match(line) for line in lines):
        return False
    width = max(len(line.rstrip()) for line in lines)
    return width >= MIN_WRAP_WIDTH and all(len(line.rstrip()) >= FILL * width for line in lines[:-1])


def verbatim_kept(text: str) -> Segment:
    """A segment whose URLs, e-mail addresses, inline tags, entities and paths come back verbatim."""
    return Segment(text, protected=protected_spans(text))


class TextDocument:
    """`segments` of a plain text; `render()` its bytes with their translations."""

    def __init__(self, data: bytes, name: str = "document"):
        self._encoded = Encoded(data, name)
        text = self._encoded.text
        self._newline = "\r\n" if "\r\n" in text else "\n"
        self._parts = BLANK_LINES.split(text)          # paragraph, blank run, paragraph, ...
        self._layout: list[tuple[int, list[Segment] | Segment, str, int]] = []     # part, unit, indent, width
        self.segments: list[Segment] = []
        for index in range(0, len(self._parts), 2):
            body = self._parts[index].rstrip("\r\n")           # the text's last line ends, kept as they are
            self._parts[index] = self._parts[index][len(body):]
            lines = body.split(self._newline)
            if is_wrapped(lines):
                indent = lines[0][:len(lines[0]) - len(lines[0].lstrip())]
                segment = verbatim_kept(" ".join(line.strip() for line in lines))
                self._layout.append((index, segment, indent, max(len(line.rstrip()) for line in lines)))
                self.segments.append(segment)
            else:
                line_segments = [verbatim_kept(line) for line in lines]
                self._layout.append((index, line_segments, "", 0))
                self.segments.extend(line_segments)

    def render(self) -> bytes:
        parts = list(self._parts)
        for index, unit, indent, width in self._layout:
            if isinstance(unit, Segment):
                lines = textwrap.wrap(unit.translation, width, initial_indent=indent, subsequent_indent=indent,
                                      break_long_words=False, break_on_hyphens=False)
                parts[index] = self._newline.join(lines) + parts[index]
            else:
                parts[index] = self._newline.join(segment.translation for segment in unit) + parts[index]
        return self._encoded.encode("".join(parts))
