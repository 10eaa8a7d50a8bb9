"""Xcode's String Catalogs (`Localizable.xcstrings`: iOS and macOS apps since Xcode 15): one JSON file holding every
language, to which a run adds its target's localization.

Each string (`strings`) without one in the run's target language gets it: its source-language text (the
`sourceLanguage` localization's `stringUnit` values, with its plural, device and substitution variations; else the
key itself, as Xcode reads a string no one localized) translated as a catalog's message
(`messages.CatalogMessage`: `%@`, `%lld`, `%#@files@` kept), in the same structure, each `stringUnit` marked
`needs_review` for a translator. Kept as they are: a string marked `shouldTranslate: false` or no longer in the
code (`extractionState: stale`), one whose text is data (`messages.is_message`), any localization someone wrote,
comments and every other key. The file is written as Xcode writes it (two-space indentation, ` : ` between key and
value, its line ends), the target's localization among the others in alphabetical order. A catalog whose source
language is not the run's, or that is not a String Catalog, is a one-line ValueError.
"""
from __future__ import annotations

import copy
import json
from typing import Any, Iterator

import regex

from pipeline.documents.encoding import Encoded
from pipeline.documents.json_catalog import MAX_DEPTH
from pipeline.documents.messages import CatalogMessage, is_message
from pipeline.documents.segments import Segment
from pipeline.language import Direction

EMPTY = regex.compile(r'^( *)((?:"(?:[^"\\\n]|\\.)*" : )?)\{\}(?=,?$)', regex.M)   # an empty object: Xcode's 3 lines


class XcStrings:
    """A `.xcstrings` catalog: `segments` of its strings without the target's localization, and `render()`."""

    def __init__(self, data: bytes, name: str = "document", direction: Direction | None = None):
        self._encoded, self._name = Encoded(data, name), name
        try:
            self._data = json.loads(self._encoded.text)
        except json.JSONDecodeError as exc:
            raise ValueError(f"{name}: not JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})") from None
        except RecursionError:
            raise ValueError(f"{name}: not a String Catalog: nested too deeply") from None
        if _deeper_than(self._data, MAX_DEPTH):            # (copied and written again: recursion, and indents
            raise ValueError(f"{name}: not a String Catalog: nested more than {MAX_DEPTH} levels deep")   # squared)
        if not isinstance(self._data, dict) or not isinstance(self._data.get("strings"), dict) or \
                not isinstance(self._data.get("sourceLanguage"), str):
            raise ValueError(f"{name}: not a String Catalog: expected an object with `sourceLanguage` and `strings`")
        self.direction = None
        if direction is not None:
            self.direct(direction)
        else:                                   # opened before its run is known: planned from its own language
            language = self._language()
            self._plan(Direction(language, "en" if language == "it" else "it") if language in ("en", "it")
                       else Direction())

    def _language(self) -> str:
        return self._data["sourceLanguage"].split("-")[0].split("_")[0].lower()

    def direct(self, direction: Direction) -> None:
        """Plan the localizations for a run translating `direction`: ValueError (one line) where the catalog's
        source language is not the run's."""
        direction = Direction(*direction)
        if self._language() != direction.source:
            raise ValueError(f"{self._name}: a String Catalog whose source language is "
                             f"{self._data['sourceLanguage']!r}; this run translates {direction.label}")
        self.direction = direction
        self._plan(direction)

    def _plan(self, direction: Direction) -> None:
        source = self._data["sourceLanguage"]
        self._target = direction.target
        self._todo: list[tuple[str, dict, list[tuple[dict, CatalogMessage]]]] = []
        for key, entry in self._data["strings"].items():
            if not isinstance(entry, dict) or entry.get("shouldTranslate") is False or \
                    entry.get("extractionState") == "stale":
                continue                                    # not for translation, or no longer in the code
            localizations = entry.get("localizations") or {}
            if not isinstance(localizations, dict) or direction.target in localizations:
                continue                                    # someone's localization: kept
            written = copy.deepcopy(localizations.get(source)) or {"stringUnit": {"state": "translated",
                                                                                 "value": key}}
            units = [(unit, CatalogMessage(unit["value"])) for unit in _string_units(written)
                     if isinstance(unit.get("value"), str) and is_message(unit["value"])]
            if units:
                self._todo.append((key, written, units))
        self.segments: list[Segment] = [segment for _, _, units in self._todo for _, message in units
                                        for segment in message.segments]

    def render(self) -> bytes:
        target = self._target
        data = copy.deepcopy(self._data)
        for key, written, units in self._todo:
            if any(message.translation() is None for _, message in units):
                continue
            for unit, message in units:
                unit["value"], unit["state"] = message.translation(), "needs_review"
            localizations = data["strings"][key].setdefault("localizations", {})
            localizations[target] = written
            data["strings"][key]["localizations"] = dict(sorted(localizations.items()))
        text = json.dumps(data, indent=2, separators=(",", " : "), ensure_ascii=False)
        if any(0xD800 <= ord(character) < 0xE000 for character in text):
            text = json.dumps(data, indent=2, separators=(",", " : "), ensure_ascii=True)   # a lone surrogate
        text = EMPTY.sub(lambda match: f"{match.group(1)}{match.group(2)}{{\n\n{match.group(1)}}}", text)  # Xcode's
        text += "\n" if self._encoded.text.endswith("\n") else ""
        return self._encoded.encode(text.replace("\n", "\r\n") if "\r\n" in self._encoded.text else text)


def _string_units(localization: Any) -> Iterator[dict]:
    """Every `stringUnit` of a localization: its own, and those of its variations and substitutions."""
    if isinstance(localization, dict):
        for key, value in localization.items():
            if key == "stringUnit" and isinstance(value, dict):
                yield value
            else:
                yield from _string_units(value)


def _deeper_than(data: Any, limit: int) -> bool:
    """Whether JSON `data` nests objects and lists more than `limit` deep (looked at without recursion)."""
    stack = [(data, 1)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, (dict, list)):
            if depth > limit:
                return True
            stack += [(child, depth + 1) for child in (node.values() if isinstance(node, dict) else node)]
    return False
