"""Office documents: Word (`.docx`, with `python-docx`), PowerPoint (`.pptx`, with `python-pptx`) and
OpenDocument text (`.odt`, with `odfpy`), the well-kept libraries for each.

Every paragraph is text for the model: body paragraphs, table cells (nested tables too), headers and footers
(`.docx`, `.odt`), text boxes and shapes, slides' tables, groups and speaker notes (`.pptx`). A paragraph is cut
at line breaks and tabs, and around a hyperlink's text, into chunks, each one text, so that breaks, tabs and
links stay where they were. Everything that is not text (styles, images, numbering, bookmarks) and the results
of fields (page numbers, dates) are left as they are. Runs carry a chunk's formatting: the translation goes into
its main run (the one with the most text), and a run formatted otherwise (a bold word, a code font) keeps its
formatting where its text, or its text translated alone (translated in the same batch), occurs in the paragraph's
translation (a menu path, a name, a term); other runs are emptied. `.odt` puts a chunk's translation into its main span.
"""
from __future__ import annotations

import copy
import io
import zipfile
from typing import Any

import regex

from pipeline.documents.segments import Segment
from pipeline.translate.splitting import needs_translation
from pipeline.extras import require

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
XML_SPACE = "{http://www.w3.org/XML/1998/namespace}space"
WORD_PARTS = regex.compile(r"^/word/(?:document|header[0-9]*|footer[0-9]*)\.xml$")


MAX_UNPACKED_BYTES = 500_000_000     # a package that unpacks to more is refused (a zip bomb)


def package_kind(data: bytes) -> str | None:
    """"docx", "pptx" or "odt" for a zip package of that kind (from its part names), else None."""
    if data[:4] != b"PK\x03\x04":
        return None
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as package:
            names = set(package.namelist())
            if "mimetype" in names and package.read("mimetype").strip() == b"application/vnd.oasis.opendocument.text":
                return "odt"
    except zipfile.BadZipFile:
        return None
    return "docx" if "word/document.xml" in names else "pptx" if "ppt/presentation.xml" in names else None


def _open_zip(data: bytes, name: str, what: str) -> None:
    """A one-line error for bytes that are not a zip package at all (the libraries' own errors say less), or
    that unpack to more than `MAX_UNPACKED_BYTES`."""
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as package:
            unpacked = sum(item.file_size for item in package.infolist())
    except (zipfile.BadZipFile, OSError, ValueError):
        raise ValueError(f"{name}: not a {what} file (not a zip package)") from None
    if unpacked > MAX_UNPACKED_BYTES:
        raise ValueError(f"{name}: unpacks to {unpacked:,} bytes, over the {MAX_UNPACKED_BYTES:,}-byte limit")


def _spread(translation: str, runs: list[tuple[list[str], Any]], main: Any) -> list[tuple[str, Any]]:
    """The translation as (text, run) pieces: `main`'s, with each other run's text cut out into that run's where
    one of its candidate texts (its own, then its translation alone) occurs in it, in any case, in order."""
    pieces: list[tuple[str, Any]] = [(translation, main)]
    for candidates, run in runs:
        for text in candidates:
            text = text.strip()
            if run is main or len(text) < 2 or not needs_translation(text):
                continue
            found = False
            for index, (piece, owner) in enumerate(pieces):
                at = piece.casefold().find(text.casefold()) if owner is main and len(piece.casefold()) == len(piece) else -1
                if at >= 0:
                    end = at + len(text)
                    pieces[index:index + 1] = [(piece[:at], main), (piece[at:end], run), (piece[end:], main)]
                    found = True
                    break
            if found:
                break
    return [(piece, owner) for piece, owner in pieces if piece]


class _OoxmlParagraphs:
    """The paragraphs (`<p>`) of OOXML elements (WordprocessingML `w:`, DrawingML `a:`) as segments, each
    written back into its text elements (`<t>` in runs `<r>`).

    A paragraph is cut into chunks at line breaks and tabs (`w:br`, `w:cr`, `w:tab`, `w:ptab`, `a:br`) and where
    its runs change container (a hyperlink's text, a tracked insertion, a content control): each chunk is one
    segment, so breaks, tabs and links stay where they are. Field results (`w:fldSimple`, `w:fldChar` ...
    `separate` ... `end`, `a:fld`: page numbers, dates) and nested paragraphs (text boxes, their own) are left."""

    def __init__(self, roots: list[Any], ns: str):
        self._ns = ns
        self._boundaries = {ns + name for name in ("br", "cr", "tab", "ptab")}
        self._fields = {ns + "fldSimple", ns + "fld"}
        self._chunks: list[tuple[list[Any], Segment]] = []
        self._alone: dict[int, Segment] = {}          # id(t) -> its text translated alone (formatted otherwise)
        for root in roots:
            for paragraph in root.iter(ns + "p"):
                for chunk in self._split(paragraph):
                    text = "".join(t.text or "" for t in chunk)
                    if needs_translation(text):
                        self._chunks.append((chunk, Segment(text)))
                        main = self._main(chunk)
                        for t in chunk:
                            if t is not main and self._formatted_otherwise(t, main):
                                self._alone[id(t)] = Segment((t.text or "").strip())
        self.segments = [segment for _, segment in self._chunks] + list(self._alone.values())

    def _main(self, chunk: list[Any]) -> Any:
        """The chunk's main text element: the longest of the formatting that holds the most characters."""
        totals: dict[bytes, int] = {}
        for t in chunk:
            key = self._properties(t.getparent())
            totals[key] = totals.get(key, 0) + len((t.text or "").strip())
        common = max(totals, key=totals.get)
        return max((t for t in chunk if self._properties(t.getparent()) == common),
                   key=lambda t: len((t.text or "").strip()))

    def _formatted_otherwise(self, t: Any, main: Any) -> bool:
        text = (t.text or "").strip()
        return len(text) >= 2 and needs_translation(text) and \
            self._properties(t.getparent()) != self._properties(main.getparent())

    def _walk(self, element: Any, hidden: bool = False):
        """(descendant, inside a field) in document order, not entering nested paragraphs."""
        for child in element:
            if not isinstance(child.tag, str) or child.tag == self._ns + "p":
                continue
            inside = hidden or child.tag in self._fields
            yield child, inside
            yield from self._walk(child, inside)

    def _split(self, paragraph: Any) -> list[list[Any]]:
        chunks: list[list[Any]] = [[]]
        container, depth, result = None, 0, False          # depth: w:fldChar nesting; result: after `separate`
        fld_type = self._ns + "fldCharType"
        for element, in_field in self._walk(paragraph):
            tag = element.tag
            if tag == self._ns + "fldChar":
                kind = element.get(fld_type)
                depth += {"begin": 1, "end": -1}.get(kind, 0)
                depth = max(depth, 0)
                result = kind == "separate" or (result and kind != "end")
                chunks.append([])
            elif tag in self._boundaries:
                chunks.append([])
            elif tag == self._ns + "t":
                if in_field or depth:
                    chunks.append([])
                    continue
                parent = element.getparent().getparent()
                if chunks[-1] and parent is not container:
                    chunks.append([])
                container = parent
                chunks[-1].append(element)
        return [chunk for chunk in chunks if chunk]

    def _properties(self, run: Any) -> bytes:
        lxml = require("lxml.etree", "documents")
        found = run.find(self._ns + "rPr")
        return b"" if found is None else lxml.tostring(found)

    def _set(self, t: Any, text: str) -> None:
        t.text = text
        if self._ns == W:
            t.set(XML_SPACE, "preserve")

    def apply(self) -> None:
        for chunk, segment in self._chunks:
            if segment.translation == segment.text:
                continue
            main = self._main(chunk)
            pieces = _spread(segment.translation, [([t.text or "", self._alone[id(t)].translation or ""], t)
                                                   for t in chunk if id(t) in self._alone], main)
            for t in chunk:
                self._set(t, "")
            run = main.getparent()
            alone = all(child.tag == self._ns + "rPr" or child is main for child in run)
            if len(pieces) <= 1 or not alone:                  # one formatting, or a run holding more: main's
                self._set(main, segment.translation)
                continue
            for text, owner in pieces:                          # runs cut out, each with its own formatting
                piece = copy.deepcopy(owner.getparent())
                for child in list(piece):
                    if child.tag != self._ns + "rPr":
                        piece.remove(child)
                t = piece.makeelement(self._ns + "t", {})
                self._set(t, text)
                piece.append(t)
                run.addprevious(piece)
            for t in chunk:                                     # a run left with nothing but its properties goes
                holder = t.getparent()
                if holder.getparent() is not None and all(
                        child.tag == self._ns + "rPr" or (child.tag == self._ns + "t" and not child.text)
                        for child in holder):
                    holder.getparent().remove(holder)


class _OoxmlDocument:
    """What a Word document and a presentation share: their paragraphs, written back, then the package saved."""
    _package: Any
    _paragraphs: _OoxmlParagraphs

    def render(self) -> bytes:
        self._paragraphs.apply()
        out = io.BytesIO()
        self._package.save(out)
        return out.getvalue()


class DocxDocument(_OoxmlDocument):
    """A Word document: `segments` of the body, tables, headers, footers and text boxes; `render()`."""

    def __init__(self, data: bytes, name: str = "document"):
        docx = require("docx", "documents")
        _open_zip(data, name, ".docx")
        try:
            self._package = docx.Document(io.BytesIO(data))
        except Exception as exc:          # noqa: BLE001 - python-docx raises many kinds for a broken package
            raise ValueError(f"{name}: not a readable .docx file: {exc}") from None
        parts = [part for part in self._package.part.package.iter_parts()
                 if WORD_PARTS.match(str(part.partname)) and hasattr(part, "element")]
        self._paragraphs = _OoxmlParagraphs([part.element for part in parts], W)
        self.segments = self._paragraphs.segments


class PptxDocument(_OoxmlDocument):
    """A PowerPoint presentation: `segments` of every slide's shapes, tables and groups, and its notes."""

    def __init__(self, data: bytes, name: str = "document"):
        pptx = require("pptx", "documents")
        _open_zip(data, name, ".pptx")
        try:
            self._package = pptx.Presentation(io.BytesIO(data))
        except Exception as exc:          # noqa: BLE001
            raise ValueError(f"{name}: not a readable .pptx file: {exc}") from None
        roots = []
        for slide in self._package.slides:
            roots.append(slide.element)
            if slide.has_notes_slide:
                roots.append(slide.notes_slide.element)
        self._paragraphs = _OoxmlParagraphs(roots, A)
        self.segments = self._paragraphs.segments


class OdtDocument:
    """An OpenDocument text: `segments` of its paragraphs and headings (body, tables, frames, headers and
    footers); each translation goes into the paragraph's main span."""

    def __init__(self, data: bytes, name: str = "document"):
        opendocument = require("odf.opendocument", "documents")
        text_ns = require("odf.namespaces", "documents").TEXTNS
        _open_zip(data, name, ".odt")
        try:
            self._document = opendocument.load(io.BytesIO(data))
        except Exception as exc:          # noqa: BLE001 - odfpy raises many kinds for a broken package
            raise ValueError(f"{name}: not a readable .odt file: {exc}") from None
        self._text_ns = text_ns
        self._paragraph_names = {(text_ns, "p"), (text_ns, "h")}
        self._chunks: list[tuple[list[Any], Segment]] = []
        for root in (self._document.text, self._document.masterstyles):
            for node in self._walk(root):
                if getattr(node, "qname", None) in self._paragraph_names:
                    for chunk in self._split(node):
                        text = "".join(self._value(item) for item in chunk)
                        if needs_translation(text):
                            self._chunks.append((chunk, Segment(text)))
        self.segments = [segment for _, segment in self._chunks]

    @staticmethod
    def _walk(node: Any):
        """`node` and its descendants in document order (a loop, not recursion: nesting may be deep)."""
        stack = [node]
        while stack:
            current = stack.pop()
            yield current
            stack.extend(reversed(current.childNodes))

    def _value(self, node: Any) -> str:
        if node.nodeType == node.TEXT_NODE:
            return node.data
        return " " * int(node.getAttribute("c") or 1)

    def _split(self, paragraph: Any) -> list[list[Any]]:
        """The paragraph's text nodes and `text:s` spaces in chunks: cut at line breaks, tabs and page breaks,
        around links (`text:a`) and around anything else (fields, notes, frames: left as they are)."""
        chunks: list[list[Any]] = [[]]

        def visit(element: Any, container: Any) -> None:
            for child in element.childNodes:
                if child.nodeType == child.TEXT_NODE:
                    if chunks[-1] and chunks[-1][-1][1] is not container:
                        chunks.append([])
                    chunks[-1].append((child, container))
                    continue
                if child.nodeType != child.ELEMENT_NODE:
                    continue
                namespace, local = child.qname
                if namespace == self._text_ns and local == "s":
                    if chunks[-1] and chunks[-1][-1][1] is container:
                        chunks[-1].append((child, container))
                elif namespace == self._text_ns and local == "span":
                    visit(child, container)                  # formatting only: the same chunk
                elif namespace == self._text_ns and local == "a":
                    chunks.append([])
                    visit(child, child)
                    chunks.append([])
                else:                                        # breaks, tabs, fields, notes, frames, bookmarks
                    chunks.append([])
        visit(paragraph, paragraph)
        return [[node for node, _ in chunk] for chunk in chunks if chunk]

    def render(self) -> bytes:
        for texts, segment in self._chunks:
            if segment.translation == segment.text:
                continue
            words = [node for node in texts if node.nodeType == node.TEXT_NODE]
            main = max(words, key=lambda node: len(node.data.strip()))
            for node in texts:
                if node.nodeType == node.TEXT_NODE:
                    node.data = segment.translation if node is main else ""
                else:
                    node.parentNode.removeChild(node)
        out = io.BytesIO()
        self._document.write(out)
        return out.getvalue()
