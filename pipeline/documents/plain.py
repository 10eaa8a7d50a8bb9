"""Plain text (`.txt`): paragraphs (blocks between blank lines) and every blank line survive.

A paragraph whose lines are hard-wrapped prose (all but the last fill most of the widest line, none starts
like a list item) is translated as one text and wrapped again to its widest line; any other paragraph keeps
its lines, each translated as one text (a list, a poem, an address; a list item's marker, `1.`, `-`, `•`, kept
out of what the model reads). Line ends (LF or CRLF), a byte-order mark
and the text's end are kept, and so are the URLs, e-mail addresses, inline tags, entities and file paths of the
text (`segments.protected_spans`), and command options (`--verbose`, `-v`): a translation that lost one is
redone between them.
Commands and code, as READMEs and INSTALL files show them, come back as written (`is_code`): a paragraph indented
at least `CODE_INDENT` columns more than the text's least indented one, none of whose lines ends a sentence and
one of which looks like code (a prompt, a path, an option, an operator or bracket, or a bare command such as
`make install`); and, in any paragraph, a line that opens with a shell prompt (`$ ./configure`, `>>> print(x)`).
"""
from __future__ import annotations

import textwrap
from typing import Any

import regex

from pipeline.documents.encoding import Encoded
from pipeline.documents.segments import Segment, protected_spans

BLANK_LINES = regex.compile(r"((?:\r?\n)[ \t\f\v]*(?:\r?\n)(?:[ \t\f\v]*\r?\n)*)")   # a form feed's line (a page break) too
LIST_ITEM = regex.compile(r"^\s*(?:[-*+•–]\s|\d{1,3}[.)]\s|[a-zA-Z][.)]\s)")
CODE_INDENT = 4     # columns (a tab counts as up to the next multiple of 8) past the least indented paragraph
PROMPT = regex.compile(r"^\s*(?:\$|%|>>>|\.\.\.|[A-Z]:\\[^>\s]*>|PS [^>\n]*>|[\w.-]+@[\w.-]+:[^$#\n]*[$#])\s")
CODE_SIGN = regex.compile(r"[$/=(){}\[\];|&<>\\_]|--?[A-Za-z]|^\s*[a-z][\w.+-]*(?:\s+[a-z][\w.+-]*)?\s*$")
OPTION = regex.compile(r"(?<!\S)--?[A-Za-z][\w-]*(?:=[^\s,;]+)?(?![\w-])")   # a command's option: --prefix=/usr, -v
SENTENCE_END = regex.compile(r"[.!?:;…][\"'»”’)]*\s*$")
FILL = 0.6          # a wrapped paragraph's lines (all but the last) fill at least this share of the widest
MIN_WRAP_WIDTH = 40


def is_wrapped(lines: list[str]) -> bool:
    """Whether a paragraph's lines look like one hard-wrapped text."""
    if len(lines) < 2 or any(LIST_ITEM.match(line) for line in lines):
        return False
    width = max(len(line.rstrip()) for line in lines)
    return width >= MIN_WRAP_WIDTH and all(len(line.rstrip()) >= FILL * width for line in lines[:-1])


def list_mark(line: str) -> str:
    """A list item's marker and the spaces around it (`  1. `, `- `, `• `), or ""."""
    match = LIST_ITEM.match(line)
    return match.group(0) if match else ""


def indentation(line: str) -> int:
    """A line's indentation in columns, a tab reaching the next multiple of 8."""
    return len(line.expandtabs(8)) - len(line.expandtabs(8).lstrip())


def is_code(lines: list[str], least_indent: int) -> bool:
    """Whether a paragraph is code or commands (see the module's docstring): indented `CODE_INDENT` columns past
    `least_indent`, no line ending a sentence, one line with a sign of code."""
    written = [line for line in lines if line.strip()]
    return (bool(written) and min(indentation(line) for line in written) >= least_indent + CODE_INDENT
            and not any(SENTENCE_END.search(line) and not CODE_SIGN.search(line) for line in written)
            and any(PROMPT.match(line) or CODE_SIGN.search(line) for line in written))


def verbatim_kept(text: str) -> Segment:
    """A segment whose URLs, e-mail addresses, inline tags, entities, paths and command options (`--verbose`) come
    back verbatim."""
    return Segment(text, protected=protected_spans(text, OPTION))


class TextDocument:
    """`segments` of a plain text; `render()` its bytes with their translations."""

    def __init__(self, data: bytes, name: str = "document"):
        self._encoded = Encoded(data, name)
        text = self._encoded.text
        self._newline = "\r\n" if "\r\n" in text else "\n"
        self._parts = BLANK_LINES.split(text)          # paragraph, blank run, paragraph, ...
        self._layout: list[tuple[int, Any, str, int]] = []     # part, Segment or [(list mark, Segment)], indent, width
        self.segments: list[Segment] = []
        bodies = {index: self._parts[index].rstrip("\r\n") for index in range(0, len(self._parts), 2)}
        written = [line for body in bodies.values() for line in body.split(self._newline)[:1] if line.strip()]
        least = min((indentation(line) for line in written), default=0)
        for index, body in bodies.items():
            self._parts[index] = self._parts[index][len(body):]      # the text's last line ends, kept as they are
            lines = body.split(self._newline)
            if is_code(lines, least):
                self._parts[index] = body + self._parts[index]
                continue
            if is_wrapped(lines) and not any(PROMPT.match(line) for line in lines):
                indent = lines[0][:len(lines[0]) - len(lines[0].lstrip())]
                segment = verbatim_kept(" ".join(line.strip() for line in lines))
                self._layout.append((index, segment, indent, max(len(line.rstrip()) for line in lines)))
                self.segments.append(segment)
            else:
                marks = ["" if PROMPT.match(line) else list_mark(line) for line in lines]
                line_segments = [Segment(line, protected=(line,)) if PROMPT.match(line)     # a command: all kept
                                 else verbatim_kept(line[len(mark):]) for line, mark in zip(lines, marks)]
                self._layout.append((index, list(zip(marks, line_segments)), "", 0))
                self.segments.extend(line_segments)

    def render(self) -> bytes:
        parts = list(self._parts)
        for index, unit, indent, width in self._layout:
            if isinstance(unit, Segment):
                lines = textwrap.wrap(unit.translation, width, initial_indent=indent, subsequent_indent=indent,
                                      break_long_words=False, break_on_hyphens=False)
                parts[index] = self._newline.join(lines) + parts[index]
            else:
                parts[index] = self._newline.join(mark + segment.translation for mark, segment in unit) + parts[index]
        return self._encoded.encode("".join(parts))
