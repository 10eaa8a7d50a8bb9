"""YAML string catalogs (`.yml`, `.yaml`): Rails' `config/locales/en.yml`, Symfony's `messages.en.yaml`, Hugo's
`i18n/en.yaml`, read and written with `ruamel.yaml` (well kept; its round trip keeps comments, key order, anchors
and each string's quoting style, which PyYAML drops).

Every string value that is a message (`messages.is_message`) is translated as a catalog's message
(`messages.CatalogMessage`): Ruby's `%{count}` and `%<count>d`, printf's, Symfony's `%name%` and ICU's placeholders,
and ICU choices, come back as written (quoted as ICU reads apostrophes in Symfony's `+intl-icu` catalogs). Keys,
numbers, booleans, dates and strings that are data are kept, and in a Rails catalog what Ruby's YAML 1.1 reads as no
string (`yes`, `off`, `:year`). A Rails catalog's root key naming the run's source language (`en:`, `en-GB:`) names
its target (`it:`, `it-IT:`). The output keeps the source's comments, quoting (a plain value that would read
otherwise is quoted), block scalars, line ends and indentation (its sequences' too); it is parsed again and must
read as the source but for the translated values and the root key (else the source comes back as it was). A file
that is not YAML, or holds more than one document, is a one-line ValueError naming the line; so is a configuration
file (Compose, GitHub Actions, GitLab CI, Kubernetes, Ansible: `CONFIGURATION`), whose commands a model would
translate.
"""
from __future__ import annotations

import io
from typing import Any, Iterator

import regex

from pipeline.documents.encoding import Encoded
from pipeline.documents.messages import CATALOG_REFERENCES, CatalogMessage, icu_messages, is_message
from pipeline.documents.segments import Segment
from pipeline.documents.trees import same_data
from pipeline.extras import require
from pipeline.language import LANGUAGE_NAMES, REGIONS, Direction, FollowsDirection

LOCALE = regex.compile(r"([A-Za-z]{2})([-_][A-Za-z0-9]+)?")
SEQUENCE_ITEM = regex.compile(r"^( *)- ", regex.M)
# What Ruby's YAML 1.1 reads as no string though YAML 1.2 does: booleans and nulls (a plain `yes` is data in a Rails
# catalog), and numbers in its forms (`1:20`, `0x1F`, `1_000`): a translation of that form is written quoted
YAML_11 = regex.compile(r"(?i:y|yes|n|no|true|false|on|off|null|~)|[-+]?(?:[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?"
                        r"|0[xob]?[0-9a-fA-F_]+|\.?[0-9][0-9_]*(?:\.[0-9_]*)?(?:[eE][-+]?[0-9]+)?|\.(?i:inf|nan))")
SYMBOL = regex.compile(r":[\w\"']")             # a Ruby symbol (`:year`, rails-i18n's `date.order`): data
# The top-level keys of configuration files (Compose, GitHub Actions, GitLab CI, Kubernetes, Ansible, pre-commit),
# which are no catalogs: a model would translate their commands and names
CONFIGURATION = frozenset({"services", "jobs", "on", "apiVersion", "kind", "steps", "stages", "volumes", "networks",
                           "image", "script", "hooks", "repos", "dependencies", "workflows", "variables", "tasks",
                           "deploy", "runs", "hosts", "before_script", "after_script", "pipelines", "spec"})
STRONG_CONFIGURATION = frozenset({"apiVersion", "services", "jobs", "hosts", "stages", "repos"})   # one is enough
HUGO_LIST = frozenset({"translation", "other", "one", "zero", "two", "few", "many"})    # Hugo's `- id: ...` items


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
        top = self._data[0] if isinstance(self._data, list) and self._data else self._data   # (Ansible: a list)
        roots = [key for key in top if isinstance(key, str)] if hasattr(top, "keys") else []
        self._rails = hasattr(self._data, "keys") and any(               # a root named by a language of the runs
            (match := LOCALE.fullmatch(key)) and match.group(1).lower() in LANGUAGE_NAMES for key in roots)
        configuration = sorted(key for key in CONFIGURATION & set(roots) if not isinstance(top[key], str))
        if not self._rails and (len(configuration) >= 3 or STRONG_CONFIGURATION & set(configuration) or
                                isinstance(self._data, list) and "hosts" in roots):
            raise ValueError(f"{name}: a configuration file (its top level holds `{(configuration or roots)[0]}`), "
                             "not a string catalog: not translated")
        slots: dict[int, list[tuple[Any, Any]]] = {}       # each string object (an anchor's once) and where it is
        for container, key, value in _strings(self._data):
            slots.setdefault(id(value), []).append((container, key))
        values = {id(value): value for _, _, value in _strings(self._data)}
        icu = True if "+intl-icu" in name or any(icu_messages(str(value)) is not None for value in values.values()) \
            else None                                   # Symfony's ICU catalogs: apostrophes quoted as ICU reads
        self._values: list[tuple[list[tuple[Any, Any]], CatalogMessage]] = [
            (slots[identity], CatalogMessage(str(value), _references(str(value)), icu_quoting=icu))
            for identity, value in values.items()
            if is_message(str(value), CATALOG_REFERENCES) and not (type(value) is str and self._rails and (YAML_11.fullmatch(value) or
                                                                                        SYMBOL.match(value)))]
        self.segments: list[Segment] = [segment for _, message in self._values for segment in message.segments]

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
        yaml.explicit_start = self._text.lstrip("\ufeff").startswith("---")
        yaml.explicit_end = bool(regex.search(r"^\.\.\.\s*\Z", self._text, regex.M))
        return yaml

    def render(self) -> bytes:
        scalars = require("ruamel.yaml.scalarstring", "documents")
        for slots, message in self._values:
            translation = message.translation()
            if translation is None or not translation.strip():
                continue
            container, key = slots[0]
            old = container[key]
            if translation == str(old):
                continue                                    # as written (a folded string's lines too)
            if isinstance(old, scalars.ScalarString):
                anchor = old.yaml_anchor()
                new = type(old)(translation, anchor=anchor.value if anchor is not None else None)
                if isinstance(old, scalars.FoldedScalarString) and getattr(old, "fold_pos", None) and not any(
                        "\n" in text.rstrip("\n") or text.startswith((" ", "\t")) for text in (str(old), translation)):
                    # (one paragraph, no line kept as written by being indented more: else ruamel's own way)
                    new.fold_pos = folds(translation, folded_width(str(old), old.fold_pos))
            else:
                new = scalars.DoubleQuotedScalarString(translation) if YAML_11.fullmatch(translation) else translation
            for container, key in slots:                    # an anchor's aliases: the same new string
                container[key] = new
        self._relabel()
        out = io.StringIO()
        self._yaml.dump(self._data, out)
        text = out.getvalue()
        if "\r\n" in self._text:
            text = text.replace("\r\n", "\n").replace("\n", "\r\n")
        if not self._text.endswith(("\n", "\r")):
            text = text.rstrip("\r\n")
        try:
            reads = same_data(self._round_trip().load(text), self._data)
        except Exception:                     # noqa: BLE001 - any complaint of the reader: the source comes back
            reads = False
        return self._encoded.encode(text if reads else self._text)

    def _relabel(self) -> None:
        """A Rails catalog's one root key naming the run's source language (`en:`, beside `defaults:`) names its
        target, where it is placed."""
        direction = self.output_direction
        keys = [key for key in self._data if isinstance(key, str)] if hasattr(self._data, "keys") else []
        named = [(index, key, match) for index, key in enumerate(keys) for match in [LOCALE.fullmatch(key)]
                 if match is not None and match.group(1).lower() == direction.source]
        if len(named) != 1:
            return
        index, key, match = named[0]
        target = direction.target + (match.group(2)[0] + REGIONS[direction.target] if match.group(2) else "")
        if target not in self._data:
            self._data.insert(index, target, self._data.pop(key))


def folded_width(text: str, fold_pos: list[int]) -> int:
    """The longest line of a folded string (`>`) as its source folds it at `fold_pos` (spaces)."""
    edges = [-1, *sorted(fold_pos), len(text)]
    return max(end - start - 1 for start, end in zip(edges, edges[1:]))


def folds(text: str, width: int) -> list[int]:
    """Where to fold `text` (at spaces, as YAML folds) so that no line runs past `width` where a space allows it."""
    positions, line_start, last_space = [], 0, -1
    for at, character in enumerate(text):
        if character == " " and at > line_start and text[at - 1] != " " and at + 1 < len(text) \
                and text[at + 1] != " ":
            if at - line_start > width and last_space > line_start:
                positions.append(last_space)
                line_start = last_space + 1
            last_space = at
    if len(text) - line_start > width and last_space > line_start:
        positions.append(last_space)
    return positions


def _strings(node: Any, seen: set[int] | None = None) -> Iterator[tuple[Any, Any, str]]:
    """(container, key or index, value) of each string in a catalog's tree, in document order: a mapping's own
    keys (not those a merge, `<<: *defaults`, brings), never a Hugo item's `id`. A container that aliases bring
    again is walked once: nested aliases (`b: &b [*a, *a, ...]`, a few hundred bytes) would bring billions."""
    seen = set() if seen is None else seen
    if id(node) in seen:
        return
    if hasattr(node, "items") and callable(node.items):
        pairs = list(node.non_merged_items() if hasattr(node, "non_merged_items") else node.items())
        if "id" in node and HUGO_LIST & set(node):
            pairs = [(key, value) for key, value in pairs if key != "id"]
    elif isinstance(node, list):
        pairs = list(enumerate(node))
    else:
        return
    seen.add(id(node))
    for key, value in pairs:
        if isinstance(value, str):
            yield node, key, value
        else:
            yield from _strings(value, seen)


def _references(value: str) -> list[tuple[int, str]]:
    """(where, reference) of each reference a value makes to another message (`@:message.hello`): kept as written."""
    return [(match.start(), match.group(0)) for match in CATALOG_REFERENCES.finditer(value)]
