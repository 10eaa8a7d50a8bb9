"""Documents in, documents out: one reader/writer per file format, over the translation engines.

    from pipeline.translate import open_translator
    from pipeline.documents import translate_document
    translator = open_translator("runs/cpu60/run")
    italian = translate_document(translator, "talk.srt")            # bytes of the translated file

    formats.py    the one registry of formats (`Format`, `register`): every door reads it
    segments.py   the one path from a document's segments to an engine and back (spans kept verbatim)
    messages.py   a catalog message's syntax kept: placeholders, ICU and Symfony choices, each case translated alone
    runs.py       a chunk of formatted text (runs, inline tags) and where its formatting goes in a translation
    encoding.py   a text file decoded (UTF-8, UTF-16 with a mark) and encoded back the same way
    plain.py      .txt                 paragraphs, blank lines, hard-wrapped prose re-wrapped
    markdown.py   .md / .mdx           markdown-it-py + mdformat: code, links kept
    markdown_layout.py                 mdformat told to write the source's layout (bullets, fences, definitions)
    front_matter.py                    a page's YAML or TOML front matter: the values a site shows translated
    html.py       .html                BeautifulSoup: tags, attributes, entities kept (the service's HTML path)
    subtitles.py  .srt / .vtt          srt, webvtt-py: numbers, timings, positions, tags kept; lines re-wrapped
    gettext.py    .po / .pot           polib: placeholders, accelerators, plurals; new entries fuzzy
    xliff.py      .xlf / .xliff        lxml: units' targets, inline codes kept; segmented units segment by segment
    json_catalog.py .json / .arb       string values translated as catalog messages; keys, notes, layout kept
    properties.py .properties          javaproperties: values translated, MessageFormat quoting; the rest as written
    yaml_catalog.py .yml / .yaml       ruamel.yaml: Rails', Symfony's, Hugo's catalogs; comments and quoting kept
    android.py    .xml (strings.xml)   lxml: Android's strings, arrays and plurals; its escapes, tags, xliff:g kept
    apple.py      .strings             Apple's strings files: values translated, escapes read and written back
    xcstrings.py  .xcstrings           Xcode String Catalogs: the target's localization added, marked for review
    resx.py       .resx                .NET resources: string values translated, format items kept
    xml_file.py   an XML resource file parsed safely and written back with what lies around its root as it came
    office.py     .docx .pptx .odt .odp python-docx, python-pptx, odfpy: paragraphs, tables, boxes, notes
    trees.py      whether two YAML or TOML data trees read alike, each node aliases share looked at once
    epub.py       .epub                zipfile + lxml: chapters (as .html), tables of contents, title

A format only reads and writes segments; what the model reads and how pieces are batched is the engine's.
`translate_document` (and `translate_documents`, several at once) is the one door, used by the CLI, the service's
file routes and its LibreTranslate HTML path alike. A run translates one way (`Direction`): the door takes it from
an engine's `.direction`, else from `direction=` (English -> Italian by default), and gives it to the formats whose
output depends on it (gettext's catalog language and msgid check, HTML's root `lang`, office files' language
tags).
"""
from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Sequence, Union

from pipeline.documents.formats import (FORMATS, Document, Format, by_extension, detected, format_names, register,
                                        suffixes, unregister)
from pipeline.documents.segments import Segment, Translate, translate_segments
from pipeline.language import Direction

MAX_DOCUMENT_BYTES = 20_000_000
Source = Union[str, os.PathLike, bytes, Document]


def detect_format(data: bytes, name: str | None = None) -> str:
    """The format of a file: from its extension (`name`), else from its content. ValueError if neither tells."""
    if name:
        format = by_extension(Path(name).suffix)
        if format is not None:
            return format.name
    format = detected(data)
    if format is not None:
        return format.name
    what = f"{name}: " if name else ""
    raise ValueError(f"{what}cannot tell the document's format from its name or content; expected one of "
                     f"{', '.join(suffixes())} (or give the format)")


def document_format(name: str) -> Format:
    """The registered format called `name`; ValueError naming the known ones otherwise."""
    if name not in FORMATS:
        raise ValueError(f"unknown format {name!r}; expected one of {', '.join(FORMATS)}")
    return FORMATS[name]


def open_document(data: bytes, format: str | None = None, name: str = "document", overwrite: bool = False,
                  max_xml_bytes: int | None = None, direction: Direction | None = None,
                  max_unpacked_bytes: int | None = None) -> Document:
    """The reader for `data` (`format`, else `detect_format`); ValueError naming `name` for a bad file (one
    nested too deeply for its library included). `overwrite`: gettext entries already translated are translated
    again. `max_xml_bytes`: office files whose XML parts unpack to more are refused before parsing (default
    `office.MAX_XML_BYTES`; the service sets its own), and `max_unpacked_bytes` the same for all their parts (default
    `office.MAX_UNPACKED_BYTES`). `direction`: the run's, where known (a catalog it cannot
    translate is refused here); else the door gives it (`translate_document`)."""
    if format is None:
        format = detect_format(data, name)
    if format not in FORMATS:
        raise ValueError(f"{name}: unknown format {format!r}; expected one of {', '.join(FORMATS)}")
    if len(data) > MAX_DOCUMENT_BYTES:
        raise ValueError(f"{name}: {len(data):,} bytes, over the {MAX_DOCUMENT_BYTES:,}-byte document limit")
    reader = FORMATS[format]
    given = {"overwrite": overwrite, "max_xml_bytes": max_xml_bytes, "max_unpacked_bytes": max_unpacked_bytes,
             "direction": direction}
    options = {key: value for key, value in given.items() if key in reader.options}
    try:
        return reader.open(data, name, **options)
    except RecursionError:
        raise ValueError(f"{name}: nested too deeply to read") from None


def render_document(document: Document, name: str = "document") -> bytes:
    """`document.render()`, with a document nested too deeply for its library's writer a ValueError."""
    try:
        return document.render()
    except RecursionError:
        raise ValueError(f"{name}: nested too deeply to write") from None


def read_source(source: str | os.PathLike | bytes, name: str | None = None) -> tuple[bytes, str]:
    """(bytes, name) of a path or of bytes (named `name`, else "document")."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source), name or "document"
    path = Path(source)
    if path.is_dir():
        raise IsADirectoryError(f"{path}: is a directory, expected a document")
    size = path.stat().st_size
    if size > MAX_DOCUMENT_BYTES:
        raise ValueError(f"{path}: {size:,} bytes, over the {MAX_DOCUMENT_BYTES:,}-byte document limit")
    return path.read_bytes(), name or str(path)


def _opened(source: Source, format: str | None, name: str | None, overwrite: bool,
            direction: Direction) -> tuple[Document, str]:
    if hasattr(source, "segments") and hasattr(source, "render"):
        direct = getattr(source, "direct", None)                  # already opened (`open_document`): for this run
        if direct is not None:
            direct(direction)
        return source, name or "document"
    data, label = read_source(source, name)
    return open_document(data, format, label, overwrite, direction=direction), label


def run_direction(translator: Any, direction: Direction | None = None) -> Direction:
    """The direction a document is translated in: the engine's (`translator.direction`), else `direction`, else
    English -> Italian. ValueError where `direction` is not the engine's."""
    own = getattr(translator, "direction", None)
    if own is not None and direction is not None and tuple(own) != tuple(direction):
        raise ValueError(f"direction {Direction(*direction).label} asked of an engine that translates "
                         f"{Direction(*own).label}")
    return Direction(*(own or direction or Direction()))


def texts_translator(translator: Any, glossary: Any = None, progress: bool = False,
                     **options: Any) -> Translate:
    """`texts -> texts` over an engine (`open_translator`: its `translate` with `glossary`, `progress` and
    decoding `options`), or `translator` itself when it is such a callable already (then it takes no options)."""
    if hasattr(translator, "translate"):
        return lambda texts: translator.translate(texts, glossary=glossary, progress=progress, **options)
    if not callable(translator):
        raise TypeError(f"translator must be an engine or a texts -> texts callable, got {type(translator).__name__}")
    if glossary is not None or options:
        raise TypeError("glossary and decoding options go to an engine; a texts -> texts callable takes none")
    return translator


def translate_documents(translator: Any, sources: Sequence[Source], format: str | None = None, *,
                        names: Sequence[str | None] | None = None, overwrite: bool = False, progress: bool = False,
                        glossary: Any = None, direction: Direction | None = None, **options: Any) -> list[bytes]:
    """`translate_document` over several documents, their segments translated together in one call."""
    names = list(names) if names is not None else [None] * len(sources)
    if len(names) != len(sources):
        raise ValueError(f"{len(sources)} documents, got {len(names)} names")
    direction = run_direction(translator, direction)
    opened = [_opened(source, format, name, overwrite, direction) for source, name in zip(sources, names)]
    translate = texts_translator(translator, glossary, progress, **options)
    translate_segments([segment for document, _ in opened for segment in document.segments], translate)
    return [render_document(document, label) for document, label in opened]


def translate_document(translator: Any, source: Source, format: str | None = None, *, name: str | None = None,
                       overwrite: bool = False, progress: bool = False, glossary: Any = None,
                       translate: Translate | None = None, direction: Direction | None = None,
                       **options: Any) -> bytes:
    """The one door: the translated file's bytes, in the source's format (`format`, else from the path's or
    `name`'s extension, else from the content). `source`: a path, bytes, or a document `open_document` gave.
    `translator`: an engine (`open_translator`), whose `translate` gets every segment of the document in one call
    (`glossary`, `progress` and `options` such as beam and batch_size go to it), or any `texts -> texts` callable
    (the service's batcher); `translate=` is the same callable by keyword (then `translator` may be None).
    `direction`: the run's, for a callable (English -> Italian by default); an engine's is its own
    (`run_direction`)."""
    direction = run_direction(translator, direction)
    [out] = translate_documents(translate or translator, [source], format, names=[name], overwrite=overwrite,
                                progress=progress, glossary=glossary, direction=direction, **options)
    return out


__all__ = ["FORMATS", "Format", "register", "unregister", "by_extension", "suffixes", "format_names", "Document",
           "MAX_DOCUMENT_BYTES", "detect_format", "document_format", "open_document", "render_document", "read_source",
           "texts_translator", "run_direction", "translate_document", "translate_documents", "translate_segments",
           "Segment", "Translate", "Direction"]
