"""Documents in, documents out: one reader/writer per file format, over the translation engines.

    from pipeline.translate import open_translator
    from pipeline.documents import translate_document
    translator = open_translator("runs/cpu60/run")
    italian = translate_document(translator, "talk.srt")            # bytes of the translated file

    segments.py   the one path from a document's segments to an engine and back (spans kept verbatim)
    encoding.py   a text file decoded (UTF-8, UTF-16 with a mark) and encoded back the same way
    plain.py      .txt                 paragraphs, blank lines, hard-wrapped prose re-wrapped
    markdown.py   .md                  markdown-it-py + mdformat: code, links, front matter kept
    html.py       .html                BeautifulSoup: tags, attributes, entities kept (the service's HTML path)
    subtitles.py  .srt / .vtt          srt, webvtt-py: numbers, timings, positions, tags kept; lines re-wrapped
    gettext.py    .po / .pot           polib: placeholders, accelerators, plurals; new entries fuzzy
    office.py     .docx / .pptx / .odt python-docx, python-pptx, odfpy: paragraphs, tables, headers, boxes

A format only reads and writes segments; what the model reads and how pieces are batched is the engine's.
"""
from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path
from typing import Any, Protocol

import regex

from pipeline.documents.segments import Segment, Translate, translate_segments

# format -> the file extensions it is known by
FORMATS: dict[str, tuple[str, ...]] = {
    "txt": (".txt", ".text"),
    "md": (".md", ".markdown"),
    "html": (".html", ".htm"),
    "srt": (".srt",),
    "vtt": (".vtt",),
    "po": (".po", ".pot"),
    "docx": (".docx",),
    "pptx": (".pptx",),
    "odt": (".odt",),
}
EXTENSIONS = {extension: name for name, extensions in FORMATS.items() for extension in extensions}
SUFFIXES = tuple(sorted(EXTENSIONS))         # every extension a document may have
MAX_DOCUMENT_BYTES = 20_000_000
SRT_START = regex.compile(rb"\A(?:\xef\xbb\xbf)?\s*[0-9]+[ \t]*\r?\n[0-9]{1,2}:[0-9]{2}:[0-9]{2}[,.][0-9]{1,3}\s*-->")
PO_START = regex.compile(rb"^(?:msgctxt|msgid)\s+\"", regex.M)
HTML_START = regex.compile(rb"\A(?:\xef\xbb\xbf)?\s*(?:<!--.*?-->\s*)*<(?:!doctype\s+html|html)[\s>]", regex.I | regex.S)


class Document(Protocol):
    """What every format's reader gives: the segments to translate, and the file again from their translations."""
    segments: list[Segment]

    def render(self) -> bytes: ...


def detect_format(data: bytes, name: str | None = None) -> str:
    """The format of a file: from its extension (`name`), else from its content. ValueError if neither tells."""
    if name:
        suffix = Path(name).suffix.lower()
        if suffix in EXTENSIONS:
            return EXTENSIONS[suffix]
    if data[:4] == b"PK\x03\x04":
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as package:
                names = set(package.namelist())
                if "mimetype" in names and package.read("mimetype").strip() == b"application/vnd.oasis.opendocument.text":
                    return "odt"
        except zipfile.BadZipFile:
            names = set()
        if "word/document.xml" in names:
            return "docx"
        if "ppt/presentation.xml" in names:
            return "pptx"
    head = data[:4096]
    if head.lstrip(b"\xef\xbb\xbf").startswith(b"WEBVTT"):
        return "vtt"
    if SRT_START.match(head):
        return "srt"
    if HTML_START.match(head):
        return "html"
    if PO_START.search(head) and b'msgstr' in head:
        return "po"
    known = ", ".join(SUFFIXES)
    what = f"{name}: " if name else ""
    raise ValueError(f"{what}cannot tell the document's format from its name or content; expected one of {known} "
                     "(or give the format)")


def open_document(data: bytes, format: str | None = None, name: str = "document", overwrite: bool = False) -> Document:
    """The reader for `data` (`format`, else `detect_format`); ValueError naming `name` for a bad file (one
    nested too deeply for its library included). `overwrite`: gettext entries already translated are translated
    again."""
    try:
        return _open(data, format, name, overwrite)
    except RecursionError:
        raise ValueError(f"{name}: nested too deeply to read") from None


def render_document(document: Document, name: str = "document") -> bytes:
    """`document.render()`, with a document nested too deeply for its library's writer a ValueError."""
    try:
        return document.render()
    except RecursionError:
        raise ValueError(f"{name}: nested too deeply to write") from None


def _open(data: bytes, format: str | None, name: str, overwrite: bool) -> Document:
    if format is None:
        format = detect_format(data, name)
    if format not in FORMATS:
        raise ValueError(f"{name}: unknown format {format!r}; expected one of {', '.join(FORMATS)}")
    if len(data) > MAX_DOCUMENT_BYTES:
        raise ValueError(f"{name}: {len(data):,} bytes, over the {MAX_DOCUMENT_BYTES:,}-byte document limit")
    if format == "txt":
        from pipeline.documents.plain import TextDocument
        return TextDocument(data, name)
    if format == "md":
        from pipeline.documents.markdown import MarkdownDocument
        return MarkdownDocument(data, name)
    if format == "html":
        from pipeline.documents.html import HtmlDocument
        return HtmlDocument(data, name)
    if format in ("srt", "vtt"):
        from pipeline.documents.subtitles import SrtDocument, VttDocument
        return (SrtDocument if format == "srt" else VttDocument)(data, name)
    if format == "po":
        from pipeline.documents.gettext import PoDocument
        return PoDocument(data, name, overwrite=overwrite)
    from pipeline.documents.office import DocxDocument, OdtDocument, PptxDocument
    return {"docx": DocxDocument, "pptx": PptxDocument, "odt": OdtDocument}[format](data, name)


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


def translate_document(translator: Any, source: str | os.PathLike | bytes, format: str | None = None, *,
                       name: str | None = None, overwrite: bool = False, progress: bool = False,
                       glossary: Any = None, translate: Translate | None = None, **options: Any) -> bytes:
    """The translated file's bytes, in the source's format (`format`, else from the path's or `name`'s extension,
    else from the content). `translator`: an engine (`open_translator`); its `translate` gets every segment of
    the document in one call (`glossary`, `progress` and `options` such as beam and batch_size go to it).
    `translate`: any `texts -> texts` callable instead (then `translator` may be None)."""
    data, label = read_source(source, name)
    document = open_document(data, format, label, overwrite)
    if translate is None:
        def translate(texts: list[str]) -> list[str]:
            return translator.translate(texts, glossary=glossary, progress=progress, **options)
    translate_segments(document.segments, translate)
    return render_document(document, label)


__all__ = ["FORMATS", "EXTENSIONS", "SUFFIXES", "Document", "detect_format", "open_document", "render_document",
           "translate_document",
           "translate_segments", "Segment"]
