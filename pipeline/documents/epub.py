"""EPUB e-books (`.epub`, EPUB 2 and 3): a zip of XHTML chapters, with the book's metadata and its tables of contents.

Read with zipfile and lxml (no DTD, entity or network loaded) rather than an e-book library: EbookLib, the
well-kept one, writes the package anew (its manifest, its navigation), where a translation should change only text.
`META-INF/container.xml` names the package document (the OPF); each XHTML document its manifest lists (the
chapters, EPUB 3's navigation document) is translated as an `.html` page is (`HtmlDocument`: it stays well-formed
XML; tags, attributes, entities and code kept; its `lang`/`xml:lang` naming the run's source name its target);
EPUB 2's table of contents (`toc.ncx`) gives its title and each entry's label; the package gives the book's
`dc:title`, `dc:subject` and `dc:description` (the HTML a description may hold kept), and its `dc:language` and
`xml:lang` naming the run's source name its target (`en-US` -> `it`). Everything else (pictures, fonts, style
sheets, the other metadata, the entries' order and compression) comes back byte for byte, the `mimetype` entry
first and stored, as the OCF container standard requires. A book whose chapters are encrypted (DRM, listed in
`META-INF/encryption.xml`) is refused; obfuscated fonts are kept as they are.
"""
from __future__ import annotations

import io
import posixpath
import zipfile
from typing import Any
from urllib.parse import unquote

import regex

from pipeline.documents.html import HtmlDocument
from pipeline.documents.office import DAMAGED, MAX_UNPACKED_BYTES, MAX_XML_BYTES, OLE2, read_entry
from pipeline.documents.segments import Segment, protected_spans
from pipeline.documents.xml_file import SplicedXml
from pipeline.extras import require, safe_xml_parser
from pipeline.language import Direction, FollowsDirection

MIMETYPE = b"application/epub+zip"
CONTAINER = "META-INF/container.xml"
ENCRYPTION = "META-INF/encryption.xml"
CHAPTER_TYPES = ("application/xhtml+xml",)
NCX_TYPE = "application/x-dtbncx+xml"
OPF = "{http://www.idpf.org/2007/opf}"
DC = "{http://purl.org/dc/elements/1.1/}"
NCX = "{http://www.daisy.org/z3986/2005/ncx/}"
XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
TRANSLATED_METADATA = (DC + "title", DC + "subject", DC + "description")
FONT_OBFUSCATION = ("http://www.idpf.org/2008/embedding", "http://ns.adobe.com/pdf/enc#RC")


def looks_like_epub(data: bytes) -> bool:
    """A zip package whose `mimetype` entry says it is an EPUB."""
    if data[:4] != b"PK\x03\x04":
        return False
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as package:
            return "mimetype" in package.namelist() and package.read("mimetype").strip() == MIMETYPE
    except DAMAGED:
        return False


class _XmlPart:
    """An XML entry (the OPF, the NCX) parsed with lxml and written back as it came but for the texts and
    attributes that changed, each edited in place (`xml_file.SplicedXml`: lxml rewrote the whole entry, its
    quotes, empty elements and character references, and cut a byte-order mark's prolog short)."""

    def __init__(self, raw: bytes, entry: str, name: str):
        etree = require("lxml.etree", "documents")
        parser = safe_xml_parser("documents")
        try:
            self.root = etree.fromstring(raw, parser)
        except etree.XMLSyntaxError as exc:
            raise ValueError(f"{name}: {entry} line {exc.lineno}: not well-formed XML ({exc.msg})") from None
        self._file = SplicedXml(raw, self.root, self.root.getroottree().docinfo.encoding)

    def render(self) -> bytes:
        return self._file.render()


class _TextElement:
    """An element whose whole content is one text (a title, a label): its segment, written back with the spaces
    around it as they were."""

    def __init__(self, element: Any):
        self.element = element
        text = element.text or ""
        self.segment = Segment(text.strip(), protected=protected_spans(text.strip()))

    def apply(self) -> None:
        text = self.element.text or ""
        translation = self.segment.translation
        if translation is not None and translation != self.segment.text:
            self.element.text = text[:len(text) - len(text.lstrip())] + translation + text[len(text.rstrip()):]


def _texts(elements: Any) -> list[_TextElement]:
    return [_TextElement(element) for element in elements
            if len(element) == 0 and element.text and any(character.isalpha() for character in element.text)]


def _names_source(value: str | None, direction: Direction) -> bool:
    return bool(value) and regex.fullmatch(rf"\s*{regex.escape(direction.source)}(?:[-_][\w-]*)?\s*", value, regex.I)


class EpubDocument(FollowsDirection):
    """An `.epub` file: `segments` (its chapters', its tables of contents', its metadata's), and `render()` the
    book again. `max_unpacked_bytes` (all entries) and `max_xml_bytes` (its XHTML and XML entries, parsed into
    memory) bound what it may unpack, as for office files."""

    def __init__(self, data: bytes, name: str = "document", direction: Direction | None = None,
                 max_xml_bytes: int | None = None, max_unpacked_bytes: int | None = None):
        self.direction, self._data, self._name = direction, data, name
        if data.startswith(OLE2):
            raise ValueError(f"{name}: not an .epub file but a legacy binary Office file")
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as package:
                items = package.infolist()
        except (zipfile.BadZipFile, OSError, ValueError):
            raise ValueError(f"{name}: not an .epub file (not a zip package)") from None
        self._check_sizes(items, max_xml_bytes, max_unpacked_bytes)
        with zipfile.ZipFile(io.BytesIO(data)) as package:
            present = set(package.namelist())
            opf_path = self._package_path(package, present)
            self._opf_path = opf_path
            self._opf = _XmlPart(read_entry(package, opf_path, name), opf_path, name)
            chapters, ncx = self._manifest(opf_path, present)
            self._refuse_encrypted(package, present, set(chapters))
            self._chapters = {entry: HtmlDocument(read_entry(package, entry, name), f"{name}: {entry}", direction)
                              for entry in chapters}
            self._ncx = (ncx, _XmlPart(read_entry(package, ncx, name), ncx, name)) if ncx else None
        metadata = self._opf.root.find(OPF + "metadata")
        self._texts = _texts([] if metadata is None else
                             [element for element in metadata if element.tag in TRANSLATED_METADATA])
        if self._ncx is not None:                        # its title and labels (not `docAuthor`: a name)
            self._texts += _texts(text for label in self._ncx[1].root.iter(NCX + "docTitle", NCX + "navLabel")
                                  for text in label.iter(NCX + "text"))
        self.segments: list[Segment] = [segment for chapter in self._chapters.values() for segment in chapter.segments]
        self.segments += [text.segment for text in self._texts]

    def _check_sizes(self, items: list[zipfile.ZipInfo], max_xml_bytes: int | None,
                     max_unpacked_bytes: int | None) -> None:
        """Refused from the zip's directory, before anything is unpacked: more than `max_unpacked_bytes` in all, or
        more than `max_xml_bytes` of markup (parsed into memory)."""
        most = MAX_UNPACKED_BYTES if max_unpacked_bytes is None else max_unpacked_bytes
        unpacked = sum(item.file_size for item in items)
        if unpacked > most:
            raise ValueError(f"{self._name}: unpacks to {unpacked:,} bytes, over the {most:,}-byte limit for one "
                             "document")
        limit = MAX_XML_BYTES if max_xml_bytes is None else max_xml_bytes
        markup = sum(item.file_size for item in items
                     if item.filename.lower().endswith((".xml", ".opf", ".ncx", ".xhtml", ".html", ".htm")))
        if markup > limit:
            raise ValueError(f"{self._name}: {markup:,} bytes of XHTML and XML unpacked, over the {limit:,}-byte "
                             "limit for one document")

    def _package_path(self, package: zipfile.ZipFile, present: set[str]) -> str:
        """The OPF's entry, from `META-INF/container.xml`'s first rootfile."""
        if CONTAINER not in present:
            raise ValueError(f"{self._name}: not an .epub file (no {CONTAINER} naming its package document)")
        container = _XmlPart(read_entry(package, CONTAINER, self._name), CONTAINER, self._name).root
        rootfile = next((element.get("full-path") for element in container.iter()
                         if isinstance(element.tag, str) and element.tag.endswith("}rootfile")), None)
        path = posixpath.normpath(unquote(rootfile)) if rootfile else None
        if path is None or path not in present:
            raise ValueError(f"{self._name}: {CONTAINER} names no package document in the book "
                             f"(expected a rootfile whose full-path is one of its entries, got {rootfile!r})")
        return path

    def _manifest(self, opf_path: str, present: set[str]) -> tuple[list[str], str | None]:
        """The entries of the manifest's XHTML documents, in the manifest's order, and of its NCX (or None)."""
        manifest = self._opf.root.find(OPF + "manifest")
        folder = posixpath.dirname(opf_path)
        chapters, ncx = [], None
        for item in [] if manifest is None else manifest.iter(OPF + "item"):
            href, media = item.get("href"), (item.get("media-type") or "").strip().lower()
            if not href or "://" in href:
                continue
            entry = posixpath.normpath(posixpath.join(folder, unquote(href.split("#")[0])))
            if entry not in present:
                continue                                      # a manifest item the book lacks: nothing to translate
            if media in CHAPTER_TYPES and entry not in chapters:
                chapters.append(entry)
            elif media == NCX_TYPE and ncx is None:
                ncx = entry
        return chapters, ncx

    def _refuse_encrypted(self, package: zipfile.ZipFile, present: set[str], chapters: set[str]) -> None:
        if ENCRYPTION not in present:
            return
        root = _XmlPart(read_entry(package, ENCRYPTION, self._name), ENCRYPTION, self._name).root
        for data in root.iter():
            if not (isinstance(data.tag, str) and data.tag.endswith("}EncryptedData")):
                continue
            method = next((e.get("Algorithm") for e in data.iter() if isinstance(e.tag, str)
                           and e.tag.endswith("}EncryptionMethod")), "")
            uri = next((e.get("URI") for e in data.iter() if isinstance(e.tag, str)
                        and e.tag.endswith("}CipherReference")), "")
            if method not in FONT_OBFUSCATION and posixpath.normpath(unquote(uri or "")) in chapters:
                raise ValueError(f"{self._name}: its chapters are encrypted (DRM), so they cannot be read; "
                                 "translate a book without DRM")

    def direct(self, direction: Direction) -> None:
        super().direct(direction)
        for chapter in self._chapters.values():
            chapter.direct(direction)

    def _relabel(self) -> None:
        """The package's `dc:language` and `xml:lang` that name the run's source name its target."""
        direction = self.output_direction
        for element in self._opf.root.iter():
            if not isinstance(element.tag, str):
                continue
            if element.tag == DC + "language" and len(element) == 0 and _names_source(element.text, direction):
                element.text = direction.target
            if _names_source(element.get(XML_LANG), direction):
                element.set(XML_LANG, direction.target)
        if self._ncx is not None:
            for element in self._ncx[1].root.iter():
                if isinstance(element.tag, str) and _names_source(element.get(XML_LANG), direction):
                    element.set(XML_LANG, direction.target)

    def render(self) -> bytes:
        for text in self._texts:
            text.apply()
        self._relabel()
        replaced = {entry: chapter.render() for entry, chapter in self._chapters.items()}
        replaced[self._opf_path] = self._opf.render()
        if self._ncx is not None:
            replaced[self._ncx[0]] = self._ncx[1].render()
        return self._repacked(replaced)

    def _repacked(self, replaced: dict[str, bytes]) -> bytes:
        """The book again, entry by entry in its order, `mimetype` first and stored (OCF), each other entry with
        its compression, the translated ones with their new contents."""
        out = io.BytesIO()
        with zipfile.ZipFile(io.BytesIO(self._data)) as source, zipfile.ZipFile(out, "w") as target:
            items = source.infolist()
            items.sort(key=lambda item: item.filename != "mimetype")          # stable: the others keep their order
            for item in items:
                info = zipfile.ZipInfo(item.filename, item.date_time)
                info.external_attr, info.comment = item.external_attr, item.comment
                info.create_system = item.create_system
                info.compress_type = zipfile.ZIP_STORED if item.filename == "mimetype" else item.compress_type
                content = replaced.get(item.filename)
                target.writestr(info, content if content is not None else read_entry(source, item, self._name))
        return out.getvalue()
