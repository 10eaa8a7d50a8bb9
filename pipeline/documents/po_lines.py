"""A gettext catalog written back line for line as it was read, but for what a translation changed.

polib parses a catalog and writes it whole, every entry wrapped by its own rule (Python's `textwrap` at one width),
which is neither GNU gettext's (`msgcat`, `xgettext`, `msgmerge`: break opportunities of their own, 79 columns)
nor Babel's (76) nor a `--no-wrap` file's: a catalog of 400 GNU-wrapped entries came back with 244 lines changed
and not one translated, and a `--no-wrap` one with every long line folded. A catalog's diff should show its
translations only, so `spliced` keeps the source's lines wherever it can:

- the file is cut into blocks at blank lines, as every gettext tool writes it; each block must hold one entry
  (one `msgid` line, or `#~ msgid` for an obsolete one), in polib's order, its msgid read from the block equal to
  polib's, the header's block (`msgid ""`) first, comment blocks only above it; anything else (entries not
  parted by blank lines, a catalog without a header) is None, and the caller writes the catalog with polib;
- an entry that got a translation keeps its lines up to its `msgstr`: its `msgstr` lines are the new text wrapped
  as GNU's `msgcat` wraps it (`gnu_lines`) in a GNU-wrapped or unwrapped catalog, else polib's at
  `wrap_width(source)` (Babel's 76), and its flags line is polib's (`#, fuzzy, c-format`), where the source's was or,
  for an entry without one, before its `#|`, `msgctxt` or `msgid` line, where GNU gettext puts it;
- the header keeps every line but those of the fields whose values changed (`Language`, `Plural-Forms`,
  `Content-Type`), each written as one line `"Name: value\\n"`, a new field at the header's end.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import regex

GNU_WIDTH, BABEL_WIDTH = 79, 76
FIELD_LINE = regex.compile(r'\s*(?:#~\s*)?(?:(?:msgctxt|msgid|msgid_plural|msgstr(?:\[[0-9]+\])?)\s+)?"')


def _blank(line: str) -> bool:
    return not line.strip()


def _stripped(line: str) -> str:
    """A line without its surrounding white space, and without `#~` where it is an obsolete entry's."""
    line = line.strip()
    return line[2:].lstrip() if line.startswith("#~") else line


def _keyword(line: str) -> str:
    """The keyword a line of an entry begins with (`msgid`, `msgstr[1]`), `"` for a string's continuation, `#,`
    and the like for a comment; "" for a blank line (or a bare `#~`)."""
    line = _stripped(line)
    if not line:
        return ""
    if line.startswith('"'):
        return '"'
    if line.startswith("#"):
        return line[:2]
    return line.split(None, 1)[0].split('"', 1)[0]


def _string(line: str) -> str:
    """The quoted string of a line (`msgid "a\\nb"` -> `a\\nb`, still escaped)."""
    line = _stripped(line)
    return line[line.index('"') + 1:line.rindex('"')]


def field_value(lines: Sequence[str], at: int, unescape: Callable[[str], str]) -> tuple[str, int]:
    """(the value of the field whose keyword line is `lines[at]`, the index past its last continuation line)."""
    parts, end = [_string(lines[at])], at + 1
    while end < len(lines) and _keyword(lines[end]) == '"':
        parts.append(_string(lines[end]))
        end += 1
    return unescape("".join(parts)), end


def wrap_width(text: str) -> int:
    """The width a catalog's strings are wrapped at, for polib: 0 (none) where a string's line is longer than
    GNU's 79 columns with a space inside it where a wrapping tool would have broken it; Babel's 76 where every
    string's line fits in 76 and some string was wrapped (broken elsewhere than after a `\\n`); else GNU's 79."""
    longest, wrapped, previous = 0, False, None
    for line in text.split("\n"):
        if FIELD_LINE.match(line) is None:
            previous = None
            continue
        content = line.strip()
        string = content[content.index('"'):]
        if len(content) > GNU_WIDTH and " " in string[1:GNU_WIDTH - (len(content) - len(string))]:
            return 0
        longest = max(longest, len(content))
        if previous and content == string and not previous.endswith('\\n"'):
            wrapped = True
        previous = string if len(string) > 2 else None
    return BABEL_WIDTH if wrapped and longest <= BABEL_WIDTH else GNU_WIDTH


def _blocks(lines: Sequence[str]) -> list[tuple[int, int]]:
    """(start, end) of each run of lines that are not blank."""
    blocks, start = [], None
    for number, line in enumerate(lines):
        if _blank(line):
            if start is not None:
                blocks.append((start, number))
                start = None
        elif start is None:
            start = number
    if start is not None:
        blocks.append((start, len(lines)))
    return blocks


def _msgid_lines(lines: Sequence[str], start: int, end: int) -> list[int]:
    return [number for number in range(start, end) if _keyword(lines[number]) == "msgid"]


def spliced(source: str, entries: Sequence[Any], changed: Mapping[int, Any], old_metadata: Mapping[str, str],
            new_metadata: Mapping[str, str], width: int, unescape: Callable[[str], str]) -> str | None:
    """`source` (a catalog's text, `\\n` line ends) with the entries at the indices of `changed` (index in
    `entries`, polib's list, -> the polib entry, translated) and the header's changed fields written anew, every
    other line as it was (the module's docstring); None where the source's blocks are not one entry each."""
    lines = source.split("\n")
    blocks = _blocks(lines)
    entry_blocks: list[tuple[int, int, int]] = []            # (start, end, msgid line) of each entry's block
    for start, end in blocks:
        found = _msgid_lines(lines, start, end)
        if len(found) > 1:
            return None
        if found:
            entry_blocks.append((start, end, found[0]))
        elif entry_blocks:                                   # comments below the header belong to some entry
            return None
    if not entry_blocks:
        return None
    header_start, header_end, header_msgid = entry_blocks[0]
    if field_value(lines, header_msgid, unescape)[0] != "" or any(
            _keyword(lines[number]) == "msgctxt" for number in range(header_start, header_msgid)):
        return None                                          # no header: polib writes one
    entry_blocks = entry_blocks[1:]
    if len(entry_blocks) != len(entries):
        return None
    for (start, end, msgid_line), entry in zip(entry_blocks, entries):
        if field_value(lines, msgid_line, unescape)[0] != entry.msgid:
            return None
    replaced: dict[int, tuple[int, list[str]]] = {}          # first line -> (end, new lines)
    header = _header_lines(lines, header_msgid, header_end, old_metadata, new_metadata, unescape)
    if header is None:
        return None
    replaced.update(header)
    for index, entry in changed.items():
        start, end, msgid_line = entry_blocks[index]
        edits = _entry_edits(lines, start, end, msgid_line, entry, width)
        if edits is None:
            return None
        replaced.update(edits)
    out, at = [], 0
    for first in sorted(replaced):                           # in one pass: a slice replaced in place is quadratic
        stop, new = replaced[first]
        out += [*lines[at:first], *new]
        at = stop
    return "\n".join([*out, *lines[at:]])


def _entry_edits(lines: Sequence[str], start: int, end: int, msgid_line: int, entry: Any,
                 width: int) -> dict[int, tuple[int, list[str]]] | None:
    """The edits of one translated entry's block: its msgstr lines, and its flags line, as polib writes them."""
    rendered = entry.__unicode__(width).rstrip("\n").split("\n")
    new_msgstr = [line for line in rendered[next(number for number, line in enumerate(rendered)
                                                   if line.startswith("msgstr")):]]
    if width in (GNU_WIDTH, 0) and not entry.obsolete:    # GNU's wrapping, not polib's (`gnu_lines`)
        new_msgstr = [line for number in sorted(entry.msgstr_plural)
                      for line in gnu_lines(f"msgstr[{number}]", entry.msgstr_plural[number], width)] \
            if entry.msgid_plural else gnu_lines("msgstr", entry.msgstr, width)
    new_flags = [line for line in rendered if line.startswith("#,")]
    msgstr_at = [number for number in range(msgid_line, end) if _keyword(lines[number]).startswith("msgstr")]
    if not msgstr_at:
        return None
    msgstr_end = msgstr_at[-1] + 1
    while msgstr_end < end and _keyword(lines[msgstr_end]) == '"':
        msgstr_end += 1
    if any(_keyword(lines[number]) not in ('"',) and not _keyword(lines[number]).startswith("msgstr")
           for number in range(msgstr_at[0], msgstr_end)):
        return None                                          # something between the msgstr lines: polib's way
    edits = {msgstr_at[0]: (msgstr_end, new_msgstr)}
    flags_at = [number for number in range(start, msgid_line) if _keyword(lines[number]) == "#,"]
    if flags_at:
        edits[flags_at[0]] = (flags_at[0] + 1, new_flags)
        for extra in flags_at[1:]:                           # polib read them as one
            edits[extra] = (extra + 1, [])
    elif new_flags:
        before = next(number for number in range(start, msgid_line + 1)
                      if number == msgid_line or _keyword(lines[number]) in ("#|", "msgctxt"))
        edits[before] = (before, new_flags)
    return edits


def _header_lines(lines: Sequence[str], msgid_line: int, end: int, old: Mapping[str, str], new: Mapping[str, str],
                  unescape: Callable[[str], str]) -> dict[int, tuple[int, list[str]]] | None:
    """The edits of the header's block: each field whose value changed, its lines as one line; a new field after
    the last. None where the header's msgstr is not where it should be, or a line holds the end of one field
    and more."""
    from polib import escape

    msgstr_at = next((number for number in range(msgid_line, end) if _keyword(lines[number]) == "msgstr"), None)
    if msgstr_at is None:
        return None
    changed = {name: value for name, value in new.items() if old.get(name) != value}
    if not changed:
        return {}
    _, msgstr_end = field_value(lines, msgstr_at, unescape)
    fields: list[tuple[int, int, str]] = []                  # (first line, past its last line, text) of each field
    first, text = None, ""
    for number in range(msgstr_at, msgstr_end):
        piece = unescape(_string(lines[number]))
        if "\n" in piece[:-1]:
            return None
        if first is None and not piece:
            continue
        first = number if first is None else first
        text += piece
        if piece.endswith("\n"):
            fields.append((first, number + 1, text))
            first, text = None, ""
    if first is not None:                                    # a last field without its `\n`
        return None

    def line(at: int, name: str, value: str) -> str:
        return f'{"msgstr " if at == msgstr_at else ""}"{escape(f"{name}: {value}")}\\n"'

    edits: dict[int, tuple[int, list[str]]] = {}
    seen: set[str] = set()
    for start, stop, field in fields:
        name = field.partition(":")[0].strip()
        if name in changed and name not in seen:
            edits[start] = (stop, [line(start, name, changed[name])])
            seen.add(name)
    added = [line(-1, name, value) for name, value in changed.items() if name not in seen]
    if added:
        edits[msgstr_end] = (msgstr_end, added)
        first = edits.get(msgstr_at, (msgstr_at + 1, [lines[msgstr_at]]))
        if _string(first[1][0]):                        # one field on the msgstr's line: GNU's `msgstr ""` now
            edits[msgstr_at] = (first[0], ['msgstr ""', _stripped(first[1][0])[len("msgstr"):].strip(),
                                           *first[1][1:]])
    return edits


# The escapes GNU gettext writes in a catalog's strings (write-po.c), each one a unit no line is broken inside
GNU_ESCAPES = {"\\": "\\\\", '"': '\\"', "\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
               "\t": "\\t", "\v": "\\v"}


def gnu_lines(keyword: str, value: str, width: int, prefix: str = "") -> list[str]:
    """A field (`msgstr "..."`) as GNU gettext's `msgcat` writes it at `width` columns (0: no wrapping): cut after
    each `\\n`, each piece broken where Unicode's line-breaking rules allow (UAX #14, as libunistring finds them:
    `uniseg`), no line's closing quote past the width where a break allows it, and the keyword alone on its line
    (`msgstr ""`) where the value takes more than one line. polib wraps with Python's `textwrap`: a later
    `msgmerge` or `msgcat` rewrapped every translated entry (1,299 of 1,600 lines in a test catalog)."""
    from uniseg.linebreak import line_break_units
    from wcwidth import wcswidth

    portions, start = [], 0
    for at, character in enumerate(value):
        if character == "\n" and at + 1 < len(value):
            portions.append(value[start:at + 1])
            start = at + 1
    portions.append(value[start:])
    head = f"{prefix}{keyword} "

    def escaped(text: str) -> str:
        return "".join(GNU_ESCAPES.get(character, character) for character in text)

    def columns(text: str) -> int:
        measured = wcswidth(text)
        return measured if measured >= 0 else len(text)

    def broken(text: str, first_column: int) -> list[str]:
        """`text` (escaped) in lines whose content fits `width` minus the quotes, the first one from
        `first_column`."""
        units: list[str] = []
        for unit in line_break_units(text):
            if units and ((len(units[-1]) - len(units[-1].rstrip("\\"))) % 2 or units[-1].endswith("%")
                          and unit.startswith("(")):
                units[-1] += unit        # (after a backslash: inside an escape; `%(name)s`, as libunistring reads it)
            else:
                units.append(unit)
        lines, line, column = [], "", first_column
        for unit in units:
            if line and column + columns(unit) + 1 > width:       # (its spaces count, as GNU counts them)
                lines.append(line)
                line, column = "", len(prefix) + 1
            line += unit
            column += columns(unit)
        lines.append(line)
        return lines

    if not width:
        return [f'{head}"{escaped(value)}"']
    one = broken(escaped(value), len(head) + 1) if len(portions) == 1 else None
    if one is not None and len(one) == 1:
        return [f'{head}"{one[0]}"']
    out = [f'{head}""']
    for portion in portions:
        out += [f'{prefix}"{line}"' for line in broken(escaped(portion), len(prefix) + 1)]
    return out
