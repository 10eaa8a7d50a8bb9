"""JSON string catalogs (`.json`, `.arb`), as web and app projects keep their interface's text: i18next,
ngx-translate, vue-i18n, react-intl/FormatJS, Flutter's ARB, a Chrome or Firefox extension's `messages.json`.

Every string value with a letter outside its placeholders is a message, read as a catalog's are
(`messages.CatalogMessage`): placeholders (`{{name}}`, `{name}`, `%s`, `%name%`), ICU choices (`{count, plural, one
{# file} other {# files}}`, each case translated alone) and the references these libraries write (`JSON_MARKUP`:
i18next's `$t(key)`, vue-i18n's `@:key` and `@.lower:key`, an extension's `$NAME$` and `$1`) come back as written.
Apostrophes are written as the catalog's library reads them: literal in an ARB (Flutter's default); quoted as ICU
reads them in an ICU catalog (FormatJS's messages, or any catalog with an ICU choice in it: `l''{file}`); else
only inside a choice. Not read: keys; values that are not strings; a string that is data (`messages.is_message`: a
key, an identifier, an address: `common.save`, `btn_primary`, `v1.2`); ARB's `@` entries (a message's description
and placeholders, for translators), but `@@locale`, which names the run's target where it named its source (`en_US`
-> `it_IT`); and where every entry is a message and its notes (`{"message": "...", "description": "..."}`: a browser
extension's, FormatJS's `defaultMessage`, Crowdin's `string` and `context`), the notes.

The file comes back byte for byte but for the translated strings (each written as JSON, its non-ASCII characters
escaped where the source escaped all of them): its indentation, key order, spacing and line ends are the source's.
A file that is not JSON is a one-line ValueError naming the line and column.
"""
from __future__ import annotations

import json
from typing import Any

import regex

from pipeline.documents.encoding import Encoded
from pipeline.documents.messages import CATALOG_REFERENCES, CatalogMessage, icu_messages, is_message
from pipeline.documents.segments import Segment
from pipeline.language import REGIONS, Direction, FollowsDirection

# The catalog libraries' references (`messages.CATALOG_REFERENCES`), and a browser extension's named and numbered
# placeholders (`$COUNT$`, `$1`)
JSON_MARKUP = regex.compile(CATALOG_REFERENCES.pattern + r"|\$[A-Za-z_][A-Za-z0-9_]*\$|\$[1-9]")
TOKEN = regex.compile(r'\s*(?:(?P<string>"(?:[^"\\]|\\.)*")|(?P<open>[{\[])|(?P<close>[}\]])|(?P<colon>:)|(?P<comma>,)'
                      r'|(?P<other>[^\s{}\[\]:,"]+))', regex.S)
MESSAGE_KEYS = frozenset({"message", "defaultMessage", "string", "translation"})
NOTE_KEYS = frozenset({"description", "context", "placeholders", "comment", "developer_comment", "notes", "note",
                       "example", "meaning", "maxLength", "max_length"})
LOCALE_KEY = "@@locale"
MAX_DEPTH = 64          # objects and lists within one another: a catalog nests a few; a deeper file is no catalog


class JsonCatalog(FollowsDirection):
    """A JSON string catalog: `segments` of its messages, and `render()` the file again, their translations in."""

    def __init__(self, data: bytes, name: str = "document", direction: Direction | None = None):
        self.direction = direction
        self._encoded = Encoded(data, name)
        self._text = self._encoded.text
        try:
            data_read = json.loads(self._text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{name}: not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
        except RecursionError:
            raise ValueError(f"{name}: not a JSON string catalog: nested deeper than Python's JSON reader "
                             "goes") from None
        if not isinstance(data_read, (dict, list)):
            raise ValueError(f"{name}: not a JSON string catalog: its top level is a {type(data_read).__name__}, "
                             "not an object or a list")
        self._ascii = "\\u" in self._text and all(ord(character) < 128 for character in self._text)
        entries = _message_entries(data_read)
        arb = name.lower().endswith(".arb") or isinstance(data_read, dict) and LOCALE_KEY in data_read
        values = [(path, start, end, json.loads(self._text[start:end])) for path, start, end in
                  _string_values(self._text, name)]
        # Apostrophes: literal in an ARB (Flutter's default); ICU's quoting in an ICU catalog (FormatJS's
        # messages, or any catalog with a choice in it); else only inside a choice
        icu = False if arb else True if any(path[-1] == "defaultMessage" and path[:-1] in entries or
                                             icu_messages(value) is not None for path, _, _, value in values) else None
        self._values: list[tuple[int, int, CatalogMessage]] = []    # (start, end) of each message's token
        self._locale: tuple[int, int] | None = None
        for path, start, end, value in values:
            if path == (LOCALE_KEY,):
                self._locale = (start, end)
            if not _read(path, value, entries):
                continue
            codes = [(match.start(), match.group(0)) for match in JSON_MARKUP.finditer(value)]
            self._values.append((start, end, CatalogMessage(value, codes, icu_quoting=icu)))
        self.segments: list[Segment] = [segment for _, _, message in self._values for segment in message.segments]

    def render(self) -> bytes:
        out, done = [], 0
        edits = [(start, end, message.translation()) for start, end, message in self._values]
        if self._locale is not None:
            edits.append((*self._locale, _relabelled(json.loads(self._text[slice(*self._locale)]),
                                                     self.output_direction)))
        for start, end, translation in sorted(edits, key=lambda edit: edit[0]):
            if translation is None or not translation.strip():
                continue                            # none, or an empty one: the source's
            surrogate = any(0xD800 <= ord(character) < 0xE000 for character in translation)   # (a lone one)
            out += [self._text[done:start], json.dumps(translation, ensure_ascii=self._ascii or surrogate)]
            done = end
        return self._encoded.encode("".join(out) + self._text[done:])


def _string_values(text: str, name: str) -> list[tuple[tuple, int, int]]:
    """Each string value of a JSON text (checked well formed already): (its path of keys and indices, where its
    token starts and ends). Nested deeper than `MAX_DEPTH`, a one-line ValueError naming `name` (each value's path
    costs its depth)."""
    found: list[tuple[tuple, int, int]] = []
    stack: list[list[Any]] = []            # per open container: [kind, its current key or index, expecting a key]
    position = 0
    while position < len(text):
        match = TOKEN.match(text, position)
        if match is None:                  # trailing spaces
            break
        position = match.end()
        if match.group("open"):
            stack.append(["object", None, True] if match.group("open") == "{" else ["array", 0, False])
            if len(stack) > MAX_DEPTH:
                line = text.count("\n", 0, match.start()) + 1
                raise ValueError(f"{name}: not a JSON string catalog: nested more than {MAX_DEPTH} levels deep "
                                 f"(line {line})")
        elif match.group("close"):
            stack.pop()
        elif match.group("comma"):
            if stack[-1][0] == "object":
                stack[-1][2] = True
            else:
                stack[-1][1] += 1
        elif match.group("string"):
            if stack and stack[-1][0] == "object" and stack[-1][2]:
                stack[-1][1], stack[-1][2] = json.loads(match.group("string")), False
            else:
                found.append((tuple(frame[1] for frame in stack), match.start("string"), match.end("string")))
    return found


def _message_entries(data: Any) -> set[tuple]:
    """The paths of a catalog's entries where each is a message and its notes (`MESSAGE_KEYS`, and nothing but
    `NOTE_KEYS` else: a browser extension's, FormatJS's, Crowdin's), every top-level entry so; else none (in an
    i18next or vue-i18n catalog, `{"message": ..., "description": ...}` is two texts a user sees)."""
    def entry(value: Any) -> bool:
        keys = set(value) if isinstance(value, dict) else set()
        return bool(keys & MESSAGE_KEYS) and all(isinstance(value[key], str) for key in keys & MESSAGE_KEYS) and \
            not keys - MESSAGE_KEYS - NOTE_KEYS
    top = {key: value for key, value in data.items() if not key.startswith("@")} if isinstance(data, dict) else {}
    return {(key,) for key in top} if top and all(map(entry, top.values())) else set()


def _relabelled(locale: str, direction: Direction) -> str:
    """An ARB's `@@locale` naming `direction`'s source (`en`, `en_US`) naming its target (`it`, `it_IT`)."""
    match = regex.fullmatch(r"([A-Za-z]{2})([-_][A-Za-z0-9]+)?", locale)
    if match is None or match.group(1).lower() != direction.source:
        return locale
    return direction.target + (match.group(2)[0] + REGIONS[direction.target] if match.group(2) else "")


def _read(path: tuple, value: str, entries: set[tuple]) -> bool:
    """Whether a string value at `path` is a message to translate (`entries`: top-level paths, `(key,)`)."""
    if any(isinstance(key, str) and key.startswith("@") for key in path):
        return False                                 # ARB's metadata, and its @@locale
    if path[:-1] in entries and path[-1] not in MESSAGE_KEYS:
        return False                                 # a message's notes
    if len(path) > 1 and path[:1] in entries and path[1] in NOTE_KEYS:
        return False                                 # inside a note (an extension's placeholders)
    return is_message(value, JSON_MARKUP)
