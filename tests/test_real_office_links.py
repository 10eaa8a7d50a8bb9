"""Hyperlinks inside a sentence in Word (`w:hyperlink`, by `r:id` or `w:anchor`) and OpenDocument (`text:a`) files:
the sentence is one text for the model, the link's text a formatted group, and the link element itself moves, with
its words' translation, to where they land; every link comes back exactly once with its target, even where the
model drops its words. Small dictionaries of translations stand in for a model."""
import io
import re
import zipfile

from pipeline.documents import translate_document
from stand_ins import docx_with, recording, saved

R = 'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"'
XLINK = "http://www.w3.org/1999/xlink"
LINK_STYLE = '<w:rPr><w:rStyle w:val="Hyperlink"/></w:rPr>'
REORDERED = {"Read the documentation for more details.": "Per maggiori dettagli leggete la documentazione.",
             "documentation": "documentazione"}


def dictionary(table: dict[str, str]):
    """A model that knows only `table` (every other text comes back as it was)."""
    return recording(lambda texts: [table.get(text, text) for text in texts])


def run(text: str, properties: str = "") -> str:
    return f'<w:r>{properties}<w:t xml:space="preserve">{text}</w:t></w:r>'


def link(target: str, text: str) -> str:
    attribute = f'w:anchor="{target[1:]}"' if target.startswith("#") else f'r:id="{target}"'
    return f'<w:hyperlink {R} {attribute}>{run(text, LINK_STYLE)}</w:hyperlink>'


def body_of(package: bytes) -> str:
    xml = zipfile.ZipFile(io.BytesIO(package)).read("word/document.xml").decode("utf-8")
    return xml[xml.index("<w:body>"):xml.index("<w:sectPr")]


def links_in(xml: str) -> list[tuple[str, str]]:
    """Each hyperlink's target (its r:id or anchor) and text, in order."""
    found = re.findall(r'<w:hyperlink [^>]*(?:r:id|w:anchor)="([^"]+)"[^>]*>(.*?)</w:hyperlink>', xml)
    return [(target, "".join(re.findall(r"<w:t[^>]*>([^<]*)</w:t>", inner))) for target, inner in found]


def test_a_word_hyperlink_is_part_of_its_sentence_and_moves_with_its_words():
    import docx

    source = docx_with(f'<w:p>{run("Read the ")}{link("rId99", "documentation")}{run(" for more details.")}</w:p>')
    model, seen = dictionary(REORDERED)
    out = translate_document(None, source, name="guide.docx", translate=model)
    assert seen == ["documentation", "Read the documentation for more details."]     # was three texts
    xml = body_of(out)
    assert links_in(xml) == [("rId99", "documentazione")]
    assert re.search(r'leggete la </w:t></w:r><w:hyperlink [^>]*r:id="rId99"[^>]*><w:r><w:rPr><w:rStyle '
                     r'w:val="Hyperlink"/></w:rPr><w:t[^>]*>documentazione</w:t></w:r></w:hyperlink><w:r><w:t[^>]*>'
                     r'\.</w:t></w:r></w:p>', xml)
    assert docx.Document(io.BytesIO(out)).paragraphs[0].text == "Per maggiori dettagli leggete la documentazione."


def test_a_word_hyperlink_whose_words_the_model_drops_still_comes_back_once_with_its_text():
    import docx

    source = docx_with(f'<w:p>{run("Read the ")}{link("rId99", "documentation")}{run(" for more details.")}</w:p>')
    model, seen = dictionary({"Read the documentation for more details.": "Per maggiori dettagli leggete.",
                              "documentation": "documentazione", "Read the": "Leggete la",
                              "for more details.": "per maggiori dettagli."})
    out = translate_document(None, source, name="guide.docx", translate=model)
    assert seen[:2] == ["documentation", "Read the documentation for more details."]
    assert links_in(body_of(out)) == [("rId99", "documentazione")]          # piece by piece: the link in its place
    assert docx.Document(io.BytesIO(out)).paragraphs[0].text == "Leggete la documentazione per maggiori dettagli."


def test_two_word_hyperlinks_in_one_sentence_each_come_back_once_in_their_places():
    import docx

    source = docx_with(f'<w:p>{run("See the ")}{link("rId7", "manual")}{run(" and the ")}'
                       f'{link("#faq", "questions")}{run(" first.")}</w:p>')
    model, seen = dictionary({"See the manual and the questions first.": "Prima vedete le domande e il manuale.",
                              "manual": "manuale", "questions": "domande"})
    out = translate_document(None, source, name="guide.docx", translate=model)
    assert seen[-1] == "See the manual and the questions first."
    assert links_in(body_of(out)) == [("faq", "domande"), ("rId7", "manuale")]
    assert docx.Document(io.BytesIO(out)).paragraphs[0].text == "Prima vedete le domande e il manuale."


def test_a_link_holding_a_break_still_cuts_the_sentence_and_a_hyperlink_field_is_read_within_it():
    field = (f'<w:fldSimple w:instr="HYPERLINK &quot;https://example.com&quot;">{run("the site")}</w:fldSimple>')
    broken = f'<w:hyperlink {R} r:id="rId5">{run("first")}<w:r><w:br/></w:r>{run("second")}</w:hyperlink>'
    source = docx_with(f'<w:p>{run("Open ")}{field}{run(" now.")}</w:p><w:p>{run("Go ")}{broken}{run(" on.")}</w:p>')
    model, seen = dictionary({})
    translate_document(None, source, name="fields.docx", translate=model)
    assert seen == ["the site", "Open the site now.", "Go", "first", "second", "on."]   # the field: was not read


def odt_paragraph(*parts) -> bytes:
    """An .odt with one paragraph of `parts`: a text, or (href, text) for a link."""
    from odf.opendocument import OpenDocumentText
    from odf.text import A, P

    document = OpenDocumentText()
    paragraph = P()
    for part in parts:
        if isinstance(part, tuple):
            paragraph.addElement(A(href=part[0], type="simple", text=part[1]))
        else:
            paragraph.addText(part)
    document.text.addElement(paragraph)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def odt_links(package: bytes) -> tuple[str, list[tuple[str, str]]]:
    """The first paragraph's text and its links' (href, text), read back with odfpy."""
    from odf import teletype
    from odf.opendocument import load
    from odf.text import A, P

    paragraph = load(io.BytesIO(package)).getElementsByType(P)[0]
    return teletype.extractText(paragraph), [(a.getAttrNS(XLINK, "href"), teletype.extractText(a))
                                             for a in paragraph.getElementsByType(A)]


def test_an_odt_link_is_part_of_its_sentence_and_moves_with_its_words():
    source = odt_paragraph("Read the ", ("https://example.com/docs", "documentation"), " for more details.")
    model, seen = dictionary(REORDERED)
    out = translate_document(None, source, name="guide.odt", translate=model)
    assert seen == ["documentation", "Read the documentation for more details."]
    assert odt_links(out) == ("Per maggiori dettagli leggete la documentazione.",
                              [("https://example.com/docs", "documentazione")])
    content = zipfile.ZipFile(io.BytesIO(out)).read("content.xml").decode("utf-8")
    assert re.search(r'leggete la <text:a [^>]*>documentazione</text:a>\.</text:p>', content)


def test_an_odt_link_whose_words_the_model_drops_and_two_links_each_come_back_once():
    source = odt_paragraph("Read the ", ("https://example.com/docs", "documentation"), " for more details.")
    model, _ = dictionary({"Read the documentation for more details.": "Per maggiori dettagli leggete.",
                           "documentation": "documentazione", "Read the": "Leggete la",
                           "for more details.": "per maggiori dettagli."})
    out = translate_document(None, source, name="guide.odt", translate=model)
    assert odt_links(out) == ("Leggete la documentazione per maggiori dettagli.",
                              [("https://example.com/docs", "documentazione")])
    two = odt_paragraph("See the ", ("https://a.example/manual", "manual"), " and the ",
                        ("#faq", "questions"), " first.")
    model, seen = dictionary({"See the manual and the questions first.": "Prima vedete le domande e il manuale.",
                              "manual": "manuale", "questions": "domande"})
    out = translate_document(None, two, name="two.odt", translate=model)
    assert seen[-1] == "See the manual and the questions first."
    assert odt_links(out) == ("Prima vedete le domande e il manuale.",
                              [("#faq", "domande"), ("https://a.example/manual", "manuale")])


def test_a_word_hyperlink_of_a_mark_alone_comes_back_as_written_exactly_once():
    source = docx_with(f'<w:p>{run("Go to the next page ")}{link("rId3", "→")}{run(" now.")}</w:p>')
    model, seen = dictionary({"Go to the next page → now.": "Andate ora alla pagina seguente.",
                              "Go to the next page": "Andate alla pagina seguente", "now.": "ora."})
    out = translate_document(None, source, name="next.docx", translate=model)
    assert seen[0] == "Go to the next page → now."       # the whole sentence; the arrow is nowhere in its translation
    assert links_in(body_of(out)) == [("rId3", "→")]
    assert re.sub(r"<[^>]+>", "", body_of(out)) == "Andate alla pagina seguente → ora."


def test_an_odt_link_holding_a_span_moves_whole_inside_a_span_of_its_sentence():
    from odf.opendocument import OpenDocumentText
    from odf.style import Style, TextProperties
    from odf.text import A, P, Span

    document = OpenDocumentText()
    bold = Style(name="Bold", family="text")
    bold.addElement(TextProperties(fontweight="bold"))
    document.automaticstyles.addElement(bold)
    paragraph, outer = P(), Span(stylename="Bold")
    target = A(href="https://example.com/docs", type="simple")
    target.addElement(Span(stylename="Bold", text="full"))
    target.addText(" documentation")
    outer.addText("Read the ")
    outer.addElement(target)
    outer.addText(" for more details.")
    paragraph.addElement(outer)
    document.text.addElement(paragraph)
    model, seen = dictionary({"Read the full documentation for more details.":
                              "Per maggiori dettagli leggete la documentazione completa.",
                              "full documentation": "documentazione completa"})
    out = translate_document(None, saved(document), name="span.odt", translate=model)
    assert seen == ["full documentation", "Read the full documentation for more details."]
    assert odt_links(out) == ("Per maggiori dettagli leggete la documentazione completa.",
                              [("https://example.com/docs", "documentazione completa")])
    content = zipfile.ZipFile(io.BytesIO(out)).read("content.xml").decode("utf-8")
    assert re.search(r'<text:span text:style-name="Bold">Per maggiori dettagli leggete la <text:a [^>]*>'
                     r'<text:span text:style-name="Bold">documentazione completa</text:span></text:a>\.</text:span>',
                     content)


def test_an_odp_link_on_a_slide_is_part_of_its_sentence_and_moves_with_its_words():
    from odf.draw import Frame, Page, TextBox
    from odf.opendocument import OpenDocumentPresentation, load
    from odf.style import MasterPage, PageLayout
    from odf.text import A, P

    document = OpenDocumentPresentation()
    layout = PageLayout(name="PM1")
    document.automaticstyles.addElement(layout)
    master = MasterPage(name="Default", pagelayoutname=layout)
    document.masterstyles.addElement(master)
    slide, frame, box = Page(name="page1", masterpagename=master), Frame(width="20cm", height="3cm"), TextBox()
    paragraph = P(text="Read the ")
    paragraph.addElement(A(href="https://example.com/docs", type="simple", text="documentation"))
    paragraph.addText(" for more details.")
    box.addElement(paragraph)
    frame.addElement(box)
    slide.addElement(frame)
    document.presentation.addElement(slide)
    model, seen = dictionary(REORDERED)
    out = translate_document(None, saved(document), name="deck.odp", translate=model)
    assert seen == ["documentation", "Read the documentation for more details."]
    assert odt_links(out) == ("Per maggiori dettagli leggete la documentazione.",
                              [("https://example.com/docs", "documentazione")])
    assert load(io.BytesIO(out)).getElementsByType(Page)[0].getAttribute("name") == "page1"


def test_a_link_with_only_a_number_or_a_mark_of_text_around_it_is_still_translated():
    source = docx_with(f'<w:p>{run("1. ")}{link("#_Toc1", "Introduction to the tool")}</w:p>'
                       f'<w:p>{link("rId9", "Download the installer")}{run(".")}</w:p>')
    model, seen = recording(lambda texts: [text.upper() for text in texts])
    xml = body_of(translate_document(None, source, name="toc.docx", translate=model))
    assert links_in(xml) == [("_Toc1", "INTRODUCTION TO THE TOOL"), ("rId9", "DOWNLOAD THE INSTALLER")]


def test_a_paragraph_of_more_links_than_a_sentence_holds_is_cut_around_them():
    body = "".join(f'{run("see ")}{link(f"rId{i}", f"page {i}")}' for i in range(65))
    model, seen = recording(lambda texts: [text.upper() for text in texts])
    xml = body_of(translate_document(None, docx_with(f"<w:p>{body}</w:p>"), name="index.docx", translate=model))
    assert len(links_in(xml)) == 65 and links_in(xml)[64] == ("rId64", "PAGE 64")
    assert "page 64" in seen and not any(len(text) > 40 for text in seen)       # each text alone, as before
