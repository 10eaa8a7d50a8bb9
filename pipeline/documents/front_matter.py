"""A Markdown page's front matter (a leading `---` YAML or `+++` TOML block, as Jekyll, Hugo, Docusaurus, MkDocs,
Astro and Pandoc read it): the values a reader sees translated, everything else kept byte for byte.

Translated: the top-level keys a site shows as text (`PROSE_KEYS`: `title`, `description`, `summary`, `subtitle`,
`excerpt`, `linkTitle`, `sidebar_label`, ...), where the value is a string on the key's own line (plain, single- or
double-quoted), written back in the same quoting where that still reads as the same string, else double-quoted.
Every other key (`slug`, `date`, `tags`, `layout`, `url`, a nested table), a block scalar (`description: >-`) and
the comments stay as written. A translated block is parsed again (PyYAML, Python's `tomllib`) and kept only where
it reads as the source does but for the translated values (else the source's block, whole). The top-level `lang`,
`language` or `locale` naming the run's source language names its target, in the same form (`en` -> `it`, `en-US`
-> `it-IT`, `en_GB` -> `it_IT`).
"""
from __future__ import annotations

import json
import tomllib
from typing import Any

import regex

from pipeline.documents.segments import Segment, protected_spans
from pipeline.documents.trees import same_data
from pipeline.language import REGIONS, Direction

FRONT_MATTER = regex.compile(r"\A(?:\ufeff)?(?:---[ \t]*\r?\n(?:.*?\r?\n)??(?:---|\.\.\.)"
                             r"|\+\+\+[ \t]*\r?\n(?:.*?\r?\n)??\+\+\+)[ \t]*(?:\r?\n|\Z)", regex.S)
# A top-level `lang`, `language` or `locale` key: its code, its region, then the line's end
FRONT_LANGUAGE = regex.compile(r"""^((?:lang|language|locale)[ \t]*[:=][ \t]*(["']?))((?i)[a-z]{2})"""
                               r"""((?i)[-_][a-z0-9]+)?(?=\2(?:[ \t]+#.*)?[ \t]*\r?$)""", regex.M)
# Where a TOML front matter's top level ends: a table's header line (`[params]`, `[[menu.main]]`), never a line of
# an array's items (`["a", "b"],`)
TOML_TABLE = regex.compile(r"""^\[\[?[\w."' -]+\]\]?[ \t]*(?:#[^\n]*)?\r?$""", regex.M)
# Keys whose value a site shows as text (Jekyll, Hugo, Docusaurus, MkDocs Material, Astro Starlight, VitePress)
PROSE_KEYS = frozenset({"title", "description", "summary", "subtitle", "excerpt", "caption", "linkTitle",
                        "link_title", "sidebar_label", "pagination_label", "nav_title", "short_title", "teaser",
                        "abstract", "seoTitle", "seo_title", "metaTitle", "meta_title", "metaDescription",
                        "meta_description", "heading", "tagline", "lead"})
# A top-level YAML `key: value` line: the value plain, 'single-' or "double-quoted", then a comment
YAML_ENTRY = regex.compile(r"""^(?P<key>[A-Za-z_][\w-]*)(?P<colon>[ \t]*:[ \t]+)"""
                           r"""(?P<value>"(?:[^"\\\n]|\\.)*"|'(?:[^'\n]|'')*'"""
                           r"""|[^\s"'\[\]{}|>&*!%@`#,?:-](?:[^\n\r]*?[^\s])?)"""
                           r"""(?P<rest>(?:[ \t]++#[^\n\r]*)?[ \t]*+)\r?$""", regex.M)     # (possessive: linear)
# A top-level TOML `key = value` line: the value a "basic" or 'literal' string on one line
TOML_ENTRY = regex.compile(r"""^(?P<key>[A-Za-z_][\w-]*)(?P<colon>[ \t]*=[ \t]*)"""
                           r"""(?P<value>"(?:[^"\\\n]|\\.)*"|'[^'\n]*')(?P<rest>[ \t]*(?:#[^\n\r]*)?)\r?$""", regex.M)
PLAIN_UNSAFE = regex.compile(r"^[\s\"'\[\]{}|>&*!%@`#,?:-]|:\s|:$|\s#|\s$|[\n\r\t]")


class FrontMatter:
    """A page's front matter (`text`, "" for none): `segments`, its prose values, and `render(direction)` the
    block again, their translations in and its language relabelled."""

    def __init__(self, text: str):
        self.text = text
        self._toml = text.lstrip("\ufeff").startswith("+++")
        table = TOML_TABLE.search(text, text.index("\n") + 1) if self._toml and "\n" in text else None
        self._top = table.start() if table else len(text)               # a TOML block's top level ends at a table
        self._source = self._parsed(text)
        entries = TOML_ENTRY if self._toml else YAML_ENTRY
        self._entries: list[tuple[regex.Match, Segment]] = []
        for match in entries.finditer(text, 0, self._top):
            value = _scalar(match.group("value"), self._toml)
            if match.group("key") not in PROSE_KEYS or not isinstance(self._source, dict) or value is None \
                    or self._source.get(match.group("key")) != value or not any(c.isalpha() for c in value):
                continue
            self._entries.append((match, Segment(value, protected=protected_spans(value))))
        self.segments = [segment for _, segment in self._entries]

    def _parsed(self, text: str) -> Any:
        """The block's data (its body between the fences), or None where it does not parse."""
        lines = text.lstrip("\ufeff").split("\n")
        body = "".join(line + "\n" for line in (lines[1:-2] if lines[-1] == "" else lines[1:-1]))
        try:
            if self._toml:
                return tomllib.loads(body)
            import yaml
            return yaml.safe_load(body)
        except Exception:                       # noqa: BLE001 - any parser's complaint: the block is kept as written
            return None

    def render(self, direction: Direction) -> str:
        """The block with each prose value's translation, where the block still reads as the source does but for
        them; its language relabelled for `direction`."""
        out, done, expected = [], 0, dict(self._source) if isinstance(self._source, dict) else None
        for match, segment in self._entries:
            translation = segment.translation
            if translation is None or translation == segment.text or expected is None or not translation.strip() \
                    or any(0xD800 <= ord(character) < 0xE000 for character in translation):
                continue                          # none, or none a file holds (an empty one, a lone surrogate)
            translation = " ".join(translation.split())
            out += [self.text[done:match.start("value")], _written(translation, match.group("value"), self._toml)]
            done = match.end("value")
            expected[match.group("key")] = translation
        written = "".join(out) + self.text[done:]
        if written != self.text and not same_data(self._parsed(written), expected):
            written = self.text                   # a value the parser reads otherwise: the source's block, whole
        return _relabelled(written, self._top + len(written) - len(self.text), direction)


def _scalar(value: str, toml: bool) -> str | None:
    """A one-line value's string, as the block's parser reads it (None: not a string)."""
    try:
        if toml:
            found = tomllib.loads(f"v = {value}")["v"]
        else:
            import yaml
            found = yaml.safe_load(value)
    except Exception:                           # noqa: BLE001 - not a scalar this module writes back
        return None
    return found if isinstance(found, str) else None


def _written(translation: str, source: str, toml: bool) -> str:
    """`translation` as a value in the source value's quoting where that reads as the same string, else
    double-quoted (JSON's escapes, which YAML's and TOML's double quotes read alike)."""
    printable = all(character.isprintable() for character in translation)   # else escaped, in double quotes
    if source.startswith("'") and printable and (not toml or "'" not in translation):
        return "'" + (translation if toml else translation.replace("'", "''")) + "'"
    if not source.startswith(("'", '"')) and not toml and printable and not PLAIN_UNSAFE.search(translation) \
            and _scalar(translation, False) == translation:
        return translation
    return json.dumps(translation, ensure_ascii=False)


def _relabelled(front: str, top: int, direction: Direction) -> str:
    """`front` whose top-level (before `top`) `lang`/`language`/`locale` naming `direction`'s source names its
    target."""
    def relabel(match: regex.Match) -> str:
        if match.group(3).lower() != direction.source:
            return match.group(0)
        region = match.group(4)
        target = direction.target.upper() if match.group(3).isupper() else direction.target
        return match.group(1) + target + (region[0] + REGIONS[direction.target] if region else "")
    return FRONT_LANGUAGE.sub(relabel, front[:top]) + front[top:]
