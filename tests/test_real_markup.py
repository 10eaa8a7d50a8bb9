"""What translating real pages and office files found (issue 37): XHTML that must stay XML, chart labels in
.pptx, table-of-contents page numbers and unknown package entries in .odt, and formatted runs whose formatting
was dropped. Every input is built here, with the format's own library or inline; the stand-in models are plain
functions, no engine."""
import io
import re
import zipfile

import pytest
from lxml import etree

from pipeline.documents import detect_format, open_document, translate_document

from stand_ins import recording, suffixed


# -- 1. XHTML, and any page that is well-formed XML, stays XML ----------------------------------------------------
XHTML = """<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.1//EN" "http://www.w3.org/TR/xhtml11/DTD/xhtml11.dtd">
<html xmlns="http://www.w3.org/1999/xhtml" xml:lang="en">
<head>
<meta http-equiv="Content-Type" content="text/html; charset=UTF-8" />
<title>Debian Reference &amp; tips</title>
<link rel="stylesheet" href="debian-reference.css" type="text/css"/>
<script type="text/javascript">var shown = 1; if (shown) { shown = 2; }</script>
</head>
<body>
<p>Read the manual&#160;page first.<br/>Then\u00a0edit the file <img src="warning.png" alt="Warning sign" />.</p>
<p>Tom &amp; Mary keep /etc/apt/sources.list tidy &#8212; see https://www.debian.org/doc/ today.</p>
<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"><linearGradient id="shade"/></svg>
</body>
</html>
"""


def test_xhtml_stays_well_formed_with_its_declaration_self_closing_tags_and_xml_entities():
    from lxml import etree

    etree.fromstring(XHTML.encode())                                  # the input is well-formed XML
    out = translate_document(None, XHTML.encode(), name="reference.en.html", translate=suffixed).decode()
    etree.fromstring(out.encode())                                    # and so is the output
    assert out.startswith('<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.1//EN"'
                          ' "http://www.w3.org/TR/xhtml11/DTD/xhtml11.dtd">\n<html xmlns=')
    assert '<meta http-equiv="Content-Type" content="text/html; charset=UTF-8"/>' in out
    assert '<link rel="stylesheet" href="debian-reference.css" type="text/css"/>' in out
    assert "<br/>" in out and '<img src="warning.png" alt="Warning-it sign-it" />' in out    # as written
    assert "&nbsp;" not in out and out.count("&#160;") == 2 and "&#8212;" in out and "&amp;" in out
    assert "<script type=\"text/javascript\">var shown = 1; if (shown) { shown = 2; }</script>" in out
    assert 'viewBox="0 0 10 10"' in out and "<linearGradient" in out             # names in their written case
    assert "Read-it the-it manual-it&#160;page-it first-it." in out
    assert "/etc/apt/sources.list" in out and "https://www.debian.org/doc/" in out
    assert detect_format(XHTML.encode()) == "html"                   # by its content too, declaration first


def test_a_page_that_is_xml_only_by_its_dtd_s_entities_gets_numeric_references():
    from lxml import etree

    page = ('<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Strict//EN" '
            '"http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd">\n'
            '<html><body><p>Hello&nbsp;world &mdash; and &copy; here<br /></p></body></html>')
    out = translate_document(None, page.encode(), name="a.html", translate=suffixed).decode()
    assert "&nbsp;" not in out and "&mdash;" not in out and "&copy;" not in out
    assert "Hello-it&#160;world-it &#8212; and-it &#169; here-it<br />" in out
    etree.fromstring(out.split("\n", 1)[1].encode())                 # well-formed without its DTD too


def test_plain_html_keeps_its_html_serialisation():
    page = '<html><p>Hello&nbsp;world<br>again <img src="a.png" alt="A cat"></p></html>\n'
    out = translate_document(None, page.encode(), name="a.html", translate=suffixed).decode()
    assert out == '<html><p>Hello-it&nbsp;world-it<br>again-it <img src="a.png" alt="A cat-it"></p></html>\n'



@pytest.mark.parametrize("codec,mark", [("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff")])
def test_a_utf_16_crlf_page_comes_back_utf_16_with_crlf(codec, mark):
    page = '<html>\r\n<head><meta charset="utf-16"></head>\r\n<p>Hello world</p>\r\n</html>\r\n'
    out = translate_document(None, mark + page.encode(codec), name="a.html", translate=suffixed)
    assert out.startswith(mark)
    text = out[2:].decode(codec)
    assert "Hello-it world-it" in text and text.count("\r\n") == 4 and "\n" not in text.replace("\r\n", "")

# -- 2. chart titles, categories and series names in .pptx ------------------------------------------------------------
def chart_deck() -> bytes:
    import pptx
    from pptx.chart.data import CategoryChartData
    from pptx.enum.chart import XL_CHART_TYPE
    from pptx.util import Inches

    presentation = pptx.Presentation()
    slide = presentation.slides.add_slide(presentation.slide_layouts[5])
    slide.shapes.title.text = "Sales by region"
    data = CategoryChartData()
    data.categories = ["North coast", "South hills"]
    data.add_series("Apples sold", (3, 4))
    data.add_series("Pears sold", (1, 2))
    chart = slide.shapes.add_chart(XL_CHART_TYPE.COLUMN_CLUSTERED, Inches(1), Inches(1), Inches(6), Inches(4),
                                   data).chart
    chart.has_title = True
    chart.chart_title.text_frame.text = "Fruit sold this year"
    out = io.BytesIO()
    presentation.save(out)
    return out.getvalue()


def test_pptx_chart_titles_categories_and_series_names_are_translated_in_the_chart_and_its_workbook():
    import pptx

    data = chart_deck()
    texts = [segment.text for segment in open_document(data, name="talk.pptx").segments]
    assert {"Fruit sold this year", "North coast", "South hills", "Apples sold", "Pears sold"} <= set(texts)
    assert texts.count("North coast") == 1                            # the same label once, for every series
    out = translate_document(None, data, name="talk.pptx", translate=suffixed)
    chart = next(shape.chart for shape in pptx.Presentation(io.BytesIO(out)).slides[0].shapes if shape.has_chart)
    assert chart.chart_title.text_frame.text == "Fruit-it sold-it this-it year-it"
    assert list(chart.plots[0].categories) == ["North-it coast-it", "South-it hills-it"]
    assert [series.name for series in chart.series] == ["Apples-it sold-it", "Pears-it sold-it"]
    assert [list(series.values) for series in chart.series] == [[3.0, 4.0], [1.0, 2.0]]
    workbook = zipfile.ZipFile(io.BytesIO(chart.part.chart_workbook.xlsx_part.blob))
    strings = re.findall(r"<t[^>]*>([^<]*)</t>", workbook.read("xl/sharedStrings.xml").decode())
    assert strings == ["North-it coast-it", "South-it hills-it", "Apples-it sold-it", "Pears-it sold-it"]


# -- 3. .odt table-of-contents page numbers -----------------------------------------------------------------------
def odt_with_a_table_of_contents() -> bytes:
    from odf.opendocument import OpenDocumentText
    from odf.text import (A, H, IndexBody, IndexEntryChapter, IndexEntryPageNumber, IndexEntryTabStop, IndexEntryText,
                          IndexTitle, IndexTitleTemplate, P, Tab, TableOfContent, TableOfContentEntryTemplate,
                          TableOfContentSource)

    document = OpenDocumentText()
    toc = TableOfContent(name="Table of Contents1")
    source = TableOfContentSource(outlinelevel=10)
    source.addElement(IndexTitleTemplate(text="Table of Contents"))
    template = TableOfContentEntryTemplate(outlinelevel=1, stylename="Contents_20_1")
    for part in (IndexEntryChapter(), IndexEntryText(), IndexEntryTabStop(type="right", leaderchar="."),
                 IndexEntryPageNumber()):
        template.addElement(part)
    source.addElement(template)
    toc.addElement(source)
    body = IndexBody()
    title = IndexTitle(name="Table of Contents1_Head")
    title.addElement(P(text="Table of Contents"))
    body.addElement(title)
    body.addElement(P(text="1 Introduction\t3"))                     # a tab written as a character
    entry, link = P(), A(href="#__RefHeading__2", type="simple")    # LibreOffice's: a link, a text:tab
    link.addText("2.1 Installing the program")
    link.addElement(Tab())
    link.addText("17")
    entry.addElement(link)
    body.addElement(entry)
    body.addElement(P(text="Appendix ........ iv"))                  # a leader written out
    toc.addElement(body)
    document.text.addElement(toc)
    document.text.addElement(H(outlinelevel=1, text="Introduction"))
    out = io.BytesIO()
    document.write(out)
    return out.getvalue()


def test_odt_table_of_contents_page_numbers_and_tabs_are_not_translated():
    from odf import teletype
    from odf.opendocument import load
    from odf.text import P

    translate, seen = recording(lambda texts: [f"{text} tradotto 20" for text in texts])
    out = load(io.BytesIO(translate_document(None, odt_with_a_table_of_contents(), name="guide.odt",
                                             translate=translate)))
    assert sorted(seen) == sorted(["Table of Contents", "Table of Contents", "Introduction", "Installing the program",
                                   "Appendix", "Introduction"])
    assert not any(re.search(r"\t|[0-9]|\biv\b", text) for text in seen)
    assert [teletype.extractText(p) for p in out.getElementsByType(P)] == [
        "Table of Contents tradotto 20", "1 Introduction tradotto 20\t3",
        "2.1 Installing the program tradotto 20\t17", "Appendix tradotto 20 ........ iv"]



def repacked_odt(data: bytes, entry: str, content: bytes, damage: bool = False) -> bytes:
    """The package with `entry` holding `content` (deflated; with `damage`, its compressed bytes overwritten)."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as source, zipfile.ZipFile(out, "w") as target:
        for item in source.infolist():
            if item.filename != entry:
                target.writestr(item, source.read(item))
        target.writestr(entry, content, zipfile.ZIP_DEFLATED)
    raw = bytearray(out.getvalue())
    if damage:
        with zipfile.ZipFile(io.BytesIO(bytes(raw))) as package:
            info = package.getinfo(entry)
        start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
        raw[start + 2:start + 12] = b"\xff" * 10
    return bytes(raw)


def test_an_odt_with_malformed_xml_is_one_line_naming_the_part_and_line(capsys):
    broken = (b'<?xml version="1.0" encoding="UTF-8"?>\n<office:document-content xmlns:office='
              b'"urn:oasis:names:tc:opendocument:xmlns:office:1.0">\n<office:body>Tom & Jerry</office:body>\n'
              b'</office:document-content>\n')
    data = repacked_odt(odt_with_a_table_of_contents(), "content.xml", broken)
    with pytest.raises(ValueError, match=r"^toc\.odt: not a readable \.odt file: content\.xml line 3: ") as caught:
        open_document(data, name="toc.odt")
    assert "\n" not in str(caught.value) and "SAX" not in capsys.readouterr().out


def test_a_damaged_zip_entry_is_one_line_naming_the_file_and_entry():
    text = b"".join(b"line %d of an entry no library reads\n" % n for n in range(200))
    data = repacked_odt(odt_with_a_table_of_contents(), "extra/notes.txt", text, damage=True)
    document = open_document(data, name="toc.odt")                  # odfpy never reads it; repacking does
    with pytest.raises(ValueError, match=r"^toc\.odt: zip entry extra/notes\.txt is damaged \(") as caught:
        document.render()
    assert "\n" not in str(caught.value)
    meta = b'<?xml version="1.0"?>\n<office:document-meta xmlns:office="urn:oasis:names:tc:opendocument:xmlns:' \
           b'office:1.0">' + b"<office:meta/>" * 200 + b"</office:document-meta>"
    with pytest.raises(ValueError, match=r"^toc\.odt: zip entry meta\.xml is damaged \("):
        open_document(repacked_odt(odt_with_a_table_of_contents(), "meta.xml", meta, damage=True), name="toc.odt")

# -- 4. every entry of the .odt package is kept ---------------------------------------------------------------------
def test_odt_keeps_every_zip_entry_configurations2_included():
    from odf.opendocument import OpenDocumentText
    from odf.text import P

    document = OpenDocumentText()
    document.text.addElement(P(text="Keep every part of the package."))
    built = io.BytesIO()
    document.write(built)
    folders = ("toolbar", "floater", "menubar", "images/Bitmaps", "popupmenu", "statusbar", "progressbar", "toolpanel")
    extra = {"Configurations2/accelerator/current.xml": b"", **{f"Configurations2/{name}/": b"" for name in folders},
             "manifest.rdf": b'<?xml version="1.0"?><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#"/>'}
    package = io.BytesIO()
    with zipfile.ZipFile(built) as source, zipfile.ZipFile(package, "w") as target:
        for item in source.infolist():
            target.writestr(item, source.read(item))
        for name, content in extra.items():
            target.writestr(zipfile.ZipInfo(name), content, zipfile.ZIP_DEFLATED)
    out = translate_document(None, package.getvalue(), name="guide.odt", translate=suffixed)
    with zipfile.ZipFile(package) as before, zipfile.ZipFile(io.BytesIO(out)) as after:
        assert after.namelist() == before.namelist()
        assert after.infolist()[0].filename == "mimetype" and after.infolist()[0].compress_type == zipfile.ZIP_STORED
        for name in before.namelist():
            if name != "content.xml" and name != "styles.xml":
                assert after.read(name) == before.read(name), name
        assert b"Keep-it every-it part-it of the-it package-it." in after.read("content.xml")


# -- 5. formatted runs keep their formatting -------------------------------------------------------------------------
SENTENCES = {                     # a model that words a whole sentence otherwise than its pieces
    "Save the file quickly and close it now.": "Salvate presto il file e chiudetelo subito.",
    "Save the file": "Salvate il file", "and close it": "e chiudetelo", "quickly": "rapidamente", "now": "ora",
    "Step 3: restart the service.": "Passo 3: riavviate il servizio.",
    "Choose File - Print and wait.": "Scegliete File - Stampa e aspettate.", "Choose": "Scegliete",
    "File - Print": "File - Stampa", "wait": "attendete", "and": "e", "First line": "Prima riga",
}


def contextual(texts):
    return [SENTENCES.get(text, text.upper()) for text in texts]


def formatted_docx() -> bytes:
    import docx
    from docx.oxml.ns import qn

    document = docx.Document()
    paragraph = document.add_paragraph("Save the file ")
    paragraph.add_run("quickly").bold = True
    paragraph.add_run(" and close it ")
    paragraph.add_run("now").italic = True
    paragraph.add_run(".")
    paragraph = document.add_paragraph("Step ")
    paragraph.add_run("3").bold = True
    paragraph.add_run(": restart the service.")
    paragraph = document.add_paragraph("Choose ")
    paragraph.add_run("File - Print").bold = True
    paragraph.add_run(" and ")
    paragraph.add_run("wait").italic = True
    paragraph.add_run(".")
    first = document.add_paragraph().add_run("First line")            # a break and the next line in one run
    first.add_break()
    first.element.append(first.element.makeelement(qn("w:t"), {qn("xml:space"): "preserve"}))
    first.element[-1].text = "Save the file and close it "
    paragraph = document.paragraphs[-1]
    paragraph.add_run("quickly").bold = True
    paragraph.add_run(".")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def formatting(paragraphs) -> list[list[tuple[str, bool | None, bool | None]]]:
    return [[(run.text, run.bold, run.italic) for run in paragraph.runs if run.text] for paragraph in paragraphs]


def test_docx_formatted_runs_keep_their_formatting_when_the_sentence_is_worded_otherwise():
    import docx

    data = formatted_docx()
    out = docx.Document(io.BytesIO(translate_document(None, data, "docx", translate=contextual)))
    before = docx.Document(io.BytesIO(data))
    count = lambda document, what: sum(bool(getattr(run, what)) and bool(run.text.strip())   # noqa: E731
                                       for paragraph in document.paragraphs for run in paragraph.runs)
    assert (count(out, "bold"), count(out, "italic")) == (count(before, "bold"), count(before, "italic")) == (4, 2)
    assert formatting(out.paragraphs[:3]) == [
        [("Salvate il file ", None, None), ("rapidamente", True, None), (" e chiudetelo ", None, None),
         ("ora", None, True), (".", None, None)],
        [("Passo ", None, None), ("3", True, None), (": riavviate il servizio.", None, None)],
        [("Scegliete ", None, None), ("File - Stampa", True, None), (" e ", None, None), ("attendete", None, True),
         (".", None, None)]]
    xml = etree.tostring(out.paragraphs[3].runs[0].element.getparent(), encoding="unicode")
    texts = re.findall(r"<w:t(?: [^>]*)?>([^<]*)</w:t>|<w:(br)/>", xml)
    assert [text or f"<{tag}>" for text, tag in texts] == ["Prima riga", "<br>", "SAVE THE FILE AND CLOSE IT ",
                                                           "QUICKLY", "."]
    assert [run.bold for run in out.paragraphs[3].runs if run.text.strip() == "QUICKLY"] == [True]


def test_odt_formatted_spans_keep_their_formatting():
    from odf import teletype
    from odf.opendocument import OpenDocumentText, load
    from odf.style import Style, TextProperties
    from odf.text import P, Span

    document = OpenDocumentText()
    for name, properties in (("Bold", {"fontweight": "bold"}), ("Italic", {"fontstyle": "italic"})):
        style = Style(name=name, family="text")
        style.addElement(TextProperties(**properties))
        document.automaticstyles.addElement(style)
    for parts in ([("Save the file ", None), ("quickly", "Bold"), (" and close it ", None), ("now", "Italic"),
                   (".", None)],
                  [("Choose ", None), ("File - Print", "Bold"), (" and ", None), ("wait", "Italic"), (".", None)]):
        paragraph = P()
        for text, style in parts:
            paragraph.addElement(Span(stylename=style, text=text)) if style else paragraph.addText(text)
        document.text.addElement(paragraph)
    data = io.BytesIO()
    document.write(data)
    out = load(io.BytesIO(translate_document(None, data.getvalue(), name="guide.odt", translate=contextual)))

    def spans(paragraph):
        return [(span.getAttribute("stylename"), teletype.extractText(span))
                for span in paragraph.getElementsByType(Span) if teletype.extractText(span)]
    paragraphs = out.getElementsByType(P)
    assert [spans(paragraph) for paragraph in paragraphs] == [[("Bold", "rapidamente"), ("Italic", "ora")],
                                                              [("Bold", "File - Stampa"), ("Italic", "attendete")]]
    assert [teletype.extractText(paragraph) for paragraph in paragraphs] == [
        "Salvate il file rapidamente e chiudetelo ora.", "Scegliete File - Stampa e attendete."]


@pytest.mark.parametrize("translation", ["Scegliete File - Stampa e attendete.", "Scegliete File - Stampa e WAIT."])
def test_a_run_found_in_the_whole_translation_keeps_the_whole_translation(translation):
    import docx

    words = dict(SENTENCES, **{"Choose File - Print and wait.": translation})
    data = formatted_docx()
    translate, seen = recording(lambda texts: [words.get(text, text.upper()) for text in texts])
    out = docx.Document(io.BytesIO(translate_document(None, data, "docx", translate=translate)))
    assert "and" not in seen and "Choose" not in seen                 # the whole translation was kept
    assert formatting(out.paragraphs[2:3]) == [[("Scegliete ", None, None), ("File - Stampa", True, None),
                                                (" e ", None, None), (translation.split()[-1][:-1], None, True),
                                                (".", None, None)]]


def test_an_xml_page_keeps_its_names_case_and_its_script_untranslated():
    page = ('<HTML><BODY><P>Hello there</P><SCRIPT>var x = "keep me";</SCRIPT><IMG SRC="a.png" ALT="A cat here"/>'
            '<svg viewBox="0 0 1 1"/></BODY></HTML>')
    out = translate_document(None, page.encode(), name="a.html", translate=lambda texts: [t.upper() for t in texts])
    assert out.decode() == ('<HTML><BODY><P>HELLO THERE</P><SCRIPT>var x = "keep me";</SCRIPT>'
                            '<IMG SRC="a.png" ALT="A CAT HERE"/><svg viewBox="0 0 1 1"/></BODY></HTML>')   # as written
