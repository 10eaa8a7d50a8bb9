"""OpenDocument presentations (`.odp`, LibreOffice Impress): a deck built with odfpy, translated through the one
door, its slides' text boxes, shapes, tables, speaker notes and footers translated, its slide names, master pages
and structure kept, its language tags relabelled, and a damaged or renamed file refused in one line."""
from __future__ import annotations

import io
import zipfile
from typing import Any

import pytest

pytest.importorskip("odf")
from lxml import etree  # noqa: E402
from odf.draw import CustomShape, Frame, Page, Rect, TextBox  # noqa: E402
from odf.namespaces import DRAWNS, PRESENTATIONNS, TABLENS, TEXTNS  # noqa: E402
from odf.opendocument import OpenDocumentPresentation, OpenDocumentSpreadsheet, OpenDocumentText, load  # noqa: E402
from odf.presentation import FooterDecl, Notes  # noqa: E402
from odf.style import DefaultStyle, MasterPage, PageLayout, Style, TextProperties  # noqa: E402
from odf.table import Table, TableCell, TableColumn, TableRow  # noqa: E402
from odf.text import List, ListItem, P, Span  # noqa: E402

from pipeline.documents import detect_format, translate_document  # noqa: E402
from pipeline.documents.office import package_kind  # noqa: E402
from stand_ins import recording, rezipped, saved, suffixed  # noqa: E402

NS = {"text": TEXTNS, "draw": DRAWNS, "presentation": PRESENTATIONNS, "table": TABLENS,
      "style": "urn:oasis:names:tc:opendocument:xmlns:style:1.0",
      "fo": "urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0"}


def frame(presentation_class: str | None = None, **size: str) -> Frame:
    made = Frame(width="20cm", height="3cm", x="1cm", y="1cm", **size)
    if presentation_class:
        made.setAttrNS(PRESENTATIONNS, "class", presentation_class)
    return made


def deck() -> bytes:
    """Two slides: "page1" (LibreOffice's default name: a title with a bold word and a code span, an outline of
    bullets, a custom shape, a rectangle, speaker notes) and "Results" (a table); an English default style, a
    footer, and a master page whose title placeholder is never shown and whose text box every slide shows."""
    document = OpenDocumentPresentation()
    layout = PageLayout(name="PM1")
    document.automaticstyles.addElement(layout)
    english = DefaultStyle(family="paragraph")
    english.addElement(TextProperties(language="en", country="US"))
    document.styles.addElement(english)
    bold = Style(name="T1", family="text")
    bold.addElement(TextProperties(fontweight="bold"))
    document.automaticstyles.addElement(bold)
    code = Style(name="Source_20_Text", displayname="Source Text", family="text")
    code.addElement(TextProperties(fontname="Liberation Mono"))
    document.styles.addElement(code)
    master = MasterPage(name="Default", pagelayoutname=layout)
    placeholder = frame("title")
    placeholder.setAttrNS(PRESENTATIONNS, "placeholder", "true")
    box = TextBox()
    box.addElement(P(text="Click to add Title"))
    placeholder.addElement(box)
    master.addElement(placeholder)
    shown, box = frame(), TextBox()                      # a text box every slide shows
    box.addElement(P(text="Company confidential"))
    shown.addElement(box)
    master.addElement(shown)
    document.masterstyles.addElement(master)
    footer = FooterDecl(name="ftr1")
    footer.addText("Company meeting")
    document.presentation.addElement(footer)

    first = Page(name="page1", masterpagename=master)
    title, box = frame("title"), TextBox()
    paragraph = P(text="Welcome to the ")
    paragraph.addElement(Span(stylename=bold, text="annual"))
    paragraph.addText(" meeting")
    box.addElement(paragraph)
    command = P(text="Type ")
    command.addElement(Span(stylename=code, text="make install"))
    command.addText(" now")
    box.addElement(command)
    title.addElement(box)
    first.addElement(title)
    outline, box, bullets = frame("outline"), TextBox(), List()
    for point in ("First point", "Second point"):
        item = ListItem()
        item.addElement(P(text=point))
        bullets.addElement(item)
    box.addElement(bullets)
    outline.addElement(box)
    first.addElement(outline)
    shape = CustomShape(width="5cm", height="2cm", x="2cm", y="5cm")
    shape.addElement(P(text="Shape words here"))
    first.addElement(shape)
    rect = Rect(width="5cm", height="2cm", x="2cm", y="8cm")
    rect.addElement(P(text="Rectangle label"))
    first.addElement(rect)
    notes, notes_frame, notes_box = Notes(), frame("notes"), TextBox()
    notes_box.addElement(P(text="Remember to thank everyone"))
    notes_frame.addElement(notes_box)
    notes.addElement(notes_frame)
    first.addElement(notes)
    document.presentation.addElement(first)

    second = Page(name="Results", masterpagename=master)
    holder, table, row, cell = frame(), Table(name="Sales"), TableRow(), TableCell()
    table.addElement(TableColumn())
    cell.addElement(P(text="Quarterly sales"))
    row.addElement(cell)
    table.addElement(row)
    holder.addElement(table)
    second.addElement(holder)
    document.presentation.addElement(second)
    return saved(document)


def part(package: bytes, name: str) -> Any:
    with zipfile.ZipFile(io.BytesIO(package)) as opened:
        return etree.fromstring(opened.read(name))


def texts(root: Any, path: str) -> list[str]:
    return ["".join(found.itertext()) for found in root.xpath(path, namespaces=NS)]


def test_a_presentation_package_is_recognised_by_its_mimetype():
    data = deck()
    assert package_kind(data) == "odp"
    assert detect_format(data) == "odp"                 # by content, with no name to tell
    assert detect_format(data, "deck.odp") == "odp"


def test_slides_shapes_tables_notes_and_footers_are_translated():
    translate, seen = recording(suffixed)
    out = translate_document(None, deck(), name="deck.odp", translate=translate)
    content = part(out, "content.xml")
    page1, results = "//draw:page[@draw:name='page1']", "//draw:page[@draw:name='Results']"
    assert texts(content, f"{page1}/draw:frame/draw:text-box/text:p")[0] == "Welcome-it to the-it annual-it meeting-it"
    assert texts(content, f"{page1}//text:list-item/text:p") == ["First-it point-it", "Second-it point-it"]
    assert texts(content, f"{page1}/draw:custom-shape/text:p") == ["Shape-it words-it here-it"]
    assert texts(content, f"{page1}/draw:rect/text:p") == ["Rectangle-it label-it"]
    assert texts(content, f"{page1}/presentation:notes//text:p") == ["Remember-it to thank-it everyone-it"]
    assert texts(content, f"{results}/draw:frame/table:table//table:table-cell/text:p") == ["Quarterly-it sales-it"]
    assert texts(content, "//presentation:footer-decl") == ["Company-it meeting-it"]
    assert "Click to add Title" not in seen                      # the master's placeholder is never shown


def test_formatting_and_code_spans_are_kept():
    out = translate_document(None, deck(), name="deck.odp", translate=suffixed)
    content = part(out, "content.xml")
    assert texts(content, "//text:span[@text:style-name='T1']") == ["annual"]     # the bold word where it stands
    assert texts(content, "//text:span[@text:style-name='Source_20_Text']") == ["make install"]


def test_slide_names_and_master_placeholders_are_kept_and_master_text_boxes_translated():
    source = deck()
    out = translate_document(None, source, name="deck.odp", translate=suffixed)
    content = part(out, "content.xml")
    assert content.xpath("//draw:page/@draw:name", namespaces=NS) == ["page1", "Results"]
    styles = part(out, "styles.xml")
    assert texts(styles, "//style:master-page//text:p") == ["Click to add Title", "Company-it confidential-it"]
    assert styles.xpath("//style:master-page/@style:name", namespaces=NS) == ["Default"]


def test_the_translation_reopens_with_the_same_pages_frames_and_paragraphs():
    source = deck()
    out = translate_document(None, source, name="deck.odp", translate=suffixed)

    def counts(package: bytes) -> tuple[int, ...]:
        document = load(io.BytesIO(package))
        body = document.presentation
        return tuple(len(body.getElementsByType(kind)) for kind in (Page, Frame, P, CustomShape, Rect, TableCell))
    assert counts(out) == counts(source) == (2, 4, 8, 1, 1, 1)
    with zipfile.ZipFile(io.BytesIO(out)) as package:
        assert package.read("mimetype") == b"application/vnd.oasis.opendocument.presentation"
        assert package.namelist()[0] == "mimetype"


def test_language_tags_name_the_target():
    out = translate_document(None, deck(), name="deck.odp", translate=suffixed)
    properties = part(out, "styles.xml").xpath("//style:default-style/style:text-properties", namespaces=NS)[0]
    assert (properties.get(f"{{{NS['fo']}}}language"), properties.get(f"{{{NS['fo']}}}country")) == ("it", "IT")


def test_runs_of_spaces_are_kept_in_slides_and_written_plain_in_footers():
    doubled = lambda batch: [text.replace(" ", "  ") for text in batch]   # noqa: E731
    out = translate_document(None, deck(), name="deck.odp", translate=doubled)
    content = part(out, "content.xml")
    shape = content.xpath("//draw:custom-shape/text:p", namespaces=NS)[0]
    assert shape.xpath("text:s", namespaces=NS)                   # shown as two spaces, not one
    footer = content.xpath("//presentation:footer-decl", namespaces=NS)[0]
    assert len(footer) == 0 and footer.text == "Company  meeting"    # a footer declaration takes text only
    assert load(io.BytesIO(out)).presentation is not None


def text_document() -> bytes:
    document = OpenDocumentText()
    document.text.addElement(P(text="Hello world"))
    return saved(document)


def spreadsheet() -> bytes:
    document = OpenDocumentSpreadsheet()
    table, row, cell = Table(name="Sheet1"), TableRow(), TableCell()
    cell.addElement(P(text="Hello world"))
    row.addElement(cell)
    table.addElement(row)
    document.spreadsheet.addElement(table)
    return saved(document)


SHEET = "application/vnd.oasis.opendocument.spreadsheet"


@pytest.mark.parametrize("name, data, message", [
    ("book.odp", spreadsheet, f"book.odp: not a .odp file but an OpenDocument of another kind ({SHEET})"),
    ("book.odt", spreadsheet, f"book.odt: not a .odt file but an OpenDocument of another kind ({SHEET})"),
    ("deck.odt", deck, "deck.odt: not a .odt file but a .odp one: rename it"),
    ("letter.odp", text_document, "letter.odp: not a .odp file but a .odt one: rename it"),
    ("deck.odp", lambda: b"not a zip at all", "deck.odp: not a .odp file (not a zip package)"),
])
def test_a_renamed_or_foreign_file_is_one_line(name, data, message):
    with pytest.raises(ValueError) as error:
        translate_document(None, data(), name=name, translate=suffixed)
    assert str(error.value) == message


def test_a_damaged_part_is_one_line_naming_odp():
    broken = rezipped(deck(), lambda entry, data: data.replace(b"</office:body>", b"") if entry == "content.xml"
                      else data)
    with pytest.raises(ValueError) as error:
        translate_document(None, broken, name="deck.odp", translate=suffixed)
    message = str(error.value)
    assert message.startswith("deck.odp: not a readable .odp file: content.xml line ") and "\n" not in message
