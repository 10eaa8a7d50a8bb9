"""The one registry of document formats: what every door (the CLI, the service's file routes, its settings and
page, the LibreTranslate HTML path) reads to know which files it takes.

    Format("srt", (".srt",), "application/x-subrip", binary=False, open=SrtDocument, detect=looks_like_srt)

A format is a module whose reader takes `(data, name)` and gives a `Document` (its `segments`, and `render()`
the file again), plus one `register(Format(...))` line below. `binary`: the file is a package of parts (office
files, e-books), written only to a file, never to a terminal. `detect`: recognises the format from its first bytes
when no extension tells (tried in registration order). `options`: the reader's keyword options (gettext:
`overwrite`; gettext, HTML, Markdown, office files and e-books: `direction`, the run's, which their output depends
on; office files and e-books: their size limits). A document whose output depends on the
direction also has `direct(direction)`: the door calls it with the run's before translating, so a document opened
without one (or for another run) follows the run that translates it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Protocol

from pipeline.documents.android import AndroidStrings, looks_like_android
from pipeline.documents.apple import AppleStrings
from pipeline.documents.epub import EpubDocument, looks_like_epub
from pipeline.documents.gettext import PoDocument, looks_like_po
from pipeline.documents.html import HtmlDocument, looks_like_html
from pipeline.documents.json_catalog import JsonCatalog
from pipeline.documents.markdown import MarkdownDocument, MdxDocument
from pipeline.documents.office import DocxDocument, OdpDocument, OdtDocument, PptxDocument, package_kind
from pipeline.documents.plain import TextDocument
from pipeline.documents.properties import PropertiesDocument
from pipeline.documents.resx import ResxDocument
from pipeline.documents.segments import Segment
from pipeline.documents.subtitles import (AssDocument, SrtDocument, VttDocument, looks_like_ass, looks_like_srt,
                                          looks_like_vtt)
from pipeline.documents.xcstrings import XcStrings
from pipeline.documents.xliff import XliffDocument, looks_like_xliff
from pipeline.documents.yaml_catalog import YamlCatalog


class Document(Protocol):
    """What every format's reader gives: the segments to translate, and the file again from their translations."""
    segments: list[Segment]

    def render(self) -> bytes: ...        # and, where the output depends on the run's direction, direct(direction)


@dataclass(frozen=True)
class Format:
    """One document format: its name, the extensions it is known by (lower case, with the dot), the media type
    its files are served as, whether it is a binary package, its reader, and how to recognise its content."""
    name: str
    extensions: tuple[str, ...]
    media_type: str
    binary: bool
    open: Callable[..., Document]
    detect: Callable[[bytes], bool] | None = None
    options: tuple[str, ...] = ()


FORMATS: dict[str, Format] = {}


def register(format: Format) -> Format:
    """Add `format` to the registry (its name and extensions must be new); returns it."""
    taken = [extension for extension in format.extensions if by_extension(extension) is not None]
    if format.name in FORMATS or taken or not format.extensions:
        raise ValueError(f"format {format.name!r}: its name or extensions {taken or list(format.extensions)} are "
                         "already registered, or it has none")
    if any(extension != extension.lower() or not extension.startswith(".") for extension in format.extensions):
        raise ValueError(f"format {format.name!r}: extensions must be lower case and start with a dot")
    FORMATS[format.name] = format
    return format


def unregister(name: str) -> None:
    """Remove a format (tests that register a toy one)."""
    FORMATS.pop(name, None)


def by_extension(extension: str) -> Format | None:
    """The format known by `extension` (".srt", any case), or None."""
    extension = extension.lower()
    return next((format for format in FORMATS.values() if extension in format.extensions), None)


def suffixes() -> tuple[str, ...]:
    """Every extension a document may have, sorted."""
    return tuple(sorted(extension for format in FORMATS.values() for extension in format.extensions))


def format_names() -> list[str]:
    """The formats' names, in registration order."""
    return list(FORMATS)


def detected(data: bytes) -> Format | None:
    """The first registered format that recognises `data`'s content, or None."""
    return next((format for format in FORMATS.values() if format.detect and format.detect(data)), None)


OFFICE_OPTIONS = ("max_xml_bytes", "max_unpacked_bytes", "direction")    # the office readers' (`office._open_zip`)

register(Format("txt", (".txt", ".text"), "text/plain; charset=utf-8", False, TextDocument))
register(Format("md", (".md", ".markdown"), "text/markdown; charset=utf-8", False, MarkdownDocument,
                options=("direction",)))
register(Format("mdx", (".mdx",), "text/markdown; charset=utf-8", False, MdxDocument, options=("direction",)))
register(Format("html", (".html", ".htm", ".xhtml"), "text/html; charset=utf-8", False, HtmlDocument, looks_like_html,
                options=("direction",)))
register(Format("srt", (".srt",), "application/x-subrip", False, SrtDocument, looks_like_srt))
register(Format("vtt", (".vtt",), "text/vtt; charset=utf-8", False, VttDocument, looks_like_vtt,
                options=("direction",)))
register(Format("ass", (".ass", ".ssa"), "text/x-ssa; charset=utf-8", False, AssDocument, looks_like_ass))
register(Format("po", (".po", ".pot"), "text/x-gettext-translation; charset=utf-8", False, PoDocument, looks_like_po,
                options=("overwrite", "direction")))
register(Format("xliff", (".xlf", ".xliff", ".sdlxliff", ".mqxliff"), "application/xliff+xml", False, XliffDocument,
                looks_like_xliff, options=("direction",)))
register(Format("json", (".json", ".arb"), "application/json", False, JsonCatalog, options=("direction",)))
register(Format("properties", (".properties",), "text/x-java-properties; charset=utf-8", False, PropertiesDocument))
register(Format("android", (".xml",), "application/xml", False, AndroidStrings, looks_like_android))
register(Format("strings", (".strings",), "text/plain; charset=utf-8", False, AppleStrings))
register(Format("resx", (".resx",), "application/xml", False, ResxDocument))
register(Format("xcstrings", (".xcstrings",), "application/json", False, XcStrings, options=("direction",)))
register(Format("yaml", (".yml", ".yaml"), "application/yaml", False, YamlCatalog, options=("direction",)))
register(Format("docx", (".docx",), "application/vnd.openxmlformats-officedocument.wordprocessingml.document", True,
                DocxDocument, lambda data: package_kind(data) == "docx", options=OFFICE_OPTIONS))
register(Format("pptx", (".pptx",), "application/vnd.openxmlformats-officedocument.presentationml.presentation",
                True, PptxDocument, lambda data: package_kind(data) == "pptx", options=OFFICE_OPTIONS))
register(Format("odt", (".odt",), "application/vnd.oasis.opendocument.text", True, OdtDocument,
                lambda data: package_kind(data) == "odt", options=OFFICE_OPTIONS))
register(Format("odp", (".odp",), "application/vnd.oasis.opendocument.presentation", True, OdpDocument,
                lambda data: package_kind(data) == "odp", options=OFFICE_OPTIONS))
register(Format("epub", (".epub",), "application/epub+zip", True, EpubDocument, looks_like_epub,
                options=OFFICE_OPTIONS))
