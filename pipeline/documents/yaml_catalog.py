"""YAML string catalogs (`.yml`, `.yaml`): Rails' `config/locales/en.yml`, Symfony's `messages.en.yaml`, Hugo's
`i18n/en.yaml`, read and written with `ruamel.yaml` (well kept; its round trip keeps comments, key order, anchors
and each string's quoting style, which PyYAML drops).

Every string value that is a message (`messages.is_message`) is translated as a catalog's message
(`messages.CatalogMessage`): Ruby's `%{count}` and `%<count>d`, printf's, Symfony's `%name%` and ICU's
placeholders, and ICU choices, come back as written. Keys, numbers, booleans, dates and strings that are data are
kept. A Rails catalog's root key naming the run's source language (`en:`, `en-GB:`) names its target (`it:`,
`it-IT:`). The output keeps the source's comments, quoting (a plain value that would read otherwise is quoted),
block scalars, line ends and indentation (its sequences' too); it is parsed again and must read as the source but
for the translated values and the root key (else the source comes back as it was). A file that is not YAML, or
holds more than one document, is a one-line ValueError naming the line.
"""
from __future__ import annotations

import io
from typing import Any, Iterator

import regex

from pipeline.documents.encoding import Encoded
from pipeline.documents.messages import CatalogMessage, is_message
from pipeline.documents.segments import Segment
from pipeline.extras import require
from pipeline.language import REGIONS, Direction, FollowsDirection

LOCALE = regex.compile(r"([A-Za-z]{2})([-_][A-Za-z0-9]+)?")
SEQUENCE_ITEM = regex.compile(r"^( *)- ", regex.M)


class YamlCatalog(FollowsDirection):
    """A YAML catalog: `segments` of its string values, and `render()` the file again, their translations in."""

    def __init__(self, data: bytes, name: str = "document", direction: Direction | None = None):
        self.direction = direction
        self._encoded, self._name = Encoded(data, name), name
        self._text = self._encoded.text
        self._yaml = self._round_trip()
        error = require("ruamel.yaml.error", "documents")
        try:
            documents = list(self._yaml.load_all(self._text))
        except (error.YAMLError, error.MarkedYAMLError, ValueError) as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f"line {mark.line + 1}: " if mark is not None else ""
            problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
            raise ValueError(f"{name}: not YAML: {where}{problem}") from None
        except RecursionError:
            raise ValueError(f"{name}: not a YAML catalog: nested too deeply") from None
        if len(documents) != 1:
            raise ValueError(f"{name}: not a YAML catalog: {len(documents)} documents, expected one")
        self._data = documents[0]
        self._values: list[tuple[Any, Any, CatalogMessage]] = [
            (container, key, CatalogMessage(str(value))) for container, key, value in _strings(self._data)
            if is_message(str(value))]
        self.segments: list[Segment] = [segment for _, _, message in self._values for segment in message.segments]

    def _round_trip(self) -> Any:
        """ruamel's round-trip reader and writer, indenting as the source does."""
        yaml = require("ruamel.yaml", "documents").YAML(typ="rt")
        yaml.preserve_quotes, yaml.width = True, 1 << 16
        indents = sorted({len(match.group(1)) for match in regex.finditer(r"^( +)\S", self._text, regex.M)})
        step = indents[0] if indents else 2
        items = SEQUENCE_ITEM.search(self._text)
        offset = 0
        if items is not None:                            # `key:` then `  - item`, or `- item` under it
            above = self._text[:items.start()].rstrip("\n").rpartition("\n")[2]
            offset = max(len(items.group(1)) - (len(above) - len(above.lstrip(" "))), 0)
        yaml.indent(mapping=step, sequence=offset + 2, offset=offset)
        return yaml

    def render(self) -> bytes:
        scalars = require("ruamel.yaml.scalarstring", "documents")
        for container, key, message in self._values:
            translation = message.translation()
            if translation is None or not translation.strip():
                continue
            old = container[key]
            container[key] = type(old)(translation) if isinstance(old, scalars.ScalarString) else translation
        self._relabel()
        out = io.StringIO()
        self._yaml.dump(self._data, out)
        text = out.getvalue()
        if "\r\n" in self._text:
            text = text.replace("\r\n", "\n").replace("\n", "\r\n")
        if not self._text.endswith(("\n", "\r")):
            text = text.rstrip("\r\n")
        safe = require("ruamel.yaml", "documents").YAML(typ="safe", pure=True)
        try:
            reads = safe.load(text) == safe.load(_plain(self._data))
        except Exception:                     # noqa: BLE001 - any complaint of the reader: the source comes back
            reads = False
        return self._encoded.encode(text if reads else self._text)

    def _relabel(self) -> None:
        """A Rails catalog's one root key naming the run's source language names its target."""
        if not hasattr(self._data, "keys") or len(self._data) != 1:
            return
        key = next(iter(self._data))
        match = LOCALE.fullmatch(key) if isinstance(key, str) else None
        direction = self.output_direction
        if match is None or match.group(1).lower() != direction.source:
            return
        target = direction.target + (match.group(2)[0] + REGIONS[direction.target] if match.group(2) else "")
        self._data.insert(0, target, self._data.pop(key))


def _strings(node: Any) -> Iterator[tuple[Any, Any, str]]:
    """(container, key or index, value) of each string in a catalog's tree, in document order."""
    if hasattr(node, "items") and callable(node.items):
        pairs = list(node.items())
    elif isinstance(node, list):
        pairs = list(enumerate(node))
    else:
        return
    for key, value in pairs:
        if isinstance(value, str):
            yield node, key, value
        else:
            yield from _strings(value)


def _plain(data: Any) -> str:
    """`data` written by the safe writer (to compare what two texts read as)."""
    yaml = require("ruamel.yaml", "documents").YAML(typ="safe", pure=True)
    out = io.StringIO()
    yaml.dump(_native(data), out)
    return out.getvalue()


def _native(node: Any) -> Any:
    """ruamel's round-trip tree as plain dicts, lists and scalars."""
    if hasattr(node, "items") and callable(node.items):
        return {_native(key): _native(value) for key, value in node.items()}
    if isinstance(node, list):
        return [_native(value) for value in node]
    return str(node) if isinstance(node, str) else node
