"""Office documents: Word (`.docx`, with `python-docx`), PowerPoint (`.pptx`, with `python-pptx`) and
OpenDocument text (`.odt`, with `odfpy`), the well-kept libraries for each.

Every paragraph is one text for the model: body paragraphs, table cells (nested tables too), headers and
footers (`.docx`, `.odt`), text boxes and shapes, slides' tables, groups and speaker notes (`.pptx`).
Everything that is not a paragraph's text (styles, images, fields, numbering, tabs, breaks, bookmarks) is left
as it is. A paragraph's runs carry its formatting: the translation goes into its main run (the one with the
most text), and a run formatted otherwise (a bold word, a code font, a link's text) keeps its formatting where
its text comes back verbatim in the translation (a name, a number, a command); other runs are emptied, not
removed. `.odt` maps spans the same way as far as the main span.
"""
from __future__ import annotations

import copy
import io
import zipfile
from typing import Any

import regex

from pipeline.documents.segments import Segment
from pipeline.extras import require

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
XML_SPACE = "{http://www.w3.org/XML/1998/namespace}space"
WORD_PARTS = regex.compile(r"^/word/(?:document|header[0-9]*|footer[0-9]*)\.xml$")
TRANSLATABLE = regex.compile(r"[\p{L}\p{N}]")


def _open_zip(data: bytes, name: str, what: str) -> None:
    """A one-line error for bytes that are not a zip package at all (the libraries' own errors say less)."""
    if not zipfile.is_zipfile(io.BytesIO(data)):
        raise ValueError(f"{name}: not a {what} file (not a zip package)")


def _spread(translation: str, runs: list[tuple[str, Any]], main: Any, same) -> list[tuple[str, Any]]:
    """The translation as (text, run) pieces: `main`'s, with the text of each run formatted otherwise (`same`
    false) cut out into that run's where it occurs verbatim, in order."""
    pieces: list[tuple[str, Any]] = [(translation, main)]
    for text, run in runs:
        text = text.strip()
        if run is main or same(run, main) or len(text) < 2 or not TRANSLATABLE.search(text):
            continue
        for index, (piece, owner) in enumerate(pieces):
            at = piece.find(text) if owner is main else -1
            if at >= 0:
                pieces[index:index + 1] = [(piece[:at], main), (text, run), (piece[at + len(text):], main)]
                break
    return [(piece, owner) for piece, owner in pieces if piece]


class _OoxmlParagraphs:
    """The paragraphs (`<p>`) of OOXML elements (WordprocessingML `w:`, DrawingML `a:`) as segments, each
    written back into its runs (`<r>` with `<t>`)."""

    def __init__(self, roots: list[Any], ns: str):
        self._ns = ns
        self._paragraphs: list[tuple[list[tuple[str, Any]], Segment]] = []
        for root in roots:
            for paragraph in root.iter(ns + "p"):
                runs = [(self._text(run), run) for run in paragraph.iter(ns + "r")
                        if self._owner(run) is paragraph and run.find(ns + "t") is not None]
                text = "".join(text for text, _ in runs)
                if TRANSLATABLE.search(text):
                    self._paragraphs.append((runs, Segment(text)))
        self.segments = [segment for _, segment in self._paragraphs]

    def _owner(self, run: Any) -> Any:
        node = run.getparent()
        while node is not None and node.tag != self._ns + "p":
            node = node.getparent()
        return node

    def _text(self, run: Any) -> str:
        return "".join(t.text or "" for t in run.findall(self._ns + "t"))

    def _properties(self, run: Any) -> bytes:
        lxml = require("lxml.etree", "documents")
        found = run.find(self._ns + "rPr")
        return b"" if found is None else lxml.tostring(found)

    def apply(self) -> None:
        for runs, segment in self._paragraphs:
            if segment.translation == segment.text:
                continue
            main = max(runs, key=lambda item: len(item[0].strip()))[1]
            pieces = _spread(segment.translation, runs, main,
                             lambda one, other: self._properties(one) == self._properties(other))
            for _, run in runs:                   # empty the old runs' text, keep what else they hold
                for t in run.findall(self._ns + "t")[1:]:
                    run.remove(t)
                run.find(self._ns + "t").text = ""
            anchor = main
            for text, template in pieces:
                run = copy.deepcopy(template)
                for child in list(run):
                    if child.tag != self._ns + "rPr":
                        run.remove(child)
                t = run.makeelement(self._ns + "t", {})
                t.text = text
                if self._ns == W:
                    t.set(XML_SPACE, "preserve")
                run.append(t)
                anchor.addprevious(run)
            for _, run in runs:                   # a run left with nothing but its properties goes
                if all(child.tag == self._ns + "rPr" or (child.tag == self._ns + "t" and not child.text)
                       for child in run):
                    run.getparent().remove(run)


class DocxDocument:
    """A Word document: `segments` of the body, tables, headers, footers and text boxes; `render()`."""

    def __init__(self, data: bytes, name: str = "document"):
        docx = require("docx", "documents")
        _open_zip(data, name, ".docx")
        try:
            self._document = docx.Document(io.BytesIO(data))
        except Exception as exc:          # noqa: BLE001 - python-docx raises many kinds for a broken package
            raise ValueError(f"{name}: not a readable .docx file: {exc}") from None
        parts = [part for part in self._document.part.package.iter_parts()
                 if WORD_PARTS.match(str(part.partname)) and hasattr(part, "element")]
        self._paragraphs = _OoxmlParagraphs([part.element for part in parts], W)
        self.segments = self._paragraphs.segments

    def render(self) -> bytes:
        self._paragraphs.apply()
        out = io.BytesIO()
        self._document.save(out)
        return out.getvalue()


class PptxDocument:
    """A PowerPoint presentation: `segments` of every slide's shapes, tables and groups, and its notes."""

    def __init__(self, data: bytes, name: str = "document"):
        pptx = require("pptx", "documents")
        _open_zip(data, name, ".pptx")
        try:
            self._presentation = pptx.Presentation(io.BytesIO(data))
        except Exception as exc:          # noqa: BLE001
            raise ValueError(f"{name}: not a readable .pptx file: {exc}") from None
        roots = []
        for slide in self._presentation.slides:
            roots.append(slide.element)
            if slide.has_notes_slide:
                roots.append(slide.notes_slide.element)
        self._paragraphs = _OoxmlParagraphs(roots, A)
        self.segments = self._paragraphs.segments

    def render(self) -> bytes:
        self._paragraphs.apply()
        out = io.BytesIO()
        self._presentation.save(out)
        return out.getvalue()


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
        self._paragraph_names = {(text_ns, "p"), (text_ns, "h")}
        self._space = (text_ns, "s")
        self._paragraphs: list[tuple[list[Any], Segment]] = []
        for root in (self._document.text, self._document.masterstyles):
            for node in self._walk(root):
                if getattr(node, "qname", None) in self._paragraph_names:
                    texts = self._texts(node)
                    text = "".join(self._value(item) for item in texts)
                    if TRANSLATABLE.search(text):
                        self._paragraphs.append((texts, Segment(text)))
        self.segments = [segment for _, segment in self._paragraphs]

    @staticmethod
    def _walk(node: Any):
        yield node
        for child in node.childNodes:
            yield from OdtDocument._walk(child)

    def _texts(self, paragraph: Any) -> list[Any]:
        """Text nodes and `text:s` spaces of the paragraph itself and its spans (not of nested paragraphs)."""
        found = []
        for child in paragraph.childNodes:
            if child.nodeType == child.TEXT_NODE or getattr(child, "qname", None) == self._space:
                found.append(child)
            elif child.nodeType == child.ELEMENT_NODE and child.qname not in self._paragraph_names \
                    and child.qname[1] in ("span", "a"):
                found.extend(self._texts(child))
        return found

    def _value(self, node: Any) -> str:
        if node.nodeType == node.TEXT_NODE:
            return node.data
        return " " * int(node.getAttribute("c") or 1)

    def render(self) -> bytes:
        for texts, segment in self._paragraphs:
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
