"""Office documents: Word (`.docx`, with `python-docx`), PowerPoint (`.pptx`, with `python-pptx`) and OpenDocument text
and presentations (`.odt`, `.odp`, with `odfpy`), the well-kept libraries for each.

Every paragraph is text for the model: body paragraphs, table cells (nested tables too), headers and footers
(`.docx`, `.odt`), footnotes, endnotes and comments (`.docx`), text boxes and shapes, slides' tables, groups,
speaker notes (`.pptx`, `.odp`), charts (`.pptx`, `.docx`: titles, series names, category labels, in the chart and
its embedded workbook), SmartArt (`.pptx`, `.docx`: the diagram's data and the drawing shown until it is laid out
again, alike), the footers declared for slides (`.odp`) and the text boxes slide masters show on every slide. A
slide's name (`.odp`'s `draw:name`, which links and custom shows refer to) and the masters' placeholder text of a
presentation (never shown) are left as they are. Word's tracked changes are
accepted first (`accept_revisions`): the model reads a paragraph's current text, inserted text included and deleted
text left out, and the translation is written as plain runs, with no revision marks around it (paragraph marks' and
table rows' own marks stay). A paragraph is cut at line breaks and tabs into chunks, each one text, so that breaks
and tabs stay where they were; smart tags and custom XML (`.docx`; not content controls, whose text stays in them)
and spans (OpenDocument), and OpenDocument's runs of spaces (`text:s`), cut nothing, and neither does a hyperlink
inside a sentence (`.docx`'s `w:hyperlink`, by `r:id` or `w:anchor`; OpenDocument's `text:a`): its text is a
formatted group of the sentence's text (below), and the link element itself, its target kept, moves with its words'
translation to where they land, every link back exactly once (its text in its first run's or span's formatting). A
link holding a break, a tab, a field or a note, a link of blanks, and links with no text of the sentence's own
around them still cut the paragraph around their text (a slide's links are its runs' properties, `.pptx`'s runs
already carrying them as formatting). Word fields whose result is words (`READ_FIELDS`: a HYPERLINK field, a
cross-reference, a table of contents) are translated, a link or cross-reference field within its sentence as a
hyperlink is (`simplify_fields`); the results of the others (page numbers, dates) are left as they are. A
footnote's mark, a symbol and a picture in line with the text cut the sentence, so that they stay between their
words (`INLINE_OBJECTS`); marks that take no room do not (Word's bookmarks and comment ranges, LibreOffice's soft
page breaks and bookmarks: `ODF_MARKS`), a Word range around words of a sentence staying around their translation
where the sentence's holds it (`hold_ranges`), and Word's hyphen elements are read as the text they show
(`plain_hyphens`). A table of contents' entry gives only its text (`.odt`: not its number, tab and page number).
Pictures' and shapes' text alternatives, which screen readers read, are translated (DrawingML's `descr` and
`title`, `_AltTexts`; OpenDocument's `svg:title` and `svg:desc`), but a file name put there. Everything else that
is not text (styles, images, numbering, bookmarks) is left as it is; URLs, e-mail
addresses and file paths come back verbatim, and so does code, as HTML's `<code>` does: runs in a code font
(`code_font`: Courier New, Consolas, "... Mono", "... Code") or a code style (`code_style`: "HTML Code", "Source
Text", "Verbatim Char"), or in a paragraph of such a style, unless a code font is most of the document's text
(`code_holders`). Runs (OpenDocument: spans) carry a chunk's formatting (`RunLayout`): the translation goes into its
main run, and a run formatted otherwise (a bold word) keeps its formatting where its text, or its text translated
alone (in the same batch), occurs in the chunk's translation (a menu path, a name, a term), a run of code where its
text does, exactly; where one does not, the chunk is translated piece by piece between such runs, each run getting
its own translation (code: its text) in its place, so no formatted run is dropped; a chunk of code alone is not
translated. Spaces the translation keeps in a row come back as `text:s` in OpenDocument files (which show spaces
written in a row as one). The language tags that name the run's source language (Word's proofing language, slides'
run languages, OpenDocument's `fo:language`, `dc:language`) name its target in the translation (`relabel_ooxml`,
`relabel_odf`), so that it is spell-checked in its own language. A package is told by its parts (`package_kind`; an
OpenDocument by its `mimetype` entry): one of another kind than its name says is refused in one line.
"""
from __future__ import annotations

import copy
import dataclasses
import io
import zipfile
import zlib
from collections import Counter
from typing import Any, Iterable

import regex

from pipeline.documents.runs import MAX_GROUPS, RunLayout, child_index, once_per_node, spaces_outside, windowed
from pipeline.documents.segments import Segment, protected_spans
from pipeline.documents.xml_file import DOCTYPE   # OOXML (OPC) and ODF parts have none
from pipeline.language import REGIONS, Direction, FollowsDirection
from pipeline.translate.splitting import needs_translation
from pipeline.extras import require, safe_xml_parser

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
WP = "{http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing}"
VML = "{urn:schemas-microsoft-com:vml}"
C = "{http://schemas.openxmlformats.org/drawingml/2006/chart}"
SHEET = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
CACHES = {C + "strCache", C + "strLit", C + "lvl"}      # where a chart keeps the text of its data
XML_SPACE = "{http://www.w3.org/XML/1998/namespace}space"
WORD_PARTS = regex.compile(r"^/word/(?:document|header[0-9]*|footer[0-9]*|footnotes|endnotes|comments)\.xml$")
# A Word document's DrawingML text: SmartArt (its data, and the drawing Word shows until the diagram is laid out
# again) and charts' titles and rich text (their data's cached labels are left)
WORD_CHART = regex.compile(r"^/word/charts/chart[0-9]*\.xml$")
WORD_DRAWING_PARTS = regex.compile(r"^/word/(?:diagrams/(?:data|drawing)|charts/chart)[0-9]*\.xml$")
# A slide's SmartArt: its data (`dgm:pt`'s text) and the drawing PowerPoint shows until it lays the diagram out again
DIAGRAM_RELATIONSHIPS = ("/diagramData", "/diagramDrawing")


NUMBERED = regex.compile(r"\s*[0-9]+(?:\.[0-9]+)*[.)]?(?=\s)\s*")              # "1.2 " before an index entry
LEADER_PAGE = regex.compile(r"\s*(?:\.{3,}|…{2,}|_{3,}|·{3,})\s*[0-9ivxlcdmIVXLCDM]*\s*\Z")   # "..... 3" after one
ALPHABETICAL_PAGES = regex.compile(r"(?:,\s*[0-9]+(?:\s*[-–]\s*[0-9]+)?(?:\s*ff?\.)?)+\s*\Z")   # "term, 3, 7-9"
MAX_UNPACKED_BYTES = 500_000_000     # a package that unpacks to more is refused (a zip bomb)
MAX_XML_BYTES = 100_000_000          # XML parts (parsed into memory, ~20 bytes of RSS per byte) past this: refused
OLE2 = b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1"   # the compound-file signature of .doc, .ppt and .xls
DOCTYPE_WINDOW = 4096                # the opening of a part where a DOCTYPE would stand
CODE_FONTS = {"courier new", "courier", "consolas", "menlo", "monaco", "source code pro", "lucida console"}
CODE_FONT = regex.compile(r"mono(?:spaced?)?\b|\bcode\b", regex.I)     # "Liberation Mono", "Fira Code", not "Monotype"
CODE_STYLE = regex.compile(r"(?:html ?)?(?:code|keyboard|sample|typewriter)|source ?text|verbatim|inline ?code",
                           regex.I)
# WordprocessingML elements around runs that carry no formatting of their own: a sentence goes on through them
# (not content controls, `w:sdt`: a form field or data-bound control keeps its text, so it cuts the sentence)
WORD_WRAPPERS = {W + name for name in ("smartTag", "customXml", "ins", "moveTo", "dir", "bdo")}
STYLES_RELATIONSHIP = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles"
MOVE_RANGES = {W + name for name in ("moveFromRangeStart", "moveFromRangeEnd", "moveToRangeStart", "moveToRangeEnd")}
# What a Word run shows inline besides text, where it stands in its sentence: a footnote's or an endnote's mark, a
# symbol of a symbol font, an embedded object, a picture in line with the text (`wp:inline`; not one anchored to
# the page, which stands where its position says; a VML picture alike, `_in_line_picture`): each cuts its sentence,
# as a tab does, so that it stays between the words it was between (read whole, the sentence's translation goes
# into one run, on one side of it)
# Word's marks around part of a paragraph that take no room (a comment's range, a bookmark, which a cross-reference
# shows): each start's end. `RANGE_HOLDER` marks the stand-in link that carries such a range's runs while translating.
RANGES = {W + "commentRangeStart": W + "commentRangeEnd", W + "bookmarkStart": W + "bookmarkEnd"}
RANGE_HOLDER = "{urn:x-nmt-pipeline:range}holder"
INLINE_OBJECTS = {W + name for name in ("footnoteReference", "endnoteReference", "sym", "object")}
# Word's hyphens that are no text: a non-breaking hyphen (`e-mail`, read as the hyphen it shows) and an optional
# one (a hint where to break the source's word, dropped)
HYPHENS = {W + "noBreakHyphen": "-", W + "softHyphen": ""}
# OpenDocument's marks that take no room in the text (the page breaks of LibreOffice's last layout, bookmarks,
# reference and index marks, tracked changes' marks, a comment and its range's end): a sentence goes on through
# them, each left where it stands among the sentence's text nodes
ODF_MARKS = {"soft-page-break", "change", "change-start", "change-end"} | {
    name + edge for name in ("bookmark", "reference-mark", "toc-mark", "alphabetical-index-mark", "user-index-mark")
    for edge in ("", "-start", "-end")}
ODF_OFFICE_MARKS = {"annotation", "annotation-end"}
# A picture's or shape's text alternative, which screen readers read (OpenDocument's `svg:title` and `svg:desc`;
# DrawingML's `descr` and `title` on a picture's or shape's properties, `wp:docPr`, `pic:cNvPr`, `p:cNvPr`)
ODF_ALT_TEXTS = frozenset({("urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0", "title"),
                           ("urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0", "desc")})
ALT_TEXT_HOLDERS = ("docPr", "cNvPr")
ALT_TEXT_ATTRIBUTES = ("descr", "title")
FILE_NAME = regex.compile(r"[^\n]{0,500}\.(?:png|jpe?g|gif|svg|emf|wmf|bmp|tiff?|webp|heic)",    # a file's name
                          regex.I)                                                          # or path: no alt text
# Word fields whose result is words a reader sees, translated: a link's text, a cross-reference's, a table of
# contents' entries (the others' results are numbers, dates, merged data and the like, and are left as they are)
READ_FIELDS = {"HYPERLINK", "REF", "TOC"}
# Fields whose result is paragraphs of its own, which stay open past a paragraph's end (any other left open there is
# closed: a field whose end is missing would hide the rest of the document)
SPANNING_FIELDS = {"TOC", "INDEX", "TOA", "BIBLIOGRAPHY"}
# Of those, the ones whose result may be read within its sentence, as a `w:hyperlink` is (a table of contents is
# paragraphs of its own)
INLINE_FIELDS = {"HYPERLINK", "REF"}


PROSE, IN_CODE_FONT, NAMED = 0, 1, 2      # how a run is code: not, by its font alone, by a style named so

IN_MEMORY_FILE = regex.compile(r"(?:\bfile )?'?<_io\.BytesIO object at 0x[0-9a-fA-F]+>'?")     # (`_said`)


# how much of a complex field's instruction is kept, past its leading spaces: its first word, its kind, is all
# that is read of it (the whole instruction, joined piece by piece and split for every text inside the field,
# cost the square of its length: a TOC of 240,000 pieces, 10 s)
INSTRUCTION_HEAD = 256


@dataclasses.dataclass
class OpenField:
    """A complex field (`fldChar begin` ... `end`) open while a paragraph is read: its instruction's head (at most
    `INSTRUCTION_HEAD` characters past its leading spaces), its kind, and whether its result has begun."""
    head: str = ""
    kind: str = ""
    past_separate: bool = False

    def read(self, instruction: str) -> None:
        """One more piece of the instruction (`instrText`)."""
        if len(self.head) < INSTRUCTION_HEAD:           # the kind is its first word: the rest is not kept
            self.head = (self.head + instruction).lstrip()[:INSTRUCTION_HEAD]
            self.kind = field_kind(self.head)


def field_kind(instruction: str | None) -> str:
    """A Word field's kind, the first word of its instruction (` HYPERLINK "https://..." \\o "tip"` -> HYPERLINK)."""
    words = (instruction or "").split()
    return words[0].upper() if words else ""


def _in_line_picture(element: Any) -> bool:
    """Whether a run's element is a picture in line with the text: DrawingML's `w:drawing` holding `wp:inline`, or
    a VML `w:pict` (Word 2003's pictures) whose shape is not positioned on the page (`position:absolute`)."""
    if element.tag == W + "drawing":
        return element.find(WP + "inline") is not None
    if element.tag == W + "pict":                  # its own shapes or group (a group's shapes are placed in it)
        styles = [shape.get("style") or "" for shape in element if isinstance(shape.tag, str)
                  and shape.tag.startswith(VML)]
        return bool(styles) and not any("position:absolute" in style.replace(" ", "") for style in styles)
    return False


def plain_hyphens(root: Any) -> None:
    """Word's hyphens that are elements (`HYPHENS`) as the text they show, so that the model reads `e-mail`, not
    `email` (the hyphen then stood before the whole translation)."""
    for hyphen in list(root.iter(*HYPHENS)):
        text = HYPHENS[hyphen.tag]
        if text:
            character = hyphen.makeelement(W + "t", {})
            character.text = text
            hyphen.addprevious(character)
        hyphen.getparent().remove(hyphen)


def simplify_fields(root: Any) -> None:
    """Word's complex fields of a kind read within a sentence (`INLINE_FIELDS`), written as runs side by side in one
    parent (`w:fldChar` begin, the instruction's `w:instrText`, separate, runs of text, end), in their simple form,
    `w:fldSimple` holding the result's runs, which Word shows and updates alike (ECMA-376 17.16.19): its words are
    then a group of its sentence, and the field moves with them, as a `w:hyperlink` does. A field of any other
    shape (a nested field, a break in its result, a part in another parent) is left as written."""
    def content(run: Any) -> list[Any]:
        return [child for child in run if child.tag != W + "rPr"] if run.tag == W + "r" else [run]

    def char(run: Any, kind: str) -> bool:
        inside = content(run)
        return len(inside) == 1 and inside[0].tag == W + "fldChar" and inside[0].get(W + "fldCharType") == kind

    for begin in list(root.iter(W + "fldChar")):
        run = begin.getparent()
        if run is None or run.getparent() is None or not char(run, "begin"):
            continue
        instruction, results, parts, sibling = [], [], [run], run.getnext()
        while sibling is not None and all(child.tag == W + "instrText" for child in content(sibling)):
            instruction += [child.text or "" for child in content(sibling)]
            parts.append(sibling)
            sibling = sibling.getnext()
        if sibling is None or not char(sibling, "separate") or field_kind("".join(instruction)) not in INLINE_FIELDS:
            continue
        parts.append(sibling)
        sibling = sibling.getnext()
        while sibling is not None and sibling.tag == W + "r" and content(sibling) and all(
                child.tag == W + "t" for child in content(sibling)):
            results.append(sibling)
            sibling = sibling.getnext()
        if not results or sibling is None or not char(sibling, "end"):
            continue
        field = run.makeelement(W + "fldSimple", {W + "instr": "".join(instruction)})
        for name in ("dirty", "fldLock"):
            if begin.get(W + name) is not None:
                field.set(W + name, begin.get(W + name))
        run.addprevious(field)
        for item in results:
            field.append(item)
        for item in parts + [sibling]:
            item.getparent().remove(item)
MOST_IN_CODE_FONT = 0.5                   # past this share of a document's characters, a code font is its body font


def code_holders(chunks: list[tuple[list[str], list[int]]]) -> list[list[bool]]:
    """Which holders of each chunk (its texts and each one's code kind: `PROSE`, `IN_CODE_FONT`, `NAMED`) are
    code, kept verbatim: those in a style named for code, and those in a code font unless more than
    `MOST_IN_CODE_FONT` of the document's characters are (a screenplay set in Courier is prose throughout)."""
    total = sum(len(text.strip()) for texts, _ in chunks for text in texts)
    in_font = sum(len(text.strip()) for texts, kinds in chunks
                  for text, kind in zip(texts, kinds) if kind == IN_CODE_FONT)
    least = NAMED if in_font > MOST_IN_CODE_FONT * total else IN_CODE_FONT
    return [[kind >= least for kind in kinds] for _, kinds in chunks]


def code_font(name: str | None) -> bool:
    """Whether a font family is one code is set in: Courier New, Consolas, Menlo ..., or one named "Mono" or
    "Code" ("DejaVu Sans Mono", "Fira Code"; not "Monotype Corsiva")."""
    name = (name or "").strip().strip("'\"")
    return name.lower() in CODE_FONTS or CODE_FONT.search(name) is not None


def code_style(name: str | None) -> bool:
    """Whether a character style's name or id is one of code: "Code", "HTML Code" (`HTMLCode`), "Source Text"
    (`Source_20_Text`), "Verbatim Char", "HTML Keyboard" ...; a trailing "Char" (Word's linked styles) aside."""
    name = regex.sub(r"(?i)[ _]?char\Z", "", (name or "").replace("_20_", " ").strip())
    return CODE_STYLE.fullmatch(name) is not None


ODF_KINDS = {b"application/vnd.oasis.opendocument.text": "odt",           # an OpenDocument's `mimetype` entry
             b"application/vnd.oasis.opendocument.presentation": "odp"}
ODF_KINDS_MEDIA = {f".{kind}": media_type.decode() for media_type, kind in ODF_KINDS.items()}   # ".odp": its type


def package_kind(data: bytes) -> str | None:
    """"docx", "pptx", "odt" or "odp" for a zip package of that kind (from its part names, an OpenDocument's from
    its `mimetype` entry), else None."""
    if data[:4] != b"PK\x03\x04":
        return None
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as package:
            names = set(package.namelist())
            if "mimetype" in names and (kind := ODF_KINDS.get(package.read("mimetype").strip())):
                return kind
    except (zipfile.BadZipFile, *DAMAGED):
        return None
    return "docx" if "word/document.xml" in names else "pptx" if "ppt/presentation.xml" in names else None


DAMAGED = (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError, RuntimeError, ValueError)
ODF_PARTS = ("settings.xml", "meta.xml", "content.xml", "styles.xml")      # what odfpy parses


def read_entry(package: zipfile.ZipFile, entry: str | zipfile.ZipInfo, name: str) -> bytes:
    """One entry of an open zip package; a one-line ValueError naming the file and the entry where its data is
    damaged (bad compressed data, a CRC mismatch, cut short, an unknown compression method or encryption)."""
    try:
        return package.read(entry)
    except DAMAGED as exc:
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        entry_name = entry.filename if isinstance(entry, zipfile.ZipInfo) else entry
        raise ValueError(f"{name}: zip entry {entry_name} is damaged ({reason})") from None


def check_odf_parts(data: bytes, name: str, what: str = ".odt") -> None:
    """A one-line ValueError naming the file (a `what`: ".odt", ".odp"), the part and the line where an XML part
    odfpy reads is not well-formed (odfpy prints "SAX FAILED TO PARSE" and goes on with what it read) or its zip
    entry is damaged.
    Parsed with lxml, nothing loaded; a namespace prefix left undeclared is no error here: odfpy declares it."""
    etree = require("lxml.etree", "documents")
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        present = set(package.namelist())
        for part in ODF_PARTS:
            if part not in present:
                continue
            parser = safe_xml_parser("documents")
            try:
                etree.fromstring(read_entry(package, part, name), parser)
            except etree.XMLSyntaxError as exc:
                fatal = [error for error in parser.error_log if error.domain_name != "NAMESPACE"]
                if fatal or not len(parser.error_log):
                    error = fatal[0] if fatal else None
                    line, message = (error.line, error.message) if error else (exc.lineno, exc.msg)
                    raise ValueError(f"{name}: not a readable {what} file: {part} line {line}: "
                                     f"{message.strip()}") from None


def _open_zip(data: bytes, name: str, what: str, max_xml_bytes: int | None = None,
              max_unpacked_bytes: int | None = None) -> None:
    """A one-line error for bytes that are not a zip package at all (the libraries' own errors say less), that
    unpack to more than `max_unpacked_bytes` (default `MAX_UNPACKED_BYTES`: the libraries hold every part in memory,
    pictures too, and write each again), or whose XML parts (what the libraries parse into memory, at about 20 bytes
    of memory per byte) unpack to more than `max_xml_bytes` (default `MAX_XML_BYTES`): checked from the zip's
    directory, before anything is parsed (zipfile never unpacks an entry past the size the directory gives it).
    And for an XML part that declares a DOCTYPE, which no office file has: the libraries expand no entity, and
    one used in a text would leave the translated part unreadable."""
    if data.startswith(OLE2):
        raise ValueError(f"{name}: not a {what} file but a legacy binary Office file (.doc, .ppt, .xls): save it "
                         f"as {what} first")
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as package:
            items = package.infolist()
    except (zipfile.BadZipFile, OSError, ValueError):
        raise ValueError(f"{name}: not a {what} file (not a zip package)") from None
    kind = package_kind(data)
    if kind is not None and f".{kind}" != what:
        raise ValueError(f"{name}: not a {what} file but a .{kind} one: rename it")
    unpacked = sum(item.file_size for item in items)
    most = MAX_UNPACKED_BYTES if max_unpacked_bytes is None else max_unpacked_bytes
    if unpacked > most:
        raise ValueError(f"{name}: unpacks to {unpacked:,} bytes, over the {most:,}-byte limit for one document")
    limit = MAX_XML_BYTES if max_xml_bytes is None else max_xml_bytes
    xml_items = [item for item in items if item.filename.lower().endswith((".xml", ".rels"))]
    xml = sum(item.file_size for item in xml_items)
    if xml > limit:
        raise ValueError(f"{name}: {xml:,} bytes of XML unpacked, over the {limit:,}-byte limit for one document")
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        for item in xml_items:
            try:
                with package.open(item) as part:
                    opening = part.read(DOCTYPE_WINDOW)
            except DAMAGED:
                continue                      # the library's reading names it
            if DOCTYPE.search(opening):
                raise ValueError(f"{name}: XML part {item.filename} declares a DOCTYPE, which no {what} file has "
                                 "(its entities would not survive the translation)")


def hold_ranges(root: Any) -> list[tuple[Any, Any, Any, Any]]:
    """Word's comment ranges and bookmarks around words of a sentence (`RANGES`), each moved into a stand-in
    hyperlink (`RANGE_HOLDER`), which `_OoxmlParagraphs` reads as it reads a link, so that the range moves with its
    words' translation where the sentence's translation holds them (never cutting the sentence to place them: a
    range whose words it does not hold ends up empty, as every range did); `release_ranges` puts the marks back
    around it. Only a range whose start and end lie in one paragraph with nothing but runs of text between them
    (and spelling marks), in one formatting that words of the paragraph outside it have too: any other keeps its
    marks where they are. (holder, start, end, the comment's reference run right after its end or None) of each."""
    held, worded = [], {}                   # paragraph -> the formattings of its runs with a letter (once each)
    for start in list(root.iter(*RANGES)):
        paragraph, identifier = start.getparent(), start.get(W + "id")
        if paragraph is None or paragraph.tag != W + "p":
            continue
        between, end = [], start.getnext()               # runs of text (and spelling marks) up to its end, else
        while end is not None and not (end.tag == RANGES[start.tag] and end.get(W + "id") == identifier):
            if not (end.tag == W + "proofErr" or end.tag == W + "r" and all(
                    child.tag in (W + "rPr", W + "t") for child in end)):
                break                                   # none: looked for no further (20,000 marks: 17 s before)
            between.append(end)
            end = end.getnext()
        if end is None or end.tag != RANGES[start.tag] or end.get(W + "id") != identifier:
            continue
        runs = [item for item in between if item.tag == W + "r"]
        formatting = {_run_properties(run) for run in runs}
        if not any(_worded(run) for run in runs) or len(formatting) != 1:
            continue                              # (a range in a formatting of its own keeps it as a group does)
        if paragraph not in worded:
            worded[paragraph] = Counter(_run_properties(run) for run in paragraph.iter(W + "r") if _worded(run))
        if worded[paragraph][next(iter(formatting))] <= sum(map(_worded, runs)):
            continue                              # no word of the paragraph's own outside it, in its formatting
        after = end.getnext()
        reference = after if after is not None and after.tag == W + "r" and any(
            mark.get(W + "id") == identifier for mark in after.iter(W + "commentReference")) else None
        holder = start.makeelement(W + "hyperlink", {RANGE_HOLDER: "1"})
        start.addnext(holder)
        for item in between:
            holder.append(item)
        held.append((holder, start, end, reference))
    return held


def _worded(run: Any) -> bool:
    return any(character.isalpha() for t in run.iter(W + "t") for character in t.text or "")


def _run_properties(run: Any) -> bytes:
    properties = run.find(W + "rPr")
    return b"" if properties is None else require("lxml.etree", "documents").tostring(properties)


def release_ranges(held: list[tuple[Any, Any, Any, Any]]) -> None:
    """Each range `hold_ranges` held put back: its start, its runs and its end (and its comment's reference) where
    its stand-in link is now, the link gone."""
    for holder, start, end, reference in held:
        holder.addprevious(start)
        for item in list(holder):
            holder.addprevious(item)
        holder.addprevious(end)
        if reference is not None:
            end.addnext(reference)
        holder.getparent().remove(holder)


def _prose(text: str, link: Any, verbatim: bool) -> bool:
    """Whether a holder is prose outside every link: not code, with a letter."""
    return link is None and not verbatim and any(character.isalpha() for character in text)


def _ranges_as_prose(texts: list[str], links: list[Any], code: list[bool]) -> list[Any]:
    """A Word chunk's holders' links, its held ranges (`hold_ranges`) read as plain runs where no other holder is
    prose (a chunk after a tab that is all ranges and links), or where ranges and links are more than `MAX_GROUPS`:
    a range then never cuts its sentence (as a link alone would), and its marks end up around what its runs hold, as
    before ranges were held."""
    if any(map(_prose, texts, links, code)) and len({id(link) for link in links if link is not None}) <= MAX_GROUPS:
        return links
    return [None if link is not None and link.get(RANGE_HOLDER) else link for link in links]


def _link_parts(texts: list[str], links: list[Any], code: list[bool]) -> list[list[int]]:
    """A chunk's holders (each with its text, its link or None, and whether it is code) as the chunks to read: the
    whole chunk, its links' text as groups, where a holder outside every link is prose with a letter (the
    sentence's main formatting lives there: `1. ` or `(` before a link is none); else cut around each link
    (consecutive holders of one link, or of none), as a link alone is; so too past `MAX_GROUPS` links."""
    if len({id(link) for link in links if link is not None}) <= MAX_GROUPS and any(map(_prose, texts, links, code)):
        return [list(range(len(links)))]
    parts: list[list[int]] = []
    for index, link in enumerate(links):
        if parts and links[parts[-1][-1]] is link:
            parts[-1].append(index)
        else:
            parts.append([index])
    return parts


def _main_key(texts: list[str], keys: list[Any], links: list[Any], code: list[bool]) -> Any:
    """The main formatting of a chunk with links: of its holders outside every link and not code, the key of the
    most with a word, then of the most characters (as `RunLayout` decides among all); None where there is none."""
    totals: dict[Any, tuple[int, int]] = {}
    for text, key, link, verbatim in zip(texts, keys, links, code):
        if link is None and not verbatim:
            words, characters = totals.get(key, (0, 0))
            totals[key] = (words + needs_translation(text), characters + len(text.strip()))
    return max(totals, key=totals.get) if totals else None


class _OoxmlParagraphs:
    """The paragraphs (`<p>`) of OOXML elements (WordprocessingML `w:`, DrawingML `a:`) as segments, each
    written back into its text elements (`<t>` in runs `<r>`).

    Word's tracked changes to text are accepted first (`accept_revisions`), so that the model reads, and the
    translation replaces, the paragraph's current text. A paragraph is cut into chunks at line breaks and tabs
    (`w:br`, `w:cr`, `w:tab`, `w:ptab`, `a:br`): each chunk is one segment, so breaks and tabs stay where they
    are; smart tags and custom XML around runs (`WORD_WRAPPERS`) cut nothing, and neither does a
    hyperlink (`w:hyperlink`, `_inline_link`), whose text is a formatted group of its chunk (keyed by the link) and
    which moves, its runs replaced by one run of its words' translation, to where they land (`apply`); one
    holding a break, a tab or a field, one of blanks, and links with no prose of the chunk's own around them are
    cut around, as before. A HYPERLINK or REF field's result (`w:fldSimple`, `simplify_fields`) is read so too, a
    table of contents' entries as paragraphs; the results of other fields (`w:fldSimple`, `w:fldChar` ...
    `separate` ... `end`, `a:fld`: page numbers, dates) and nested paragraphs (text boxes, their own) are left.
    Footnote marks, symbols and pictures in line (`INLINE_OBJECTS`) cut a chunk as a tab does. Runs formatted
    otherwise than the chunk's main one keep their formatting (`RunLayout`); runs in a code font (`code_font`:
    `w:rFonts`' `w:ascii`, `a:latin`'s typeface) or a code character style (`code_style`, of its id or of its name
    in `code_styles`, or one whose font is a code font) are code, kept verbatim, and a chunk of code alone is not
    translated."""

    def __init__(self, roots: list[Any], ns: str, code_styles: dict[str, int] | None = None):
        self._ns = ns
        self._boundaries = {ns + name for name in ("br", "cr", "tab", "ptab")} | (INLINE_OBJECTS if ns == W else set())
        self._fields = {ns + "fldSimple", ns + "fld"}
        self._open_fields: list[OpenField] = []             # each complex field open, outermost first
        self._code_styles = code_styles or {}
        self._link_of: dict[Any, Any] = {}                  # a `<t>` in a hyperlink read with its sentence -> that
        self._paragraph_code: dict[Any, int] = {}           # paragraph -> its style's code kind (`_code`)
        self._held: list[tuple[Any, Any, Any, Any]] = []    # comment ranges and bookmarks (`hold_ranges`)
        found = []                                          # (chunk, its texts, each holder's code kind)
        for root in roots:
            if ns == W:
                accept_revisions(root)
                simplify_fields(root)
                plain_hyphens(root)
                self._held += hold_ranges(root)
            self._open_fields = []                            # a table of contents' field spans paragraphs
            for paragraph in root.iter(ns + "p"):
                for chunk in self._split(paragraph):
                    texts = [t.text or "" for t in chunk]
                    if needs_translation("".join(texts)):
                        found.append((chunk, texts, [NAMED if self._link_of.get(t) is not None and not self._letters(
                            self._link_of[t]) else self._code(t.getparent()) for t in chunk]))
        self._chunks: list[tuple[list[Any], RunLayout, list[Any]]] = []      # (chunk, layout, each holder's link)
        for (whole, all_texts, _), all_code in zip(found, code_holders([(texts, kinds) for _, texts, kinds in found])):
            all_links = _ranges_as_prose(all_texts, [self._link_of.get(t) for t in whole], all_code)
            for part in _link_parts(all_texts, all_links, all_code):
                chunk, texts = [whole[i] for i in part], [all_texts[i] for i in part]
                code, links = [all_code[i] for i in part], [all_links[i] for i in part]
                if len(part) < len(whole) or all(link is None for link in links):
                    links = [None] * len(part)                  # a link cut alone, or none: as before
                if all(verbatim for verbatim, text in zip(code, texts) if text.strip()):
                    continue
                keys = [self._properties(t.getparent()) if link is None else ("link", id(link))
                        for t, link in zip(chunk, links)]
                direct = [t.getparent().getparent().tag not in WORD_WRAPPERS for t in chunk]
                soft = {key for key, link in zip(keys, links) if link is not None and link.get(RANGE_HOLDER)}
                for window, layout in windowed(texts, keys, code, direct, _main_key(texts, keys, links, code), links,
                                               soft):
                    self._chunks.append(([chunk[i] for i in window], layout, [links[i] for i in window]))
        self.segments = [segment for _, layout, _ in self._chunks for segment in layout.alone] + \
            [layout.segment for _, layout, _ in self._chunks]

    def _link_text(self, link: Any) -> str:
        return "".join(t.text or "" for t in link.iter(self._ns + "t"))

    @once_per_node
    def _letters(self, link: Any) -> bool:
        """Whether a hyperlink's text has a letter: read once for the link, not once for each of its runs (10,000
        runs: 10 s)."""
        return any(character.isalpha() for character in self._link_text(link))

    @once_per_node
    def _inline_link(self, link: Any) -> bool:
        """Whether a Word hyperlink (`w:hyperlink`: `r:id` or `w:anchor`) is read as part of its sentence, its text
        a formatted group: one with a word or a mark (not blank) and with no break, tab, field or nested paragraph
        or hyperlink inside (such a link cuts the paragraph, as before)."""
        stops = self._boundaries | self._fields | {W + name for name in ("fldChar", "instrText", "hyperlink",
                                                                         "drawing", "pict", "p", "delText")}
        return bool(self._link_text(link).strip()) and not any(
            isinstance(child.tag, str) and child.tag in stops for child in link.iterdescendants())

    def _walk(self, element: Any, hidden: bool = False):
        """(descendant, inside a field) in document order, not entering nested paragraphs."""
        for child in element:
            if not isinstance(child.tag, str) or child.tag == self._ns + "p":
                continue
            inside = hidden or (child.tag in self._fields and field_kind(child.get(W + "instr")) not in READ_FIELDS)
            yield child, inside
            yield from self._walk(child, inside)

    def _split(self, paragraph: Any) -> list[list[Any]]:
        chunks: list[list[Any]] = [[]]
        container, fields = None, self._open_fields
        for element, in_field in self._walk(paragraph):
            tag = element.tag
            if tag == self._ns + "fldChar":
                kind = element.get(self._ns + "fldCharType")
                if kind == "begin":
                    fields.append(OpenField())
                elif fields and kind in ("separate", "end"):
                    fields[-1].past_separate = True
                    if kind == "end":
                        fields.pop()
                chunks.append([])
            elif tag == W + "instrText" and fields and not fields[-1].past_separate:
                fields[-1].read(element.text or "")
            elif tag in self._boundaries or _in_line_picture(element):
                chunks.append([])
            elif tag == self._ns + "t":
                if in_field or (fields and not (all(field.past_separate for field in fields)
                                                and fields[-1].kind in READ_FIELDS)):
                    chunks.append([])                       # a field's instruction, or a result kept as written
                    continue
                parent = element.getparent().getparent()
                while parent.tag in WORD_WRAPPERS:
                    parent = parent.getparent()
                if parent.tag in (W + "hyperlink", W + "fldSimple") and self._inline_link(parent):
                    self._link_of[element] = parent              # its text: a group of the sentence around it
                    parent = parent.getparent()
                    while parent.tag in WORD_WRAPPERS:
                        parent = parent.getparent()
                if chunks[-1] and parent is not container:
                    chunks.append([])
                container = parent
                chunks[-1].append(element)
        fields[:] = [field for field in fields if field.kind in SPANNING_FIELDS]
        return [chunk for chunk in chunks if chunk]

    def _code(self, run: Any) -> int:
        """Whether a run is code (`PROSE`, `IN_CODE_FONT`, `NAMED`): its own font decides where it names one, else
        its character style, else its paragraph's style."""
        properties = run.find(self._ns + "rPr")
        if self._ns == A:
            latin = None if properties is None else properties.find(A + "latin")
            return IN_CODE_FONT if latin is not None and code_font(latin.get("typeface")) else PROSE
        fonts = None if properties is None else properties.find(W + "rFonts")
        if fonts is not None and fonts.get(W + "ascii"):
            return IN_CODE_FONT if code_font(fonts.get(W + "ascii")) else PROSE
        style = None if properties is None else properties.find(W + "rStyle")
        kind = PROSE if style is None else self._code_styles.get(style.get(W + "val"),
                                                                  NAMED if code_style(style.get(W + "val")) else PROSE)
        paragraph = next((above for above in run.iterancestors(W + "p")), None)
        if paragraph not in self._paragraph_code:           # once a paragraph (looking for `w:pPr` visits them all)
            mark = None if paragraph is None else paragraph.find(W + "pPr/" + W + "pStyle")
            self._paragraph_code[paragraph] = PROSE if mark is None else self._code_styles.get(mark.get(W + "val"),
                                                                                               PROSE)
        return max(kind, self._paragraph_code[paragraph])

    def _properties(self, run: Any) -> bytes:
        lxml = require("lxml.etree", "documents")
        found = run.find(self._ns + "rPr")
        return b"" if found is None else lxml.tostring(found)

    def _set(self, t: Any, text: str) -> None:
        t.text = text
        if self._ns == W:
            t.set(XML_SPACE, "preserve")

    def _bare(self, run: Any) -> Any:
        """A new run like `run`: its attributes and properties, nothing else."""
        bare = run.makeelement(run.tag, dict(run.attrib))
        properties = run.find(self._ns + "rPr")
        if properties is not None:
            bare.append(copy.deepcopy(properties))
        return bare

    def _isolate(self, t: Any) -> None:
        """`t` alone in its run (with the run's properties): what else the run holds (a break, a tab, another
        chunk's text) moves to runs of its own before and after it."""
        run = t.getparent()
        others = [child for child in run if child.tag != self._ns + "rPr"]
        at = others.index(t)
        for items, before in ((others[:at], True), (others[at + 1:], False)):
            if items:
                part = self._bare(run)
                for item in items:
                    part.append(item)
                (run.addprevious if before else run.addnext)(part)

    def apply(self) -> None:
        for chunk, layout, links in self._chunks:
            segment = layout.segment
            if segment.translation == segment.text:
                continue
            pieces = layout.placed()
            moved = {number: links[group.items[0]] for number, group in enumerate(layout.groups)
                     if links[group.items[0]] is not None}             # a group that is a hyperlink's text
            placed = {owner for _, owner in pieces}
            if any(moved[number].get(RANGE_HOLDER) is None for number in set(moved) - placed):
                continue                          # not met by construction: the source, not a lost hyperlink
            moved = {number: link for number, link in moved.items() if number in placed}   # a range not placed:
            #                                       its marks stay where they were, together, as they always did
            if moved:
                pieces = spaces_outside(pieces, set(moved))
            main = chunk[layout.main]
            for t in chunk:
                self._set(t, "")
            kept = None                                   # the text element the translation is in, even empty
            if all(owner is None for _, owner in pieces):              # one formatting: the main run's
                self._set(main, segment.translation)
                kept = main
            else:
                self._isolate(main)
                run = main.getparent()
                for text, owner in pieces:                             # runs cut out, each with its own formatting
                    like = main if owner is None else chunk[layout.groups[owner].items[0]]
                    piece = self._bare(like.getparent())
                    t = piece.makeelement(self._ns + "t", {})
                    self._set(t, text)
                    piece.append(t)
                    if owner in moved:            # the hyperlink itself moves here, holding its words' run
                        chunk[layout.groups[owner].items[0]].getparent().addprevious(piece)
                        run.addprevious(moved[owner])
                    else:
                        run.addprevious(piece)
            for t in chunk:                   # an emptied text goes, and a run left with nothing but its properties
                holder = t.getparent()
                if not t.text and holder is not None and t is not kept:
                    holder.remove(t)
                if holder is not None and holder.getparent() is not None and all(
                        child.tag == self._ns + "rPr" for child in holder):
                    holder.getparent().remove(holder)
        release_ranges(self._held)
        self._held = []


def accept_revisions(root: Any) -> None:
    """Word's tracked changes to text accepted in an lxml tree, as Word's "Accept All" would: deleted and
    moved-away runs (`w:del`, `w:moveFrom`) go, inserted and moved-here ones (`w:ins`, `w:moveTo`) stay without
    their mark, move ranges' marks go, and formatting changes (`w:rPrChange`, `w:pPrChange`) keep the formatting
    they made. Marks on a paragraph's mark, a table row or a cell (inside properties, `...Pr`) are left as they
    are: a translated paragraph is never merged into the next."""
    revisions = [element for element in root.iter(W + "del", W + "moveFrom", W + "ins", W + "moveTo", W + "rPrChange",
                                                  W + "pPrChange", *MOVE_RANGES)]
    moved: dict[int, tuple[Any, bool, list[str]]] = {}   # a removed element's tail: where it goes, joined once
    for element in revisions:
        parent = element.getparent()
        if parent is None or (element.tag in (W + "del", W + "moveFrom", W + "ins", W + "moveTo")
                              and parent.tag.endswith("Pr")):
            continue
        if element.tag in (W + "ins", W + "moveTo"):
            for child in list(element):
                element.addprevious(child)
        if element.tail:                    # a run-level element has no tail in Word's files; kept where one does
            previous = element.getprevious()
            holder = previous if previous is not None else parent
            moved.setdefault(id(holder), (holder, previous is not None, []))[2].append(element.tail)
        parent.remove(element)
    for holder, tail, texts in moved.values():          # (40,000 deletions' tails added one by one: 34 s)
        if tail:
            holder.tail = (holder.tail or "") + "".join(texts)
        else:
            holder.text = (holder.text or "") + "".join(texts)


class _AltTexts:
    """The text alternatives of an OOXML package's pictures and shapes (`descr`, `title` on `wp:docPr`,
    `pic:cNvPr`, `p:cNvPr`: what a screen reader says) as segments, written back into their attributes; a file
    name (`image1.png`, what some tools put there) is no text and is left."""

    def __init__(self, roots: list[Any]):
        self._found: list[tuple[Any, str, Segment]] = []
        for root in roots:
            for element in root.iter():
                if not isinstance(element.tag, str) or element.tag.rpartition("}")[2] not in ALT_TEXT_HOLDERS:
                    continue
                for name in ALT_TEXT_ATTRIBUTES:
                    value = (element.get(name) or "").strip()
                    if needs_translation(value) and not FILE_NAME.fullmatch(value):
                        self._found.append((element, name, Segment(value, protected=protected_spans(value))))
        self.segments = [segment for _, _, segment in self._found]

    def apply(self) -> None:
        for element, name, segment in self._found:
            if segment.translation:
                element.set(name, segment.translation)


class _OoxmlDocument(FollowsDirection):
    """What a Word document and a presentation share: their paragraphs (`_paragraphs`: one set per namespace,
    WordprocessingML's and DrawingML's), written back, the parts the library keeps as bytes and that were parsed
    here (`_parsed`: SmartArt, Word's footnotes) stored again, then the package saved with its language tags
    naming the run's target (`relabel_ooxml`)."""
    _package: Any
    _paragraphs: list[_OoxmlParagraphs]
    _alt_texts: _AltTexts
    _charts: _ChartLabels
    _parsed: list[tuple[Any, Any]]

    def render(self) -> bytes:
        self._charts.apply()
        for paragraphs in self._paragraphs:
            paragraphs.apply()
        self._alt_texts.apply()
        etree = require("lxml.etree", "documents")
        for part, root in self._parsed:
            part._blob = etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True)
        relabel_ooxml(self._package.part.package, self.output_direction)
        out = io.BytesIO()
        self._package.save(out)
        return out.getvalue()


def _said(exc: Exception) -> str:
    """What a library's error says, without the in-memory file it names (`'<_io.BytesIO object at 0x7f...>' is not
    a Word file`: an address, no help to a client)."""
    return IN_MEMORY_FILE.sub("the file", str(exc))


def _parsed_parts(parts: Iterable[Any]) -> list[tuple[Any, Any]]:
    """(part, its tree) of each part the library keeps as bytes (`_parsed_part`; one that does not parse is left)."""
    parsed = [(part, _parsed_part(part.blob)) for part in parts]
    return [(part, root) for part, root in parsed if root is not None]


class DocxDocument(_OoxmlDocument):
    """A Word document: `segments` of the body, tables, headers, footers, text boxes, footnotes, endnotes and
    comments; `render()`. Parts python-docx keeps as bytes (footnotes, endnotes) are parsed here, loading nothing,
    and written back with their declaration."""

    def __init__(self, data: bytes, name: str = "document", max_xml_bytes: int | None = None,
                 direction: Direction | None = None, max_unpacked_bytes: int | None = None):
        self.direction = direction
        docx = require("docx", "documents")
        _open_zip(data, name, ".docx", max_xml_bytes, max_unpacked_bytes)
        try:
            self._package = docx.Document(io.BytesIO(data))
        except Exception as exc:          # noqa: BLE001 - python-docx raises many kinds for a broken package
            raise ValueError(f"{name}: not a readable .docx file: {_said(exc)}") from None
        every = list(self._package.part.package.iter_parts())
        parts = [part for part in every if WORD_PARTS.match(str(part.partname))]
        drawings = _parsed_parts(part for part in every if WORD_DRAWING_PARTS.match(str(part.partname)))
        kept_as_bytes = _parsed_parts(part for part in parts if not hasattr(part, "element"))   # footnotes ...
        self._parsed = kept_as_bytes + drawings
        roots = [part.element for part in parts if hasattr(part, "element")] + [root for _, root in kept_as_bytes]
        try:                                 # not `.styles`, which adds a styles part to a package without one
            styles = _code_styles(self._package.part.part_related_by(STYLES_RELATIONSHIP).element)
        except (KeyError, AttributeError):
            styles = {}
        self._paragraphs = [_OoxmlParagraphs(roots, W, styles), _OoxmlParagraphs([root for _, root in drawings], A)]
        self._alt_texts = _AltTexts(roots)
        self._charts = _ChartLabels([(root, _embedded_workbook(part)) for part, root in drawings
                                     if WORD_CHART.match(str(part.partname))])
        self.segments = [segment for paragraphs in self._paragraphs for segment in paragraphs.segments] + \
            self._charts.segments + self._alt_texts.segments


def _code_styles(styles: Any) -> dict[str, int]:
    """A Word document's styles that are code, by id: `NAMED` where named so (`code_style`) or based on one, else
    `IN_CODE_FONT` where in a code font (`code_font`: their own `w:rFonts`' `w:ascii`) or based on one."""
    found = {}
    for style in styles.iter(W + "style"):
        name, fonts, based = style.find(W + "name"), style.find(W + "rPr/" + W + "rFonts"), style.find(W + "basedOn")
        kind = NAMED if code_style(None if name is None else name.get(W + "val")) else \
            IN_CODE_FONT if fonts is not None and code_font(fonts.get(W + "ascii")) else PROSE
        found[style.get(W + "styleId")] = (None if based is None else based.get(W + "val"), kind)
    return _chained(found)


def _chained(styles: dict[str | None, tuple[str | None, int]]) -> dict[str, int]:
    """Each style's code kind (`PROSE`, `IN_CODE_FONT`, `NAMED`) from `styles` (name -> (the style it is based on,
    its own kind)): the most of its own and those of the styles it is based on; a style not named in `styles` is
    `NAMED` where its name says code (`code_style`). A loop, not recursion (chains may be long), each style once."""
    known: dict[str | None, int] = {}
    for start in styles:
        path, name = [], start
        while name in styles and name not in known and name not in path:
            path.append(name)
            name = styles[name][0]
        kind = known[name] if name in known else PROSE if name in styles else NAMED if code_style(name) else PROSE
        for step in reversed(path):
            kind = max(kind, styles[step][1])
            known[step] = kind
    return {name: kind for name, kind in known.items() if kind and name is not None}


def _parsed_part(blob: bytes) -> Any:
    """An XML part's tree, parsed loading no DTD or entity; None where it does not parse (it is left as it was, as
    Word would refuse it anyway)."""
    etree = require("lxml.etree", "documents")
    parser = safe_xml_parser("documents")
    try:
        return etree.fromstring(blob, parser)
    except etree.XMLSyntaxError:
        return None


class PptxDocument(_OoxmlDocument):
    """A PowerPoint presentation: `segments` of every slide's shapes, tables and groups, its notes, its charts
    (`_ChartLabels`) and SmartArt, and the shapes its masters and layouts show on every slide (a "Confidential"
    line; not their placeholders, whose prompt text is never shown)."""

    def __init__(self, data: bytes, name: str = "document", max_xml_bytes: int | None = None,
                 direction: Direction | None = None, max_unpacked_bytes: int | None = None):
        self.direction = direction
        pptx = require("pptx", "documents")
        _open_zip(data, name, ".pptx", max_xml_bytes, max_unpacked_bytes)
        try:
            self._package = pptx.Presentation(io.BytesIO(data))
        except Exception as exc:          # noqa: BLE001
            raise ValueError(f"{name}: not a readable .pptx file: {_said(exc)}") from None
        roots, charts, diagrams = [], {}, {}
        for slide in self._package.slides:
            roots.append(slide.element)
            if slide.has_notes_slide:
                roots.append(slide.notes_slide.element)
            for relationship in slide.part.rels.values():
                if relationship.is_external:
                    continue
                if relationship.reltype.endswith("/chart"):
                    charts.setdefault(id(relationship.target_part), relationship.target_part)
                elif relationship.reltype.endswith(DIAGRAM_RELATIONSHIPS):
                    diagrams.setdefault(id(relationship.target_part), relationship.target_part)
        for master in self._package.slide_masters:           # what every slide of a layout shows: not placeholders
            for owner in (master, *master.slide_layouts):
                roots += [shape._element for shape in owner.shapes if not shape.is_placeholder]
        roots = list({id(root): root for root in roots}.values())   # a slide listed again: read once (32 KB: 23 s)
        self._charts = _ChartLabels([(part._element, getattr(part.chart_workbook, "xlsx_part", None))
                                     for part in charts.values()])
        self._parsed = _parsed_parts(diagrams.values())
        self._paragraphs = [_OoxmlParagraphs(roots + [part._element for part in charts.values()]
                                             + [root for _, root in self._parsed], A)]
        self._alt_texts = _AltTexts(roots)
        self.segments = self._paragraphs[0].segments + self._charts.segments + self._alt_texts.segments

class _ChartLabels:
    """The text a chart (a slide's, a Word document's: `charts`, each its root and its embedded workbook's part or
    None) caches from its data (series names, category labels, a title taken from a cell: `c:v` in `c:strCache`,
    `c:strLit`, a multi-level category's `c:lvl`, a series' literal `c:tx`) as segments; its titles and other rich
    text are paragraphs (`_OoxmlParagraphs`). The chart's embedded workbook, where it has one, gets the same
    translations: each shared or inline string, and each table column name, that reads exactly as a translated
    label (so that editing the chart's data keeps them); its other cells are left."""

    def __init__(self, charts: list[tuple[Any, Any]]):
        self._workbooks = [workbook for _, workbook in charts if workbook is not None]
        self._labels: list[tuple[Any, Segment]] = []
        unique: dict[str, Segment] = {}                     # a label repeated (each series' categories): one text
        for root, _ in charts:
            for value in root.iter(C + "v"):
                holder = value.getparent()
                cached = holder.tag == C + "pt" and holder.getparent().tag in CACHES
                text = value.text or ""
                if (cached or holder.tag == C + "tx") and any(character.isalpha() for character in text):
                    segment = unique.setdefault(text, Segment(text, protected=protected_spans(text)))
                    self._labels.append((value, segment))
        self.segments = list(unique.values())

    def apply(self) -> None:
        translated: dict[str, str] = {}
        for value, segment in self._labels:
            if segment.translation and segment.translation != segment.text:
                translated.setdefault(segment.text, segment.translation)
                value.text = segment.translation
        if not translated:
            return
        for workbook in self._workbooks:
            if workbook.blob[:4] == b"PK\x03\x04":
                workbook._blob = _translated_workbook(workbook.blob, translated)     # both libraries' parts keep it so


def _embedded_workbook(part: Any) -> Any | None:
    """A Word chart part's embedded workbook (its `package` relationship's part), or None."""
    return next((relationship.target_part for relationship in part.rels.values()
                 if not relationship.is_external and relationship.reltype.endswith("/package")), None)


def _translated_workbook(blob: bytes, translated: dict[str, str]) -> bytes:
    """An embedded .xlsx with every string that reads exactly as a key of `translated` replaced by its value:
    shared strings, inline strings, table column names. A workbook lxml cannot read is left as it was."""
    lxml = require("lxml.etree", "documents")
    replaced: dict[str, bytes] = {}
    try:
        with zipfile.ZipFile(io.BytesIO(blob)) as package:
            for name in package.namelist():
                if not (name == "xl/sharedStrings.xml" or regex.match(r"xl/(?:worksheets|tables)/[^/]+\.xml$", name)):
                    continue
                root = lxml.fromstring(read_entry(package, name, "workbook"), safe_xml_parser("documents"))
                changed = False
                for holder in root.iter(SHEET + "si", SHEET + "is"):           # a string: <t>, or rich runs' <t>s
                    texts = [t for t in holder.iter(SHEET + "t") if t.getparent().tag != SHEET + "rPh"]
                    whole = "".join(t.text or "" for t in texts)
                    if texts and whole in translated:
                        for number, t in enumerate(texts):
                            t.text = translated[whole] if number == 0 else ""
                            if t.text != t.text.strip():
                                t.set(XML_SPACE, "preserve")
                        changed = True
                for column in root.iter(SHEET + "tableColumn"):
                    if column.get("name") in translated:
                        column.set("name", translated[column.get("name")])
                        changed = True
                if changed:
                    replaced[name] = lxml.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True)
        return _repacked(blob, replaced, "workbook") if replaced else blob
    except (*DAMAGED, lxml.XMLSyntaxError):
        return blob


class _OdfDocument(FollowsDirection):
    """An OpenDocument read with odfpy, of the kind `extension` names (".odt", ".odp"): `segments` of the
    paragraphs and headings under its `_roots()` (and of the elements in `extra_paragraphs`); spans formatted
    otherwise keep their formatting (`RunLayout`), links (`text:a`) inside a sentence are groups of it that move
    with their words (`_write`), and spans and paragraphs in a code style (`_code_style_names`) are kept
    verbatim. A package of another kind (a spreadsheet named `.odp`) is refused in one line. `render()`
    writes odfpy's `content.xml` and `styles.xml` into the original package, every other entry (`Configurations2/`,
    pictures, the manifest, `meta.xml`) as it was."""
    extension = ".odt"
    extra_paragraphs: frozenset[tuple[str, str]] = ODF_ALT_TEXTS   # (namespace, name): more holders of text
    plain_paragraphs: frozenset[tuple[str, str]] = ODF_ALT_TEXTS   # of those, the ones that take text only

    def __init__(self, data: bytes, name: str = "document", max_xml_bytes: int | None = None,
                 direction: Direction | None = None, max_unpacked_bytes: int | None = None):
        self.direction = direction
        opendocument = require("odf.opendocument", "documents")
        text_ns = require("odf.namespaces", "documents").TEXTNS
        _open_zip(data, name, self.extension, max_xml_bytes, max_unpacked_bytes)
        check_odf_parts(data, name, self.extension)
        try:
            self._document = opendocument.load(io.BytesIO(data))
        except Exception as exc:          # noqa: BLE001 - odfpy raises many kinds for a broken package
            raise ValueError(f"{name}: not a readable {self.extension} file: {_said(exc)}") from None
        media_type = str(self._document.mimetype).strip()       # a template's (`...text-template`) is one too
        if not media_type.startswith(ODF_KINDS_MEDIA[self.extension]):
            raise ValueError(f"{name}: not a {self.extension} file but an OpenDocument of another kind ({media_type})")
        self._data, self._name = data, name
        self._text_ns = text_ns
        self._office_ns = require("odf.namespaces", "documents").OFFICENS
        self._paragraph_names = {(text_ns, "p"), (text_ns, "h"), (text_ns, "index-title-template"),
                                 *self.extra_paragraphs}
        self._chunks: list[tuple[list[Any], Any, RunLayout, list[Any]]] = []   # ... and each holder's link
        self._places: dict[int, int] = {}             # per parent, where `_place` last found a child
        styles = self._code_style_names()
        kind = lambda name: styles.get(name, NAMED if code_style(name) else PROSE)     # noqa: E731
        found = []                                  # (chunk, its container, texts, keys, each holder's code kind)
        for root in self._roots():
            for node in self._walk(root):
                if getattr(node, "qname", None) in self._paragraph_names:
                    own = kind(node.attributes.get((text_ns, "style-name")))
                    for chunk, container in self._split(node, self._index_of(node)):
                        texts = [self._value(item) for item in chunk]
                        names = [self._key(item, container) for item in chunk]
                        links = [self._link(item, container) for item in chunk]
                        if needs_translation("".join(texts)):
                            found.append((chunk, container, texts, names,
                                          [NAMED if link is not None and not self._letters(link)
                                           else max([own, *map(kind, key)]) for key, link in zip(names, links)],
                                          links))
        for (whole, container, all_texts, all_names, _, all_links), all_code in zip(
                found, code_holders([(item[2], item[4]) for item in found])):
            for part in _link_parts(all_texts, all_links, all_code):
                chunk, texts = [whole[i] for i in part], [all_texts[i] for i in part]
                code, links = [all_code[i] for i in part], [all_links[i] for i in part]
                if len(part) < len(whole) or all(link is None for link in links):
                    links = [None] * len(part)                  # a link cut alone, or none: as before
                    at = container if all_links[part[0]] is None else all_links[part[0]]
                else:
                    at = container
                if all(verbatim for verbatim, text in zip(code, texts) if text.strip()):
                    continue
                keys = [all_names[i] if link is None else ("link", id(link)) for i, link in zip(part, links)]
                for window, layout in windowed(texts, keys, code, None, _main_key(texts, keys, links, code), links):
                    self._chunks.append(([chunk[i] for i in window], at, layout, [links[i] for i in window]))
        self.segments = [segment for _, _, layout, _ in self._chunks for segment in layout.alone] + \
            [layout.segment for _, _, layout, _ in self._chunks]

    def _roots(self) -> list[Any]:
        """Where the document's text is: its body (`office:body`)."""
        return [self._document.body]

    def _code_style_names(self) -> dict[str, int]:
        """The styles that are code, by name: `NAMED` where named so (`code_style`: `Source_20_Text`, of its name
        or display name) or based on one, else `IN_CODE_FONT` where in a code font (`code_font`, or a font face of
        fixed pitch: `style:font-pitch`) or based on one."""
        namespaces = require("odf.namespaces", "documents")
        style_ns, fo, svg = namespaces.STYLENS, namespaces.FONS, namespaces.SVGNS
        document = self._document
        fixed, styles = set(), {}                # font faces of code; style name -> (parent, its own kind)
        for node in self._walk(document.fontfacedecls):
            attributes = getattr(node, "attributes", None) or {}
            if getattr(node, "qname", None) == (style_ns, "font-face"):
                name = attributes.get((style_ns, "name"))
                if attributes.get((style_ns, "font-pitch")) == "fixed" or code_font(name) or \
                        code_font(attributes.get((svg, "font-family"))):
                    fixed.add(name)
        for root in (document.styles, document.automaticstyles):
            for node in self._walk(root):
                if getattr(node, "qname", None) != (style_ns, "style"):
                    continue
                attributes = node.attributes
                fonts = [(child.attributes.get((style_ns, "font-name")), child.attributes.get((fo, "font-family")))
                         for child in node.childNodes if getattr(child, "qname", None) == (style_ns, "text-properties")]
                named = code_style(attributes.get((style_ns, "name"))) or \
                    code_style(attributes.get((style_ns, "display-name")))
                font = any(name in fixed or code_font(name) or code_font(family) for name, family in fonts)
                styles[attributes.get((style_ns, "name"))] = (attributes.get((style_ns, "parent-style-name")),
                                                              NAMED if named else IN_CODE_FONT if font else PROSE)
        return _chained(styles)

    @staticmethod
    def _walk(node: Any):
        """`node` and its descendants in document order (a loop, not recursion: nesting may be deep)."""
        stack = [node]
        while stack:
            current = stack.pop()
            yield current
            stack.extend(reversed(current.childNodes))

    def _index_of(self, paragraph: Any) -> str | None:
        """The kind of index (`table-of-content`, `alphabetical-index` ...) whose entry `paragraph` is, or None."""
        body = paragraph.parentNode
        if getattr(body, "qname", None) != (self._text_ns, "index-body"):
            return None
        index = body.parentNode
        return getattr(index, "qname", (None, "index"))[1]

    def _value(self, node: Any) -> str:
        if node.nodeType == node.TEXT_NODE:
            return node.data
        return " " * int(node.getAttribute("c") or 1)

    def _key(self, node: Any, container: Any) -> tuple[str, ...]:
        """A holder's formatting: the style names of the spans between it and its container."""
        names, parent = [], node.parentNode
        while parent is not None and parent is not container:
            names.append(parent.attributes.get((self._text_ns, "style-name"), ""))
            parent = parent.parentNode
        return tuple(reversed(names))

    def _split(self, paragraph: Any, index: str | None = None) -> list[tuple[list[Any], Any]]:
        """The paragraph's text nodes and `text:s` spaces in chunks (each with its container: the paragraph or a
        link): cut at line breaks, tabs and page breaks, around links (`text:a`) that hold more than text and
        spans (`_inline_link`; the others are read with the sentence, their text a group) and around anything else
        (fields, notes, frames: left as they are), not at marks that take no room (`ODF_MARKS`: LibreOffice's soft page
        breaks, bookmarks, comments). An index entry keeps only its text (`_entry`)."""
        chunks: list[list[Any]] = [[]]
        last_tab = None                                     # where the chunks after the last tab start

        def visit(element: Any, container: Any) -> None:
            nonlocal last_tab
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
                elif (namespace == self._text_ns and local in ODF_MARKS) or (
                        namespace == self._office_ns and local in ODF_OFFICE_MARKS):
                    continue                                 # no room in the text: the sentence goes on
                elif namespace == self._text_ns and local == "a" and self._inline_link(child):
                    visit(child, container)                  # its text: a group of the sentence around it
                elif namespace == self._text_ns and local == "a":
                    chunks.append([])
                    visit(child, child)
                    chunks.append([])
                else:                                        # breaks, tabs, fields, notes, frames, bookmarks
                    chunks.append([])
                    if namespace == self._text_ns and local == "tab":
                        last_tab = len(chunks) - 1
        visit(paragraph, paragraph)
        if index is not None and last_tab is not None:
            del chunks[last_tab:]                            # a page number, or what else follows the tab
        found = [([node for node, _ in chunk], chunk[0][1]) for chunk in chunks if chunk]
        return self._entry(found, index) if index is not None else found

    def _inline_link(self, link: Any) -> bool:
        """Whether a link (`text:a`) is read as part of its sentence, its text a formatted group: one with a word
        or a mark (not blank) that holds only text, spaces (`text:s`) and spans (a link holding a break, a tab, a
        field, a note or a frame cuts the paragraph, as before)."""
        for node in self._walk(link):
            if node is not link and node.nodeType != node.TEXT_NODE and \
                    getattr(node, "qname", None) not in {(self._text_ns, "s"), (self._text_ns, "span")}:
                return False
        return bool(self._text_of(link).strip())

    @once_per_node
    def _letters(self, link: Any) -> bool:
        """Whether a link's text has a letter: read once for the link, not once for each of its spans (4,000
        spans: 13 s)."""
        return any(character.isalpha() for character in self._text_of(link))

    def _text_of(self, node: Any) -> str:
        return "".join(self._value(item) for item in self._walk(node)
                       if item.nodeType == item.TEXT_NODE or getattr(item, "qname", None) == (self._text_ns, "s"))

    def _link(self, node: Any, container: Any) -> Any:
        """The link (`text:a`) between a holder and its container, read with the sentence around it, or None."""
        parent = node.parentNode
        while parent is not None and parent is not container:
            if getattr(parent, "qname", None) == (self._text_ns, "a"):
                return parent
            parent = parent.parentNode
        return None

    def _entry(self, chunks: list[tuple[list[Any], Any]], index: str) -> list[tuple[list[Any], Any]]:
        """An index entry's chunks without its number (`1.2 `), nor a tab written as a character and what follows
        it, nor a leader and page number (`..... 3`), nor an alphabetical index's page numbers (`, 3, 7`): each
        cut off its text node into a node of its own, left out of the chunk."""
        for at in range(len(chunks) - 1, -1, -1):           # a tab character: everything after the last goes
            nodes = chunks[at][0]
            tabbed = [position for position, node in enumerate(nodes)
                      if node.nodeType == node.TEXT_NODE and "\t" in node.data]
            if tabbed:
                node = nodes[tabbed[-1]]
                self._cut(node, node.data.rindex("\t"))
                del nodes[tabbed[-1] + 1:]
                del chunks[at + 1:]
                break
        tail = ALPHABETICAL_PAGES if index == "alphabetical-index" else LEADER_PAGE
        if chunks:                                          # the last text node's leader and page number go
            nodes = chunks[-1][0]
            last = max((position for position, node in enumerate(nodes) if node.nodeType == node.TEXT_NODE),
                       default=None)
            if last is not None and (match := tail.search(nodes[last].data)):
                self._cut(nodes[last], match.start())
                del nodes[last + 1:]
        if chunks and index != "alphabetical-index":       # and the first one's number
            nodes = chunks[0][0]
            if nodes and nodes[0].nodeType == nodes[0].TEXT_NODE and (match := NUMBERED.match(nodes[0].data)):
                rest = self._cut(nodes[0], match.end())
                if rest is None:
                    nodes.pop(0)
                else:
                    nodes[0] = rest
        return [(nodes, container) for nodes, container in chunks if nodes]

    def _place(self, parent: Any, node: Any) -> int:
        """Where `node` is among `parent`'s children (`runs.child_index`)."""
        return child_index(parent.childNodes, node, self._places, id(parent))

    def _cut(self, node: Any, at: int) -> Any:
        """`node`'s text from `at` on moved into a new text node after it; that node (None if nothing moved)."""
        element = require("odf.element", "documents")
        rest = node.data[at:]
        if not rest:
            return None
        node.data = node.data[:at]
        after = element.Text(rest)
        self._insert_after(node, [after])
        return after

    @staticmethod
    def _copy(element_: Any) -> Any:
        """An empty element like `element_` (a span): its name and attributes."""
        made = require("odf.element", "documents").Element(qname=element_.qname, check_grammar=False)
        made.attributes = dict(element_.attributes)
        return made

    def _insert_before(self, home: Any, nodes: list[Any], place: Any) -> None:
        """New `nodes` into `home` before its child `place` (at its end for None), at once: odfpy's `insertBefore`
        looks `place` up among the children for each node, which costs the square of a long paragraph's pieces."""
        if not nodes:
            return
        children = home.childNodes
        at = len(children) if place is None else self._place(home, place)
        children[at:at] = nodes
        for node in nodes:
            node.parentNode = home
        for before, after in zip([children[at - 1] if at else None, *nodes], [*nodes, place]):
            if before is not None:
                before.nextSibling = after
            if after is not None:
                after.previousSibling = before

    @staticmethod
    def _detach(*nodes: Any) -> None:
        """`nodes` out of their parents, each parent's children listed anew once (odfpy's `removeChild` takes
        elements it indexed only; one node at a time would cost the square of a long paragraph's nodes)."""
        gone = {id(node) for node in nodes}
        parents = {id(node.parentNode): node.parentNode for node in nodes if node.parentNode is not None}
        for parent in parents.values():
            kept = [child for child in parent.childNodes if id(child) not in gone]
            parent.childNodes = kept
            for before, after in zip([None, *kept], [*kept, None]):
                if before is not None:
                    before.nextSibling = after
                if after is not None:
                    after.previousSibling = before
        for node in nodes:
            node.parentNode = node.previousSibling = node.nextSibling = None

    def _start_at(self, node: Any, home: Any) -> tuple[Any, list[Any]]:
        """Every span between `node` and `home` cut before `node`, so that `node` starts each (what came before
        stays in the span, `node` and what follows move to a copy after it): `home`'s child that now holds
        `node`, and the spans cut, outermost first (each now ends right before it)."""
        cut = []
        while node.parentNode is not home:
            parent = node.parentNode
            siblings = parent.childNodes
            at = self._place(parent, node)
            if at:
                cut.insert(0, parent)
                moved, parent.childNodes = siblings[at:], siblings[:at]
                siblings[at - 1].nextSibling = moved[0].previousSibling = None
                copy_ = self._copy(parent)
                copy_.childNodes = moved
                for child in moved:
                    child.parentNode = copy_
                self._insert_after(parent, [copy_])
                parent = copy_
            node = parent
        return node, cut

    @staticmethod
    def _spans(node: Any, container: Any) -> list[Any]:
        """The spans between `container` and `node`, outermost first."""
        found, parent = [], node.parentNode
        while parent is not container:
            found.append(parent)
            parent = parent.parentNode
        return found[::-1]

    def _write(self, chunk: list[Any], container: Any, layout: RunLayout, links: list[Any]) -> None:
        """The chunk's translation in: all in its main text node where it has one formatting; else each piece
        in the spans of the holder whose formatting it has (copies; spans the pieces share, shared), before the
        chunk's first node, inside the spans all the pieces and that node share; then the chunk's nodes, and the
        spans they leave empty, go. A link (`links`: each holder's, read with the sentence) is such a span, never
        shared with another link of the same target: each comes back once, holding its group's piece (spaces at
        its edges outside it), or the chunk is left as it was where a link's group has no piece."""
        segment = layout.segment
        if segment.translation is None or segment.translation == segment.text:     # not translated: as it was
            return
        pieces, main = layout.placed(), chunk[layout.main]
        linked = {number for number, group in enumerate(layout.groups) if links[group.items[0]] is not None}
        if linked - {owner for _, owner in pieces}:
            return                                 # not met by construction: the source, not a lost link
        if linked:
            pieces = spaces_outside(pieces, linked)
        if all(owner is None for _, owner in pieces):                # one formatting: the main span's
            for node in chunk:
                if node.nodeType == node.TEXT_NODE:
                    node.data = ""
                    if node is main:
                        self._insert_after(node, self._spaced(segment.translation, container))
                else:
                    self._leaving.append(node)
            return
        likes = [main if owner is None else next(chunk[i] for i in layout.groups[owner].items
                                                 if chunk[i].nodeType == chunk[i].TEXT_NODE) for _, owner in pieces]
        chains, anchor = [self._spans(like, container) for like in likes], self._spans(chunk[0], container)
        same = lambda a, b: a is b or (a.qname != (self._text_ns, "a")                      # noqa: E731
                                       and (a.qname, a.attributes) == (b.qname, b.attributes))   # a link: itself
        shared = 0
        while shared < len(anchor) and all(len(chain) > shared and same(chain[shared], anchor[shared])
                                           for chain in chains):
            shared += 1
        home = anchor[shared - 1] if shared else container
        ending = self._spans(chunk[-1], container)       # the last piece may end the chunk's last span (that
        if len(ending) == len(chains[-1]) and ending and all(same(a, b) for a, b in zip(ending, chains[-1])) \
                and all(a is b for a, b in zip(ending[:shared], anchor)):        # goes on after it: a tab, a mark)
            *pieces, (last, _) = pieces
            after = chunk[-1]
        else:
            last = after = None
        place, cut = self._start_at(chunk[0], home)
        opened = [(span, span) for span in cut]         # (a span, where pieces in its style go): a cut one goes on
        placed: list[Any] = []                           # what goes into `home` before `place`, in order
        for (text, _), chain in zip(pieces, chains):
            chain = chain[shared:]
            keep = 0
            while keep < min(len(opened), len(chain)) and same(opened[keep][0], chain[keep]):
                keep += 1
            del opened[keep:]
            for item in chain[keep:] + [None]:
                for made in self._spaced(text, container) if item is None else [self._copy(item)]:
                    if opened:
                        opened[-1][1].appendChild(made)
                    else:
                        placed.append(made)
                if item is not None:
                    opened.append((item, made))
        self._insert_before(home, placed, place)
        if after is not None:
            self._insert_after(after, self._spaced(last, container))
        for node in chunk:
            parent = node.parentNode
            while parent is not None and parent is not container:
                self._emptied[id(parent)] = parent
                parent = parent.parentNode
        self._leaving.extend(chunk)

    def _clear(self) -> None:
        """The nodes the translations replaced out of the document, all at once (one pass over each parent), then
        the spans they left empty, inner first."""
        self._detach(*self._leaving)
        by_depth: dict[int, list[Any]] = {}
        for span in self._emptied.values():
            by_depth.setdefault(self._depth(span), []).append(span)
        for depth in sorted(by_depth, reverse=True):
            self._detach(*[span for span in by_depth[depth] if span.parentNode is not None and not span.childNodes])
        self._leaving, self._emptied = [], {}

    def _spaced(self, text: str, container: Any) -> list[Any]:
        """`text` as odfpy nodes: text, with each run of spaces as one space and a `text:s` for the rest (ODF shows
        consecutive spaces written as such as one, as HTML does); in a `container` that takes text only
        (`plain_paragraphs`), one text node."""
        element, odf_text = require("odf.element", "documents"), require("odf.text", "documents")
        if getattr(container, "qname", None) in self.plain_paragraphs:
            return [element.Text(text)]
        nodes = []
        for at, part in enumerate(regex.split(r"( {2,})", text)):
            if at % 2:
                nodes += [element.Text(" "), odf_text.S(c=str(len(part) - 1))]
            elif part:
                nodes.append(element.Text(part))
        return nodes

    def _insert_after(self, node: Any, nodes: list[Any]) -> None:
        """`nodes` into `node`'s parent right after it, in order."""
        parent = node.parentNode
        self._insert_before(parent, nodes, node.nextSibling)

    @staticmethod
    def _depth(node: Any) -> int:
        depth = 0
        while node.parentNode is not None:
            node, depth = node.parentNode, depth + 1
        return depth

    def render(self) -> bytes:
        self._leaving: list[Any] = []                # nodes replaced, and spans that may be left empty (`_clear`)
        self._emptied: dict[int, Any] = {}
        for chunk, container, layout, links in self._chunks:
            self._write(chunk, container, layout, links)
        self._clear()
        direction = self.output_direction
        relabel_odf(self._document, direction)
        return _repacked(self._data, {"content.xml": self._document.contentxml(),
                                      "styles.xml": self._document.stylesxml().encode("utf-8"),
                                      **relabelled_meta(self._data, direction, self._name)}, self._name)



PRESENTATION_NS = "urn:oasis:names:tc:opendocument:xmlns:presentation:1.0"


class OdtDocument(_OdfDocument):
    """An OpenDocument text: its paragraphs and headings (body, tables, frames, headers and footers, index
    titles). An index entry (a table of contents' line) gives only its text: its number, and the tab and what
    follows it (a page number), or a leader and page number, stay as they are."""
    extension = ".odt"

    def _roots(self) -> list[Any]:
        """The body, and the master pages (`styles.xml`), whose headers and footers are printed on every page."""
        return [self._document.body, self._document.masterstyles]


class OdpDocument(_OdfDocument):
    """An OpenDocument presentation (LibreOffice Impress): the paragraphs of its slides (`draw:page`) in text
    boxes (titles, outlines, lists), shapes (`draw:custom-shape`, `draw:rect` ...), tables and speaker notes
    (`presentation:notes`), and the footers and headers the slides show (`presentation:footer-decl`, text only).
    A slide's name (`draw:name`: LibreOffice's default `page1`, or one given) is kept: links (`#name`), custom
    shows and the start page refer to a slide by it, as PowerPoint's are kept in `.pptx`. On the master pages
    (`styles.xml`), the text boxes and shapes every slide shows (a "Confidential" line, a tagline) are translated;
    their placeholders (`presentation:class`: "Click to add Title") are left as they are, as they are never shown."""
    extension = ".odp"
    extra_paragraphs = plain_paragraphs = ODF_ALT_TEXTS | {(PRESENTATION_NS, "footer-decl"),
                                                           (PRESENTATION_NS, "header-decl")}

    def _roots(self) -> list[Any]:
        """The body, and each master page's shapes that are no placeholder (nor its notes' master)."""
        shown = [shape for master in self._document.masterstyles.childNodes if master.nodeType == master.ELEMENT_NODE
                 for shape in master.childNodes if shape.nodeType == shape.ELEMENT_NODE
                 and shape.qname[0] != PRESENTATION_NS and (PRESENTATION_NS, "class") not in shape.attributes]
        return [self._document.body, *shown]


# -- the document's own language tags follow the run ---------------------------------------------------------------
OOXML_LANG = {W + "lang": (W + "val",), W + "themeFontLang": (W + "val",),     # Word: proofing, theme fonts
              C + "lang": (C + "val",)}                                          # a chart's language
DRAWING_LANG = ("lang", "altLang")                     # DrawingML runs (a:rPr, a:endParaRPr, a:defRPr): slides, charts
DC_LANGUAGE = "{http://purl.org/dc/elements/1.1/}language"      # docProps/core.xml, meta.xml
FO_NS = "urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0"
STYLE_NS = "urn:oasis:names:tc:opendocument:xmlns:style:1.0"


def _names_language(tag: str | None, language: str) -> bool:
    """Whether a language tag (`en`, `en-US`, `en_GB`) is of `language`."""
    return bool(tag) and regex.fullmatch(rf"\s*{language}(?:[-_][\w-]*)?\s*", tag, regex.I) is not None


def _relabel_xml(root: Any, direction: Direction) -> bool:
    """In an lxml tree: the OOXML language tags and `dc:language` naming `direction`'s source name its target's
    locale (`it-IT`); whether any did."""
    locale = f"{direction.target}-{REGIONS[direction.target]}"
    changed = False
    for element in root.iter():
        if not isinstance(element.tag, str):
            continue
        for name in OOXML_LANG.get(element.tag, DRAWING_LANG if element.tag.startswith(A) else ()):
            if _names_language(element.get(name), direction.source):
                element.set(name, locale)
                changed = True
        if element.tag == DC_LANGUAGE and _names_language(element.text, direction.source):
            element.text, changed = locale, True
    return changed


def relabel_ooxml(package: Any, direction: Direction) -> None:
    """A python-docx or python-pptx package's language tags that name the run's source language name its target
    (`en-US` -> `it-IT` on an English -> Italian run): Word's proofing and theme-font languages (`w:lang`,
    `w:themeFontLang`), DrawingML's run languages (`lang`, `altLang`: slides, notes, masters, layouts, charts), a
    chart's `c:lang` and the package's `dc:language`, so that the translation is spell-checked, hyphenated and
    read aloud in its own language. In the trees the library holds (nothing parsed twice); a part it keeps as
    bytes (`stylesWithEffects.xml`) is parsed alone, and written back, with its own declaration, only if a tag
    changed. Tags naming any other language are left as written."""
    for part in package.iter_parts():
        element = getattr(part, "_element", None)
        if element is not None:
            _relabel_xml(element, direction)
            continue
        blob = getattr(part, "_blob", None)
        if blob and str(part.content_type).endswith("xml"):
            part._blob = _relabelled_part(blob, direction) or blob


def relabel_odf(document: Any, direction: Direction) -> None:
    """An odfpy document's `fo:language`/`fo:country` and `style:rfc-language-tag` (styles, automatic styles,
    default styles) naming the run's source language name its target (`it`/`IT`), in odfpy's own tree."""
    language, country = direction.target, REGIONS[direction.target]
    stack = [document.topnode]
    while stack:
        node = stack.pop()
        attributes = getattr(node, "attributes", None)
        if attributes:
            if _names_language(attributes.get((FO_NS, "language")), direction.source):
                attributes[(FO_NS, "language")], attributes[(FO_NS, "country")] = language, country
            if _names_language(attributes.get((STYLE_NS, "rfc-language-tag")), direction.source):
                attributes[(STYLE_NS, "rfc-language-tag")] = f"{language}-{country}"
        stack.extend(getattr(node, "childNodes", ()))


def relabelled_meta(data: bytes, direction: Direction, name: str = "document") -> dict[str, bytes]:
    """`{"meta.xml": its bytes}` with a `dc:language` naming the run's source naming its target, else `{}` (an
    OpenDocument's metadata, which odfpy would otherwise rewrite whole)."""
    with zipfile.ZipFile(io.BytesIO(data)) as package:
        if "meta.xml" not in package.namelist():
            return {}
        meta = _relabelled_part(read_entry(package, "meta.xml", name), direction)
    return {"meta.xml": meta} if meta is not None else {}


def _relabelled_part(raw: bytes, direction: Direction) -> bytes | None:
    """An XML part kept as bytes, parsed alone and written back with its own declaration, where a language tag in
    it changed (`_relabel_xml`); else None (it names no language, no tag changed, or it does not parse: a part
    the libraries left alone is left alone here too)."""
    from lxml import etree

    if b"lang" not in raw and b"Lang" not in raw:
        return None
    try:
        root = etree.fromstring(raw, safe_xml_parser("documents"))
    except etree.XMLSyntaxError:
        return None
    if not _relabel_xml(root, direction):
        return None
    info = root.getroottree().docinfo
    return etree.tostring(root.getroottree(), xml_declaration=True, encoding=info.encoding or "UTF-8",
                          standalone=info.standalone)


def _repacked(data: bytes, replaced: dict[str, bytes], name: str = "document") -> bytes:
    """The zip package `data` again, entry by entry in its order, with the entries named in `replaced` given new
    contents (added at the end where it lacked them); every other entry (folders too) as it was. A damaged entry
    is a one-line ValueError naming `name` and the entry (`read_entry`)."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(out, "w") as target:
        names = set()
        for item in source.infolist():
            names.add(item.filename)
            info = zipfile.ZipInfo(item.filename, item.date_time)
            info.compress_type, info.external_attr, info.comment = item.compress_type, item.external_attr, item.comment
            info.create_system = item.create_system
            content = replaced[item.filename] if item.filename in replaced else read_entry(source, item, name)
            target.writestr(info, content)
        for name, content in replaced.items():
            if name not in names:
                target.writestr(zipfile.ZipInfo(name, (1980, 1, 1, 0, 0, 0)), content, zipfile.ZIP_DEFLATED)
    return out.getvalue()
